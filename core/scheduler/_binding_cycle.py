"""The binding cycle and the failure handling of one pod (upstream ``schedule_one.go``'s
``bindingCycle``, ``handleBindingCycleError``, ``handleSchedulingFailure``).

    _binding_task ── one task per pod, after a successful scheduling cycle
      binding_cycle: WaitOnPermit, PreBind, Bind (a binder extender first), PostBind,
                     the Scheduled event
      [failure] handle_binding_cycle_error: Unreserve, forget, requeue
    handle_scheduling_failure: requeue, nominate, the FailedScheduling event and the
                     PodScheduled condition (written by one report task per pod, in order)

:class:`BindingCycle` is an object the :class:`kubesched.Scheduler` holds (``binding``), given
what it works with when it is built; the scheduling cycle
(:class:`~kubesched.scheduler._schedule_one.ScheduleOne`) hands it each pod it assumed.
"""

from __future__ import annotations

import collections
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched._errors import NotFoundError, TransportError
from kubesched._logs import v
from kubesched.api._objects import Event, ObjectMeta, ObjectReference, Pod, PodCondition
from kubesched.clock import now as _now
from kubesched.queue._scheduling_queue import QueuedPodInfo
from kubesched.runtime import _events as ev
from kubesched.runtime._framework import PODS_TO_ACTIVATE_KEY, CycleState, Framework
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import SKIP, Code, Diagnosis, FitError, Status
from kubesched.scheduler._driver import TURN
from kubesched.scheduler._expectation import (
    run_pre_bind_pre_flights,
    run_untimed_pre_bind_pre_flights,
)
from kubesched.scheduler._parallel_prebind import group_runner

if TYPE_CHECKING:
    from kubesched._transport import Transport
    from kubesched.cache._cache import Cache
    from kubesched.cache._clusterstate import ClusterState
    from kubesched.metrics._metrics import Metrics
    from kubesched.queue._scheduling_queue import SchedulingQueue
    from kubesched.scheduler._driver import Driver
    from kubesched.scheduler._results import AttemptRecord, ResultRecorder
    from kubesched.scheduler._taskpool import TaskPool

log = logging.getLogger("kubesched")
V2 = v(2)

NOTE_LENGTH_LIMIT = 1024
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


def single_node_status(st: Status, host: str) -> Status:
    """A Reserve / Permit rejection as a FitError over the one chosen node."""
    if not st.is_rejected():
        return st
    d = Diagnosis(node_to_status={host: st}, unschedulable_plugins={st.plugin} if st.plugin else set())
    fe = FitError("", 1, d)
    out = Status(st.code, str(fe), plugin=st.plugin)
    out.error = fe
    return out


def truncate_message(msg: str) -> str:
    if len(msg) <= NOTE_LENGTH_LIMIT:
        return msg
    suffix = " ..."
    return msg[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


class PodsToActivate(dict[str, Pod]):
    """``framework.PodsToActivate``: pods a plugin wants activated after this cycle (uid → pod)."""

    def clone(self) -> PodsToActivate:
        return self


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0


# Nominating info: None is Noop (keep the pod's nomination); a string is Override ("" clears).
CLEAR_NOMINATION = ""


class BindingCycle:
    """The binding cycles and failure reports of a :class:`kubesched.Scheduler`, which holds
    one: the binding tasks running (``tasks``), the pods bound (``scheduled_count``) and the
    failure reports being written."""

    def __init__(
        self,
        *,
        transport: Transport,
        cluster: ClusterState,
        cache: Cache,
        queue: SchedulingQueue,
        extenders: list[Any],
        metrics: Metrics,
        driver: Driver,
        spawn: Callable[..., None],
        touch: Callable[[], None],
    ) -> None:
        """``spawn``: the scheduler's background tasks; ``touch``: tells it an activity ended."""
        self.transport = transport
        self.cluster = cluster
        self.cache = cache
        self.queue = queue
        self.extenders = extenders
        self.metrics = metrics
        self.driver = driver
        self.spawn = spawn
        self._touch = touch
        self.recorder: ResultRecorder | None = None  # the scheduler's (``Scheduler.recorder``)
        self.pool: TaskPool | None = None  # the scheduler's workers, while it runs
        self.tasks = 0  # binding tasks started and not yet ended
        self.scheduled_count = 0
        self.nnn_for_expectation = False
        """NominatedNodeNameForExpectation (the scheduler sets it from its gates): :mod:`._expectation`."""
        self.parallel_pre_bind = False
        """1.36: PreBindPreFlight's ``AllowParallel`` is honoured (the scheduler sets it from its version)."""
        self._run_group = group_runner(driver)
        self._reports: dict[str, collections.deque[tuple[Any, ...]]] = {}

    def start(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        start: float,
    ) -> None:
        """Start the binding cycle of a pod assumed on ``result.suggested_host`` (its own task;
        a pod waiting at Permit takes no turn until it is released)."""
        self.tasks += 1
        driver = self.driver
        driver.active += 1  # (``driver.activate()``, without its call)
        assert self.pool is not None, "the scheduler is not running"
        # ``get_waiting_pod``, without its calls; a live scheduler hands out no tickets
        ticket = driver.ticket() if driver.deterministic and assumed_pi.uid not in fw.waiting_pods else None
        self.pool.start_soon(self._binding_task, fw, state, qpi, assumed_pi, result, start, ticket)

    # --- binding cycle ------------------------------------------------------------------------
    async def _binding_task(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        start: float,
        ticket: int | None = None,
    ) -> None:
        turn = [ticket]
        # this cycle's turn, for Driver.park_until (reset: pool workers); a live scheduler
        # hands out no turns, and its park_until never reads one
        token = TURN.set(turn) if self.driver.deterministic else None
        try:
            if ticket is not None:
                await self.driver.take(ticket)
            st = await self.binding_cycle(fw, state, qpi, assumed_pi, result, turn)
            bound = st is None or st.is_success()
            if st is not None and not bound:
                await self.handle_binding_cycle_error(fw, state, qpi, assumed_pi, result, st, start)
            else:
                self.metrics.scheduled(fw.profile_name, qpi, start)
            if state.recording is not None:
                self.emit_results(qpi.pod, state.recording, bound=bound)
        finally:
            if token is not None:
                TURN.reset(token)
            if turn[0] is not None:
                self.driver.end(turn[0])
            self.tasks -= 1
            self.driver.deactivate()
            self._touch()

    async def binding_cycle(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        turn: list[int | None] | None = None,
    ) -> Status | None:
        """``bindingCycle``: PreBindPreFlight (with NominatedNodeNameForExpectation), WaitOnPermit,
        PreBind, Bind, PostBind."""
        if turn is None:
            turn = [None]
        assumed = assumed_pi.pod
        host = result.suggested_host
        # the pod's wait at Permit, if it waits: only its Permit adds it, only its WaitOnPermit
        # below removes it
        wp = fw.waiting_pods.get(assumed_pi.uid)  # ``get_waiting_pod``, without its calls
        nominate = False
        pre_bind_skipped = False
        if self.nnn_for_expectation:
            untimed = fw.calls.recorder is None
            if untimed:  # ``run_pre_bind_pre_flights`` without a recorder: its runner, called directly
                pre_flight = run_untimed_pre_bind_pre_flights(fw, state, assumed, host, self.parallel_pre_bind)
            else:
                pre_flight = run_pre_bind_pre_flights(fw, state, assumed, host, parallel=self.parallel_pre_bind)
            if pre_flight is SKIP:
                nominate = wp is not None
                # every PreBind plugin has a pre-flight and each said Skip (the shared SKIP is
                # left only then): none runs, so an untimed RunPreBindPlugins answers None at once
                pre_bind_skipped = untimed and fw.binding.all_pre_flighted
            else:
                if pre_flight is not None and (pre_flight.code == Code.ERROR or pre_flight.is_rejected()):
                    return pre_flight
                nominate = pre_flight is None or wp is not None
        if wp is not None:
            if wp.released:
                turn[0] = self.driver.ticket()
            else:
                # parked at Permit: the loop need not wait for it until it is released

                def released() -> None:
                    turn[0] = self.driver.ticket()
                    self.driver.activate()

                wp.on_release = released
                self.driver.deactivate()
        if nominate:  # before WaitOnPermit, once the driver knows whether the pod is parked
            await self._nominate_for_expectation(assumed, host)
        st = await fw.wait_on_permit(assumed) if wp is not None else None
        if turn[0] is not None:
            await self.driver.take(turn[0])
        if st is not None and not st.is_success():
            return single_node_status(st, host)
        self.queue.done(assumed_pi.uid)
        if not pre_bind_skipped:
            st = await fw.run_pre_bind_plugins(state, assumed, host, self._run_group)
            if st is not None and not st.is_success():
                return st
        if self.extenders:
            st = await self.bind(fw, state, assumed, host)
        else:  # ``bind`` without a binder extender, inline (one coroutine less a pod)
            try:
                # untimed, the Framework's RunBindPlugins is its runner's: called directly
                st = await (fw.binding if fw.calls.recorder is None else fw).run_bind_plugins(state, assumed, host)
            finally:  # (the time is read for an assumed pod's TTL only: Cache.finish_binding's deadline)
                self.cache.finish_binding(assumed_pi.uid, _now() if self.cache.ttl > 0 else 0.0)
        if st is not None and not st.is_success():
            return _bound(st)  # (a Skip is ``bind``'s Error)
        self.scheduled_count += 1
        if log.isEnabledFor(V2):
            log.log(V2, "Successfully bound pod to node pod=%s node=%s", json.dumps(assumed.key), json.dumps(host))
        md = assumed.metadata
        event = _event(assumed, "Normal", "Scheduled", "Binding", f"Successfully assigned {md.namespace}/{md.name} to {host}")
        try:  # ``record_event``, inline (one coroutine less a pod)
            await self.transport.record_event(event)
        except TransportError as e:
            log.warning("recording event %s for %s failed: %s", "Scheduled", assumed.key, e)
        if fw.binding.post_bind or fw.calls.recorder is not None:  # (an untimed run of none: nothing)
            await fw.run_post_bind_plugins(state, assumed, host)
        to_activate: PodsToActivate = state.read(PODS_TO_ACTIVATE_KEY)
        if to_activate:
            self.queue.activate(list(to_activate.values()))
            to_activate.clear()
        return None

    async def _nominate_for_expectation(self, pod: Pod, host: str) -> None:
        """``updatePod`` with the host as the nominated node (ModeOverride): written unless it is
        the pod's already; a failure is logged, the binding cycle goes on."""
        cached = self.cluster.pods.get(pod.metadata.uid) or pod
        if cached.status.nominated_node_name == host:
            return
        try:
            await self.transport.patch_pod_status(pod.metadata.namespace, pod.metadata.name, nominated_node_name=host)
        except TransportError as e:
            log.error("Failed to update the nominated node name in the binding cycle pod=%s nominatedNodeName=%s: %s",
                      json.dumps(pod.key), json.dumps(host), e)  # fmt: skip

    async def bind(self, fw: Framework, state: CycleState, pod: Pod, host: str) -> Status | None:
        try:
            for ext in self.extenders:  # ``extendersBinding``: a binder extender goes first
                if not ext.is_binder() or not ext.is_interested(pod):
                    continue
                try:
                    await ext.bind(pod, host)
                except Exception as e:
                    if ext.is_ignorable():
                        log.info("skipping extender %s in bind as it returned error: %s", ext.name, e)
                        continue
                    return Status.as_error(e)
                return None
            return _bound(await fw.run_bind_plugins(state, pod, host))
        finally:
            self.cache.finish_binding(pod.metadata.uid, _now())

    async def handle_binding_cycle_error(
        self,
        fw: Framework,
        state: CycleState,
        qpi: QueuedPodInfo,
        assumed_pi: PodInfo,
        result: ScheduleResult,
        status: Status,
        start: float,
    ) -> None:
        """``handleBindingCycleError``: Unreserve, forget, move others, then the failure handler."""
        assumed = assumed_pi.pod
        await fw.run_reserve_plugins_unreserve(state, assumed, result.suggested_host)
        forgot = False
        try:
            self.cache.forget_pod(assumed_pi.uid)
            forgot = True
        except Exception as e:
            log.error("scheduler cache ForgetPod failed: %s", e)
        if forgot and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, assumed, None)
        await self.handle_scheduling_failure(fw, qpi, status, CLEAR_NOMINATION, start)
        if forgot and status.is_rejected():
            uid = assumed_pi.uid
            self.queue.move_all_to_active_or_backoff(
                ev.ASSIGNED_POD_DELETE, assumed, None, lambda p: p.metadata.uid != uid
            )

    # --- recorded results (``--explain``) ---------------------------------------------------------
    def emit_results(self, pod: Pod, record: AttemptRecord, *, bound: bool) -> None:
        """The attempt is over: the recorder keeps its results, or (``patch``) a background
        task encodes them and writes them onto the pod."""
        assert self.recorder is not None
        if self.recorder.patch:
            self.spawn(self._write_results, pod, record, bound)
        else:
            self.recorder.finish(pod, record)

    async def _write_results(self, pod: Pod, record: AttemptRecord, bound: bool) -> None:
        assert self.recorder is not None
        current = self.cluster.pods.get(pod.metadata.uid) or pod
        annotations = self.recorder.encode(current, record, bound=bound)
        namespace, name = pod.metadata.namespace, pod.metadata.name
        try:
            await self.transport.patch_pod_annotations(namespace, name, annotations)
        except NotFoundError:
            pass
        except TransportError as e:
            log.warning("writing the scheduling results of %s/%s failed: %s", namespace, name, e)

    # --- failure ------------------------------------------------------------------------------
    async def handle_scheduling_failure(
        self,
        fw: Framework,
        qpi: QueuedPodInfo,
        status: Status,
        nominating: str | None,
        start: float,
    ) -> None:
        """``handleSchedulingFailure``: requeue, nominate, FailedScheduling event, status patch."""
        reason = REASON_UNSCHEDULABLE if status.is_rejected() else REASON_SCHEDULER_ERROR
        self.metrics.failed(status.is_rejected(), fw.profile_name, qpi.uid, start)
        pod = qpi.pod
        err = status.error
        if isinstance(err, FitError):
            qpi.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            qpi.pending_plugins = set(err.diagnosis.pending_plugins)
            if log.isEnabledFor(V2):
                log.log(V2, "Unable to schedule pod; no fit; waiting pod=%s err=%s", json.dumps(pod.key),
                        json.dumps(status.message))
        else:
            qpi.unschedulable_plugins = set()
            qpi.pending_plugins = set()
            if reason == REASON_SCHEDULER_ERROR:  # upstream's utilruntime.HandleError, rate-limited
                fw.calls.errors.failed(pod, status)
        cached = self.cluster.pods.get(qpi.uid)
        if cached is None or cached.spec.node_name:
            self.queue.done(qpi.uid)
        else:
            old = qpi.pod_info
            if cached.spec is old.pod.spec and cached.metadata.labels == old.pod.metadata.labels:
                qpi.pod_info = old.with_pod(cached)  # the same derived data: no recomputation
            else:
                qpi.pod_info = PodInfo(cached, old.rules)
            try:
                self.queue.add_unschedulable_if_not_present(qpi, self.queue.scheduling_cycle)
            except ValueError as e:
                log.error("%s", e)
        self.queue.nominator.add(qpi.pod_info, nominating)
        msg = status.message
        pod = qpi.pod
        condition = PodCondition(type="PodScheduled", status="False", reason=reason, message=msg)
        nnn: str | None = None
        if nominating is not None and pod.status.nominated_node_name != nominating:
            nnn = nominating
        item = (pod, truncate_message(msg), condition, nnn)
        if (
            getattr(self.transport, "instant_writes", False)
            and not self.driver.deterministic
            and pod.metadata.uid not in self._reports
        ):
            # a live scheduler whose writes complete within the call: made here, as upstream's
            # handleSchedulingFailure makes them, rather than by a task of their own (a
            # simulation keeps the task, whose turn orders its writes)
            await self._report_failure(*item)
        else:
            self._report(pod, item)

    def _report(self, pod: Pod, item: tuple[Any, ...]) -> None:
        """Queue a failure report (event + status patch); one writer per pod, in order."""
        uid = pod.metadata.uid
        pending = self._reports.get(uid)
        if pending is not None:
            pending.append(item)
            return
        self._reports[uid] = collections.deque([item])
        self.spawn(self._report_writer, uid)

    async def _report_writer(self, uid: str) -> None:
        pending = self._reports[uid]
        try:
            while pending:
                await self._report_failure(*pending.popleft())
        finally:
            del self._reports[uid]

    async def _report_failure(self, pod: Pod, note: str, condition: PodCondition, nnn: str | None) -> None:
        await self.record_event(pod, "Warning", "FailedScheduling", "Scheduling", note)
        cur = next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)
        unchanged = (
            cur is not None
            and cur.status == condition.status
            and cur.reason == condition.reason
            and cur.message == condition.message
        )
        if unchanged and nnn is None:
            return
        try:
            await self.transport.patch_pod_status(
                pod.metadata.namespace, pod.metadata.name, condition=condition, nominated_node_name=nnn
            )
        except NotFoundError:
            pass
        except TransportError as e:
            log.warning("updating pod %s status failed: %s", pod.key, e)

    async def record_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        try:
            await self.transport.record_event(_event(pod, type_, reason, action, note))
        except TransportError as e:
            log.warning("recording event %s for %s failed: %s", reason, pod.key, e)


def _bound(st: Status | None) -> Status | None:
    """RunBindPlugins' answer as the binding cycle takes it: a Skip (no plugin bound the pod)
    is an Error."""
    if st is not None and st.is_skip():
        return Status(Code.ERROR, "no bind plugin bound the pod", plugin=st.plugin)
    return st


def _event(pod: Pod, type_: str, reason: str, action: str, note: str) -> Event:
    """The Event the scheduler records about ``pod``."""
    md = pod.metadata
    return Event(
        metadata=ObjectMeta(namespace=md.namespace, name=f"{md.name}.{reason.lower()}"),
        reporting_controller="default-scheduler",
        reporting_instance="kubesched",
        action=action,
        reason=reason,
        type=type_,
        note=note,
        regarding=ObjectReference(api_version="v1", kind="Pod", namespace=md.namespace, name=md.name, uid=md.uid),
    )
