"""The Evaluator: one preemption attempt, start to nomination (upstream ``preemption.go``).

``Evaluator.preempt`` for a pod that fit no node, stage by stage (each stage's module in
brackets)::

    re-read the pod ─► eligible? preemptionPolicy, victims already terminating on its
        nominated node                                                 [here]
    ─► potential nodes: status exactly Unschedulable (absent ones are Unresolvable)
    ─► dry run from a random offset: per node, the victims and their PDB violations; stop
       once enough candidates are found          [dryrun.py / dryrun_columns.py, victims.py]
    ─► extenders narrow the candidates (ProcessPreemption)             [here]
    ─► pick one node (the ordered score functions)                     [candidates.py]
    ─► prepare it: delete its victims, sync or async                   [executor.py]
    ─► PostFilterResult(nominated node)

Which dry run: the column form when its preconditions hold (:meth:`Evaluator._can_use_columns`:
no AddPod/RemovePod extension in the cycle, the default ``select_victims_on_node``, eligibility
by priority alone); otherwise the reference form, node
by node.  Both give the same candidates, victims, statuses and errors.

Everything it needs of the scheduler comes through the plugin's handle
(:class:`kubesched.framework.Handle`): the snapshot and listers, the nominator, the Filter
runners for the dry run, the extenders, the client, events, metrics and background tasks.

The Evaluator carries DefaultPreemption's ``Interface`` methods (upstream's ``default_preemption.go``
implements them on the plugin): a custom preemption plugin may subclass it and override
:meth:`~Evaluator.select_victims_on_node`, :meth:`~Evaluator.ordered_score_funcs`,
:meth:`~Evaluator.pod_eligible_to_preempt_others` or
:meth:`~Evaluator.get_offset_and_num_candidates`, or replace the hooks ``is_eligible_pod`` and
``more_important_pod``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from kubesched.runtime._framework import PostFilterResult
from kubesched.runtime._status import Code, Diagnosis, FitError, Status

from .candidates import (
    calculate_num_candidates,
    pick_by_default_rules,
    pick_one_node_for_preemption,
)
from .dryrun import dry_run_per_node
from .dryrun_columns import CandidateList, ColumnDryRun
from .executor import Executor
from .types import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    MSG_NO_CANDIDATE,
    MSG_NOT_ELIGIBLE_NEVER,
    MSG_NOT_ELIGIBLE_TERMINATING,
    MSG_NOT_HELPFUL,
    PREEMPT_NEVER,
    Candidate,
    IsEligiblePodFunc,
    MoreImportantPodFunc,
    ScoreFunc,
)
from .util import aggregate_message, more_important_pod, pod_priority, pod_terminating_by_preemption
from .victims import select_victims_on_node

if TYPE_CHECKING:
    from kubesched.api._objects import Pod, PodDisruptionBudget
    from kubesched.runtime._framework import CycleState
    from kubesched.runtime._handle import Handle
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo

log = logging.getLogger("kubesched.preemption")


def _default_is_eligible_pod(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    """Upstream's default ``IsEligiblePod``: every lower-priority pod may be preempted."""
    return True


def _status_of(m: Mapping[str, Status], name: str) -> Status:
    """``NodeToStatusReader.Get``: a node absent from the map is UnschedulableAndUnresolvable."""
    st = m.get(name)
    if st is None:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    return st


class Evaluator:
    """``preemption.Evaluator`` with DefaultPreemption's ``Interface`` methods built in.

    ``handle`` is the plugin's :class:`~kubesched.framework.Handle`.  A custom preemption plugin may
    subclass this and override :meth:`select_victims_on_node`, :meth:`ordered_score_funcs`,
    :meth:`pod_eligible_to_preempt_others` or :meth:`get_offset_and_num_candidates`; or just
    replace :attr:`is_eligible_pod` / :attr:`more_important_pod` (upstream ``IsEligiblePod`` and
    ``MoreImportantPod``) and :attr:`offset_source` (``getOffsetRand``: ``n -> [0, n)``, by
    default the scheduler's seeded ``handle.rng``).

    It holds :attr:`executor`, the :class:`Executor` built from the same handle, which deletes
    the chosen candidate's victims (``prepare_candidate``, sync or async) and keeps the
    ``preempting`` set; :meth:`is_pod_running_preemption` asks it.
    """

    def __init__(
        self,
        plugin_name: str,
        handle: Handle,
        *,
        min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
        min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
        enable_async_preemption: bool | Callable[[], bool] = False,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle: Handle = handle
        # deletes the chosen candidate's victims, sync or async; keeps the preempting set
        self.executor = Executor(plugin_name, handle)
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute
        self._async = enable_async_preemption
        self.is_eligible_pod: IsEligiblePodFunc = _default_is_eligible_pod
        self.more_important_pod: MoreImportantPodFunc = more_important_pod
        self.offset_source: Callable[[int], int] | None = None
        # the dry run on columns, with its stripped nodes kept across attempts
        self._columns = ColumnDryRun(handle)

    # --- configuration ------------------------------------------------------------------
    @property
    def enable_async_preemption(self) -> bool:
        a = self._async
        return bool(a() if callable(a) else a)

    # --- Interface (DefaultPreemption's implementations) ---------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        return calculate_num_candidates(
            num_nodes, self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        )

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """``GetOffsetAndNumCandidates``: a random offset in [0, N) and the candidate count."""
        src = self.offset_source
        if src is not None:
            offset = src(num_nodes)
        else:
            offset = self.handle.rng.randrange(num_nodes)
        return offset, self.calculate_num_candidates(num_nodes)

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """``isPreemptionAllowed``: lower priority, and ``is_eligible_pod``."""
        return victim.priority < pod_priority(preemptor) and self.is_eligible_pod(
            node_info, victim, preemptor
        )

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers`` (cases J1–J5)."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, MSG_NOT_ELIGIBLE_NEVER
        nom = pod.status.nominated_node_name
        if nom:
            if (
                nominated_node_status is not None
                and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            node_info = self.handle.snapshot.get(nom)
            if node_info is not None:
                for pi in node_info.pods:
                    if self.is_preemption_allowed(
                        node_info, pi, pod
                    ) and pod_terminating_by_preemption(pi.pod, self.executor.disruption_conditions):
                        return False, MSG_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, Candidate]
    ) -> list[ScoreFunc] | None:
        """``OrderedScoreFuncs``: None selects the default rules of :func:`pick_one_node_for_preemption`."""
        return None

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """``SelectVictimsOnNode`` (``victims.select_victims_on_node``): the fewest, least
        important pods whose removal lets ``pod`` fit.

        ``state`` and ``node_info`` are copies and are changed.  Returns (victims in importance
        order, number of PDB-violating victims, status: None for Success).
        """
        return select_victims_on_node(
            self.handle,
            self.is_preemption_allowed,
            self.more_important_pod,
            state,
            pod,
            node_info,
            pdbs,
        )

    def is_pod_running_preemption(self, uid: str) -> bool:
        """``IsPodRunningPreemption`` (the executor's): the pod's victims are still being
        deleted in the background and its last victim is not yet terminating."""
        return self.executor.is_pod_running_preemption(uid)

    # --- Preempt --------------------------------------------------------------------------
    async def preempt(
        self, state: CycleState, pod: Pod, m: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """``Evaluator.Preempt``: see the module docstring for the steps and the results.

        ``(None, Error)``: a transient error; ``(None, Unschedulable)``: keep the nomination;
        ``(PostFilterResult(""), Unschedulable)``: preemption cannot help (clear it);
        ``(PostFilterResult(node), Success)``: nominate ``node``.
        """
        fh = self.handle
        current = fh.cluster.get_pod(pod.metadata.namespace, pod.metadata.name)
        if current is None:
            return None, Status(Code.ERROR, f'pod "{pod.metadata.name}" not found')
        pod = current
        nominated_status = _status_of(m, pod.status.nominated_node_name)
        ok, msg = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        all_nodes = list(fh.snapshot.node_infos)
        if not all_nodes:
            return None, Status(Code.ERROR, "no nodes available")
        candidates, statuses, errs = self.find_candidates(state, all_nodes, pod, m)
        if errs and not candidates:
            return None, Status(Code.ERROR, aggregate_message(errs))
        if not candidates:
            diagnosis = Diagnosis(
                node_to_status=dict(statuses),
                absent_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NOT_HELPFUL),
            )
            fit_error = FitError(pod.key, len(all_nodes), diagnosis)
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, str(fit_error))
        candidates, st = await self.call_extenders(pod, candidates)
        if st is not None and not st.is_success():
            return None, st
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        if self.enable_async_preemption:
            self.executor.prepare_candidate_async(best, pod)
        else:
            st = await self.executor.prepare_candidate(best, pod)
            if st is not None and not st.is_success():
                return None, st
        return PostFilterResult(best.name, victims=list(best.victims)), Status(Code.SUCCESS)

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, m: Mapping[str, Status]
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        """``findCandidates``: the nodes whose status is exactly Unschedulable, dry-run."""
        rows = self._potential_rows(state, all_nodes, m)
        potential: Sequence[NodeInfo] = ()
        if rows is None:
            potential = [
                ni for ni in all_nodes if _status_of(m, ni.name).code == Code.UNSCHEDULABLE
            ]
        count = len(potential) if rows is None else len(rows)
        if not count:
            return [], {}, []
        pdbs = self.handle.cluster.list_pdbs()
        offset, num = self.get_offset_and_num_candidates(count)
        if rows is not None:
            return self.dry_run_preemption_columns(state, pod, rows, pdbs, offset, num)
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num)

    def _potential_rows(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], m: Mapping[str, Status]
    ) -> np.ndarray | None:
        """The snapshot rows of the nodes whose status is exactly Unschedulable, in snapshot
        order, when the column dry run applies to them (``all_nodes`` is the whole snapshot);
        None otherwise."""
        snap = self.handle.snapshot
        if not self._can_use_columns(state):
            return None
        infos = snap.node_infos
        if len(all_nodes) != len(infos) or (
            infos and (all_nodes[0] is not infos[0] or all_nodes[-1] is not infos[-1])
        ):
            return None
        rows_with_code = getattr(m, "rows_with_code", None)
        if rows_with_code is not None:
            rows: np.ndarray | None = rows_with_code(Code.UNSCHEDULABLE)
            if rows is not None:
                return rows
        names = snap.names
        return np.array(
            [i for i in range(len(names)) if _status_of(m, names[i]).code == Code.UNSCHEDULABLE],
            dtype=np.int64,
        )

    def _strip_cacheable(self) -> bool:
        """Whether which pods may be preempted depends only on their priority (the default
        ``is_preemption_allowed`` and ``is_eligible_pod``): a node's stripped form can then be
        kept for the next preemptors of the same priority while the node is unchanged."""
        return (
            type(self).is_preemption_allowed is Evaluator.is_preemption_allowed
            and self.is_eligible_pod is _default_is_eligible_pod
        )

    def _can_use_columns(self, state: CycleState) -> bool:
        """The column dry run applies: the default ``select_victims_on_node``, no AddPod/RemovePod
        extension in the cycle (the cycle state then stays as PreFilter left it), priority-only
        eligibility."""
        if type(self).select_victims_on_node is not Evaluator.select_victims_on_node:
            return False
        return not self.handle.has_pre_filter_extensions(state) and self._strip_cacheable()

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """``DryRunPreemption`` over ``potential_nodes``: (non-violating then violating
        candidates, node statuses, errors), the reference form (``dryrun.py``).

        Nodes are visited from ``offset`` round the list; each list holds at most
        ``num_candidates``; the search stops once there is a non-violating candidate and
        ``non_violating + violating >= num_candidates`` (G12–G15).
        """
        return self.dry_run_preemption_per_node(
            state, pod, potential_nodes, pdbs, offset, num_candidates
        )

    def dry_run_preemption_per_node(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """The dry run one node at a time: :meth:`select_victims_on_node` on copies of each."""
        return dry_run_per_node(
            self.select_victims_on_node, state, pod, potential_nodes, pdbs, offset, num_candidates
        )

    def dry_run_preemption_columns(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        """The dry run over the snapshot's nodes ``rows`` (the potential nodes, in order), on
        columns (``dryrun_columns.py``); requires what :meth:`_can_use_columns` checks.  Same
        candidates, victims, statuses and errors as :meth:`dry_run_preemption_per_node`."""
        return self._columns.run(
            state, pod, rows, pdbs, offset, num_candidates, self.more_important_pod
        )

    async def call_extenders(
        self, pod: Pod, candidates: Sequence[Candidate]
    ) -> tuple[Sequence[Candidate], Status | None]:
        """``callExtenders``: let preemption-capable extenders narrow the candidates.

        An extender is any object with ``supports_preemption()``, ``is_interested(pod)``,
        ``is_ignorable()``, ``name`` and ``process_preemption(pod, {node: Candidate}, snapshot)``
        returning ``{node: Candidate}`` or an awaitable of it (an HTTP extender's call).
        """
        extenders = self.handle.extenders
        if not extenders:
            return candidates, None
        victims_map = {c.name: c for c in candidates}
        if not victims_map:
            return candidates, None
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                answer = ext.process_preemption(pod, victims_map, self.handle.snapshot)
                if inspect.isawaitable(answer):
                    answer = await answer
                result = dict(answer)
            except Exception as err:
                if ext.is_ignorable():
                    log.info(
                        "skipped extender %s as it returned error and has ignorable flag set: %s",
                        ext.name,
                        err,
                    )
                    continue
                return [], Status(Code.ERROR, str(err), error=err)
            for node, c in list(result.items()):
                if c is None or not c.victims:
                    if ext.is_ignorable():
                        del result[node]
                        continue
                    return [], Status(
                        Code.ERROR, f'expected at least one victim pod on node "{node}"'
                    )
            victims_map = result
            if not victims_map:
                break
        return [
            Candidate(name, c.victims, c.num_pdb_violations) for name, c in victims_map.items()
        ], None

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """``SelectCandidate``: the one candidate, or the pick of the ordered score functions."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        if (
            isinstance(candidates, CandidateList)
            and candidates.has_default_scores
            and getattr(self.ordered_score_funcs, "__func__", None) is Evaluator.ordered_score_funcs
        ):
            return candidates.candidate(candidates.best_by_default_rules())
        victims_map = {c.name: c for c in candidates}
        funcs = self.ordered_score_funcs(victims_map)
        if not funcs and len(victims_map) == len(candidates):
            return pick_by_default_rules(candidates)
        node = pick_one_node_for_preemption(victims_map, funcs)
        return victims_map.get(node) or candidates[0]


__all__ = ["Evaluator"]
