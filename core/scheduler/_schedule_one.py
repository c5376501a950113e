"""One pod's way through the scheduler (upstream ``schedule_one.go``): read this module top to
bottom to follow it.

    schedule_one(qpi)                                   a popped pod, on its profile's Framework
      scheduling_cycle ── serial, CPU only, on a snapshot of the cache
        schedule_pod
          find_nodes_that_fit_pod    PreFilter; the nominated node (else the batch's hint,
                                     OpportunisticBatching) first; then
            find_nodes_that_pass_filters
                                     Filter over node batches from the round-robin start until
                                     numFeasibleNodesToFind pass (nominated pods counted in);
                                     extenders' Filter
          prioritize_nodes           PreScore, Score (+ NormalizeScore, weights), extenders
          select_host                reservoir choice among the top scores; the batch
                                     stores the others, sorted (OpportunisticBatching)
        [FitError] PostFilter (preemption) ──► nominating info
        assume (cache), Reserve, Permit (Wait parks the pod as a waiting pod)
      [failure] handle_scheduling_failure: requeue, nominate, FailedScheduling event + status
      spawn _binding_task ── one task per pod, concurrent
        binding_cycle: WaitOnPermit, PreBind, Bind (a binder extender first), PostBind,
                       the Scheduled event
        [failure] handle_binding_cycle_error: Unreserve, forget, requeue

:class:`ScheduleOne` and :class:`~kubesched.scheduler._binding_cycle.BindingCycle` (the binding
cycle and the failure handling, :mod:`kubesched.scheduler._binding_cycle`) are objects the
:class:`kubesched.Scheduler` holds (``scheduling``, ``binding``); the first hands the second each
pod it assumed, and each failure.  In a simulation the binding cycles and the failure reports
take turns (:mod:`kubesched.scheduler._driver`) so that decisions do not depend on the event
loop's order.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import msgspec
import numpy as np

from kubesched._logs import v
from kubesched.api._objects import Pod
from kubesched.clock import now as _now
from kubesched.metrics._metrics import ERROR, FILTER, SUCCESS
from kubesched.queue._scheduling_queue import QueuedPodInfo
from kubesched.runtime._extender import EXTENDER_NAME, MAX_EXTENDER_PRIORITY
from kubesched.runtime._framework import MAX_NODE_SCORE, PODS_TO_ACTIVATE_KEY, CycleState, Framework
from kubesched.runtime._nodeinfo import NodeBatch, PodInfo
from kubesched.runtime._status import Code, Diagnosis, FitError, Status
from kubesched.scheduler._batch import Batching
from kubesched.scheduler._binding_cycle import CLEAR_NOMINATION, BindingCycle, single_node_status
from kubesched.scheduler._binding_cycle import PodsToActivate as PodsToActivate
from kubesched.scheduler._binding_cycle import ScheduleResult as ScheduleResult
from kubesched.scheduler._filterpass import CycleError as _CycleError
from kubesched.scheduler._filterpass import fit_status, sampled_filter

if TYPE_CHECKING:
    from kubesched.cache._cache import Cache, Snapshot
    from kubesched.config._config import SchedulerConfig
    from kubesched.metrics._metrics import Metrics
    from kubesched.queue._scheduling_queue import SchedulingQueue

log = logging.getLogger("kubesched")
V3 = v(3)

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_BASE = 50
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def num_feasible_nodes_to_find(percentage: int | None, global_percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind`` (cases B1–B6)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = global_percentage if percentage is None else percentage
    if pct <= 0:
        pct = DEFAULT_PERCENTAGE_BASE - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def _to_find(fw: Framework, global_percentage: int, extenders: list[Any], n: int) -> int:
    """How many feasible nodes a Filter pass of ``fw`` over ``n`` candidates looks for: it reads
    only the percentages, the profile's Score plugins and the extenders' verbs."""
    if not fw.has_score_plugins() and not any(e.is_filter() or e.is_prioritizer() for e in extenders):
        return 1  # neither extender filters nor scoring: the first feasible node will do
    return num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, global_percentage, n)


def select_host(names: list[str], scores: np.ndarray, rng: random.Random) -> str:
    """``selectHost``: the top score; ties broken by reservoir sampling (cases C1–C4)."""
    if len(names) == 0:
        raise ValueError("empty priorityList")
    return names[_select_index(scores, rng)]


def _select_index(scores: np.ndarray, rng: random.Random) -> int:
    """:func:`select_host`'s choice as a position in ``scores``."""
    # argmax: cheaper than max(); ``[i, ...]``: the top as a 0-d view, compared at about half
    # the cost of the scalar ``scores[i]`` (no scalar conversion), with the same answer
    ties = (scores == scores[scores.argmax(), ...]).nonzero()[0]
    # reservoir sampling over the tied nodes picks each with probability 1/len(ties):
    # one draw gives the same distribution
    at: int = ties.item(0) if len(ties) == 1 else ties.item(rng.randrange(len(ties)))  # .item: a plain int
    return at


class _PodGroupCycle(Protocol):
    """What ScheduleOne needs of :class:`kubesched.scheduler._schedule_one_podgroup.PodGroupCycle`."""

    async def run(self, qpi: QueuedPodInfo) -> None: ...


class ScheduleOne:
    """The scheduling cycle of a :class:`kubesched.Scheduler`, which holds one: a popped pod's
    attempt up to its assumed node, then :class:`BindingCycle` takes it (or its failure)."""

    def __init__(
        self,
        *,
        config: SchedulerConfig,
        cache: Cache,
        snapshot: Snapshot,
        profiles: dict[str, Framework],
        queue: SchedulingQueue,
        extenders: list[Any],
        metrics: Metrics,
        rng: random.Random,
        binding: BindingCycle,
    ) -> None:
        self.config = config
        self.cache = cache
        self.snapshot = snapshot
        self.profiles = profiles
        self.queue = queue
        self.extenders = extenders
        self.metrics = metrics
        self.rng = rng
        self.binding = binding
        self.next_start_node_index = 0  # the round-robin start of the next Filter pass
        self._filter_pass_rate = 1.0  # feasible / evaluated in the last main Filter pass
        self._to_find: dict[tuple[Framework, int], int] = {}  # _to_find's answers
        self.last_attempt = 0.0  # when the last attempt began
        # the PodGroup cycle (1.36 with GenericWorkload on): a pod with spec.schedulingGroup
        # goes there instead (kubesched.scheduler._schedule_one_podgroup); None: never
        self.pod_group_cycle: _PodGroupCycle | None = None
        # OpportunisticBatching (beta on from 1.35; kubesched.scheduler._batch): None when off
        self.batching: Batching | None = None
        if config.feature_gates.get("OpportunisticBatching", False):
            self.batching = Batching(profiles, bool(extenders), config.feature_gates)

    async def schedule_one(self, qpi: QueuedPodInfo) -> None:
        """``ScheduleOne`` for a popped pod."""
        pi = qpi.pod_info  # (qpi.pod and qpi.uid are properties over it)
        pod = pi.pod
        if self.pod_group_cycle is not None and pod.spec.scheduling_group is not None:
            await self.pod_group_cycle.run(qpi)
            return
        fw = self.profiles.get(pod.spec.scheduler_name)
        if fw is None:
            self.queue.done(qpi.uid)
            return
        if pod.metadata.deletion_timestamp or self.cache.is_assumed(pi.uid):
            self.queue.done(pi.uid)
            return
        start = self.last_attempt = _now()
        if log.isEnabledFor(V3):
            log.log(V3, "Attempting to schedule pod pod=%s", json.dumps(pod.key))
        counts = self.metrics.pod_attempts
        if counts is not None:
            counts[pi.uid] = counts.get(pi.uid, 0) + 1
        state = CycleState(record_plugin_metrics=self.metrics.sample_plugins())
        state.pod_info = pi
        state.write(PODS_TO_ACTIVATE_KEY, PodsToActivate())
        binding = self.binding
        if binding.recorder is not None:
            state.recording = binding.recorder.begin()
        batching = self.batching
        if batching is None:
            result, assumed_pi, status, nominating = await self.scheduling_cycle(fw, state, qpi)
        else:
            batching.current = None  # the cycle asks a hint after PreFilter (findNodesThatFitPod)
            try:
                result, assumed_pi, status, nominating = await self.scheduling_cycle(fw, state, qpi)
            finally:
                batching.current = None
        if status is not None and not status.is_success():
            await binding.handle_scheduling_failure(fw, qpi, status, nominating, start)
            if state.recording is not None:
                binding.emit_results(qpi.pod, state.recording, bound=False)
            return
        binding.start(fw, state, qpi, assumed_pi, result, start)

    async def scheduling_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo
    ) -> tuple[ScheduleResult, PodInfo, Status | None, str | None]:
        """``schedulingCycle``: (result, assumed pod info, status, nominating info)."""
        pod = qpi.pod_info.pod  # qpi.pod, without the property's call
        rec = self.metrics.recorder  # ``scheduling_algorithm_duration_seconds``
        t0 = rec.algorithm_start() if rec is not None else 0.0
        try:
            result = await self.schedule_pod(fw, state, qpi.pod_info)
        except FitError as fe:
            if rec is not None:
                rec.algorithm_failed(qpi.uid)  # observed by the failure handler
            if not fw.has_post_filter_plugins():
                return ScheduleResult(), qpi.pod_info, fit_status(fe), None
            statuses = _FullStatusMap(fe.diagnosis, self.snapshot.names, self.snapshot.index)
            if state.recording is not None:
                state.recording.postfilter_nodes = list(fe.diagnosis.node_to_status)
            pf_result, pf_status = await fw.run_post_filter_plugins(state, pod, statuses)
            fe.diagnosis.post_filter_msg = pf_status.message
            nominating = pf_result.nominated_node_name if pf_result is not None else None
            return ScheduleResult(), qpi.pod_info, fit_status(fe), nominating
        except _CycleError as ce:
            if rec is not None:
                rec.algorithm_failed(qpi.uid)
            return ScheduleResult(), qpi.pod_info, ce.status, CLEAR_NOMINATION
        if rec is not None:
            rec.algorithm_done(t0)
        assumed_pi, status, nominating = await self.prepare_for_binding_cycle(fw, state, qpi, result)
        return result, assumed_pi, status, nominating

    async def prepare_for_binding_cycle(
        self, fw: Framework, state: CycleState, qpi: QueuedPodInfo, result: ScheduleResult
    ) -> tuple[PodInfo, Status | None, str | None]:
        """``prepareForBindingCycle``: assume the pod on its host, Reserve, Permit (a Wait makes
        it a waiting pod), activate the pods the plugins asked for: (assumed pod info, status,
        nominating info)."""
        pod = qpi.pod
        host = result.suggested_host
        assumed = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=host))
        assumed_pi = qpi.pod_info.with_pod(assumed)
        try:
            self.cache.assume_pod(assumed_pi, host)
        except Exception as e:
            return assumed_pi, Status.as_error(e), CLEAR_NOMINATION
        if state.recording is not None:
            state.recording.selected_node = host
        self.queue.nominator.delete(assumed_pi.uid)
        untimed = fw.calls.recorder is None  # then the Framework's Reserve is its runner's: called directly
        st = (fw.binding if untimed else fw).run_reserve_plugins_reserve(state, assumed, host)
        if st is not None and not st.is_success():
            await fw.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed_pi.uid)
            return assumed_pi, single_node_status(st, host), CLEAR_NOMINATION
        # untimed, with no Permit plugin, RunPermitPlugins calls and records nothing: None
        st = fw.run_permit_plugins(state, assumed, host) if fw.binding.permit or not untimed else None
        if st is not None and not st.is_success() and not st.is_wait():
            await fw.run_reserve_plugins_unreserve(state, assumed, host)
            self.cache.forget_pod(assumed_pi.uid)
            return assumed_pi, single_node_status(st, host), CLEAR_NOMINATION
        to_activate: PodsToActivate = state.read(PODS_TO_ACTIVATE_KEY)
        if to_activate:
            self.queue.activate(list(to_activate.values()))
            to_activate.clear()
        return assumed_pi, None, None

    # --- finding nodes -----------------------------------------------------------------------
    async def schedule_pod(self, fw: Framework, state: CycleState, pi: PodInfo) -> ScheduleResult:
        """``schedulePod``: snapshot, filter, score, select.  Raises FitError / _CycleError."""
        self.snapshot.update(self.cache)
        n = len(self.snapshot.node_infos)  # len(self.snapshot), without its call
        if n == 0:
            raise _CycleError(Status(Code.ERROR, ERR_NO_NODES_AVAILABLE))
        feasible, diagnosis = await self.find_nodes_that_fit_pod(fw, state, pi)
        found = len(feasible)
        if found == 0:
            fe = FitError(pi.key, n, diagnosis)
            raise fe
        batching = self.batching
        if found == 1:
            if batching is not None and batching.current is not None:
                batching.store(feasible.name_at(0), self.queue.scheduling_cycle, _now)
            return ScheduleResult(feasible.name_at(0), 1 + diagnosis.count(), 1)
        offset = 0
        if self.extenders:
            total = await self.prioritize_nodes(fw, state, pi.pod, feasible)
        else:  # prioritize_nodes without an await (it awaits only the extenders)
            total, offset = self._prioritize_plugins(fw, state, pi.pod, feasible)
        # _select_index(total, self.rng), without its call (the totals less ``offset``: the same top and ties)
        ties = (total == total[total.argmax(), ...]).nonzero()[0]
        i = ties.item(0) if len(ties) == 1 else ties.item(self.rng.randrange(len(ties)))
        host = feasible.name_at(i)
        if batching is not None and batching.current is not None:
            if batching.current[1] is not None:  # a pod that signs: its batch keeps the totals
                total = total + offset  # the true totals, in an array of their own
            # sortedNodeScores after the chosen node's Pop: the others by score (v1.35 schedulePod)
            batching.store(host, self.queue.scheduling_cycle, _now, feasible, total, i, self.rng)
        return ScheduleResult(host, found + diagnosis.count(), found)

    async def prioritize_nodes(self, fw: Framework, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        """``prioritizeNodes``: PreScore, Score, then the extenders' weighted scores added."""
        extenders = self.extenders
        if not extenders:
            total, offset = self._prioritize_plugins(fw, state, pod, nodes)
            return total + offset  # an array of its own
        total = self._framework_scores(fw, state, pod, nodes)
        if len(nodes):
            total = total + await self._prioritize_extenders(pod, nodes)
        return total

    @staticmethod
    def _framework_scores(fw: Framework, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        """PreScore and Score through the Framework (timed when a recorder times them): every
        node's total."""
        st = fw.run_pre_score_plugins(state, pod, nodes)
        if st is not None and not st.is_success():
            raise _CycleError(st)
        total, _, st = fw.run_score_plugins(state, pod, nodes, each=False)
        if st is not None:
            raise _CycleError(st)
        return total

    @staticmethod
    def _prioritize_plugins(fw: Framework, state: CycleState, pod: Pod, nodes: NodeBatch) -> tuple[np.ndarray, int]:
        """:meth:`prioritize_nodes` without extenders: PreScore and Score, the profile's runners
        called directly when no recorder times the extension points (``Framework``'s
        ``run_pre_score_plugins`` and ``run_score_plugins`` would only forward the call).

        Returns (scores, offset): every node's total is its score plus ``offset``, the uniform
        scores' sum (``ScoreRunners.score_parts``), which the choice of a host does not need.
        ``scores`` is read-only (it may be a plugin's array or a view of its kept scores)."""
        runners = fw.scores
        if not runners.score:
            return np.ones(len(nodes), dtype=np.int64), 0
        if fw.calls.recorder is not None:
            return ScheduleOne._framework_scores(fw, state, pod, nodes), 0
        st = runners.run_pre_score_plugins(state, pod, nodes)
        if st is not None and not st.is_success():
            raise _CycleError(st)
        scores, _, offset, _, st = runners.score_parts(state, pod, nodes, each=False)
        if st is not None:
            raise _CycleError(st)
        if scores is None:  # every plugin uniform or skipped: every node ties
            return np.zeros(len(nodes), dtype=np.int64), offset
        return scores, offset

    async def _prioritize_extenders(self, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        """The interested extenders' Prioritize, concurrently; an extender's error is ignored
        (the other scores decide).  Each score counts ``score × weight × (100 / 10)``."""
        results: list[tuple[list[tuple[str, int]], int]] = []

        async def call(ext: Any) -> None:
            try:
                results.append(await ext.prioritize(pod, nodes))
            except Exception as e:
                log.debug("extender %s's Prioritize failed; no score given by it: %s", ext.name, e)

        async with anyio.create_task_group() as tg:
            for ext in self.extenders:
                if ext.is_interested(pod):
                    tg.start_soon(call, ext)
        extra = np.zeros(len(nodes), dtype=np.int64)
        position = {name: i for i, name in enumerate(nodes.names)}
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        for host_scores, weight in results:
            for host, score in host_scores:
                i = position.get(host)
                if i is not None:
                    extra[i] += score * weight * scale
        return extra

    async def find_nodes_that_fit_pod(
        self, fw: Framework, state: CycleState, pi: PodInfo
    ) -> tuple[NodeBatch, Diagnosis]:
        """``findNodesThatFitPod``: PreFilter, the nominated node first, then sampled Filter."""
        pod = pi.pod
        snap = self.snapshot
        if fw.calls.recorder is None:  # Framework.run_pre_filter_plugins would only forward the call
            pre_res, st, rejected = fw.filters.run_pre_filter_plugins(state, pod, snap.node_infos)
        else:
            pre_res, st, rejected = fw.run_pre_filter_plugins(state, pod, snap.node_infos)
        diagnosis = Diagnosis(None, set(rejected))
        if st is not None and not st.is_success():
            if not st.is_rejected():
                raise _CycleError(st)
            diagnosis.absent_status = st
            diagnosis.pre_filter_msg = st.message
            if st.code == Code.PENDING:
                diagnosis.pending_plugins = set(rejected)
            return NodeBatch([]), diagnosis
        nnn = pod.status.nominated_node_name
        batching = self.batching
        if batching is not None and batching.current is None and not pi.pod.spec.scheduling_group:
            # v1.35 findNodesThatFitPod: the batch's hint, evaluated as a nominated node would be
            # (evaluateNominatedNode: the nominated node first when the pod has one)
            hint = batching.hint(fw, state, pod, snap, self.queue.scheduling_cycle, _now)
            nnn = nnn or hint
        if nnn:
            idx = snap.index.get(nnn)
            if idx is not None:
                feasible = await self.find_nodes_that_pass_filters(
                    fw, state, pi, diagnosis, np.array([idx], dtype=np.int64), advance=False
                )
                if len(feasible):
                    return feasible, diagnosis
        if pre_res is not None and pre_res.node_names is not None:
            candidates = np.array(
                sorted(snap.index[n] for n in pre_res.node_names if n in snap.index), dtype=np.int64
            )
            diagnosis.absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejected))}]",
            )
        else:
            candidates = snap.all_rows()
        if self.extenders or self.metrics.recorder is not None:
            feasible = await self.find_nodes_that_pass_filters(fw, state, pi, diagnosis, candidates, advance=True)
        else:  # find_nodes_that_pass_filters' own path then, without an await
            feasible = self._filter_pass(fw, state, pi, diagnosis, candidates, True)
        return feasible, diagnosis

    async def find_nodes_that_pass_filters(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        diagnosis: Diagnosis,
        candidates: np.ndarray,
        *,
        advance: bool,
    ) -> NodeBatch:
        """``findNodesThatPassFilters``: evaluate nodes from the round-robin start until enough
        feasible ones are found; exactly the nodes a sequential upstream would evaluate.  Then
        the extenders' Filter (``findNodesThatPassExtenders``).

        With a recorder, the Filter pass is observed as the Filter extension point (the
        extenders' time left out; an extender's error makes it an Error), unless the profile
        has no Filter plugins (upstream returns before it starts the clock)."""
        rec = self.metrics.recorder
        if rec is None or not fw.has_filter_plugins():
            nodes = self._filter_pass(fw, state, pi, diagnosis, candidates, advance)
            return await self._pass_extenders(pi, nodes, diagnosis, advance) if self.extenders else nodes
        t0 = rec.now()
        try:
            nodes = self._filter_pass(fw, state, pi, diagnosis, candidates, advance)
        except Exception:
            rec.extension_point(FILTER, ERROR, fw.profile_name, rec.now() - t0)
            raise
        took = rec.now() - t0
        try:
            nodes = await self._pass_extenders(pi, nodes, diagnosis, advance)
        except Exception:
            rec.extension_point(FILTER, ERROR, fw.profile_name, took)
            raise
        rec.extension_point(FILTER, SUCCESS, fw.profile_name, took)
        return nodes

    def _filter_pass(
        self,
        fw: Framework,
        state: CycleState,
        pi: PodInfo,
        diagnosis: Diagnosis,
        candidates: np.ndarray,
        advance: bool,
    ) -> NodeBatch:
        """The Filter pass of :meth:`find_nodes_that_pass_filters` (the extenders' excepted)."""
        n = len(candidates)
        if n == 0:
            return NodeBatch([])
        key = (fw, n)
        to_find = self._to_find.get(key)
        if to_find is None:  # what it reads is fixed once the scheduler is built: kept per (profile, n)
            if len(self._to_find) >= 64:  # node counts come and go: keep the recent ones
                self._to_find.clear()
            to_find = self._to_find[key] = _to_find(fw, self.config.percentage_of_nodes_to_score, self.extenders, n)
        start = self.next_start_node_index % n if advance else 0
        rate = self._filter_pass_rate if advance else 1.0
        snap = self.snapshot
        chosen, processed, pass_rate = sampled_filter(fw, state, pi, diagnosis, snap, candidates, start, to_find, rate)
        if advance:
            if pass_rate is not None:
                self._filter_pass_rate = pass_rate
            self.next_start_node_index = (self.next_start_node_index + processed) % n
        return NodeBatch(snapshot=snap, indices=chosen)

    async def _pass_extenders(
        self, pi: PodInfo, nodes: NodeBatch, diagnosis: Diagnosis, main_pass: bool
    ) -> NodeBatch:
        """``findNodesThatPassExtenders``: each interested extender filters what the previous
        kept; its failed nodes get Unschedulable / UnschedulableAndUnresolvable statuses."""
        if not self.extenders:
            return nodes
        before = len(nodes)
        for ext in self.extenders:
            if len(nodes) == 0:
                break
            if not ext.is_interested(pi.pod):
                continue
            try:
                kept, failed, unresolvable = await ext.filter(pi.pod, nodes)
            except Exception as e:
                if ext.is_ignorable():
                    log.info("skipping extender %s as it returned error and has ignorable flag set: %s", ext.name, e)
                    continue
                raise _CycleError(Status.as_error(e)) from e
            for name, msg in unresolvable.items():
                diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
            for name, msg in failed.items():
                if name not in unresolvable:  # failedAndUnresolvableNodes takes precedence
                    diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE, msg)
            nodes = kept
        if main_pass and len(nodes) != before:
            # extenders have no queueing hints: any cluster event may make the pod schedulable
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return nodes



class _FullStatusMap(Mapping[str, Status]):
    """``NodeToStatus`` for PostFilter: explicit statuses plus the absent-node default."""

    def __init__(self, diagnosis: Diagnosis, names: list[str], index: Mapping[str, int]) -> None:
        self._d = diagnosis
        self._names = names
        self._index = index

    def _default(self) -> Status:
        return self._d.absent_status or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def __getitem__(self, name: str) -> Status:
        st = self._d.status_of(name, self._index)
        if st is not None:
            return st
        if name in self._index:
            return self._default()
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        st = self._d.status_of(name, self._index)
        if st is not None:
            return st
        return self._default()

    def rows_with_code(self, code: Code) -> np.ndarray | None:
        """The snapshot rows, in order, of the nodes whose status has ``code``; None when the
        absent-node default has it (every node without an explicit status would count)."""
        if self._default().code == code:
            return None
        arrays = self._d.filtered
        if arrays is not None:
            rows, rej = arrays
            with_code = np.array([st.code == code for st in rej.statuses], dtype=bool)
            out: np.ndarray = rows[with_code[rej.which]]
            out.sort()
            return out
        index = self._index
        items = self._d.node_to_status
        sts = list(items.values())
        distinct = dict(zip(map(id, sts), sts, strict=True))  # plugins share Status objects
        good = {key for key, st in distinct.items() if st.code == code}
        if len(good) == len(distinct):
            names: list[str] = list(items)
        else:
            names = [n for n, st in items.items() if id(st) in good]
        arr = np.fromiter(map(index.get, names, itertools.repeat(-1)), np.int64, len(names))
        arr = arr[arr >= 0]
        arr.sort()
        return arr

    def __iter__(self) -> Any:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

