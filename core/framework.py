"""The plugin author's API: everything an in-tree plugin uses, and so everything a plugin needs.

Modelled on kube-scheduler's ``pkg/scheduler/framework`` package (with the helpers its plugins
take from ``component-helpers`` and ``framework/preemption``).  The in-tree plugins import only
this module, :mod:`kubesched.hookspecs` and each other, so whatever they do a third-party plugin
can do too.  Every name here is a re-export of the engine's own object: no wrappers, nothing added
on the per-node or per-pod paths.  Hooks are declared in :mod:`kubesched.hookspecs`; mark their
implementations with :data:`hookimpl`.

Results and statuses
    :class:`Status`, :class:`Code`; :class:`Rejections` (a batch Filter result as arrays);
    :class:`PreFilterResult` (narrow the candidate nodes),
    :class:`PostFilterResult` (a nominated node), :class:`PreBindPreFlightResult` (a PreBind
    that may run in parallel, 1.36).

Cycle and handle
    :class:`CycleState` (per-cycle plugin data), :data:`PODS_TO_ACTIVATE_KEY`,
    :class:`Handle` (what a factory receives, as upstream's ``New(ctx, args, handle)``: the
    snapshot, the listers, the nominator, the waiting pods, the client, the feature gates, the
    clock and rng, ``activate``, ``spawn``, the extenders, metrics; type a plugin's ``handle``
    with it and mypy checks every use), :class:`Framework` (a profile's runtime),
    :class:`WaitingPod` (Permit), :class:`QueuedPodInfo` (QueueSort),
    :data:`MAX_NODE_SCORE` / :data:`MIN_NODE_SCORE`, and the adapters :func:`per_node_filter` /
    :func:`per_node_score` that turn a per-node function into a batch hook.

Cluster events and queueing hints (EnqueueExtensions)
    :class:`ClusterEvent`, :class:`ClusterEventWithHint`, :class:`ActionType`,
    :class:`EventResource` (the kind of object an event is about; ``Resource`` in the engine),
    :class:`QueueingHint`.

Nodes and pods as the scheduler sees them
    :class:`NodeBatch` (the batch Filter / Score take, with numpy columns), :class:`NodeInfo`,
    :class:`PodInfo`, :class:`Snapshot` (the cycle's view of the cluster).

Resource arithmetic
    :class:`ResourceAmounts` (upstream's ``framework.Resource``: millicores and whole units),
    :data:`CPU`, :data:`MEMORY`, :data:`EPHEMERAL_STORAGE`, :data:`PODS`, :func:`pod_requests`
    (by :func:`request_rules`, a release's PodLevelResources and InPlacePodVerticalScaling rules), :func:`quantity_value`, :func:`parse_quantity`, :class:`QuantityError`; resource names:
    :func:`is_native_resource`, :func:`is_extended_resource_name`,
    :func:`is_scalar_resource_name`.

Label selectors (``metav1.LabelSelectorAsSelector``)
    :func:`compile_label_selector` (a :data:`LabelMatcher`), :func:`label_selector_matches`,
    :func:`selector_requirements`, :func:`requirements_match`, :data:`LabelRequirement`.

Node affinity (``component-helpers/scheduling/corev1/nodeaffinity``)
    :class:`NodeSelectorMatcher` (upstream's ``nodeaffinity.NodeSelector``),
    :class:`PreferredSchedulingTerms`, :class:`RequiredNodeAffinity`, :data:`OBJECT_NAME_FIELD`.

Taints and tolerations
    :func:`toleration_tolerates_taint`, :func:`tolerations_tolerate_taint`,
    :func:`find_matching_untolerated_taint`, :func:`do_not_schedule_taints_filter`,
    :data:`NO_SCHEDULE`, :data:`PREFER_NO_SCHEDULE`, :data:`NO_EXECUTE`,
    :data:`TAINT_NODE_UNSCHEDULABLE`.

Plugin args and messages
    :class:`ConfigError` (raised from a factory: reported at ``pluginConfig[i].args.<field>``),
    :class:`KubeschedError` (the base of every kubesched exception: a plugin's own derive from it),
    :class:`ConflictError` (a write through ``handle.client`` lost to a newer resourceVersion),
    :func:`qualified_name_errors` (``validation.IsQualifiedName``), :func:`go_value` (a value as
    ``field.Invalid`` prints it), :func:`go_duration` (Go's ``Duration.String``),
    :func:`parse_time` (RFC 3339 timestamps).

API objects
    :class:`Pod`, :class:`Node`, :class:`PodGroup`, :class:`Binding`, :class:`ObjectMeta`,
    :class:`ObjectReference`, :class:`Taint`, :class:`Toleration`, :class:`NodeAffinity`,
    :class:`PodAffinityTerm`, :class:`TopologySpreadConstraint`, :class:`LabelSelector`,
    :class:`LabelSelectorRequirement`, the storage kinds the volume plugins read
    (:class:`Volume`, :class:`PersistentVolume`, :class:`PersistentVolumeClaim`,
    :class:`StorageClass`, :class:`CSINode`, :class:`CSIDriver`, :class:`CSIStorageCapacity`,
    :class:`StatefulSet`), and :func:`convert` (plain builtins → an API object).

Persistent volumes (``component-helpers/storage/volume`` and ``storage/ephemeral``; the fake
cluster's PV controller uses the same copy)
    :func:`get_persistent_volume_claim_class`, :func:`get_persistent_volume_class`,
    :func:`is_delay_binding_mode`, :func:`find_matching_volume`,
    :func:`check_volume_mode_mismatches`, :func:`check_access_modes`,
    :func:`check_node_affinity` (on a :func:`label_node`), :func:`is_volume_bound_to_claim`,
    :func:`storage_quantity`, :func:`claim_reference`, :func:`get_bind_volume_to_claim`,
    :class:`VolumeError`; generic ephemeral volumes: :func:`ephemeral_claim_name`,
    :func:`volume_is_for_pod`, :func:`is_controlled_by`; the annotations
    :data:`ANN_BIND_COMPLETED`, :data:`ANN_BOUND_BY_CONTROLLER`, :data:`ANN_SELECTED_NODE`,
    :data:`ANN_DYNAMICALLY_PROVISIONED`, :data:`ANN_STORAGE_PROVISIONER`,
    :data:`ANN_BETA_STORAGE_PROVISIONER`, :data:`BETA_STORAGE_CLASS_ANNOTATION`, and
    :data:`NOT_SUPPORTED_PROVISIONER`, :data:`VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER`.

Preemption (upstream ``framework/preemption``)
    :class:`Evaluator` (candidates, dry run, PDBs, selection, sync or async victims' deletion),
    :data:`DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE`, :data:`DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE`,
    :data:`MSG_WAITING_FOR_PREEMPTION`.
"""

from __future__ import annotations

from kubesched.api._helpers import (
    NO_EXECUTE,
    NO_SCHEDULE,
    OBJECT_NAME_FIELD,
    PREFER_NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    NodeSelectorMatcher,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    go_value,
    is_extended_resource_name,
    is_native_resource,
    is_scalar_resource_name,
    qualified_name_errors,
    toleration_tolerates_taint,
    tolerations_tolerate_taint,
)
from kubesched.api._labels import (
    LabelMatcher,
    LabelRequirement,
    compile_label_selector,
    label_selector_matches,
    requirements_match,
    selector_requirements,
)
from kubesched.api._objects import (
    Binding,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    ObjectMeta,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodAffinityTerm,
    PodGroup,
    StatefulSet,
    StorageClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    convert,
)
from kubesched.api._pvhelpers import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    BETA_STORAGE_CLASS_ANNOTATION,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    VolumeError,
    check_access_modes,
    check_node_affinity,
    check_volume_mode_mismatches,
    claim_reference,
    ephemeral_claim_name,
    find_matching_volume,
    get_bind_volume_to_claim,
    get_persistent_volume_claim_class,
    get_persistent_volume_class,
    is_controlled_by,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
    label_node,
    storage_quantity,
    vac_matching,
    volume_is_for_pod,
)
from kubesched.api._resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    QuantityError,
    RequestRules,
    parse_quantity,
    pod_requests,
    quantity_value,
    request_rules,
)
from kubesched.api._resources import Resource as ResourceAmounts
from kubesched.cache._cache import Snapshot
from kubesched.config._versions import DEFAULT_VERSION, Version
from kubesched.preemption import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    MSG_WAITING_FOR_PREEMPTION,
    Evaluator,
)
from kubesched.queue._scheduling_queue import QueuedPodInfo
from kubesched.runtime._events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.runtime._events import Resource as EventResource
from kubesched.runtime._framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    POD_GROUP_CYCLE_KEY,
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    Framework,
    PostFilterResult,
    PreBindPreFlightResult,
    PreFilterResult,
    WaitingPod,
    go_duration,
    per_node_filter,
    per_node_score,
)
from kubesched.runtime._handle import Handle
from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, PodInfo, parse_time
from kubesched.runtime._placement import (
    Placement,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    ProposedAssignment,
)
from kubesched.runtime._status import Code, Rejections, Status

from ._errors import ConfigError, ConflictError, KubeschedError
from .hookspecs import hookimpl

__all__ = [
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "ActionType",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "Binding",
    "CPU",
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "ConfigError",
    "ConflictError",
    "CycleState",
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DEFAULT_VERSION",
    "EPHEMERAL_STORAGE",
    "Evaluator",
    "EventResource",
    "Framework",
    "Handle",
    "KubeschedError",
    "LabelMatcher",
    "LabelRequirement",
    "LabelSelector",
    "LabelSelectorRequirement",
    "MAX_NODE_SCORE",
    "MEMORY",
    "MIN_NODE_SCORE",
    "MSG_WAITING_FOR_PREEMPTION",
    "NOT_SUPPORTED_PROVISIONER",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "Node",
    "NodeAffinity",
    "NodeBatch",
    "NodeInfo",
    "NodeSelectorMatcher",
    "OBJECT_NAME_FIELD",
    "ObjectMeta",
    "ObjectReference",
    "PODS",
    "PODS_TO_ACTIVATE_KEY",
    "POD_GROUP_CYCLE_KEY",
    "PREFER_NO_SCHEDULE",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Placement",
    "PlacementScore",
    "Pod",
    "PodAffinityTerm",
    "PodGroup",
    "PodGroupAssignments",
    "PodGroupInfo",
    "PodInfo",
    "PostFilterResult",
    "PreBindPreFlightResult",
    "PreFilterResult",
    "PreferredSchedulingTerms",
    "ProposedAssignment",
    "QuantityError",
    "QueuedPodInfo",
    "QueueingHint",
    "Rejections",
    "RequestRules",
    "RequiredNodeAffinity",
    "ResourceAmounts",
    "Snapshot",
    "StatefulSet",
    "Status",
    "StorageClass",
    "TAINT_NODE_UNSCHEDULABLE",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER",
    "Version",
    "Volume",
    "VolumeError",
    "WaitingPod",
    "check_access_modes",
    "check_node_affinity",
    "check_volume_mode_mismatches",
    "claim_reference",
    "compile_label_selector",
    "convert",
    "do_not_schedule_taints_filter",
    "ephemeral_claim_name",
    "find_matching_untolerated_taint",
    "find_matching_volume",
    "get_bind_volume_to_claim",
    "get_persistent_volume_claim_class",
    "get_persistent_volume_class",
    "go_duration",
    "go_value",
    "hookimpl",
    "is_controlled_by",
    "is_delay_binding_mode",
    "is_extended_resource_name",
    "is_native_resource",
    "is_scalar_resource_name",
    "is_volume_bound_to_claim",
    "label_node",
    "label_selector_matches",
    "parse_quantity",
    "parse_time",
    "per_node_filter",
    "per_node_score",
    "pod_requests",
    "qualified_name_errors",
    "quantity_value",
    "request_rules",
    "requirements_match",
    "selector_requirements",
    "storage_quantity",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
    "vac_matching",
    "volume_is_for_pod",
]
