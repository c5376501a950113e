"""Fuzzing ``kubesched simulate``: the manifest loader, the config loader and the command line.

The properties are the input contract of ``kubesched simulate``: exit 0 with nothing on stderr, or exit 2 with
exactly one stderr line that names the file; never a traceback (any exception escaping
``cli.main`` fails the example), never longer than the deadline, and never exit 0 on input that
upstream's validation refuses (the ``invalid`` strategies: each draws a change a real API server
or kube-scheduler refuses, judged by the upstream rule written out here, not by kubesched's code).

Derandomized and bounded: the same examples every run, the whole suite well under a minute.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched import cli

FUZZ = settings(
    derandomize=True,
    max_examples=200,
    deadline=timedelta(seconds=20),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "zone": "a"}},
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
}
POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"},
                 "annotations": {"kubesched.io/arrival": "1s"}},
    "spec": {
        "priority": 5,
        "terminationGracePeriodSeconds": 30,
        "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1"}}}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app": "a"}}}],
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "a"}}}}]}},
    },
}
PDB: dict[str, Any] = {
    "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
    "metadata": {"name": "b"}, "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "a"}}},
}
PC: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
PG: dict[str, Any] = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"},
                      "spec": {"minMember": 1, "scheduleTimeoutSeconds": 10}}
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "parallelism": 4, "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 10,
    "profiles": [{
        "schedulerName": "default-scheduler", "percentageOfNodesToScore": 50,
        "plugins": {"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 2}]}},
        "pluginConfig": [
            {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}},
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "LeastAllocated",
                                                                       "resources": [{"name": "cpu", "weight": 1}]}}},
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}},
            {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
        ],
    }],
}
DEEP = "__deep_{}__"


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in ``doc`` (the mutation points)."""
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, (*prefix, i))
    return out


def set_path(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    target = doc
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return doc


unicode_digits = st.sampled_from(["١٢", "１٠", "٣m", "५Gi", "1٠0"])
hostile_strings = st.one_of(
    st.text(max_size=12),
    unicode_digits,
    st.sampled_from(["1e999999999", "1e-999999999", "-1", "1e99999999999", "9" * 400, "150%", "-5%", "",
                     " ", "a\nb", "Foo", "a" * 300, "nan", ".inf", "1Ei", "0x10", "1_000", "\x00"]),
)
hostile_numbers = st.one_of(
    st.integers(min_value=-(2**72), max_value=2**72),
    st.sampled_from([2**31, 2**31 - 1, -(2**31) - 1, 2**63, 2**63 - 1, 2**70, 0, -1, 65536, 70000]),
    st.floats(allow_nan=True, allow_infinity=True),
)
hostile_values = st.one_of(
    hostile_strings, hostile_numbers, st.none(), st.booleans(),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    st.integers(min_value=90, max_value=1100).map(DEEP.format),
)


# libyaml's emitter where PyYAML has it: the pure-Python one was a third of these tests' time
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render(docs: list[Any], fmt: str) -> str:
    if fmt == "json":
        text = json.dumps(docs[0] if len(docs) == 1 else {"apiVersion": "v1", "kind": "List", "items": docs})
    else:
        text = "---\n".join(yaml.dump(d, Dumper=DUMPER, allow_unicode=True) for d in docs)
    for m in set(re.findall(r"__deep_(\d+)__", text)):
        n = int(m)
        text = text.replace(f"'{DEEP.format(n)}'", "[" * n + "]" * n)
        text = text.replace(f'"{DEEP.format(n)}"', "[" * n + "]" * n).replace(DEEP.format(n), "[" * n + "]" * n)
    return text


def run_cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse: its own exit, also bound by the contract
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def check_contract(code: int, err: str, source: str = "") -> None:
    assert code in (0, 2), (code, err)
    if code == 0:
        assert err == ""
    else:
        lines = err.splitlines()
        assert len(lines) == 1 and err.endswith("\n"), err
        assert lines[0].startswith("kubesched: error: "), err
        assert "Traceback" not in err
        if source:
            assert lines[0].startswith(f"kubesched: error: {source}"), err


@st.composite
def mutated_manifests(draw: st.DrawFn) -> tuple[list[Any], str]:
    docs = [copy.deepcopy(d) for d in (PC, NODE, POD, PDB, PG)]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(docs) - 1))
        choice = draw(st.integers(0, 9))
        if choice == 0:  # an unknown or duplicate-looking field
            docs[i] = set_path(docs[i], (draw(st.text(min_size=1, max_size=8)),), draw(hostile_values))
        else:
            path = draw(st.sampled_from(paths(docs[i])))
            docs[i] = set_path(docs[i], path, draw(hostile_values))
    return docs, draw(st.sampled_from(["yaml", "json"]))


@FUZZ
@given(case=mutated_manifests())
def test_fuzz_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: tuple[list[Any], str]) -> None:
    docs, fmt = case
    f = tmp_path / f"in.{fmt}"
    f.write_text(render(docs, fmt), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(f), "--until", "30s"])
    check_contract(code, err, str(f))


# --- what upstream refuses: never exit 0 -------------------------------------------------------

_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
bad_names = st.text(min_size=1, max_size=20).filter(lambda s: not (_SUBDOMAIN.fullmatch(s) and len(s) <= 253))
bad_label_values = st.text(min_size=1, max_size=70).filter(lambda s: not (_LABEL_VALUE.fullmatch(s) and len(s) <= 63))
beyond_int32 = st.one_of(st.integers(min_value=2**31, max_value=2**80), st.integers(max_value=-(2**31) - 1, min_value=-(2**80)))
INVALID = st.one_of(
    bad_names.map(lambda n: (2, ("metadata", "name"), n)),  # ValidateObjectMeta: NameIsDNSSubdomain
    bad_names.map(lambda n: (1, ("metadata", "name"), n)),
    bad_label_values.map(lambda v: (2, ("metadata", "labels", "app"), v)),  # ValidateLabels
    beyond_int32.map(lambda v: (2, ("spec", "priority"), v)),  # int32 field
    beyond_int32.map(lambda v: (0, ("value",), v)),
    st.integers(max_value=0, min_value=-(2**31)).map(lambda v: (2, ("spec", "topologySpreadConstraints", 0, "maxSkew"), v)),
    st.text(max_size=10).filter(lambda s: s not in ("DoNotSchedule", "ScheduleAnyway")).map(
        lambda v: (2, ("spec", "topologySpreadConstraints", 0, "whenUnsatisfiable"), v)),
    st.one_of(st.integers(max_value=0), st.integers(min_value=101, max_value=2**31 - 1)).map(
        lambda v: (2, ("spec", "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", 0, "weight"), v)),
    st.one_of(st.integers(max_value=-1, min_value=-(2**31)), st.integers(min_value=65536, max_value=2**31 - 1)).map(
        lambda v: (2, ("spec", "containers", 0, "ports", 0, "hostPort"), v)),
    st.integers(min_value=101, max_value=10**6).map(lambda v: (3, ("spec", "minAvailable"), f"{v}%")),
    unicode_digits.map(lambda v: (2, ("spec", "containers", 0, "resources", "requests", "cpu"), v)),
    st.integers(min_value=2, max_value=10**6).map(lambda v: (2, ("spec", "containers", 0, "resources", "requests", "cpu"), str(v))),
    st.just((2, ("spec", "containers"), [])),
)


@FUZZ
@given(case=INVALID, fmt=st.sampled_from(["yaml", "json"]))
def test_fuzz_never_exit_0_on_what_upstream_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: tuple[int, tuple[Any, ...], Any], fmt: str
) -> None:
    docs = [copy.deepcopy(d) for d in (PC, NODE, POD, PDB, PG)]
    i, path, value = case
    docs[i] = set_path(docs[i], path, value)
    f = tmp_path / f"in.{fmt}"
    f.write_text(render(docs, fmt), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(f), "--until", "30s"])
    assert code == 2, f"exit {code} on {path}={value!r}"
    check_contract(code, err, str(f))


# --- the config loader ---------------------------------------------------------------------------


@st.composite
def mutated_configs(draw: st.DrawFn) -> dict[str, Any]:
    cfg = copy.deepcopy(CONFIG)
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            cfg = set_path(cfg, draw(st.sampled_from(paths(cfg))), draw(hostile_values))
        else:  # an unknown field somewhere a mapping is (upstream's strict decoding refuses it)
            maps = [p for p in paths(cfg) if isinstance(_get(cfg, p), dict)]
            cfg = set_path(cfg, (*draw(st.sampled_from(maps)), draw(st.sampled_from(["typo", "Parallelism", "x"]))), 1)
    return cfg


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


@FUZZ
@given(cfg=mutated_configs())
def test_fuzz_config(tmp_path: Path, capsys: pytest.CaptureFixture[str], cfg: dict[str, Any]) -> None:
    manifests = tmp_path / "in.yaml"
    manifests.write_text(render([NODE], "yaml"), encoding="utf-8")
    c = tmp_path / "cfg.yaml"
    c.write_text(render([cfg], "yaml"), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(manifests), "--config", str(c), "--until", "10s"])
    check_contract(code, err)
    if code == 2:
        assert str(c) in err or str(manifests) in err or "--" in err, err


@FUZZ
@given(key=st.text(min_size=1, max_size=10).filter(lambda k: k not in (
    "minCandidateNodesPercentage", "minCandidateNodesAbsolute", "apiVersion", "kind")))
def test_fuzz_unknown_plugin_args_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str) -> None:
    """Upstream decodes plugin args strictly: an unknown field is an error."""
    cfg = copy.deepcopy(CONFIG)
    cfg["profiles"][0]["pluginConfig"][0]["args"][key] = 1
    manifests = tmp_path / "in.yaml"
    manifests.write_text(render([NODE], "yaml"), encoding="utf-8")
    c = tmp_path / "cfg.yaml"
    c.write_text(render([cfg], "yaml"), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(manifests), "--config", str(c), "--until", "10s"])
    assert code == 2
    check_contract(code, err, str(c))


# --- the command line ------------------------------------------------------------------------------

FLAGS = ["--config", "--feature-gates", "--output", "--seed", "--until", "--backend", "--report", "--bogus", "-x", "--"]
VALUES = ["json", "text", "trio", "asyncio", "xml", "1s", "0", "-1", "9" * 30, "nan", "SchedulerAsyncPreemption=false",
          "Nope=true", "=", "", "١", "report.json", "missing.yaml"]


def _not_help(token: str) -> bool:
    return not (token.startswith("-h") or (token.startswith("--") and len(token) > 2 and "--help".startswith(token)))


@FUZZ
@given(argv=st.lists(st.one_of(st.sampled_from(FLAGS), st.sampled_from(VALUES), st.text(max_size=8)).filter(_not_help),
                     max_size=6))
def test_fuzz_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    Path("in.yaml").write_text(render([NODE, POD], "yaml"), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", "in.yaml", *argv])
    check_contract(code, err)
