"""The public face: ``__all__`` changes only on purpose, every public name is documented."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from _sources import GROUP, parsed

import kubesched
import kubesched.framework
import kubesched.hookspecs
import kubesched.plugins

pytestmark = GROUP

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_ALL = {
    "ActionType", "Binding", "ClusterEvent", "ClusterEventWithHint", "Code", "ConfigError",
    "ConflictError", "CycleState", "Diagnosis", "Event", "EventResource", "FitError", "Framework",
    "KubeschedError", "Lease", "Node", "NodeBatch", "NodeInfo", "NotFoundError", "Pod",
    "PodDisruptionBudget", "PodGroup", "PodInfo", "PluginError", "PostFilterResult",
    "PreFilterResult", "PriorityClass", "QuantityError", "QueuedPodInfo", "QueueingHint",
    "Resource", "SchedulingQueue", "Status", "Transport", "TransportError", "UnavailableError",
    "WaitingPod", "WatchEvent", "hookimpl", "hookspec", "parse_quantity", "per_node_filter",
    "per_node_score", "pod_requests", "__version__",
    "WatchEventType",  # what a transport's watch yields (transports import only public names)
    "load_config",  # a configuration validated before any scheduler starts (embedding)
    "plain_exception",  # the one exception a task group's ExceptionGroup stands for
}


def test_all_is_pinned() -> None:
    assert set(kubesched.__all__) >= EXPECTED_ALL
    extra = set(kubesched.__all__) - EXPECTED_ALL
    assert not extra - {"Scheduler", "SchedulerConfig", "ClusterState", "load_entry_point_plugins", "simulate"}, extra


def test_every_public_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name in kubesched.__all__
        if (inspect.isclass(obj := getattr(kubesched, name)) or inspect.isfunction(obj))
        and not inspect.getdoc(obj)
    ]
    assert not missing


def _hooks() -> list[str]:
    return [n for n in vars(kubesched.hookspecs) if n.startswith("kubesched_")]


def test_every_hook_has_a_docstring() -> None:
    assert all(inspect.getdoc(getattr(kubesched.hookspecs, n)) for n in _hooks())


def test_reference_docs_list_every_hook() -> None:
    text = (ROOT / "docs" / "hooks.md").read_text()
    missing = [n for n in _hooks() if f"## `{n}`" not in text]
    assert not missing, f"docs/hooks.md lacks {missing}"


# --- kubesched.framework: the plugin author's API ------------------------------------------------

FRAMEWORK_ALL = [
    "ANN_BETA_STORAGE_PROVISIONER", "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED", "ANN_SELECTED_NODE", "ANN_STORAGE_PROVISIONER", "ActionType",
    "BETA_STORAGE_CLASS_ANNOTATION", "Binding", "CPU", "CSIDriver", "CSINode", "CSIStorageCapacity",
    "ClusterEvent", "ClusterEventWithHint", "Code", "ConfigError", "ConflictError", "CycleState",
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE", "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE", "DEFAULT_VERSION",
    "EPHEMERAL_STORAGE", "Evaluator", "EventResource", "Framework", "Handle", "KubeschedError",
    "LabelMatcher", "LabelRequirement", "LabelSelector", "LabelSelectorRequirement", "MAX_NODE_SCORE",
    "MEMORY", "MIN_NODE_SCORE", "MSG_WAITING_FOR_PREEMPTION", "NOT_SUPPORTED_PROVISIONER", "NO_EXECUTE",
    "NO_SCHEDULE", "Node", "NodeAffinity", "NodeBatch", "NodeInfo", "NodeSelectorMatcher",
    "OBJECT_NAME_FIELD", "ObjectMeta", "ObjectReference", "PODS", "PODS_TO_ACTIVATE_KEY",
    "POD_GROUP_CYCLE_KEY", "PREFER_NO_SCHEDULE", "PersistentVolume", "PersistentVolumeClaim",
    "Placement", "PlacementScore", "Pod", "PodAffinityTerm", "PodGroup", "PodGroupAssignments",
    "PodGroupInfo", "PodInfo", "PostFilterResult", "PreBindPreFlightResult", "PreFilterResult", "PreferredSchedulingTerms",
    "ProposedAssignment", "QuantityError", "QueuedPodInfo", "QueueingHint", "Rejections",
    "RequestRules", "RequiredNodeAffinity", "ResourceAmounts", "Snapshot", "StatefulSet", "Status",
    "StorageClass", "TAINT_NODE_UNSCHEDULABLE", "Taint", "Toleration", "TopologySpreadConstraint",
    "VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER", "Version", "Volume", "VolumeError", "WaitingPod",
    "check_access_modes", "check_node_affinity", "check_volume_mode_mismatches", "claim_reference",
    "compile_label_selector", "convert", "do_not_schedule_taints_filter", "ephemeral_claim_name",
    "find_matching_untolerated_taint", "find_matching_volume", "get_bind_volume_to_claim",
    "get_persistent_volume_claim_class", "get_persistent_volume_class", "go_duration", "go_value",
    "hookimpl", "is_controlled_by", "is_delay_binding_mode", "is_extended_resource_name",
    "is_native_resource", "is_scalar_resource_name", "is_volume_bound_to_claim", "label_node",
    "label_selector_matches", "parse_quantity", "parse_time", "per_node_filter", "per_node_score",
    "pod_requests", "qualified_name_errors", "quantity_value", "request_rules", "requirements_match",
    "selector_requirements", "storage_quantity", "toleration_tolerates_taint",
    "tolerations_tolerate_taint", "vac_matching", "volume_is_for_pod",
]  # fmt: skip


def test_framework_all_is_pinned_and_sorted() -> None:
    assert kubesched.framework.__all__ == FRAMEWORK_ALL
    assert sorted(FRAMEWORK_ALL) == FRAMEWORK_ALL


def test_framework_names_are_the_engines_own_objects() -> None:
    """Re-exports only: no wrapper is defined in kubesched.framework (nothing added on hot paths)."""
    defined_here = [
        name
        for name in kubesched.framework.__all__
        if getattr(getattr(kubesched.framework, name), "__module__", None) == "kubesched.framework"
    ]
    assert not defined_here
    assert kubesched.framework.Status is kubesched.Status
    assert kubesched.framework.EventResource is kubesched.EventResource
    assert kubesched.framework.ResourceAmounts is kubesched.Resource
    assert kubesched.framework.hookimpl is kubesched.hookimpl


def test_every_framework_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name in kubesched.framework.__all__
        if (inspect.isclass(obj := getattr(kubesched.framework, name)) or inspect.isfunction(obj))
        and not inspect.getdoc(obj)
    ]
    assert not missing
    assert inspect.getdoc(kubesched.framework)


def _handle_members() -> list[str]:
    return [n for n, v in vars(kubesched.framework.Handle).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))]


def test_every_handle_member_has_a_docstring_and_a_row_in_the_docs() -> None:
    """The Handle Protocol is the plugin's whole door: each member says what it is, and
    docs/hooks.md's table lists it."""
    members = _handle_members()
    assert {"snapshot", "cluster", "nominator", "client", "activate", "spawn", "metrics_recorder"} <= set(members)
    assert not [n for n in members if not inspect.getdoc(getattr(kubesched.framework.Handle, n))]
    text = (ROOT / "docs" / "hooks.md").read_text()
    section = text[text.index("## The handle") :]
    section = section[: section.index("\n## ", 1)]
    assert not [n for n in members if f"`{n}" not in section]


def test_the_scheduler_handle_and_the_fake_handle_implement_the_protocol() -> None:
    """Every member of Handle is on the handle a Framework gives its plugins and on FakeHandle."""
    from kubesched.testing import FakeHandle, framework_for

    for handle in (framework_for({}).handle, FakeHandle(), kubesched.framework.Framework(
        "p", {"queueSort": [("PrioritySort", 1)], "bind": [("DefaultBinder", 1)]}, kubesched.plugins.IN_TREE
    ).handle):
        assert not [n for n in _handle_members() if not hasattr(handle, n)], type(handle)


def _module_name(path: Path, root: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def _imports(path: Path, module: str) -> list[tuple[int, str, str | None, str]]:
    """Every import in ``path`` (module level, in functions, under TYPE_CHECKING), resolved:
    (line, imported module, imported name or None, enclosing function or "")."""
    is_package = path.name == "__init__.py"
    out: list[tuple[int, str, str | None, str]] = []

    def visit(node: ast.AST, func: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node.name
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, None, func) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.extend((node.lineno, target, a.name, func) for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child, func)

    visit(parsed(path), "")
    return out


def _is_private_engine_module(name: str) -> bool:
    """``kubesched._errors``, ``kubesched.api._objects``: a private module anywhere below kubesched
    (the plugins' own, ``kubesched.plugins._helper``, are theirs to use)."""
    parts = name.split(".")
    if parts[:2] == ["kubesched", "plugins"]:
        return False
    return parts[0] == "kubesched" and any(p.startswith("_") for p in parts[1:])


PLUGIN_FILES = sorted((ROOT / "plugins").rglob("*.py"))


@pytest.mark.parametrize("path", PLUGIN_FILES, ids=[str(p.relative_to(ROOT)) for p in PLUGIN_FILES])
def test_plugins_import_only_public_kubesched_modules(path: Path) -> None:
    """A third-party plugin can do what an in-tree plugin does: plugins never reach into the
    engine's private modules (absolute or relative imports, in functions or under TYPE_CHECKING)."""
    module = _module_name(path, ROOT / "plugins", "kubesched.plugins")
    bad = []
    for line, target, name, _ in _imports(path, module):
        if _is_private_engine_module(target):
            bad.append(f"{line}: {target}")
        elif target == "kubesched" and name is not None and name.startswith("_"):
            bad.append(f"{line}: kubesched.{name}")
    assert not bad, f"{path.relative_to(ROOT)} imports private engine modules: {bad}"


def test_private_import_check_sees_relative_and_nested_imports(tmp_path: Path) -> None:
    src = tmp_path / "plugins" / "pkg" / "mod.py"
    src.parent.mkdir(parents=True)
    src.write_text(
        "from ... import _status\n"
        "from ..._framework import CycleState\n"
        "from .. import _helper\n"
        "def f():\n"
        "    import kubesched.api._objects\n"
        "    from kubesched.framework import Pod\n"
    )
    found = [
        (target, name, func)
        for _, target, name, func in _imports(src, "kubesched.plugins.pkg.mod")
    ]
    assert found == [
        ("kubesched", "_status", ""),
        ("kubesched._framework", "CycleState", ""),
        ("kubesched.plugins", "_helper", ""),
        ("kubesched.api._objects", None, "f"),
        ("kubesched.framework", "Pod", "f"),
    ]


def test_the_engine_does_not_import_the_plugins_helper_module() -> None:
    """Direction: plugins build on the engine, not the other way round."""
    bad = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        module = _module_name(path, ROOT / "core", "kubesched")
        for line, target, name, _func in _imports(path, module):
            helper = target == "kubesched.plugins._helper" or (
                target == "kubesched.plugins" and name == "_helper"
            )
            if helper:
                bad.append(f"{path.relative_to(ROOT)}:{line}")
    bad = sorted(set(bad))
    assert not bad


# --- kubesched.api and kubesched.validation: the faces of the engine's subsystem packages -------
# (what transports/ and tools use instead of the private modules behind them)

API_ALL = [
    "ANN_BETA_STORAGE_PROVISIONER", "ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED", "ANN_SELECTED_NODE", "ANN_STORAGE_PROVISIONER",
    "AWSElasticBlockStoreVolumeSource", "Affinity", "AzureDiskVolumeSource",
    "BETA_STORAGE_CLASS_ANNOTATION", "Binding", "BoundedLoader", "CPU", "CSIDriver",
    "CSIDriverSpec", "CSINode", "CSINodeDriver", "CSINodeSpec", "CSIPersistentVolumeSource",
    "CSIStorageCapacity", "CSIVolumeSource", "CinderVolumeSource", "Condition", "Container",
    "ContainerImage", "ContainerPort", "Deployment", "DeploymentCondition", "DeploymentSpec",
    "DeploymentStatus", "DeploymentStrategy", "EPHEMERAL_STORAGE", "EphemeralVolumeSource", "Event",
    "GCEPersistentDiskVolumeSource", "GangSchedulingPolicy", "HostPathVolumeSource",
    "ISCSIVolumeSource", "Job", "JobCondition", "JobSpec", "JobStatus", "KINDS", "LabelMatcher",
    "LabelRequirement", "LabelSelector", "LabelSelectorRequirement", "Lease", "LeaseSpec",
    "LocalVolumeSource", "MAX_DEPTH", "MAX_DURATION_SECONDS", "MAX_INPUT_BYTES", "MAX_QUANTITY",
    "MEMORY", "NOT_SUPPORTED_PROVISIONER", "NO_EXECUTE", "NO_SCHEDULE", "Node", "NodeAffinity",
    "NodeCondition", "NodeSelector", "NodeSelectorMatcher", "NodeSelectorRequirement",
    "NodeSelectorTerm", "NodeSpec", "NodeStatus", "OBJECT_NAME_FIELD", "ObjectMeta",
    "ObjectReference", "OwnerReference", "PODS", "PREFER_NO_SCHEDULE", "PersistentVolume",
    "PersistentVolumeClaim", "PersistentVolumeClaimSpec", "PersistentVolumeClaimStatus",
    "PersistentVolumeClaimTemplate", "PersistentVolumeClaimVolumeSource", "PersistentVolumeSpec",
    "PersistentVolumeStatus", "Pod", "PodAffinity", "PodAffinityTerm", "PodCondition",
    "PodDisruptionBudget", "PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus", "PodGroup",
    "PodGroupPolicy", "PodGroupSpec", "PodGroupStatus", "PodGroupTemplate", "PodSchedulingGate",
    "PodSchedulingGroup", "PodSpec", "PodStatus", "PodTemplateSpec", "PreferredSchedulingTerm",
    "PreferredSchedulingTerms", "PriorityClass", "Quantity", "QuantityError", "RBDVolumeSource",
    "ReplicaSet", "ReplicaSetSpec", "ReplicaSetStatus", "RequiredNodeAffinity", "Resource",
    "ResourceList", "ResourceRequirements", "RollingUpdateDeployment", "SCHEDULING_POD_GROUP_KIND",
    "SchedulingPodGroup", "SchedulingPodGroupSpec", "SchedulingPodGroupStatus", "StatefulSet",
    "StatefulSetOrdinals", "StatefulSetPersistentVolumeClaimRetentionPolicy", "StatefulSetSpec",
    "StatefulSetStatus", "StorageClass", "TAINT_NODE_UNSCHEDULABLE", "Taint", "Toleration",
    "TopologySelectorLabelRequirement", "TopologySelectorTerm", "TopologySpreadConstraint",
    "TypedLocalObjectReference", "VALIDATION_MODES", "VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER",
    "Volume", "VolumeError", "VolumeNodeAffinity", "VolumeNodeResources",
    "VolumeResourceRequirements", "WORKLOAD_API_V1ALPHA1", "WORKLOAD_API_V1ALPHA2",
    "WeightedPodAffinityTerm", "Workload", "WorkloadPodGroup", "WorkloadReference", "WorkloadSpec",
    "check_access_modes", "check_node_affinity", "check_volume_mode_mismatches", "claim_reference",
    "compile_label_selector", "convert", "copy", "decode_json", "do_not_schedule_taints_filter",
    "drop_nulls", "ephemeral_claim_name", "field_warning", "find_matching_untolerated_taint",
    "find_matching_volume", "format_duration", "get_bind_volume_to_claim",
    "get_persistent_volume_claim_class", "get_persistent_volume_class", "go_value",
    "is_controlled_by", "is_delay_binding_mode", "is_extended_resource_name", "is_native_resource",
    "is_scalar_resource_name", "is_volume_bound_to_claim", "knows", "label_node",
    "label_selector_matches", "load_documents", "load_yaml_documents", "milli_value",
    "parse_documents", "parse_duration", "parse_duration_nanos", "parse_quantity", "parse_time_ns",
    "pod_requests", "qualified_name_errors", "quantity_value", "read_text", "requirements_match",
    "rfc3339_ns", "selector_matches", "selector_requirements", "storage_quantity", "strict_error",
    "to_builtins", "toleration_tolerates_taint", "tolerations_tolerate_taint", "uid_for",
    "unknown_fields", "vac_matching", "volume_is_for_pod", "whole_value",
]  # fmt: skip

# resource.k8s.io (DRA): kubesched.api._dra and the pod fields it reads
API_DRA = [
    "ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH", "ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS",
    "ALLOCATION_MODE_ALL", "ALLOCATION_MODE_EXACT_COUNT", "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocatedDeviceStatus", "AllocationResult", "BINDING_CONDITIONS_MAX_SIZE",
    "BINDING_FAILURE_CONDITIONS_MAX_SIZE", "CELDeviceSelector", "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH", "CONFIG_SOURCE_CLAIM", "CONFIG_SOURCE_CLASS",
    "CapacityRequestPolicy", "CapacityRequestPolicyRange", "CapacityRequirements",
    "ContainerExtendedResourceRequest", "ContainerResourceClaim", "Counter", "CounterSet", "DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH",
    "DEVICE_CONFIG_MAX_SIZE", "DEVICE_CONSTRAINTS_MAX_SIZE", "DEVICE_MAX_DOMAIN_LENGTH",
    "DEVICE_MAX_ID_LENGTH", "DEVICE_REQUESTS_MAX_SIZE", "DEVICE_SELECTORS_MAX_SIZE",
    "DEVICE_TAINTS_MAX_LENGTH", "DEVICE_TAINT_RULE_STATUS_MAX_CONDITIONS",
    "DEVICE_TOLERATIONS_MAX_LENGTH", "DRA_KINDS", "DRIVER_NAME_MAX_LENGTH", "Device",
    "DeviceAllocationConfiguration", "DeviceAllocationResult", "DeviceAttribute", "DeviceCapacity",
    "DeviceClaim", "DeviceClaimConfiguration", "DeviceClass", "DeviceClassConfiguration",
    "DeviceClassSpec", "DeviceConstraint", "DeviceCounterConsumption", "DeviceRequest",
    "DeviceRequestAllocationResult", "DeviceSelector", "DeviceSubRequest", "DeviceTaint",
    "DeviceTaintRule", "DeviceTaintRuleSpec", "DeviceTaintRuleStatus", "DeviceTaintSelector",
    "DeviceToleration", "EXTENDED_RESOURCE_CLAIM_ANNOTATION", "ExactDeviceRequest", "FINALIZER",
    "FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE", "NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH",
    "NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH", "NETWORK_DEVICE_DATA_MAX_IPS",
    "NetworkDeviceData", "NodeAllocatableResourceMapping", "OPAQUE_PARAMETERS_MAX_LENGTH",
    "OpaqueDeviceConfiguration", "POD_RESOURCE_CLAIM_ANNOTATION", "POOL_NAME_MAX_LENGTH",
    "PodExtendedResourceClaimStatus", "PodResourceClaim", "PodResourceClaimStatus",
    "RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE",
    "RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE",
    "RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE", "RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET",
    "RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION", "RESOURCE_SLICE_MAX_COUNTER_SETS",
    "RESOURCE_SLICE_MAX_DEVICES", "RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES",
    "RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE",
    "RESOURCE_SLICE_MAX_SHARED_CAPACITY", "RESOURCE_V1", "RESOURCE_V1ALPHA3", "RESOURCE_V1BETA2", "ResourceClaim",
    "ResourceClaimConsumerReference", "ResourceClaimSpec", "ResourceClaimStatus",
    "ResourceClaimTemplate", "ResourceClaimTemplateSpec", "ResourcePool", "ResourceSlice",
    "ResourceSliceSpec", "TAINT_EFFECT_NONE", "TAINT_EFFECT_NO_EXECUTE", "TAINT_EFFECT_NO_SCHEDULE",
    "TOLERATION_OP_EQUAL", "TOLERATION_OP_EXISTS"
]  # fmt: skip

VALIDATION_ALL = [
    "SYSTEM_PRIORITY_CLASSES", "check_priority_admission", "check_scheduling_pod_group_update",
    "check_workload_update", "dns1123_label_errors",
    "dns1123_subdomain_errors", "go_quote", "label_value_errors", "validate_labels", "validate_name",
    "validate_namespace_name", "validate_object",
]  # fmt: skip


@pytest.mark.parametrize(
    ("module", "expected"),
    [("kubesched.api", sorted(API_ALL + API_DRA)), ("kubesched.validation", VALIDATION_ALL)],
)
def test_subsystem_faces_are_pinned_sorted_and_re_exports(module: str, expected: list[str]) -> None:
    face = importlib.import_module(module)
    assert face.__all__ == expected
    assert sorted(expected) == expected
    assert inspect.getdoc(face)
    defined_here = [n for n in expected if getattr(getattr(face, n), "__module__", None) == module]
    assert not defined_here, "re-exports only"
