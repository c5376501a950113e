"""Builders for the allocator table, named as upstream's test helpers are
(k8s.io/dynamic-resource-allocation v0.36.2 structured/internal/allocatortesting/
allocator_testing.go), so each ported case reads as its upstream row.  They build kubesched's
resource.k8s.io/v1 Structs; wrappers carry the ``with...`` modifiers."""

from __future__ import annotations

import copy
import re
from typing import Any

import msgspec

from kubesched.api._dra import (
    AllocationResult as _AllocationResult,
)
from kubesched.api._dra import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CapacityRequirements,
    Counter,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceClassConfiguration,
    DeviceCounterConsumption,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from kubesched.api._dra import (
    CELDeviceSelector as _CELDeviceSelector,
)
from kubesched.api._dra import (
    CounterSet as _CounterSet,
)
from kubesched.api._dra import (
    Device as _Device,
)
from kubesched.api._dra import (
    DeviceAllocationConfiguration as _DeviceAllocationConfiguration,
)
from kubesched.api._dra import (
    DeviceAllocationResult as _DeviceAllocationResult,
)
from kubesched.api._dra import (
    DeviceAttribute as _DeviceAttribute,
)
from kubesched.api._dra import (
    DeviceClass as _DeviceClass,
)
from kubesched.api._dra import (
    DeviceClassSpec as _DeviceClassSpec,
)
from kubesched.api._dra import (
    DeviceConstraint as _DeviceConstraint,
)
from kubesched.api._dra import (
    DeviceRequest as _DeviceRequest,
)
from kubesched.api._dra import (
    DeviceSelector as _DeviceSelector,
)
from kubesched.api._dra import (
    DeviceTaint as _DeviceTaint,
)
from kubesched.api._dra import (
    DeviceToleration as _DeviceToleration,
)
from kubesched.api._dra import (
    ExactDeviceRequest as _ExactDeviceRequest,
)
from kubesched.api._objects import Node
from kubesched.api._objects import NodeSelector as _NodeSelector
from kubesched.api._objects import NodeSelectorRequirement as _NodeSelectorRequirement
from kubesched.api._objects import NodeSelectorTerm as _NodeSelectorTerm
from kubesched.api._objects import ObjectMeta as _ObjectMeta
from kubesched.api._resources import parse_quantity
from kubesched.dra._allocator import AllocatorFeatures

region1, region2 = "region-1", "region-2"
node1, node2 = "node-1", "node-2"
classA, classB = "class-a", "class-b"
driverA, driverB = "driver-a", "driver-b"
pool1, pool2, pool3, pool4 = "pool-1", "pool-2", "pool-3", "pool-4"
req0, req1, req2, req3 = "req-0", "req-1", "req-2", "req-3"
subReq0, subReq1 = "subReq-0", "subReq-1"
req0SubReq0, req0SubReq1 = "req-0/subReq-0", "req-0/subReq-1"
req1SubReq0, req1SubReq1 = "req-1/subReq-0", "req-1/subReq-1"
req2SubReq0, req2SubReq1 = "req-2/subReq-0", "req-2/subReq-1"
claim0, claim1 = "claim-0", "claim-1"
slice1, slice2, slice3, slice4 = "slice-1", "slice-2", "slice-3", "slice-4"
device0, device1, device2, device3, device4 = (
    "device-0",
    "device-1",
    "device-2",
    "device-3",
    "device-4",
)
counterSet1, counterSet2 = "counter-set-1", "counter-set-2"
capacity0, capacity1 = "capacity-0", "capacity-1"
fieldNameKey, regionKey, planetKey, planetValueEarth = "metadata.name", "region", "planet", "earth"
fromCounters = "fromCounters"
nodeSelectionAll, nodeSelectionPerDevice = "nodeSelectionAll", "nodeSelectionPerDevice"
fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
zero, one, two, three, four = "0", "1", "2", "3", "4"

# the variables TestAllocator declares
nonExistentAttribute = driverA + "/NonExistentAttribute"
boolAttribute = driverA + "/boolAttribute"
stringAttribute = driverA + "/stringAttribute"
versionAttribute = driverA + "/driverVersion"
intAttribute = driverA + "/numa"
taintKey, taintValue, taintValue2 = "taint-key", "taint-value", "taint-value-2"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _go(cls: type[Any], **kw: Any) -> Any:
    """A Struct from Go field names (``DeviceClassName=`` → ``device_class_name``)."""
    out: dict[str, Any] = {}
    for k, v in kw.items():
        if k == "DeviceConfiguration":  # Go embeds it; kubesched's Structs carry its fields
            out["opaque"] = v.opaque
            continue
        out[{"CEL": "cel", "ShareID": "share_id", "ObjectMeta": "metadata"}.get(k, _snake(k))] = v
    return cls(**out)


def Features(**kw: bool) -> AllocatorFeatures:  # noqa: N802
    names = {
        "AdminAccess": "admin_access",
        "PrioritizedList": "prioritized_list",
        "PartitionableDevices": "partitionable_devices",
        "DeviceTaints": "device_taints",
        "DeviceBindingAndStatus": "binding_conditions",
        "ConsumableCapacity": "consumable_capacity",
        "ListTypeAttributes": "list_type_attributes",
    }
    return AllocatorFeatures(**{names[k]: v for k, v in kw.items()})


def DeviceAttribute(**kw: Any) -> _DeviceAttribute:
    return _go(_DeviceAttribute, **kw)


def DeviceSelector(**kw: Any) -> _DeviceSelector:
    return _go(_DeviceSelector, **kw)


def CELDeviceSelector(**kw: Any) -> _CELDeviceSelector:
    return _go(_CELDeviceSelector, **kw)


def DeviceConstraint(**kw: Any) -> _DeviceConstraint:
    return _go(_DeviceConstraint, **kw)


def DeviceTaint(**kw: Any) -> _DeviceTaint:
    return _go(_DeviceTaint, **kw)


def DeviceToleration(**kw: Any) -> _DeviceToleration:
    return _go(_DeviceToleration, **kw)


def ExactDeviceRequest(**kw: Any) -> _ExactDeviceRequest:
    return _go(_ExactDeviceRequest, **kw)


def DeviceRequest(**kw: Any) -> _DeviceRequest:
    return _go(_DeviceRequest, **kw)


def NodeSelectorRequirement(**kw: Any) -> _NodeSelectorRequirement:
    return _go(_NodeSelectorRequirement, **kw)


def NodeSelectorTerm(**kw: Any) -> _NodeSelectorTerm:
    return _go(_NodeSelectorTerm, **kw)


def NodeSelector(**kw: Any) -> _NodeSelector:
    return _go(_NodeSelector, **kw)


def ObjectMeta(**kw: Any) -> _ObjectMeta:
    return _go(_ObjectMeta, **kw)


def DeviceClassSpec(**kw: Any) -> _DeviceClassSpec:
    return _go(_DeviceClassSpec, **kw)


def DeviceClass(**kw: Any) -> _DeviceClass:
    return _go(_DeviceClass, **kw)


def DeviceAllocationConfiguration(**kw: Any) -> _DeviceAllocationConfiguration:
    return _go(_DeviceAllocationConfiguration, **kw)


def DeviceAllocationResult(**kw: Any) -> _DeviceAllocationResult:
    return _go(_DeviceAllocationResult, **kw)


def AllocationResult(**kw: Any) -> _AllocationResult:
    return _go(_AllocationResult, **kw)


def CounterSet(**kw: Any) -> _CounterSet:
    return _go(_CounterSet, **kw)


def sprintf(fmt: str, *args: Any) -> str:
    def conv(a: Any) -> Any:
        return ("true" if a else "false") if isinstance(a, bool) else a

    return fmt.replace("%v", "%s") % tuple(conv(a) for a in args)


def int64(v: int) -> int:
    return v


def objects(*objs: Any) -> list[Any]:
    return list(objs)


def unwrap(*objs: Any) -> list[Any]:
    return [o.obj() if hasattr(o, "obj") else o for o in objs]


unwrapResourceSlices = unwrap


def MakeDeviceID(driver: str, pool: str, device: str) -> tuple[str, str, str]:
    return (driver, pool, device)


def gomega_ContainSubstring(s: str) -> str:
    return s


def gomega_MatchError(s: str) -> str:
    return s


def node(name: str, region: str) -> Node:
    return Node(
        metadata=_ObjectMeta(name=name, labels={regionKey: region, planetKey: planetValueEarth})
    )


def class_(name: str, driver: str) -> _DeviceClass:
    return _DeviceClass(
        metadata=_ObjectMeta(name=name),
        spec=_DeviceClassSpec(
            selectors=[
                _DeviceSelector(cel=_CELDeviceSelector(expression=f'device.driver == "{driver}"'))
            ]
        ),
    )


def classWithAllowMultipleAllocations(name: str, driver: str, multialloc: bool) -> _DeviceClass:
    expr = f'device.driver == "{driver}" && device.allowMultipleAllocations == {"true" if multialloc else "false"}'
    return _DeviceClass(
        metadata=_ObjectMeta(name=name),
        spec=_DeviceClassSpec(selectors=[_DeviceSelector(cel=_CELDeviceSelector(expression=expr))]),
    )


def deviceConfiguration(driver: str, attribute: str) -> DeviceClaimConfiguration:
    return DeviceClaimConfiguration(
        opaque=OpaqueDeviceConfiguration(driver=driver, parameters={attribute: attribute + "Value"})
    )


def classWithConfig(name: str, driver: str, attribute: str) -> _DeviceClass:
    c = class_(name, driver)
    c.spec.config = [DeviceClassConfiguration(opaque=deviceConfiguration(driver, attribute).opaque)]
    return c


class wrapResourceClaim:
    def __init__(self, o: ResourceClaim) -> None:
        self.o = o

    def obj(self) -> ResourceClaim:
        return self.o

    def _copy(self) -> wrapResourceClaim:
        return wrapResourceClaim(copy.deepcopy(self.o))

    def withTolerations(self, *tolerations: _DeviceToleration) -> wrapResourceClaim:
        out = self._copy()
        for r in out.o.spec.devices.requests:
            assert r.exactly is not None
            r.exactly.tolerations = [*r.exactly.tolerations, *tolerations]
        return out

    def withRequests(self, *requests: Any) -> wrapResourceClaim:
        out = self._copy()
        out.o.spec.devices.requests = [
            copy.deepcopy(r.obj() if hasattr(r, "obj") else r) for r in requests
        ]
        return out

    def withConstraints(self, *constraints: _DeviceConstraint) -> wrapResourceClaim:
        out = self._copy()
        out.o.spec.devices.constraints = list(constraints)
        return out

    def withConfigs(self, configs: list[DeviceClaimConfiguration]) -> wrapResourceClaim:
        out = self._copy()
        out.o.spec.devices.config = list(configs)
        return out


def claimWithRequests(
    name: str, constraints: list[_DeviceConstraint] | None, *requests: Any
) -> wrapResourceClaim:
    c = ResourceClaim(metadata=_ObjectMeta(name=name))
    c.spec.devices.requests = [copy.deepcopy(r.obj() if hasattr(r, "obj") else r) for r in requests]
    c.spec.devices.constraints = list(constraints or [])
    return wrapResourceClaim(c)


def request(name: str, cls: str, count: int, *selectors: _DeviceSelector) -> _DeviceRequest:
    return _DeviceRequest(
        name=name,
        exactly=_ExactDeviceRequest(
            count=count,
            allocation_mode="ExactCount",
            device_class_name=cls,
            selectors=list(selectors),
        ),
    )


class wrapDeviceRequest:
    def __init__(self, o: _DeviceRequest) -> None:
        self.o = o

    def obj(self) -> _DeviceRequest:
        return self.o

    def withCapacityRequest(self, quantity: str | None) -> wrapDeviceRequest:
        out = copy.deepcopy(self.o)
        assert out.exactly is not None
        out.exactly.capacity = capacityRequests(quantity)
        return wrapDeviceRequest(out)

    def withSelectors(self, *selectors: _DeviceSelector) -> wrapDeviceRequest:
        out = copy.deepcopy(self.o)
        assert out.exactly is not None
        out.exactly.selectors = list(selectors)
        return wrapDeviceRequest(out)


def deviceRequest(name: str, cls: str, count: int) -> wrapDeviceRequest:
    return wrapDeviceRequest(request(name, cls, count))


def allDeviceRequest(name: str, cls: str) -> wrapDeviceRequest:
    return wrapDeviceRequest(
        _DeviceRequest(
            name=name, exactly=_ExactDeviceRequest(allocation_mode="All", device_class_name=cls)
        )
    )


class wrapDeviceSubRequest:
    def __init__(self, o: DeviceSubRequest) -> None:
        self.o = o

    def obj(self) -> DeviceSubRequest:
        return self.o

    def withAllocationMode(self, mode: str) -> wrapDeviceSubRequest:
        out = copy.deepcopy(self.o)
        out.allocation_mode = mode
        return wrapDeviceSubRequest(out)

    def withCapacityRequest(self, quantity: str | None) -> wrapDeviceSubRequest:
        out = copy.deepcopy(self.o)
        out.capacity = capacityRequests(quantity)
        return wrapDeviceSubRequest(out)


def subRequest(name: str, cls: str, count: int, *fields: Any) -> wrapDeviceSubRequest:
    sub = DeviceSubRequest(
        name=name, count=count, allocation_mode="ExactCount", device_class_name=cls
    )
    for f in fields:
        if isinstance(f, _DeviceSelector):
            sub.selectors.append(f)
        elif isinstance(f, _DeviceToleration):
            sub.tolerations.append(f)
        else:
            raise TypeError(f"unsupported field for DeviceSubRequest: {f!r}")
    return wrapDeviceSubRequest(sub)


def requestWithPrioritizedList(name: str, *subs: wrapDeviceSubRequest) -> wrapDeviceRequest:
    return wrapDeviceRequest(
        _DeviceRequest(name=name, first_available=[copy.deepcopy(s.obj()) for s in subs])
    )


def claimWithRequest(
    name: str, req: str, cls: str, *constraints: _DeviceConstraint
) -> wrapResourceClaim:
    return claimWithRequests(name, list(constraints), request(req, cls, 1))


def claim(name: str) -> wrapResourceClaim:
    return wrapResourceClaim(ResourceClaim(metadata=_ObjectMeta(name=name)))


def claimWithDeviceConfig(
    name: str, req: str, cls: str, driver: str, attribute: str
) -> wrapResourceClaim:
    c = claimWithRequest(name, req, cls)
    c.o.spec.devices.config = [deviceConfiguration(driver, attribute)]
    return c


def deviceClaimConfig(
    requests: list[str], config: DeviceClaimConfiguration
) -> DeviceClaimConfiguration:
    return DeviceClaimConfiguration(requests=list(requests), opaque=config.opaque)


class wrapDevice:
    def __init__(self, o: _Device, from_counters: bool = False) -> None:
        self.o = o
        self.from_counters = from_counters

    def obj(self) -> _Device:
        return self.o

    def _copy(self) -> _Device:
        return copy.deepcopy(self.o)

    def withTaints(self, *taints: _DeviceTaint) -> wrapDevice:
        d = self._copy()
        d.taints = [*d.taints, *taints]
        return wrapDevice(d)

    def withDeviceCounterConsumption(self, *uses: DeviceCounterConsumption) -> wrapDevice:
        d = self._copy()
        d.consumes_counters = [*d.consumes_counters, *uses]
        if self.from_counters:
            d.capacity = {
                name: DeviceCapacity(value=c.value)
                for u in d.consumes_counters
                for name, c in u.counters.items()
            }
        return wrapDevice(d)

    def withNodeSelection(self, selection: Any) -> wrapDevice:
        d = self._copy()
        if isinstance(selection, _NodeSelector):
            d.node_selector = selection
        elif selection == nodeSelectionAll:
            d.all_nodes = True
        else:
            d.node_name = selection
        return wrapDevice(d)

    def withBindingConditions(
        self, conditions: list[str] | None, failure: list[str] | None
    ) -> wrapDevice:
        d = self._copy()
        d.binding_conditions = list(conditions or [])
        d.binding_failure_conditions = list(failure or [])
        return wrapDevice(d)

    def withBindsToNode(self, binds: bool) -> wrapDevice:
        d = self._copy()
        d.binds_to_node = binds
        return wrapDevice(d)

    def withAllowMultipleAllocations(self) -> wrapDevice:
        d = self._copy()
        d.allow_multiple_allocations = True
        return wrapDevice(d)

    def withCapacityRequestPolicyRange(self, capacity: dict[str, str]) -> wrapDevice:
        d = self._copy()
        d.capacity = dict(d.capacity)
        for name, q in capacity.items():
            d.capacity[name] = DeviceCapacity(
                value=q,
                request_policy=CapacityRequestPolicy(
                    default=two, valid_range=CapacityRequestPolicyRange(min=two, step=two, max=four)
                ),
            )
        return wrapDevice(d)

    def withCapacityRequestPolicyValidValues(
        self, default: str, capacity: dict[str, str], additional: list[str] | None
    ) -> wrapDevice:
        d = self._copy()
        d.capacity = dict(d.capacity)
        for name, q in capacity.items():
            d.capacity[name] = DeviceCapacity(
                value=q,
                request_policy=CapacityRequestPolicy(
                    default=default, valid_values=[default, *(additional or [])]
                ),
            )
        return wrapDevice(d)


def device(name: str, capacity: Any, attributes: dict[str, _DeviceAttribute] | None) -> wrapDevice:
    d = _Device(name=name, attributes=dict(attributes or {}))
    if isinstance(capacity, dict):
        d.capacity = {k: DeviceCapacity(value=v) for k, v in capacity.items()}
        return wrapDevice(d)
    return wrapDevice(d, from_counters=capacity == fromCounters)


def deviceCounterConsumption(
    counter_set: str, counters: dict[str, str]
) -> DeviceCounterConsumption:
    return DeviceCounterConsumption(
        counter_set=counter_set, counters={k: Counter(value=v) for k, v in (counters or {}).items()}
    )


def slice_(name: str, node_selection: Any, pool: Any, driver: str) -> ResourceSlice:
    rp = (
        pool
        if isinstance(pool, ResourcePool)
        else ResourcePool(name=pool, resource_slice_count=1, generation=1)
    )
    s = ResourceSlice(metadata=_ObjectMeta(name=name))
    s.spec.driver = driver
    s.spec.pool = copy.deepcopy(rp)
    if isinstance(node_selection, _NodeSelector):
        s.spec.node_selector = node_selection
    elif node_selection == nodeSelectionAll:
        s.spec.all_nodes = True
    elif node_selection == nodeSelectionPerDevice:
        s.spec.per_device_node_selection = True
    else:
        s.spec.node_name = node_selection
    return s


class wrapSlice:
    def __init__(self, o: ResourceSlice) -> None:
        self.o = o

    def obj(self) -> ResourceSlice:
        return self.o


def sliceWithDevices(
    name: str, node_selection: Any, pool: Any, driver: str, *devices: wrapDevice
) -> wrapSlice:
    s = slice_(name, node_selection, pool, driver)
    s.spec.devices = [copy.deepcopy(d.obj()) for d in devices]
    return wrapSlice(s)


def sliceWithCounterSets(
    name: str, node_selection: Any, pool: Any, driver: str, *sets: _CounterSet
) -> wrapSlice:
    s = slice_(name, node_selection, pool, driver)
    s.spec.shared_counters = list(sets)
    return wrapSlice(s)


def sliceWithNoDevices(name: str, node_selection: Any, pool: Any, driver: str) -> wrapSlice:
    return sliceWithDevices(name, node_selection, pool, driver)


def sliceWithOneDevice(name: str, node_selection: Any, pool: Any, driver: str) -> wrapSlice:
    return sliceWithDevices(name, node_selection, pool, driver, device(device1, None, None))


def sliceWithMultipleDevices(
    name: str, node_selection: Any, pool: Any, driver: str, count: int
) -> wrapSlice:
    return sliceWithDevices(
        name,
        node_selection,
        pool,
        driver,
        *(device(f"device-{i}", None, None) for i in range(count)),
    )


def resourcePool(name: str, count: int) -> ResourcePool:
    return ResourcePool(name=name, resource_slice_count=count, generation=1)


def counterSet(name: str, counters: dict[str, str]) -> _CounterSet:
    return _CounterSet(
        name=name, counters={k: Counter(value=v) for k, v in (counters or {}).items()}
    )


def deviceAllocationResult(
    req: str, driver: str, pool: str, dev: str, admin_access: bool, *tolerations: _DeviceToleration
) -> DeviceRequestAllocationResult:
    return DeviceRequestAllocationResult(
        request=req,
        driver=driver,
        pool=pool,
        device=dev,
        tolerations=list(tolerations),
        admin_access=True if admin_access else None,
    )


class wrapDeviceRequestAllocationResult:
    def __init__(self, o: DeviceRequestAllocationResult) -> None:
        self.o = o

    def obj(self) -> DeviceRequestAllocationResult:
        return self.o

    def withConsumedCapacity(
        self, share_id: str | None, consumed: dict[str, str] | None
    ) -> DeviceRequestAllocationResult:
        out = copy.deepcopy(self.o)
        out.share_id = share_id
        out.consumed_capacity = dict(consumed or {})
        return out


def deviceRequestAllocationResult(
    req: str, driver: str, pool: str, dev: str
) -> wrapDeviceRequestAllocationResult:
    return wrapDeviceRequestAllocationResult(
        DeviceRequestAllocationResult(request=req, driver=driver, pool=pool, device=dev)
    )


def deviceRequestAllocationResultWithBindingConditions(
    req: str,
    driver: str,
    pool: str,
    dev: str,
    conditions: list[str] | None,
    failure: list[str] | None,
    *tolerations: Any,
) -> DeviceRequestAllocationResult:
    return DeviceRequestAllocationResult(
        request=req,
        driver=driver,
        pool=pool,
        device=dev,
        binding_conditions=list(conditions or []),
        binding_failure_conditions=list(failure or []),
        tolerations=list(tolerations),
    )


def capacityRequests(q: str | None) -> CapacityRequirements:
    return CapacityRequirements(requests=requirements(q))


def requirements(q: str | None) -> dict[str, str]:
    return {capacity0: q} if q is not None else {}


def multipleDeviceAllocationResults(
    req: str, driver: str, pool: str, count: int, start: int
) -> list[Any]:
    return [
        deviceAllocationResult(req, driver, pool, f"device-{i}", False)
        for i in range(start, start + count)
    ]


def nodeLabelSelector(key: str, *values: str) -> _NodeSelector:
    return _NodeSelector(
        node_selector_terms=[
            _NodeSelectorTerm(
                match_expressions=[
                    _NodeSelectorRequirement(key=key, operator="In", values=list(values))
                ]
            )
        ]
    )


def localNodeSelector(name: str) -> _NodeSelector:
    return _NodeSelector(
        node_selector_terms=[
            _NodeSelectorTerm(
                match_fields=[
                    _NodeSelectorRequirement(key=fieldNameKey, operator="In", values=[name])
                ]
            )
        ]
    )


def allocationResult(
    selector: _NodeSelector | None, *results: DeviceRequestAllocationResult
) -> _AllocationResult:
    return _AllocationResult(
        devices=_DeviceAllocationResult(results=list(results)), node_selector=selector
    )


def allocationResultWithConfig(
    selector: _NodeSelector | None,
    driver: str,
    source: str,
    attribute: str,
    *results: DeviceRequestAllocationResult,
) -> _AllocationResult:
    cfg = deviceConfiguration(driver, attribute)
    return _AllocationResult(
        devices=_DeviceAllocationResult(
            results=list(results),
            config=[_DeviceAllocationConfiguration(source=source, opaque=cfg.opaque)],
        ),
        node_selector=selector,
    )


def allocationResultWithConfigs(
    selector: _NodeSelector | None, results: list[DeviceRequestAllocationResult], configs: list[Any]
) -> _AllocationResult:
    return _AllocationResult(
        devices=_DeviceAllocationResult(results=list(results), config=list(configs)),
        node_selector=selector,
    )


def canonical(result: _AllocationResult) -> Any:
    """An AllocationResult as comparable data, with upstream's matchers' freedoms: results in
    any order (ConsistOf), node selector requirements and values in any order."""
    data = msgspec.to_builtins(result)
    devices = data.get("devices", {})
    for r in devices.get("results", []):
        if "consumedCapacity" in r:
            r["consumedCapacity"] = {
                k: str(parse_quantity(v)) for k, v in r["consumedCapacity"].items()
            }
    devices["results"] = sorted(devices.get("results", []), key=repr)
    sel = data.get("nodeSelector")
    if sel:
        for term in sel.get("nodeSelectorTerms", []):
            for k in ("matchExpressions", "matchFields"):
                reqs = term.get(k, [])
                for r in reqs:
                    r["values"] = sorted(r.get("values", []))
                term[k] = sorted(reqs, key=repr)
        sel["nodeSelectorTerms"] = sorted(sel["nodeSelectorTerms"], key=repr)
    return data


taintNone = _DeviceTaint(key=taintKey, value=taintValue, effect="None")
taintNoSchedule = _DeviceTaint(key=taintKey, value=taintValue, effect="NoSchedule")
taintNoExecute = _DeviceTaint(key=taintKey, value=taintValue2, effect="NoExecute")
tolerationNoSchedule = _DeviceToleration(operator="Exists", key=taintKey, effect="NoSchedule")
tolerationNoExecute = _DeviceToleration(
    operator="Equal", key=taintKey, value=taintValue2, effect="NoExecute"
)
tolerationNoScheduleKey1 = _DeviceToleration(operator="Exists", key="key1", effect="NoSchedule")


def ConsumedCapacity(**kw: str) -> dict[str, str]:
    """Go's ``ConsumedCapacity{capacity0: two}``: the keys are the constants' values."""
    return {globals()[k]: v for k, v in kw.items()}


internal_Stable, internal_Incubating, internal_Experimental = "stable", "incubating", "experimental"
