"""The result's events folded as the API server keeps them (kubesched.simulation._events):
client-go's tools/events series with finishSeries' 6-minute window for the scheduler's events,
tools/record's counting (no window, an LRU of 4096 keys) for the controllers'."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api._objects import ObjectReference
from kubesched.simulation._events import FINISH_TIME, LRU_ENTRIES, fold_events, occurrences
from kubesched.transports.fake import EventRecord


def ev(t: float, name: str = "p", message: str = "0/1 nodes are available: 1 Insufficient cpu.", *,
       uid: str = "u1", reason: str = "FailedScheduling", core: bool = False) -> EventRecord:  # fmt: skip
    ref = ObjectReference(api_version="v1", kind="Pod", namespace="default", name=name, uid=uid)
    source = "replicaset-controller" if core else "default-scheduler"
    kind = "Warning" if reason == "FailedScheduling" else "Normal"
    return EventRecord(t, kind, reason, f"default/{name}", message, regarding=ref, source=source, core=core)


def shape(events: list[dict[str, Any]]) -> list[tuple[float, str, int, float | None]]:
    return [
        (e["time"], e["object"], e.get("series", {}).get("count", 1), e.get("series", {}).get("lastObservedTime"))
        for e in events
    ]


def test_retries_every_flush_fold_into_one_series() -> None:
    """recordToSink: the second isomorphic event makes the first a series of 2, later ones bump
    count and lastObservedTime; the entry keeps the first occurrence's time and fields."""
    events = fold_events([ev(0.0), ev(300.0), ev(600.0), ev(900.0)])
    assert events == [
        {"time": 0.0, "type": "Warning", "reason": "FailedScheduling", "object": "default/p",
         "message": "0/1 nodes are available: 1 Insufficient cpu.",
         "series": {"count": 4, "lastObservedTime": 900.0}},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        # finishSeries ticks at 0, 360, 720, ...: it drops an event last seen before tick - 360
        pytest.param([0.0, 719.0], [(0.0, "default/p", 2, 719.0)], id="lone event at 0: kept until the tick at 720"),
        pytest.param([0.0, 720.0], [(0.0, "default/p", 1, None), (720.0, "default/p", 1, None)],
                     id="the tick at 720 drops it first"),  # fmt: skip
        pytest.param([360.0, 1079.0], [(360.0, "default/p", 2, 1079.0)],
                     id="seen at 360 (not before 720-360): kept until the tick at 1080"),  # fmt: skip
        pytest.param([0.0, 300.0, 1000.0], [(0.0, "default/p", 2, 300.0), (1000.0, "default/p", 1, None)],
                     id="a series last seen at 300 ends at the tick at 720"),  # fmt: skip
        pytest.param([0.0, 350.0, 700.0, 1050.0, 1400.0], [(0.0, "default/p", 5, 1400.0)],
                     id="repeats closer than the window keep one series for ever"),  # fmt: skip
    ],
)
def test_the_series_window_is_finish_series(times: list[float], expected: list[Any]) -> None:
    assert FINISH_TIME == 360.0
    assert shape(fold_events([ev(t) for t in times])) == expected


def test_what_is_not_isomorphic_stays_apart() -> None:
    """Another message, another pod, the same name with another uid (a new pod), another reason:
    each its own entry, in the order of first occurrence."""
    events = fold_events([
        ev(0.0), ev(0.0, "q"), ev(10.0, message="0/1 nodes are available: 1 node(s) were unschedulable."),
        ev(20.0, uid="u2"), ev(30.0), ev(30.0, "q"), ev(40.0, reason="Scheduled", message="assigned"),
    ])  # fmt: skip
    assert shape(events) == [
        (0.0, "default/p", 2, 30.0),
        (0.0, "default/q", 2, 30.0),
        (10.0, "default/p", 1, None),
        (20.0, "default/p", 1, None),
        (40.0, "default/p", 1, None),
    ]


def test_core_events_count_with_no_window_in_an_lru() -> None:
    """tools/record's eventLogger: repeats counted onto the first event however far apart; a key
    pushed out of the LRU (maxLruCacheEntries) starts a new event."""
    assert shape(fold_events([ev(0.0, core=True), ev(86400.0, core=True)])) == [(0.0, "default/p", 2, 86400.0)]
    many = [ev(0.0, core=True)] + [ev(1.0, f"x{i}", core=True) for i in range(LRU_ENTRIES)] + [ev(2.0, core=True)]
    events = fold_events(many)
    assert len(events) == LRU_ENTRIES + 2
    assert shape([events[0], events[-1]]) == [(0.0, "default/p", 1, None), (2.0, "default/p", 1, None)]


def test_counts_add_up_to_every_occurrence() -> None:
    records = [ev(float(t), f"p{t % 7}", uid=f"u{t % 7}") for t in range(0, 5000, 13)]
    records += [ev(float(t), "w", core=True) for t in range(0, 5000, 700)]
    folded = fold_events(records)
    every = occurrences(records)
    assert sum(e.get("series", {}).get("count", 1) for e in folded) == len(every) == len(records)
    assert len(folded) < len(every)
    # each entry is an occurrence as it was, and entries keep the time order of first occurrences
    assert all({k: v for k, v in e.items() if k != "series"} in every for e in folded)
    assert [e["time"] for e in folded] == sorted(e["time"] for e in folded)


def test_the_text_shows_a_long_series_in_plain_seconds() -> None:
    from kubesched.simulation import SimulationResult, render_text

    result = SimulationResult(
        events=fold_events([ev(0.5, core=True), ev(2_000_000.25, core=True)]),
        summary={"pods": 0, "scheduled": 0, "pending": 0, "deleted": 0, "preemptions": 0, "attempts": 0,
                 "virtualSeconds": 2_000_000.25},
    )  # fmt: skip
    [line] = [line for line in render_text(result).splitlines() if "FailedScheduling" in line]
    assert line.endswith(": 0/1 nodes are available: 1 Insufficient cpu. (x2 over 1999999.75s)")
