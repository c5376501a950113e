"""Gang-aware preemption for the Permit-style gang plugins (Gang, Coscheduling), opt in with the
plugin argument ``gangPreemption: true``.  kubesched's own: no upstream plugin does this.

Upstream's DefaultPreemption makes room for one pod at a time: the first member of a gang that
fits nowhere evicts the victims of one node, is nominated there, and waits at Permit for siblings
that then find no room, so the gang times out and tries again, evicting more each time
(scheduler-plugins #428, #431, #581; volcano #3291).  Here, when a member fails Filter, one
decision is taken for the whole gang, over the whole cluster, in the manner of upstream 1.36's
workload-aware preemption (``framework/preemption/podgrouppreemption.go``)::

    eligible?    the preemptor's preemptionPolicy Never: "not eligible due to
                 preemptionPolicy=Never."; a lower-priority pod terminating by preemption on a
                 member's nominated node: "not eligible due to a terminating pod on the
                 nominated node." (an earlier decision is still being carried out)
    victims      every pod on the nodes of lower priority than the preemptor's, the gang's own
                 members excepted; none: UnschedulableAndUnresolvable "No preemption victims
                 found for incoming preemptor"
    simulate     every victim removed, each unplaced member in turn (the preemptor first, then
                 the others as the informer lists them) goes on the first node that passes the
                 profile's PreFilter and Filter (nominated pods counted), the members before it
                 in place; nodes are tried as pickOneNodeForPreemption ranks candidates: without
                 victims first, then by their highest victim priority, their victims' priority
                 sum and count, then in the snapshot's order; fewer than the gang's quorum
                 placed (or not the preemptor): Unschedulable, nothing evicted
    reprieve     most important victim first (``MoreImportantPod``: priority, then start time),
                 PDB violators before the others, as podgrouppreemption.go orders them: put it
                 back; if every placed member still passes Filter on its node, it is spared
    actuate      per node, in snapshot order, its victims preempted as DefaultPreemption does
                 (DisruptionTarget, deletion, the "Preempted" event; a waiting victim preempted
                 in memory) and the lower-priority nominations to the node cleared; every other
                 placed member nominated to its node (nominator and status), the preemptor
                 through its PostFilterResult

The members' nominations hold the room while the victims terminate (a nominated pod counts in
Filter for pods of its priority and below), and the gang's Permit releases the members together.

Where kubesched chose: placement is first fit over the ranked nodes, not the scheduling algorithm
with Score (a plugin runs PreFilter and Filter only); the victims are deleted within the cycle
(DefaultPreemption's synchronous path, whatever SchedulerAsyncPreemption says); a gang's priority is its preemptor's; the
victims are single pods (a victim gang is not taken whole).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from kubesched.framework import (
    Code,
    CycleState,
    Handle,
    KubeschedError,
    NodeInfo,
    Pod,
    PodInfo,
    PostFilterResult,
    Status,
)
from kubesched.preemption import (
    Candidate,
    filter_pods_with_pdb_violation,
    more_important_pod,
    pod_priority,
    pod_terminating_by_preemption,
)
from kubesched.preemption.executor import Executor

log = logging.getLogger("kubesched.preemption")

MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming preemptor"


@dataclass
class _Victim:
    pi: PodInfo
    node: str


@dataclass
class _Member:
    pod: Pod
    state: CycleState
    allowed: set[str] | None  # PreFilterResult's nodes (None: all)
    node: str = ""
    pi: PodInfo | None = None


def _on_node(pod: Pod, node: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def _importance(a: _Victim, b: _Victim) -> int:
    if more_important_pod(a.pi.pod, b.pi.pod):
        return -1
    if more_important_pod(b.pi.pod, a.pi.pod):
        return 1
    return 0


class GangPreemption:
    """One gang preemption decision (see the module), for the plugin ``plugin_name``."""

    def __init__(self, plugin_name: str, handle: Handle) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.executor = Executor(plugin_name, handle)

    async def preempt(
        self,
        pod: Pod,
        gang_pods: Sequence[Pod],
        quorum: int,
        gang: str,
    ) -> tuple[PostFilterResult | None, Status]:
        """Preempt for ``pod``'s gang.  ``gang_pods``: every pod of the gang the informer lists
        (bound, placed or not); ``quorum``: how many of them must be placed, those already on a
        node (bound, assumed or waiting at Permit) counted.  Success nominates ``pod``."""
        handle = self.handle
        self.handle.metrics.preemption_attempts += 1
        if pod.spec.preemption_policy == "Never":
            return None, Status(Code.UNSCHEDULABLE, MSG_NEVER)
        snapshot = handle.snapshot
        prio = pod_priority(pod)
        member_uids = {p.metadata.uid for p in gang_pods} | {pod.metadata.uid}
        on_nodes: set[str] = set()
        victims: list[_Victim] = []
        for ni in snapshot.node_infos:
            for pi in ni.pods:
                on_nodes.add(pi.uid)
                if pi.uid not in member_uids and pi.priority < prio:
                    victims.append(_Victim(pi, ni.name))
        unplaced = [pod] + [
            p for p in gang_pods
            if p.metadata.uid != pod.metadata.uid and p.metadata.uid not in on_nodes and not p.spec.node_name
            and not p.metadata.deletion_timestamp and not p.spec.scheduling_gates
            and p.spec.scheduler_name == pod.spec.scheduler_name and handle.get_waiting_pod(p.metadata.uid) is None
        ]  # fmt: skip
        placed_before = sum(1 for p in gang_pods if p.metadata.uid in on_nodes or p.spec.node_name)
        for m in unplaced:
            nominated = m.status.nominated_node_name or handle.nominator.node_of(m.metadata.uid)
            there = snapshot.get(nominated) if nominated else None
            if there is not None and any(
                pi.priority < prio and pod_terminating_by_preemption(pi.pod) for pi in there.pods
            ):
                return None, Status(Code.UNSCHEDULABLE, MSG_TERMINATING)
        if not victims:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)

        work: dict[str, NodeInfo] = {}

        def node(name: str) -> NodeInfo:
            ni = work.get(name)
            if ni is None:
                orig = snapshot.get(name)
                assert orig is not None
                ni = work[name] = orig.clone()
            return ni

        members: list[_Member] = []
        for m in unplaced:
            state = CycleState()
            result, st, _ = handle.run_pre_filter_plugins(state, m, snapshot.node_infos)
            if st is not None and not st.is_success():
                if m is pod:
                    return None, Status(Code.UNSCHEDULABLE, f"gang {gang}: {st.message}")
                continue
            members.append(_Member(m, state, result.node_names if result is not None else None))
        extended = [mb for mb in members if handle.has_pre_filter_extensions(mb.state)]

        def tell(pi: PodInfo, where: str, add: bool, skip: _Member | None = None) -> None:
            ni = node(where)
            for mb in extended:
                if mb is skip:
                    continue
                if add:
                    handle.run_pre_filter_extension_add_pod(mb.state, mb.pod, pi, ni)
                else:
                    handle.run_pre_filter_extension_remove_pod(mb.state, mb.pod, pi, ni)

        for v in victims:
            node(v.node).remove_pod(v.pi.uid)
            tell(v.pi, v.node, add=False)
        # candidate nodes ranked as pickOneNodeForPreemption ranks candidates: no victim first,
        # then the lowest highest-priority victim, the smallest priority sum, the fewest victims
        rank: dict[str, tuple[int, int, int]] = {}
        for v in victims:
            top, total, count = rank.get(v.node, (v.pi.priority, 0, 0))
            rank[v.node] = (max(top, v.pi.priority), total + v.pi.priority, count + 1)
        ranked = sorted(
            snapshot.node_infos, key=lambda ni: (ni.name in rank, rank.get(ni.name, (0, 0, 0)))
        )  # a stable sort: ties keep the snapshot's order
        placed: list[_Member] = []
        for mb in members:
            for orig in ranked:
                name = orig.name
                if mb.allowed is not None and name not in mb.allowed:
                    continue
                st = handle.run_filter_plugins_with_nominated_pods(mb.state, mb.pod, work.get(name, orig))
                if st is None or st.is_success():
                    mb.node = name
                    mb.pi = PodInfo(_on_node(mb.pod, name))
                    node(name).add_pod(mb.pi)
                    tell(mb.pi, name, add=True, skip=mb)
                    placed.append(mb)
                    break
        if not placed or placed[0].pod is not pod or placed_before + len(placed) < quorum:
            return None, Status(
                Code.UNSCHEDULABLE,
                f"gang {gang}: {placed_before + len(placed)} of {quorum} members fit even after "
                "preempting every lower-priority pod",
            )

        def members_fit(where: str) -> bool:
            check = placed if extended else [mb for mb in placed if mb.node == where]
            for mb in check:
                assert mb.pi is not None
                ni = node(mb.node).clone()
                ni.remove_pod(mb.pi.uid)
                st = handle.run_filter_plugins_with_nominated_pods(mb.state, mb.pod, ni)
                if st is not None and not st.is_success():
                    return False
            return True

        ordered = sorted(victims, key=functools.cmp_to_key(_importance))
        violating, others = filter_pods_with_pdb_violation(
            ordered, handle.cluster.list_pdbs(), pod=lambda v: v.pi.pod
        )
        evicted: dict[str, list[Pod]] = {}
        for v in [*violating, *others]:
            node(v.node).add_pod(v.pi)
            tell(v.pi, v.node, add=True)
            if members_fit(v.node):
                continue  # reprieved
            node(v.node).remove_pod(v.pi.uid)
            tell(v.pi, v.node, add=False)
            evicted.setdefault(v.node, []).append(v.pi.pod)
        if not evicted:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)

        all_victims: list[Pod] = []
        for ni in snapshot.node_infos:  # actuate, node by node in the snapshot's order
            pods = evicted.get(ni.name)
            if not pods:
                continue
            st = await self.executor.prepare_candidate(Candidate(ni.name, pods), pod)
            if st is not None:
                return None, st
            all_victims.extend(pods)
        nominator = handle.nominator
        for mb in placed[1:]:
            nominator.add(PodInfo(mb.pod), mb.node)
            if mb.pod.status.nominated_node_name != mb.node:
                try:
                    await handle.client.patch_pod_status(
                        mb.pod.metadata.namespace, mb.pod.metadata.name, nominated_node_name=mb.node
                    )
                except KubeschedError as e:  # gone, or the API refused: the nominator keeps it
                    log.warning("cannot set 'NominatedNodeName' of %s: %s", mb.pod.metadata.name, e)
        return PostFilterResult(placed[0].node, all_victims), Status(Code.SUCCESS)


__all__ = ["MSG_NEVER", "MSG_NO_VICTIMS", "MSG_TERMINATING", "GangPreemption"]
