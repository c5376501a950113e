"""What each metric is called, in what unit it is shown, and which direction is better.

Every table column and chart axis that shows a metric of a sweep or a comparison takes its name
from here (``nodes used``, ``p99 latency (s)``, ``mean CPU allocation (%)``), never the data key
(``latencyP99``).  A fraction is stored 0..1 and shown in percent (``scale`` 100); a difference
of two percentages is in percentage points.

"Better" is stated per metric, and only where the metric has a direction whatever the policy's
goal:

- lower is better: pending pods at the end, latency, Job completion, time to drain, the last
  placement, scheduling attempts (per pod), FailedScheduling and Preempted events, preemptions
  and victims, and nodes used (the same work on fewer nodes: packing's goal, and what an
  autoscaled cluster pays for);
- higher is better: pods scheduled, the scheduled fraction, pods succeeded within the run, and
  mean allocation (more of the capacity doing work at once);
- no direction: the pod count (an input), deleted pods, peak allocation, and node balance (low
  is even spreading, high is packing: which one is wanted is the policy's choice).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LOWER, HIGHER = "lower", "higher"


@dataclass(frozen=True)
class Measure:
    """How a metric is shown: its human name with the unit, its better direction, its scale."""

    key: str
    name: str
    better: str | None = None
    scale: float = 1.0

    @property
    def direction(self) -> str:
        """``lower is better``, ``higher is better``, or ``no better direction``."""
        return f"{self.better} is better" if self.better else "no better direction"


#: the metrics a sweep's summary table and charts show, in this order (where a scenario has them)
HEADLINE = ("scheduledFraction", "latencyP99", "nodesUsedMean", "nodesUsedPeak", "allocationMean.cpu",
            "jobCompletionP99", "victims", "attemptsPerPod", "allocation130", "fragAmount130")

_FIXED: dict[str, tuple[str, str | None, float]] = {
    # key: (name, better, scale)
    "pods": ("pods", None, 1.0),
    "scheduled": ("pods scheduled", HIGHER, 1.0),
    "pending": ("pods pending at the end", LOWER, 1.0),
    "succeeded": ("pods succeeded", HIGHER, 1.0),
    "preemptions": ("preemptions", LOWER, 1.0),
    "victims": ("preemption victims", LOWER, 1.0),
    "latencyP50": ("p50 latency (s)", LOWER, 1.0),
    "latencyP99": ("p99 latency (s)", LOWER, 1.0),
    "nodesUsed": ("nodes used at the end", LOWER, 1.0),
    "nodesUsedPeak": ("peak nodes used", LOWER, 1.0),
    "nodesUsedMean": ("mean nodes used", LOWER, 1.0),
    "jobCompletionP50": ("p50 Job completion (s)", LOWER, 1.0),
    "jobCompletionP99": ("p99 Job completion (s)", LOWER, 1.0),
    "timeToDrain": ("time to drain (s)", LOWER, 1.0),
    "attempts": ("scheduling attempts", LOWER, 1.0),
    "deleted": ("pods deleted", None, 1.0),
    "scheduledFraction": ("scheduled fraction (%)", HIGHER, 100.0),
    "attemptsPerPod": ("attempts per pod", LOWER, 1.0),
    "failedScheduling": ("FailedScheduling events", LOWER, 1.0),
    "preempted": ("Preempted events", LOWER, 1.0),
    "lastPlacement": ("last placement (s)", LOWER, 1.0),
    # a sweep's openb fill cells (kubesched.experiments._sweep.fill_cell): already in %
    **{f"allocation{p}": (f"GPU allocation at {p} % arrived (%)", HIGHER, 1.0)
       for p in (30, 60, 80, 90, 100, 110, 120, 130)},
    "fragAmount130": ("fragmented GPU at 130 % arrived (% of the GPUs)", LOWER, 1.0),
    "fragRatio130": ("fragmented share of the idle GPU at 130 % arrived (%)", None, 1.0),
    "placed": ("tasks placed", HIGHER, 1.0),
    "failed": ("tasks that fit nowhere", LOWER, 1.0),
    "gpuAllocated": ("GPU allocated at the end (%)", HIGHER, 100.0),
}

RESOURCE_NAMES = {"cpu": "CPU", "memory": "memory", "pods": "pod slot"}


def resource_name(resource: str) -> str:
    return RESOURCE_NAMES.get(resource, resource)


def measure(key: str) -> Measure:
    """The measure of a results column / :meth:`Metrics.table` key (an unknown key: shown as is)."""
    if key in _FIXED:
        name, better, scale = _FIXED[key]
        return Measure(key, name, better, scale)
    kind, _, res = key.partition(".")
    r = resource_name(res)
    if kind == "allocationMean":
        return Measure(key, f"mean {r} allocation (%)", HIGHER, 100.0)
    if kind == "allocationPeak":
        return Measure(key, f"peak {r} allocation (%)", None, 100.0)
    if kind == "nodeBalance":
        return Measure(key, f"{r} imbalance across nodes (std, %)", None, 100.0)
    return Measure(key, key)


def best(key: str, values: list[Any]) -> set[int]:
    """The indexes of the better value(s) of a row, where the metric has a direction and they differ."""
    better = measure(key).better
    nums = [v for v in values if isinstance(v, int | float)]
    if better is None or len(nums) < 2 or len(set(nums)) == 1:
        return set()
    top = min(nums) if better == LOWER else max(nums)
    return {i for i, v in enumerate(values) if v == top}


def differences(rows: list[dict[str, Any]]) -> list[dict[str, float | None]]:
    """Each variant after the first minus the first, metric by metric (None where either is n/a)."""
    base = rows[0]
    out = []
    for row in rows[1:]:
        out.append({k: (row[k] - base[k] if isinstance(row.get(k), int | float) and isinstance(base.get(k), int | float)
                        else None) for k in row})
    return out


__all__ = ["HEADLINE", "HIGHER", "LOWER", "Measure", "best", "differences", "measure", "resource_name"]
