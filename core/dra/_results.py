"""What the allocator's search produces, turned into ``AllocationResult``s.

k8s.io/dynamic-resource-allocation v0.36.2 structured/internal/incubating/allocator_incubating.go
``Allocate`` (its result loop: device results, class then claim configuration) and
``createNodeSelector``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched._errors import KubeschedError
from kubesched.api._dra import (
    AllocationResult,
    CapacityRequirements,
    Device,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceClass,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.api._objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.dra._pools import Pool

DeviceID = tuple[str, str, str]  # (driver, pool, device)


class AllocationError(KubeschedError):
    """A claim cannot be allocated anywhere as written (upstream returns it as an error)."""


@dataclass
class Request:
    """One request or subrequest of a claim, as the search uses it (upstream's
    ``requestData`` with its accessor)."""

    name: str  # the request's (or subrequest's) own name
    parent: str  # the request holding this subrequest, "" otherwise
    class_name: str
    mode: str
    count: int
    admin_access: bool
    selectors: list[DeviceSelector]
    tolerations: list[DeviceToleration]
    capacity: CapacityRequirements | None = None
    cls: DeviceClass | None = None
    key: tuple[int, int, int] = (0, 0, 0)  # (claim, request, subrequest) indices
    num_devices: int = 0
    all_devices: list[tuple[Device, ResourceSlice, Pool]] = field(default_factory=list)

    selector_key: tuple[str, ...] = ()  # its selectors' expressions (what, with the class, selects)

    def __post_init__(self) -> None:
        self.selector_key = tuple(s.cel.expression for s in self.selectors if s.cel is not None)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass
class Result:
    """One device taken (``internalDeviceResult``)."""

    request: Request
    id: DeviceID
    device: Device
    slice: ResourceSlice
    share_id: str | None = None
    consumed: dict[str, str] = field(default_factory=dict)


def build_result(
    claim: ResourceClaim,
    chosen: list[Request],
    found: list[Result],
    node_name: str,
    *,
    binding_conditions: bool,
) -> AllocationResult:
    """One claim's ``AllocationResult``; ``chosen``: per request, the (sub)request taken."""
    results = []
    for r in found:
        out = DeviceRequestAllocationResult(
            request=r.request.full_name,
            driver=r.id[0],
            pool=r.id[1],
            device=r.id[2],
            admin_access=True if r.request.admin_access else None,
            tolerations=list(r.request.tolerations),
            share_id=r.share_id,
            consumed_capacity=dict(r.consumed),
        )
        if binding_conditions:
            out.binding_conditions = list(r.device.binding_conditions)
            out.binding_failure_conditions = list(r.device.binding_failure_conditions)
        results.append(out)
    config: list[DeviceAllocationConfiguration] = []
    class_configs: dict[str, tuple[int, int]] = {}
    for req in chosen:
        if req.cls is None:
            continue
        span = class_configs.get(req.cls.metadata.name)
        if span is not None:
            for i in range(*span):
                config[i].requests.append(req.full_name)
            continue
        start = len(config)
        for class_config in req.cls.spec.config:
            config.append(
                DeviceAllocationConfiguration(
                    source="FromClass", requests=[req.full_name], opaque=class_config.opaque
                )
            )
        class_configs[req.cls.metadata.name] = (start, len(config))
    for c in claim.spec.devices.config:
        if not c.requests:
            config.append(
                DeviceAllocationConfiguration(
                    source="FromClaim", requests=c.requests, opaque=c.opaque
                )
            )
            continue
        for ri, request in enumerate(claim.spec.devices.requests):
            if request.name in c.requests:
                config.append(
                    DeviceAllocationConfiguration(
                        source="FromClaim", requests=c.requests, opaque=c.opaque
                    )
                )
                continue
            if request.first_available and chosen[ri].full_name in c.requests:
                config.append(
                    DeviceAllocationConfiguration(
                        source="FromClaim", requests=c.requests, opaque=c.opaque
                    )
                )
    return AllocationResult(
        devices=DeviceAllocationResult(results=results, config=config),
        node_selector=node_selector(claim, found, node_name),
    )


def node_selector(
    claim: ResourceClaim, results: list[Result], node_name: str
) -> NodeSelector | None:
    """``createNodeSelector``."""
    fields: list[NodeSelectorRequirement] = []
    exprs: list[NodeSelectorRequirement] = []
    for r in results:
        spec = r.slice.spec
        if spec.per_device_node_selection:
            local, selector = r.device.node_name, r.device.node_selector
        else:
            local, selector = spec.node_name, spec.node_selector
        if local or r.device.binds_to_node:
            return NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(
                        match_fields=[
                            NodeSelectorRequirement(
                                key="metadata.name",
                                operator="In",
                                values=[node_name],
                            )
                        ]
                    )
                ]
            )
        if selector is not None:
            if len(selector.node_selector_terms) > 1:
                raise AllocationError(
                    f"create NodeSelector for claim {claim.metadata.name}: unsupported "
                    f"ResourceSlice.NodeSelector with {len(selector.node_selector_terms)} terms"
                )
            for term in selector.node_selector_terms:
                for req in term.match_fields:
                    if req not in fields:
                        fields.append(req)
                for req in term.match_expressions:
                    if req not in exprs:
                        exprs.append(req)
    if fields or exprs:
        return NodeSelector(
            node_selector_terms=[NodeSelectorTerm(match_expressions=exprs, match_fields=fields)]
        )
    return None
