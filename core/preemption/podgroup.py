"""Workload-aware preemption (KEP-5710, gate WorkloadAwarePreemption, alpha in 1.36): a PodGroup
that the PodGroup cycle cannot place preempts for the whole group at once (upstream
``framework/preemption/podgrouppreemption.go``, ``PodGroupEvaluator.Preempt``).

    eligible?          preemptionPolicy Never: "not eligible due to preemptionPolicy=Never.";
                       a lower-priority pod terminating by preemption on a member's nominated
                       node: "not eligible due to a terminating pod on the nominated node."
    victims            the domain is the whole cluster; a victim is a single pod, or a whole
                       PodGroup whose disruptionMode is PodGroup (all its bound pods); only those
                       of lower priority than the group's (a pod in a PodGroup counts with its
                       group's priority); none: UnschedulableAndUnresolvable "No preemption
                       victims found for incoming preemptor"
    simulate           remove every victim, run the group's algorithm once without PostFilter;
                       infeasible: its status
    reprieve           most important victim first (moreImportantVictim: priority, a PodGroup
                       before a pod, a pod by its start, a group by its size then its oldest
                       start), PDB violators before the others: put it back; if every placed
                       member still passes Filter on its node (the members before it assumed),
                       it is spared
    actuate            each victim pod gets DisruptionTarget ("<scheduler>: preempting to
                       accommodate a higher priority podgroup") and is deleted (a waiting one is
                       preempted in memory), with the event "Preempted by podgroup <uid> on node
                       cluster"; a victim PodGroup gets DisruptionTarget PreemptionByScheduler;
                       every placed member is nominated to its node

kubesched's choices where upstream's code of 1.36 was not read: a PodGroup's priority is its
``spec.priority``, else its ``priorityClassName``'s value, else the global default class's, else 0
(the PodGroup admission upstream fills ``spec.priority``); the group's preemption policy is its
first member's; the victims are deleted within the cycle (synchronously); the nominations are the
ones this simulation found.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched._errors import NotFoundError, TransportError
from kubesched.api._objects import Pod, PodCondition
from kubesched.api._workload import DISRUPTION_MODE_POD_GROUP, Condition, SchedulingPodGroup

from .types import DISRUPTION_TARGET, REASON_PREEMPTION_BY_SCHEDULER
from .util import NOW_NS, pod_start_ns, pod_terminating_by_preemption
from .victims import filter_pods_with_pdb_violation

if TYPE_CHECKING:
    from kubesched.cache._clusterstate import ClusterState

MSG_NO_VICTIMS = "No preemption victims found for incoming preemptor"
MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_CONSTRAINTS = "workload aware preemption is not supported for pod groups with scheduling constraints"
MSG_NO_PLUGIN = "default preemption plugin is not registered, workload aware preemption is disabled"


def pod_group_priority(pg: SchedulingPodGroup, cluster: ClusterState) -> int:
    """The group's priority (see the module for the fallbacks)."""
    if pg.spec.priority is not None:
        return pg.spec.priority
    if pg.spec.priority_class_name:
        pc = cluster.priority_classes.get(pg.spec.priority_class_name)
        return pc.value if pc is not None else 0
    for pc in cluster.priority_classes.values():
        if pc.global_default:
            return pc.value
    return 0


def pod_group_of(pod: Pod, cluster: ClusterState) -> SchedulingPodGroup | None:
    sg = pod.spec.scheduling_group
    if sg is None or not sg.pod_group_name:
        return None
    return cluster.get_scheduling_pod_group(pod.metadata.namespace, sg.pod_group_name)


def effective_priority(pod: Pod, cluster: ClusterState) -> int:
    """``getPodPriority``: a pod of a PodGroup has its group's priority."""
    pg = pod_group_of(pod, cluster)
    if pg is not None:
        return pod_group_priority(pg, cluster)
    return pod.spec.priority or 0


@dataclass
class Victim:
    """A preemption unit: one pod, or every bound pod of a PodGroup with disruptionMode PodGroup."""

    pods: list[Pod]
    priority: int
    group: SchedulingPodGroup | None = None

    @property
    def is_pod_group(self) -> bool:
        return self.group is not None

    def earliest_start_ns(self) -> int:
        return min((pod_start_ns(p) for p in self.pods), default=NOW_NS)


def more_important_victim(v1: Victim, v2: Victim) -> bool:
    """``moreImportantVictim``."""
    if v1.priority != v2.priority:
        return v1.priority > v2.priority
    if v1.is_pod_group != v2.is_pod_group:
        return v1.is_pod_group
    if not v1.is_pod_group:
        return v1.earliest_start_ns() < v2.earliest_start_ns()
    if len(v1.pods) != len(v2.pods):
        return len(v1.pods) > len(v2.pods)
    return v1.earliest_start_ns() < v2.earliest_start_ns()


def sort_victims(victims: list[Victim]) -> list[Victim]:
    """Most important first (a stable sort by :func:`more_important_victim`)."""

    def cmp(a: Victim, b: Victim) -> int:
        if more_important_victim(a, b):
            return -1
        if more_important_victim(b, a):
            return 1
        return 0

    return sorted(victims, key=functools.cmp_to_key(cmp))


def all_victims(cluster: ClusterState, bound: Sequence[Pod], exclude_group: tuple[str, str]) -> list[Victim]:
    """``GetAllPossibleVictims`` over the whole cluster: the bound pods (not the preemptor's own
    members), a PodGroup of disruptionMode PodGroup as one unit, in the pods' order."""
    out: list[Victim] = []
    groups: dict[tuple[str, str], Victim] = {}
    for pod in bound:
        pg = pod_group_of(pod, cluster)
        if pg is not None and (pg.metadata.namespace, pg.metadata.name) == exclude_group:
            continue
        prio = pod_group_priority(pg, cluster) if pg is not None else (pod.spec.priority or 0)
        if pg is not None and pg.spec.disruption_mode == DISRUPTION_MODE_POD_GROUP:
            key = (pg.metadata.namespace, pg.metadata.name)
            unit = groups.get(key)
            if unit is None:
                unit = groups[key] = Victim([], prio, pg)
                out.append(unit)
            unit.pods.append(pod)
        else:
            out.append(Victim([pod], prio))
    return out


def split_by_pdb_violation(victims: list[Victim], pdbs: Sequence[Any]) -> tuple[list[Victim], list[Victim]]:
    """``filterVictimsWithPDBViolation``: a victim violates when any of its pods does (the
    budgets counted down over the pods in victim order)."""
    flat = [(i, p) for i, v in enumerate(victims) for p in v.pods]
    violating_pods, _ = filter_pods_with_pdb_violation(flat, pdbs, pod=lambda item: item[1])
    bad = {i for i, _ in violating_pods}
    return [v for i, v in enumerate(victims) if i in bad], [v for i, v in enumerate(victims) if i not in bad]


@dataclass
class PreemptionOutcome:
    """What :func:`preempt` decided: the victims (most important first) and the nominations."""

    victims: list[Victim] = field(default_factory=list)
    nominations: dict[str, str] = field(default_factory=dict)  # member uid -> node


async def actuate(
    outcome: PreemptionOutcome,
    preemptor: SchedulingPodGroup,
    scheduler_name: str,
    *,
    client: Any,
    get_waiting_pod: Callable[[str], Any],
    record_event: Callable[[Pod, str, str, str, str], Awaitable[None]],
    plugin_name: str = "DefaultPreemption",
) -> None:
    """``actuatePodGroupPreemption`` (``prepareCandidate``): each victim pod preempted; a victim
    PodGroup marked."""
    message = f"{scheduler_name}: preempting to accommodate a higher priority podgroup"
    note = f"Preempted by podgroup {preemptor.metadata.uid} on node cluster"
    for v in outcome.victims:
        for pod in v.pods:
            if pod.metadata.deletion_timestamp:
                continue  # graceful deletion already started: no API call
            in_memory = False
            wp = get_waiting_pod(pod.metadata.uid)
            if wp is not None and wp.preempt(plugin_name, "preempted"):
                in_memory = True
            else:
                condition = PodCondition(type=DISRUPTION_TARGET, status="True",
                                         reason=REASON_PREEMPTION_BY_SCHEDULER, message=message)  # fmt: skip
                try:
                    await client.patch_pod_status(pod.metadata.namespace, pod.metadata.name, condition=condition)
                    await client.delete_pod(pod.metadata.namespace, pod.metadata.name, uid=pod.metadata.uid)
                except NotFoundError:
                    continue
            await record_event(pod, "Normal", "Preempted", "Preempting",
                               note + (" (in kube-scheduler memory)." if in_memory else ""))  # fmt: skip
        if v.group is not None:
            cond = Condition(type=DISRUPTION_TARGET, status="True", reason=REASON_PREEMPTION_BY_SCHEDULER, message=message)
            with contextlib.suppress(TransportError, NotImplementedError):
                await client.patch_pod_group_status(v.group.metadata.namespace, v.group.metadata.name, cond)


__all__ = [
    "MSG_CONSTRAINTS",
    "MSG_NEVER",
    "MSG_NO_PLUGIN",
    "MSG_NO_VICTIMS",
    "MSG_TERMINATING",
    "PreemptionOutcome",
    "Victim",
    "actuate",
    "all_victims",
    "effective_priority",
    "more_important_victim",
    "pod_group_of",
    "pod_group_priority",
    "pod_terminating_by_preemption",
    "sort_victims",
    "split_by_pdb_violation",
]
