"""The protobuf messages of the resource.k8s.io kinds (DRA), as field tables for
``_protobuf``'s decoder: what a kube-scheduler's DynamicResources plugin writes (a ResourceClaim
with its finalizer, its status's allocation and ``reservedFor``), what a DRA driver publishes
(ResourceSlices) and what typed clients create (DeviceClasses, ResourceClaimTemplates,
DeviceTaintRules).

The conventions are ``_protomessages``' (see its docstring), and two more types:
``("msgmap", TABLE)``, a map whose values are messages (a device's attributes, capacities,
counters), and ``"rawext"``, a ``runtime.RawExtension`` (its JSON bytes: an opaque
configuration's parameters, a device status's data).  Generated from k8s.io/api
``resource/v1/types.go`` at v0.36.0 (DeviceTaintRule: ``resource/v1beta2/types.go``): every
field of the five kinds and of every message they hold, numbered by its ``protobuf`` tag.
"""

from __future__ import annotations

from ._protomessages import NODE_SELECTOR, OBJECT_META, TIME, Table

__all__ = ["DEVICE_CLASS", "DEVICE_TAINT_RULE", "DEVICE_TAINT_RULE_V1ALPHA3", "RESOURCE_CLAIM", "RESOURCE_CLAIM_TEMPLATE", "RESOURCE_SLICE"]

# k8s.io/apimachinery meta/v1 Condition
CONDITION: Table = {
    1: ("type", "string"),
    2: ("status", "string"),
    3: ("observedGeneration", "int"),
    4: ("lastTransitionTime", TIME),
    5: ("reason", "string"),
    6: ("message", "string"),
}

# --- k8s.io/api resource/v1 (generated: see the module docstring) -------------------------------

CEL_DEVICE_SELECTOR: Table = {
    1: ("expression", "string"),
}
DEVICE_SELECTOR: Table = {
    1: ("cel", CEL_DEVICE_SELECTOR),
}
OPAQUE_DEVICE_CONFIGURATION: Table = {
    1: ("driver", "string"),
    2: ("parameters", "rawext"),
}
DEVICE_CONFIGURATION: Table = {
    1: ("opaque", OPAQUE_DEVICE_CONFIGURATION),
}
DEVICE_CLASS_CONFIGURATION: Table = {
    1: ("", DEVICE_CONFIGURATION),
}
DEVICE_CLASS_SPEC: Table = {
    1: ("selectors", [DEVICE_SELECTOR]),
    2: ("config", [DEVICE_CLASS_CONFIGURATION]),
    4: ("extendedResourceName", "string?"),
}
DEVICE_CLASS: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", DEVICE_CLASS_SPEC),
}
DEVICE_TOLERATION: Table = {
    1: ("key", "string"),
    2: ("operator", "string"),
    3: ("value", "string"),
    4: ("effect", "string"),
    5: ("tolerationSeconds", "int?"),
}
CAPACITY_REQUIREMENTS: Table = {
    1: ("requests", "quantitymap"),
}
EXACT_DEVICE_REQUEST: Table = {
    1: ("deviceClassName", "string"),
    2: ("selectors", [DEVICE_SELECTOR]),
    3: ("allocationMode", "string"),
    4: ("count", "int"),
    5: ("adminAccess", "bool?"),
    6: ("tolerations", [DEVICE_TOLERATION]),
    7: ("capacity", CAPACITY_REQUIREMENTS),
}
DEVICE_SUB_REQUEST: Table = {
    1: ("name", "string"),
    2: ("deviceClassName", "string"),
    3: ("selectors", [DEVICE_SELECTOR]),
    4: ("allocationMode", "string"),
    5: ("count", "int"),
    6: ("tolerations", [DEVICE_TOLERATION]),
    7: ("capacity", CAPACITY_REQUIREMENTS),
}
DEVICE_REQUEST: Table = {
    1: ("name", "string"),
    2: ("exactly", EXACT_DEVICE_REQUEST),
    3: ("firstAvailable", [DEVICE_SUB_REQUEST]),
}
DEVICE_CONSTRAINT: Table = {
    1: ("requests", ["string"]),
    2: ("matchAttribute", "string?"),
    3: ("distinctAttribute", "string?"),
}
DEVICE_CLAIM_CONFIGURATION: Table = {
    1: ("requests", ["string"]),
    2: ("", DEVICE_CONFIGURATION),
}
DEVICE_CLAIM: Table = {
    1: ("requests", [DEVICE_REQUEST]),
    2: ("constraints", [DEVICE_CONSTRAINT]),
    3: ("config", [DEVICE_CLAIM_CONFIGURATION]),
}
RESOURCE_CLAIM_SPEC: Table = {
    1: ("devices", DEVICE_CLAIM),
}
DEVICE_REQUEST_ALLOCATION_RESULT: Table = {
    1: ("request", "string"),
    2: ("driver", "string"),
    3: ("pool", "string"),
    4: ("device", "string"),
    5: ("adminAccess", "bool?"),
    6: ("tolerations", [DEVICE_TOLERATION]),
    7: ("bindingConditions", ["string"]),
    8: ("bindingFailureConditions", ["string"]),
    9: ("shareID", "string?"),
    10: ("consumedCapacity", "quantitymap"),
}
DEVICE_ALLOCATION_CONFIGURATION: Table = {
    1: ("source", "string"),
    2: ("requests", ["string"]),
    3: ("", DEVICE_CONFIGURATION),
}
DEVICE_ALLOCATION_RESULT: Table = {
    1: ("results", [DEVICE_REQUEST_ALLOCATION_RESULT]),
    2: ("config", [DEVICE_ALLOCATION_CONFIGURATION]),
}
ALLOCATION_RESULT: Table = {
    1: ("devices", DEVICE_ALLOCATION_RESULT),
    3: ("nodeSelector", NODE_SELECTOR),
    5: ("allocationTimestamp", TIME),
}
RESOURCE_CLAIM_CONSUMER_REFERENCE: Table = {
    1: ("apiGroup", "string"),
    3: ("resource", "string"),
    4: ("name", "string"),
    5: ("uid", "string"),
}
NETWORK_DEVICE_DATA: Table = {
    1: ("interfaceName", "string"),
    2: ("ips", ["string"]),
    3: ("hardwareAddress", "string"),
}
ALLOCATED_DEVICE_STATUS: Table = {
    1: ("driver", "string"),
    2: ("pool", "string"),
    3: ("device", "string"),
    7: ("shareID", "string?"),
    4: ("conditions", [CONDITION]),
    5: ("data", "rawext"),
    6: ("networkData", NETWORK_DEVICE_DATA),
}
RESOURCE_CLAIM_STATUS: Table = {
    1: ("allocation", ALLOCATION_RESULT),
    2: ("reservedFor", [RESOURCE_CLAIM_CONSUMER_REFERENCE]),
    4: ("devices", [ALLOCATED_DEVICE_STATUS]),
}
RESOURCE_CLAIM: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", RESOURCE_CLAIM_SPEC),
    3: ("status", RESOURCE_CLAIM_STATUS),
}
RESOURCE_CLAIM_TEMPLATE_SPEC: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", RESOURCE_CLAIM_SPEC),
}
RESOURCE_CLAIM_TEMPLATE: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", RESOURCE_CLAIM_TEMPLATE_SPEC),
}
RESOURCE_POOL: Table = {
    1: ("name", "string"),
    2: ("generation", "int"),
    3: ("resourceSliceCount", "int"),
}
DEVICE_ATTRIBUTE: Table = {
    2: ("int", "int?"),
    3: ("bool", "bool?"),
    4: ("string", "string?"),
    5: ("version", "string?"),
    6: ("ints", ["int"]),
    7: ("bools", ["bool"]),
    8: ("strings", ["string"]),
    9: ("versions", ["string"]),
}
CAPACITY_REQUEST_POLICY_RANGE: Table = {
    1: ("min", "quantity?"),
    2: ("max", "quantity?"),
    3: ("step", "quantity?"),
}
CAPACITY_REQUEST_POLICY: Table = {
    1: ("default", "quantity?"),
    3: ("validValues", ["quantity"]),
    4: ("validRange", CAPACITY_REQUEST_POLICY_RANGE),
}
DEVICE_CAPACITY: Table = {
    1: ("value", "quantity"),
    2: ("requestPolicy", CAPACITY_REQUEST_POLICY),
}
COUNTER: Table = {
    1: ("value", "quantity"),
}
DEVICE_COUNTER_CONSUMPTION: Table = {
    1: ("counterSet", "string"),
    2: ("counters", ("msgmap", COUNTER)),
}
DEVICE_TAINT: Table = {
    1: ("key", "string"),
    2: ("value", "string"),
    3: ("effect", "string"),
    4: ("timeAdded", TIME),
}
NODE_ALLOCATABLE_RESOURCE_MAPPING: Table = {
    1: ("capacityKey", "string?"),
    2: ("allocationMultiplier", "quantity?"),
}
DEVICE: Table = {
    1: ("name", "string"),
    2: ("attributes", ("msgmap", DEVICE_ATTRIBUTE)),
    3: ("capacity", ("msgmap", DEVICE_CAPACITY)),
    4: ("consumesCounters", [DEVICE_COUNTER_CONSUMPTION]),
    5: ("nodeName", "string?"),
    6: ("nodeSelector", NODE_SELECTOR),
    7: ("allNodes", "bool?"),
    8: ("taints", [DEVICE_TAINT]),
    9: ("bindsToNode", "bool?"),
    10: ("bindingConditions", ["string"]),
    11: ("bindingFailureConditions", ["string"]),
    12: ("allowMultipleAllocations", "bool?"),
    13: ("nodeAllocatableResourceMappings", ("msgmap", NODE_ALLOCATABLE_RESOURCE_MAPPING)),
}
COUNTER_SET: Table = {
    1: ("name", "string"),
    2: ("counters", ("msgmap", COUNTER)),
}
RESOURCE_SLICE_SPEC: Table = {
    1: ("driver", "string"),
    2: ("pool", RESOURCE_POOL),
    3: ("nodeName", "string?"),
    4: ("nodeSelector", NODE_SELECTOR),
    5: ("allNodes", "bool?"),
    6: ("devices", [DEVICE]),
    7: ("perDeviceNodeSelection", "bool?"),
    8: ("sharedCounters", [COUNTER_SET]),
}
RESOURCE_SLICE: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", RESOURCE_SLICE_SPEC),
}
DEVICE_TAINT_SELECTOR: Table = {
    2: ("driver", "string?"),
    3: ("pool", "string?"),
    4: ("device", "string?"),
}
DEVICE_TAINT_RULE_SPEC: Table = {
    1: ("deviceSelector", DEVICE_TAINT_SELECTOR),
    2: ("taint", DEVICE_TAINT),
}
DEVICE_TAINT_RULE_STATUS: Table = {
    1: ("conditions", [CONDITION]),
}
DEVICE_TAINT_RULE: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", DEVICE_TAINT_RULE_SPEC),
    3: ("status", DEVICE_TAINT_RULE_STATUS),
}
# resource.k8s.io/v1alpha3 (k8s.io/api v0.34.1 generated.proto): the selector's deviceClassName
# (1) and selectors (5) of 1.33-1.34, gone from 1.35
DEVICE_TAINT_RULE_V1ALPHA3: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", {
        1: ("deviceSelector", {**DEVICE_TAINT_SELECTOR, 1: ("deviceClassName", "string?"), 5: ("selectors", [DEVICE_SELECTOR])}),
        2: ("taint", DEVICE_TAINT),
    }),
    3: ("status", DEVICE_TAINT_RULE_STATUS),
}  # fmt: skip
