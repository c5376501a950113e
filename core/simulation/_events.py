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
from collections.abc import Iterable
from typing import Any

__all__ = ["EVENT_MODES", "FINISH_TIME", "LRU_ENTRIES", "fold_events", "occurrences"]

EVENT_MODES = ("series", "all")
"""``--events``: ``series`` folds isomorphic events (the default), ``all`` keeps every occurrence."""

FINISH_TIME = 360.0
"""tools/events' ``finishTime`` (6 minutes): the period of ``finishSeries`` and how long a cached
event outlives its last observation."""

LRU_ENTRIES = 4096
"""tools/record's ``maxLruCacheEntries``: the correlator's cache of events it counts onto."""


def _entry(e: Any) -> dict[str, Any]:
    return {"time": round(e.time, 6), "type": e.type, "reason": e.reason, "object": e.object, "message": e.message}


def occurrences(records: Iterable[Any]) -> list[dict[str, Any]]:
    """``--events all``: one entry per recorded event, in time order (recording order at equal
    times: the causal order of the deterministic loop)."""
    return [_entry(e) for e in sorted(records, key=lambda e: round(e.time, 6))]


def _dropped_at(last: float) -> float:
    """When ``finishSeries`` drops an event last observed at ``last``: its first tick ``T`` (a
    multiple of :data:`FINISH_TIME`) with ``last < T - FINISH_TIME``."""
    return (math.floor(last / FINISH_TIME) + 2) * FINISH_TIME


def fold_events(records: Iterable[Any]) -> list[dict[str, Any]]:
    """``--events series``: isomorphic events folded (see the module docstring), in the order of
    their first occurrence."""
    out: list[dict[str, Any]] = []
    series: dict[tuple[Any, ...], tuple[dict[str, Any], float]] = {}  # tools/events' cache
    logged: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()  # tools/record's LRU
    for e in sorted(records, key=lambda e: round(e.time, 6)):
        now = round(e.time, 6)
        ref = e.regarding
        key = (e.object, ref.kind if ref else "", ref.uid if ref else "", e.type, e.reason, e.source, e.message)
        if e.core:
            entry = logged.get(key)
            if entry is not None:
                logged.move_to_end(key)
                _observe(entry, now)
                continue
            entry = _entry(e)
            logged[key] = entry
            if len(logged) > LRU_ENTRIES:
                logged.popitem(last=False)
        else:
            cached = series.get(key)
            if cached is not None and now < _dropped_at(cached[1]):
                _observe(cached[0], now)
                series[key] = (cached[0], now)
                continue
            entry = _entry(e)
            series[key] = (entry, now)
        out.append(entry)
    return out


def _observe(entry: dict[str, Any], now: float) -> None:
    s = entry.get("series")
    if s is None:
        entry["series"] = {"count": 2, "lastObservedTime": now}
    else:
        s["count"] += 1
        s["lastObservedTime"] = now
