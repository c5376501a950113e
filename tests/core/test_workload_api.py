"""The Workload API objects (issue 36 step 1): decoding, upstream's validation, which release
serves them, and the ``podGroups`` section of the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched import ConfigError
from kubesched.api import KINDS, PodGroup, SchedulingPodGroup, Workload
from kubesched.scenario import load_manifests, simulation_config
from kubesched.simulation import Simulation

ON = "GenericWorkload=true,GangScheduling=true"

NODES = "".join(
    f"""---
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "1", memory: 1Gi, pods: "10"}}}}
"""
    for i in range(1, 4)
)


def _pods(n: int, field: str, prefix: str = "p") -> str:
    return "".join(
        f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {prefix}{i}}}
spec:
  {field}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""
        for i in range(n)
    )


PG_V1ALPHA2 = """---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
"""
WL_V1ALPHA1 = """---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: job}
spec:
  controllerRef: {apiGroup: batch, kind: Job, name: job}
  podGroups:
  - name: workers
    policy: {gang: {minCount: 3}}
"""
WL_V1ALPHA2 = """---
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: job}
spec:
  podGroupTemplates:
  - name: workers
    schedulingPolicy: {gang: {minCount: 3}}
    disruptionMode: PodGroup
    priorityClassName: high
"""


def _load(text: str) -> list:
    return load_manifests(["s.yaml"], {"s.yaml": text})


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as e:
        _load(text)
    return str(e.value)


def test_both_pod_group_kinds_are_keyed_by_api_version_and_kind() -> None:
    assert KINDS[("scheduling.x-k8s.io/v1alpha1", "PodGroup")] is PodGroup
    assert KINDS[("scheduling.k8s.io/v1alpha2", "PodGroup")] is SchedulingPodGroup
    assert KINDS[("scheduling.k8s.io/v1alpha1", "Workload")] is Workload
    sp = """---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 2}
"""
    ms = _load(sp + PG_V1ALPHA2)
    assert [(m.kind, type(m.obj).__name__) for m in ms] == [
        ("PodGroup", "PodGroup"),
        ("SchedulingPodGroup", "SchedulingPodGroup"),
    ]
    assert ms[1].obj.spec.scheduling_policy.gang.min_count == 3
    assert ms[1].obj.metadata.namespace == "default"


def test_workload_v1alpha1_and_v1alpha2_decode() -> None:
    (w1,) = _load(WL_V1ALPHA1)
    assert w1.obj.api_version == "scheduling.k8s.io/v1alpha1"
    assert w1.obj.pod_group_policy("workers").gang.min_count == 3
    assert w1.obj.spec.controller_ref.kind == "Job"
    (w2,) = _load(WL_V1ALPHA2)
    assert w2.obj.spec.pod_group_templates[0].disruption_mode == "PodGroup"
    assert w2.obj.pod_group_policy("workers").gang.min_count == 3
    assert w2.obj.pod_group_policy("nope") is None


def test_strict_schema_per_api_version() -> None:
    # a v1alpha1 Workload has no podGroupTemplates, a v1alpha2 one no podGroups
    bad = WL_V1ALPHA1.replace("podGroups:", "podGroupTemplates:")
    assert 'strict decoding error: unknown field "spec.podGroupTemplates"' in _error(bad)
    bad = WL_V1ALPHA2.replace("podGroupTemplates:", "podGroups:")
    assert 'strict decoding error: unknown field "spec.podGroups"' in _error(bad)


def _groups(n: int) -> str:
    items = "".join(f"  - name: g{i}\n    policy: {{gang: {{minCount: 1}}}}\n" for i in range(n))
    return f"""---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {{name: w}}
spec:
  podGroups:
{items}"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # pkg/apis/scheduling/validation (v1.35) validateWorkloadSpec: WorkloadMaxPodGroups
        pytest.param(_groups(9), "spec.podGroups: Too many: 9: must have at most 8 items", id="nine pod groups"),
        pytest.param(_groups(0).replace("  podGroups:\n", "  podGroups: []\n"),
                     "spec.podGroups: Required value: must have at least one item", id="no pod group"),
        # validateGangSchedulingPolicy = ValidatePositiveField (v1alpha1)
        pytest.param(WL_V1ALPHA1.replace("minCount: 3", "minCount: 0"),
                     "spec.podGroups[0].policy.gang.minCount: Invalid value: 0: must be greater than zero",
                     id="v1alpha1 minCount 0"),
        # v1alpha2: declarative validation reports 0 as missing, a negative one as not positive
        pytest.param(WL_V1ALPHA2.replace("minCount: 3", "minCount: 0"),
                     "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value",
                     id="v1alpha2 minCount 0"),
        pytest.param(PG_V1ALPHA2.replace("minCount: 3", "minCount: -1"),
                     "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than zero",
                     id="PodGroup negative minCount"),
        pytest.param(PG_V1ALPHA2.replace("{gang: {minCount: 3}}", "{gang: {minCount: 3}, basic: {}}"),
                     'spec.schedulingPolicy: Invalid value: "{`basic`, `gang`}": exactly one of `basic`, '
                     "`gang` is required, but multiple fields are set", id="both policies"),
        pytest.param(PG_V1ALPHA2.replace("{gang: {minCount: 3}}", "{}"),
                     "spec.schedulingPolicy: Required value: exactly one of `basic`, `gang` is required",
                     id="no policy"),
        pytest.param(_groups(2).replace("name: g1", "name: g0"),
                     'spec.podGroups[1].name: Duplicate value: "g0"', id="duplicate group name"),
        pytest.param(WL_V1ALPHA1.replace("kind: Job, ", ""), "spec.controllerRef.kind: Required value",
                     id="controllerRef without kind"),
        pytest.param(_pods(1, "workloadRef: {name: job}"), "spec.workloadRef.podGroup: Required value",
                     id="workloadRef without podGroup"),
        pytest.param(_pods(1, "schedulingGroup: {podGroupName: Bad_Name}"),
                     'spec.schedulingGroup.podGroupName: Invalid value: "Bad_Name"', id="bad podGroupName"),
    ],
)
def test_validation_is_upstreams(text: str, message: str) -> None:
    err = _error(text)
    assert message in err
    assert "\n" not in err and err.startswith("s.yaml: document ")


def test_updates_keep_the_groups_immutable() -> None:
    later = WL_V1ALPHA1.replace("metadata: {name: job}", "metadata: {name: job, annotations: {kubesched.io/arrival: 10s}}")
    assert len(_load(WL_V1ALPHA1 + later)) == 2  # an unchanged spec may be re-applied
    changed = later.replace("minCount: 3", "minCount: 2")
    assert "spec.podGroups: Invalid value: field is immutable" in _error(WL_V1ALPHA1 + changed)
    later_pg = PG_V1ALPHA2.replace("metadata: {name: train}", "metadata: {name: train, annotations: {kubesched.io/arrival: 10s}}")
    err = _error(PG_V1ALPHA2 + later_pg.replace("minCount: 3", "minCount: 2"))
    assert "spec.schedulingPolicy: Invalid value: field is immutable" in err


def _sim(text: str, gates: str = ON, version: str = "1.36") -> Simulation:
    return Simulation(_load(text), simulation_config("", gates, None, emulated_version=version))


@pytest.mark.parametrize(
    ("text", "gates", "version", "message"),
    [
        pytest.param(PG_V1ALPHA2, "", "1.36", 'no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha2" '
                     "(served by Kubernetes 1.36 with --feature-gates GenericWorkload=true; emulated: 1.36, "
                     "GenericWorkload off)", id="gate off"),
        pytest.param(WL_V1ALPHA1, ON, "1.36", 'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha1"',
                     id="v1alpha1 in 1.36"),
        pytest.param(WL_V1ALPHA2, ON, "1.35", 'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha2"',
                     id="v1alpha2 in 1.35"),
        pytest.param(_pods(1, "workloadRef: {name: job, podGroup: workers}"), ON, "1.36",
                     'strict decoding error: unknown field "spec.workloadRef" (the field exists in Kubernetes 1.35; '
                     "emulated: 1.36)", id="workloadRef in 1.36"),
        pytest.param(_pods(1, "schedulingGroup: {podGroupName: train}"), ON, "1.35",
                     'unknown field "spec.schedulingGroup"', id="schedulingGroup in 1.35"),
    ],
)
def test_kinds_are_served_where_the_release_and_gate_serve_them(text: str, gates: str, version: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        _sim(text, gates, version)
    assert message in str(e.value)


def test_pod_fields_are_dropped_while_the_gate_is_off() -> None:
    # dropDisabledPodFields: the pod is created without the field, and scheduled as any other
    sim = _sim(NODES + _pods(1, "schedulingGroup: {podGroupName: train}"), "")
    result = sim.run_in_virtual_time("trio")
    assert result.pods[0].pod.spec.scheduling_group is None
    assert result.pods[0].pod.spec.node_name


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_result_lists_pod_groups_only_when_there_are_some(backend: str) -> None:
    plain = _sim(NODES + _pods(1, "priority: 0"), "").run_in_virtual_time(backend)
    assert "podGroups" not in plain.to_json_obj() and '"podGroups"' not in plain.to_json()
    result = _sim(NODES + PG_V1ALPHA2 + _pods(3, "schedulingGroup: {podGroupName: train}")).run_in_virtual_time(backend)
    doc = json.loads(result.to_json())
    assert doc == result.to_json_obj()
    # the PodGroup cycle of 1.36 wrote PodGroupScheduled (schedule_one_podgroup.go updatePodGroupCondition)
    assert doc["podGroups"] == [
        {"namespace": "default", "name": "train", "policy": "Gang", "minCount": 3, "deleted": False,
         "conditions": [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": ""}]}
    ]  # fmt: skip


# the fields WorkloadAwarePreemption guards: pkg/registry/scheduling/{podgroup,workload}/strategy.go
# (v1alpha2 era) drop them on create with the gate off, before the declarative
# +k8s:ifDisabled("WorkloadAwarePreemption")=+k8s:forbidden could see them; with it on they are
# checked (+k8s:enum, +k8s:format=k8s-long-name, +k8s:maximum=1000000000)
WAP = ON + ",WorkloadAwarePreemption=true"
PG_WAP = PG_V1ALPHA2 + "  disruptionMode: PodGroup\n  priorityClassName: high\n  priority: 1000\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(WL_V1ALPHA2.replace("PodGroup\n", "Everything\n"),
                     'spec.podGroupTemplates[0].disruptionMode: Unsupported value: "Everything": supported '
                     'values: "Pod", "PodGroup"', id="template disruptionMode"),
        pytest.param(WL_V1ALPHA2.replace("priorityClassName: high", "priorityClassName: Bad_Name"),
                     'spec.podGroupTemplates[0].priorityClassName: Invalid value: "Bad_Name": a lowercase RFC 1123 '
                     "subdomain", id="template priorityClassName"),
        pytest.param(PG_WAP.replace("disruptionMode: PodGroup", "disruptionMode: All"),
                     'spec.disruptionMode: Unsupported value: "All": supported values: "Pod", "PodGroup"',
                     id="PodGroup disruptionMode"),
        pytest.param(PG_WAP.replace("priority: 1000", "priority: 1000000001"),
                     "spec.priority: Invalid value: 1000000001: must be less than or equal to 1000000000",
                     id="PodGroup priority"),
    ],
)  # fmt: skip
def test_preemption_fields_are_checked_with_the_gate_and_dropped_without(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        Simulation.load(["s.yaml"], texts={"s.yaml": NODES + text}, feature_gates=WAP)
    err = str(e.value)
    assert message in err and "\n" not in err and err.startswith("s.yaml: document 4")
    sim = Simulation.load(["s.yaml"], texts={"s.yaml": NODES + text}, feature_gates=ON)
    (obj,) = [m.obj for m in sim.manifests if m.kind in ("Workload", "SchedulingPodGroup")]
    holders = obj.spec.pod_group_templates if isinstance(obj, Workload) else [obj.spec]
    fields = [(h.disruption_mode, h.priority_class_name, h.priority) for h in holders]
    assert fields == [(None, "", None)] * len(holders)


def test_preemption_fields_are_kept_with_the_gate() -> None:
    sim = Simulation.load(["s.yaml"], texts={"s.yaml": NODES + PG_WAP + WL_V1ALPHA2}, feature_gates=WAP)
    pg, wl = (m.obj for m in sim.manifests if m.kind in ("Workload", "SchedulingPodGroup"))
    assert (pg.spec.disruption_mode, pg.spec.priority_class_name, pg.spec.priority) == ("PodGroup", "high", 1000)
    t = wl.spec.pod_group_templates[0]
    assert (t.disruption_mode, t.priority_class_name) == ("PodGroup", "high")


def test_a_bad_preemption_field_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kubesched import cli

    f = tmp_path / "s.yaml"
    f.write_text(NODES + PG_WAP.replace("disruptionMode: PodGroup", "disruptionMode: All"))
    assert cli.main(["simulate", str(f), "--emulated-version", "1.36", "--feature-gates", WAP]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert f"{f}: document 4" in err and 'spec.disruptionMode: Unsupported value: "All"' in err
