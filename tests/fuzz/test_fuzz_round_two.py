"""Fuzzing hostile input, round two: recursive aliases, long digit strings, huge counts, malformed results.

Each property is the input contract of ``kubesched simulate`` (exit 0 with nothing on stderr, or exit 2 with
one line naming the file) on a class the second campaign found: recursive YAML aliases, long
digit strings, enormous workload counts, malformed results for ``report`` and ``explain``.
Derandomized and bounded like the rest of the fuzz suite.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_simulate import NODE, POD, check_contract, hostile_values, paths, run_cli, set_path

SMALL = settings(
    derandomize=True,
    max_examples=60,
    deadline=timedelta(seconds=20),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
NODE_YAML = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'


# --- recursive and self-referencing aliases -------------------------------------------------------

_ALIAS_SPOTS = [
    "metadata: &m {{name: p, labels: {0}}}",
    "metadata: {{name: p, annotations: &m {{a: {0}}}}}",
    "metadata: {{name: p}}\nspec: &m {{containers: [{{name: c, image: x}}], tolerations: [{0}]}}",
    "metadata: {{name: p}}\nspec: {{containers: &m [{{name: c, image: x, args: {0}}}]}}",
    "metadata: &m {{name: p, ownerReferences: [{0}]}}",
]


@SMALL
@given(spot=st.sampled_from(_ALIAS_SPOTS), nest=st.integers(0, 3), fmt=st.sampled_from(["flow", "list"]))
def test_fuzz_recursive_aliases(tmp_path: Path, capsys: pytest.CaptureFixture[str], spot: str, nest: int, fmt: str) -> None:
    """An alias inside the node it names (directly or a few levels down) is refused in one line."""
    ref = "*m"
    for _ in range(nest):
        ref = f"{{x: {ref}}}" if fmt == "flow" else f"[{ref}]"
    f = tmp_path / "in.yaml"
    f.write_text(NODE_YAML + "---\napiVersion: v1\nkind: Pod\n" + spot.format(ref) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(f)])
    check_contract(code, err, str(f))
    assert code == 2


# --- long digit strings -----------------------------------------------------------------------

_DIGITS = st.builds(
    lambda lead, n, tail, suffix: lead + "9" * n + tail + suffix,
    st.sampled_from(["", "0.", "1", "0.000", "+", "-"]),
    st.sampled_from([1, 30, 1000, 100_000, 400_000]),
    st.sampled_from(["", "1", ".5", "e3", "e-3", "e999"]),
    st.sampled_from(["", "m", "Ki", "Gi", "E", "k", "n", "Ei"]),
)


@SMALL
@given(text=_DIGITS, where=st.sampled_from(["requests", "allocatable"]))
def test_fuzz_long_digit_strings(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str) -> None:
    """Quantities of up to 400,000 digits: parsed in linear time (the deadline holds), accepted
    or refused in one line."""
    docs = [copy.deepcopy(NODE), copy.deepcopy(POD)]
    if where == "requests":
        docs[1]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": text}}
    else:
        docs[0]["status"]["allocatable"]["cpu"] = text
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), encoding="utf-8")
    code, _, err = run_cli(capsys, ["simulate", str(f)])
    check_contract(code, err, str(f))


# --- enormous counts ------------------------------------------------------------------------------

_COUNTS = st.one_of(
    st.integers(0, 60),
    st.sampled_from([2**31 - 1, 2**31, 2**63 - 1, 2**63, 10**6, 10**6 + 1, 10**9]),
)


def _workload(kind: str, field: str, value: int) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never"}}
    if kind == "Job":
        spec: dict[str, Any] = {field: value, "template": template}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"}, "spec": spec}
    spec = {"replicas": value, "selector": {"matchLabels": {"app": "w"}}, "template": template}
    template["spec"]["restartPolicy"] = "Always"
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w"}, "spec": spec}


@SMALL
@given(
    target=st.sampled_from([("Deployment", "replicas"), ("ReplicaSet", "replicas"), ("Job", "parallelism"),
                            ("Job", "completions")]),
    value=_COUNTS,
    copies=st.integers(1, 4),
)
def test_fuzz_enormous_workloads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: tuple[str, str], value: int, copies: int
) -> None:
    """Counts up to 2^63: refused in one line past --max-pods (here 50), and several workloads
    together never make more than --max-pods pods."""
    docs = [copy.deepcopy(NODE)]
    for i in range(copies):
        w = _workload(*target, value)
        w["metadata"]["name"] = f"w{i}"
        docs.append(w)
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), encoding="utf-8")
    code, out, err = run_cli(capsys, ["simulate", str(f), "--max-pods", "50"])
    if code == 0 and err:  # the cluster's limit was reached: a warning, not an error
        assert err.startswith("kubesched: warning: the cluster held 50 pods") and len(err.splitlines()) == 1
        err = ""
    check_contract(code, err, str(f))
    if code == 0:
        assert json.loads(out)["summary"]["pods"] <= 50


@SMALL
@given(
    knob=st.sampled_from(["--pods", "--jobs", "--gangs", "--deployments", "--nodes", "--job-size", "--replicas",
                          "--gang-size", "--node-pods", "--zones"]),
    value=st.sampled_from(["1e9", "1e12", "2147483647", "9" * 40, "1e308", "5"]),
)
def test_fuzz_generate_enormous(capsys: pytest.CaptureFixture[str], knob: str, value: str) -> None:
    """``generate`` with an enormous knob: one line and exit 2, or a bounded output."""
    argv = ["generate", knob, value, "--max-pods", "2000", "--max-nodes", "200", "--span", "10m"]
    if knob in ("--job-size", "--replicas", "--gang-size"):
        argv += {"--job-size": ["--jobs", "3"], "--replicas": ["--deployments", "3"], "--gang-size": ["--gangs", "3"]}[knob]
    code, out, err = run_cli(capsys, argv)
    check_contract(code, err)
    assert len(out) < 5_000_000


# --- malformed results for report and explain ------------------------------------------------------


def _result() -> dict[str, Any]:
    return dict(json.loads((Path(__file__).parents[1] / "e2e" / "fixtures" / "lifecycle-result.json").read_text()))


_RESULT = _result()
_RESULT_PATHS = paths(_RESULT)[:4000]


@settings(SMALL, max_examples=30)
@given(
    changes=st.lists(st.tuples(st.sampled_from(_RESULT_PATHS), hostile_values), min_size=1, max_size=3),
    command=st.sampled_from(["report", "explain"]),
)
def test_fuzz_malformed_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: list[tuple[tuple[Any, ...], Any]], command: str
) -> None:
    doc: Any = _RESULT
    for path, value in changes:
        try:
            doc = set_path(doc, path, value)
        except (KeyError, IndexError, TypeError):  # an earlier change removed the path
            continue
    f = tmp_path / "r.json"
    text = json.dumps(doc)
    for n in range(90, 1101):  # the deep-nesting placeholders of hostile_values
        text = text.replace(f'"__deep_{n}__"', "[" * n + "]" * n)
    f.write_text(text, encoding="utf-8")
    pod = next((p["name"] for p in _RESULT["pods"]), "p")
    argv = ["report", str(f), "-o", str(tmp_path / "r.html")] if command == "report" else ["explain", str(f), pod]
    code, _, err = run_cli(capsys, argv)
    check_contract(code, err, str(f))
