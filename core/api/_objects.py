"""Kubernetes API objects as msgspec Structs.

snake_case in Python, camelCase on the wire (``rename="camel"``); unknown fields are ignored on
decode and empty defaults are omitted on encode, so a manifest written for a real cluster decodes
as is and an object we write is what a real API server would accept.  Only the fields the
scheduler reads or writes are declared.

Why one file: the API objects reference one another (a StatefulSet holds a pod template and
claim templates, a PersistentVolume a NodeSelector), and one module of plain structs reads as the
API reference does; it holds no logic beyond defaulting and the time parser.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Annotated, Any

import msgspec

Quantity = str | int | float
# Go's int32 / int64 fields: a number outside the range is refused on decode, as upstream's
Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
ResourceList = dict[str, Quantity]


class _Obj(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True, gc=False):
    """Base of every API struct: camelCase on the wire, keyword-only, defaults omitted.

    ``gc=False``: API objects are trees (no struct refers back to a parent), so the cycle
    collector need not track them; a cluster's hundreds of thousands of structs otherwise make
    every full collection walk them all (a third of ``bench basic``'s time).  Their lists and
    dicts stay tracked as usual."""


_DEFAULTED: Any = msgspec.UNSET
"""The declared default of a field the API server defaults to a value that is not empty
(``schedulerName: default-scheduler``, a port's ``protocol: TCP``): ``__post_init__`` (which
also runs on decode) sets the value, so the field is always written, as the API server writes
it, instead of being left out as a default."""


# --- metadata --------------------------------------------------------------------------------


class OwnerReference(_Obj):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(_Obj):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: Int64 = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[OwnerReference] = []
    finalizers: list[str] = []


class ObjectReference(_Obj):
    api_version: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    resource_version: str = ""


class LabelSelectorRequirement(_Obj):
    key: str
    operator: str
    values: list[str] = []


class LabelSelector(_Obj):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []


# --- node ------------------------------------------------------------------------------------


class Taint(_Obj):
    key: str
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class NodeSpec(_Obj):
    unschedulable: bool = False
    taints: list[Taint] = []
    pod_cidr: str = msgspec.field(default="", name="podCIDR")
    provider_id: str = msgspec.field(default="", name="providerID")


class ContainerImage(_Obj):
    names: list[str] = []
    size_bytes: Int64 = 0


class NodeCondition(_Obj):
    type: str
    status: str
    reason: str = ""
    message: str = ""


class NodeStatus(_Obj):
    capacity: ResourceList = {}
    allocatable: ResourceList = {}
    images: list[ContainerImage] = []
    conditions: list[NodeCondition] = []
    declared_features: list[str] = []  # NodeDeclaredFeatures (1.35 alpha): what the kubelet declares


class Node(_Obj):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


# --- pod -------------------------------------------------------------------------------------


class ContainerResourceClaim(_Obj):
    """``containers[].resources.claims[]`` (core/v1 ``ResourceClaim``): which of the pod's
    ``spec.resourceClaims`` the container uses, and optionally which request of it."""

    name: str = ""
    request: str = ""


class ResourceRequirements(_Obj):
    requests: ResourceList | None = None
    limits: ResourceList | None = None
    claims: list[ContainerResourceClaim] = []


class ContainerPort(_Obj):
    container_port: Int32 = 0
    host_port: Int32 = 0
    protocol: str = _DEFAULTED
    host_ip: str = msgspec.field(default="", name="hostIP")
    name: str = ""

    def __post_init__(self) -> None:
        if self.protocol is _DEFAULTED:
            self.protocol = "TCP"


class VolumeMount(_Obj):
    """Where a container mounts one of the pod's volumes (what validation checks of it)."""

    name: str = ""
    mount_path: str = ""


class ContainerRestartRule(_Obj):
    """``restartPolicyRules[]`` (ContainerRestartRules, 1.34 alpha): what NodeDeclaredFeatures
    reads (the action; ``RestartAllContainers`` needs the node to declare
    RestartAllContainersOnContainerExits)."""

    action: str = ""
    exit_codes: dict[str, Any] | None = None


class Container(_Obj):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = msgspec.field(default_factory=ResourceRequirements)
    ports: list[ContainerPort] = []
    restart_policy: str | None = None
    restart_policy_rules: list[ContainerRestartRule] = []
    volume_mounts: list[VolumeMount] = []


class NodeSelectorRequirement(_Obj):
    key: str
    operator: str
    values: list[str] = []


class NodeSelectorTerm(_Obj):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(_Obj):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(_Obj):
    weight: Int32 = 0
    preference: NodeSelectorTerm = msgspec.field(default_factory=NodeSelectorTerm)


class NodeAffinity(_Obj):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class PodAffinityTerm(_Obj):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(_Obj):
    weight: Int32 = 0
    pod_affinity_term: PodAffinityTerm = msgspec.field(default_factory=PodAffinityTerm)


class PodAffinity(_Obj):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(_Obj):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Toleration(_Obj):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: Int64 | None = None


class TopologySpreadConstraint(_Obj):
    max_skew: Int32 = _DEFAULTED
    topology_key: str = ""
    when_unsatisfiable: str = _DEFAULTED
    label_selector: LabelSelector | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []

    def __post_init__(self) -> None:
        if self.max_skew is _DEFAULTED:
            self.max_skew = 1
        if self.when_unsatisfiable is _DEFAULTED:
            self.when_unsatisfiable = "DoNotSchedule"


class PodSchedulingGate(_Obj):
    name: str


class PodResourceClaim(_Obj):
    """``pod.spec.resourceClaims[]``: a claim by name, or a template to make one from."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


# --- volumes (pod.spec.volumes): the sources the volume plugins read ---------------------------


class PersistentVolumeClaimVolumeSource(_Obj):
    claim_name: str = ""
    read_only: bool = False


class GCEPersistentDiskVolumeSource(_Obj):
    pd_name: str = msgspec.field(default="", name="pdName")
    fs_type: str = ""
    partition: Int32 = 0
    read_only: bool = False


class AWSElasticBlockStoreVolumeSource(_Obj):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    partition: Int32 = 0
    read_only: bool = False


class RBDVolumeSource(_Obj):
    monitors: list[str] = []
    image: str = ""
    fs_type: str = ""
    pool: str = ""
    user: str = ""
    keyring: str = ""
    read_only: bool = False


class ISCSIVolumeSource(_Obj):
    target_portal: str = ""
    iqn: str = ""
    lun: Int32 = 0
    iscsi_interface: str = ""
    fs_type: str = ""
    read_only: bool = False


class AzureDiskVolumeSource(_Obj):
    disk_name: str = ""
    disk_uri: str = msgspec.field(default="", name="diskURI")
    kind: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None


class CinderVolumeSource(_Obj):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    read_only: bool = False


class CSIVolumeSource(_Obj):
    driver: str = ""
    read_only: bool | None = None
    fs_type: str | None = None
    volume_attributes: dict[str, str] = {}


class HostPathVolumeSource(_Obj):
    path: str = ""
    type: str | None = None


class EphemeralVolumeSource(_Obj):
    volume_claim_template: PersistentVolumeClaimTemplate | None = None


class Volume(_Obj):
    """A pod volume: its name and the one source set (the others left None)."""

    name: str = ""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    csi: CSIVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    empty_dir: dict[str, Any] | None = None
    config_map: dict[str, Any] | None = None
    secret: dict[str, Any] | None = None
    projected: dict[str, Any] | None = None
    downward_api: dict[str, Any] | None = msgspec.field(default=None, name="downwardAPI")
    # the sources no volume plugin reads: kept so that "exactly one source" holds
    git_repo: dict[str, Any] | None = None
    nfs: dict[str, Any] | None = None
    glusterfs: dict[str, Any] | None = None
    flex_volume: dict[str, Any] | None = None
    cephfs: dict[str, Any] | None = None
    flocker: dict[str, Any] | None = None
    fc: dict[str, Any] | None = None
    azure_file: dict[str, Any] | None = None
    vsphere_volume: dict[str, Any] | None = None
    quobyte: dict[str, Any] | None = None
    photon_persistent_disk: dict[str, Any] | None = None
    portworx_volume: dict[str, Any] | None = None
    scale_io: dict[str, Any] | None = msgspec.field(default=None, name="scaleIO")
    storageos: dict[str, Any] | None = None
    image: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # SetDefaults_Volume: a volume with no source is an emptyDir
        if all(getattr(self, f) is None for f in self.__struct_fields__ if f != "name"):
            self.empty_dir = {}


# --- v1 PersistentVolume, PersistentVolumeClaim ------------------------------------------------


class TypedLocalObjectReference(_Obj):
    api_group: str | None = None
    kind: str = ""
    name: str = ""


class VolumeResourceRequirements(_Obj):
    requests: ResourceList | None = None
    limits: ResourceList | None = None


class PersistentVolumeClaimSpec(_Obj):
    access_modes: list[str] = []
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements = msgspec.field(default_factory=VolumeResourceRequirements)
    volume_name: str = ""
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: TypedLocalObjectReference | None = None
    volume_attributes_class_name: str | None = None

    def __post_init__(self) -> None:
        if self.volume_mode is None:  # SetDefaults_PersistentVolumeClaimSpec
            self.volume_mode = "Filesystem"


class PersistentVolumeClaimStatus(_Obj):
    phase: str = ""
    access_modes: list[str] = []
    capacity: ResourceList = {}


class PersistentVolumeClaim(_Obj):
    api_version: str = "v1"
    kind: str = "PersistentVolumeClaim"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = msgspec.field(default_factory=PersistentVolumeClaimStatus)


class PersistentVolumeClaimTemplate(_Obj):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)


class VolumeNodeAffinity(_Obj):
    required: NodeSelector | None = None


class CSIPersistentVolumeSource(_Obj):
    driver: str = ""
    volume_handle: str = ""
    read_only: bool = False
    fs_type: str = ""
    volume_attributes: dict[str, str] = {}


class LocalVolumeSource(_Obj):
    path: str = ""
    fs_type: str | None = None


class PersistentVolumeSpec(_Obj):
    capacity: ResourceList = {}
    access_modes: list[str] = []
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str = ""
    storage_class_name: str = ""
    mount_options: list[str] = []
    volume_mode: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    volume_attributes_class_name: str | None = None
    csi: CSIPersistentVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    local: LocalVolumeSource | None = None
    # the sources no volume plugin reads: kept so that "exactly one source" holds
    glusterfs: dict[str, Any] | None = None
    flocker: dict[str, Any] | None = None
    nfs: dict[str, Any] | None = None
    quobyte: dict[str, Any] | None = None
    cephfs: dict[str, Any] | None = None
    fc: dict[str, Any] | None = None
    flex_volume: dict[str, Any] | None = None
    azure_file: dict[str, Any] | None = None
    vsphere_volume: dict[str, Any] | None = None
    photon_persistent_disk: dict[str, Any] | None = None
    portworx_volume: dict[str, Any] | None = None
    scale_io: dict[str, Any] | None = msgspec.field(default=None, name="scaleIO")
    storageos: dict[str, Any] | None = None

    def __post_init__(self) -> None:  # SetDefaults_PersistentVolume
        if not self.persistent_volume_reclaim_policy:
            self.persistent_volume_reclaim_policy = "Retain"
        if self.volume_mode is None:
            self.volume_mode = "Filesystem"


class PersistentVolumeStatus(_Obj):
    phase: str = ""
    message: str = ""
    reason: str = ""


class PersistentVolume(_Obj):
    api_version: str = "v1"
    kind: str = "PersistentVolume"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeSpec = msgspec.field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = msgspec.field(default_factory=PersistentVolumeStatus)


# --- storage.k8s.io/v1 ---------------------------------------------------------------------------


class TopologySelectorLabelRequirement(_Obj):
    key: str = ""
    values: list[str] = []


class TopologySelectorTerm(_Obj):
    match_label_expressions: list[TopologySelectorLabelRequirement] = []


class StorageClass(_Obj):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "StorageClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    provisioner: str = ""
    parameters: dict[str, str] = {}
    reclaim_policy: str | None = None
    mount_options: list[str] = []
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] = []

    def __post_init__(self) -> None:  # SetDefaults_StorageClass
        if self.reclaim_policy is None:
            self.reclaim_policy = "Delete"
        if self.volume_binding_mode is None:
            self.volume_binding_mode = "Immediate"


class VolumeNodeResources(_Obj):
    count: Int32 | None = None


class CSINodeDriver(_Obj):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    topology_keys: list[str] = []
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(_Obj):
    drivers: list[CSINodeDriver] = []


class CSINode(_Obj):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSINode"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CSINodeSpec = msgspec.field(default_factory=CSINodeSpec)


class CSIDriverSpec(_Obj):
    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    storage_capacity: bool | None = None
    volume_lifecycle_modes: list[str] = []
    fs_group_policy: str | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = None

    def __post_init__(self) -> None:  # SetDefaults_CSIDriver
        if self.attach_required is None:
            self.attach_required = True
        for f in ("pod_info_on_mount", "storage_capacity", "requires_republish", "se_linux_mount"):
            if getattr(self, f) is None:
                setattr(self, f, False)
        if self.fs_group_policy is None:
            self.fs_group_policy = "ReadWriteOnceWithFSType"
        if not self.volume_lifecycle_modes:
            self.volume_lifecycle_modes = ["Persistent"]


class CSIDriver(_Obj):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSIDriver"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CSIDriverSpec = msgspec.field(default_factory=CSIDriverSpec)


class CSIStorageCapacity(_Obj):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSIStorageCapacity"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    node_topology: LabelSelector | None = None
    storage_class_name: str = ""
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None


class WorkloadReference(_Obj):
    """``spec.workloadRef`` (1.35, k8s.io/api v0.35.0 core/v1 ``WorkloadReference``; gone in 1.36):
    the Workload, its pod group and the group's replica (:mod:`kubesched.api._workload`)."""

    name: str = ""
    pod_group: str = ""
    pod_group_replica_key: str = ""


class PodSchedulingGroup(_Obj):
    """``spec.schedulingGroup`` (1.36, k8s.io/api v0.36.0 core/v1 ``PodSchedulingGroup``): the
    standalone PodGroup (``scheduling.k8s.io/v1alpha2``) the pod belongs to."""

    pod_group_name: str | None = None


class Condition(_Obj):
    """``metav1.Condition``: the conditions of a device's status, a DeviceTaintRule and a PodGroup."""

    type: str = ""
    status: str = ""
    observed_generation: Int64 = 0
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class PodSpec(_Obj):
    node_name: str = ""
    scheduler_name: str = _DEFAULTED
    priority: Int32 | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    containers: list[Container] = []
    init_containers: list[Container] = []
    overhead: ResourceList | None = None
    resources: ResourceRequirements | None = None  # pod-level resources (PodLevelResources, 1.32+)
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    scheduling_gates: list[PodSchedulingGate] = []
    resource_claims: list[PodResourceClaim] = []
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    host_network: bool = False
    host_users: bool | None = None
    hostname: str = ""
    restart_policy: str = _DEFAULTED
    volumes: list[Volume] = []
    workload_ref: WorkloadReference | None = None
    scheduling_group: PodSchedulingGroup | None = None

    def __post_init__(self) -> None:
        if self.scheduler_name is _DEFAULTED:
            self.scheduler_name = "default-scheduler"
        if self.restart_policy is _DEFAULTED:
            self.restart_policy = "Always"


class PodCondition(_Obj):
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = None
    last_probe_time: str | None = None


class PodResourceClaimStatus(_Obj):
    """``pod.status.resourceClaimStatuses[]``: the name of the claim generated for a template
    entry of ``spec.resourceClaims`` (None when none was needed), set by the resourceclaim
    controller."""

    name: str = ""
    resource_claim_name: str | None = None


class ContainerStatus(_Obj):
    """What the scheduler reads of a container's status: the resources of an in-place resize
    (InPlacePodVerticalScaling): allocated by the kubelet, and actuated (``resources``)."""

    name: str = ""
    resources: ResourceRequirements | None = None
    allocated_resources: ResourceList | None = None


class ContainerExtendedResourceRequest(_Obj):
    """``pod.status.extendedResourceClaimStatus.requestMappings[]`` (DRAExtendedResource): which
    request of the scheduler's claim serves a container's extended resource."""

    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class PodExtendedResourceClaimStatus(_Obj):
    """``pod.status.extendedResourceClaimStatus``: the claim the scheduler made for the pod's
    extended resources backed by DRA, and its request per container and resource."""

    request_mappings: list[ContainerExtendedResourceRequest] = []
    resource_claim_name: str = ""


class PodStatus(_Obj):
    phase: str = ""
    conditions: list[PodCondition] = []
    container_statuses: list[ContainerStatus] = []
    init_container_statuses: list[ContainerStatus] = []
    resize: str = ""  # 1.30-1.32: Proposed, InProgress, Deferred, Infeasible (conditions from 1.33)
    nominated_node_name: str = ""
    start_time: str | None = None
    host_ip: str = msgspec.field(default="", name="hostIP")
    pod_ip: str = msgspec.field(default="", name="podIP")
    resource_claim_statuses: list[PodResourceClaimStatus] = []
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    # pod-level resize (InPlacePodLevelResourcesVerticalScaling): actuated and allocated
    resources: ResourceRequirements | None = None
    allocated_resources: ResourceList | None = None


class Pod(_Obj):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)

    @property
    def key(self) -> str:
        """``namespace/name``, the pod's identity in messages."""
        return f"{self.metadata.namespace}/{self.metadata.name}"


# --- scheduling.k8s.io, policy, scheduling.x-k8s.io --------------------------------------------


class PriorityClass(_Obj):
    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    value: Int32 = 0
    global_default: bool = False
    preemption_policy: str | None = None
    description: str = ""


class PodDisruptionBudgetSpec(_Obj):
    min_available: Int32 | str | None = None
    max_unavailable: Int32 | str | None = None
    selector: LabelSelector | None = None


class PodDisruptionBudgetStatus(_Obj):
    observed_generation: Int64 = 0
    disrupted_pods: dict[str, str] = {}
    disruptions_allowed: Int32 = 0
    current_healthy: Int32 = 0
    desired_healthy: Int32 = 0
    expected_pods: Int32 = 0


class PodDisruptionBudget(_Obj):
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = msgspec.field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus | None = None


class PodGroupSpec(_Obj):
    min_member: Int32 = _DEFAULTED
    min_resources: ResourceList | None = None
    schedule_timeout_seconds: Int32 | None = None

    def __post_init__(self) -> None:
        if self.min_member is _DEFAULTED:
            self.min_member = 1


class PodGroupStatus(_Obj):
    phase: str = ""
    occupied_by: str = ""
    running: Int32 = 0
    succeeded: Int32 = 0
    failed: Int32 = 0
    schedule_start_time: str | None = None


class PodGroup(_Obj):
    api_version: str = "scheduling.x-k8s.io/v1alpha1"
    kind: str = "PodGroup"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodGroupSpec = msgspec.field(default_factory=PodGroupSpec)
    status: PodGroupStatus = msgspec.field(default_factory=PodGroupStatus)


# --- writes ----------------------------------------------------------------------------------


class Binding(_Obj):
    api_version: str = "v1"
    kind: str = "Binding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    target: ObjectReference = msgspec.field(default_factory=ObjectReference)


class Event(_Obj):
    """An events.k8s.io/v1 Event."""

    api_version: str = "events.k8s.io/v1"
    kind: str = "Event"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    event_time: str | None = None
    reporting_controller: str = ""
    reporting_instance: str = ""
    action: str = ""
    reason: str = ""
    regarding: ObjectReference = msgspec.field(default_factory=ObjectReference)
    related: ObjectReference | None = None
    note: str = ""
    type: str = _DEFAULTED

    def __post_init__(self) -> None:
        if self.type is _DEFAULTED:
            self.type = "Normal"


class LeaseSpec(_Obj):
    holder_identity: str | None = None
    lease_duration_seconds: Int32 | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: Int32 | None = None


class Lease(_Obj):
    api_version: str = "coordination.k8s.io/v1"
    kind: str = "Lease"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LeaseSpec = msgspec.field(default_factory=LeaseSpec)


# --- batch/v1, apps/v1: the workload controllers' kinds (simulated time) ---------------------


class PodTemplateSpec(_Obj):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)


class JobSpec(_Obj):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    completion_mode: str | None = None
    backoff_limit: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)


class JobCondition(_Obj):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_probe_time: str | None = None
    last_transition_time: str | None = None


class JobStatus(_Obj):
    active: Int32 = 0
    succeeded: Int32 = 0
    failed: Int32 = 0
    ready: Int32 | None = None
    start_time: str | None = None
    completion_time: str | None = None
    completed_indexes: str = ""
    conditions: list[JobCondition] = []


class Job(_Obj):
    api_version: str = "batch/v1"
    kind: str = "Job"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSpec = msgspec.field(default_factory=JobSpec)
    status: JobStatus = msgspec.field(default_factory=JobStatus)


class ReplicaSetSpec(_Obj):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    min_ready_seconds: Int32 = 0


class ReplicaSetStatus(_Obj):
    replicas: Int32 = _DEFAULTED  # (always written: not omitempty upstream)
    fully_labeled_replicas: Int32 = 0
    ready_replicas: Int32 = 0
    available_replicas: Int32 = 0
    observed_generation: Int64 = 0

    def __post_init__(self) -> None:
        if self.replicas is _DEFAULTED:
            self.replicas = 0


class RollingUpdateDeployment(_Obj):
    max_unavailable: Int32 | str | None = None
    max_surge: Int32 | str | None = None


class DeploymentStrategy(_Obj):
    type: str = ""
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(ReplicaSetSpec):
    """A Deployment's spec: a ReplicaSet's, with its rollout's strategy and deadline."""

    strategy: DeploymentStrategy | None = None
    progress_deadline_seconds: Int32 | None = None
    paused: bool = False


class DeploymentCondition(_Obj):
    type: str = ""
    status: str = ""
    last_update_time: str | None = None
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class DeploymentStatus(_Obj):
    observed_generation: Int64 = 0
    replicas: Int32 = 0
    updated_replicas: Int32 = 0
    ready_replicas: Int32 = 0
    available_replicas: Int32 = 0
    unavailable_replicas: Int32 = 0
    conditions: list[DeploymentCondition] = []


class ReplicaSet(_Obj):
    api_version: str = "apps/v1"
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec = msgspec.field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus = msgspec.field(default_factory=ReplicaSetStatus)


class Deployment(_Obj):
    api_version: str = "apps/v1"
    kind: str = "Deployment"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeploymentSpec = msgspec.field(default_factory=DeploymentSpec)
    status: DeploymentStatus = msgspec.field(default_factory=DeploymentStatus)


class StatefulSetPersistentVolumeClaimRetentionPolicy(_Obj):
    when_deleted: str = _DEFAULTED
    when_scaled: str = _DEFAULTED

    def __post_init__(self) -> None:
        if self.when_deleted is _DEFAULTED:
            self.when_deleted = "Retain"
        if self.when_scaled is _DEFAULTED:
            self.when_scaled = "Retain"


class StatefulSetOrdinals(_Obj):
    start: Int32 = 0


class StatefulSetUpdateStrategy(_Obj):
    """What validation checks of a StatefulSet's update strategy (no rolling update is emulated)."""

    type: str = "RollingUpdate"
    rolling_update: dict[str, Any] | None = None


class StatefulSetSpec(_Obj):
    replicas: Int32 | None = None
    min_ready_seconds: Int32 = 0
    update_strategy: StatefulSetUpdateStrategy = msgspec.field(default_factory=StatefulSetUpdateStrategy)
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    volume_claim_templates: list[PersistentVolumeClaim] = []
    service_name: str = ""
    pod_management_policy: str = _DEFAULTED
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    ordinals: StatefulSetOrdinals | None = None

    def __post_init__(self) -> None:
        if self.pod_management_policy is _DEFAULTED:
            self.pod_management_policy = "OrderedReady"


class StatefulSetStatus(_Obj):
    observed_generation: Int64 = 0
    replicas: Int32 = _DEFAULTED  # (replicas and availableReplicas: always written, as upstream)
    ready_replicas: Int32 = 0
    current_replicas: Int32 = 0
    updated_replicas: Int32 = 0
    current_revision: str = ""
    update_revision: str = ""
    available_replicas: Int32 = _DEFAULTED

    def __post_init__(self) -> None:
        if self.replicas is _DEFAULTED:
            self.replicas = 0
        if self.available_replicas is _DEFAULTED:
            self.available_replicas = 0


class StatefulSet(_Obj):
    api_version: str = "apps/v1"
    kind: str = "StatefulSet"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = msgspec.field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus = msgspec.field(default_factory=StatefulSetStatus)


KINDS: dict[tuple[str, str], type[Any]] = {
    ("v1", "Node"): Node,
    ("v1", "Pod"): Pod,
    ("scheduling.k8s.io/v1", "PriorityClass"): PriorityClass,
    ("policy/v1", "PodDisruptionBudget"): PodDisruptionBudget,
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): PodGroup,
    ("v1", "Binding"): Binding,
    ("events.k8s.io/v1", "Event"): Event,
    ("coordination.k8s.io/v1", "Lease"): Lease,
    ("batch/v1", "Job"): Job,
    ("apps/v1", "ReplicaSet"): ReplicaSet,
    ("apps/v1", "Deployment"): Deployment,
    ("apps/v1", "StatefulSet"): StatefulSet,
    ("v1", "PersistentVolume"): PersistentVolume,
    ("v1", "PersistentVolumeClaim"): PersistentVolumeClaim,
    ("storage.k8s.io/v1", "StorageClass"): StorageClass,
    ("storage.k8s.io/v1", "CSINode"): CSINode,
    ("storage.k8s.io/v1", "CSIDriver"): CSIDriver,
    ("storage.k8s.io/v1", "CSIStorageCapacity"): CSIStorageCapacity,
}
"""(apiVersion, kind) → struct, for the kinds kubesched reads and writes (the Workload API's
kinds, :data:`kubesched.api._workload.WORKLOAD_KINDS`, and ``_dra``'s DRA kinds join it when the
package is imported: ``kubesched/api/__init__.py``)."""


def to_builtins(obj: Any) -> Any:
    """The object as plain JSON-ready builtins (camelCase keys; empty defaults omitted, the
    fields the API server defaults to a value always written)."""
    return msgspec.to_builtins(obj)


def convert(data: Any, kind: type[Any]) -> Any:
    """Decode plain builtins (a parsed manifest) into ``kind``; raises msgspec.ValidationError."""
    return msgspec.convert(data, kind, strict=False)


_ENCODER = msgspec.msgpack.Encoder()
_DECODERS: dict[type[Any], msgspec.msgpack.Decoder[Any]] = {}


def copy(obj: Any) -> Any:
    """A deep copy of an API object (through msgpack: cheaper than plain builtins)."""
    kind = type(obj)
    dec = _DECODERS.get(kind)
    if dec is None:
        dec = _DECODERS[kind] = msgspec.msgpack.Decoder(kind)
    return dec.decode(_ENCODER.encode(obj))


def uid_for(namespace: str, name: str) -> str:
    """A deterministic uid for ``namespace/name`` (RFC 4122 shape): what the fake cluster and
    the test builders (``kubesched.testing``) give an object that has none."""
    h = hashlib.sha1(f"{namespace}/{name}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


# --- times ---------------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$"
)


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_time_ns(ts: str | None) -> int | None:
    """A ``metav1.Time`` (RFC 3339) as integer nanoseconds since the epoch, nanosecond precision;
    None when unset."""
    if not ts:
        return None
    return rfc3339_ns(ts)


@functools.lru_cache(maxsize=16384)
def rfc3339_ns(ts: str) -> int:
    """:func:`parse_time_ns` of a set timestamp, cached per string (pods' start times repeat)."""
    if len(ts) >= 20 and ts[-1] == "Z" and ts[4] == "-" and ts[10] == "T" and ts[19] in ".Z":
        # the form the API server writes: 2024-01-02T03:04:05Z or with a fraction, in UTC
        frac = ts[20:-1]
        try:
            secs = _days_from_civil(int(ts[0:4]), int(ts[5:7]), int(ts[8:10])) * 86400 + int(ts[11:13]) * 3600 + int(ts[14:16]) * 60 + int(ts[17:19])
        except ValueError:
            secs = None
        if secs is not None and (not frac or (frac.isdigit() and frac.isascii())) and _RFC3339.match(ts):
            return secs * 1_000_000_000 + int(frac[:9].ljust(9, "0") or 0)
    m = _RFC3339.match(ts)
    if m is None:
        from datetime import datetime

        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1e9)
    import calendar

    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = (m.group(7) or "")[:9].ljust(9, "0")
    secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    tz = m.group(8)
    if tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        secs -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return secs * 1_000_000_000 + int(frac)
