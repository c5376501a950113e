# ruff: noqa: F405
"""The structured allocator against upstream's table: k8s.io/dynamic-resource-allocation v0.36.2
structured/internal/allocatortesting/allocator_testing.go ``TestAllocator``, each case run on
the variants that support its features as upstream's ``RunTestAllocator`` does (ids
``TestAllocator_<variant>_<case>``): all 215 cases, on stable, incubating and experimental.

Why one file: the rows are upstream's table, ported row by row (with upstream's helper names,
see ``_alloc_builders``).
"""

from __future__ import annotations

import copy
import random
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _alloc_builders import *  # noqa: E402, F403
from _alloc_builders import canonical, node  # noqa: E402

from kubesched.api._resources import parse_quantity  # noqa: E402
from kubesched.dra._allocator import (  # noqa: E402
    AllocatedState,
    AllocationError,
    Allocator,
    AllocatorFeatures,
)


def concat(*lists: list[Any]) -> list[Any]:
    return [x for part in lists for x in part]


# fmt: off
CASES: dict[str, dict[str, Any]] = {
    "empty": dict(
    ),
    "simple": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "other-node": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverB), sliceWithOneDevice(slice2, node2, pool2, driverA)),
        node=node(node2, region2),
        expectResults=[allocationResult(localNodeSelector(node2), deviceAllocationResult(req0, driverA, pool2, device1, False))],
    ),
    "small-and-large": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)))), request(req1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "1Gi"}, None), device(device2, {"memory": "2Gi"}, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1, driverA, pool1, device2, False))],
    ),
    "small-and-large-backtrack-requests": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)))), request(req1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device2, {"memory": "2Gi"}, None), device(device1, {"memory": "1Gi"}, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1, driverA, pool1, device2, False))],
    ),
    "small-and-large-backtrack-claims": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA))))), claimWithRequests(claim1, None, request(req1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device2, {"memory": "2Gi"}, None), device(device1, {"memory": "1Gi"}, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)), allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverA, pool1, device2, False))],
    ),
    "devices-split-across-different-slices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(Count=2, AllocationMode="ExactCount", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice2, node1, pool2, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool2, device1, False))],
    ),
    "no-slices": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    ),
    "not-enough-suitable-devices": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req1, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "no-classes": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=None,
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("could not retrieve device class class-a")),
    ),
    "unknown-class": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, "unknown-class")),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("could not retrieve device class unknown-class")),
    ),
    "empty-class": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, "")),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("claim claim-0, request req-0: missing device class name (unsupported request type?)")),
    ),
    "no-claims-to-allocate": dict(
        claimsToAllocate=None,
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-single": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "all-devices-with-consumed-counters": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "all-devices-many": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice1, node1, pool2, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool2, device1, False))],
    ),
    "all-devices-plus-another": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA))), claimWithRequests(claim1, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="ExactCount", Count=1, DeviceClassName=classB)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice1, node1, pool1, driverB)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)), allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False))],
    ),
    "all-devices-plus-another-reversed": dict(
        claimsToAllocate=objects(claimWithRequests(claim1, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="ExactCount", Count=1, DeviceClassName=classB))), claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice1, node1, pool1, driverB)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)), allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "all-devices-many-plus-another": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA))), claimWithRequests(claim1, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="ExactCount", Count=1, DeviceClassName=classB)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)), sliceWithOneDevice(slice1, node1, pool1, driverB)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False)), allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False))],
    ),
    "all-devices-many-plus-another-reversed": dict(
        claimsToAllocate=objects(claimWithRequests(claim1, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="ExactCount", Count=1, DeviceClassName=classB))), claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)), sliceWithOneDevice(slice1, node1, pool1, driverB)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)), allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "all-devices-no-solution": dict(
        claimsToAllocate=objects(claimWithRequests(claim1, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="ExactCount", Count=1, DeviceClassName=classA))), claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
    ),
    "all-devices-no-solution-reversed": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA))), claimWithRequests(claim1, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="ExactCount", Count=1, DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
    ),
    "all-devices-slice-without-devices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithNoDevices(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-no-slices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-some-allocated": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "network-attached-device": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(nodeLabelSelector(regionKey, region1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "unsuccessful-allocation-network-attached-device": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)),
        node=node(node2, region2),
        expectResults=None,
    ),
    "many-network-attached-devices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 4))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA), sliceWithOneDevice(slice1, nodeSelectionAll, pool2, driverA), sliceWithOneDevice(slice1, nodeLabelSelector(planetKey, planetValueEarth), pool3, driverA), sliceWithOneDevice(slice1, localNodeSelector(node1), pool4, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(NodeSelector(NodeSelectorTerms=[NodeSelectorTerm(MatchExpressions=[NodeSelectorRequirement(Key=regionKey, Operator="In", Values=[region1]), NodeSelectorRequirement(Key=planetKey, Operator="In", Values=[planetValueEarth])], MatchFields=[NodeSelectorRequirement(Key=fieldNameKey, Operator="In", Values=[node1])])]), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool2, device1, False), deviceAllocationResult(req0, driverA, pool3, device1, False), deviceAllocationResult(req0, driverA, pool4, device1, False))],
    ),
    "local-and-network-attached-devices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA), sliceWithOneDevice(slice1, node1, pool2, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool2, device1, False))],
    ),
    "several-different-drivers": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req0, classB)),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)), sliceWithOneDevice(slice1, node1, pool1, driverB)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)), allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False))],
    ),
    "already-allocated-devices": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=intAttribute), DeviceConstraint(MatchAttribute=versionAttribute), DeviceConstraint(MatchAttribute=stringAttribute), DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0"), "numa": DeviceAttribute(IntValue=int64(1)), "stringAttribute": DeviceAttribute(StringValue="stringAttributeValue"), "boolAttribute": DeviceAttribute(BoolValue=True)}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0"), "numa": DeviceAttribute(IntValue=int64(1)), "stringAttribute": DeviceAttribute(StringValue="stringAttributeValue"), "boolAttribute": DeviceAttribute(BoolValue=True)}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1, driverA, pool1, device2, False))],
    ),
    "with-constraint-non-existent-attribute": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA, DeviceConstraint(MatchAttribute=nonExistentAttribute))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-int-attribute": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"numa": DeviceAttribute(IntValue=int64(1))}), device(device2, None, {"numa": DeviceAttribute(IntValue=int64(2))}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-string-attribute": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue2")}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-bool-attribute": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": DeviceAttribute(BoolValue=True)}), device(device2, None, {"boolAttribute": DeviceAttribute(BoolValue=False)}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-version-attribute": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=versionAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0")}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValue="2.0.0")}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-for-request": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(Requests=[req0], MatchAttribute=versionAttribute)], request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0")}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValue="2.0.0")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1, driverA, pool1, device2, False))],
    ),
    "with-constraint-for-request-retry": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(Requests=[req0], MatchAttribute=versionAttribute), DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0"), "stringAttribute": DeviceAttribute(StringValue="a")}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValue="2.0.0"), "stringAttribute": DeviceAttribute(StringValue="b")}), device(device3, None, {"driverVersion": DeviceAttribute(VersionValue="3.0.0"), "stringAttribute": DeviceAttribute(StringValue="b")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False), deviceAllocationResult(req1, driverA, pool1, device3, False))],
    ),
    "with-class-device-config": dict(
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(classWithConfig(classA, driverA, "classAttribute")),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResultWithConfigs(localNodeSelector(node1), objects(deviceAllocationResult(req0, driverA, pool1, device1, False)), [DeviceAllocationConfiguration(Source="FromClass", Requests=[req0], DeviceConfiguration=deviceConfiguration(driverA, "classAttribute"))])],
    ),
    "with-class-device-config-with-multiple-request-and-configs": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, [], request(req0, classA, 1), request(req1, classA, 1), request(req2, classB, 1))),
        classes=objects(classWithConfig(classA, driverA, "classAttribute-A"), classWithConfig(classB, driverB, "classAttribute-B")),
        slices=unwrap(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2), sliceWithOneDevice(slice2, node1, pool1, driverB)),
        node=node(node1, region1),
        expectResults=[allocationResultWithConfigs(localNodeSelector(node1), objects(deviceAllocationResult(req0, driverA, pool1, device0, False), deviceAllocationResult(req1, driverA, pool1, device1, False), deviceAllocationResult(req2, driverB, pool1, device1, False)), [DeviceAllocationConfiguration(Source="FromClass", Requests=[req0, req1], DeviceConfiguration=deviceConfiguration(driverA, "classAttribute-A")), DeviceAllocationConfiguration(Source="FromClass", Requests=[req2], DeviceConfiguration=deviceConfiguration(driverB, "classAttribute-B"))])],
    ),
    "claim-with-device-config": dict(
        claimsToAllocate=objects(claimWithDeviceConfig(claim0, req0, classA, driverA, "deviceAttribute")),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResultWithConfig(localNodeSelector(node1), driverA, "FromClaim", "deviceAttribute", deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "too-many-devices-single-request": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 500))),
        classes=objects(class_(classA, driverA)),
        expectError=gomega_MatchError(gomega_ContainSubstring("exceeds the claim limit")),
    ),
    "many-devices-okay": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 32))),
        classes=objects(class_(classA, driverA)),
    ),
    "too-many-devices-total": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 32), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32 + 1)),
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("exceeds the claim limit")),
    ),
    "all-devices-invalid-CEL": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 500))),
        classes=objects(class_(classA, driverA)),
        expectError=gomega_MatchError(gomega_ContainSubstring("exceeds the claim limit")),
    ),
    "prioritized-list-first-unavailable": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "prioritized-list-non-available": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classB, 2), subRequest(subReq1, classA, 2)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice2, node1, pool2, driverB)),
        node=node(node1, region1),
        expectResults=None,
    ),
    "prioritized-list-device-config": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 2))).withConfigs(objects(deviceClaimConfig([req0SubReq0], deviceConfiguration(driverA, "foo")), deviceClaimConfig([req0SubReq1], deviceConfiguration(driverB, "bar"))))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverB, device(device1, None, {}), device(device2, None, {}))),
        node=node(node1, region1),
        expectResults=[allocationResultWithConfigs(localNodeSelector(node1), objects(deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False), deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False)), [DeviceAllocationConfiguration(Source="FromClaim", Requests=[req0SubReq1], DeviceConfiguration=deviceConfiguration(driverB, "bar"))])],
    ),
    "prioritized-list-class-config": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 2), subRequest(subReq1, classB, 2)))),
        classes=objects(classWithConfig(classA, driverA, "foo"), classWithConfig(classB, driverB, "bar")),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverB, device(device1, None, None), device(device2, None, None)), sliceWithDevices(slice2, node1, pool2, driverA, device(device3, None, None))),
        node=node(node1, region1),
        expectResults=[allocationResultWithConfigs(localNodeSelector(node1), objects(deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False), deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False)), [DeviceAllocationConfiguration(Source="FromClass", Requests=[req0SubReq1], DeviceConfiguration=deviceConfiguration(driverB, "bar"))])],
    ),
    "prioritized-list-subrequests-with-expressions": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withSelectors(DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)))), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 2, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "2Gi"}, None), device(device2, {"memory": "2Gi"}, None), device(device3, {"memory": "1Gi"}, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device3, False), deviceAllocationResult(req1SubReq1, driverA, pool1, device1, False), deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False))],
    ),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(Requests=[req0, req1], MatchAttribute=versionAttribute)).withRequests(deviceRequest(req0, classA, 1).withSelectors(DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)))), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {"driverVersion": DeviceAttribute(VersionValue="1.0.0")})), sliceWithDevices(slice2, node1, pool2, driverA, device(device2, {"memory": "2Gi"}, {"driverVersion": DeviceAttribute(VersionValue="2.0.0")}), device(device3, {"memory": "1Gi"}, {"driverVersion": DeviceAttribute(VersionValue="1.0.0")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1SubReq1, driverA, pool2, device3, False))],
    ),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(Requests=[req0, req1SubReq0], MatchAttribute=versionAttribute)).withRequests(deviceRequest(req0, classA, 1).withSelectors(DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)))), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {"driverVersion": DeviceAttribute(VersionValue="1.0.0")})), sliceWithDevices(slice2, node1, pool2, driverA, device(device2, {"memory": "2Gi"}, {"driverVersion": DeviceAttribute(VersionValue="2.0.0")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1SubReq1, driverA, pool2, device2, False))],
    ),
    "prioritized-list-allocation-mode-all-multiple-requests": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 0).withAllocationMode("All"), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False))],
    ),
    "prioritized-list-multi-request": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req1, classA, 1).withSelectors(DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)))), requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {})), sliceWithDevices(slice2, node1, pool2, driverA, device(device2, {"memory": "4Gi"}, {}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverA, pool1, device1, False), deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False))],
    ),
    "prioritized-list-with-backtracking": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA))))), deviceRequest(req1, classA, 1).withSelectors(DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {})), sliceWithDevices(slice2, node1, pool2, driverA, device(device2, {"memory": "4Gi"}, {}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False), deviceAllocationResult(req1, driverA, pool1, device1, False))],
    ),
    "prioritized-list-too-many-in-first-subrequest": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classB, 500), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-single-device": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-prioritized-list": dict(
        features=Features(PrioritizedList=True, PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False))],
    ),
    "partitionable-devices-multiple-devices": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1, driverA, pool1, device3, False))],
    ),
    "partitionable-devices-multiple-capacity-pools": dict(
        features=Features(PrioritizedList=True, PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "4"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "6"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "4"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"}), counterSet(counterSet2, {"cpus": "8"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False))],
    ),
    "partitionable-devices-multiple-counters": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi", "cpus": "6"}), deviceCounterConsumption(counterSet2, {"cpus": "4", "memory": "2Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi", "cpus": "4"}), deviceCounterConsumption(counterSet2, {"cpus": "6", "memory": "6Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi", "cpus": "4"}), deviceCounterConsumption(counterSet2, {"cpus": "4", "memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"}), counterSet(counterSet2, {"cpus": "12", "memory": "18Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False), deviceAllocationResult(req1, driverA, pool1, device3, False))],
    ),
    "partitionable-devices-multiple-pools": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpus": "6", "memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpus": "4", "memory": "6Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpus": "4", "memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"})), sliceWithDevices(slice3, node1, resourcePool(pool2, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpus": "6", "memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpus": "1", "memory": "7Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpus": "1", "memory": "7Gi"}))), sliceWithCounterSets(slice4, node1, resourcePool(pool2, 2), driverA, counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"}))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2), MakeDeviceID(driverA, pool1, device3), MakeDeviceID(driverA, pool2, device1)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool2, device2, False), deviceAllocationResult(req1, driverA, pool2, device3, False))],
    ),
    "partitionable-devices-unused-counters-in-counter-set": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "5Gi"})), device(device2, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})), device(device3, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi", "unused": "1Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False), deviceAllocationResult(req0, driverA, pool1, device3, False))],
    ),
    "partitionable-devices-no-capacity-available": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "16Gi"}))), sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"}))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-overallocated-capacity-pool": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "20Gi"}))), sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"}))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-disabled-device-consumes-counters": dict(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-disabled-other-device-do-not-consume-counters": dict(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})), device(device2, None, None)), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "partitionable-devices-disabled-per-device-node-selection": dict(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, nodeSelectionPerDevice, pool1, driverA, device(device2, None, None).withNodeSelection(node1))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-per-device-node-selection-nodename": dict(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withNodeSelection(node1), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"})).withNodeSelection(node2)), sliceWithCounterSets(slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-per-device-node-selection-node-selector": dict(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withNodeSelection(nodeLabelSelector(regionKey, region1))), sliceWithCounterSets(slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(NodeSelector(NodeSelectorTerms=[NodeSelectorTerm(MatchExpressions=[NodeSelectorRequirement(Key=regionKey, Operator="In", Values=[region1])])]), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": dict(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 3), request(req1, classB, 3))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withNodeSelection(nodeLabelSelector(regionKey, region1)), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withNodeSelection(node1), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withNodeSelection(nodeSelectionAll)), sliceWithCounterSets(slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"})), sliceWithDevices(slice3, node1, resourcePool(pool2, 2), driverB, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, {"memory": "4Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, {"memory": "4Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, {"memory": "4Gi"}))), sliceWithCounterSets(slice4, node1, resourcePool(pool2, 2), driverB, counterSet(counterSet2, {"memory": "12Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(NodeSelector(NodeSelectorTerms=[NodeSelectorTerm(MatchFields=[NodeSelectorRequirement(Key=fieldNameKey, Operator="In", Values=[node1])])]), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False), deviceAllocationResult(req0, driverA, pool1, device3, False), deviceAllocationResult(req1, driverB, pool2, device1, False), deviceAllocationResult(req1, driverB, pool2, device2, False), deviceAllocationResult(req1, driverB, pool2, device3, False))],
    ),
    "tainted-two-devices": dict(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule), device(device2, None, None).withTaints(taintNoExecute))),
        node=node(node1, region1),
    ),
    "tainted-one-device-two-taints": dict(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute))),
        node=node(node1, region1),
    ),
    "tainted-two-devices-tolerated": dict(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoExecute)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule), device(device2, None, None).withTaints(taintNoExecute))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False, tolerationNoExecute))],
    ),
    "tainted-two-devices-prioritized-list-tolerated": dict(
        features=Features(DeviceTaints=True, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classA, 1, tolerationNoExecute)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule), device(device2, None, None).withTaints(taintNoExecute))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False, tolerationNoExecute))],
    ),
    "tainted-no-effect": dict(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNone))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "tainted-one-device-two-taints-both-tolerated": dict(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoSchedule, tolerationNoExecute)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False, tolerationNoSchedule, tolerationNoExecute))],
    ),
    "tainted-disabled": dict(
        features=Features(DeviceTaints=False),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "tainted-prioritized-list": dict(
        features=Features(DeviceTaints=True, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))),
        node=node(node1, region1),
    ),
    "tainted-prioritized-list-disabled": dict(
        features=Features(DeviceTaints=False, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "tainted-all-devices-single": dict(
        features=Features(DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))),
        node=node(node1, region1),
    ),
    "tainted-all-devices-single-disabled": dict(
        features=Features(DeviceTaints=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "prioritized-list-allocation-mode-all": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 0).withAllocationMode("All"), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v6"', driverA)))).withAllocationMode("All"), subRequest(subReq1, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v5"', driverA)))).withAllocationMode("All")))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": DeviceAttribute(StringValue="v5")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v6"', driverA)))).withAllocationMode("All"), subRequest(subReq1, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v5"', driverA)))).withAllocationMode("All")))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": DeviceAttribute(StringValue="v5")})), sliceWithDevices(slice2, node1, pool2, driverA, device(device1, None, {"generation": DeviceAttribute(StringValue="v5")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False), deviceAllocationResult(req0SubReq1, driverA, pool2, device1, False))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v6"', driverA)))).withAllocationMode("All"), subRequest(subReq1, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v5"', driverA)))).withAllocationMode("All")))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": DeviceAttribute(StringValue="v5")})), sliceWithDevices(slice2, node2, pool2, driverA, device(device1, None, {"generation": DeviceAttribute(StringValue="v5")}), device(device2, None, {"generation": DeviceAttribute(StringValue="v6")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v6"', driverA)))).withAllocationMode("All"), subRequest(subReq1, classA, 0, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].generation == "v5"', driverA)))).withAllocationMode("All")))),
        classes=objects(DeviceClass(ObjectMeta=ObjectMeta(Name=classA), Spec=DeviceClassSpec(Selectors=[DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.driver == "%s" && device.attributes["%s"].selected', driverA, driverA)))]))),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": DeviceAttribute(StringValue="v6"), "selected": DeviceAttribute(BoolValue=False)}), device(device2, None, {"generation": DeviceAttribute(StringValue="v5"), "selected": DeviceAttribute(BoolValue=False)}), device(device3, None, {"generation": DeviceAttribute(StringValue="v5"), "selected": DeviceAttribute(BoolValue=True)}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device3, False))],
    ),
    "max-number-devices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 32))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), *multipleDeviceAllocationResults(req0, driverA, pool1, 32, 0))],
    ),
    "partitionable-devices-with-attribute-selector": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2), request(req1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].special', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, {"special": DeviceAttribute(BoolValue=True)}).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpu1": "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"})), device(device2, None, {"special": DeviceAttribute(BoolValue=False)}).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpu2": "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"})), device(device3, None, {"special": DeviceAttribute(BoolValue=False)}).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"cpu3": "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}), counterSet(counterSet2, {"mem": "30Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False), deviceAllocationResult(req0, driverA, pool1, device3, False), deviceAllocationResult(req1, driverA, pool1, device1, False))],
    ),
    "prioritized-list-max-allocation-limit-request": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 32), subRequest(subReq1, classA, 32 // 2)), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 32), subRequest(subReq1, classA, 32 // 2)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32 * 2)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), *concat(multipleDeviceAllocationResults(req0SubReq1, driverA, pool1, 32 // 2, 0), multipleDeviceAllocationResults(req1SubReq1, driverA, pool1, 32 // 2, 32 // 2)))],
        expectNumAllocateOneInvocations=75,
    ),
    "prioritized-list-max-allocation-allocation-mode-all": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 0).withAllocationMode("All"), subRequest(subReq1, classA, 2)), deviceRequest(req1, classB, 2))),
        classes=objects(class_(classA, driverA), class_(classB, driverB)),
        slices=unwrapResourceSlices(sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32 - 1), sliceWithMultipleDevices(slice2, node1, pool2, driverB, 2)),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, "device-0", False), deviceAllocationResult(req0SubReq1, driverA, pool1, "device-1", False), deviceAllocationResult(req1, driverB, pool2, "device-0", False), deviceAllocationResult(req1, driverB, pool2, "device-1", False))],
        expectNumAllocateOneInvocations=42,
    ),
    "device-binding-conditions": dict(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "binding-conditions-multiple-devices": dict(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]), device(device2, None, None).withBindingConditions(["IsPrepare2"], ["BindingFailed2"]), device(device3, None, None).withBindingConditions(["IsPrepare3"], ["BindingFailed3"]))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]), deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]), deviceRequestAllocationResultWithBindingConditions(req1, driverA, pool1, device3, ["IsPrepare3"], ["BindingFailed3"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "binding-conditions-with-and-without": dict(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceAllocationResult(req0, driverA, pool1, device1, False), deviceRequestAllocationResultWithBindingConditions(req1, driverA, pool1, device2, ["IsPrepare"], ["BindingFailed"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "binding-conditions-without-feature-gate": dict(
        features=Features(DeviceBindingAndStatus=False),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "node-restriction": dict(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, nodeLabelSelector(planetKey, planetValueEarth), pool1, driverA, device(device1, None, None).withBindsToNode(True))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-with-binding-conditions": dict(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsPrepare"], ["BindingFailed"])), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "partitionable-devices-with-binding-conditions-multiple": dict(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsPrepare"], ["BindingFailed"]), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsPrepare2"], ["BindingFailed2"])), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]), deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": dict(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 3))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "2Gi"})).withBindingConditions(["IsPrepare"], ["BindingFailed"]), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "2Gi"})), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsReady"], ["BindingTimeout"])), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]), deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None), deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device3, ["IsReady"], ["BindingTimeout"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "partitionable-devices-with-binding-conditions-multi-slices": dict(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice4, node1, resourcePool(pool1, 4), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsPrepare"], ["BindingFailed"])), sliceWithCounterSets(slice3, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, {"memory": "8Gi"})), sliceWithDevices(slice2, node1, resourcePool(pool1, 4), driverA, device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, {"memory": "4Gi"}))), sliceWithCounterSets(slice1, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet2, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None), deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"])]), NodeSelector=localNodeSelector(node1))],
    ),
    "partitionable-devices-with-binding-conditions-and-taints": dict(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True, DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsPrepare"], ["BindingFailed"]).withTaints(DeviceTaint(Key="key1", Value="value1", Effect="NoSchedule")), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": dict(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True, DeviceTaints=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 2)).withTolerations(tolerationNoScheduleKey1)),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withBindingConditions(["IsPrepare"], ["BindingFailed"]).withTaints(DeviceTaint(Key="key1", Value="value1", Effect="NoSchedule")), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[AllocationResult(Devices=DeviceAllocationResult(Results=[deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"], tolerationNoScheduleKey1), deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None, tolerationNoScheduleKey1)]), NodeSelector=localNodeSelector(node1))],
    ),
    "consumable-capacity-disabled-feature": dict(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(class_(classA, driverA)),
        slices=unwrap(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled")),
    ),
    "consumable-capacity-disabled-feature-with-prioritized-list": dict(
        features=Features(PrioritizedList=True, DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1).withCapacityRequest(one), subRequest(subReq1, classA, 1).withCapacityRequest(one)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrap(sliceWithOneDevice(slice1, node1, pool1, driverA)),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled")),
    ),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity1: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity1: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1)), claim(claim1).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None)), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None))],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1)), claim(claim1).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None).withAllowMultipleAllocations(), device(device2, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one})), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1)), claim(claim1).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)), claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one})), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1)), claimWithRequests(claim1, None, request(req0, classA, 1))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two})), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1)), claimWithRequests(claim1, None, request(req0, classA, 1))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: zero})), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: zero}))],
    ),
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)), claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two})), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest("3"))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: four}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest("2"))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyValidValues(one, {capacity0: four}, [two]))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest("2"))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyValidValues(one, {capacity0: three}, [three]))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: three}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)), claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=two)},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=two)},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}), device(device2, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(MatchAttribute=stringAttribute)).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two), deviceRequest(req1, classA, 1).withCapacityRequest(two)), claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device2, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue1")}).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}), device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue2")}).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}), deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two})), allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": dict(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1).withCapacityRequest(four), subRequest(subReq1, classA, 1).withCapacityRequest(two), subRequest(subReq1, classA, 1)))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0SubReq1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=two)},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(two))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations(), device(device2, None, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(two))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations(), device(device2, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one), allDeviceRequest(req1, classA).withCapacityRequest(one))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations(), device(device2, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}), deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}), deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": dict(
        features=Features(ConsumableCapacity=True),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=one)},
        claimsToAllocate=objects(claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations(), device(device2, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}), deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one), allDeviceRequest(req1, classA).withCapacityRequest(one))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None).withAllowMultipleAllocations(), device(device2, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": dict(
        features=Features(ConsumableCapacity=True),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=one)},
        claimsToAllocate=objects(claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None).withAllowMultipleAllocations(), device(device2, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))],
    ),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)), claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, False)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": dict(
        features=Features(ConsumableCapacity=True),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))),
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=one)},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-with-partitionable-device": dict(
        features=Features(PrioritizedList=True, PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA))))))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withAllowMultipleAllocations(), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"})).withAllowMultipleAllocations(), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withAllowMultipleAllocations()), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {"memory": "4Gi"}), deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device3).withConsumedCapacity(fixedShareID, {"memory": "4Gi"}))],
    ),
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": dict(
        features=Features(PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one).withSelectors(DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].mode == "b"', driverA)))))),
        allocatedSharedDeviceIDs={(MakeDeviceID(driverA, pool1, device1), fixedShareID)},
        allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): ConsumedCapacity(capacity0=one)},
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, {"mode": DeviceAttribute(StringValue="a")}).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: one})).withAllowMultipleAllocations(), device(device2, fromCounters, {"mode": DeviceAttribute(StringValue="b")}).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: one})).withAllowMultipleAllocations()), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {capacity0: one}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": dict(
        features=Features(PrioritizedList=True, PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one), deviceRequest(req2, classA, 1).withCapacityRequest(two), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"]["%s"].compareTo(quantity("4")) >= 0', driverA, capacity0)))).withCapacityRequest(one), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"]["%s"].compareTo(quantity("2")) >= 0', driverA, capacity0)))).withCapacityRequest(one)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: two}), deviceCounterConsumption(counterSet2, {capacity1: four})).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity1: four}), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: four}), deviceCounterConsumption(counterSet2, {capacity1: four})).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity1: four}), device(device3, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: two}), deviceCounterConsumption(counterSet2, {capacity1: four})).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity1: four})), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {capacity0: four}), counterSet(counterSet2, {capacity1: "8"}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one, capacity1: two}), deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(fixedShareID, {capacity0: two, capacity1: two}), deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one, capacity1: two}))],
    ),
    "with-distinct-constraints": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0, req1]), DeviceConstraint(DistinctAttribute=versionAttribute, Requests=[req0, req1, req2]), DeviceConstraint(DistinctAttribute=intAttribute, Requests=[req0, req1, req2, req3])).withRequests(deviceRequest(req0, classA, 1), deviceRequest(req1, classA, 1), deviceRequest(req2, classA, 1), deviceRequest(req3, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0"), "numa": DeviceAttribute(IntValue=int64(0)), "boolAttribute": DeviceAttribute(BoolValue=True)}).withAllowMultipleAllocations(), device(device2, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.1"), "numa": DeviceAttribute(IntValue=int64(1)), "boolAttribute": DeviceAttribute(BoolValue=False)}).withAllowMultipleAllocations(), device(device3, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.2"), "numa": DeviceAttribute(IntValue=int64(2)), "boolAttribute": DeviceAttribute(BoolValue=True)}).withAllowMultipleAllocations(), device(device4, None, {"driverVersion": DeviceAttribute(VersionValue="1.0.0"), "numa": DeviceAttribute(IntValue=int64(3)), "boolAttribute": DeviceAttribute(BoolValue=True)}).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None), deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, None), deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(fixedShareID, None), deviceRequestAllocationResult(req3, driverA, pool1, device4).withConsumedCapacity(fixedShareID, None))],
    ),
    "with-distinct-constraints-attribute-not-set": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0])).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
    ),
    "with-distinct-constraints-unknown-type-attribute": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0])).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": DeviceAttribute()}).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[],
        expectError=gomega_MatchError(gomega_ContainSubstring("unsupported attribute value")),
    ),
    "with-distinct-constraints-with-subrequests": dict(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(DistinctAttribute=boolAttribute, Requests=[req0, req1])).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].boolAttribute', driverA)))), subRequest(subReq1, classA, 1)), requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].boolAttribute', driverA)))), subRequest(subReq1, classA, 1)), requestWithPrioritizedList(req2, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].boolAttribute', driverA)))), subRequest(subReq1, classA, 1)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": DeviceAttribute(BoolValue=True)}).withAllowMultipleAllocations(), device(device2, None, {"boolAttribute": DeviceAttribute(BoolValue=False)}).withAllowMultipleAllocations())),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0SubReq0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None), deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, None), deviceRequestAllocationResult(req2SubReq0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None))],
    ),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(DistinctAttribute=stringAttribute)).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one), deviceRequest(req1, classA, 1).withCapacityRequest(one))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue")}).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))),
        node=node(node1, region1),
        expectResults=[],
    ),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": dict(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=objects(claim(claim0).withConstraints(DeviceConstraint(DistinctAttribute=stringAttribute)).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two), deviceRequest(req1, classA, 1).withCapacityRequest(two))),
        classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue1")}).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four})), sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device2, None, {"stringAttribute": DeviceAttribute(StringValue="stringAttributeValue2")}).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}), deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}))],
    ),
    "list-attributes-match-constaint-scalar-string-values": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-match-constaint-list-of-string-values-with-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3", "value4"])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 3))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])}), device(device3, None, {"stringAttribute": DeviceAttribute(StringValues=["value3", "value1"])}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-list-of-string-values-without-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 1), request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value3", "value4"])}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 3))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}), device(device3, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-match-constaint-list-of-int-values-with-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=intAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"numa": DeviceAttribute(IntValues=[0, 1, 2])}), device(device2, None, {"numa": DeviceAttribute(IntValues=[1, 2, 3])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-match-constaint-list-of-bool-values-with-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=boolAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": DeviceAttribute(BoolValues=[True, False])}), device(device2, None, {"boolAttribute": DeviceAttribute(BoolValues=[True])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-match-constaint-list-of-version-values-with-common-elements": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=versionAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValues=["1.0.0", "1.1.0", "2.0.0"])}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValues=["1.1.0", "2.0.0", "2.1.0"])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-match-constaint-with-empty-or-unknown-type": dict(
        features=Features(ListTypeAttributes=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute()}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=[])}))),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("unsupported attribute value")),
    ),
    "list-attributes-disabled-match-constraint-with-lists": dict(
        features=Features(ListTypeAttributes=False),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(MatchAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3", "value4"])}))),
        node=node(node1, region1),
        expectResults=[],
        expectError=gomega_MatchError(gomega_ContainSubstring("unsupported attribute value")),
    ),
    "list-attributes-distinct-constraint-scalar-string-values-all-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValue="value2")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-list-of-string-values-all-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])}), device(device3, None, {"stringAttribute": DeviceAttribute(StringValues=["value3", "value4"])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device3, False))],
    ),
    "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value4", "value5"])}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}), device(device3, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3"])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device3, False))],
    ),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValue="value1")}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2"])}))),
        node=node(node1, region1),
        expectResults=None,
    ),
    "list-attributes-distinct-constraint-list-of-int-values-all-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=intAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"numa": DeviceAttribute(IntValues=[0, 1])}), device(device2, None, {"numa": DeviceAttribute(IntValues=[1, 2])}), device(device3, None, {"numa": DeviceAttribute(IntValues=[2, 3])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device3, False))],
    ),
    "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=boolAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": DeviceAttribute(BoolValues=[True])}), device(device2, None, {"boolAttribute": DeviceAttribute(BoolValues=[True, False])}), device(device3, None, {"boolAttribute": DeviceAttribute(BoolValues=[False])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device3, False))],
    ),
    "list-attributes-distinct-constraint-list-of-version-values-all-distinct": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=versionAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValues=["1.0.0", "1.1.0"])}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValues=["1.1.0", "2.0.0"])}), device(device3, None, {"driverVersion": DeviceAttribute(VersionValues=["2.0.0", "2.1.0"])}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False), deviceAllocationResult(req0, driverA, pool1, device3, False))],
    ),
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": dict(
        features=Features(ListTypeAttributes=True, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=versionAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"driverVersion": DeviceAttribute(VersionValues=[])}), device(device2, None, {"driverVersion": DeviceAttribute(VersionValues=None)}))),
        node=node(node1, region1),
        expectResults=None,
        expectError=gomega_MatchError(gomega_ContainSubstring("unsupported attribute value")),
    ),
    "list-attributes-disabled-distinct-constraint-with-lists": dict(
        features=Features(ListTypeAttributes=False, ConsumableCapacity=True),
        claimsToAllocate=objects(claimWithRequests(claim0, [DeviceConstraint(DistinctAttribute=stringAttribute)], request(req0, classA, 2))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"stringAttribute": DeviceAttribute(StringValues=["value1", "value2", "value3"])}), device(device2, None, {"stringAttribute": DeviceAttribute(StringValues=["value2", "value3", "value4"])}))),
        node=node(node1, region1),
        expectResults=[],
        expectError=gomega_MatchError(gomega_ContainSubstring("unsupported attribute value")),
    ),
    "allocation-mode-all-with-multi-host-resource-pool": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, DeviceRequest(Name=req0, Exactly=ExactDeviceRequest(AllocationMode="All", DeviceClassName=classA)))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice2, node2, resourcePool(pool1, 2), driverA, device(device2, None, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 4), driverA, device(device1, None, None)), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, None)), sliceWithDevices(slice3, node1, resourcePool(pool1, 4), driverA, device(device2, None, None)), sliceWithCounterSets(slice4, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, None))),
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, None))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, None))),
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "8Gi"}))), sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"other-memory": "8Gi"}))),
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claim(claim0).withRequests(deviceRequest(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "8Gi"}))), sliceWithCounterSets(slice2, node1, pool2, driverA, counterSet(counterSet1, {"memory": "8Gi"}))),
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("invalid resource pools were encountered")),
    ),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": dict(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)))), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithCounterSets(slice1, node1, resourcePool(pool1, 3), driverA, counterSet(counterSet1, {"memory": "8Gi"})), sliceWithDevices(slice2, node1, resourcePool(pool1, 3), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"})), device(device2, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "2Gi"}))), sliceWithDevices(slice3, node2, resourcePool(pool1, 3), driverA, device(device3, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"})))),
        allocatedDevices=[MakeDeviceID(driverA, pool1, device3)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False))],
    ),
    "partitionable-devices-validation-error-on-non-targeting-slice": dict(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithCounterSets(slice1, node1, resourcePool(pool1, 3), driverA, counterSet(counterSet1, {"memory": "8Gi"})), sliceWithDevices(slice2, node1, resourcePool(pool1, 3), driverA, device(device1, fromCounters, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"}))), sliceWithDevices(slice3, node2, resourcePool(pool1, 3), driverA, device(device3, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, {"memory": "6Gi"})))),
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("invalid resource pools were encountered")),
    ),
    "different-resourceslices-in-pool-can-target-different-nodes": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node2, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice3, node1, resourcePool(pool2, 1), driverA, device(device2, None, None))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool2, device2, False))],
    ),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice3, node1, resourcePool(pool2, 1), driverA, device(device2, None, None))),
        allocatedDevices=[MakeDeviceID(driverA, pool2, device2)],
        node=node(node1, region1),
        expectError=gomega_MatchError(gomega_ContainSubstring("invalid resource pools were encountered")),
    ),
    "no-allocation-from-incomplete-pools": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 1))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None))),
        node=node(node1, region1),
    ),
    "check-combinations-within-single-request-single-pool-single-slice": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None), device(device3, None, None), device(device4, None, None))),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 65},
    ),
    "check-combinations-within-single-request-single-pool-multiple-slices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None), device(device2, None, None)), sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device3, None, None), device(device4, None, None))),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 65},
    ),
    "check-combinations-within-single-request-multiple-pools-multiple-slices": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, None)), sliceWithDevices(slice3, node1, pool2, driverA, device(device3, None, None), device(device4, None, None))),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 65},
    ),
    "check-combinations-within-single-request-many-pools": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req0, classA, 5))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)), sliceWithDevices(slice2, node1, pool2, driverA, device(device2, None, None)), sliceWithDevices(slice3, node1, pool3, driverA, device(device3, None, None)), sliceWithDevices(slice4, node1, pool4, driverA, device(device4, None, None))),
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 65},
    ),
    "check-combinations-with-backtracking": dict(
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req1, classA, 2), request(req2, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].type == "X"', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"type": DeviceAttribute(StringValue="X")}), device(device2, None, {"type": DeviceAttribute(StringValue="Y")}), device(device3, None, {"type": DeviceAttribute(StringValue="Y")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverA, pool1, device2, False), deviceAllocationResult(req1, driverA, pool1, device3, False), deviceAllocationResult(req2, driverA, pool1, device1, False))],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 14},
    ),
    "check-combinations-with-backtracking-across-slices-and-pools": dict(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=objects(claimWithRequests(claim0, None, request(req1, classA, 2), request(req2, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].type == "X"', driverA)))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, {"type": DeviceAttribute(StringValue="X")})), sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, {"type": DeviceAttribute(StringValue="Y")})), sliceWithDevices(slice3, node1, pool2, driverA, device(device3, None, {"type": DeviceAttribute(StringValue="Y")}).withBindingConditions(["IsPrepare"], []))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverA, pool1, device2, False), deviceRequestAllocationResultWithBindingConditions(req1, driverA, pool2, device3, ["IsPrepare"], []), deviceAllocationResult(req2, driverA, pool1, device1, False))],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 14},
    ),
    "check-combinations-with-prioritized-list": dict(
        features=Features(PrioritizedList=True),
        claimsToAllocate=objects(claim(claim0).withRequests(requestWithPrioritizedList(req1, subRequest(subReq0, classA, 3, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].type == "Y"', driverA)))), subRequest(subReq1, classA, 2)), requestWithPrioritizedList(req2, subRequest(subReq0, classA, 2), subRequest(subReq1, classA, 1, DeviceSelector(CEL=CELDeviceSelector(Expression=sprintf('device.attributes["%s"].type == "X"', driverA))))))),
        classes=objects(class_(classA, driverA)),
        slices=unwrapResourceSlices(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"type": DeviceAttribute(StringValue="X")}), device(device2, None, {"type": DeviceAttribute(StringValue="Y")}), device(device3, None, {"type": DeviceAttribute(StringValue="Y")}))),
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False), deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False), deviceAllocationResult(req2SubReq1, driverA, pool1, device1, False))],
        expectNumAllocateOneInvocations=26,
        expectNumAllocateOneInvocationsByChannel={internal_Stable: 32},
    ),
}
# fmt: on


# The rows upstream writes with inline Go functions, ported by hand (same names, same data).
def _edit(c: Any, fn: Any) -> Any:
    out = copy.deepcopy(c)
    fn(out.obj())
    return out


def _exactly(i: int = 0, **fields: Any) -> Any:
    def fn(claim: Any) -> None:
        for k, v in fields.items():
            setattr(claim.spec.devices.requests[i].exactly, k, v)

    return fn


def _first(i: int = 0, **fields: Any) -> Any:
    def fn(claim: Any) -> None:
        for k, v in fields.items():
            setattr(claim.spec.devices.requests[0].first_available[i], k, v)

    return fn


def _pool(
    s: Any, generation: int | None = None, count: int | None = None, name: str | None = None
) -> Any:
    out = copy.deepcopy(s.obj() if hasattr(s, "obj") else s)
    if generation is not None:
        out.spec.pool.generation = generation
    if count is not None:
        out.spec.pool.resource_slice_count = count
    if name is not None:
        out.metadata.name = name
    return out


def _class_with(expression: str) -> Any:
    c = class_(classA, driverA)
    assert c.spec.selectors[0].cel is not None
    c.spec.selectors[0].cel.expression = expression
    return c


def _two_devices() -> Any:
    return sliceWithDevices(
        slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)
    )


def _admin(c: Any, i: int = 0, **more: Any) -> Any:
    return _edit(c, _exactly(i, admin_access=True, **more))


def _sub_all(c: Any) -> Any:
    return _edit(c, _first(0, allocation_mode="All", count=0))


_dup_a = _pool(sliceWithOneDevice(slice1, node1, pool1, driverA), count=2)
_prio_a_b = claim(claim0).withRequests(
    requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1))
)
_cel = DeviceSelector(CEL=CELDeviceSelector(Expression="noSuchVar"))

CASES.update(
    {
        "obsolete-slice": dict(
            claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
            classes=objects(class_(classA, driverA)),
            slices=[
                sliceWithDevices(
                    "slice-1-obsolete",
                    node1,
                    resourcePool(pool1, 2),
                    driverA,
                    device(device1, None, None),
                ).obj(),
                _pool(
                    sliceWithDevices(
                        "slice-1-obsolete",
                        node1,
                        resourcePool(pool1, 2),
                        driverA,
                        device(device2, None, None),
                    ),
                    generation=2,
                ),
            ],
            node=node(node1, region1),
            expectResults=[],
        ),
        "duplicate-slice": dict(
            claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
            classes=objects(class_(classA, driverA)),
            slices=[_dup_a, _pool(_dup_a, name=slice1 + "-2")],
            node=node(node1, region1),
            expectError="invalid resource pools were encountered",
        ),
        "all-devices-of-the-incomplete-pool": dict(
            claimsToAllocate=objects(
                claimWithRequests(
                    claim0,
                    None,
                    DeviceRequest(
                        Name=req0,
                        Exactly=ExactDeviceRequest(
                            AllocationMode="All", Count=1, DeviceClassName=classA
                        ),
                    ),
                )
            ),
            classes=objects(class_(classA, driverA)),
            slices=[_pool(sliceWithOneDevice(slice1, node1, pool1, driverA), count=2)],
            node=node(node1, region1),
            expectError="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated",
        ),
        "admin-access-disabled": dict(
            features=Features(AdminAccess=False),
            claimsToAllocate=[_admin(claimWithRequest(claim0, req0, classA))],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="claim claim-0, request req-0: admin access is requested, but the feature is disabled",
        ),
        "admin-access-enabled": dict(
            features=Features(AdminAccess=True),
            claimsToAllocate=[_admin(claimWithRequest(claim0, req0, classA))],
            allocatedDevices=[
                MakeDeviceID(driverA, pool1, device1),
                MakeDeviceID(driverA, pool1, device2),
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                )
            ],
        ),
        "all-devices-some-allocated-admin-access": dict(
            features=Features(AdminAccess=True),
            claimsToAllocate=[
                _admin(claimWithRequest(claim0, req0, classA), allocation_mode="All")
            ],
            allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(_two_devices()),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                    deviceAllocationResult(req0, driverA, pool1, device2, True),
                )
            ],
        ),
        "all-devices-some-allocating-admin-access": dict(
            features=Features(AdminAccess=True),
            claimsToAllocate=[
                _admin(
                    _admin(
                        claimWithRequests(
                            claim0, None, request(req0, classA, 1), request(req1, classA, 1)
                        )
                    ),
                    1,
                    allocation_mode="All",
                )
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(_two_devices()),
            node=node(node1, region1),
            expectResults=None,
        ),
        "count-devices-some-allocated-admin-access": dict(
            features=Features(AdminAccess=True),
            claimsToAllocate=[
                _admin(
                    claimWithRequest(claim0, req0, classA), allocation_mode="ExactCount", count=2
                )
            ],
            allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(_two_devices()),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                    deviceAllocationResult(req0, driverA, pool1, device2, True),
                )
            ],
        ),
        "separate-claims-share-device-admin-access": dict(
            features=Features(AdminAccess=True),
            claimsToAllocate=[
                _admin(claimWithRequest(claim0, req0, classA)),
                _admin(claimWithRequest(claim1, req0, classA)),
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(_two_devices()),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                ),
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                ),
            ],
        ),
        "admin-access-claims-device-allocating-for-non-admin-access": dict(
            features=Features(AdminAccess=True),
            claimsToAllocate=[
                claimWithRequest(claim0, req0, classA),
                _admin(claimWithRequest(claim1, req0, classA)),
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(_two_devices()),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, False),
                ),
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                ),
            ],
        ),
        "all-devices-slice-without-devices-prioritized-list": dict(
            features=Features(PrioritizedList=True),
            claimsToAllocate=[_sub_all(_prio_a_b)],
            classes=objects(class_(classA, driverA), class_(classB, driverB)),
            slices=unwrapResourceSlices(
                sliceWithNoDevices(slice1, node1, pool1, driverA),
                sliceWithOneDevice(slice2, node1, pool2, driverB),
            ),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False),
                )
            ],
        ),
        "all-devices-no-slices-prioritized-list": dict(
            features=Features(PrioritizedList=True),
            claimsToAllocate=[_sub_all(_prio_a_b)],
            classes=objects(class_(classA, driverA), class_(classB, driverB)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice2, node1, pool2, driverB)),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False),
                )
            ],
        ),
        "all-devices-some-allocated-prioritized-list": dict(
            features=Features(PrioritizedList=True),
            claimsToAllocate=[_sub_all(_prio_a_b)],
            allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
            classes=objects(class_(classA, driverA), class_(classB, driverB)),
            slices=unwrapResourceSlices(
                _two_devices(), sliceWithOneDevice(slice2, node1, pool2, driverB)
            ),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False),
                )
            ],
        ),
        "with-constraint-not-matching-int-attribute-all-devices": dict(
            claimsToAllocate=[
                _edit(
                    claimWithRequests(
                        claim0,
                        [DeviceConstraint(MatchAttribute=intAttribute)],
                        request(req0, classA, 0),
                    ),
                    _exactly(0, allocation_mode="All"),
                )
            ],
            classes=objects(class_(classA, driverA), class_(classB, driverB)),
            slices=unwrapResourceSlices(
                sliceWithDevices(
                    slice1,
                    node1,
                    pool1,
                    driverA,
                    device(device1, None, {"numa": DeviceAttribute(IntValue=1)}),
                    device(device2, None, {"numa": DeviceAttribute(IntValue=2)}),
                )
            ),
            node=node(node1, region1),
            expectError="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied",
        ),
        "unknown-selector": dict(
            claimsToAllocate=[
                _edit(
                    claimWithRequest(claim0, req0, classA),
                    _exactly(0, selectors=[DeviceSelector()]),
                )
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="CEL expression empty (unsupported selector type?)",
        ),
        "unknown-allocation-mode": dict(
            claimsToAllocate=[
                _edit(
                    claimWithRequest(claim0, req0, classA),
                    _exactly(0, allocation_mode="future-mode"),
                )
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="unsupported count mode future-mode",
        ),
        "unknown-constraint": dict(
            claimsToAllocate=[
                claimWithRequest(claim0, req0, classA).withConstraints(DeviceConstraint())
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="empty constraint (unsupported constraint type?)",
        ),
        "invalid-CEL-one-device": dict(
            claimsToAllocate=[
                _edit(claimWithRequest(claim0, req0, classA), _exactly(0, selectors=[_cel]))
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="undeclared reference",
        ),
        "invalid-CEL-one-device-class": dict(
            claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
            classes=[_class_with("noSuchVar")],
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="undeclared reference",
        ),
        "invalid-CEL-all-devices": dict(
            claimsToAllocate=[
                _edit(
                    claimWithRequest(claim0, req0, classA),
                    _exactly(0, selectors=[_cel], allocation_mode="All"),
                )
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="undeclared reference",
        ),
        "prioritized-list-subrequests-with-allocation-mode-all": dict(
            features=Features(PrioritizedList=True),
            claimsToAllocate=[
                _sub_all(
                    claim(claim0).withRequests(
                        requestWithPrioritizedList(
                            req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classA, 1)
                        )
                    )
                )
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(_two_devices()),
            allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False),
                )
            ],
        ),
        "prioritized-list-disabled": dict(
            features=Features(PrioritizedList=False),
            claimsToAllocate=[
                claim(claim0).withRequests(
                    requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1))
                )
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(sliceWithOneDevice(slice1, node1, pool1, driverA)),
            node=node(node1, region1),
            expectError="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled",
        ),
        "tainted-admin-access": dict(
            features=Features(DeviceTaints=True, AdminAccess=True),
            claimsToAllocate=[_admin(claimWithRequest(claim0, req0, classA))],
            allocatedDevices=[
                MakeDeviceID(driverA, pool1, device1),
                MakeDeviceID(driverA, pool1, device2),
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(
                sliceWithDevices(
                    slice1,
                    node1,
                    pool1,
                    driverA,
                    device(device1, None, None).withTaints(taintNoSchedule),
                )
            ),
            node=node(node1, region1),
        ),
        "tainted-admin-access-disabled": dict(
            features=Features(DeviceTaints=False, AdminAccess=True),
            claimsToAllocate=[_admin(claimWithRequest(claim0, req0, classA))],
            allocatedDevices=[
                MakeDeviceID(driverA, pool1, device1),
                MakeDeviceID(driverA, pool1, device2),
            ],
            classes=objects(class_(classA, driverA)),
            slices=unwrapResourceSlices(
                sliceWithDevices(
                    slice1,
                    node1,
                    pool1,
                    driverA,
                    device(device1, None, None).withTaints(taintNoSchedule),
                )
            ),
            node=node(node1, region1),
            expectResults=[
                allocationResult(
                    localNodeSelector(node1),
                    deviceAllocationResult(req0, driverA, pool1, device1, True),
                )
            ],
        ),
        "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": dict(
            features=Features(ConsumableCapacity=True),
            claimsToAllocate=objects(
                claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest("6"))
            ),
            classes=objects(classWithAllowMultipleAllocations(classA, driverA, True)),
            slices=unwrapResourceSlices(
                sliceWithDevices(
                    slice1,
                    node1,
                    pool1,
                    driverA,
                    device(device1, None, None)
                    .withAllowMultipleAllocations()
                    .withCapacityRequestPolicyRange({capacity0: "10"}),
                )
            ),
            node=node(node1, region1),
            expectResults=[],  # the range's max (4) refuses 6 although 6 < 10
        ),
        "multi-host-resource-pool-with-stale-slice-for-current-node": dict(
            claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
            classes=objects(class_(classA, driverA)),
            slices=[
                _pool(
                    sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)),
                    generation=1,
                    count=2,
                ),
                _pool(
                    sliceWithDevices(slice2, node2, pool1, driverA, device(device2, None, None)),
                    generation=2,
                    count=2,
                ),
            ],
            node=node(node1, region1),
        ),
        **{
            f"multi-host-resource-pool-{kind}-update-from-{a}-to-{b}": dict(
                claimsToAllocate=objects(claimWithRequest(claim0, req0, classA)),
                classes=objects(class_(classA, driverA)),
                slices=[
                    _pool(
                        sliceWithDevices(slice1, old, pool1, driverA, device(device1, None, None)),
                        generation=1,
                        count=2,
                    ),
                    _pool(
                        sliceWithDevices(slice1, old, pool1, driverA, device(device2, None, None)),
                        generation=1,
                        count=2,
                    ),
                    _pool(
                        sliceWithDevices(slice2, new, pool1, driverA, device(device1, None, None)),
                        generation=2,
                        count=2,
                    ),
                    *(
                        [
                            _pool(
                                sliceWithDevices(
                                    slice2, new, pool1, driverA, device(device2, None, None)
                                ),
                                generation=2,
                                count=2,
                            )
                        ]
                        if kind == "complete"
                        else []
                    ),
                ],
                node=node(node1, region1),
                expectResults=expect,
            )
            for kind, a, b, old, new, expect in (
                (
                    "complete",
                    "node-1",
                    "node-2",
                    node1,
                    node2,
                    [
                        allocationResult(
                            localNodeSelector(node1),
                            deviceAllocationResult(req0, driverA, pool1, device1, False),
                        )
                    ],
                ),
                (
                    "complete",
                    "node-2",
                    "node-1",
                    node2,
                    node1,
                    [
                        allocationResult(
                            localNodeSelector(node1),
                            deviceAllocationResult(req0, driverA, pool1, device1, False),
                        )
                    ],
                ),
                # upstream: "We'd like this to *not* be allocated, but the current implementation
                # ignores the updated slices."
                (
                    "incomplete",
                    "node-1",
                    "node-2",
                    node1,
                    node2,
                    [
                        allocationResult(
                            localNodeSelector(node1),
                            deviceAllocationResult(req0, driverA, pool1, device1, False),
                        )
                    ],
                ),
                ("incomplete", "node-2", "node-1", node2, node1, None),
            )
        },
    }
)

CONSUMABLE_CAPACITY_BUILT = True
STABLE = {"admin_access", "prioritized_list", "partitionable_devices", "device_taints"}
INCUBATING = STABLE | {"binding_conditions", "consumable_capacity"}
EXPERIMENTAL = INCUBATING | {"list_type_attributes"}
VARIANTS = {"stable": STABLE, "incubating": INCUBATING, "experimental": EXPERIMENTAL}


def _needed(features: AllocatorFeatures) -> set[str]:
    return (
        {k for k, v in msgspec.structs.asdict(features).items() if v}
        if hasattr(features, "__struct_fields__")
        else {k for k, v in vars(features).items() if v}
    )


def _params() -> list[Any]:
    out = []
    for name, case in CASES.items():
        needed = _needed(case.get("features") or AllocatorFeatures())
        if "consumable_capacity" in needed and not CONSUMABLE_CAPACITY_BUILT:
            continue
        for variant, supported in VARIANTS.items():
            if needed <= supported:
                out.append(pytest.param(name, variant, False, id=f"TestAllocator_{variant}_{name}"))
                out.append(
                    pytest.param(name, variant, True, id=f"TestAllocator_{variant}_{name}-stored")
                )
    return out


def _dump(objs: list[Any]) -> list[Any]:
    return [msgspec.to_builtins(o) for o in objs]


def _stored(slices: list[Any], name: str) -> list[Any]:
    """The slices as the API server keeps them: each with a uid and a resourceVersion (the
    allocator then keeps pools, CEL inputs and outcomes across calls)."""
    out = []
    for i, s in enumerate(slices):
        s = copy.deepcopy(s)
        s.metadata.uid = f"{name}-{i}"
        s.metadata.resource_version = "1"
        out.append(s)
    return out


@pytest.mark.parametrize(("name", "variant", "stored"), _params())
def test_allocator__TestAllocator(name: str, variant: str, stored: bool) -> None:
    """``stored``: the same case with stored slices, allocated twice (the second call answers
    from what the first one decided) — the results are the same."""
    case = CASES[name]
    features = case.get("features") or AllocatorFeatures()
    claims = [c.obj() for c in case.get("claimsToAllocate") or []]
    classes = list(case.get("classes") or [])
    slices = list(case.get("slices") or [])
    if stored:
        slices = _stored(slices, name)
    before = (_dump(claims), _dump(classes), _dump(slices))
    state = AllocatedState(
        set(case.get("allocatedDevices") or []),
        set(case.get("allocatedSharedDeviceIDs") or []),
        {
            k: {n: parse_quantity(v) for n, v in c.items()}
            for k, c in (case.get("allocatedCapacityDevices") or {}).items()
        },
    )
    allocator = Allocator(
        features,
        state,
        {c.metadata.name: c for c in classes},
        slices,
        variant=variant,
        rng=random.Random(1),
        share_id=lambda: fixedShareID,
    )
    target = case.get("node") or node("node-1", "region-1")
    expect_error = case.get("expectError")
    if expect_error:
        with pytest.raises(AllocationError) as err:
            allocator.allocate(target, copy.copy(claims))
        assert expect_error in str(err.value)
    else:
        expected = case.get("expectResults") or []
        for _ in range(2 if stored else 1):
            results = allocator.allocate(target, copy.copy(claims)) or []
            assert sorted((canonical(r) for r in results), key=repr) == sorted(
                (canonical(r) for r in expected), key=repr
            )
    # objects the allocator had access to are not modified
    assert (_dump(claims), _dump(classes), _dump(slices)) == before
