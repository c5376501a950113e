"""The informer and the event handlers (upstream ``eventhandlers.go``).

The informer lists then watches the transport and hands every event to its handlers, which
keeps the cluster state, the cache and the queue current, exactly as upstream's handlers do:

    Pod, assigned      ──► cache add / update / remove ──► queue: AssignedPodAdd/Update/Delete
    Pod, unassigned    ──► queue add / update / delete (pods of this scheduler's profiles only)
    Node               ──► cache ──► queue: NodeAdd, the node-update events (preCheckForNode
                           when queueing hints are off)
    PDB, PriorityClass ──► cluster state (read by plugins)
    PodGroup           ──► cluster state ──► queue: PodGroupChange
    Workload, PodGroup (scheduling.k8s.io: the Workload API)
                       ──► cluster state ──► queue: WorkloadAdd / PodGroupAdd / PodGroupUpdate;
                           a pod of a group also goes to the workload manager, and with the
                           GangScheduling gate an unscheduled pod's arrival is a cluster event
                           (UnscheduledPodAdd: v1.35 eventhandlers.go addPodToSchedulingQueue)
    PersistentVolume(Claim), StorageClass, CSINode, CSIDriver, CSIStorageCapacity
                       ──► cluster state ──► queue: <Resource><Add|Update|Delete> (upstream's
                           buildEvtResHandler; a StorageClass add only when WaitForFirstConsumer
                           while queueing hints are off)
    ResourceClaim, ResourceSlice, DeviceClass (DynamicResourceAllocation on)
                       ──► cluster state ──► queue: resource.k8s.io/<Kind><Add|Update|Delete>
    DeviceTaintRule    ──► cluster state (the DynamicResources plugin applies the rules to the
                           slices it lists) ──► while rules apply, a change that re-taints a
                           slice: queue: resource.k8s.io/ResourceSliceUpdate (the slice tracker's)

With a metrics recorder, each handler observes ``scheduler_event_handling_duration_seconds`` as
upstream's do (v1.31+ ``eventhandlers.go``, kubernetes#125929): the whole handling under the
event's label (``NodeAdd``, ``AssignedPodDelete``, ``UnschedulablePodAdd``, a storage kind's
``<Kind><Add|Update|Delete>``), an update once per update event it sends (the cache's update plus
that event's move: ``NodeUpdateNodeTaint``, ``AssignedPodUpdatePodLabel``), an assigned pod's
update and an unscheduled pod's also under ``AssignedPodUpdate`` / ``UnschedulablePodUpdate``;
a kind no plugin registered an event for has no handler upstream, and is not observed.  Times
are read from the scheduler's clock (``kubesched.clock.now``: virtual in a simulation, where a
handling takes 0 s).

A dropped watch is re-listed with backoff; objects the new listing no longer shows are handled
as deleted (:func:`_reconcile_relist`).  :class:`EventHandlers` is an object the
:class:`kubesched.Scheduler` holds (``handlers``), given what it keeps current when it is built.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from kubesched._errors import TransportError
from kubesched._transport import WatchEvent
from kubesched.api._dra import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from kubesched.api._objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
    ReplicaSet,
    StatefulSet,
    StorageClass,
)
from kubesched.api._resources import RequestRules
from kubesched.api._workload import SchedulingPodGroup, Workload
from kubesched.cache._workloadmanager import group_key
from kubesched.clock import now
from kubesched.runtime import _events as ev
from kubesched.runtime._nodeinfo import NodeInfo
from kubesched.scheduler._results import only_results_changed

if TYPE_CHECKING:
    from kubesched._transport import Transport
    from kubesched.cache._cache import Cache
    from kubesched.cache._clusterstate import ClusterState
    from kubesched.dra import ClassSelectors
    from kubesched.metrics._metrics import MetricsRecorder
    from kubesched.queue._scheduling_queue import SchedulingQueue
    from kubesched.runtime._framework import Framework
    from kubesched.scheduler._driver import Driver
    from kubesched.scheduler._results import ResultRecorder

log = logging.getLogger("kubesched")

TERMINAL_PHASES = ("Succeeded", "Failed")

# the storage kinds: their ClusterState table (keyed by name, or by (namespace, name) for the
# namespaced ones) and their event resource
_STORAGE: dict[type[Any], tuple[str, ev.Resource, bool]] = {
    PersistentVolume: ("pvs", ev.Resource.PERSISTENT_VOLUME, False),
    PersistentVolumeClaim: ("pvcs", ev.Resource.PERSISTENT_VOLUME_CLAIM, True),
    StorageClass: ("storage_classes", ev.Resource.STORAGE_CLASS, False),
    CSINode: ("csi_nodes", ev.Resource.CSI_NODE, False),
    CSIDriver: ("csi_drivers", ev.Resource.CSI_DRIVER, False),
    CSIStorageCapacity: ("csi_storage_capacities", ev.Resource.CSI_STORAGE_CAPACITY, True),
}
# the DRA kinds, the same way (their informers run while DynamicResourceAllocation is on)
_DRA: dict[type[Any], tuple[str, ev.Resource, bool]] = {
    ResourceClaim: ("resource_claims", ev.Resource.RESOURCE_CLAIM, True),
    ResourceSlice: ("resource_slices", ev.Resource.RESOURCE_SLICE, False),
    DeviceClass: ("device_classes", ev.Resource.DEVICE_CLASS, False),
}
_INFORMED = {**_STORAGE, **_DRA}
_EVENTS = {**ev.STORAGE_EVENTS, **ev.DRA_EVENTS}


class EventHandlers:
    """The informer of a :class:`kubesched.Scheduler`, which holds one: the watch, and the
    handlers that apply its events to the cluster state, the cache and the queue."""

    def __init__(
        self,
        *,
        transport: Transport,
        cluster: ClusterState,
        cache: Cache,
        queue: SchedulingQueue,
        profiles: dict[str, Framework],
        driver: Driver,
        touch: Callable[[], None],
        gang_scheduling: bool = False,
        dra: bool = True,
        device_taint_rules: bool = False,
        taint_rule_selectors: ClassSelectors | None = None,
        version: tuple[int, int] = (1, 36),
    ) -> None:
        """``touch``: tells the scheduler an activity ended (a batch of events handled).
        ``gang_scheduling``: the GangScheduling gate.
        ``dra``: the DynamicResourceAllocation gate (off: the DRA kinds are not watched).
        ``device_taint_rules``: DeviceTaintRules patch the slices (:func:`kubesched.dra.taint_rules_apply`),
        so a rule's change is a ResourceSlice update for the queue; ``taint_rule_selectors``:
        the 1.33-1.34 class and CEL selectors of a rule (:func:`kubesched.dra.legacy_selectors`).
        ``version``: the emulated Kubernetes minor (the metrics' event labels)."""
        self.gang_scheduling = gang_scheduling
        self.dra = dra
        self.device_taint_rules = device_taint_rules
        self.taint_rule_selectors = taint_rule_selectors
        self.transport = transport
        self.cluster = cluster
        self.cache = cache
        self.queue = queue
        self.profiles = profiles
        self.driver = driver
        self._touch = touch
        self.recorder: ResultRecorder | None = None  # the scheduler's (``Scheduler.recorder``)
        self.version = version
        self.metrics_recorder: MetricsRecorder | None = None  # Scheduler.set_metrics_recorder
        """event_handling_duration_seconds (from 1.31): None below 1.31 or without a recorder."""
        self.watch: Any = None
        self.relist_seen: set[tuple[str, Any]] | None = None  # while re-listing: what it showed
        self.synced = anyio.Event()

    # --- informer ---------------------------------------------------------------------------
    async def run(self) -> None:
        """List then watch; on a dropped watch, re-list with backoff and reconcile."""
        backoff = 1.0
        while True:
            self.watch = self.transport.watch()
            try:
                async for event in self.watch:
                    self._handle(event)
                    self.drain()
                    self._touch()
                    if event.type == "SYNCED":
                        backoff = 1.0
                        if self.driver.deterministic:
                            # from now on only the loop takes events, at fixed points; a
                            # delivery just wakes it
                            self.watch.on_push = self.driver.kick
                            return
                return
            except TransportError as e:
                log.warning("watch failed (%s); re-listing in %.0fs", e, backoff)
                self.relist_seen = set()  # not idle until the re-list is reconciled
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)

    def drain(self) -> None:
        """Handle the events already delivered (a batch counts as one activity)."""
        get = getattr(self.watch, "get_nowait", None)
        if get is None:
            return
        handled = False
        on_pod = self.on_pod
        while True:
            event = get()
            if event is None:
                if handled:
                    self._touch()
                return
            # a live pod's event outside a re-list: what ``_handle`` does with it, without its
            # call (twice a pod: its ADDED, its binding's MODIFIED)
            obj = event.obj
            if type(obj) is Pod and self.relist_seen is None and obj.status.phase not in TERMINAL_PHASES:
                on_pod(event.type, obj)
            else:
                self._handle(event)
            handled = True

    def _handle(self, event: WatchEvent) -> None:
        if event.type == "SYNCED":
            _reconcile_relist(self)
            self.synced.set()
            return
        obj = event.obj
        kind = type(obj)
        if self.relist_seen is not None:
            md = obj.metadata
            if kind is Pod:
                self.relist_seen.add(("Pod", md.uid))
            elif kind is Node:
                self.relist_seen.add(("Node", md.name))
            else:
                self.relist_seen.add((kind.__name__, (md.namespace, md.name)))
        if kind is Pod:
            type_ = event.type
            if obj.status.phase in TERMINAL_PHASES:
                # upstream's pod informer watches with the field selector
                # status.phase!=Succeeded,status.phase!=Failed: a pod that turns terminal
                # leaves it (a DELETED), one already terminal is never seen
                if obj.metadata.uid not in self.cluster.pods:
                    return
                type_ = "DELETED"
            self.on_pod(type_, obj)
        elif kind is Node:
            self.on_node(event.type, obj)
        elif kind is PodDisruptionBudget:
            key = (obj.metadata.namespace, obj.metadata.name)
            if event.type == "DELETED":
                self.cluster.pdbs.pop(key, None)
            else:
                self.cluster.pdbs[key] = obj
        elif kind is PriorityClass:
            if event.type == "DELETED":
                self.cluster.priority_classes.pop(obj.metadata.name, None)
            else:
                self.cluster.priority_classes[obj.metadata.name] = obj
        elif kind is PodGroup:
            key = (obj.metadata.namespace, obj.metadata.name)
            old = self.cluster.pod_groups.get(key)
            if event.type == "DELETED":
                self.cluster.pod_groups.pop(key, None)
                return
            self.cluster.pod_groups[key] = obj
            action = ev.ActionType.ADD if old is None else ev.ActionType.UPDATE_POD_OTHER
            self.queue.move_all_to_active_or_backoff(
                ev.ClusterEvent(ev.Resource.POD_GROUP, action, "PodGroupChange"), old, obj
            )
        elif kind is Workload or kind is SchedulingPodGroup:
            self._on_workload_api(kind, event.type, obj)
        elif kind in _STORAGE:
            self._on_storage(kind, event.type, obj)
        elif kind in _DRA:
            if self.dra:
                self._on_storage(kind, event.type, obj)
        elif kind is DeviceTaintRule:
            if self.dra:
                old_rule = self.cluster.device_taint_rules.get(obj.metadata.name)
                if event.type == "DELETED":
                    self.cluster.device_taint_rules.pop(obj.metadata.name, None)
                else:
                    self.cluster.device_taint_rules[obj.metadata.name] = obj
                if self.device_taint_rules:
                    self._on_device_taint_rule(old_rule, None if event.type == "DELETED" else obj)
        elif kind is ReplicaSet or kind is StatefulSet:
            # PodTopologySpread's default constraints take the selector of a pod's controller
            # (``helper.DefaultSelector``); no pod moves for them, as upstream registers none
            key = (obj.metadata.namespace, obj.metadata.name)
            table = self.cluster.replica_sets if kind is ReplicaSet else self.cluster.stateful_sets
            if event.type == "DELETED":
                table.pop(key, None)
            else:
                table[key] = obj

    def _on_device_taint_rule(self, old: DeviceTaintRule | None, new: DeviceTaintRule | None) -> None:
        """The slice tracker (resourceslice/tracker, v0.35.4): a rule's change re-patches the
        slices it selects (before or after) and each one is a ResourceSlice update for the
        queue; kubesched moves the pods once for them all (the event has no queueing hint)."""
        from kubesched.dra import apply_rules

        slices = list(self.cluster.resource_slices.values())
        changed = [
            s for s in slices
            if any(r is not None and apply_rules(s, [r], self.taint_rule_selectors) is not s for r in (old, new))
        ]  # fmt: skip
        if changed and (old is None or new is None or old.spec != new.spec):
            _move_observed(self, _EVENTS[(ev.Resource.RESOURCE_SLICE, "MODIFIED")], changed[0], changed[0])

    def _on_workload_api(self, kind: type[Any], type_: str, obj: Any) -> None:
        """A Workload or a Workload API PodGroup: its table, then the queue's event (the
        GangScheduling plugin registers WorkloadAdd in 1.35, PodGroupAdd / PodGroupUpdate in
        1.36)."""
        key = (obj.metadata.namespace, obj.metadata.name)
        table: dict[Any, Any] = self.cluster.workloads if kind is Workload else self.cluster.scheduling_pod_groups
        old = table.get(key)
        if type_ == "DELETED":
            table.pop(key, None)
            return
        table[key] = obj
        resource = ev.Resource.WORKLOAD if kind is Workload else ev.Resource.POD_GROUP
        action = ev.ActionType.ADD if old is None else ev.ActionType.UPDATE
        label = f"{resource.value}{'Add' if old is None else 'Update'}"
        _move_observed(self, ev.ClusterEvent(resource, action, label), old, obj)

    def _on_storage(self, kind: type[Any], type_: str, obj: Any) -> None:
        """A storage (or DRA) object's informer: its table, then upstream's ``buildEvtResHandler`` —
        ``MoveAllToActiveOrBackoffQueue`` with the kind's Add (nil, new), Update (old, new) or
        Delete (old, nil) event; the queue moves only the pods a plugin that registered it
        rejected (and drops an event none registered)."""
        attr, resource, namespaced = _INFORMED[kind]
        table: dict[Any, Any] = getattr(self.cluster, attr)
        md = obj.metadata
        key = (md.namespace, md.name) if namespaced else md.name
        old = table.get(key)
        if type_ == "DELETED":
            table.pop(key, None)
            _move_observed(self, _EVENTS[(resource, "DELETED")], obj, None)
            return
        table[key] = obj
        if old is None:
            if (
                kind is StorageClass
                and not self.queue.queueing_hints
                and obj.volume_binding_mode != "WaitForFirstConsumer"
            ):
                # hints off: only a late-binding class can let a pod with an unbound immediate
                # claim pass (upstream's comment on CheckVolumeBindingPred); the handling is
                # observed all the same (its deferred observation)
                rec = _recording(self)
                event = _EVENTS[(resource, "ADDED")]
                if rec is not None and self.queue.is_event_of_interest(event):
                    rec.event_handled(ev.metric_label(event, self.version), 0.0)
                return
            _move_observed(self, _EVENTS[(resource, "ADDED")], None, obj)
        else:
            _move_observed(self, _EVENTS[(resource, "MODIFIED")], old, obj)

    def _responsible(self, pod: Pod) -> bool:
        return pod.spec.scheduler_name in self.profiles

    def on_node(self, type_: str, node: Node) -> None:
        rec = _recording(self)
        start = now() if rec is not None else 0.0
        name = node.metadata.name
        old = self.cluster.nodes.get(name)
        if type_ == "DELETED":
            self.cluster.nodes.pop(name, None)
            self.cache.remove_node(name)
            if rec is not None:
                _handled(self, rec, ev.NODE_DELETE, start)
            return
        self.cluster.nodes[name] = node
        if old is None:
            self.cache.add_node(node)
        else:
            self.cache.update_node(node)
        # preCheckForNode: only with queueing hints off (upstream skips it when they are on)
        pre_check = None
        if not self.queue.queueing_hints:
            pre_check = _pre_check_for_node(self.cache.node_infos[name], self.cache.rules)
        if old is None:
            self.queue.move_all_to_active_or_backoff(ev.NODE_ADD, None, node, pre_check)
            if rec is not None:
                _handled(self, rec, ev.NODE_ADD, start)
        else:
            # updateNodeInCache: each event observed with the cache's update plus its own move
            updating = now() - start if rec is not None else 0.0
            for e in ev.node_update_events(old, node):
                moving = now() if rec is not None else 0.0
                self.queue.move_all_to_active_or_backoff(e, old, node, pre_check)
                if rec is not None:
                    rec.event_handled(ev.metric_label(e, self.version), updating + now() - moving)

    def on_pod(self, type_: str, pod: Pod) -> None:
        rec = self.metrics_recorder  # ``_recording(self)``, inlined (twice a pod)
        if rec is not None and self.version < (1, 31):
            rec = None
        start = now() if rec is not None else 0.0
        uid = pod.metadata.uid
        old = self.cluster.pods.get(uid)
        if self.recorder is not None:
            if type_ == "DELETED":
                self.recorder.forget(uid)
            elif old is not None and only_results_changed(old, pod):
                self.cluster.pods[uid] = pod  # our own result annotations: nothing to requeue
                return
        spec = pod.spec
        if spec.workload_ref is not None or spec.scheduling_group is not None:
            self._on_group_pod(type_, old, pod)
        if type_ == "DELETED":
            self.cluster.pods.pop(uid, None)
            self.cluster.pod_keys.pop((pod.metadata.namespace, pod.metadata.name), None)
            if pod.spec.node_name or (old is not None and old.spec.node_name):
                self._reject_waiting(uid)
                self.cache.remove_pod(uid)
                self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
                if rec is not None:
                    _handled(self, rec, ev.ASSIGNED_POD_DELETE, start)
            else:
                rejected = self._reject_waiting(uid)
                self.queue.delete(pod)
                if rejected:
                    self.queue.move_all_to_active_or_backoff(ev.ASSIGNED_POD_DELETE, pod, None)
                else:
                    self.queue.move_all_to_active_or_backoff(ev.UNSCHEDULED_POD_DELETE, pod, None)
                if rec is not None and self._responsible(pod):
                    _handled(self, rec, ev.UNSCHEDULED_POD_DELETE, start)
            return
        self.cluster.pods[uid] = pod
        self.cluster.pod_keys[(pod.metadata.namespace, pod.metadata.name)] = uid
        if pod.spec.node_name:
            if old is not None and not old.spec.node_name:
                # it left the queue: scheduled (by us, confirmed) or bound by someone else
                self.queue.delete(old)
                if rec is not None and self._responsible(old):
                    # upstream's pod handlers see the queue's pod deleted, then an assigned add
                    _handled(self, rec, ev.UNSCHEDULED_POD_DELETE, start)
                    start = now()
            if old is None or not old.spec.node_name:
                self.cache.add_pod(pod)
                self.queue.assigned_pod_added(pod)
                if rec is not None:
                    _handled(self, rec, ev.ASSIGNED_POD_ADD, start)
            else:
                self.cache.update_pod(pod)
                events = ev.pod_update_events(old, pod, ev.Resource.ASSIGNED_POD)
                if pod.metadata.deletion_timestamp and not old.metadata.deletion_timestamp:
                    events = [ev.ClusterEvent(ev.Resource.ASSIGNED_POD, ev.ActionType.UPDATE_POD_SCALE_DOWN)]
                if rec is None:
                    self.queue.assigned_pod_updated(old, pod, events)
                    return
                # updateAssignedPodInCache: each event with the cache's update plus its move,
                # and the whole handling as AssignedPodUpdate
                updating = now() - start
                for e in events:
                    moving = now()
                    self.queue.assigned_pod_updated(old, pod, [e])
                    rec.event_handled(ev.metric_label(e, self.version), updating + now() - moving)
                _handled(self, rec, ev.ASSIGNED_POD_UPDATE, start)
            return
        if spec.scheduler_name not in self.profiles:  # ``_responsible``, inlined
            return
        if old is None:
            if not pod.metadata.deletion_timestamp:
                self.queue.add(pod)
                if self.gang_scheduling:
                    # v1.35 eventhandlers.go addPodToSchedulingQueue: with GangScheduling, the new
                    # pod may complete a gang whose members wait at PreEnqueue
                    self.queue.move_all_to_active_or_backoff(ev.UNSCHEDULED_POD_ADD, None, pod)
            if rec is not None:
                _handled(self, rec, ev.UNSCHEDULED_POD_ADD, start)
            return
        if not self.cache.is_assumed(uid):
            self.queue.update(old, pod)
        if rec is not None and old.metadata.resource_version != pod.metadata.resource_version:
            # updatePodInSchedulingQueue: UnschedulablePodUpdate and each update event's label
            # (deferred from the start, so each the whole handling); identical versions bypassed
            _handled(self, rec, ev.UNSCHEDULED_POD_UPDATE, start)
            whole = ev.metric_label(ev.UNSCHEDULED_POD_UPDATE, self.version)
            for e in ev.pod_update_events(old, pod, ev.Resource.UNSCHEDULED_POD):
                label = ev.metric_label(e, self.version)
                if label != whole:
                    rec.event_handled(label, now() - start)

    def _on_group_pod(self, type_: str, old: Pod | None, pod: Pod) -> None:
        """The workload manager's handlers (upstream's AddPod / UpdatePod / DeletePod)."""
        key = group_key(pod)
        if key is None:
            return
        manager = self.cluster.workload_manager
        if type_ == "DELETED":
            manager.delete_pod(key, pod.metadata.uid)
        elif old is None:
            manager.add_pod(key, pod)
        else:
            manager.update_pod(key, old, pod)

    def _reject_waiting(self, uid: str) -> bool:
        return any(fw.reject_waiting_pod(uid) for fw in self.profiles.values())


def _reconcile_relist(handlers: EventHandlers) -> None:
    """After a re-list: objects the new listing did not show were deleted meanwhile."""
    seen = handlers.relist_seen
    handlers.relist_seen = None
    if seen is None:
        return
    for uid, pod in list(handlers.cluster.pods.items()):
        if ("Pod", uid) not in seen:
            handlers.on_pod("DELETED", pod)
    for name, node in list(handlers.cluster.nodes.items()):
        if ("Node", name) not in seen:
            handlers.on_node("DELETED", node)
    for table, kind in (
        (handlers.cluster.pdbs, "PodDisruptionBudget"),
        (handlers.cluster.pod_groups, "PodGroup"),
        (handlers.cluster.workloads, "Workload"),
        (handlers.cluster.scheduling_pod_groups, "SchedulingPodGroup"),
        (handlers.cluster.replica_sets, "ReplicaSet"),
        (handlers.cluster.stateful_sets, "StatefulSet"),
    ):
        for key in list(table):
            if (kind, key) not in seen:
                del table[key]
    for cls, (attr, _, namespaced) in _INFORMED.items():
        storage: dict[Any, Any] = getattr(handlers.cluster, attr)
        for key, obj in list(storage.items()):
            if (cls.__name__, key if namespaced else ("", key)) not in seen:
                handlers._on_storage(cls, "DELETED", obj)
    for name in list(handlers.cluster.device_taint_rules):
        if ("DeviceTaintRule", ("", name)) not in seen:
            del handlers.cluster.device_taint_rules[name]


# --- event_handling_duration_seconds ------------------------------------------------------------
def _recording(h: EventHandlers) -> MetricsRecorder | None:
    """The recorder to observe the handling into (none before 1.31, the metric's release)."""
    rec = h.metrics_recorder
    return rec if rec is not None and h.version >= (1, 31) else None


def _handled(h: EventHandlers, rec: MetricsRecorder, event: ev.ClusterEvent, start: float) -> None:
    """Upstream's ``defer EventHandlingLatency.WithLabelValues(evt.Label()).Observe(...)``."""
    rec.event_handled(ev.metric_label(event, h.version), now() - start)


def _move_observed(h: EventHandlers, event: ev.ClusterEvent, old: Any, new: Any) -> None:
    """``buildEvtResHandler``'s handler: the queue's move, observed under the event's label
    when some plugin registered the event (upstream has no handler otherwise)."""
    rec = _recording(h)
    start = now() if rec is not None else 0.0
    h.queue.move_all_to_active_or_backoff(event, old, new)
    if rec is not None and h.queue.is_event_of_interest(event):
        _handled(h, rec, event, start)

def _pre_check_for_node(ni: NodeInfo, rules: RequestRules) -> Callable[[Pod], bool]:
    """``preCheckForNode`` (legacy queue, hints off): an unschedulable pod is moved on a node
    add / update only if it passes ``AdmissionCheck`` on the cache's NodeInfo (resources fit,
    required node affinity / nodeSelector, nodeName, host ports) and tolerates the node's
    NoSchedule / NoExecute taints.  Preemption is not considered (as upstream)."""
    from kubesched.api._helpers import (
        RequiredNodeAffinity,
        do_not_schedule_taints_filter,
        find_matching_untolerated_taint,
    )
    from kubesched.plugins import nodename, nodeports
    from kubesched.plugins.noderesources import fit

    node = ni.node
    assert node is not None

    def check(pod: Pod) -> bool:
        if fit.fits(pod, ni, rules=rules):
            return False
        if not RequiredNodeAffinity(pod).match(node):
            return False
        if not nodename.fits(pod, node):
            return False
        if not nodeports.fits(pod, ni):
            return False
        taint = find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        )
        return taint is None

    return check

