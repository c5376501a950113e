"""The fake cluster's resourceclaim controller: ports of upstream's
``pkg/controller/resourceclaim/controller_test.go`` ``TestSyncHandler`` cases (named after them;
the fake cluster runs every sync to the end, so the expected state is the converged one), and the
claim names of ``generateName``.  Every async test runs on both backends."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kubesched.api import (
    FINALIZER,
    POD_RESOURCE_CLAIM_ANNOTATION,
    AllocationResult,
    Container,
    DeviceAllocationResult,
    DeviceClaim,
    DeviceRequest,
    DeviceRequestAllocationResult,
    ExactDeviceRequest,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodResourceClaimStatus,
    PodSpec,
    PodStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
)
from kubesched.api._objects import PodResourceClaim
from kubesched.transports.fake import FakeCluster
from kubesched.transports.fake._resourceclaims import generate_name

pytestmark = pytest.mark.anyio

NS = "my-namespace"
POD = "test-pod"
TEMPLATE = "my-template"
SPEC = ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(name="req-0", exactly=ExactDeviceRequest(device_class_name="class"))]))


def template(labels: dict[str, str] | None = None) -> ResourceClaimTemplate:
    return ResourceClaimTemplate(
        metadata=ObjectMeta(name=TEMPLATE, namespace=NS),
        spec=ResourceClaimTemplateSpec(metadata=ObjectMeta(labels=labels or {}, annotations={"a": "b"}), spec=SPEC),
    )


def pod(*claims: PodResourceClaim, name: str = POD, node: str = "", phase: str = "") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=NS),
        spec=PodSpec(node_name=node, resource_claims=list(claims), containers=[Container(name="c")]),
        status=PodStatus(phase=phase),
    )


def from_template(name: str = "acme-claim") -> PodResourceClaim:
    return PodResourceClaim(name=name, resource_claim_template_name=TEMPLATE)


def by_name(name: str) -> PodResourceClaim:
    return PodResourceClaim(name="shared", resource_claim_name=name)


ALLOCATION = AllocationResult(devices=DeviceAllocationResult(results=[
    DeviceRequestAllocationResult(request="req-0", driver="driver.example.com", pool="pool", device="device-0")]))


def claim(name: str, *, owner: Pod | None = None, reserved: list[Pod] | None = None, allocated: bool = False,
          finalizer: bool = False, pod_claim: str = "") -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(
            name=name, namespace=NS,
            annotations={POD_RESOURCE_CLAIM_ANNOTATION: pod_claim} if pod_claim else {},
            owner_references=[OwnerReference(api_version="v1", kind="Pod", name=owner.metadata.name, uid=owner.metadata.uid, controller=True)] if owner else [],
            finalizers=[FINALIZER] if finalizer else [],
        ),
        spec=SPEC,
        status=ResourceClaimStatus(
            allocation=ALLOCATION if allocated or reserved else None,
            reserved_for=[ResourceClaimConsumerReference(resource="pods", name=p.metadata.name, uid=p.metadata.uid) for p in reserved or []],
        ),
    )


def claims(c: FakeCluster) -> list[ResourceClaim]:
    return [x for x in c.list("ResourceClaim") if x.metadata.namespace == NS]


def statuses(c: FakeCluster, name: str = POD) -> list[PodResourceClaimStatus]:
    p = c.get_pod(NS, name)
    assert p is not None
    return p.status.resource_claim_statuses


def uid(c: FakeCluster, name: str = POD) -> str:
    p = c.get_pod(NS, name)
    assert p is not None
    return p.metadata.uid


async def test_TestSyncHandler_create() -> None:
    async with FakeCluster(seed=1) as c:
        c.create(template({"l": "v"}))
        c.create(pod(from_template()))
        [made] = claims(c)
        md = made.metadata
        assert md.generate_name == "test-pod-acme-claim-"
        assert md.name.startswith("test-pod-acme-claim-") and len(md.name) == len("test-pod-acme-claim-") + 5
        assert md.annotations == {"a": "b", POD_RESOURCE_CLAIM_ANNOTATION: "acme-claim"}
        assert md.labels == {"l": "v"}
        # upstream's testPodOwnerReference: Controller and BlockOwnerDeletion both true (v1.35.4)
        assert md.owner_references == [
            OwnerReference(api_version="v1", kind="Pod", name=POD, uid=uid(c), controller=True, block_owner_deletion=True)
        ]
        assert made.spec == SPEC
        assert statuses(c) == [PodResourceClaimStatus(name="acme-claim", resource_claim_name=md.name)]


async def test_TestSyncHandler_create_names_are_seeded() -> None:
    names = []
    for _ in range(2):
        async with FakeCluster(seed=7) as c:
            c.create(template())
            c.create(pod(from_template()))
            names.append(claims(c)[0].metadata.name)
    assert names[0] == names[1]


async def test_TestSyncHandler_nop() -> None:
    async with FakeCluster() as c:
        c.create(template())
        p = pod(from_template())
        c.create(p)
        before = claims(c)
        c.update(replace(c.get_pod(NS, POD), metadata=replace(c.get_pod(NS, POD).metadata, labels={"x": "y"})))  # type: ignore[union-attr]
        assert claims(c) == before and len(statuses(c)) == 1


async def test_TestSyncHandler_recreate() -> None:
    async with FakeCluster() as c:
        c.create(template())
        c.create(pod(from_template()))
        [first] = claims(c)
        c.delete_object("ResourceClaim", NS, first.metadata.name)
        c.update(replace(c.get_pod(NS, POD), metadata=replace(c.get_pod(NS, POD).metadata, labels={"x": "y"})))  # type: ignore[union-attr]
        [again] = claims(c)
        assert again.metadata.name != first.metadata.name
        assert statuses(c) == [PodResourceClaimStatus(name="acme-claim", resource_claim_name=again.metadata.name)]


async def test_TestSyncHandler_missing_template_then_template_created() -> None:
    async with FakeCluster() as c:
        c.create(pod(from_template()))
        assert claims(c) == [] and statuses(c) == []
        c.create(template())
        assert len(claims(c)) == 1 and len(statuses(c)) == 1


async def test_TestSyncHandler_find_existing_claim_by_label() -> None:
    async with FakeCluster() as c:
        p = pod(from_template())
        c.create(claim("existing", owner=replace(p, metadata=replace(p.metadata, uid="pod-uid")), pod_claim="acme-claim"))
        c.create(template())
        c.create(replace(p, metadata=replace(p.metadata, uid="pod-uid")))
        assert [x.metadata.name for x in claims(c)] == ["existing"]
        assert statuses(c) == [PodResourceClaimStatus(name="acme-claim", resource_claim_name="existing")]


async def test_TestSyncHandler_wrong_claim_owner() -> None:
    async with FakeCluster() as c:
        other = pod(name="other")
        c.create(claim("conflicting", owner=replace(other, metadata=replace(other.metadata, uid="other-uid")), pod_claim="acme-claim"))
        c.create(pod(from_template()))  # no template: the other pod's claim is not taken
        assert [x.metadata.name for x in claims(c)] == ["conflicting"] and statuses(c) == []


async def test_TestSyncHandler_no_volumes_and_pod_deleted() -> None:
    async with FakeCluster() as c:
        c.create(template())
        c.create(pod())  # "no-volumes"
        p = pod(from_template(), name="deleted")
        c.create(replace(p, metadata=replace(p.metadata, deletion_timestamp="2024-01-01T00:00:00Z")))  # "pod-deleted"
        assert claims(c) == []


async def test_TestSyncHandler_create_with_other_claim() -> None:
    async with FakeCluster() as c:
        c.create(template())
        c.create(claim("other-claim"))
        c.create(pod(from_template()))
        assert len(claims(c)) == 2


async def test_TestSyncHandler_stay_reserved_seen() -> None:
    async with FakeCluster() as c:
        p = pod(by_name("claim"))
        c.create(p)
        live = c.get_pod(NS, POD)
        c.create(claim("claim", reserved=[live], finalizer=True))  # type: ignore[list-item]
        [kept] = claims(c)
        assert [r.name for r in kept.status.reserved_for] == [POD] and kept.status.allocation is not None


async def test_TestSyncHandler_clear_reserved_structured() -> None:
    """No such pod: reservedFor cleared, the allocation dropped and the finalizer removed."""
    async with FakeCluster() as c:
        c.create(claim("claim", reserved=[pod(name="gone")], finalizer=True))
        [cl] = claims(c)
        assert cl.status.reserved_for == [] and cl.status.allocation is None and cl.metadata.finalizers == []


async def test_TestSyncHandler_dont_clear_reserved_structured() -> None:
    async with FakeCluster() as c:
        c.create(pod(by_name("claim")))
        live = c.get_pod(NS, POD)
        c.create(claim("claim", reserved=[live, pod(name="other")], finalizer=True))  # type: ignore[list-item]
        [cl] = claims(c)
        assert [r.name for r in cl.status.reserved_for] == [POD]
        assert cl.status.allocation is not None and cl.metadata.finalizers == [FINALIZER]


async def test_TestSyncHandler_clear_reserved_when_done() -> None:
    """No builtin finalizer: the reservation goes, the allocation stays."""
    async with FakeCluster() as c:
        c.create(pod(by_name("claim"), node="n1"))
        live = c.get_pod(NS, POD)
        c.create(claim("claim", reserved=[live]))  # type: ignore[list-item]
        c.set_pod_phase(c.get_pod(NS, POD), "Succeeded")  # type: ignore[arg-type]
        [cl] = claims(c)
        assert cl.status.reserved_for == [] and cl.status.allocation is not None


async def test_TestSyncHandler_delete_claim_when_done() -> None:
    async with FakeCluster() as c:
        c.create(template())
        c.create(pod(from_template(), node="n1"))
        [made] = claims(c)
        live = c.get_pod(NS, POD)
        ref = ResourceClaimConsumerReference(resource="pods", name=POD, uid=live.metadata.uid)  # type: ignore[union-attr]
        c.update(replace(made, status=ResourceClaimStatus(allocation=ALLOCATION, reserved_for=[ref])))
        c.set_pod_phase(c.get_pod(NS, POD), "Succeeded")  # type: ignore[arg-type]
        assert claims(c) == []


async def test_TestSyncHandler_remove_reserved() -> None:
    async with FakeCluster() as c:
        c.create(pod(by_name("claim")))
        live = c.get_pod(NS, POD)
        c.create(claim("claim", reserved=[live, pod(name="twice")]))  # type: ignore[list-item]
        assert [r.name for r in claims(c)[0].status.reserved_for] == [POD]


async def test_TestSyncHandler_add_reserved() -> None:
    """A pod created on a node: its allocated claim is reserved for it."""
    async with FakeCluster() as c:
        c.create(claim("claim", allocated=True))
        c.create(pod(by_name("claim"), node="n1"))
        assert [(r.resource, r.name, r.uid) for r in claims(c)[0].status.reserved_for] == [("pods", POD, uid(c))]


async def test_TestSyncHandler_clean_up_pod_reservation_with_non_pod_reservation_present() -> None:
    async with FakeCluster() as c:
        other = ResourceClaimConsumerReference(api_group="foo.com", resource="foo", name="foo", uid="123")
        cl = claim("claim", reserved=[pod(name="gone")])
        c.create(replace(cl, status=replace(cl.status, reserved_for=[*cl.status.reserved_for, other])))
        assert claims(c)[0].status.reserved_for == [other]


async def test_TestSyncHandler_flapping_resourceclaim_statuses() -> None:
    async with FakeCluster() as c:
        c.create(template())
        p = pod(from_template("claimA"), from_template("claimB"))
        c.create(replace(p, metadata=replace(p.metadata, uid="pod-uid")))
        p2 = c.get_pod(NS, POD)
        assert [s.name for s in statuses(c)] == ["claimA", "claimB"]
        assert p2 is not None and all(s.resource_claim_name for s in p2.status.resource_claim_statuses)


async def test_structured_deleted_finalizer_is_removed_then_the_claim_goes() -> None:
    """``structured-deleted``: a claim being deleted with the builtin finalizer and no consumer
    loses its allocation and finalizer, and then it is gone."""
    async with FakeCluster() as c:
        c.create(template())
        c.create(pod(from_template()))
        [made] = claims(c)
        c.update(replace(made, metadata=replace(made.metadata, finalizers=[FINALIZER]), status=ResourceClaimStatus(allocation=ALLOCATION)))
        c.delete_now("Pod", NS, POD, graceful=False)  # the garbage collector deletes its claim
        assert claims(c) == []


async def test_generated_claims_are_deleted_with_their_pod() -> None:
    async with FakeCluster() as c:
        c.create(template())
        c.create(pod(from_template("a"), from_template("b")))
        c.create(claim("unrelated"))
        assert len(claims(c)) == 3
        c.delete_now("Pod", NS, POD, graceful=False)
        assert [x.metadata.name for x in claims(c)] == ["unrelated"]


@pytest.mark.parametrize(
    ("pod_name", "claim_name", "want"),
    [
        ("test-pod", "acme-claim", "test-pod-acme-claim-"),
        # 57 characters and more: both parts cut in proportion (no trailing hyphen)
        ("p" * 40, "c" * 30, "p" * 31 + "-" + "c" * 23),
        ("p" * 55, "c", "p" * 54 + "-"),
    ],
)
def test_generate_name(pod_name: str, claim_name: str, want: str) -> None:
    assert generate_name(pod_name, claim_name) == want



async def test_device_taints_get_their_time_added() -> None:
    """``SetDefaults_DeviceTaint``: a taint written without ``timeAdded`` gets the write's time
    in whole seconds; one that has it keeps it."""
    from kubesched.api import (
        Device,
        DeviceTaint,
        DeviceTaintRule,
        DeviceTaintRuleSpec,
        ResourcePool,
        ResourceSlice,
        ResourceSliceSpec,
    )

    async with FakeCluster(epoch="2026-01-01T00:00:00Z") as c:
        c.create(ResourceSlice(metadata=ObjectMeta(name="s"), spec=ResourceSliceSpec(
            driver="d.example.com", node_name="n1", pool=ResourcePool(name="p", generation=1, resource_slice_count=1),
            devices=[Device(name="d0", taints=[DeviceTaint(key="k", effect="NoSchedule"),
                                               DeviceTaint(key="j", effect="None", time_added="2025-01-01T00:00:00Z")])])))
        c.create(DeviceTaintRule(metadata=ObjectMeta(name="r"), spec=DeviceTaintRuleSpec(taint=DeviceTaint(key="k", effect="NoExecute"))))
        taints = c.get("ResourceSlice", "", "s").spec.devices[0].taints
        assert [t.time_added for t in taints] == ["2026-01-01T00:00:00Z", "2025-01-01T00:00:00Z"]
        assert c.get("DeviceTaintRule", "", "r").spec.taint.time_added == "2026-01-01T00:00:00Z"


async def test_a_claim_created_after_its_bound_pod_is_reserved_for_it() -> None:
    """The pod comes first (a manifest's order): the allocated claim is reserved for it when it
    is created."""
    async with FakeCluster() as c:
        c.create(pod(by_name("claim"), node="n1"))
        c.create(claim("claim", allocated=True))
        assert [r.name for r in claims(c)[0].status.reserved_for] == [POD]


async def test_every_claim_a_pod_controls_goes_with_it() -> None:
    """The garbage collector: a claim the pod controls without the pod-claim-name annotation
    too."""
    async with FakeCluster() as c:
        c.create(pod())
        live = c.get_pod(NS, POD)
        c.create(claim("owned", owner=live))
        c.create(claim("other"))
        c.delete_now("Pod", NS, POD, graceful=False)
        assert [x.metadata.name for x in claims(c)] == ["other"]
