"""Victim selection on one node, with PDBs.

Upstream ``SelectVictimsOnNode`` and ``filterPodsWithPDBViolation``, in the reference form, on a
copy of the node and of the cycle state::

    remove every pod the preemptor may preempt ──► does the preemptor fit?  no ─► status
        │ yes
        ▼
    sort them by importance; split them (stably) into PDB-violating and the rest
        ▼
    reprieve, most important first, violating ones first: add the pod back, filter;
    if the preemptor no longer fits, remove it again — it is a victim
        ▼
    (victims in importance order, number of PDB-violating victims, None)

A PDB's budget (``disruptionsAllowed``) is spent by each matching pod in importance order that
is not already among its ``disruptedPods``; a pod that overdraws some budget violates it.  A PDB
with a nil, empty or invalid selector matches nothing.  The dry run on columns
(``dryrun_columns.py``) runs the same reprieve loop on many nodes at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.api._labels import compile_label_selector
from kubesched.runtime._status import Code, Status

from .types import MSG_NO_VICTIMS
from .util import pod_priority, sort_by_importance

if TYPE_CHECKING:
    from kubesched.api._objects import Pod, PodDisruptionBudget
    from kubesched.runtime._framework import CycleState
    from kubesched.runtime._handle import Handle
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo


def _selector_is_empty(pdb: PodDisruptionBudget) -> bool | None:
    """None: nil selector (matches nothing); True: empty (upstream skips it); False otherwise."""
    sel = pdb.spec.selector
    if sel is None:
        return None
    return not sel.match_labels and not sel.match_expressions


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[Any],
    pdbs: Sequence[PodDisruptionBudget],
    pod: Callable[[Any], Pod] = lambda pi: pi.pod,
) -> tuple[list[Any], list[Any]]:
    """``filterPodsWithPDBViolation``: a stable split into (violating, non-violating)."""
    allowed = [(pdb.status.disruptions_allowed if pdb.status is not None else 0) for pdb in pdbs]
    matchers: list[Callable[[Mapping[str, str]], bool] | None] = []
    for pdb in pdbs:
        empty = _selector_is_empty(pdb)
        if empty is None or empty:
            matchers.append(None)  # a nil or empty selector matches nothing
            continue
        try:
            matchers.append(compile_label_selector(pdb.spec.selector))
        except ValueError:
            matchers.append(None)  # an invalid selector matches nothing
    violating: list[Any] = []
    non_violating: list[Any] = []
    if not pdbs:
        return violating, list(pod_infos)
    for pi in pod_infos:
        p = pod(pi)
        violated = False
        labels = p.metadata.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != p.metadata.namespace:
                    continue
                match = matchers[i]
                if match is None or not match(labels):
                    continue
                disrupted = pdb.status.disrupted_pods if pdb.status is not None else {}
                if p.metadata.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def select_victims_on_node(
    fh: Handle,
    allowed: Callable[[NodeInfo, PodInfo, Pod], bool],
    less: Callable[[Pod, Pod], bool],
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    pdbs: Sequence[PodDisruptionBudget],
) -> tuple[list[Pod], int, Status | None]:
    """``SelectVictimsOnNode``: the fewest, least important pods whose removal lets ``pod`` fit.

    ``fh`` is the plugin's handle (Filter with nominated pods, the AddPod/RemovePod extensions);
    ``allowed(node_info, victim, pod)`` says which pods may be preempted (``isPreemptionAllowed``)
    and ``less`` orders them (``MoreImportantPod``).  ``state`` and ``node_info`` are copies
    and are changed.  Returns (victims in importance order, number of PDB-violating victims,
    status: None for Success).
    """
    prio = pod_priority(pod)

    def remove(pi: PodInfo) -> Status | None:
        node_info.remove_pod(pi.uid)
        st = fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
        return None if st is None or st.is_success() else Status(Code.ERROR, st.message)

    def add(pi: PodInfo) -> Status | None:
        node_info.add_pod(pi)
        st = fh.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
        return None if st is None or st.is_success() else Status(Code.ERROR, st.message)

    potential = [pi for pi in node_info.pods if allowed(node_info, pi, pod)]
    for pi in potential:
        err = remove(pi)
        if err is not None:
            return [], 0, err
    if not potential:
        return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)
    st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info, prio)
    if st is not None and not st.is_success():
        return [], 0, st
    sort_by_importance(potential, less, lambda pi: pi.pod)
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    victims: list[PodInfo] = []

    def reprieve(pi: PodInfo) -> tuple[bool, Status | None]:
        err = add(pi)
        if err is not None:
            return False, err
        st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info, prio)
        fits = st is None or st.is_success()
        if not fits:
            err = remove(pi)
            if err is not None:
                return False, err
            victims.append(pi)
        return fits, None

    num_violating = 0
    for pi in violating:
        fits, err = reprieve(pi)
        if err is not None:
            return [], 0, err
        if not fits:
            num_violating += 1
    for pi in non_violating:
        _, err = reprieve(pi)
        if err is not None:
            return [], 0, err
    if violating and non_violating:
        sort_by_importance(victims, less, lambda pi: pi.pod)
    return [pi.pod for pi in victims], num_violating, None


__all__ = ["filter_pods_with_pdb_violation", "select_victims_on_node"]
