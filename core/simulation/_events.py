"""The result's ``events``, as the API server keeps them: isomorphic events folded into one.

A run records every occurrence (the fake cluster's ``events``, in time order).  The result shows
them as client-go's recorders leave them in the API server (``--events series``, the default), or
one entry per occurrence (``--events all``)::

    occurrences ──► isomorphic to a cached one? ── no ──► a new entry (and cached)
                                               └─ yes ─► the cached entry's series:
                                                         count + 1, lastObservedTime

Two recorders, as upstream (sources of v1.30.6 … v1.35.4, identical in this):

- kube-scheduler records events.k8s.io/v1 Events through ``k8s.io/client-go/tools/events``
  (``event_broadcaster.go``): ``recordToSink`` looks a new event up by its ``eventKey``; the
  second isomorphic event makes the first a series (``EventSeries{Count: 2, LastObservedTime}``,
  patched onto the first Event) and later ones bump it.  ``finishSeries`` runs every
  ``finishTime`` (6 minutes) from the broadcaster's start (``wait.UntilWithContext``: at once, then
  every period) and drops from the cache an event last observed more than 6 minutes before the
  tick (``LastObservedTime.Before(now - finishTime)``, or ``EventTime`` for a lone event): the
  next isomorphic event after that tick is a new Event.  The broadcaster starts with the run.
- The controllers (Job, ReplicaSet, Deployment, StatefulSet, persistentvolume) record core/v1
  Events through ``k8s.io/client-go/tools/record`` (``events_cache.go``): the EventCorrelator's
  ``eventLogger`` keys an event on ``getEventKey`` (source, involved object, type, reason,
  message) in an LRU of ``maxLruCacheEntries`` (4096) and counts every repeat onto the first
  Event (``count``, ``lastTimestamp``), with no time window.

The isomorphism key is the object (its name and uid), type, reason, reporting controller and
message.  Departures, on purpose, so that every text is kept and the counts add up to the
occurrences: tools/events' ``eventKey`` leaves the note out (upstream, a series keeps its first
message; here a new message starts its own entry); tools/record's aggregator (after 10 events
that differ only in message within 10 minutes, "(combined from similar events): …") and its spam
filter (25 events per object, then one per 5 minutes, dropped beyond) are not modelled.

An entry is the first occurrence's ``{"time", "type", "reason", "object", "message"}``; one that
happened more than once adds ``"series": {"count": n, "lastObservedTime": t}`` (n counts every
occurrence, the first included, as ``EventSeries.count``; core/v1's ``count`` and
``lastTimestamp`` are shown the same way).  Folding runs once, on the recorded events, when the
result is built: never on the scheduling path.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from kubesched._errors import ConfigError
from kubesched.scheduler._quiet import Repeat

__all__ = ["EVENT_MODES", "FINISH_TIME", "LRU_ENTRIES", "fold_events", "occurrences"]

EVENT_MODES = ("series", "all")
"""``--events``: ``series`` folds isomorphic events (the default), ``all`` keeps every occurrence."""

FINISH_TIME = 360.0
"""tools/events' ``finishTime`` (6 minutes): the period of ``finishSeries`` and how long a cached
event outlives its last observation."""

LRU_ENTRIES = 4096
"""tools/record's ``maxLruCacheEntries``: the correlator's cache of events it counts onto."""

MAX_EXPANDED = 10_000_000
"""``--events all``: the most occurrences of skipped quiet stretches it lists one by one (about
2 GB of JSON); beyond, the run is one line naming ``--events series``."""


def _entry(e: Any, now: float | None = None) -> dict[str, Any]:
    time = round(e.time, 6) if now is None else now
    return {"time": time, "type": e.type, "reason": e.reason, "object": e.object, "message": e.message}


def occurrences(records: Iterable[Any], repeats: Sequence[Repeat] = ()) -> list[dict[str, Any]]:
    """``--events all``: one entry per recorded event, in time order (recording order at equal
    times: the causal order of the deterministic loop); the events of skipped quiet stretches
    (``repeats``, :mod:`kubesched.scheduler._quiet`) at their places."""
    n = sum(len(rep.block) * rep.count for rep in repeats)
    if n > MAX_EXPANDED:
        raise ConfigError(
            f"one entry per occurrence would be {n:,} entries for the retries of quiet stretches "
            "alone; use --events series (the default), which folds them as the API server keeps them",
            field="--events all",
        )
    return [_entry(e, now) for e, now in _timed(records, repeats, expand=True)]


def _timed(records: Iterable[Any], repeats: Sequence[Repeat], *, expand: bool) -> Iterator[tuple[Any, float]]:
    """(record, its rounded time) in time order, each repeat's occurrences before the first
    record after it (``expand``) or, not expanded, the repeat itself (with its ``after``)."""
    pending = sorted(repeats, key=lambda r: r.after)
    i = 0
    for e in sorted(records, key=lambda e: round(e.time, 6)):
        now = round(e.time, 6)
        while i < len(pending) and now > pending[i].after:
            yield from _repeat(pending[i], expand)
            i += 1
        yield e, now
    for rep in pending[i:]:
        yield from _repeat(rep, expand)


def _repeat(rep: Repeat, expand: bool) -> Iterator[tuple[Any, float]]:
    if not expand:
        yield rep, rep.after
        return
    for j in range(1, rep.count + 1):
        for e in rep.block:
            yield e, round(e.time + j * rep.period, 6)


def _dropped_at(last: float) -> float:
    """When ``finishSeries`` drops an event last observed at ``last``: its first tick ``T`` (a
    multiple of :data:`FINISH_TIME`) with ``last < T - FINISH_TIME``."""
    return (math.floor(last / FINISH_TIME) + 2) * FINISH_TIME


def fold_events(records: Iterable[Any], repeats: Sequence[Repeat] = ()) -> list[dict[str, Any]]:
    """``--events series``: isomorphic events folded (see the module docstring), in the order of
    their first occurrence; the events of skipped quiet stretches (``repeats``) at their places,
    folded as if recorded one by one."""
    out: list[dict[str, Any]] = []
    series: dict[tuple[Any, ...], tuple[dict[str, Any], float]] = {}  # tools/events' cache
    logged: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()  # tools/record's LRU

    def add(e: Any, now: float) -> None:
        key = _key(e)
        if e.core:
            entry = logged.get(key)
            if entry is not None:
                logged.move_to_end(key)
                _observe(entry, now)
                return
            entry = _entry(e, now)
            logged[key] = entry
            if len(logged) > LRU_ENTRIES:
                logged.popitem(last=False)
        else:
            cached = series.get(key)
            if cached is not None and now < _dropped_at(cached[1]):
                _observe(cached[0], now)
                series[key] = (cached[0], now)
                return
            entry = _entry(e, now)
            series[key] = (entry, now)
        out.append(entry)

    for e, now in _timed(records, repeats, expand=False):
        if isinstance(e, Repeat):
            _fold_repeat(e, add, series, logged)
        else:
            add(e, now)
    return out


def _key(e: Any) -> tuple[Any, ...]:
    ref = e.regarding
    return (e.object, ref.kind if ref else "", ref.uid if ref else "", e.type, e.reason, e.source, e.message)


def _fold_repeat(
    rep: Repeat,
    add: Callable[[Any, float], None],
    series: dict[tuple[Any, ...], tuple[dict[str, Any], float]],
    logged: OrderedDict[tuple[Any, ...], dict[str, Any]],
) -> None:
    """A repeated block of events: the first repetition one by one; the others, when each of
    their events can only fold onto the entry its previous occurrence made (every key recurs
    within :data:`FINISH_TIME`, and the LRU holds all the block's keys), counted at once."""
    period, count = rep.period, rep.count
    for e in rep.block:
        add(e, round(e.time + period, 6))
    keys = [_key(e) for e in rep.block]
    if count == 1:
        return
    if period >= FINISH_TIME or len(set(keys)) > LRU_ENTRIES:
        for j in range(2, count + 1):
            for e in rep.block:
                add(e, round(e.time + j * period, 6))
        return
    n: dict[tuple[Any, ...], int] = {}
    last: dict[tuple[Any, ...], Any] = {}
    for key, e in zip(keys, rep.block, strict=True):
        n[key] = n.get(key, 0) + 1
        last[key] = e
    for key, e in last.items():
        now = round(e.time + count * period, 6)
        if e.core:
            entry = logged[key]
        else:
            entry = series[key][0]
            series[key] = (entry, now)
        _observe(entry, now, (count - 1) * n[key])
    for key in keys:  # the LRU's order after the last repetition: as after the first
        if key in logged:
            logged.move_to_end(key)


def _observe(entry: dict[str, Any], now: float, n: int = 1) -> None:
    """``n`` more occurrences, the last at ``now``."""
    s = entry.get("series")
    if s is None:
        entry["series"] = {"count": 1 + n, "lastObservedTime": now}
    else:
        s["count"] += n
        s["lastObservedTime"] = now
