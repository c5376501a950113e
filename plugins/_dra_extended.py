"""DynamicResources' part of extended resources backed by DRA (DRAExtendedResource, KEP-5004:
alpha off in 1.34 and 1.35, beta on in 1.36).

Ported from kubernetes ``pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go``
and the calls ``dynamicresources.go`` makes to it, as read after v1.36.0 (the tree with
``claims.go``'s ``claimStore``; the v1.35 tree has the same flow), with the special claim's
requests from :func:`kubesched.dra.create_requests_and_mappings`::

    PreFilter   a pod requesting an extended resource a DeviceClass maps (explicit
                extendedResourceName, or deviceclass.resource.kubernetes.io/<class>):
                the claim the pod controls with annotation
                resource.kubernetes.io/extended-resource-claim=true (left by an earlier
                cycle), else one in memory, named "<extended-resources>" with a temporary
                uid, generateName <pod>-extended-resources-, no requests; it goes last
                among the pod's claims
    Filter      per node: a claim with requests (an earlier cycle's) → "cannot schedule
                extended resource claim"; each requested DRA extended resource the node's
                allocatable does not have (0) and a class maps is DRA's, one the node lacks
                outright and no class maps → "cannot fit resource"; the node's copy of the
                claim gets the requests of DRA's resources and is allocated with the others
    Reserve     the node's copy, with its allocation, in flight under the temporary uid
    Unreserve   in flight dropped; a claim already written is deleted (finalizer removed
                first)
    PreBind     the claim created (name and uid by the API server), then allocation and
                reservedFor written as for any claim, then the pod's
                status.extendedResourceClaimStatus (claim name, request per container)
    PostFilter  a written special claim (an earlier cycle's) is deleted: "deletion of
                ResourceClaim completed"

The resourceclaim controller of the fake cluster deletes the claim with its pod (owner
reference) or when the pod is done.  Not modelled: upstream's 120 s poll for the created claim
in the assume cache (the claim is assumed at once) and the ``resourceclaim_creates_total``
metric.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from kubesched.dra import (
    ClassTableResolver,
    create_requests_and_mappings,
    is_dra_extended_resource_name,
)
from kubesched.framework import Status, pod_requests

if TYPE_CHECKING:
    from kubesched.api import ContainerExtendedResourceRequest, ResourceClaim
    from kubesched.framework import Handle, NodeInfo, Pod

SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"
"""``specialClaimInMemName``: the claim's name until PreBind creates it (not a valid name)."""
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
"""``resourceapi.ExtendedResourceClaimAnnotation`` (its one valid value: ``"true"``)."""
MSG_CANNOT_SCHEDULE_CLAIM = "cannot schedule extended resource claim"
MSG_CANNOT_FIT = "cannot fit resource"
MSG_DELETED = "deletion of ResourceClaim completed"


@dataclass
class ExtendedState:
    """``draExtendedResource`` and the special claim's place in ``stateData``: its index among
    the pod's claims (the last), the temporary uid it is in flight under, the pod's scalar
    requests, and per node Filter's copy of the claim and the container → request mappings."""

    index: int
    tmp_uid: str
    scalar: dict[str, int]
    nodes: dict[str, tuple[ResourceClaim | None, list[ContainerExtendedResourceRequest]]] = field(default_factory=dict)


def may_request(pod: Pod) -> bool:
    """A cheap first look: does a container (or the overhead) name an extended resource?"""
    spec = pod.spec
    for c in (*spec.containers, *spec.init_containers) if spec.init_containers else spec.containers:
        requests = c.resources.requests
        if requests and "/" in "".join(requests):  # a name with a "/" (the names joined: one C call)
            return True
    overhead = spec.overhead
    return overhead is not None and "/" in "".join(overhead)


class ExtendedResources:
    """DynamicResources' extended-resource steps (see the module); ``classes`` is the
    ``DeviceClassResolver``."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self._classes: ClassTableResolver | None = None

    @property
    def classes(self) -> ClassTableResolver:
        table = self.handle.cluster.device_classes
        if self._classes is None or self._classes.table is not table:
            self._classes = ClassTableResolver(table)
        return self._classes

    # --- PreFilter ------------------------------------------------------------------------------
    def pre_filter(
        self, pod: Pod, claims: Callable[[], dict[tuple[str, str], ResourceClaim]]
    ) -> tuple[ResourceClaim | None, dict[str, int]]:
        """``preFilterExtendedResources``: the special claim (found among ``claims()``, every
        claim as the assume cache lists them, listed only for a pod that needs the special
        claim, or made in memory) and the pod's scalar requests; (None, {}) when no requested
        resource is DRA's."""
        if not self.handle.cluster.device_classes or not may_request(pod):
            return None, {}
        reqs = pod_requests(pod)
        classes = self.classes
        if not any(
            q and is_dra_extended_resource_name(n) and classes.get_device_class(n) is not None for n, q in reqs.scalar.items()
        ):
            return None, {}
        found = find_extended_resource_claim(pod, claims().values())
        if found is not None:
            return found, dict(reqs.scalar)
        from kubesched.api import ObjectMeta, OwnerReference, ResourceClaim

        md = pod.metadata
        claim = ResourceClaim(
            metadata=ObjectMeta(
                namespace=md.namespace,
                name=SPECIAL_CLAIM_IN_MEM_NAME,
                uid=f"{md.uid}/extended-resources",  # upstream: uuid.NewUUID(), never written
                generate_name=md.name + "-extended-resources-",
                owner_references=[OwnerReference(api_version="v1", kind="Pod", name=md.name, uid=md.uid, controller=True)],
                annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            )
        )
        return claim, dict(reqs.scalar)

    # --- Filter ---------------------------------------------------------------------------------
    def filter_node(
        self, ext: ExtendedState, claim: ResourceClaim, pod: Pod, info: NodeInfo, no_user_claim: bool
    ) -> tuple[ResourceClaim | None, list[ContainerExtendedResourceRequest], Status | None]:
        """``filterExtendedResources``: the node's copy of the special claim with the requests
        DRA serves there (None when the device plugin serves them all), its mappings, or the
        node's rejection."""
        if claim.spec.devices.requests:
            return None, [], Status.unresolvable(MSG_CANNOT_SCHEDULE_CLAIM)
        classes = self.classes
        allocatable = info.allocatable
        dra: dict[str, int] = {}
        for name, quantity in ext.scalar.items():
            if not quantity or not is_dra_extended_resource_name(name):
                continue
            have = allocatable.scalar.get(name)
            if classes.get_device_class(name) is not None and not have:
                dra[name] = quantity
            elif have is None:
                return None, [], Status.unresolvable(MSG_CANNOT_FIT)
        if (no_user_claim and not dra) or claim.status.allocation is not None:
            return None, [], None
        requests, mappings = create_requests_and_mappings(pod, dra, classes)
        devices = replace(claim.spec.devices, requests=requests)
        return replace(claim, spec=replace(claim.spec, devices=devices)), mappings, None

    # --- PreBind --------------------------------------------------------------------------------
    async def create(self, ext: ExtendedState, pod: Pod, node_name: str) -> ResourceClaim:
        """``createExtendedResourceClaimInAPI``: the node's copy created, without name, uid or
        allocation (the API server names it from its generateName)."""
        node_claim = ext.nodes.get(node_name, (None, []))[0]
        if node_claim is None:
            raise ClaimCreateError(f"extended resource claim not found for node {node_name}")
        from kubesched.api import ResourceClaimStatus

        claim = replace(
            node_claim,
            metadata=replace(node_claim.metadata, name="", uid=""),
            status=ResourceClaimStatus(),
        )
        try:
            return await self.handle.client.create_resource_claim(claim)
        except Exception as e:
            raise ClaimCreateError(f"create claim for extended resources {claim.metadata.namespace}/: {e}") from e

    async def patch_pod_status(self, ext: ExtendedState, pod: Pod, claim: ResourceClaim, node_name: str) -> None:
        """``patchPodExtendedResourceClaimStatus``."""
        from kubesched.api import PodExtendedResourceClaimStatus

        ns, name = pod.metadata.namespace, pod.metadata.name
        mappings = ext.nodes.get(node_name, (None, []))[1]
        if not mappings:
            raise ClaimCreateError(f"nil or empty request mappings, no update of pod {ns}/{name} ExtendedResourceClaimStatus")
        status = PodExtendedResourceClaimStatus(request_mappings=list(mappings), resource_claim_name=claim.metadata.name)
        try:
            await self.handle.client.patch_pod_extended_resource_claim_status(ns, name, status)
        except Exception as e:
            raise ClaimCreateError(f"update pod {ns}/{name} ExtendedResourceClaimStatus: {e}") from e

    async def delete_claim(self, claim: ResourceClaim) -> None:
        """``deleteClaim``: the builtin finalizer removed (an update, retried on conflict on the
        latest claim), then DELETE (a claim already gone is fine)."""
        from kubesched.api import FINALIZER
        from kubesched.framework import ConflictError, KubeschedError

        client = self.handle.client
        ns, name = claim.metadata.namespace, claim.metadata.name
        for attempt in range(5):  # retry.DefaultRetry
            if attempt:
                latest = self.handle.cluster.get_resource_claim(ns, name)
                if latest is None:
                    raise ClaimCreateError(f'get resourceclaim {ns}/{name}: resourceclaims.resource.k8s.io "{name}" not found')
                claim = latest
            finalizers = [f for f in claim.metadata.finalizers if f != FINALIZER]
            try:
                await client.update_resource_claim(replace(claim, metadata=replace(claim.metadata, finalizers=finalizers)))
                break
            except ConflictError:
                if attempt == 4:
                    raise
            except Exception as e:
                raise ClaimCreateError(f"update resourceclaim {ns}/{name}: {e}") from e
        try:
            await client.delete_resource_claim(ns, name)
        except KubeschedError as e:
            if type(e).__name__ != "NotFoundError":  # apierrors.IsNotFound: already gone is fine
                raise


# --- the steps DynamicResources calls (``pl`` is the plugin; ``s`` its cycle state) -------------


def listed_claims(pl: Any) -> dict[tuple[str, str], ResourceClaim]:
    """``ResourceClaims().List()``: the cluster's claims, the assumed ones where newer."""
    out: dict[tuple[str, str], ResourceClaim] = dict(pl.handle.cluster.resource_claims)
    for key in list(pl.assumed):
        claim = pl.get_claim(*key)
        if claim is not None:
            out[key] = claim
    return out


def with_special_claim(pl: Any, s: Any, pod: Pod, claims: list[ResourceClaim]) -> list[ResourceClaim]:
    """PreFilter: the pod's claims, then the special claim when it needs one (its place kept in
    ``s.extended``)."""
    special, scalar = pl.extended.pre_filter(pod, lambda: listed_claims(pl))
    if special is None:
        return claims
    s.extended = ExtendedState(len(claims), special.metadata.uid, scalar)
    return [*claims, special]


def filter_extended(pl: Any, s: Any, ext: ExtendedState, pod: Pod, info: NodeInfo, pending: list[ResourceClaim]) -> Status | None:
    """Filter of a pod with the special claim: its node copy replaces it among the claims the
    allocator takes (``Filter``'s ``claimsToAllocate``); the copy and the mappings are kept for
    Reserve and PreBind."""
    special = s.claims[ext.index]
    node_claim, mappings, st = pl.extended.filter_node(ext, special, pod, info, ext.index == 0)
    if st is not None:
        return st  # type: ignore[no-any-return]
    if node_claim is None and ext.index == 0:
        return None  # satisfied by the device plugin, no user claim: nothing to allocate
    if node_claim is not None:
        pending = [node_claim if c is special else c for c in pending]
    node = info.node
    assert node is not None
    out: Status | None = pl._filter_node(s, node, pending)
    if out is None and s.allocator is not None:
        ext.nodes[node.metadata.name] = (node_claim, mappings)
    return out


async def unreserve_extended(pl: Any, s: Any, ext: ExtendedState) -> None:
    """``unreserveExtendedResourceClaim``: out of flight; a claim PreBind created is deleted
    (an error is logged upstream; the next attempt sees the claim and PostFilter deletes it)."""
    claim = s.claims[ext.index]
    if pl.in_flight.pop(ext.tmp_uid, None) is not None:
        pl.assumed.pop((claim.metadata.namespace, claim.metadata.name), None)
    if claim.metadata.name == SPECIAL_CLAIM_IN_MEM_NAME:
        return
    with contextlib.suppress(Exception):  # upstream logs it
        await pl.extended.delete_claim(claim)


async def bind_extended(pl: Any, s: Any, ext: ExtendedState, pod: Pod, node_name: str) -> ResourceClaim:
    """``bindClaim`` of the special claim: created first when it is still in memory (and
    tracked as the pod's from then on), then allocation and reservation as any claim's, then
    the pod's ``status.extendedResourceClaimStatus``."""
    claim: ResourceClaim = s.claims[ext.index]
    allocation = s.allocations.get(ext.index)
    if allocation is None and not claim.spec.devices.requests:
        return claim  # extended resource requests satisfied by the device plugin
    try:
        if claim.metadata.name == SPECIAL_CLAIM_IN_MEM_NAME:
            claim = await pl.extended.create(ext, pod, node_name)
            s.claims[ext.index] = claim
        bound: ResourceClaim = await pl.binding.bind_claim(claim, allocation, pod)
    finally:
        if allocation is not None:
            pl.in_flight.pop(ext.tmp_uid, None)
    await pl.extended.patch_pod_status(ext, pod, bound, node_name)
    return bound


async def delete_extended(pl: Any, claim: ResourceClaim) -> tuple[None, Status]:
    """PostFilter: the special claim of an earlier cycle deleted."""
    from kubesched.framework import Code

    try:
        await pl.extended.delete_claim(claim)
    except Exception as e:  # noqa: BLE001 - the API's error is the pod's Error status
        return None, Status.as_error(e)
    return None, Status(Code.UNSCHEDULABLE, MSG_DELETED)


class ClaimCreateError(Exception):
    """A failure of the special claim's writes (the pod's PreBind Error)."""


def find_extended_resource_claim(pod: Pod, claims: Any) -> ResourceClaim | None:
    """``findExtendedResourceClaim``: the claim with the annotation whose controller is the pod."""
    md = pod.metadata
    for c in claims:
        if c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
            for ref in c.metadata.owner_references:
                if ref.name == md.name and ref.controller and ref.uid == md.uid:
                    return c  # type: ignore[no-any-return]
    return None


__all__ = [
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "MSG_CANNOT_FIT",
    "MSG_CANNOT_SCHEDULE_CLAIM",
    "MSG_DELETED",
    "SPECIAL_CLAIM_IN_MEM_NAME",
    "ClaimCreateError",
    "ExtendedResources",
    "ExtendedState",
    "bind_extended",
    "delete_extended",
    "filter_extended",
    "find_extended_resource_claim",
    "listed_claims",
    "unreserve_extended",
    "with_special_claim",
]
