"""Fuzzing the fields that were once never validated, one class at a time.

Each class draws values that upstream refuses (the rule written out here from upstream's source,
not from kubesched's code) for one field, and asserts the input contract of ``kubesched simulate``: exit 2
with exactly one stderr line naming the file, the document and that field; never exit 0, never a
traceback.  Where upstream accepts what looks wrong (a negative PriorityClass value, a negative
qps), the property is the opposite: exit 0.  The fake API server answers the same refusals with
a 422 naming the field (the one validation code path).

Derandomized and bounded (a few dozen examples a class): the whole file runs in seconds.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ServerProcess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched import cli

FIELDS = settings(
    derandomize=True,
    max_examples=20,
    deadline=timedelta(seconds=20),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
MAX_INT32 = 2**31 - 1

PC: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 1000}
NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "zone": "a"}},
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10", "example.com/gpu": "4"}},
}
POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}, "annotations": {"kubesched.io/arrival": "1s"}},
    "spec": {
        "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app": "a"}}}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    },
}
GOLD_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "default"},
    "spec": {"priorityClassName": "gold", "containers": [{"name": "c", "image": "x"}]},
}
PG: dict[str, Any] = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"},
                      "spec": {"minMember": 1, "scheduleTimeoutSeconds": 10}}
DOCS = (PC, NODE, POD, GOLD_POD, PG)
PC_I, NODE_I, POD_I, GOLD_I, PG_I = range(5)
CONFIG_HEAD: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
COSCHEDULING: dict[str, Any] = {**CONFIG_HEAD, "profiles": [{"schedulerName": "default-scheduler", "plugins": {
    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}]}


@dataclass
class Case:
    """A change to one document of DOCS that upstream refuses, and the field the error names."""

    doc: int
    path: tuple[Any, ...]
    value: Any
    field: str


def mutate(path: tuple[Any, ...], value: Any, doc: int = POD_I, field: str = "") -> Case:
    return Case(doc, path, value, field or ".".join(str(p) for p in path))


def set_path(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    target = doc
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return doc


# libyaml's emitter where PyYAML has it: the pure-Python one was a third of these tests' time
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render(docs: list[Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    return "---\n".join(yaml.dump(d, Dumper=DUMPER, allow_unicode=True) for d in docs)


def finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def run_cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(code: int, err: str, where: str, field: str | None) -> None:
    assert code == 2, f"exit {code}: {err}"
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n") and "Traceback" not in err, err
    assert lines[0].startswith(f"kubesched: error: {where}"), (where, err)
    if field is not None:
        assert f", {field}" in lines[0], (field, err)


def simulate_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: Case, fmt: str) -> None:
    docs = [copy.deepcopy(d) for d in DOCS]
    set_path(docs[case.doc], case.path, case.value)
    if not finite(case.value):
        fmt = "yaml"  # JSON has no NaN or infinity
    f = tmp_path / f"in.{fmt}"
    f.write_text(render(docs, fmt), encoding="utf-8", errors="surrogatepass")
    code, _, err = run_cli(capsys, ["simulate", str(f), "--until", "30s"])
    assert_one_line(code, err, f"{f}: document {case.doc + 1} (", case.field)


formats = st.sampled_from(["yaml", "json"])

# --- each class: a strategy of Cases ------------------------------------------------------------

# ValidatePodSpec: an int64 in [1, MaxInt32]; JSON decoding refuses a fraction, NaN, infinity
active_deadline = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda f: not (f.is_integer() and 1 <= f <= MAX_INT32)),
    st.integers(max_value=0, min_value=-(2**70)),
    st.integers(min_value=MAX_INT32 + 1, max_value=2**70),
).map(lambda v: mutate(("spec", "activeDeadlineSeconds"), v))

# PodGroup: negative scheduleTimeoutSeconds (every Permit wait times out at once: a livelock)
pod_group_timeout = st.integers(min_value=-(2**31), max_value=-1).map(
    lambda v: mutate(("spec", "scheduleTimeoutSeconds"), v, PG_I))

# validateResourceRequirements: an extended resource's request equals its limit, which is
# required; ValidateResourceQuantityValue: it is whole
RES = ("spec", "containers", 0, "resources")
extended_resources = st.one_of(
    st.integers(1, 10**6).map(lambda n: mutate(RES, {"requests": {"example.com/gpu": str(n)}},
                                               field="spec.containers[0].resources.limits")),
    st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)).filter(lambda t: t[0] != t[1]).map(
        lambda t: mutate(RES, {"requests": {"example.com/gpu": str(t[0])}, "limits": {"example.com/gpu": str(t[1])}},
                         field="spec.containers[0].resources.requests[example.com/gpu]")),
    st.integers(1, 999).map(lambda m: mutate(RES, {"limits": {"example.com/gpu": f"{m}m"}},
                                            field="spec.containers[0].resources.limits[example.com/gpu]")),
)

# validateContainerResourceName: an unprefixed name is cpu, memory, ephemeral-storage or hugepages-*
_UNPREFIXED_OK = ("cpu", "memory", "ephemeral-storage")
resource_names = st.one_of(
    st.sampled_from(["cpus", "pods", "gpu", "CPU", "storage", "services", "requests.cpu", "limits.memory"]),
    st.text(min_size=1, max_size=12).filter(
        lambda s: "/" not in s and s not in _UNPREFIXED_OK and not s.startswith("hugepages-")),
    st.sampled_from(["a b/c", "example.com/", "/gpu", "x/y/z", "requests.example.com/x", "Example.com/gpu"]),
).map(lambda n: mutate(RES, {"requests": {n: "1"}}, field="spec.containers[0].resources.requests["))

# IsDNS1123Subdomain / IsValidLabelValue / IsDNS1123Label: lengths over 253 / 63 / 63
over = st.integers(min_value=1, max_value=40)
name_lengths = st.one_of(
    over.map(lambda n: mutate(("spec", "priorityClassName"), "a" * (253 + n), GOLD_I)),
    over.map(lambda n: mutate(("spec", "tolerations", 0), {"key": "k", "value": "v" * (63 + n)},
                              field="spec.tolerations[0].operator")),
    over.map(lambda n: mutate(("spec", "taints", 0, "value"), "v" * (63 + n), NODE_I, "spec.taints[0].value")),
    over.map(lambda n: mutate(("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                               "nodeSelectorTerms", 0, "matchExpressions", 0, "values"), ["a" * (63 + n)],
                              field="spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                                    "nodeSelectorTerms[0].matchExpressions[0].values[0]")),
    over.map(lambda n: mutate(("spec", "hostname"), "h" * (63 + n))),
    over.map(lambda n: mutate(("spec", "schedulingGates"), [{"name": "g" * (63 + n)}], field="spec.schedulingGates[0]")),
    over.map(lambda n: mutate(("metadata", "name"), "a" * (253 + n), PC_I)),
)

# ValidateAnnotations: keys and values together at most 256 KiB
annotations = st.integers(min_value=1, max_value=4096).map(
    lambda n: mutate(("metadata", "annotations", "big"), "x" * (256 * 1024 + n), field="metadata.annotations"))

# ValidateNodeSelectorRequirement / ValidateNodeFieldSelectorRequirement /
# ValidateLabelSelectorRequirement: the number of values each operator takes
TERM = ("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", 0)
TERM_FIELD = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
values = st.lists(st.sampled_from(["a", "b", "1", "n1"]), min_size=1, max_size=3)
selector_values = st.one_of(
    st.sampled_from(["In", "NotIn"]).map(lambda op: mutate(
        (*TERM, "matchExpressions"), [{"key": "zone", "operator": op, "values": []}],
        field=f"{TERM_FIELD}.matchExpressions[0].values")),
    st.tuples(st.sampled_from(["Exists", "DoesNotExist"]), values).map(lambda t: mutate(
        (*TERM, "matchExpressions"), [{"key": "zone", "operator": t[0], "values": t[1]}],
        field=f"{TERM_FIELD}.matchExpressions[0].values")),
    st.tuples(st.sampled_from(["Gt", "Lt"]), st.sampled_from([[], ["1", "2"], ["1", "2", "3"]])).map(lambda t: mutate(
        (*TERM, "matchExpressions"), [{"key": "zone", "operator": t[0], "values": t[1]}],
        field=f"{TERM_FIELD}.matchExpressions[0].values")),
    st.tuples(st.sampled_from(["In", "NotIn"]), st.sampled_from([[], ["n1", "n2"], ["a", "b", "c"]])).map(lambda t: mutate(
        (*TERM, "matchFields"), [{"key": "metadata.name", "operator": t[0], "values": t[1]}],
        field=f"{TERM_FIELD}.matchFields[0].values")),
    st.sampled_from(["Exists", "DoesNotExist", "Gt", "Lt"]).map(lambda op: mutate(
        (*TERM, "matchFields"), [{"key": "metadata.name", "operator": op, "values": ["1"]}],
        field=f"{TERM_FIELD}.matchFields[0].operator")),
    st.sampled_from(["In", "NotIn"]).map(lambda op: mutate(
        ("spec", "topologySpreadConstraints", 0, "labelSelector"), {"matchExpressions": [{"key": "app", "operator": op}]},
        field="spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values")),
)

# ValidateNodeSelector: at least one term
empty_terms = st.just(mutate(TERM[:-1], [], field=f"{TERM_FIELD[:-3]}"))

# validateNodeTaints / ValidateSpreadConstraintNotRepeat / validateSchedulingGates /
# AccumulateUniqueHostPorts: no duplicates
label_values = st.from_regex(r"[a-z0-9]([a-z0-9.]{0,10}[a-z0-9])?", fullmatch=True)
effects = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
duplicates = st.one_of(
    st.tuples(effects, label_values, label_values).map(lambda t: mutate(
        ("spec", "taints"), [{"key": "k", "value": t[1], "effect": t[0]}, {"key": "k", "value": t[2], "effect": t[0]}],
        NODE_I, "spec.taints[1]")),
    st.tuples(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]), st.integers(1, 5)).map(lambda t: mutate(
        ("spec", "topologySpreadConstraints"),
        [{"maxSkew": s, "topologyKey": "zone", "whenUnsatisfiable": t[0], "labelSelector": {"matchLabels": {"app": "a"}}}
         for s in (1, t[1])],
        field="spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}")),
    st.from_regex(r"([a-z0-9]{1,8}\.[a-z]{2,4}/)?[a-z]([a-z0-9._-]{0,20}[a-z0-9])?", fullmatch=True).map(lambda g: mutate(
        ("spec", "schedulingGates"), [{"name": g}, {"name": g}], field="spec.schedulingGates[1]")),
    st.tuples(st.integers(1, 65535), st.sampled_from(["", "TCP", "UDP", "SCTP"])).map(lambda t: mutate(
        ("spec", "containers"),
        [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": t[0], "protocol": t[1] or "TCP"}]},
         {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": t[0], "protocol": t[1]}]}],
        field="spec.containers[1].ports[0].hostPort")),
)

# validateMatchLabelKeysInTopologySpread: a matchLabelKeys key already in the selector
match_label_keys = st.tuples(st.sampled_from(["app", "tier"]), st.booleans()).map(lambda t: mutate(
    ("spec", "topologySpreadConstraints", 0),
    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["x", t[0]],
     "labelSelector": {"matchLabels": {t[0]: "a"}} if t[1] else {"matchExpressions": [{"key": t[0], "operator": "Exists"}]}},
    field="spec.topologySpreadConstraints[0].matchLabelKeys[1]"))

# enums: validateContainerPorts protocol, validateRestartPolicy, ValidatePreemptionPolicy,
# a restartPolicy on a regular container
enum_text = st.text(min_size=1, max_size=10)
enums = st.one_of(
    enum_text.filter(lambda s: s not in ("TCP", "UDP", "SCTP")).map(lambda v: mutate(
        ("spec", "containers", 0, "ports", 0, "protocol"), v, field="spec.containers[0].ports[0].protocol")),
    st.just("ICMP").map(lambda v: mutate(("spec", "containers", 0, "ports", 0, "protocol"), v,
                                         field="spec.containers[0].ports[0].protocol")),
    enum_text.filter(lambda s: s not in ("Always", "OnFailure", "Never")).map(
        lambda v: mutate(("spec", "restartPolicy"), v)),
    enum_text.filter(lambda s: s not in ("PreemptLowerPriority", "Never")).map(
        lambda v: mutate(("spec", "preemptionPolicy"), v)),
    st.sampled_from(["Always", "Never", "OnFailure"]).map(lambda v: mutate(
        ("spec", "containers", 0, "restartPolicy"), v, field="spec.containers[0].restartPolicy")),
)

# the Priority admission plugin: spec.priority as the named class resolves it, or not at all
priority_disagrees = st.integers(min_value=-(2**31), max_value=MAX_INT32).filter(lambda v: v != 1000).map(
    lambda v: mutate(("spec", "priority"), v, GOLD_I))

# kubesched's own durations (annotations): Go's ParseDuration, so no surrounding spaces
spaces = st.text(alphabet=" \t\n\r\v\f", min_size=1, max_size=3)
durations_spaced = st.tuples(spaces, st.booleans()).map(lambda t: mutate(
    ("metadata", "annotations", "kubesched.io/arrival"), t[0] + "5s" if t[1] else "5s" + t[0],
    field="metadata.annotations[kubesched.io/arrival]"))

CLASSES: dict[str, Any] = {
    "activeDeadlineSeconds": active_deadline,
    "PodGroup scheduleTimeoutSeconds": pod_group_timeout,
    "extended resources": extended_resources,
    "resource names": resource_names,
    "names over 253, label values over 63": name_lengths,
    "annotations over 256 KiB": annotations,
    "selector operators and values": selector_values,
    "empty nodeSelectorTerms": empty_terms,
    "duplicates": duplicates,
    "matchLabelKeys in the selector": match_label_keys,
    "enums": enums,
    "spec.priority disagreeing with its class": priority_disagrees,
    "durations with spaces": durations_spaced,
}


# each example of this class reads a 256 KiB manifest: a few suffice
EXAMPLES = {"annotations over 256 KiB": 4}


@pytest.mark.parametrize(("name", "strategy"), [pytest.param(n, s, id=n) for n, s in CLASSES.items()])
def test_simulate_refuses_each_class(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, strategy: Any) -> None:
    @settings(FIELDS, max_examples=EXAMPLES.get(name, FIELDS.max_examples))
    @given(case=strategy, fmt=formats)
    def refused(case: Case, fmt: str) -> None:
        simulate_refuses(tmp_path, capsys, case, fmt)

    refused()


# --- the configuration ---------------------------------------------------------------------------

_GO_DURATION = re.compile(r"[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)")
bad_durations = st.one_of(
    st.sampled_from(["forever", " 15s", "15s ", "15", "1d", "inf", "", "1h 30m", "15S"]),
    st.text(max_size=8).filter(lambda s: not _GO_DURATION.fullmatch(s)),
)
seconds = st.integers(min_value=1, max_value=10**6)


def config_case(section: str, fields: dict[str, Any], field: str) -> tuple[dict[str, Any], str]:
    return {**CONFIG_HEAD, section: fields}, field


CONFIG_CLASSES: dict[str, Any] = {
    # Plugin.Weight is an *int32
    "score weight beyond int32": st.one_of(st.integers(min_value=2**31, max_value=2**70),
                                           st.integers(max_value=-(2**31) - 1, min_value=-(2**70))).map(
        lambda w: ({**CONFIG_HEAD, "profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": w}]}}}]},
                   "profiles[0].plugins.score.enabled[0].weight")),
    # metav1.Duration: time.ParseDuration
    "leaseDuration not a Go duration": st.tuples(st.sampled_from(["leaseDuration", "renewDeadline", "retryPeriod"]),
                                                 bad_durations).map(
        lambda t: config_case("leaderElection", {t[0]: t[1]}, f"leaderElection.{t[0]}")),
    # ValidateLeaderElectionConfiguration: leaseDuration > renewDeadline
    "renewDeadline not below leaseDuration": st.tuples(seconds, seconds).map(lambda t: config_case(
        "leaderElection", {"leaseDuration": f"{min(t)}s", "renewDeadline": f"{max(t)}s"}, "leaderElection.leaseDuration")),
    # ValidateClientConnectionConfiguration: burst non-negative
    "negative burst": st.integers(min_value=-(2**31), max_value=-1).map(
        lambda b: config_case("clientConnection", {"burst": b}, "clientConnection.burst")),
}


@pytest.mark.parametrize("strategy", [pytest.param(s, id=name) for name, s in CONFIG_CLASSES.items()])
def test_config_refuses_each_class(tmp_path: Path, capsys: pytest.CaptureFixture[str], strategy: Any) -> None:
    manifests = tmp_path / "in.yaml"
    manifests.write_text(render([NODE], "yaml"), encoding="utf-8")

    @FIELDS
    @given(case=strategy)
    def refused(case: tuple[dict[str, Any], str]) -> None:
        cfg, field = case
        c = tmp_path / "cfg.yaml"
        c.write_text(render([cfg], "yaml"), encoding="utf-8")
        code, _, err = run_cli(capsys, ["simulate", str(manifests), "--config", str(c), "--until", "10s"])
        assert_one_line(code, err, str(c), field)

    refused()


@FIELDS
@given(until=st.tuples(spaces, st.booleans()).map(lambda t: t[0] + "5m" if t[1] else "5m" + t[0]))
def test_until_with_spaces_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], until: str) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(render([NODE], "yaml"), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(f), "--until", until])
    assert_one_line(code, err, "--until: time: invalid duration", None)


# --- what upstream accepts: exit 0 ------------------------------------------------------------------


def simulate_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str], docs: list[Any], *args: str) -> dict[str, Any]:
    f = tmp_path / "in.yaml"
    f.write_text(render(docs, "yaml"), encoding="utf-8")
    code, out, err = run_cli(capsys, ["simulate", str(f), "--output", "json", *args])
    assert (code, err) == (0, ""), err
    result: dict[str, Any] = json.loads(out)
    return result


@settings(FIELDS, max_examples=10)
@given(value=st.integers(min_value=-(2**31), max_value=-1))
def test_negative_priority_class_values_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: int) -> None:
    """ValidatePriorityClass bounds a user's class above (1e9), never below."""
    pc = {**PC, "value": value}
    out = simulate_accepts(tmp_path, capsys, [pc, NODE, GOLD_POD], "--until", "10s")
    assert [p["priority"] for p in out["pods"]] == [value]


@settings(FIELDS, max_examples=10)
@given(qps=st.floats(min_value=-3.4e38, max_value=-1e-9))
def test_negative_qps_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str], qps: float) -> None:
    """kube-scheduler does not validate qps; client-go applies no rate limit below zero."""
    c = tmp_path / "cfg.yaml"
    c.write_text(render([{**CONFIG_HEAD, "clientConnection": {"qps": qps}}], "yaml"), encoding="utf-8")
    simulate_accepts(tmp_path, capsys, [NODE], "--config", str(c), "--until", "1s")


@settings(FIELDS, max_examples=10)
@given(timeout=st.one_of(st.just(0), st.integers(min_value=0, max_value=MAX_INT32)))
def test_pod_group_timeouts_never_livelock(tmp_path: Path, capsys: pytest.CaptureFixture[str], timeout: int) -> None:
    """Any accepted scheduleTimeoutSeconds: the gang binds, with no livelock warning (a negative
    one is refused above: it livelocked at t=0)."""
    c = tmp_path / "cfg.yaml"
    c.write_text(render([COSCHEDULING], "yaml"), encoding="utf-8")
    pg = {**PG, "spec": {"minMember": 2, "scheduleTimeoutSeconds": timeout}}
    members = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n, "labels": {"scheduling.x-k8s.io/pod-group": "g"}},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
               for n in ("m1", "m2")]
    out = simulate_accepts(tmp_path, capsys, [NODE, pg, *members], "--config", str(c))
    assert [p["nodeName"] for p in out["pods"]] == ["n1", "n1"]


# --- the fake API server: the same refusals -------------------------------------------------------


def post(server: ServerProcess, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    raw = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(raw)}\r\n\r\n")
    answer = server.request(head.encode("latin-1") + raw)
    status = int(answer[9:12])
    doc = json.loads(answer.partition(b"\r\n\r\n")[2] or b"{}")
    return status, doc


PODS = "/api/v1/namespaces/default/pods"
SERVER_CASES: list[tuple[str, Callable[[int], dict[str, Any]], str]] = [
    (PODS, lambda i: {**POD, "metadata": {"name": f"ads{i}"}, "spec": {**POD["spec"], "activeDeadlineSeconds": 0}},
     "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"),
    (PODS, lambda i: set_path(copy.deepcopy({**POD, "metadata": {"name": f"icmp{i}"}}),
                              ("spec", "containers", 0, "ports", 0, "protocol"), "ICMP"),
     'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'),
    (PODS, lambda i: set_path(copy.deepcopy({**POD, "metadata": {"name": f"gpu{i}"}}),
                              ("spec", "containers", 0, "resources"), {"requests": {"example.com/gpu": "1"}}),
     "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"),
    (PODS, lambda i: {**POD, "metadata": {"name": f"gates{i}"},
                      "spec": {**POD["spec"], "schedulingGates": [{"name": "a"}, {"name": "a"}]}},
     'spec.schedulingGates[1]: Duplicate value: "a"'),
    ("/api/v1/nodes", lambda i: {**NODE, "metadata": {"name": f"taints{i}"},
                                 "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}] * 2}},
     'spec.taints[1]: Duplicate value: core.Taint{Key:"k", Value:"", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: '
     "taints must be unique by key and effect pair"),
    ("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
     lambda i: {**PG, "metadata": {"name": f"pg{i}"}, "spec": {"minMember": 2, "scheduleTimeoutSeconds": -1}},
     "spec.scheduleTimeoutSeconds: Invalid value: -1: must be greater than or equal to 0"),
]


@pytest.mark.xdist_group("fuzz-apiserver")  # the session's server process, on one worker
@pytest.mark.parametrize(("path", "body", "message"), SERVER_CASES, ids=[m.split(":")[0] for _, _, m in SERVER_CASES])
def test_fake_api_server_refuses_the_same(apiserver_process: ServerProcess, path: str,
                                          body: Callable[[int], dict[str, Any]], message: str) -> None:
    obj = body(0)
    status, doc = post(apiserver_process, path, obj)
    assert status == 422, doc
    group = obj["apiVersion"].rpartition("/")[0]  # errors.NewInvalid names the GroupKind
    kind = f'{obj["kind"]}.{group}' if group else obj["kind"]
    assert doc["message"] == f'{kind} "{obj["metadata"]["name"]}" is invalid: {message}'
