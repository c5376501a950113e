"""``--emulated-version``: the issue's acceptance lines, end to end through ``kubesched simulate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched import Code, Status, hookimpl
from kubesched.cli import main
from kubesched.config._config import parse_config
from kubesched.config._versions import parse_version
from kubesched.runtime._entrypoints import all_plugins
from kubesched.scenario import load_manifests
from kubesched.simulation import Simulation

NODE_1CPU = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
"""
POD_2CPU = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "2"}}}]
"""
OLD = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
DRA_OLD = ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are "
           "available: 1 No preemption victims found for incoming pod.")
NEW = ("0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are "
       "available: 1 Preemption is not helpful for scheduling.")


def simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *flags: str) -> dict:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert main(["simulate", str(path), *flags]) == 0
    out: dict = json.loads(capsys.readouterr().out)
    return out


def message(result: dict, pod: str = "p") -> str:
    (record,) = [p for p in result["pods"] if p["name"] == pod]
    return str(record["conditions"][0]["message"])


@pytest.mark.parametrize(
    ("flags", "want"),
    [
        pytest.param(("--emulated-version", "1.30"), OLD, id="1.30"),
        pytest.param(("--emulated-version", "1.32", "--feature-gates", "DynamicResourceAllocation=true"), DRA_OLD,
                     id="1.32 with DynamicResourceAllocation (v1.31.8 PostFilter, before kubernetes#129823)"),
        pytest.param(("--emulated-version", "1.33", "--feature-gates", "DynamicResourceAllocation=true"), OLD,
                     id="1.33 with DynamicResourceAllocation (v1.33.3, kubernetes#129823)"),
        # issue 34's acceptance: the 1.30 text with 1.34 and by default (DynamicResources, GA and on,
        # answers no reason for a pod without claims, kubernetes#129823 as the issue states it)
        pytest.param(("--emulated-version", "1.34"), OLD, id="1.34 (issue 34)"),
        pytest.param((), OLD, id="the default, 1.36 (issue 34)"),
        # the v1.34.7 and v1.35.4 sources: Fit is UnschedulableAndUnresolvable above allocatable
        # (kubernetes#131345) and DynamicResources answers for a pod without claims again
        # (state.claims.empty()); docs/versions.md, "Where the issue and the upstream source disagree"
        pytest.param(("--emulated-version", "1.34", "--feature-gates", "KubeschedSourceExact=true"), NEW,
                     id="1.34 KubeschedSourceExact (v1.34.7 source)"),
        pytest.param(("--emulated-version", "1.35", "--feature-gates", "KubeschedSourceExact=true"), NEW,
                     id="1.35 KubeschedSourceExact (v1.35.4 source)"),
        pytest.param(("--feature-gates", "KubeschedSourceExact=true"), NEW, id="1.36 KubeschedSourceExact"),
    ],
)  # fmt: skip
def test_two_cpus_on_a_one_cpu_node(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                                    want: str) -> None:  # fmt: skip
    result = simulate(tmp_path, capsys, NODE_1CPU + "---\n" + POD_2CPU, *flags)
    assert message(result) == want
    assert result["summary"]["emulatedVersion"] == (flags[1] if flags[:1] == ("--emulated-version",) else "1.36")


@pytest.mark.parametrize("version", ["1.29", "2.0", "abc"])
def test_unsupported_versions_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      version: str) -> None:  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(NODE_1CPU)
    assert main(["simulate", str(path), "--emulated-version", version]) == 2
    err = capsys.readouterr().err
    assert err == (f'kubesched: error: --emulated-version: Invalid value: "{version}": must be a Kubernetes minor '
                   "version MAJOR.MINOR from 1.30 to 1.36\n")  # fmt: skip


def test_a_gate_against_the_version_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(NODE_1CPU)
    assert main(["simulate", str(path), "--emulated-version", "1.34", "--feature-gates",
                 "SchedulerQueueingHints=false"]) == 2  # fmt: skip
    assert capsys.readouterr().err == ("kubesched: error: --feature-gates: cannot set feature gate "
                                       "SchedulerQueueingHints to false, feature is locked to true\n")  # fmt: skip


def test_kubesched_source_exact_is_unknown_before_1_34(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(NODE_1CPU)
    assert main(["simulate", str(path), "--emulated-version", "1.33", "--feature-gates",
                 "KubeschedSourceExact=true"]) == 2  # fmt: skip
    assert capsys.readouterr().err == "kubesched: error: --feature-gates: unrecognized feature gate: KubeschedSourceExact\n"


def test_version_states_the_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "emulates Kubernetes 1.30–1.36, default 1.36" in capsys.readouterr().out


PV_ZONE_B = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/pv}
  claimRef: {namespace: default, name: claim}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [elsewhere]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: claim, namespace: default}
spec: {accessModes: [ReadWriteOnce], volumeName: pv, resources: {requests: {storage: 1Gi}}}
status: {phase: Bound}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  volumes: [{name: v, persistentVolumeClaim: {claimName: claim}}]
  containers: [{name: c, image: pause}]
"""


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        # v1.30.6, v1.31.8 binder.go ErrReasonNodeConflict
        pytest.param("1.32", "node(s) had volume node affinity conflict", id="1.32"),
        # v1.33.3 binder.go (kubernetes#129887)
        pytest.param("1.33", "node(s) didn't match PersistentVolume's node affinity", id="1.33 (v1.33.3)"),
    ],
)
def test_volume_node_affinity_text_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str,
                                               reason: str) -> None:  # fmt: skip
    result = simulate(tmp_path, capsys, NODE_1CPU + "---\n" + PV_ZONE_B, "--emulated-version", version)
    assert message(result).startswith(f"0/1 nodes are available: 1 {reason}.")


def test_a_pod_with_a_missing_claim_is_held_back_where_dra_is_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """DynamicResources PreEnqueue (v1.36 dynamicresources.go): the claim ``c`` does not exist,
    so the pod never gets an attempt (no PodScheduled condition); with the gate off (1.33) the
    claims are not the scheduler's business and the pod is placed."""
    pod = POD_2CPU.replace('"2"', '"100m"').replace("spec:\n", "spec:\n  resourceClaims: [{name: gpu, resourceClaimName: c}]\n")
    on = simulate(tmp_path, capsys, NODE_1CPU + "---\n" + pod)
    assert on["pods"][0]["nodeName"] is None
    assert on["pods"][0]["attempts"] == 0
    assert on["pods"][0]["conditions"] == []
    off = simulate(tmp_path, capsys, NODE_1CPU + "---\n" + pod, "--emulated-version", "1.33")
    assert off["pods"][0]["nodeName"] == "n1"  # DRA off: the claims are not the scheduler's business


class RejectOnce:
    """PreFilter: Unschedulable at the first attempt; no events registered, so only the flush of
    unschedulablePods after 5 minutes brings the pod back."""

    name = "RejectOnce"

    def __init__(self, args: object, handle: object) -> None:
        self.calls = 0

    @hookimpl
    def kubesched_pre_filter(self, state: object, pod: object, nodes: object) -> Status | None:
        self.calls += 1
        return Status(Code.UNSCHEDULABLE, "not yet") if self.calls == 1 else None

    @hookimpl
    def kubesched_events_to_register(self) -> list[object]:
        return []


@pytest.mark.parametrize(("version", "want"), [("1.35", None), ("1.36", 1)])
def test_pod_scheduled_after_flush_total(version: str, want: int | None) -> None:
    """``scheduler_pod_scheduled_after_flush_total`` (ALPHA, v1.36.0, kubernetes#135126): exported
    from 1.36, counting the pods bound after the 5-minute flush moved them."""
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "RejectOnce"}]}}}]}  # fmt: skip
    registry = {**all_plugins(), "RejectOnce": RejectOnce}
    cfg = parse_config(config, registry=registry, version=parse_version(version))
    small = POD_2CPU.replace('"2"', '"100m"')
    later = small.replace("name: p}", "name: later, annotations: {kubesched.io/arrival: 6m}}")  # keeps the run going
    manifests = load_manifests(["s.yaml"], {"s.yaml": NODE_1CPU + "---\n" + small + "---\n" + later})
    result = Simulation(manifests, cfg, registry={"RejectOnce": RejectOnce}, metrics=True).run_in_virtual_time("trio")
    assert result.to_json_obj()["pods"][0]["nodeName"] == "n1"
    assert result.metrics is not None
    lines = [line for line in result.metrics.splitlines() if line.startswith("scheduler_pod_scheduled_after_flush")]
    assert lines == ([] if want is None else [f"scheduler_pod_scheduled_after_flush_total {want}.0"])


# --- MatchLabelKeysInPodAffinity: alpha off in 1.30, beta on from 1.31, GA locked from 1.33 ----

LABEL_KEYS = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: old, labels: {app: web, version: v1}}
spec:
  nodeName: n1
  containers: [{name: c, image: pause}]
---
apiVersion: v1
kind: Pod
metadata: {name: new, labels: {app: web, version: v2}, annotations: {kubesched.io/arrival: 10s}}
spec:
  containers: [{name: c, image: pause}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
        matchLabelKeys: [%s]
"""


@pytest.mark.parametrize(
    ("flags", "placed"),
    [
        pytest.param(("--emulated-version", "1.30"), False, id="1.30: dropped, old (v1) repels new"),
        pytest.param(("--emulated-version", "1.30", "--feature-gates", "MatchLabelKeysInPodAffinity=true"), True,
                     id="1.30 turned on: only version v2 repels"),
        pytest.param(("--emulated-version", "1.31"), True, id="1.31 (beta, on)"),
        pytest.param(("--emulated-version", "1.32", "--feature-gates", "MatchLabelKeysInPodAffinity=false"), False,
                     id="1.32 turned off"),
        pytest.param((), True, id="the default, 1.36 (GA)"),
    ],
)  # fmt: skip
def test_match_label_keys_in_pod_affinity_per_version(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      flags: tuple[str, ...], placed: bool) -> None:  # fmt: skip
    result = simulate(tmp_path, capsys, LABEL_KEYS % "version", *flags)
    (new,) = [p for p in result["pods"] if p["name"] == "new"]
    assert new["nodeName"] == ("n1" if placed else None)
    if not placed:
        assert message(result, "new") == (
            "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules. preemption: 0/1 nodes are "
            "available: 1 No preemption victims found for incoming pod."
        )


def test_match_label_keys_is_checked_only_where_the_gate_keeps_it(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """The API server drops the field before it validates: 1.30 accepts a key that is also in the
    selector (and places as without it), 1.36 refuses it in one line."""
    result = simulate(tmp_path, capsys, LABEL_KEYS % "app", "--emulated-version", "1.30")
    assert [p["nodeName"] for p in result["pods"]] == ["n1", None]
    path = tmp_path / "s.yaml"
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"kubesched: error: {path}: document 3 (Pod new), "
                   "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]: Invalid value: "
                   '"app": exists in both matchLabelKeys and labelSelector\n')  # fmt: skip


def test_match_label_keys_in_a_template_follows_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Deployment's pods: the template loses the field with the gate off (DropDisabledTemplateFields)."""
    text = (LABEL_KEYS % "version").split("---\napiVersion: v1\nkind: Pod\nmetadata: {name: new")[0] + """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {kubesched.io/arrival: 10s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web, version: v2}}
  template:
    metadata: {labels: {app: web, version: v2}}
    spec:
      containers: [{name: c, image: pause}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
            matchLabelKeys: [version]
"""
    for version, placed in (("1.30", False), ("1.36", True)):
        result = simulate(tmp_path, capsys, text, "--emulated-version", version)
        (pod,) = [p for p in result["pods"] if p["name"].startswith("web-")]
        assert (pod["nodeName"] == "n1") is placed, version
