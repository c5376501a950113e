"""What the scheduler's informers hold: every object the transport reported, by identity.

Upstream the informers' listers are the store plugins read (``SharedLister``, the PDB and
PriorityClass listers); here :class:`ClusterState` is that store, fed by the event handlers
(``_eventhandlers``), and :class:`PodStore` its pods with label indexes for the plugins that
look pods up by label (gangs, pod groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, overload

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
from kubesched.api._workload import SchedulingPodGroup, Workload
from kubesched.cache._workloadmanager import WorkloadManager

_T = TypeVar("_T")
_MISSING: Any = object()


class PodStore(dict[str, Pod]):
    """The informer's pods by uid, with indexes by label value for the label keys asked for.

    ``with_label(namespace, key, value)`` lists the pods carrying ``key=value`` in the order a
    scan of the store would find them (the order of their uid's first insertion).  Every
    mutating dict method keeps the indexes current; a Pod must not be changed in place while
    stored (a new version is put instead, as the informers do).
    """

    def __init__(self) -> None:
        super().__init__()
        self._seq: dict[str, int] = {}  # uid -> its insertion number, the store's order
        self._next = 0
        # label key -> (namespace, value) -> {uid: pod}; and label key -> uid -> its bucket
        self._index: dict[str, dict[tuple[str, str], dict[str, Pod]]] = {}
        self._where: dict[str, dict[str, tuple[str, str]]] = {}
        self._unsorted: set[tuple[str, str, str]] = set()  # buckets out of store order
        # label key -> value -> the namespaces that have a bucket for it (with_label_any)
        self._spaces: dict[str, dict[str, dict[str, None]]] = {}

    # --- the index ------------------------------------------------------------------------
    def index_label(self, key: str) -> None:
        """Index the pods by the value of label ``key`` (idempotent)."""
        if key in self._index:
            return
        self._index[key] = {}
        self._where[key] = {}
        self._spaces[key] = {}
        for uid, pod in self.items():
            self._index_put(key, uid, pod)

    def with_label(self, namespace: str, key: str, value: str) -> list[Pod]:
        """The pods in ``namespace`` with label ``key`` equal to ``value``, in store order."""
        self.index_label(key)
        bucket = self._index[key].get((namespace, value))
        if not bucket:
            return []
        if (key, namespace, value) in self._unsorted:
            self._unsorted.discard((key, namespace, value))
            seq = self._seq
            ordered = sorted(bucket.items(), key=lambda kv: seq[kv[0]])
            bucket.clear()
            bucket.update(ordered)
        return list(bucket.values())

    def with_label_any(self, key: str, value: str) -> list[Pod]:
        """The pods of every namespace with label ``key`` equal to ``value``, in store order."""
        self.index_label(key)
        spaces = self._spaces[key].get(value)
        if not spaces:
            return []
        if len(spaces) == 1:
            return self.with_label(next(iter(spaces)), key, value)
        seq = self._seq
        pods = [p for ns in spaces for p in self._index[key][(ns, value)].values()]
        pods.sort(key=lambda p: seq[p.metadata.uid])
        return pods

    def _index_put(self, key: str, uid: str, pod: Pod) -> None:
        value = pod.metadata.labels.get(key)
        where = self._where[key]
        at = (pod.metadata.namespace, value) if value is not None else None
        prev = where.get(uid)
        index = self._index[key]
        if prev == at:
            if at is not None:
                index[at][uid] = pod  # same bucket: the position is kept
            return
        if prev is not None:
            self._index_drop(key, uid, prev)
        if at is None:
            return
        where[uid] = at
        bucket = index.get(at)
        if bucket is None:
            bucket = index[at] = {}
            self._spaces[key].setdefault(at[1], {})[at[0]] = None
        if bucket and self._seq[next(reversed(bucket))] > self._seq[uid]:
            self._unsorted.add((key, *at))
        bucket[uid] = pod

    def _index_drop(self, key: str, uid: str, at: tuple[str, str]) -> None:
        del self._where[key][uid]
        index = self._index[key]
        bucket = index[at]
        del bucket[uid]
        if not bucket:
            del index[at]
            self._unsorted.discard((key, *at))
            spaces = self._spaces[key][at[1]]
            del spaces[at[0]]
            if not spaces:
                del self._spaces[key][at[1]]

    def _forget(self, uid: str) -> None:
        del self._seq[uid]
        for key, where in self._where.items():
            at = where.get(uid)
            if at is not None:
                self._index_drop(key, uid, at)

    # --- dict -----------------------------------------------------------------------------
    def __setitem__(self, uid: str, pod: Pod) -> None:
        if uid not in self._seq:
            self._seq[uid] = self._next
            self._next += 1
        dict.__setitem__(self, uid, pod)  # (super() costs an object a call)
        for key in self._index:
            self._index_put(key, uid, pod)

    def __delitem__(self, uid: str) -> None:
        super().__delitem__(uid)
        self._forget(uid)

    @overload
    def pop(self, uid: str, /) -> Pod: ...
    @overload
    def pop(self, uid: str, default: Pod, /) -> Pod: ...
    @overload
    def pop(self, uid: str, default: _T, /) -> Pod | _T: ...
    def pop(self, uid: str, default: Any = _MISSING, /) -> Any:
        if uid in self:
            pod = super().pop(uid)
            self._forget(uid)
            return pod
        if default is _MISSING:
            raise KeyError(uid)
        return default

    def popitem(self) -> tuple[str, Pod]:
        uid, pod = super().popitem()
        self._forget(uid)
        return uid, pod

    def clear(self) -> None:
        super().clear()
        self._seq.clear()
        self._unsorted.clear()
        for key in self._index:
            self._index[key] = {}
            self._where[key] = {}
            self._spaces[key] = {}

    def setdefault(self, uid: str, default: Pod) -> Pod:  # type: ignore[override]
        if uid not in self:
            self[uid] = default
        return self[uid]

    def update(self, *args: Any, **kwargs: Pod) -> None:  # type: ignore[override]
        for uid, pod in dict(*args, **kwargs).items():
            self[uid] = pod

    def __ior__(self, other: Any) -> PodStore:  # type: ignore[override,misc]
        self.update(other)
        return self


class ChangeLog(dict):  # type: ignore[type-arg]
    """A dict that logs the keys it sets or deletes (``log``), so a reader can follow what
    changed since it last looked (DynamicResources keeps the devices in use this way instead of
    walking every claim per pod).  ``epoch`` moves when the log is cut short: a reader at an
    older epoch starts over."""

    __slots__ = ("epoch", "log")
    _MAX_LOG = 1 << 16

    def __init__(self) -> None:
        super().__init__()
        self.log: list[Any] = []
        self.epoch = 0

    def _note(self, key: Any) -> None:
        if len(self.log) >= self._MAX_LOG:
            self.log = []
            self.epoch += 1
        self.log.append(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._note(key)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        self._note(key)

    def pop(self, key: Any, *default: Any) -> Any:
        self._note(key)
        return super().pop(key, *default)

    def clear(self) -> None:
        super().clear()
        self.log = []
        self.epoch += 1

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple[Any, Any]:
        item = super().popitem()
        self._note(item[0])
        return item


class ClusterState:
    """What the informers hold: every object the transport reported, by identity."""

    def __init__(self) -> None:
        self.pods: PodStore = PodStore()
        self.pod_keys: dict[tuple[str, str], str] = {}
        self.nodes: dict[str, Node] = {}
        self.pdbs: dict[tuple[str, str], PodDisruptionBudget] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.pod_groups: dict[tuple[str, str], PodGroup] = {}
        # the Workload API (scheduling.k8s.io v1alpha1 / v1alpha2) and its pod groups' runtime
        # state (kubesched.cache._workloadmanager)
        self.workloads: dict[tuple[str, str], Workload] = {}
        self.scheduling_pod_groups: dict[tuple[str, str], SchedulingPodGroup] = {}
        self.workload_manager = WorkloadManager()
        # the workloads whose selectors PodTopologySpread's default constraints use
        self.replica_sets: dict[tuple[str, str], ReplicaSet] = {}
        self.stateful_sets: dict[tuple[str, str], StatefulSet] = {}
        # storage: the informers the volume plugins read (VolumeBinding, VolumeZone, ...)
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[tuple[str, str], PersistentVolumeClaim] = {}
        self.storage_classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.csi_storage_capacities: dict[tuple[str, str], CSIStorageCapacity] = {}
        # DRA (resource.k8s.io), while DynamicResourceAllocation is on: what the
        # DynamicResources plugin reads (claims by namespace/name, slices, classes, taint rules)
        self.resource_claims: dict[tuple[str, str], ResourceClaim] = ChangeLog()
        self.resource_slices: dict[str, ResourceSlice] = ChangeLog()
        self.device_classes: dict[str, DeviceClass] = ChangeLog()
        self.device_taint_rules: dict[str, DeviceTaintRule] = ChangeLog()
        # namespace -> its labels, for the namespaces whose labels are known (no informer
        # lists Namespaces: InterPodAffinity's namespaceSelector falls back to the name label)
        self.namespace_labels: dict[str, Mapping[str, str]] = {}

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        uid = self.pod_keys.get((namespace, name))
        return self.pods.get(uid) if uid else None

    def pod_by_uid(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def list_pods(self, namespace: str | None = None) -> list[Pod]:
        if namespace is None:
            return list(self.pods.values())
        return [p for p in self.pods.values() if p.metadata.namespace == namespace]

    def index_label(self, key: str) -> None:
        """Keep an index of the pods by label ``key`` for :meth:`pods_with_label`."""
        self.pods.index_label(key)

    def pods_with_label(self, namespace: str | None, key: str, value: str) -> list[Pod]:
        """The pods in ``namespace`` (every namespace for None) labelled ``key=value``, in
        :attr:`pods` order (indexed: the first call for a key not yet indexed builds its
        index)."""
        if namespace is None:
            return self.pods.with_label_any(key, value)
        return self.pods.with_label(namespace, key, value)

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.pdbs.values())

    def get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.pod_groups.get((namespace, name))

    def get_workload(self, namespace: str, name: str) -> Workload | None:
        return self.workloads.get((namespace, name))

    def get_scheduling_pod_group(self, namespace: str, name: str) -> SchedulingPodGroup | None:
        """The Workload API's PodGroup (``scheduling.k8s.io/v1alpha2``) ``namespace/name``."""
        return self.scheduling_pod_groups.get((namespace, name))

    def get_pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get((namespace, name))

    def get_storage_class(self, name: str) -> StorageClass | None:
        return self.storage_classes.get(name)

    def get_csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def get_csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    # --- DRA listers (upstream's ResourceClaim, ResourceSlice, DeviceClass listers) -------------

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.resource_claims.get((namespace, name))

    def list_resource_claims(self) -> list[ResourceClaim]:
        return list(self.resource_claims.values())

    def list_resource_slices(self) -> list[ResourceSlice]:
        """The slices as the informer has them (DeviceTaintRules not applied: the plugin's
        slice tracker does that, ``ListWithDeviceTaintRules``)."""
        return list(self.resource_slices.values())

    def get_device_class(self, name: str) -> DeviceClass | None:
        return self.device_classes.get(name)

    def list_device_classes(self) -> list[DeviceClass]:
        return list(self.device_classes.values())

    def list_device_taint_rules(self) -> list[DeviceTaintRule]:
        return list(self.device_taint_rules.values())


__all__ = ["ClusterState", "PodStore"]
