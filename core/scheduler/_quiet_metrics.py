"""Quiet stretches with a metrics recorder (``--metrics``): what a jump adds to kube-scheduler's
metrics (:mod:`kubesched.scheduler._quiet`).

A retry adds the same to every counter and histogram each period (its attempt, its extension
points, the queue's incoming pods: durations are 0 in virtual time), except the plugin timings:
upstream times a cycle's plugins only in the cycles it samples (``rand.Intn(100) <
pluginMetricsSamplePercent``), drawn here from the recorder's own seeded rng at every attempt.
So the recorder's draws are logged with the pod in flight, and each plugin timing with the draw
that sampled its cycle::

    period:  draw(pod a)=37  draw(pod b)=4 ─► b's timings   (a sampled attempt of b adds them)
    jump:    the period's draws replayed k times (numpy's MT19937, the same generator), and each
             draw below the percentage adds the timings its pod's sampled attempt adds

A pod whose sampled attempt has not been seen yet (one in ten attempts is sampled) cannot be
jumped over: the skip waits for a period in which it was.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.metrics._metrics import Histogram, HistogramVec, MetricsRecorder

_VECS = (
    "attempt_duration", "sli_duration", "extension_point_duration", "permit_wait_duration", "event_handling_duration",
)
_HISTOGRAMS = ("algorithm_duration", "pod_scheduling_attempts", "preemption_victims")
_CHUNK = 1 << 23
SAMPLED_POINT = "sampled extension point"  # a timing's mark: an extension point, not a plugin
SAMPLED_POINTS = frozenset({"Sign"})  # the extension points observed in the sampled cycles only


class RecorderLog:
    """The recorder's sampling draws and plugin timings, logged (see the module doc)."""

    def __init__(self, recorder: MetricsRecorder, context: Callable[[], tuple[str, str] | None]) -> None:
        """``context``: what a draw is for (("preEnqueue", pod uid) or ("cycle", pod uid))."""
        self.recorder = recorder
        self.draws: list[tuple[tuple[str, str] | None, tuple[int, ...], int]] = []  # (context, args, value)
        self.timings: list[tuple[int, tuple[str, ...], float]] = []  # (draws so far, labels, value)
        self.learned: dict[tuple[str, str], Counter[tuple[str, ...]]] = {}
        """A draw's context -> the plugin timings it adds when it samples."""
        self._randrange = recorder.rng.randrange
        self._observe = recorder.plugin_duration.observe
        self._observe_point = recorder.sampled_extension_point

        def randrange(*args: int) -> int:
            value = self._randrange(*args)
            self.draws.append((context(), args, value))
            return value

        def observe(labels: tuple[str, ...], value: float) -> None:
            self.timings.append((len(self.draws), labels, value))
            self._observe(labels, value)

        def observe_point(point: str, status: str, profile: str, duration: float) -> None:
            # a sampled extension point (v1.35's Sign): logged as a timing, marked as such
            self.timings.append((len(self.draws), (SAMPLED_POINT, point, status, profile), duration))
            self._observe_point(point, status, profile, duration)

        recorder.rng.randrange = randrange  # type: ignore[method-assign, assignment]
        recorder.plugin_duration.observe = observe  # type: ignore[method-assign]
        recorder.sampled_extension_point = observe_point  # type: ignore[method-assign]

    def forget(self) -> None:
        self.draws = []
        self.timings = []

    def mark(self) -> tuple[int, int, tuple[Any, ...]]:
        """Where the logs are, and the rng's state."""
        return len(self.draws), len(self.timings), self.recorder.rng.getstate()

    def counters(self) -> tuple[dict[Any, int], dict[Any, float]]:
        """Every count the recorder keeps but the plugin timings, and every sum."""
        rec = self.recorder
        counts: dict[Any, int] = {("scheduledAfterFlush",): rec.scheduled_after_flush}
        sums: dict[Any, float] = {}
        for key, n in rec.attempts.items():
            counts[("attempts", key)] = n
        for key, n in rec.incoming.items():
            counts[("incoming", key)] = n

        def histogram(name: Any, h: Histogram) -> None:
            for i, n in enumerate(h.counts):
                counts[(name, i)] = n
            sums[name] = h.sum

        for name in _VECS:
            vec: HistogramVec = getattr(rec, name)
            for labels, h in vec.series.items():
                if name == "extension_point_duration" and labels[0] in SAMPLED_POINTS:
                    continue  # observed in the sampled cycles only: replayed with the draws
                histogram((name, labels), h)
        for name in _HISTOGRAMS:
            histogram((name,), getattr(rec, name))
        return counts, sums

    def period(self, mark: tuple[int, int, tuple[Any, ...]]) -> list[tuple[str, str]] | None:
        """The contexts of the period's draws, in order, once what each one times when it samples
        is known (and the period's timings agree with it); None if not (yet)."""
        draws, timings = self.draws[mark[0] :], self.timings[mark[1] :]
        pct = self.recorder.sample_percent
        per: list[Counter[tuple[str, ...]]] = [Counter() for _ in draws]
        for at, labels, value in timings:
            index = at - mark[0] - 1
            if index < 0 or value != 0.0:
                return None  # timed outside a sampled cycle, or a duration that is not 0
            per[index][labels] += 1
        pods = []
        for (uid, args, value), seen in zip(draws, per, strict=True):
            if uid is None or args != (100,):
                return None
            if value < pct:
                known = self.learned.setdefault(uid, seen)
                if known != seen:
                    return None
            elif seen:
                return None
            pods.append(uid)
        if any(uid not in self.learned for uid in pods):
            return None
        if not _replays(mark[2], len(pods), self.recorder.rng.getstate()):
            return None
        return pods

    def jump(self, delta: dict[Any, int], pods: list[tuple[str, str]], k: int) -> None:
        """Add ``k`` periods: the counts' change times k, the draws replayed and what the
        sampled ones time."""
        rec = self.recorder
        for key, n in delta.items():
            if n == 0:
                continue
            if key[0] == "scheduledAfterFlush":
                rec.scheduled_after_flush += k * n
            elif key[0] == "attempts":
                rec.attempts[key[1]] += k * n
            elif key[0] == "incoming":
                rec.incoming[key[1]] += k * n
            else:
                name, i = key
                h = getattr(rec, name[0]) if len(name) == 1 else getattr(rec, name[0]).series[name[1]]
                h.counts[i] += k * n
        state, sampled = _replay_below(rec.rng.getstate(), 100, rec.sample_percent, len(pods), k)
        rec.rng.setstate(state)
        bucket = bisect.bisect_left(rec.plugin_duration.bounds, 0.0)
        point_bucket = bisect.bisect_left(rec.extension_point_duration.bounds, 0.0)
        for uid, times in zip(pods, sampled, strict=True):
            if times:
                for labels, n in self.learned[uid].items():
                    if labels[0] == SAMPLED_POINT:
                        rec.extension_point_duration.series[labels[1:]].counts[point_bucket] += int(times) * n
                    else:
                        rec.plugin_duration.series[labels].counts[bucket] += int(times) * n


def _generator(state: tuple[Any, ...]) -> np.random.MT19937:
    """numpy's MT19937 in the state of a ``random.Random`` (the same generator, word for word)."""
    words = state[1]
    bg = np.random.MT19937()
    bg.state = {"bit_generator": "MT19937", "state": {"key": np.array(words[:624], dtype=np.uint32), "pos": words[624]}}
    return bg


def _state(bg: np.random.MT19937, like: tuple[Any, ...]) -> tuple[Any, ...]:
    s = bg.state["state"]
    return (like[0], (*(int(x) for x in s["key"]), int(s["pos"])), like[2])


def _replay_below(
    state: tuple[Any, ...], n: int, below: int, m: int, k: int
) -> tuple[tuple[Any, ...], np.ndarray]:
    """``k * m`` draws of ``randrange(n)`` from ``state`` (``_randbelow``: ``getrandbits`` of
    n's bit length, again while not below n): the state after them, and for each of the m
    positions how many of its k draws were below ``below``."""
    # ``getrandbits(b) < x`` is ``word >> (32 - b) < x``, that is ``word < x << (32 - b)``
    shift = 32 - n.bit_length()
    top, low = np.uint64(n << shift), np.uint64(below << shift)
    bg = _generator(state)
    total = k * m
    done = 0
    counts = np.zeros(m, dtype=np.int64)
    while done < total:
        before = bg.state
        words = bg.random_raw(min(_CHUNK, (total - done) * 2 + 64))
        accepted = words < top
        take = min(int(np.count_nonzero(accepted)), total - done)
        last = done + take == total
        if m == 1 and not last:
            counts[0] += int(np.count_nonzero(words < low))
        else:
            ranks = np.cumsum(accepted, dtype=np.int32)  # a word's draw, counted from 1
            drawn = ranks[np.flatnonzero(words < low)].astype(np.int64) - 1
            drawn = drawn[drawn < take]
            counts += np.bincount((drawn + done) % m, minlength=m)
            if last:
                bg.state = before
                bg.random_raw(int(np.searchsorted(ranks, take)) + 1)  # exactly the words the draws took
        done += take
    return _state(bg, state), counts


def _replays(start: tuple[Any, ...], count: int, end: tuple[Any, ...]) -> bool:
    """Whether ``count`` draws of ``randrange(100)`` take the rng from ``start`` to ``end``."""
    if count == 0:
        return start == end
    state, _ = _replay_below(start, 100, 0, count, 1)
    return state == end
