"""Builders of the resource.k8s.io objects for tests, in :mod:`kubesched.testing`'s style (which
re-exports them): ``make_claim("gpu").request("gpu.example.com", count=2).obj()``, as upstream's
scheduler test wrappers (``st.MakeResourceClaim()``, ``st.MakeResourceSlice(node, driver)``)
build them.

- :func:`make_claim` → :class:`ClaimBuilder`: requests (``exactly`` or ``firstAvailable``),
  constraints, an allocation (device results, optionally on one node), ``reservedFor``, its
  owner, the builtin finalizer, a deletion under way.
- :func:`make_slice` → :class:`SliceBuilder`: a pool of devices on one node (or all nodes),
  devices with typed attributes (an ``int``, a ``bool``, a ``str``, or a :class:`SemVer`),
  capacities, taints; shared counters.
- :func:`make_device_class`: a DeviceClass with CEL selectors.
- :func:`make_claim_template`: a ResourceClaimTemplate of one request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.api._dra import (
    FINALIZER,
    AllocationResult,
    CELDeviceSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from kubesched.api._objects import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    uid_for,
)

__all__ = [
    "ClaimBuilder",
    "RecordingClaimCreates",
    "SliceBuilder",
    "SemVer",
    "make_claim",
    "make_claim_template",
    "make_device_class",
    "make_slice",
    "node_selector_for",
]


@dataclass(frozen=True)
class SemVer:
    """A device attribute of the ``version`` type (semver), as opposed to a plain string."""

    value: str


def _selectors(expressions: tuple[str, ...]) -> list[DeviceSelector]:
    return [DeviceSelector(cel=CELDeviceSelector(expression=e)) for e in expressions]


def _attribute(value: Any) -> DeviceAttribute:
    if isinstance(value, DeviceAttribute):
        return value
    if isinstance(value, bool):
        return DeviceAttribute(bool_value=value)
    if isinstance(value, int):
        return DeviceAttribute(int_value=value)
    if isinstance(value, SemVer):
        return DeviceAttribute(version_value=value.value)
    if isinstance(value, str):
        return DeviceAttribute(string_value=value)
    raise TypeError(f"a device attribute is an int, bool, str or SemVer, not {value!r}")


def node_selector_for(node: str) -> NodeSelector:
    """The allocation's node selector of a node-local device: ``metadata.name In [node]`` (as
    the allocator writes it)."""
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=[node])
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[req])])


class ClaimBuilder:
    """A fluent ResourceClaim builder; ``obj()`` returns the claim."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._claim = ResourceClaim(
            metadata=ObjectMeta(name=name, namespace=namespace, uid=uid_for(namespace, "claim/" + name)),
            spec=ResourceClaimSpec(devices=DeviceClaim()),
        )

    def obj(self) -> ResourceClaim:
        return self._claim

    def uid(self, uid: str) -> ClaimBuilder:
        self._claim.metadata.uid = uid
        return self

    def request(
        self,
        device_class: str,
        *selectors: str,
        name: str = "",
        count: int | None = None,
        all_devices: bool = False,
        admin_access: bool | None = None,
        tolerations: list[DeviceToleration] | None = None,
    ) -> ClaimBuilder:
        """Add an ``exactly`` request (named ``req-<i>`` unless ``name``) of ``count`` devices
        (default 1) of ``device_class`` matching the CEL ``selectors``, or ``all_devices``."""
        devices = self._claim.spec.devices
        exact = ExactDeviceRequest(
            device_class_name=device_class,
            selectors=_selectors(selectors),
            allocation_mode="All" if all_devices else "ExactCount",
            count=0 if all_devices else (1 if count is None else count),
            admin_access=admin_access,
            tolerations=list(tolerations or []),
        )
        devices.requests = [*devices.requests, DeviceRequest(name=name or f"req-{len(devices.requests)}", exactly=exact)]
        return self

    def first_available(self, name: str, *subrequests: tuple[str, str] | DeviceSubRequest) -> ClaimBuilder:
        """Add a prioritized list: each subrequest a (name, device class) of one device, or a
        :class:`~kubesched.api.DeviceSubRequest`."""
        subs = [s if isinstance(s, DeviceSubRequest) else DeviceSubRequest(name=s[0], device_class_name=s[1]) for s in subrequests]
        devices = self._claim.spec.devices
        devices.requests = [*devices.requests, DeviceRequest(name=name, first_available=subs)]
        return self

    def match_attribute(self, attribute: str, *requests: str) -> ClaimBuilder:
        """Add a ``matchAttribute`` constraint over ``requests`` (all of them when none)."""
        c = DeviceConstraint(requests=list(requests), match_attribute=attribute)
        self._claim.spec.devices.constraints = [*self._claim.spec.devices.constraints, c]
        return self

    def distinct_attribute(self, attribute: str, *requests: str) -> ClaimBuilder:
        c = DeviceConstraint(requests=list(requests), distinct_attribute=attribute)
        self._claim.spec.devices.constraints = [*self._claim.spec.devices.constraints, c]
        return self

    def allocation(self, *results: tuple[str, str, str, str], node: str | None = None) -> ClaimBuilder:
        """Set the allocation: each result a (request, driver, pool, device); on ``node`` (a
        node selector of its name) or anywhere (None)."""
        res = [DeviceRequestAllocationResult(request=r, driver=d, pool=p, device=v) for r, d, p, v in results]
        self._claim.status.allocation = AllocationResult(
            devices=DeviceAllocationResult(results=res),
            node_selector=None if node is None else node_selector_for(node),
        )
        return self

    def reserved_for(self, *pods: Pod | tuple[str, str]) -> ClaimBuilder:
        """Add consumers: pods, or (name, uid) of pods."""
        refs = [
            ResourceClaimConsumerReference(resource="pods", name=p.metadata.name, uid=p.metadata.uid)
            if isinstance(p, Pod)
            else ResourceClaimConsumerReference(resource="pods", name=p[0], uid=p[1])
            for p in pods
        ]
        self._claim.status.reserved_for = [*self._claim.status.reserved_for, *refs]
        return self

    def owned_by(self, pod: Pod, pod_claim_name: str = "") -> ClaimBuilder:
        """Made for ``pod`` (its controller owner reference), from its entry ``pod_claim_name``
        (the ``resource.kubernetes.io/pod-claim-name`` annotation) when given."""
        md = self._claim.metadata
        md.owner_references = [
            OwnerReference(api_version="v1", kind="Pod", name=pod.metadata.name, uid=pod.metadata.uid, controller=True, block_owner_deletion=True)
        ]
        if pod_claim_name:
            md.annotations = {**md.annotations, "resource.kubernetes.io/pod-claim-name": pod_claim_name}
        return self

    def finalizer(self) -> ClaimBuilder:
        """The builtin ``resource.kubernetes.io/delete-protection`` finalizer (an allocation the
        scheduler made)."""
        self._claim.metadata.finalizers = [*self._claim.metadata.finalizers, FINALIZER]
        return self

    def deleting(self, ts: str = "1970-01-01T00:00:01Z") -> ClaimBuilder:
        self._claim.metadata.deletion_timestamp = ts
        return self


class SliceBuilder:
    """A fluent ResourceSlice builder: one pool on one node (or on all nodes); ``obj()``."""

    def __init__(self, node: str | None, driver: str, pool: str = "", generation: int = 1, slice_count: int = 1) -> None:
        pool = pool or node or "pool"
        self._slice = ResourceSlice(
            metadata=ObjectMeta(name=f"{node or pool}-{driver}"),
            spec=ResourceSliceSpec(
                driver=driver,
                pool=ResourcePool(name=pool, generation=generation, resource_slice_count=slice_count),
                node_name=node,
                all_nodes=None if node else True,
            ),
        )

    def obj(self) -> ResourceSlice:
        return self._slice

    def name(self, name: str) -> SliceBuilder:
        self._slice.metadata.name = name
        return self

    def device(
        self,
        name: str,
        attributes: dict[str, Any] | None = None,
        capacity: dict[str, Any] | None = None,
        *,
        taints: list[DeviceTaint] | None = None,
        consumes: dict[str, dict[str, Any]] | None = None,
        multiple_allocations: bool | None = None,
    ) -> SliceBuilder:
        """Add a device: ``attributes`` by name (int, bool, str or :class:`SemVer`),
        ``capacity`` by name (quantities), ``consumes`` a counter set → counters."""
        dev = Device(
            name=name,
            attributes={k: _attribute(v) for k, v in (attributes or {}).items()},
            capacity={k: DeviceCapacity(value=v) for k, v in (capacity or {}).items()},
            taints=list(taints or []),
            allow_multiple_allocations=multiple_allocations,
        )
        if consumes:
            dev.consumes_counters = [
                DeviceCounterConsumption(counter_set=cs, counters={k: Counter(value=v) for k, v in counters.items()})
                for cs, counters in consumes.items()
            ]
        self._slice.spec.devices = [*self._slice.spec.devices, dev]
        return self

    def devices(self, *names: str) -> SliceBuilder:
        """Add devices with no attributes."""
        for n in names:
            self.device(n)
        return self

    def shared_counters(self, name: str, **counters: Any) -> SliceBuilder:
        cs = CounterSet(name=name, counters={k: Counter(value=v) for k, v in counters.items()})
        self._slice.spec.shared_counters = [*self._slice.spec.shared_counters, cs]
        return self


def make_claim(name: str, namespace: str = "default") -> ClaimBuilder:
    return ClaimBuilder(name, namespace)


def make_slice(node: str | None, driver: str, pool: str = "", generation: int = 1, slice_count: int = 1) -> SliceBuilder:
    """A slice of ``driver``'s pool (named after ``node`` unless ``pool``) on ``node``, or on all
    nodes when ``node`` is None."""
    return SliceBuilder(node, driver, pool, generation, slice_count)


def make_device_class(name: str, *selectors: str, extended_resource_name: str | None = None) -> DeviceClass:
    """A DeviceClass selecting devices by the CEL ``selectors`` (serving the extended resource
    ``extended_resource_name`` when given: DRAExtendedResource)."""
    spec = DeviceClassSpec(selectors=_selectors(selectors), extended_resource_name=extended_resource_name)
    return DeviceClass(metadata=ObjectMeta(name=name), spec=spec)


def make_claim_template(name: str, device_class: str, namespace: str = "default", *, count: int = 1, request: str = "req-0") -> ResourceClaimTemplate:
    """A ResourceClaimTemplate of one request of ``count`` devices of ``device_class``."""
    exact = ExactDeviceRequest(device_class_name=device_class, count=count)
    spec = ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(name=request, exactly=exact)]))
    return ResourceClaimTemplate(metadata=ObjectMeta(name=name, namespace=namespace), spec=ResourceClaimTemplateSpec(spec=spec))


class RecordingClaimCreates:
    """:class:`kubesched.testing.RecordingClient`'s writes of DynamicResources' claim for a pod's
    extended resources: ``("create", claim)`` in ``claims`` (named ``<generateName>xxxxx``,
    with a uid, as the API server would), the pods' statuses in ``extended_statuses``."""

    claims: list[tuple[str, ResourceClaim]]
    extended_statuses: list[tuple[str, str, Any]]

    def _check(self, verb: str, namespace: str, name: str) -> None:  # pragma: no cover - the client's
        raise NotImplementedError

    async def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        from msgspec.structs import replace

        meta = claim.metadata
        name = meta.name or meta.generate_name + "xxxxx"
        self._check("create_claim", meta.namespace, name)
        created = replace(claim, metadata=replace(meta, name=name, uid=meta.uid or f"uid-{name}", resource_version="1"))
        self.claims.append(("create", created))
        return created

    async def patch_pod_extended_resource_claim_status(self, namespace: str, name: str, status: Any) -> None:
        self._check("patch_extended", namespace, name)
        self.extended_statuses.append((namespace, name, status))
