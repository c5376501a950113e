"""The DRA builders of ``kubesched.testing`` (``kubesched.testing_dra``) build objects the API
server takes (validated as on create), that a FakeHandle's listers and a fake cluster hold."""

from __future__ import annotations

import pytest

from kubesched.api import to_builtins
from kubesched.testing import (
    FakeHandle,
    make_claim,
    make_claim_template,
    make_device_class,
    make_node,
    make_pod,
    make_slice,
)
from kubesched.testing_dra import SemVer, node_selector_for
from kubesched.transports.fake import FakeCluster
from kubesched.validation import validate_object


def _objects() -> list[object]:
    pod = make_pod("p").req(cpu="1").resource_claim("gpu", claim="c").obj()
    claim = (
        make_claim("c")
        .request("gpu.example.com", "device.attributes['gpu.example.com'].model == 'A100'", count=2)
        .first_available("nic", ("fast", "nic.example.com"), ("slow", "nic.example.com"))
        .match_attribute("gpu.example.com/numa", "req-0")
        .allocation(("req-0", "gpu.example.com", "n1", "gpu-0"), ("req-0", "gpu.example.com", "n1", "gpu-1"), node="n1")
        .reserved_for(pod)
        .finalizer()
        .obj()
    )
    slice_ = (
        make_slice("n1", "gpu.example.com")
        .device("gpu-0", {"model": "A100", "index": 0, "mig": False, "driverVersion": SemVer("1.2.3")}, {"memory": "80Gi"})
        .devices("gpu-1", "gpu-2")
        .obj()
    )
    return [pod, claim, slice_, make_device_class("gpu.example.com", "device.driver == 'gpu.example.com'"),
            make_claim_template("one-gpu", "gpu.example.com"), make_slice(None, "nic.example.com", pool="fabric").devices("nic-0").obj()]


@pytest.mark.parametrize("i", range(6))
def test_the_builders_make_valid_objects(i: int) -> None:
    obj = _objects()[i]
    validate_object(obj, type(obj).__name__)


def test_what_they_hold() -> None:
    pod, claim, slice_, *_ = _objects()
    assert to_builtins(pod)["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "c"}]
    assert to_builtins(pod)["spec"]["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert claim.status.allocation.node_selector == node_selector_for("n1")  # type: ignore[attr-defined]
    assert [r.name for r in claim.status.reserved_for] == ["p"]  # type: ignore[attr-defined]
    attrs = slice_.spec.devices[0].attributes  # type: ignore[attr-defined]
    assert (attrs["model"].string_value, attrs["index"].int_value, attrs["mig"].bool_value,
            attrs["driverVersion"].version_value) == ("A100", 0, False, "1.2.3")
    all_nodes = _objects()[5]
    assert all_nodes.spec.all_nodes is True and all_nodes.spec.node_name is None  # type: ignore[attr-defined]


def test_a_fake_handle_lists_them() -> None:
    pod, claim, slice_, cls, *_ = _objects()
    handle = FakeHandle([make_node("n1").obj()], [pod]).add(claim, slice_, cls)
    assert handle.cluster.get_resource_claim("default", "c") is claim
    assert handle.cluster.list_resource_slices() == [slice_]
    assert handle.cluster.get_device_class("gpu.example.com") is cls


@pytest.mark.anyio
async def test_a_fake_cluster_takes_them() -> None:
    async with FakeCluster() as cluster:
        for obj in _objects():  # the pod first: a reservation for a pod that does not exist is dropped
            cluster.create(obj)
        stored = cluster.get("ResourceClaim", "default", "c")
        assert [r.name for r in stored.status.reserved_for] == ["p"]
