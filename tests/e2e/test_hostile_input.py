"""Hostile input to ``kubesched simulate``: each class of defect found by fuzzing, one
row per example.  The contract: exit code 2 and exactly one stderr line naming the
file, the document and the field; never a hang, a traceback or exit 0 on what upstream refuses.

Messages are upstream's where upstream has one (pkg/apis/core/validation, pkg/apis/policy/validation,
pkg/apis/scheduling/validation, apimachinery's resource.ParseQuantity and util/validation).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from kubesched import cli
from kubesched.api._durations import parse_duration
from kubesched.api._resources import MAX_QUANTITY, parse_quantity

NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}'
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
STS = ("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  serviceName: s\n  replicas: 1\n"
       "  selector: {matchLabels: {a: b}}\n  template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: x}]}}\n")
CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def pod(name: str = "p", spec: str = "", meta: str = "", containers: str = "[{name: c, image: x}]") -> str:
    extra = f", {meta}" if meta else ""
    body = f"{spec}, " if spec else ""
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}{extra}}}\nspec: {{{body}containers: {containers}}}"


def docs(*items: str) -> str:
    return "\n---\n".join(items) + "\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], files: dict[str, str], *args: str) -> tuple[int, str, str]:
    for name, text in files.items():
        Path(name).write_text(text, encoding="utf-8", errors="surrogatepass")
    names = [n for n in files if not n.startswith("cfg")]
    try:
        code = cli.main(["simulate", *names, *args])
    except SystemExit as e:  # argparse
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def bomb(levels: int = 9) -> str:
    lines = ['  x0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"  x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines)


CASES = [
    # issue 38 item 12: quoted numbers and booleans, refused as encoding/json's UnmarshalTypeError
    # (the API server's decoder: "json: cannot unmarshal string into Go struct field ...")
    # volume mounts (ValidateVolumeMounts) and StatefulSet specs (ValidateStatefulSetSpec), v1.35.4
    pytest.param({"in.yaml": docs(NODE, pod(containers="[{name: c, image: x, volumeMounts: [{name: v, mountPath: /a}]}]"))},
                 [], 'in.yaml: document 2 (Pod p), spec.containers[0].volumeMounts[0].name: Not found: "v"', id="mount of no volume"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="volumes: [{name: v, emptyDir: {}}]",
                                            containers='[{name: c, image: x, volumeMounts: [{name: v, mountPath: ""}]}]'))},
                 [], "in.yaml: document 2 (Pod p), spec.containers[0].volumeMounts[0].mountPath: Required value", id="empty mountPath"),
    pytest.param({"in.yaml": docs(NODE, STS + "  minReadySeconds: -1")},
                 [], "in.yaml: document 2 (StatefulSet s), spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
                 id="negative StatefulSet minReadySeconds"),
    pytest.param({"in.yaml": docs(NODE, STS + "  updateStrategy: {type: Bogus}")},
                 [], 'in.yaml: document 2 (StatefulSet s), spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Bogus", '
                 "RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'",
                 id="unknown StatefulSet updateStrategy"),
    pytest.param({"in.yaml": docs(NODE, pod(spec='terminationGracePeriodSeconds: "30"'))},
                 [], 'in.yaml: document 2 (Pod p), spec.terminationGracePeriodSeconds: json: cannot unmarshal string into Go '
                 'struct field PodSpec.spec.terminationGracePeriodSeconds of type int64', id="quoted grace period"),
    pytest.param({"in.yaml": docs(NODE, pod(spec='hostNetwork: "true"'))},
                 [], 'in.yaml: document 2 (Pod p), spec.hostNetwork: json: cannot unmarshal string into Go '
                 'struct field PodSpec.spec.hostNetwork of type bool', id="quoted hostNetwork"),
    pytest.param({"in.yaml": docs(NODE, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: "2", '
                                  'selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: x}]}}}')},
                 [], 'in.yaml: document 2 (Deployment d), spec.replicas: json: cannot unmarshal string into Go '
                 'struct field DeploymentSpec.spec.replicas of type int32', id="quoted replicas"),
    pytest.param({"in.yaml": docs(NODE, pod(containers='[{name: c, image: x, ports: [{containerPort: "80"}]}]'))},
                 [], 'in.yaml: document 2 (Pod p), spec.containers[0].ports[0].containerPort: json: cannot unmarshal string into Go '
                 'struct field ContainerPort.spec.containers.ports.containerPort of type int32', id="quoted containerPort"),
    pytest.param({"in.yaml": docs(NODE, 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\nvalue: "7"')},
                 [], 'in.yaml: document 2 (PriorityClass hi), value: json: cannot unmarshal string into Go struct field '
                 'PriorityClass.value of type int32', id="quoted PriorityClass value"),
    pytest.param({"in.yaml": docs('apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {unschedulable: "true"}')},
                 [], 'in.yaml: document 1 (Node n1), spec.unschedulable: json: cannot unmarshal string into Go struct field '
                 'NodeSpec.spec.unschedulable of type bool', id="quoted unschedulable"),
    pytest.param({"in.yaml": docs(NODE, 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: "2", '
                                  'template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}')},
                 [], 'in.yaml: document 2 (Job j), spec.parallelism: json: cannot unmarshal string into Go struct field '
                 'JobSpec.spec.parallelism of type int32', id="quoted Job parallelism"),
    # 1. hangs: bounded numbers
    pytest.param({"in.yaml": docs(NODE, pod(containers='[{name: c, image: x, resources: {requests: {cpu: "1e99999999999"}}}]'))},
                 [], "in.yaml: document 2 (Pod p), spec.containers[0].resources.requests.cpu: unable to parse quantity's suffix: '1e99999999999'",
                 id="quantity exponent beyond int32"),
    pytest.param({"in.yaml": docs(NODE, pod(meta="annotations: {kubesched.io/arrival: '" + "9" * 400 + "'}"))},
                 [], "in.yaml: document 2 (Pod p), metadata.annotations[kubesched.io/arrival]: time: invalid duration \"" + "9" * 40 + "...\"",
                 id="arrival of 400 nines"),
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--until", "9" * 400],
                 "--until: time: invalid duration \"" + "9" * 40 + "...\"", id="--until of 400 nines"),
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--until", "2562048h"],
                 '--until: time: invalid duration "2562048h"', id="--until past int64 nanoseconds"),
    # 2. tracebacks
    pytest.param({"in.json": '{"apiVersion": "v1", "kind": "Pod", "x": ' + "[" * 1000 + "]" * 1000 + "}"},
                 [], "in.json: invalid JSON: nested deeper than 100 levels", id="JSON nested 1000 deep"),
    pytest.param({"in.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: " + "[" * 1000 + "]" * 1000 + "\n"},
                 [], "in.yaml: document 1: malformed YAML at line 4 column 1003: exceeded maximum nesting depth",
                 id="YAML nested 1000 deep"),
    pytest.param({"in.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: " + "[" * 150 + "]" * 150 + "\n"},
                 [], "in.yaml: document 1: malformed YAML at line 1 column 1: document nested deeper than 100 levels",
                 id="YAML nested 150 deep"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + "x: " + "[" * 1000 + "]" * 1000 + "\n"},
                 ["--config", "cfg.yaml"], "cfg.yaml: document 1: malformed YAML at line 3 column 1003: exceeded maximum nesting depth",
                 id="config nested 1000 deep"),
    pytest.param({"in.json": '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a\\ud800"}}'},
                 [], f'in.json: document 1 (Node a\ufffd), metadata.name: Invalid value: "a\ufffd": {SUBDOMAIN}',
                 id="lone UTF-16 surrogate in a JSON name"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n" + bomb() + "\nspec:\n  containers: [{name: c, image: x, args: *a8}]")},
                 [], "in.yaml: document 2: malformed YAML at line 17 column 7: document contains excessive aliasing",
                 id="YAML alias bomb in a typed field"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 7")},
                 [], "in.yaml: document 2 (PriorityClass system-node-critical), metadata.name: Forbidden: priority class names "
                 "with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000",
                 id="system-node-critical with another value"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 7")},
                 [], "in.yaml: document 2 (PriorityClass system-mine), metadata.name: Forbidden: priority class names "
                 "with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
                 id="unknown system- class"),
    # 3. exit 0 on invalid input
    pytest.param({"in.yaml": docs(NODE, pod("a", meta="uid: u1"), pod("b", meta="uid: u1"))},
                 [], 'in.yaml: document 3 (Pod b), metadata.uid: Duplicate value: "u1": already the uid of in.yaml: document 2 (Pod a)',
                 id="two pods with one uid"),
    pytest.param({"in.yaml": docs(NODE, pod(containers='[{name: c, image: x, resources: {requests: {cpu: "١٢"}}}]'))},
                 [], "in.yaml: document 2 (Pod p), spec.containers[0].resources.requests.cpu: quantities must match the regular "
                 "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': '١٢'", id="Arabic-Indic digits in a quantity"),
    pytest.param({"in.yaml": docs(NODE, pod(meta="annotations: {kubesched.io/arrival: '１٠s'}"))},
                 [], 'in.yaml: document 2 (Pod p), metadata.annotations[kubesched.io/arrival]: time: invalid duration "１٠s"',
                 id="Unicode digits in a duration"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: big}\nvalue: 2147483648")},
                 [], "in.yaml: document 2 (PriorityClass big), value: Expected `int` <= 2147483647", id="PriorityClass value beyond int32"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: big}\nvalue: 1000000001")},
                 [], "in.yaml: document 2 (PriorityClass big), value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
                 id="PriorityClass value above the user-definable maximum"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="priority: -2147483649"))},
                 [], "in.yaml: document 2 (Pod p), spec.priority: Expected `int` >= -2147483648", id="pod priority below int32"),
    pytest.param({"in.yaml": docs(NODE, pod(spec=f"terminationGracePeriodSeconds: {2**70}"))},
                 [], "in.yaml: document 2 (Pod p), spec.terminationGracePeriodSeconds: Expected `int` <= 9223372036854775807",
                 id="grace period of 2^70"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="topologySpreadConstraints: [{maxSkew: 4294967296, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]"))},
                 [], "in.yaml: document 2 (Pod p), spec.topologySpreadConstraints[0].maxSkew: Expected `int` <= 2147483647",
                 id="maxSkew beyond int32"),
    pytest.param({"in.yaml": docs(NODE, pod(containers="[{name: c, image: x, ports: [{containerPort: 80, hostPort: 70000}]}]"))},
                 [], "in.yaml: document 2 (Pod p), spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                 id="hostPort 70000"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 4294967296}")},
                 [], "in.yaml: document 2 (PodGroup g), spec.minMember: Expected `int` <= 2147483647", id="minMember beyond int32"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + "profiles:\n- plugins:\n    multiPoint: {enabled: [{name: Gang}]}\n"
                  "    queueSort: {enabled: [{name: Gang}], disabled: [{name: PrioritySort}]}\n  pluginConfig:\n"
                  "  - {name: Gang, args: {permitWaitingTimeSeconds: .inf}}\n"},
                 ["--config", "cfg.yaml"], "cfg.yaml, profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds: Invalid value: inf: "
                 "not a finite number", id="permitWaitingTimeSeconds .inf"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + "profiles:\n- plugins:\n    multiPoint: {enabled: [{name: Gang}]}\n"
                  "    queueSort: {enabled: [{name: Gang}], disabled: [{name: PrioritySort}]}\n  pluginConfig:\n"
                  "  - {name: Gang, args: {permitWaitingTimeSeconds: 1.0e+300}}\n"},
                 ["--config", "cfg.yaml"], "cfg.yaml, profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds: Invalid value: 1e+300: "
                 "must be at most 9223372036 seconds", id="permitWaitingTimeSeconds past a Duration"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + f"podMaxBackoffSeconds: {2**70}\n"},
                 ["--config", "cfg.yaml"], f"cfg.yaml, podMaxBackoffSeconds: Invalid value: {2**70}: out of the int64 range",
                 id="config integer of 2^70"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + "parallelism: 2147483648\n"},
                 ["--config", "cfg.yaml"], "cfg.yaml, parallelism: Invalid value: 2147483648: out of the int32 range",
                 id="parallelism beyond int32"),
    # 4. validation a real API server performs
    pytest.param({"in.yaml": "# only a comment\n"}, [], "in.yaml: no objects passed to create", id="comment-only file"),
    pytest.param({"in.yaml": ""}, [], "in.yaml: no objects passed to create", id="empty file"),
    pytest.param({"in.yaml": "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  name: b\n"},
                 [], 'in.yaml: document 1: strict decoding error: duplicate field "metadata.name" (line 5)', id="duplicate YAML key"),
    pytest.param({"in.yaml": "apiVersion: v1\nkind: Pod\nmetadata: &m {name: p, labels: *m}\n"},
                 [], "in.yaml: document 1: malformed YAML at line 1 column 1: document contains a recursive alias",
                 id="recursive YAML alias"),
    pytest.param({"in.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: &c [{name: c, args: *c}]}\n"},
                 [], "in.yaml: document 1: malformed YAML at line 1 column 1: document contains a recursive alias",
                 id="recursive YAML alias in a list"),
    pytest.param({"in.json": '{"apiVersion": "v1", "kind": "Node", "kind": "Node"}'},
                 [], 'in.json: duplicate field "kind"', id="duplicate JSON key"),
    pytest.param({"in.yaml": docs(NODE, pod("Foo"))}, [], f'in.yaml: document 2 (Pod Foo), metadata.name: Invalid value: "Foo": {SUBDOMAIN}',
                 id="pod name not a DNS-1123 subdomain"),
    pytest.param({"in.yaml": docs(NODE, pod(meta="namespace: a.b"))}, [],
                 f'in.yaml: document 2 (Pod a.b/p), metadata.namespace: Invalid value: "a.b": {LABEL}', id="namespace not a DNS-1123 label"),
    pytest.param({"in.yaml": docs(NODE, pod(meta="labels: {'a b': x}"))}, [],
                 "in.yaml: document 2 (Pod p), metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, "
                 "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                 "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", id="label key not a qualified name"),
    pytest.param({"in.yaml": docs(NODE, pod(meta="labels: {a: '-x'}"))}, [],
                 "in.yaml: document 2 (Pod p), metadata.labels: Invalid value: \"-x\": a valid label must be an empty string or consist of "
                 "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                 "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                 id="label value invalid"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="topologySpreadConstraints: [{maxSkew: 0, topologyKey: k, whenUnsatisfiable: DoNotSchedule}]"))},
                 [], "in.yaml: document 2 (Pod p), spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
                 id="maxSkew 0"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="topologySpreadConstraints: [{maxSkew: 1, topologyKey: k, whenUnsatisfiable: Maybe}]"))},
                 [], 'in.yaml: document 2 (Pod p), spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": '
                 'supported values: "DoNotSchedule", "ScheduleAnyway"', id="bad whenUnsatisfiable"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="topologySpreadConstraints: [{maxSkew: 1, topologyKey: '', whenUnsatisfiable: DoNotSchedule}]"))},
                 [], "in.yaml: document 2 (Pod p), spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty",
                 id="empty topologyKey"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                                               "[{weight: 101, preference: {matchExpressions: [{key: a, operator: Exists}]}}]}}"))},
                 [], "in.yaml: document 2 (Pod p), spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
                 "Invalid value: 101: must be in the range 1-100", id="node affinity weight 101"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                                               "[{weight: 0, podAffinityTerm: {topologyKey: k}}]}}"))},
                 [], "in.yaml: document 2 (Pod p), spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
                 "Invalid value: 0: must be in the range 1-100", id="pod anti-affinity weight 0"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: '150%'}")},
                 [], 'in.yaml: document 2 (PodDisruptionBudget b), spec.minAvailable: Invalid value: "150%": must not be greater than 100%',
                 id="PDB minAvailable 150%"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 1, maxUnavailable: 1}")},
                 [], "in.yaml: document 2 (PodDisruptionBudget b), spec: Invalid value: minAvailable and maxUnavailable cannot be both set",
                 id="PDB with both minAvailable and maxUnavailable"),
    pytest.param({"in.yaml": docs(NODE, pod(containers="[]"))}, [], "in.yaml: document 2 (Pod p), spec.containers: Required value",
                 id="pod without containers"),
    pytest.param({"in.yaml": docs(NODE, pod(containers="[{name: c, image: x}, {name: c, image: y}]"))}, [],
                 'in.yaml: document 2 (Pod p), spec.containers[1].name: Duplicate value: "c"', id="duplicate container names"),
    pytest.param({"in.yaml": docs(NODE, pod(containers="[{name: c, image: x, resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}]"))}, [],
                 'in.yaml: document 2 (Pod p), spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal '
                 "to cpu limit of 1", id="limits below requests"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + "profiles:\n- pluginConfig:\n"
                  "  - {name: DefaultPreemption, args: {minCandidateNodesPercentage: 10, typo: 1}}\n"},
                 ["--config", "cfg.yaml"], 'cfg.yaml, profiles[0].pluginConfig[0].args: strict decoding error: unknown field "typo"',
                 id="unknown field in plugin args"),
    pytest.param({"in.yaml": docs(NODE, pod(meta="creationTimestamp: garbage"))}, [],
                 'in.yaml: document 2 (Pod p), metadata.creationTimestamp: Invalid value: "garbage": parsing time "garbage" as '
                 '"2006-01-02T15:04:05Z07:00": not an RFC 3339 time', id="creationTimestamp not a time"),
    pytest.param({"in.yaml": docs(NODE, pod(spec="nodeName: n1") + "\nstatus: {phase: Running, startTime: '2024-13-01T00:00:00Z'}")}, [],
                 'in.yaml: document 2 (Pod p), status.startTime: Invalid value: "2024-13-01T00:00:00Z": parsing time '
                 '"2024-13-01T00:00:00Z" as "2006-01-02T15:04:05Z07:00": not an RFC 3339 time', id="startTime month 13"),
    # 5. CLI errors
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--seed", "x"],
                 "kubesched: error: argument --seed: invalid int value: 'x' (see kubesched simulate --help)", id="bad --seed"),
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--seed", "١٢"],
                 "kubesched: error: argument --seed: invalid int value: '١٢' (see kubesched simulate --help)",
                 id="Unicode digits in --seed"),
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--output", "xml"],
                 "kubesched: error: argument --output: invalid choice: 'xml' (choose from 'json', 'text') (see kubesched simulate --help)",
                 id="bad --output"),
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--backend", "curio"],
                 "kubesched: error: argument --backend: invalid choice: 'curio' (choose from 'asyncio', 'trio') (see kubesched simulate --help)",
                 id="bad --backend"),
    pytest.param({"in.yaml": docs(NODE, pod())}, ["--nope"],
                 "kubesched: error: unrecognized arguments: --nope (see kubesched --help)", id="unknown flag"),
    pytest.param({"in.yaml": docs(NODE, pod()), "cfg.yaml": CONFIG_HEAD + "profiles:\n- plugins:\n    multiPoint: {enabled: [{name: Gang}]}\n"},
                 ["--config", "cfg.yaml"], 'cfg.yaml, profiles[0].plugins.queueSort: only one queue sort plugin required for profile with '
                 'scheduler name "default-scheduler", but got 2', id="two queueSort plugins"),
    pytest.param({"in.yaml": docs(NODE, "apiVersion: v1\nkind: Node\nmetadata: {name: b\x00}")}, [],
                 "in.yaml: document 2: malformed YAML: unacceptable character #x0000: special characters are not allowed",
                 id="NUL byte in document 2"),
]


@pytest.mark.parametrize(("files", "args", "line"), CASES)
def test_hostile_input_is_one_line_and_exit_2(
    workdir: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], args: list[str], line: str
) -> None:
    code, out, err = run(capsys, files, *args)
    expected = line if line.startswith("kubesched: error: ") else f"kubesched: error: {line}"
    assert (code, out, err) == (2, "", expected + "\n")


def test_system_priority_class_as_built_in_is_a_no_op(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A manifest of system-node-critical with its built-in value: the cluster already has it
    (creating it again changes nothing), and a pod can use it (was a ConflictError)."""
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-node-critical}\nvalue: 2000001000"
    code, out, err = run(capsys, {"in.yaml": docs(NODE, pc, pod(spec="priorityClassName: system-node-critical"))})
    assert (code, err) == (0, "")
    (p,) = json.loads(out)["pods"]
    assert (p["priority"], p["nodeName"]) == (2000001000, "n1")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("1e999999999", MAX_QUANTITY, id="huge exponent: capped at the largest int64"),
        pytest.param("1e-999999999", parse_quantity("1n"), id="tiny exponent: rounded up to 1n"),
        pytest.param("-1e-999999999", -parse_quantity("1n"), id="negative tiny exponent"),
        pytest.param("99999999999999999999Ei", MAX_QUANTITY, id="huge binary quantity"),
        pytest.param(2**70, MAX_QUANTITY, id="2^70 as a number"),
        pytest.param("1.5n", parse_quantity("2n"), id="below a nano: rounded up"),
        pytest.param("12e2", parse_quantity("1200"), id="an ordinary exponent"),
    ],
)
def test_quantities_bounded_as_upstream(text: str | int, value: object) -> None:
    """resource.ParseQuantity: capped at maxAllowed (int64), rounded up to Nano; costs nothing."""
    assert parse_quantity(text) == value


def test_huge_exponent_quantity_simulates_at_once(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pod requesting 1e999999999 cpu does not fit (was: spun forever)."""
    p = pod(containers='[{name: c, image: x, resources: {requests: {cpu: "1e999999999"}}}]')
    code, out, err = run(capsys, {"in.yaml": docs(NODE, p)}, "--until", "1s")
    assert (code, err) == (0, "")
    assert json.loads(out)["pods"][0]["nodeName"] is None


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1" * 1_000_000, 2**63 - 1),  # beyond every quantity: capped, as upstream
        ("0." + "0" * 1_000_000 + "1", Fraction(1, 10**9)),  # rounded up to a nano unit
        ("1" * 1_000_000 + "e-999990", Fraction(1111111111_111111112, 10**9)),  # 1111111111.11…, up
        ("0." + "0" * 6 + "5" + "0" * 1_000_000 + "m", Fraction(1, 10**9)),
    ],
)
def test_a_million_digit_quantity_parses_in_linear_time(text: str, want: Fraction) -> None:
    """Parsing was once quadratic in the digits (a 1 MB body stopped the fake API server
    answering); upstream parses in linear time and accepts such a quantity."""
    from kubesched.api._resources import parse_quantity

    assert parse_quantity(text) == want


@pytest.mark.parametrize("text", ["١٢s", "1_0s", "nan", "inf", "1e3", "2562048h", "9" * 400])
def test_durations_refused_as_go(text: str) -> None:
    with pytest.raises(ValueError, match="time: invalid duration"):
        parse_duration(text)


def test_largest_duration_is_int64_nanoseconds() -> None:
    assert parse_duration("2562047h") == 2562047 * 3600
    assert parse_duration("1h30m") == 5400 and parse_duration("90") == 90 and parse_duration("500ms") == 0.5


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async preemption", "sync preemption"])
def test_victim_with_huge_grace_period(workdir: Path, capsys: pytest.CaptureFixture[str], async_preemption: bool) -> None:
    """terminationGracePeriodSeconds 300000000000 (valid int64): the victim terminates past year
    9999, its deletionTimestamp is the last RFC 3339 second; no "date value out of range" loop."""
    victim = pod("victim", spec="terminationGracePeriodSeconds: 300000000000",
                 containers="[{name: c, image: x, resources: {requests: {cpu: '4'}}}]")
    high = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000"
    hi = pod("hi", spec="priorityClassName: high", meta="annotations: {kubesched.io/arrival: 5s}",
             containers="[{name: c, image: x, resources: {requests: {cpu: '4'}}}]")
    gates = [] if async_preemption else ["--feature-gates", "SchedulerAsyncPreemption=false"]
    code, out, err = run(capsys, {"in.yaml": docs(high, NODE, victim, hi)}, "--until", "60s", *gates)
    # the victim is still terminating at the cut, and the run says so
    assert (code, err) == (
        0,
        "kubesched: warning: stopped at --until (60s of virtual time) with 1 pod termination(s) still to come\n",
    )
    result = json.loads(out)
    assert result["summary"]["cutShort"] == {
        "reason": "until", "at": 60.0, "arrivals": 0, "deletions": 0, "terminations": 1,
        "completions": 0, "scheduling": 0, "waitingOnPermit": 0,
    }
    reasons = [e["reason"] for e in result["events"]]
    assert "Preempted" in reasons
    assert not any("out of range" in e["message"] for e in result["events"])
    assert {p["name"]: p["nodeName"] for p in result["pods"]}["hi"] is None


def test_idle_virtual_time_costs_no_wakeups(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only a far-away arrival pending, the loop does not wake for the queue's periodic
    flushes of empty queues (was: one wake per virtual second, ~0.12 s of wall time per virtual
    hour, so ``--until 1000h`` took minutes)."""
    from kubesched.scheduler._driver import Driver

    sleeps = 0
    real_sleep = Driver.sleep

    async def counting_sleep(self: Driver, seconds: float) -> None:
        nonlocal sleeps
        sleeps += 1
        await real_sleep(self, seconds)

    monkeypatch.setattr(Driver, "sleep", counting_sleep)
    late = pod("late", meta="annotations: {kubesched.io/arrival: 1000h}")
    code, out, err = run(capsys, {"in.yaml": docs(NODE, late)}, "--until", "1001h")
    assert (code, err) == (0, "")
    assert json.loads(out)["pods"][0]["nodeName"] == "n1"
    assert sleeps < 50, sleeps


def _first_tick_after(now: float, t0: float, period: float) -> int:
    """The k stepping one tick at a time reaches: the first k >= 1 with ``now < t0 + period * k``.

    Each step computes ``t0 + period * k`` afresh, and float rounding is monotone, so the test
    is false, then true as k grows: a bisection finds the same k as the loop ``while now >= t0 +
    period * k: k += 1`` (which takes ten million steps for a day at a 0.1 s period)."""
    lo, hi = 0, 1  # now >= t0 + period * lo holds for lo >= 1 (lo 0: nothing checked yet)
    while now >= t0 + period * hi:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if now >= t0 + period * mid:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize(
    ("now", "t0", "period"), [(0.5, 1.0, 1.0), (1.0, 1.0, 1.0), (2.5, 1.0, 1.0), (123.4 + 1e-9, 0.3, 0.1)]
)
def test_the_bisection_finds_the_stepped_tick(now: float, t0: float, period: float) -> None:
    k = 1
    while now >= t0 + period * k:
        k += 1
    assert _first_tick_after(now, t0, period) == k


@pytest.mark.parametrize("seed", range(20))
def test_flush_ticks_skip_ahead_exactly(seed: int) -> None:
    """After an idle stretch the queue's tick counter lands where stepping one tick at a time
    would have (float rounding included)."""
    import random

    from kubesched.queue._ticks import FlushTicks

    r = random.Random(seed)
    t0, period = r.uniform(0, 5), r.choice([1.0, 30.0, 0.1])
    base = t0 + r.choice([r.uniform(0, 1e6), float(r.randint(0, 10**6)) * period])
    now = base + 1e-9  # as run_due_flushes sees it
    k = _first_tick_after(now, t0, period)
    ticks = FlushTicks(
        lambda: base,
        aligned=False,
        flush_backoff=lambda: [],
        flush_leftover=lambda: None,
        backoff_busy=lambda: False,
        unschedulable_busy=lambda: False,
    )
    ticks.ticks = [(t0, period, 1), (t0, period, 1)]
    ticks.run_due()
    assert ticks.ticks[0] == (t0, period, k)


def test_metrics_listen_on_loopback_by_default() -> None:
    """``kubesched run --metrics-port`` listened on every interface; now 127.0.0.1 unless
    ``--metrics-bind-address`` (upstream's ``--bind-address``) says otherwise."""
    from kubesched.service import RunOptions

    assert RunOptions().metrics_address == "127.0.0.1"
    parser = cli.build_parser()
    assert parser.parse_args(["run", "--metrics-port", "1"]).metrics_address is None
    assert parser.parse_args(["run", "--metrics-bind-address", "0.0.0.0"]).metrics_address == "0.0.0.0"
    assert parser.parse_args(["run", "--metrics-address", "::1"]).metrics_address == "::1"  # the old spelling


def test_yaml_merge_keys_are_not_duplicates() -> None:
    """A ``<<`` merge whose keys the mapping overrides is valid YAML (go-yaml takes it too);
    only a key written twice in one mapping is refused."""
    import yaml

    from kubesched.api._decoding import load_yaml_documents

    assert load_yaml_documents("base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  a: 3\n") == [
        {"base": {"a": 1, "b": 2}, "x": {"a": 3, "b": 2}}
    ]
    with pytest.raises(yaml.YAMLError, match='duplicate field "x.b"'):
        load_yaml_documents("x:\n  <<: {a: 1}\n  b: 1\n  b: 2\n")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        pytest.param(["fake-apiserver", "--port", "99999"],
                     "kubesched: error: argument --port: invalid port '99999': must be an integer in 0-65535 "
                     "(see kubesched fake-apiserver --help)", id="fake-apiserver port 99999 (was an OverflowError traceback)"),
        pytest.param(["run", "--metrics-port", "-1"],
                     "kubesched: error: argument --metrics-port: invalid port '-1': must be an integer in 0-65535 "
                     "(see kubesched run --help)", id="metrics port -1"),
    ],
)
def test_other_commands_bad_flags_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], line: str) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert (e.value.code, capsys.readouterr().err) == (2, line + "\n")



HUGE_DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: %d\n"
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
    "    spec: {containers: [{name: c, image: x}]}\n"
)


def test_an_enormous_workload_is_refused_in_one_line(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``replicas: 2147483647`` once ran until killed; now a documented limit (1,000,000
    pods per workload), overridable with --max-pods."""
    code, out, err = run(capsys, {"in.yaml": HUGE_DEPLOYMENT % 2147483647})
    assert (code, out) == (2, "")
    assert err == (
        "kubesched: error: in.yaml: document 1 (Deployment web), spec.replicas: Invalid value: "
        "2147483647: more pods than a run may make (1000000; --max-pods sets it)\n"
    )
    code, _, err = run(capsys, {"in.yaml": HUGE_DEPLOYMENT % 3}, "--max-pods", "2")
    assert code == 2 and "Invalid value: 3: more pods than a run may make (2; --max-pods sets it)" in err


_MALFORMED_RESULTS = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "huge number": json.dumps({"pods": [], "events": [], "summary": {"pods": int("1" * 401)}}),
    "string in the timeline": json.dumps({
        "pods": [], "events": [], "summary": {},
        "timeline": [{"time": 0, "running": "x", "pending": 0, "allocated": {}, "capacity": {}}],
    }),
    "infinite number": '{"pods": [], "events": [], "summary": {"virtualSeconds": 1e999}, "timeline": [{"time": 1e999}]}',
    "bad history": json.dumps({
        "pods": [{"name": "p", "annotations": {
            "kube-scheduler-simulator.sigs.k8s.io/result-history": '[{"kube-scheduler-simulator.sigs.k8s.io/filter-result": 5}]'
        }}],
        "events": [], "summary": {},
    }),
}


@pytest.mark.parametrize("case", list(_MALFORMED_RESULTS))
@pytest.mark.parametrize("command", ["report", "explain"])
def test_report_and_explain_of_a_malformed_result_are_one_line(
    case: str, command: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once tracebacks on a 100,000-deep JSON, a 401-digit number, "running": "x" in the
    timeline...: one line and exit 2, or a page (a value that means nothing is drawn as such)."""
    Path("r.json").write_text(_MALFORMED_RESULTS[case], encoding="utf-8")
    argv = ["report", "r.json", "-o", "r.html"] if command == "report" else ["explain", "r.json", "p"]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("kubesched: error: r.json") and len(err.splitlines()) == 1, err
    else:
        assert err == "" and (command == "explain" or Path("r.html").exists())


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        pytest.param(["--pods", "1e9"], "--pods: Invalid value: 1e+09: more pods than a run may make "
                     "(1000000; maxPods or --max-pods sets it)", id="a billion bare pods"),
        pytest.param(["--nodes", "1e9"], "--nodes: Invalid value: 1000000000: more nodes than a run may hold "
                     "(100000; maxNodes or --max-nodes sets it)", id="a billion nodes"),
        pytest.param(["--jobs", "3", "--job-size", "1e9", "--span", "1s"],
                     "--jobs: Invalid value: 3: these workloads, with the sizes and replicas drawn, make more "
                     "than 1000000 pods (maxPods or --max-pods sets it)", id="jobs of a billion pods"),
        pytest.param(["--deployments", "50", "--replicas", "3", "--max-pods", "20"],
                     "--deployments: Invalid value: 50: more pods than a run may make "
                     "(20; maxPods or --max-pods sets it)", id="limit lowered"),
    ],
)
def test_generate_enormous_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], line: str) -> None:
    """``generate --pods 1e9`` once ran until killed; now the documented bounds."""
    assert cli.main(["generate", *argv]) == 2
    assert capsys.readouterr() == ("", f"kubesched: error: {line}\n")


def test_controllers_stop_at_the_cluster_pod_limit(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Many workloads each under the per-workload limit may not together fill
    memory either: the controllers stop at --max-pods pods, as FailedCreate events and a warning."""
    two = HUGE_DEPLOYMENT % 8 + "---\n" + (HUGE_DEPLOYMENT % 8).replace("web", "api")
    code, out, err = run(capsys, {"in.yaml": docs(NODE.replace('"10"', '"100"'), two)}, "--max-pods", "10")
    assert code == 0
    assert err == (
        "kubesched: warning: the cluster held 10 pods (--max-pods), so Jobs and ReplicaSets were "
        "refused pods they wanted (FailedCreate events)\n"
    )
    result = json.loads(out)
    assert result["summary"]["pods"] == 10
    refused = [e for e in result["events"] if e["reason"] == "FailedCreate"]
    assert refused and all(e["type"] == "Warning" for e in refused)
    assert refused[0]["message"].startswith('Error creating: pods "api-')
    assert refused[0]["message"].endswith("is forbidden: the cluster already holds the most pods it may (10; --max-pods sets it)")


def test_an_endless_input_file_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``simulate /dev/zero`` once read until out of memory; every input is read to
    at most 1 GiB (a smaller limit here, through the same function)."""
    from kubesched.api._decoding import read_text

    with pytest.raises(OSError, match="larger than 1 MiB, the most an input may hold"):
        read_text("/dev/zero", 1 << 20)
    assert cli.main(["simulate", "/dev/zero"]) == 2
    assert capsys.readouterr() == ("", "kubesched: error: /dev/zero: cannot read: larger than 1 GiB, the most an input may hold\n")


@pytest.mark.parametrize("command", ["simulate", "report", "explain"])
def test_input_not_utf8_is_one_line(command: str, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("r.json").write_bytes(b'{"pods": []}\xff')
    argv = {"simulate": ["simulate", "r.json"], "report": ["report", "r.json", "-o", "r.html"],
            "explain": ["explain", "r.json", "p"]}[command]
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("kubesched: error: r.json: cannot read") and err.endswith(": not UTF-8 text (byte 12)\n")


def test_a_closed_pipe_ends_quietly() -> None:
    """``kubesched generate | head -1``: the reader closing the pipe is no traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli", "generate", "--pods", "3000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert (proc.wait(timeout=60), err) == (0, b"")
