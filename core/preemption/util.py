"""Pod helpers of preemption (upstream ``preemption/util.go`` and ``scheduler/util``).

Importance orders victims: higher priority first, at equal priority the pod that started first
(a pod not started yet counts as started "now", later than any other).  The dry runs sort
potential victims by it, the node choice scores candidates by their most important victims'
priority and start, and eligibility looks for victims already terminating by preemption.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.api._objects import parse_time_ns, rfc3339_ns

from .types import DISRUPTION_TARGET, REASON_PREEMPTION_BY_SCHEDULER

if TYPE_CHECKING:
    from kubesched.api._objects import Pod

NOW_NS = 2**63 - 1  # a pod without a StartTime counts as started "now": later than any other


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    return pod.spec.priority or 0


def pod_start_ns(pod: Pod) -> int:
    """``util.GetPodStartTime`` in nanoseconds; a pod not started yet counts as "now"."""
    ns = parse_time_ns(pod.status.start_time)
    return NOW_NS if ns is None else ns


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """``util.MoreImportantPod``: higher priority first; at equal priority the older pod."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_ns(pod1) < pod_start_ns(pod2)


def _importance_key(p: Pod) -> tuple[int, int]:
    """A sort key ordering pods exactly as :func:`more_important_pod` does."""
    return -(p.spec.priority or 0), pod_start_ns(p)


def sort_by_importance(
    items: list[Any], less: Callable[[Pod, Pod], bool], pod: Callable[[Any], Pod]
) -> None:
    """Sort ``items`` (pods, or what ``pod`` maps to a pod) in place, most important first by
    ``less`` (a stable sort)."""
    if less is more_important_pod:
        # the same comparisons as the cmp below, on keys computed once per item
        items.sort(key=lambda item: _importance_key(pod(item)))
        return

    def cmp(a: Any, b: Any) -> int:
        if less(pod(a), pod(b)):
            return -1
        if less(pod(b), pod(a)):
            return 1
        return 0

    items.sort(key=functools.cmp_to_key(cmp))


def pod_terminating_by_preemption(pod: Pod, disruption_conditions: bool = True) -> bool:
    """``podTerminatingByPreemption``: deleting, with DisruptionTarget=True by the scheduler;
    with PodDisruptionConditions off (1.30 only: GA and locked from 1.31), any pod being deleted
    (v1.30 default_preemption.go ``podTerminatingByPreemption(p, enablePodDisruptionConditions)``)."""
    if not pod.metadata.deletion_timestamp:
        return False
    if not disruption_conditions:
        return True
    for c in pod.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return c.status == "True" and c.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def earliest_pod_start_ns(victims: Sequence[Pod]) -> int | None:
    """``util.GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    if not victims:
        return None
    max_prio = victims[0].spec.priority or 0
    earliest = NOW_NS
    for p in victims:
        prio = p.spec.priority or 0
        ts = p.status.start_time
        ns = rfc3339_ns(ts) if ts else NOW_NS
        if prio == max_prio:
            if ns < earliest:
                earliest = ns
        elif prio > max_prio:
            max_prio = prio
            earliest = ns
    return earliest


def aggregate_message(errors: Iterable[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several as ``[a, b]``."""
    seen: list[str] = []
    for msg in errors:
        if msg not in seen:
            seen.append(msg)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


__all__ = [
    "NOW_NS",
    "aggregate_message",
    "earliest_pod_start_ns",
    "more_important_pod",
    "pod_priority",
    "pod_start_ns",
    "pod_terminating_by_preemption",
    "sort_by_importance",
]
