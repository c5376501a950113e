"""Dynamic Resource Allocation objects: ``resource.k8s.io/v1`` (and DeviceTaintRule's
``resource.k8s.io/v1beta2``) as msgspec Structs.

Ported from k8s.io/api ``resource/v1/types.go`` and ``resource/v1beta2/types.go`` at tag
``v0.36.0`` (Kubernetes v1.36.0); the defaults from kubernetes ``pkg/apis/resource/v1/defaults.go``
at ``v1.36.0``.  Same conventions as ``_objects``: snake_case in Python, camelCase on the wire,
empty defaults omitted, a field the API server defaults to a non-empty value set in
``__post_init__`` (which also runs on decode).  Every field of the v1.36 types is declared, so an
object round-trips through the fake cluster and the fake API server without losing a field.

DeviceTaintRule is not in ``resource.k8s.io/v1`` at v1.36.0 (it is ``v1alpha3`` and ``v1beta2``
there; ``v1`` only from v1.37): kubesched stores it as ``resource.k8s.io/v1beta2``, the newest
version v1.36 has, and takes and serves it as ``v1alpha3`` too (1.33-1.35 have only that one;
its fields are v1beta2's from 1.35).
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api._objects import KINDS, Condition, Int64, NodeSelector, ObjectMeta, Quantity, _Obj

RESOURCE_V1 = "resource.k8s.io/v1"
RESOURCE_V1BETA2 = "resource.k8s.io/v1beta2"
RESOURCE_V1ALPHA3 = "resource.k8s.io/v1alpha3"
"""DeviceTaintRule's version in 1.33-1.35 (the same fields as v1beta2 from 1.35)."""

# --- constants of resource/v1/types.go (v0.36.0) -----------------------------------------------

FINALIZER = "resource.kubernetes.io/delete-protection"
"""Set on claims the builtin controllers allocate (the scheduler's PreBind adds it)."""
POD_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""On a template-generated claim: the ``spec.resourceClaims[].name`` it was generated for."""
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
TOLERATION_OP_EXISTS = "Exists"
TOLERATION_OP_EQUAL = "Equal"
TAINT_EFFECT_NONE = "None"
TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"
CONFIG_SOURCE_CLASS = "FromClass"
CONFIG_SOURCE_CLAIM = "FromClaim"

# limits (types.go): what validation enforces
DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
RESOURCE_SLICE_MAX_SHARED_CAPACITY = 128
RESOURCE_SLICE_MAX_DEVICES = 128
RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
BINDING_CONDITIONS_MAX_SIZE = 4
BINDING_FAILURE_CONDITIONS_MAX_SIZE = 4
RESOURCE_SLICE_MAX_COUNTER_SETS = 8
RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET = 32
RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION = 32
RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
DEVICE_TAINTS_MAX_LENGTH = 16
ALLOCATION_RESULTS_MAX_SIZE = 32
DEVICE_REQUESTS_MAX_SIZE = ALLOCATION_RESULTS_MAX_SIZE
DEVICE_CONSTRAINTS_MAX_SIZE = 32
DEVICE_CONFIG_MAX_SIZE = 32
DEVICE_SELECTORS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
DEVICE_TOLERATIONS_MAX_LENGTH = 16
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8
ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_DEVICE_DATA_MAX_IPS = 16
NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH = 256
NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH = 128
DEVICE_TAINT_RULE_STATUS_MAX_CONDITIONS = 8


# --- DeviceClass -------------------------------------------------------------------------------


class CELDeviceSelector(_Obj):
    expression: str = ""


class DeviceSelector(_Obj):
    """Exactly one field set (validation): today only ``cel``."""

    cel: CELDeviceSelector | None = None


class OpaqueDeviceConfiguration(_Obj):
    driver: str = ""
    parameters: Any = None
    """``runtime.RawExtension``: any JSON value, passed to the driver as is."""


class DeviceClassConfiguration(_Obj):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassSpec(_Obj):
    selectors: list[DeviceSelector] = []
    config: list[DeviceClassConfiguration] = []
    extended_resource_name: str | None = None


class DeviceClass(_Obj):
    api_version: str = RESOURCE_V1
    kind: str = "DeviceClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = msgspec.field(default_factory=DeviceClassSpec)


# --- ResourceClaim spec ------------------------------------------------------------------------


class DeviceToleration(_Obj):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: Int64 | None = None

    def __post_init__(self) -> None:
        if not self.operator:  # +default="Equal"
            self.operator = TOLERATION_OP_EQUAL


class CapacityRequirements(_Obj):
    requests: dict[str, Quantity] = {}


def _default_count(req: ExactDeviceRequest | DeviceSubRequest) -> None:
    # SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest (pkg/apis/resource/v1/defaults.go)
    if not req.allocation_mode:
        req.allocation_mode = ALLOCATION_MODE_EXACT_COUNT
    if req.allocation_mode == ALLOCATION_MODE_EXACT_COUNT and req.count == 0:
        req.count = 1


class ExactDeviceRequest(_Obj):
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str = ""
    count: Int64 = 0
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None

    def __post_init__(self) -> None:
        _default_count(self)


class DeviceSubRequest(_Obj):
    name: str = ""
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str = ""
    count: Int64 = 0
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None

    def __post_init__(self) -> None:
        _default_count(self)


class DeviceRequest(_Obj):
    """One request: ``exactly`` one kind of device, or the ``firstAvailable`` of a prioritized
    list of subrequests (exactly one of the two is set: validation)."""

    name: str = ""
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = []


class DeviceConstraint(_Obj):
    requests: list[str] = []
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaimConfiguration(_Obj):
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClaim(_Obj):
    requests: list[DeviceRequest] = []
    constraints: list[DeviceConstraint] = []
    config: list[DeviceClaimConfiguration] = []


class ResourceClaimSpec(_Obj):
    devices: DeviceClaim = msgspec.field(default_factory=DeviceClaim)


# --- ResourceClaim status ----------------------------------------------------------------------


class DeviceRequestAllocationResult(_Obj):
    request: str = ""
    """The request's name, ``<request>/<subrequest>`` for a firstAvailable pick."""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, Quantity] = {}


class DeviceAllocationConfiguration(_Obj):
    source: str = ""
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationResult(_Obj):
    results: list[DeviceRequestAllocationResult] = []
    config: list[DeviceAllocationConfiguration] = []


class AllocationResult(_Obj):
    devices: DeviceAllocationResult = msgspec.field(default_factory=DeviceAllocationResult)
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(_Obj):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class NetworkDeviceData(_Obj):
    interface_name: str = ""
    ips: list[str] = []
    hardware_address: str = ""


class AllocatedDeviceStatus(_Obj):
    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    conditions: list[Condition] = []
    data: Any = None
    network_data: NetworkDeviceData | None = None


class ResourceClaimStatus(_Obj):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = []
    devices: list[AllocatedDeviceStatus] = []


class ResourceClaim(_Obj):
    api_version: str = RESOURCE_V1
    kind: str = "ResourceClaim"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = msgspec.field(default_factory=ResourceClaimStatus)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.metadata.namespace}/{self.metadata.name}"


class ResourceClaimTemplateSpec(_Obj):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(_Obj):
    api_version: str = RESOURCE_V1
    kind: str = "ResourceClaimTemplate"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


# --- ResourceSlice -----------------------------------------------------------------------------


class ResourcePool(_Obj):
    name: str = ""
    generation: Int64 = 0
    resource_slice_count: Int64 = 0


class Counter(_Obj):
    value: Quantity = "0"


class CounterSet(_Obj):
    name: str = ""
    counters: dict[str, Counter] = {}


class DeviceCounterConsumption(_Obj):
    counter_set: str = ""
    counters: dict[str, Counter] = {}


class DeviceAttribute(_Obj):
    """Exactly one of the typed values (validation); the list forms are v1.36's alpha
    DRAListTypeAttributes."""

    int_value: Int64 | None = msgspec.field(default=None, name="int")
    bool_value: bool | None = msgspec.field(default=None, name="bool")
    string_value: str | None = msgspec.field(default=None, name="string")
    version_value: str | None = msgspec.field(default=None, name="version")
    int_values: list[Int64] | None = msgspec.field(default=None, name="ints")
    bool_values: list[bool] | None = msgspec.field(default=None, name="bools")
    string_values: list[str] | None = msgspec.field(default=None, name="strings")
    version_values: list[str] | None = msgspec.field(default=None, name="versions")


class CapacityRequestPolicyRange(_Obj):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(_Obj):
    default: Quantity | None = None
    valid_values: list[Quantity] = []
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(_Obj):
    value: Quantity = "0"
    request_policy: CapacityRequestPolicy | None = None


class DeviceTaint(_Obj):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None
    """Defaulted to the creation time (SetDefaults_DeviceTaint) by whoever stores the object:
    the fake cluster, from its clock."""


class NodeAllocatableResourceMapping(_Obj):
    capacity_key: str | None = None
    allocation_multiplier: Quantity | None = None


class Device(_Obj):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, DeviceCapacity] = {}
    consumes_counters: list[DeviceCounterConsumption] = []
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = []
    binds_to_node: bool | None = None
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    allow_multiple_allocations: bool | None = None
    node_allocatable_resource_mappings: dict[str, NodeAllocatableResourceMapping] = {}

    def __post_init__(self) -> None:
        # SetDefaults_Device: a mapping's allocationMultiplier defaults to 1
        for m in self.node_allocatable_resource_mappings.values():
            if m.allocation_multiplier is None:
                m.allocation_multiplier = "1"


class ResourceSliceSpec(_Obj):
    driver: str = ""
    pool: ResourcePool = msgspec.field(default_factory=ResourcePool)
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    devices: list[Device] = []
    per_device_node_selection: bool | None = None
    shared_counters: list[CounterSet] = []


class ResourceSlice(_Obj):
    api_version: str = RESOURCE_V1
    kind: str = "ResourceSlice"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceSliceSpec = msgspec.field(default_factory=ResourceSliceSpec)


# --- DeviceTaintRule (resource.k8s.io/v1beta2 at v1.36) ------------------------------------------


class DeviceTaintSelector(_Obj):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    # v1alpha3 in 1.33-1.34 only (k8s.io/api v0.34.1): a class whose selectors the device must
    # match, and CEL selectors of the rule's own; gone from 1.35
    device_class_name: str | None = None
    selectors: list[DeviceSelector] = []


class DeviceTaintRuleSpec(_Obj):
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint = msgspec.field(default_factory=DeviceTaint)


class DeviceTaintRuleStatus(_Obj):
    conditions: list[Condition] = []


class DeviceTaintRule(_Obj):
    api_version: str = RESOURCE_V1BETA2
    kind: str = "DeviceTaintRule"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceTaintRuleSpec = msgspec.field(default_factory=DeviceTaintRuleSpec)
    status: DeviceTaintRuleStatus = msgspec.field(default_factory=DeviceTaintRuleStatus)


DRA_KINDS: dict[tuple[str, str], type[Any]] = {
    (RESOURCE_V1, "DeviceClass"): DeviceClass,
    (RESOURCE_V1, "ResourceClaim"): ResourceClaim,
    (RESOURCE_V1, "ResourceClaimTemplate"): ResourceClaimTemplate,
    (RESOURCE_V1, "ResourceSlice"): ResourceSlice,
    (RESOURCE_V1BETA2, "DeviceTaintRule"): DeviceTaintRule,
    (RESOURCE_V1ALPHA3, "DeviceTaintRule"): DeviceTaintRule,
}
"""(apiVersion, kind) → struct for the DRA kinds (part of ``KINDS``)."""

KINDS.update(DRA_KINDS)
