"""The emulated Kubernetes versions and the versioned feature gates (kubesched.config._versions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched import ConfigError
from kubesched.config._config import default_multi_point, parse_config
from kubesched.config._versions import (
    DEFAULT_VERSION,
    FEATURE_GATES,
    SUPPORTED_VERSIONS,
    Version,
    default_feature_gates,
    feature_gate_table,
    parse_feature_gates,
    parse_version,
)
from kubesched.plugins import IN_TREE
from kubesched.runtime._framework import build_framework
from kubesched.runtime._plugins import PluginError
from kubesched.scenario import load_config_file

DOCS = Path(__file__).parents[2] / "docs" / "feature-gates.md"
RANGE = "must be a Kubernetes minor version MAJOR.MINOR from 1.30 to 1.36"


@pytest.mark.parametrize("text", ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"])
def test_supported_versions_parse(text: str) -> None:
    v = parse_version(text)
    assert str(v) == text
    assert v in SUPPORTED_VERSIONS


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1.29", id="before the range"),
        pytest.param("1.37", id="after the range"),
        pytest.param("2.0", id="another major"),
        pytest.param("abc", id="not a version"),
        pytest.param("1.36.1", id="a patch release"),
        pytest.param("v1.36", id="a v prefix"),
        pytest.param("1.030", id="a leading zero"),
        pytest.param("", id="empty"),
    ],
)
def test_other_versions_are_one_error_naming_the_range(text: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_version(text)
    assert str(e.value) == f'--emulated-version: Invalid value: "{text}": {RANGE}'


def test_the_default_is_the_newest() -> None:
    assert DEFAULT_VERSION == Version(1, 36) == SUPPORTED_VERSIONS[-1]
    assert load_config_file("").emulated_version == Version(1, 36)


# gate: its default per version, 1.30 … 1.36; None: the gate does not exist (its value is the
# code's without it).  Each column is the VersionedSpecs entry at that tag (see FEATURE_GATES).
DEFAULTS = {
    # v1.30.6/v1.31.8 kube_features.go Beta off; v1.34.7 VersionedSpecs {1.32 Beta on}, {1.34 GA on, locked}
    "SchedulerQueueingHints": [False, False, True, True, True, True, True],
    # v1.33.3 VersionedSpecs {1.33 Beta on}
    "SchedulerPopFromBackoffQ": [None, None, None, True, True, True, True],
    # v1.35.4 VersionedSpecs {1.32 Alpha off}, {1.33 Beta on}
    "SchedulerAsyncPreemption": [None, None, False, True, True, True, True],
    # v1.35.4 VersionedSpecs {1.26 Alpha off}, {1.32 Beta off}, {1.34 GA on}, {1.35 GA on, locked}
    "DynamicResourceAllocation": [False, False, False, False, True, True, True],
    # v1.35.4 VersionedSpecs {1.33 Alpha off}
    "StorageCapacityScoring": [None, None, None, False, False, False, False],
    # upstream's VersionedSpecs after v1.36.0: {1.32 Alpha off}, {1.34 Beta on}, {1.36 GA on, locked}
    "DRAAdminAccess": [None, None, False, False, True, True, True],
    # {1.34 Alpha off}, {1.36 Beta on}
    "DRAConsumableCapacity": [None, None, None, None, False, False, True],
    "DRADeviceBindingConditions": [None, None, None, None, False, False, True],
    # {1.34 Alpha off}, {1.36 Beta on} (v1.34 kube_features.go; after v1.36.0 the same two entries)
    "DRAExtendedResource": [None, None, None, None, False, False, True],
    # {1.35 Alpha off}, {1.36 Beta off} ("Depends on an off-by-default beta API")
    "DRADeviceTaintRules": [None, None, None, None, None, False, False],
    # {1.33 Alpha off}, {1.36 Beta on}
    "DRADeviceTaints": [None, None, None, False, False, False, True],
    "DRAPartitionableDevices": [None, None, None, False, False, False, True],
    # {1.36 Alpha off}
    "DRAListTypeAttributes": [None, None, None, None, None, None, False],
    # {1.33 Alpha off}, {1.34 Beta on}, {1.36 GA on}
    "DRAPrioritizedList": [None, None, None, False, True, True, True],
    # {1.32 Alpha off}, {1.33 Beta on}
    "DRAResourceClaimDeviceStatus": [None, None, False, True, True, True, True],
    # v1.35 VersionedSpecs {1.35 Alpha off} (the Workload API, issue 36)
    "GenericWorkload": [None, None, None, None, None, False, False],
    "GangScheduling": [None, None, None, None, None, False, False],
    "TopologyAwareWorkloadScheduling": [None, None, None, None, None, None, False],
    "WorkloadAwarePreemption": [None, None, None, None, None, None, False],
    # VersionedSpecs at 1.33 and 1.35 {1.32 Alpha off}, {1.34 Beta on}
    "PodLevelResources": [None, None, False, False, True, True, True],
    # v1.30.6/v1.31.8 Alpha off; VersionedSpecs at 1.33 and 1.35 {1.27 Alpha off}, {1.33 Beta on}, {1.35 GA locked}
    "InPlacePodVerticalScaling": [False, False, False, True, True, True, True],
    # VersionedSpecs at 1.35 {1.35 Alpha off}; after v1.36.0 {1.36 Beta on}
    "NodeDeclaredFeatures": [None, None, None, None, None, False, True],
    # VersionedSpecs at 1.35: {1.34 Alpha off}, {1.35 Beta on} (both)
    "NominatedNodeNameForExpectation": [None, None, None, None, False, True, True],
    "OpportunisticBatching": [None, None, None, None, None, True, True],
    "ClearingNominatedNodeNameAfterBinding": [None, None, None, None, False, True, True],
    # v1.30.6 Beta on; VersionedSpecs {1.31 GA on, locked}, "remove in 1.33": absent, on, from 1.33
    "PodDisruptionConditions": [True, True, True, None, None, None, None],
    # v1.30.6 Alpha off; VersionedSpecs at 1.33 and 1.35 {1.29 Alpha off}, {1.31 Beta on}, {1.33 GA on, locked}
    "MatchLabelKeysInPodAffinity": [False, True, True, True, True, True, True],
    # v1.30.6 Beta on; VersionedSpecs {1.25 Alpha off}, {1.27 Beta on}
    "MatchLabelKeysInPodTopologySpread": [True, True, True, True, True, True, True],
    # v1.30.6 Beta on; VersionedSpecs {1.25 Alpha off}, {1.26 Beta on}, {1.33 GA on, locked}
    "NodeInclusionPolicyInPodTopologySpread": [True, True, True, True, True, True, True],
    # v1.34.7 VersionedSpecs {1.34 Beta on}
    "DRASchedulerFilterTimeout": [None, None, None, None, True, True, True],
    # v1.30.6 Alpha off; VersionedSpecs {1.29 Alpha off}, {1.31 Beta off}, {1.34 GA on}, {1.36 GA locked}
    "VolumeAttributesClass": [False, False, False, False, True, True, True],
    # upstream's VersionedSpecs after v1.36.0 {1.35 Alpha off}, {1.36 Beta on}
    "InPlacePodLevelResourcesVerticalScaling": [None, None, None, None, None, False, True],
    # kubesched's own: the v1.34.7/v1.35.4 sources where issue 34 expects 1.33's (docs/versions.md)
    "KubeschedSourceExact": [None, None, None, None, False, False, False],
}


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS, ids=str)
def test_gate_defaults_per_version(version: Version) -> None:
    i = SUPPORTED_VERSIONS.index(version)
    # a gate absent at the version has the code's value without it: off before the gate, its
    # last default after its removal (PodDisruptionConditions from 1.33)
    want = {gate: bool(values[i]) if values[i] is not None else FEATURE_GATES[gate].value_without_gate(version)
            for gate, values in DEFAULTS.items()}
    assert default_feature_gates(version) == want
    exists = {gate for gate, values in DEFAULTS.items() if values[i] is not None}
    assert {g for g in FEATURE_GATES if FEATURE_GATES[g].spec_at(version) is not None} == exists


def test_every_modelled_gate_is_in_the_table() -> None:
    assert set(FEATURE_GATES) == set(DEFAULTS)


@pytest.mark.parametrize(
    ("version", "text", "message"),
    [
        pytest.param("1.31", "SchedulerPopFromBackoffQ=true", "unrecognized feature gate: SchedulerPopFromBackoffQ",
                     id="a gate newer than the version"),
        pytest.param("1.31", "SchedulerAsyncPreemption=false", "unrecognized feature gate: SchedulerAsyncPreemption",
                     id="async preemption before 1.32"),
        pytest.param("1.32", "StorageCapacityScoring=true", "unrecognized feature gate: StorageCapacityScoring",
                     id="storage capacity scoring before 1.33"),
        pytest.param("1.34", "OpportunisticBatching=true", "unrecognized feature gate: OpportunisticBatching",
                     id="opportunistic batching before 1.35"),
        pytest.param("1.34", "SchedulerQueueingHints=false",
                     "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true",
                     id="queueing hints locked from 1.34"),
        pytest.param("1.35", "DynamicResourceAllocation=false",
                     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true",
                     id="DRA locked from 1.35"),
        pytest.param("1.36", "Bogus=true", "unrecognized feature gate: Bogus", id="unknown everywhere"),
        pytest.param("1.36", "Bogus=true,SchedulerAsyncPreemption=nope",
                     'invalid value of SchedulerAsyncPreemption=nope, err: strconv.ParseBool: parsing "nope": '
                     "invalid syntax", id="values are parsed before the gates are checked"),
    ],
)  # fmt: skip
def test_feature_gates_are_checked_against_the_version(version: str, text: str, message: str) -> None:
    # component-base v0.36.0 featuregate/feature_gate.go Set / unsafeSetFromMap
    with pytest.raises(ConfigError) as e:
        parse_feature_gates(text, version=parse_version(version))
    assert str(e.value) == f"--feature-gates: {message}"


@pytest.mark.parametrize(
    ("version", "text", "gate", "value"),
    [
        pytest.param("1.30", "SchedulerQueueingHints=true", "SchedulerQueueingHints", True, id="beta, turned on"),
        pytest.param("1.34", "SchedulerQueueingHints=true", "SchedulerQueueingHints", True, id="locked, set to its lock"),
        pytest.param("1.34", "DynamicResourceAllocation=false", "DynamicResourceAllocation", False,
                     id="GA, not yet locked"),
        pytest.param("1.32", "SchedulerAsyncPreemption=true", "SchedulerAsyncPreemption", True, id="alpha, on"),
    ],
)  # fmt: skip
def test_feature_gates_the_version_accepts(version: str, text: str, gate: str, value: bool) -> None:
    assert parse_feature_gates(text, version=parse_version(version))[gate] is value


def test_the_configuration_carries_the_version_and_its_gates() -> None:
    cfg = load_config_file("", "SchedulerQueueingHints=true", emulated_version="1.31")
    assert cfg.emulated_version == Version(1, 31)
    assert cfg.feature_gates == {**default_feature_gates(Version(1, 31)), "SchedulerQueueingHints": True}


def test_docs_feature_gates_is_generated_from_the_table() -> None:
    assert DOCS.read_text(encoding="utf-8") == feature_gate_table(), (
        "docs/feature-gates.md is stale: write kubesched.config._versions.feature_gate_table() into it"
    )


# --- the default plugin set per version (default_plugins.go) ---------------------------------

BEFORE_DRA = ["InterPodAffinity", "DefaultPreemption"]


@pytest.mark.parametrize(
    ("version", "gates", "around_preemption"),
    [
        pytest.param("1.30", {}, [("InterPodAffinity", 2), ("DefaultPreemption", 0)], id="1.30: no DRA"),
        pytest.param("1.32", {"DynamicResourceAllocation": True},
                     [("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0)],
                     id="1.32 with the gate: DynamicResources before DefaultPreemption, no weight"),
        pytest.param("1.33", {}, [("InterPodAffinity", 2), ("DefaultPreemption", 0)], id="1.33: beta off"),
        pytest.param("1.34", {}, [("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0)],
                     id="1.34: GA on, v1.34.7 applyDynamicResources (no weight)"),
        pytest.param("1.34", {"DynamicResourceAllocation": False}, [("InterPodAffinity", 2), ("DefaultPreemption", 0)],
                     id="1.34 with the gate off"),
        pytest.param("1.35", {}, [("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", 0)],
                     id="1.35: v1.35.4 default_plugins.go weight 2"),
        pytest.param("1.36", {}, [("InterPodAffinity", 2), ("DynamicResources", 2), ("DefaultPreemption", 0)],
                     id="1.36: as 1.35"),
    ],
)  # fmt: skip
def test_default_plugins_per_version(version: str, gates: dict[str, bool], around_preemption: list[tuple[str, int]]) -> None:
    v = parse_version(version)
    mp = default_multi_point(None, v, {**default_feature_gates(v), **gates})
    names = [n for n, _ in mp]
    start = names.index("InterPodAffinity")
    assert mp[start : start + len(around_preemption)] == around_preemption
    assert names[0] == "SchedulingGates"
    # applyFeatureGates appends NodeDeclaredFeatures where its gate is on (by default from 1.36)
    last = "NodeDeclaredFeatures" if {**default_feature_gates(v), **gates}.get("NodeDeclaredFeatures") else "DefaultBinder"
    assert names[-1] == last
    assert ("NodeDeclaredFeatures" in names) == (version == "1.36")


def test_v1_30_accepts_its_volume_limit_plugins_and_v1_31_refuses_them() -> None:
    # v1.30.6 validation.go invalidPluginsByVersion: empty; v1.31.8: AzureDiskLimits, CinderLimits,
    # EBSLimits, GCEPDLimits
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}},
                      "pluginConfig": [{"name": "GCEPDLimits", "args": {}}]}],
    }  # fmt: skip
    parse_config(doc, version=Version(1, 30), feature_gates=default_feature_gates(Version(1, 30)))
    with pytest.raises(ConfigError, match='was invalid in version "kubescheduler.config.k8s.io/v1"'):
        parse_config(doc, version=Version(1, 31), feature_gates=default_feature_gates(Version(1, 31)))


def test_a_gate_outside_its_releases_behaves_as_the_code_without_it() -> None:
    """Before its first entry a gate is off (the old code); from its removal its last default
    holds (a GA gate removed: on), and the binary no longer knows it (PodDisruptionConditions'
    history: beta on 1.26, GA locked 1.31, removed 1.34 — v1.33.3 kube_features.go)."""
    from kubesched.config._versions import FeatureSpec, VersionedGate

    gate = VersionedGate(
        "PodDisruptionConditions",
        (FeatureSpec(Version(1, 26), True, "Beta"), FeatureSpec(Version(1, 31), True, "GA", True)),
        source="v1.33.3 pkg/features/kube_features.go",
        effect="a DisruptionTarget condition on preemption victims",
        removed=Version(1, 34),
    )
    assert gate.spec_at(Version(1, 30)) == FeatureSpec(Version(1, 26), True, "Beta")
    assert gate.spec_at(Version(1, 33)) == FeatureSpec(Version(1, 31), True, "GA", True)
    assert gate.spec_at(Version(1, 34)) is None and gate.value_without_gate(Version(1, 34)) is True
    new = VersionedGate("X", (FeatureSpec(Version(1, 35), False, "Alpha"),), source="", effect="")
    assert new.spec_at(Version(1, 34)) is None and new.value_without_gate(Version(1, 34)) is False


@pytest.mark.parametrize(
    ("version", "point", "pset", "message"),
    [
        # kubernetes/kube-scheduler v0.35.0 config/v1/types.go has no such field: strict decoding
        pytest.param("1.35", "placementGenerate", {}, 'strict decoding error: unknown field "profiles[0].plugins.placementGenerate"',
                     id="1.35: unknown field"),
        pytest.param("1.36", "placementScore", {"disabled": [{"name": "*"}]}, None, id="1.36: a set, accepted"),
        pytest.param("1.36", "placementGenerate", {"enabled": [{"name": "TopologyPlacement"}]}, None,
                     id="1.36: TopologyPlacement enabled there"),
        pytest.param("1.36", "placementScore", {"enabled": [{"name": "PrioritySort"}]},
                     'plugin "PrioritySort" does not extend PlacementScorePlugin plugin',
                     id="1.36: a plugin that is no PlacementScore plugin is refused"),
    ],
)  # fmt: skip
def test_placement_plugin_sets_exist_from_1_36(version: str, point: str, pset: dict, message: str | None) -> None:
    v = parse_version(version)
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"plugins": {point: pset}}]}  # fmt: skip
    if message is None:
        parse_config(doc, version=v, feature_gates=default_feature_gates(v))
        return
    with pytest.raises((ConfigError, PluginError)) as e:
        cfg = parse_config(doc, version=v, feature_gates=default_feature_gates(v))
        build_framework(cfg.profiles[0], IN_TREE, cfg.feature_gates, v)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("version", "gates", "want"),
    [
        pytest.param("1.36", {"TopologyAwareWorkloadScheduling": True},
                     {"placementGenerate": [("TopologyPlacement", 1)],
                      "placementScore": [("NodeResourcesFit", 1), ("PodGroupPodsCount", 1)]},
                     id="1.36 TopologyAwareWorkloadScheduling on: the placement plugins, weights 1"),
        pytest.param("1.36", {}, {"placementScore": [("NodeResourcesFit", 1)]},
                     id="1.36 gate off: NodeResourcesFit still implements PlacementScore (the cycle runs none)"),
        pytest.param("1.35", {}, {}, id="1.35: no placement extension points"),
    ],
)  # fmt: skip
def test_default_profile_placement_plugins(version: str, gates: dict[str, bool], want: dict[str, Any]) -> None:
    """kubernetes.io Topology-Aware Workload Scheduling (v1.36): TopologyPlacement generates,
    NodeResourcesFit and PodGroupPodsCount score, both weight 1 by default."""
    v = parse_version(version)
    all_gates = {**default_feature_gates(v), **gates}
    cfg = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                       version=v, feature_gates=all_gates)  # fmt: skip
    listed = build_framework(cfg.profiles[0], IN_TREE, all_gates, v).list_plugins()
    assert {p: e for p, e in listed.items() if p.startswith("placement")} == want
    with pytest.raises(ConfigError, match="unrecognized feature gate: TopologyAwareWorkloadScheduling"):
        parse_feature_gates("TopologyAwareWorkloadScheduling=true", version=Version(1, 35))
