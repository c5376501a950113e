"""``kubesched generate``: synthetic workloads, deterministic by seed, as ordinary manifests.

Checked by the output itself: the same spec and seed give the same bytes; the objects are the
manifests ``kubesched simulate`` takes (Nodes in pools, PriorityClasses, Pods, Jobs, gang Jobs with a
PodGroup or the Gang labels, Deployments, with arrival / duration / deletion annotations); the
distributions' parameters hold statistically (fixed seeds, so these are exact, repeatable
checks); bare-Pod workloads run through today's ``simulate``; ``--help`` documents every knob.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import cli
from kubesched.api._durations import parse_duration
from kubesched.generate import KNOBS, generate_objects, parse_dist, parse_spec


def gen(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert cli.main(["generate", *argv]) == 0
    return capsys.readouterr().out


def docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d is not None]


def objects(**spec: Any) -> list[dict[str, Any]]:
    """The objects of a spec, without the YAML round trip (for the large statistical samples)."""
    return generate_objects(parse_spec(spec))


def kinds(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def arrival(obj: dict[str, Any]) -> float:
    return parse_duration(obj["metadata"]["annotations"]["kubesched.io/arrival"])


# --- determinism ------------------------------------------------------------------------------

MIXED = ("--nodes", "4", "--pods", "20", "--jobs", "10", "--gangs", "5", "--deployments", "5",
         "--job-size", "uniform:min=1,max=4", "--priority-classes", "[{name: low, value: 0, share: 3}, {name: high, value: 1000}]")


def test_same_spec_and_seed_same_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    a = gen(capsys, *MIXED, "--seed", "7")
    b = gen(capsys, *MIXED, "--seed", "7")
    c = gen(capsys, *MIXED, "--seed", "8")
    assert a == b
    assert a != c


def test_spec_file_equals_flags_and_flags_override(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes: 3\npods: 10\nseed: 5\nshapes: [{cpu: 250m, memory: 256Mi}]\n")
    from_file = gen(capsys, str(spec))
    from_flags = gen(capsys, "--nodes", "3", "--pods", "10", "--seed", "5", "--shapes", "[{cpu: 250m, memory: 256Mi}]")
    assert from_file == from_flags
    overridden = docs(gen(capsys, str(spec), "--nodes", "1"))
    assert len(kinds(overridden, "Node")) == 1


def test_one_knob_does_not_reshuffle_the_others(capsys: pytest.CaptureFixture[str]) -> None:
    """Each stream draws from its own generator: more Jobs leave the Pods' arrivals as they were."""
    few = docs(gen(capsys, "--pods", "10", "--jobs", "1", "--seed", "3"))
    many = docs(gen(capsys, "--pods", "10", "--jobs", "30", "--seed", "3"))
    assert [(p["metadata"]["name"], arrival(p)) for p in kinds(few, "Pod")] == [
        (p["metadata"]["name"], arrival(p)) for p in kinds(many, "Pod")
    ]


# --- the manifests ----------------------------------------------------------------------------


def test_node_pools(capsys: pytest.CaptureFixture[str]) -> None:
    pools = ("[{name: cpu, count: 4, zones: 2}, {name: gpu, count: 2, cpu: '32', memory: 256Gi, "
             "extended: {nvidia.com/gpu: 8}, labels: {accelerator: a100}, "
             "taints: [{key: gpu, value: 'true', effect: NoSchedule}]}]")
    objs = docs(gen(capsys, "--node-pools", pools, "--node-cpu", "16"))
    nodes = kinds(objs, "Node")
    assert [n["metadata"]["name"] for n in nodes] == ["cpu-0001", "cpu-0002", "cpu-0003", "cpu-0004", "gpu-0001", "gpu-0002"]
    cpu, gpu = nodes[0], nodes[4]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes[:4]] == ["zone-a", "zone-b"] * 2
    assert cpu["status"]["allocatable"] == {"cpu": "16", "memory": "32Gi", "pods": "110"}  # knob defaults
    assert "spec" not in cpu
    assert gpu["status"]["allocatable"] == {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}
    assert gpu["metadata"]["labels"]["accelerator"] == "a100"
    assert gpu["metadata"]["labels"]["kubesched.io/pool"] == "gpu"
    assert gpu["spec"]["taints"] == [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]


def test_workload_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    objs = docs(gen(capsys, *MIXED, "--seed", "2", "--shapes",
                    "[{name: train, cpu: 4, memory: 8Gi, nvidia.com/gpu: 1, tolerations: [{key: gpu, operator: Exists}]}]"))
    assert [pc["metadata"]["name"] for pc in kinds(objs, "PriorityClass")] == ["low", "high"]
    workloads = [o for o in objs if o["kind"] not in ("Node", "PriorityClass")]
    times = [arrival(o) for o in workloads]
    assert times == sorted(times) and all(0 <= t < 3600 for t in times)
    for pod in kinds(objs, "Pod"):
        assert pod["apiVersion"] == "v1"
        assert pod["spec"]["restartPolicy"] == "Never"
        assert parse_duration(pod["metadata"]["annotations"]["kubesched.io/duration"]) > 0
        c = pod["spec"]["containers"][0]["resources"]
        assert c == {"requests": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
        assert pod["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
        assert pod["spec"]["priorityClassName"] in ("low", "high")
    jobs = kinds(objs, "Job")
    plain = [j for j in jobs if j["metadata"]["name"].startswith("job-")]
    gangs = [j for j in jobs if j["metadata"]["name"].startswith("gang-")]
    assert plain and gangs
    for job in plain:
        assert job["apiVersion"] == "batch/v1"
        s = job["spec"]
        assert s["parallelism"] == s["completions"] and 1 <= s["parallelism"] <= 4
        assert s["template"]["spec"]["restartPolicy"] == "Never"
        assert parse_duration(s["template"]["metadata"]["annotations"]["kubesched.io/duration"]) > 0
    groups = {g["metadata"]["name"]: g for g in kinds(objs, "PodGroup")}
    assert set(groups) == {g["metadata"]["name"] for g in gangs}
    for job in gangs:
        name = job["metadata"]["name"]
        assert job["spec"]["template"]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == name
        assert groups[name]["spec"]["minMember"] == job["spec"]["parallelism"] == 4
        assert arrival(groups[name]) == arrival(job)
        assert objs.index(groups[name]) < objs.index(job)  # the group exists before its pods
    for dep in kinds(objs, "Deployment"):
        assert dep["apiVersion"] == "apps/v1"
        assert dep["spec"]["replicas"] == 3
        assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
        assert dep["spec"]["template"]["spec"]["restartPolicy"] == "Always"
        assert parse_duration(dep["metadata"]["annotations"]["kubesched.io/deletion"]) > arrival(dep)


def test_gangs_with_the_gang_labels(capsys: pytest.CaptureFixture[str]) -> None:
    objs = docs(gen(capsys, "--gangs", "6", "--gang-api", "labels", "--gang-size", "uniform:min=2,max=5", "--seed", "4"))
    assert not kinds(objs, "PodGroup")
    for job in kinds(objs, "Job"):
        labels = job["spec"]["template"]["metadata"]["labels"]
        assert labels["gang.kubesched.io/name"] == job["metadata"]["name"]
        assert labels["gang.kubesched.io/available-count"] == str(job["spec"]["parallelism"])
        assert 2 <= job["spec"]["parallelism"] <= 5


def test_bare_pods_simulate_today(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w.yaml"
    gen(capsys, "--nodes", "3", "--pods", "12", "--seed", "1", "--priority-classes", "[{name: batch, value: 10}]",
        "-o", str(out))
    assert cli.main(["simulate", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    pods = kinds(docs(out.read_text()), "Pod")
    assert result["summary"]["pods"] == len(pods) > 0
    assert result["summary"]["scheduled"] == len(pods)
    assert {p["priority"] for p in result["pods"]} == {10}


# --- the distributions, statistically (fixed seeds) -------------------------------------------


def test_poisson_arrivals(capsys: pytest.CaptureFixture[str]) -> None:
    counts, gaps = [], []
    for seed in range(5):
        pods = kinds(objects(nodes=0, pods=400, span="2h", seed=seed), "Pod")
        times = [arrival(p) for p in pods]
        assert all(0 <= t < 7200 for t in times)
        counts.append(len(times))
        gaps.extend(b - a for a, b in zip([0.0, *times], times, strict=False))
    # a Poisson count has variance = mean: 5 runs of mean 400 stay within 4 sigma of 2000
    assert abs(sum(counts) - 2000) < 4 * math.sqrt(2000)
    # exponential gaps: mean span/N = 18 s, and the coefficient of variation is 1
    assert statistics.fmean(gaps) == pytest.approx(18.0, rel=0.06)
    assert statistics.pstdev(gaps) / statistics.fmean(gaps) == pytest.approx(1.0, rel=0.08)


@pytest.mark.parametrize(
    ("text", "check"),
    [
        pytest.param("exponential:mean=10m", lambda xs: statistics.fmean(xs) == pytest.approx(600, rel=0.05), id="exponential mean"),
        pytest.param("lognormal:median=5m,spread=2", lambda xs: statistics.median(xs) == pytest.approx(300, rel=0.06)
                     and math.exp(statistics.pstdev([math.log(x) for x in xs])) == pytest.approx(2.0, rel=0.05),
                     id="lognormal median and spread"),
        pytest.param("uniform:min=1m,max=3m", lambda xs: min(xs) >= 60 and max(xs) <= 180
                     and statistics.fmean(xs) == pytest.approx(120, rel=0.03), id="uniform bounds and mean"),
        pytest.param("90s", lambda xs: set(xs) == {90.0}, id="constant"),
    ],
)
def test_duration_distributions(text: str, check: Any) -> None:
    pods = kinds(objects(nodes=0, pods=2000, duration=text, seed=11), "Pod")
    durations = [parse_duration(p["metadata"]["annotations"]["kubesched.io/duration"]) for p in pods]
    assert len(durations) > 1800
    assert check(durations)


def test_sizes_and_shares() -> None:
    objs = objects(nodes=0, jobs=1500, jobSize="exponential:mean=5", seed=3,
                   priorityClasses=[{"name": "low", "value": 0, "share": 3}, {"name": "high", "value": 100, "share": 1}],
                   shapes=[{"name": "s", "cpu": 1, "share": 1}, {"name": "l", "cpu": 4, "share": 4}])
    jobs = kinds(objs, "Job")
    sizes = [j["spec"]["parallelism"] for j in jobs]
    assert min(sizes) >= 1
    assert statistics.fmean(sizes) == pytest.approx(5.0, rel=0.08)  # rounding keeps the mean (floored at 1)
    high = sum(1 for j in jobs if j["spec"]["template"]["spec"]["priorityClassName"] == "high") / len(jobs)
    assert high == pytest.approx(0.25, abs=0.03)
    large = sum(1 for j in jobs if j["spec"]["template"]["metadata"]["labels"]["kubesched.io/shape"] == "l") / len(jobs)
    assert large == pytest.approx(0.8, abs=0.03)


def test_generate_objects_is_the_command() -> None:
    spec = parse_spec({"nodes": 2, "pods": 3, "seed": 9})
    assert generate_objects(spec) == generate_objects(parse_spec({"pods": 3, "nodes": 2, "seed": 9}))
    assert parse_dist("lognormal:median=1h,spread=3", "x", durations=True).params == (3600.0, 3.0)


# --- the help and bad input -------------------------------------------------------------------


def test_help_documents_every_knob_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["generate", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # undo argparse's wrapping
    for knob in KNOBS:
        default = knob.default if knob.kind != "yaml" else yaml.safe_dump(knob.default, default_flow_style=True, width=1000).strip()
        assert f"{knob.flag} V [{knob.key}]" in text
        assert f"(default: {default})" in text
    for dist in ("exponential:mean=V", "lognormal:median=V,spread=S", "uniform:min=A,max=B", "constant:value=V"):
        assert dist in text


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        pytest.param(["--nodes", "-1"], "kubesched: error: --nodes: Invalid value: -1: must be greater than or equal to 0", id="negative nodes"),
        pytest.param(["--span", "0s"], 'kubesched: error: --span: Invalid value: "0s": must be greater than 0', id="empty span"),
        pytest.param(["--pods", "-3"], "kubesched: error: --pods: Invalid value: -3: must be greater than or equal to 0", id="negative rate"),
        pytest.param(["--zones", "0"], "kubesched: error: --zones: Invalid value: 0: must be greater than or equal to 1", id="no zones"),
        pytest.param(["--duration", "lognormal:median=5m,spread=0.5"],
                     'kubesched: error: --duration: Invalid value: "lognormal:median=5m,spread=0.5": spread must be >= 1', id="spread below 1"),
        pytest.param(["--duration", "exponential:mean=-1s"],
                     'kubesched: error: --duration: Invalid value: "exponential:mean=-1s": mean must be > 0', id="negative mean"),
        pytest.param(["--job-size", "poisson:mean=3"],
                     'kubesched: error: --job-size: Unsupported value: "poisson": supported values: "constant", "exponential", "lognormal", "uniform"',
                     id="unknown distribution"),
        pytest.param(["--gang-size", "uniform:min=0,max=3"],
                     'kubesched: error: --gang-size: Invalid value: "uniform:min=0,max=3": min must be >= 1', id="gang of zero"),
        pytest.param(["--gang-api", "crd"], 'kubesched: error: --gang-api: Unsupported value: "crd": supported values: "podgroup", "labels"', id="gang api"),
        pytest.param(["--node-memory", "lots"], "kubesched: error: --node-memory: Invalid value: \"lots\": quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", id="bad quantity"),
        pytest.param(["--shapes", "[{cpu: 1, gpu: 2}]"],
                     'kubesched: error: --shapes[0].gpu: unknown field "gpu" (allowed: cpu, memory, name, nodeSelector, share, tolerations)', id="unknown shape key"),
        pytest.param(["--priority-classes", "[{name: x, value: 2000000000}]"],
                     "kubesched: error: --priority-classes[0].value: Invalid value: 2000000000: must be no greater than 1000000000 "
                     "(higher values are reserved for system classes)", id="system priority"),
        pytest.param(["--node-pools", "[{name: a, count: -2}]"],
                     "kubesched: error: --node-pools[0].count: Invalid value: -2: must be greater than or equal to 0", id="pool count"),
        # what simulate would refuse of the nodes written (issue 38 item 12)
        pytest.param(["--node-taints", "[{key: k, effect: Bogus}]"],
                     'kubesched: error: --node-taints[0].effect: Unsupported value: "Bogus": supported values: "NoExecute", "NoSchedule", '
                     '"PreferNoSchedule"', id="taint effect Bogus"),
        pytest.param(["--node-pools", "[{name: gpu, count: 1, taints: [{key: k, effect: NoSchedule, value: 'a b'}]}]"],
                     "kubesched: error: --node-pools[0].taints[0].value: Invalid value: \"a b\": a valid label must be an empty string or "
                     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                     "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                     id="pool taint value"),
        pytest.param(["--shapes", "[{name: a, tolerations: [{key: k, effect: Bogus}]}]"],
                     'kubesched: error: --shapes[0].tolerations[0].effect: Unsupported value: "Bogus": supported values: "NoExecute", '
                     '"NoSchedule", "PreferNoSchedule"', id="toleration effect Bogus"),
    ],
)
def test_bad_knob_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], line: str) -> None:
    assert cli.main(["generate", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == line + "\n"


def test_bad_spec_file_names_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes: 2\nnodePools: [{name: a, zones: 0}]\n")
    assert cli.main(["generate", str(spec)]) == 2
    assert capsys.readouterr().err == f"kubesched: error: {spec}, nodePools[0].zones: Invalid value: 0: must be greater than or equal to 1\n"
    spec.write_text("nodez: 2\n")
    assert cli.main(["generate", str(spec)]) == 2
    assert capsys.readouterr().err == f'kubesched: error: {spec}, nodez: unknown field "nodez" (see kubesched generate --help)\n'
