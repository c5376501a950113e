"""VolumeBinding's queueing hints, EventsToRegister and args (k/k
``plugins/volumebinding/volume_binding_test.go``: TestIsSchedulableAfterCSINodeChange,
TestIsSchedulableAfterPersistentVolumeClaimChange, TestIsSchedulableAfterStorageClassChange,
TestIsSchedulableAfterCSIStorageCapacityChange, TestIsSchedulableAfterCSIDriverChange;
``validation_pluginargs_test.go``: TestValidateVolumeBindingArgs; ``defaults.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from volumebinding_fixtures import (
    capacity,
    csi_driver,
    csi_node,
    fake_handle,
    make_pod,
    make_pvc,
    replace,
    storage_class,
)

from kubesched._errors import ConfigError
from kubesched.plugins import IN_TREE, volumebinding
from kubesched.runtime._events import ActionType, ClusterEvent, QueueingHint
from kubesched.runtime._events import Resource as R
from kubesched.runtime._status import Code

U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
HOST = "kubernetes.io/hostname"
GATE = "StorageCapacityScoring"


# --- queueing hints -----------------------------------------------------------------------------

Q, SKIPQ = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
POD_A = make_pod("pod-a").obj()


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            object(),
            object(),
            Q,
            id="TestIsSchedulableAfterCSINodeChange/unexpected objects are passed",
        ),
        pytest.param(
            None,
            csi_node("csinode-a"),
            Q,
            id="TestIsSchedulableAfterCSINodeChange/CSINode is newly created",
        ),
        pytest.param(
            csi_node("csinode-a", "test1"),
            csi_node("csinode-a", "test1, test2"),
            Q,
            id="TestIsSchedulableAfterCSINodeChange/CSINode's migrated-plugins annotations is added",
        ),
        pytest.param(
            csi_node("csinode-a", "test1"),
            csi_node("csinode-a", "test2"),
            Q,
            id="TestIsSchedulableAfterCSINodeChange/CSINode's migrated-plugins annotation is updated",
        ),
        pytest.param(
            csi_node("csinode-a", "test1"),
            csi_node("csinode-a", "test1"),
            SKIPQ,
            id="TestIsSchedulableAfterCSINodeChange/CSINode is updated but migrated-plugins annotation gets unchanged",
        ),
    ],
)
def test_is_schedulable_after_csi_node_change(old: Any, new: Any, want: QueueingHint) -> None:
    pl = volumebinding.new(None, fake_handle())
    assert pl.is_schedulable_after_csi_node_change(POD_A, old, new) == want


def _pvc(name: str, ns: str = "default") -> Any:
    p = make_pvc(name, "").obj()
    return replace(p, metadata=replace(p.metadata, namespace=ns))


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            make_pod("pod-a").empty_dir().obj(),
            _pvc("pvc-b"),
            _pvc("pvc-b"),
            SKIPQ,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/pod has no pvc or ephemeral volumes",
        ),
        pytest.param(
            make_pod("pod-a").namespace("ns-a").pvc_volume("pvc-a").pvc_volume("pvc-b").obj(),
            None,
            _pvc("pvc-b"),
            SKIPQ,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/pvc with the same name as the one used by the pod "
            "in a different namespace is modified",
        ),
        pytest.param(
            make_pod("pod-a").pvc_volume("pvc-a").pvc_volume("pvc-c").obj(),
            _pvc("pvc-b"),
            _pvc("pvc-b"),
            SKIPQ,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/pod has no pvc that is being modified",
        ),
        pytest.param(
            make_pod("pod-a").ephemeral("ephemeral-a").ephemeral("ephemeral-c").obj(),
            _pvc("pod-a-ephemeral-b"),
            _pvc("pod-a-ephemeral-b"),
            SKIPQ,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/pod has no generic ephemeral volume that is being "
            "modified",
        ),
        pytest.param(
            make_pod("pod-a").pvc_volume("pvc-a").pvc_volume("pvc-b").obj(),
            _pvc("pvc-b"),
            _pvc("pvc-b"),
            Q,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/pod has the pvc that is being modified",
        ),
        pytest.param(
            make_pod("pod-a").ephemeral("ephemeral-a").ephemeral("ephemeral-b").obj(),
            _pvc("pod-a-ephemeral-b"),
            _pvc("pod-a-ephemeral-b"),
            Q,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/pod has the generic ephemeral volume that is being "
            "modified",
        ),
        pytest.param(
            POD_A,
            object(),
            object(),
            Q,
            id="TestIsSchedulableAfterPersistentVolumeClaimChange/type conversion error",
        ),
    ],
)
def test_is_schedulable_after_pvc_change(pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    pl = volumebinding.new(None, fake_handle())
    assert pl.is_schedulable_after_persistent_volume_claim_change(pod, old, new) == want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            storage_class("sc-a"),
            Q,
            id="TestIsSchedulableAfterStorageClassChange/When a new StorageClass is created, it returns Queue",
        ),
        pytest.param(
            storage_class("sc-a"),
            storage_class("sc-a", topology={HOST: ["node-a"]}),
            Q,
            id="TestIsSchedulableAfterStorageClassChange/When the AllowedTopologies are changed, it returns Queue",
        ),
        pytest.param(
            storage_class("sc-a"),
            storage_class("sc-a"),
            SKIPQ,
            id="TestIsSchedulableAfterStorageClassChange/When there are no changes to the StorageClass, it returns "
            "QueueSkip",
        ),
        pytest.param(
            object(),
            object(),
            Q,
            id="TestIsSchedulableAfterStorageClassChange/type conversion error",
        ),
    ],
)
def test_is_schedulable_after_storage_class_change(old: Any, new: Any, want: QueueingHint) -> None:
    pl = volumebinding.new(None, fake_handle())
    assert pl.is_schedulable_after_storage_class_change(POD_A, old, new) == want


def _cap(c: int | None = None, m: int | None = None) -> Any:
    out = capacity("cap-a", "", None)
    return replace(out, capacity=c, maximum_volume_size=m, node_topology=None)


_CAP = "TestIsSchedulableAfterCSIStorageCapacityChange/"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None, _cap(), Q, id=_CAP + "When a new CSIStorageCapacity is created, it returns Queue"
        ),
        pytest.param(
            _cap(),
            _cap(100),
            Q,
            id=_CAP + "When the volume limit is increase(Capacity set), it returns Queue",
        ),
        pytest.param(
            _cap(),
            _cap(m=100),
            Q,
            id=_CAP + "When the volume limit is increase(MaximumVolumeSize set), it returns Queue",
        ),
        pytest.param(
            _cap(50),
            _cap(100),
            Q,
            id=_CAP + "When the volume limit is increase(Capacity increase), it returns Queue",
        ),
        pytest.param(
            _cap(100, 50),
            _cap(100),
            Q,
            id=_CAP
            + "When the volume limit is increase(MaximumVolumeSize unset), it returns Queue",
        ),
        pytest.param(
            _cap(100, 50),
            _cap(100, 60),
            Q,
            id=_CAP
            + "When the volume limit is increase(MaximumVolumeSize increase), it returns Queue",
        ),
        pytest.param(
            _cap(100, 50),
            _cap(100, 50),
            SKIPQ,
            id=_CAP + "When there are no changes to the CSIStorageCapacity, it returns QueueSkip",
        ),
        pytest.param(
            _cap(100),
            _cap(100),
            SKIPQ,
            id=_CAP + "When the volume limit is equal(Capacity), it returns QueueSkip",
        ),
        pytest.param(
            _cap(100, 50),
            _cap(50),
            SKIPQ,
            id=_CAP
            + "When the volume limit is equal(MaximumVolumeSize unset), it returns QueueSkip",
        ),
        pytest.param(
            _cap(100),
            _cap(90),
            SKIPQ,
            id=_CAP + "When the volume limit is decrease(Capacity), it returns QueueSkip",
        ),
        pytest.param(
            _cap(m=100),
            _cap(m=90),
            SKIPQ,
            id=_CAP + "When the volume limit is decrease(MaximumVolumeSize), it returns QueueSkip",
        ),
        pytest.param(object(), object(), Q, id=_CAP + "type conversion error"),
    ],
)
def test_is_schedulable_after_csi_storage_capacity_change(
    old: Any, new: Any, want: QueueingHint
) -> None:
    pl = volumebinding.new(None, fake_handle())
    assert pl.is_schedulable_after_csi_storage_capacity_change(POD_A, old, new) == want


_DRV = "TestIsSchedulableAfterCSIDriverChange/"
POD_CSI = make_pod("pod-a").csi("test1").obj()


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            POD_A,
            csi_driver("test1", None),
            csi_driver("test1", True),
            SKIPQ,
            id=_DRV + "pod has no CSIDriver",
        ),
        pytest.param(POD_A, object(), object(), Q, id=_DRV + "unexpected objects are passed"),
        pytest.param(
            POD_CSI,
            csi_driver("test2", True),
            csi_driver("test2", False),
            SKIPQ,
            id=_DRV + "driver name in pod and csidriver name are different",
        ),
        pytest.param(
            POD_CSI,
            csi_driver("test1", None),
            csi_driver("test1", None),
            SKIPQ,
            id=_DRV + "original StorageCapacity is nil",
        ),
        pytest.param(
            POD_CSI,
            csi_driver("test1", False),
            csi_driver("test1", False),
            SKIPQ,
            id=_DRV + "original StorageCapacity is false",
        ),
        pytest.param(
            POD_CSI,
            csi_driver("test1", True),
            csi_driver("test1", None),
            Q,
            id=_DRV + "modified StorageCapacity is nil",
        ),
        pytest.param(
            POD_CSI,
            csi_driver("test1", True),
            csi_driver("test1", True),
            SKIPQ,
            id=_DRV + "modified StorageCapacity is true",
        ),
        pytest.param(
            POD_CSI,
            csi_driver("test1", True),
            csi_driver("test1", False),
            Q,
            id=_DRV + "modified StorageCapacity is false",
        ),
    ],
)
def test_is_schedulable_after_csi_driver_change(
    pod: Any, old: Any, new: Any, want: QueueingHint
) -> None:
    pl = volumebinding.new(None, fake_handle())
    assert pl.is_schedulable_after_csi_driver_change(pod, old, new) == want


# --- EventsToRegister ---------------------------------------------------------------------------


@pytest.mark.parametrize("hints", [True, False], ids=["queueing hints on", "queueing hints off"])
def test_events_to_register(hints: bool) -> None:
    pl = volumebinding.new(None, fake_handle({"SchedulerQueueingHints": hints}))
    add_update = ActionType.ADD | ActionType.UPDATE
    node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    if not hints:
        node_actions |= ActionType.UPDATE_NODE_TAINT
    got = [(e.event, e.hint is not None) for e in pl.kubesched_events_to_register()]
    assert got == [
        (ClusterEvent(R.STORAGE_CLASS, add_update), True),
        (ClusterEvent(R.PERSISTENT_VOLUME_CLAIM, add_update), True),
        (ClusterEvent(R.PERSISTENT_VOLUME, add_update), False),
        (ClusterEvent(R.NODE, node_actions), False),
        (ClusterEvent(R.CSI_NODE, add_update), True),
        (ClusterEvent(R.CSI_DRIVER, ActionType.UPDATE), True),
        (ClusterEvent(R.CSI_STORAGE_CAPACITY, add_update), True),
    ]


# --- args ---------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    pl = volumebinding.new(None, fake_handle())
    assert pl.args == volumebinding.VolumeBindingArgs(bind_timeout_seconds=600, shape=None)
    assert pl.binder.bind_timeout == 600
    assert volumebinding.new({"bindTimeoutSeconds": 0}, fake_handle()).binder.bind_timeout == 0


@pytest.mark.parametrize(
    ("args", "gates", "message"),
    [
        pytest.param(
            {"bindTimeoutSeconds": -1},
            {},
            "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
            id="ValidateVolumeBindingArgs/invalid BindTimeoutSeconds",
        ),
        pytest.param(
            {"shape": [{"utilization": 0, "score": 0}]},
            {GATE: False},
            "shape: Invalid value: []config.UtilizationShapePoint{config.UtilizationShapePoint{Utilization:0, "
            "Score:0}}: unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            id="ValidateVolumeBindingArgs/shape should be nil when the feature is off",
        ),
        pytest.param(
            {"shape": [{"utilization": 0, "score": 0}, {"utilization": 0, "score": 5}]},
            {GATE: True},
            "shape[1].utilization: Invalid value: 0: values must be sorted in increasing order",
            id="ValidateVolumeBindingArgs/invalid shape: utilization not sorted",
        ),
        pytest.param(
            {"shape": [{"utilization": 0, "score": 11}]},
            {GATE: True},
            "shape[0].score: Invalid value: 11: not in valid range [0, 10]",
            id="ValidateVolumeBindingArgs/invalid shape: score out of range",
        ),
        pytest.param(
            {"shape": [{"utilization": 101, "score": 1}]},
            {GATE: True},
            "shape[0].utilization: Invalid value: 101: not in valid range [0, 100]",
            id="ValidateVolumeBindingArgs/invalid shape: utilization out of range",
        ),
        pytest.param(
            {"timeout": 1}, {}, 'strict decoding error: unknown field "timeout"', id="unknown field"
        ),
    ],
)
def test_args_errors(args: dict[str, Any], gates: dict[str, bool], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        volumebinding.new(args, fake_handle(gates))
    assert str(e.value) == message


def test_args_shape_defaults_with_the_gate() -> None:
    """``SetDefaults_VolumeBindingArgs``: [{0, 10}, {100, 0}] with StorageCapacityScoring on."""
    pl = volumebinding.new(None, fake_handle({GATE: True}))
    scorer = pl.scorer()
    assert scorer is not None
    from kubesched.plugins.volumebinding.binder import StorageResource

    assert scorer({"c": StorageResource(10, 100)}) == 90
    assert volumebinding.new(None, fake_handle({GATE: False})).scorer() is None


def test_gates_read_when_the_handle_has_them() -> None:
    """The scheduler sets the gates after building its plugins: the shape's gate check then
    happens at the first use, where a shape with the gate off means no scoring."""
    handle = fake_handle()
    pl = volumebinding.new(
        {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}, handle
    )
    handle.feature_gates = {GATE: False}
    assert pl.scorer() is None
    handle.feature_gates = {GATE: True}
    assert pl.scorer() is not None


def test_registered_in_tree() -> None:
    assert IN_TREE[volumebinding.NAME] is volumebinding.new
