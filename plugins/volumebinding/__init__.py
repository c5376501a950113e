"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, bindable or provisionable on the
node, and are bound before the pod is (upstream ``plugins/volumebinding``, v1.33/v1.34).

The flow (``binder`` has the stages, ``assume_cache`` the in-memory bindings)::

    PreFilter   Skip for a pod without claims (so Filter never runs for it);
                UnschedulableAndUnresolvable for a missing claim ('persistentvolumeclaim "x" not
                found'; for a generic ephemeral one 'waiting for ephemeral volume controller to
                create the persistentvolumeclaim "x"'), a lost one, one being deleted, an
                ephemeral one the pod does not own, and "pod has unbound immediate
                PersistentVolumeClaims"; the claims by state go into the CycleState
    Filter      per node (all UnschedulableAndUnresolvable): "node(s) didn't match
                PersistentVolume's node affinity" (a bound claim's PV; before 1.33 "node(s)
                had volume node affinity conflict"), "node(s) didn't find
                available persistent volumes to bind", "node(s) did not have enough free storage"
                (CSIStorageCapacity), "node(s) unavailable due to one or more pvc(s) bound to
                non-existent pv(s)"
    PreScore    Skip unless StorageCapacityScoring (alpha, off) is on
    Score       the storage classes' utilization through the args' shape (scorer)
    Reserve     assume the node's bindings (the next pod sees the PVs taken); Unreserve reverts
    PreBind     PUT the PVs' claimRef and the claims' selected-node annotation, then wait (1 s
                polls, bindTimeoutSeconds) until the PV controller has bound every claim:
                "binding volumes: ..." errors; nothing to do when every claim was bound
    Events      StorageClass, PersistentVolumeClaim, PersistentVolume, Node, CSINode, CSIDriver,
                CSIStorageCapacity, with upstream's queueing hints

Args (``VolumeBindingArgs``, see ``args``): ``bindTimeoutSeconds`` (default 600) and ``shape``
(only with StorageCapacityScoring).
"""

from __future__ import annotations

from .args import DEFAULT_BIND_TIMEOUT_SECONDS, DEFAULT_SHAPE, VolumeBindingArgs, parse_args
from .binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NODE_CONFLICT_BEFORE_1_33,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BindingInfo,
    DynamicProvision,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
)
from .plugin import ERR_UNBOUND_IMMEDIATE, NAME, STATE_KEY, StateData, VolumeBinding, new

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "DEFAULT_SHAPE",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NODE_CONFLICT_BEFORE_1_33",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "STATE_KEY",
    "BindingInfo",
    "DynamicProvision",
    "PodVolumeClaims",
    "PodVolumes",
    "StateData",
    "VolumeBinder",
    "VolumeBinding",
    "VolumeBindingArgs",
    "new",
    "parse_args",
]
