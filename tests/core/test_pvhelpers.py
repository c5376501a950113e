"""The shared persistent-volume helpers (``kubesched.api._pvhelpers``, upstream
``component-helpers/storage/volume``) on the PV controller's path: no node, nothing excluded,
``delay_binding`` from the claim's class.  The scheduler's path (a node, the chosen volumes,
``delay_binding=True``) is covered by VolumeBinding's tests (``tests/plugins/test_volumebinding*``).

Cases after k/k ``pkg/controller/volume/persistentvolume/index_test.go``
TestMatchingWithBoundVolumes and TestFindingPreboundVolumes, reduced to ``FindMatchingVolume``
itself (the access-mode index is the fake PV controller's, tested in
``tests/transports/test_fake_storage.py``)."""

from __future__ import annotations

import pytest

from kubesched.api._objects import (
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    ObjectReference,
    OwnerReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    Pod,
    StorageClass,
    VolumeResourceRequirements,
)
from kubesched.api._pvhelpers import (
    ANN_BOUND_BY_CONTROLLER,
    VolumeError,
    find_matching_volume,
    get_bind_volume_to_claim,
    is_delay_binding_mode,
    volume_is_for_pod,
)
from kubesched.framework import find_matching_volume as framework_find_matching_volume

MODES = ["ReadWriteOnce", "ReadOnlyMany"]


def pv(name: str, size: str, ref: ObjectReference | None = None, phase: str = "Available") -> PersistentVolume:
    return PersistentVolume(
        metadata=ObjectMeta(name=name),
        spec=PersistentVolumeSpec(capacity={"storage": size}, access_modes=list(MODES), claim_ref=ref),
        status=PersistentVolumeStatus(phase=phase),
    )


def pvc(size: str = "1G", cls: str | None = None, selector: LabelSelector | None = None) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name="claim01", namespace="myns", uid="uid01"),
        spec=PersistentVolumeClaimSpec(
            access_modes=list(MODES),
            resources=VolumeResourceRequirements(requests={"storage": size}),
            storage_class_name=cls,
            selector=selector,
        ),
    )


def test_the_framework_reexports_the_one_copy() -> None:
    assert framework_find_matching_volume is find_matching_volume


def test_matching_with_bound_volumes() -> None:
    """TestMatchingWithBoundVolumes: of two similar volumes, the one bound elsewhere is skipped."""
    bound = pv("gce001", "1G", ObjectReference(uid="abc123"), phase="Bound")
    free = pv("gce002", "1G")
    assert find_matching_volume(pvc(), [bound, free], None, (), False) is free


def test_finding_prebound_volumes() -> None:
    """TestFindingPreboundVolumes: a volume pre-bound to the claim wins over a smaller free one;
    one pre-bound to another claim never matches."""
    claim = pvc("1G")
    small = pv("pv1", "1G")
    prebound = pv("pv5", "5G", ObjectReference(namespace="myns", name="claim01"))
    other = pv("pv8", "8G", ObjectReference(namespace="myns", name="another-claim"))
    assert find_matching_volume(claim, [small, prebound, other], None, (), False) is prebound
    assert find_matching_volume(claim, [small, other], None, (), False) is small


def test_delay_binding_without_a_node_only_takes_a_prebound_volume() -> None:
    """FindMatchingVolume's delayBinding, the PV controller's WaitForFirstConsumer claim: unbound
    volumes are left to the scheduler, a pre-bound one still matches."""
    claim = pvc("1G")
    free = pv("free", "1G")
    prebound = pv("prebound", "1G", ObjectReference(namespace="myns", name="claim01", uid="uid01"))
    assert find_matching_volume(claim, [free], None, (), True) is None
    assert find_matching_volume(claim, [free, prebound], None, (), True) is prebound
    assert find_matching_volume(claim, [free], None, (), False) is free
    assert find_matching_volume(claim, [free], None, {"free"}, False) is None  # excluded


def test_an_invalid_claim_selector_is_an_error() -> None:
    selector = LabelSelector(match_expressions=[LabelSelectorRequirement(key="k", operator="Bogus")])
    with pytest.raises(VolumeError, match=r"^error creating internal label selector for claim: myns/claim01: "):
        find_matching_volume(pvc(selector=selector), [pv("pv1", "1G")], None, (), False)


@pytest.mark.parametrize(
    ("classes", "cls", "want"),
    [
        pytest.param({}, None, False, id="no class"),
        pytest.param({}, "gold", False, id="unknown class"),
        pytest.param({"gold": StorageClass(volume_binding_mode="Immediate")}, "gold", False, id="Immediate"),
        pytest.param(
            {"gold": StorageClass(volume_binding_mode="WaitForFirstConsumer")}, "gold", True, id="WaitForFirstConsumer"
        ),
    ],
)
def test_is_delay_binding_mode(classes: dict[str, StorageClass], cls: str | None, want: bool) -> None:
    assert is_delay_binding_mode(pvc(cls=cls), classes) is want


def test_is_delay_binding_mode_without_a_binding_mode_is_an_error() -> None:
    sc = StorageClass()
    sc.volume_binding_mode = None  # past the defaulting
    with pytest.raises(VolumeError, match='^VolumeBindingMode not set for StorageClass "gold"$'):
        is_delay_binding_mode(pvc(cls="gold"), {"gold": sc})


def test_get_bind_volume_to_claim() -> None:
    claim = pvc()
    new, dirty = get_bind_volume_to_claim(pv("pv1", "1G"), claim)
    assert dirty
    assert new.spec.claim_ref == ObjectReference(
        api_version="v1", kind="PersistentVolumeClaim", namespace="myns", name="claim01", uid="uid01"
    )
    assert new.metadata.annotations == {ANN_BOUND_BY_CONTROLLER: "yes"}
    assert get_bind_volume_to_claim(new, claim) == (new, False)
    # pre-bound by the user: claimRef completed, no bound-by-controller annotation
    prebound = pv("pv2", "1G", ObjectReference(namespace="myns", name="claim01"))
    new, dirty = get_bind_volume_to_claim(prebound, claim)
    assert dirty and new.spec.claim_ref is not None and new.spec.claim_ref.uid == "uid01"
    assert new.metadata.annotations == {}


def test_volume_is_for_pod() -> None:
    pod = Pod(metadata=ObjectMeta(name="p", namespace="myns", uid="pod-uid"))
    owned = pvc()
    owned.metadata.owner_references = [OwnerReference(kind="Pod", name="p", uid="pod-uid", controller=True)]
    assert volume_is_for_pod(pod, owned) is None
    assert volume_is_for_pod(pod, pvc()) == "PVC myns/claim01 was not created for pod myns/p (pod is not owner)"
