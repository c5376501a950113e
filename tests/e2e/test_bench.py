"""Every ``kubesched bench`` workload runs to completion at a tiny size, with every measured pod
bound.  No timing is asserted: speed is what ``kubesched bench`` itself measures.

The sizes are upstream's ``integration-test`` sizes of each case (scheduler_perf's ``5Nodes`` /
``10Nodes_3Gangs`` workloads) where it has one.
"""

from __future__ import annotations

import dataclasses
import gc
import json

import pytest

from kubesched._errors import ConfigError
from kubesched.bench import DAY_NODES, DAY_PODS, WORKLOADS, check_sizes, run_workload, sized
from kubesched.cli import main

SMALL = [
    pytest.param("basic", 20, 10, 20, id="SchedulingBasic"),
    pytest.param("pod-anti-affinity", 5, 1, 4, id="SchedulingPodAntiAffinity/5Nodes"),
    pytest.param("pod-affinity", 5, 5, 10, id="SchedulingPodAffinity/5Nodes"),
    pytest.param("topology-spreading", 20, 20, 20, id="TopologySpreading"),
    pytest.param("node-affinity", 5, 5, 10, id="SchedulingNodeAffinity/5Nodes"),
    pytest.param("preemption", 5, 20, 5, id="PreemptionBasic/5Nodes sync"),
    pytest.param("preemption-async", 5, 20, 5, id="PreemptionBasic/5Nodes async"),
    pytest.param("preemption-churn", 5, 20, 5, id="PreemptionAsync/5Nodes"),
    pytest.param("gang", 10, 0, 9, id="GangScheduling/10Nodes_3Gangs"),
    pytest.param("gang-upstream", 10, 0, 24, id="GangSchedulingUpstream/10Nodes_3PodGroups"),
    # dra/performance-config.yaml's integration-test sizes: 1 node, 10 devices
    pytest.param("dra-template", 1, 5, 5, id="SchedulingWithResourceClaimTemplateStructured/1Node"),
    pytest.param("dra-steady", 1, 5, 5, id="SteadyStateClusterResourceClaimTemplateStructured/1Node"),
    pytest.param("dra-shared-claim", 1, 20, 20, id="SchedulingWithResourceClaim/1Node"),
]


def test_every_workload_is_in_the_table() -> None:
    assert {p.values[0] for p in SMALL} == set(WORKLOADS)


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "nodes", "init_pods", "pods"), SMALL)
async def test_workload_binds_every_measured_pod(
    name: str, nodes: int, init_pods: int, pods: int
) -> None:
    w = dataclasses.replace(WORKLOADS[name], nodes=nodes, init_pods=init_pods, pods=pods)
    result = await run_workload(w)
    assert result.bound == result.pods == pods
    assert result.attempts >= pods
    if name in ("preemption", "preemption-async"):
        # 4 low-priority pods (3.6 CPU) per node; each 3-CPU preemptor evicts 3 of them
        assert result.preemption_victims == 3 * pods
    if name == "preemption-churn":
        assert result.churn_pods >= 1
    if name in ("dra-template", "dra-steady"):
        assert result.attempts == pods  # every pod's claim allocated at its first attempt
    # dra-shared-claim: a pod whose claim another pod is allocating waits for it ("resource
    # claim ... is in the process of being allocated") and comes back: more attempts
    if name == "gang":
        assert result.gangs == pods // 3
        assert result.gang_attempt_ms is not None


@pytest.mark.anyio
async def test_missing_plugin_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched import plugins

    without = {k: v for k, v in plugins.IN_TREE.items() if k != "InterPodAffinity"}
    monkeypatch.setattr(plugins, "IN_TREE", without)
    w = dataclasses.replace(WORKLOADS["pod-anti-affinity"], nodes=5, init_pods=1, pods=4)
    with pytest.raises(ConfigError, match="requires the InterPodAffinity plugin"):
        await run_workload(w)


def test_cli_bench_all_prints_one_line_per_workload(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "all", "--nodes", "20", "--init-pods", "5", "--pods", "12", "--json"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    results = [json.loads(line) for line in lines]
    assert [r["name"] for r in results] == list(WORKLOADS)
    assert all(r["bound"] == r["pods"] for r in results)


def test_cli_unknown_workload_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nope"]) == 2
    assert "unknown workload 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["preemption", "--nodes", "50", "--init-pods", "400", "--pods", "100"],
            "kubesched: error: 200 pods cannot be scheduled on these sizes: the workload needs room "
            "for its pods (leave --nodes, --pods and --init-pods at their defaults, or keep their "
            "proportions)",
        ),
        (["basic", "--nodes", "0"], "kubesched: error: --nodes: Invalid value: 0: must be at least 1"),
        (["basic", "--pods", "-5"], "kubesched: error: --pods: Invalid value: -5: must be at least 1"),
        (["basic", "--init-pods", "-1"], "kubesched: error: --init-pods: Invalid value: -1: must be at least 0"),
    ],
)
def test_cli_impossible_sizes_are_one_line(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bench preemption`` on fewer nodes than its init pods need (``--nodes 500`` with the other
    sizes left alone is the same): its init pods do not fit, so its preemptors would wait for ever
    -- one line and exit 2, before any cluster is built (1.2 s of scheduling before, 9 s for
    ``--nodes 500``)."""
    from kubesched.transports.fake import FakeCluster

    def no_cluster(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cluster was built")

    monkeypatch.setattr(FakeCluster, "__init__", no_cluster)
    assert main(["bench", *argv]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", line + "\n")


def test_gang_pods_round_to_whole_gangs() -> None:
    assert sized(WORKLOADS["gang"], pods=10).pods == 9


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_day_runs_a_day_of_jobs_and_deployments(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``kubesched bench day`` at a tiny size: every Job arriving early enough completes; the
    figures are the simulation's, and the wall time and RSS are reported (not asserted)."""
    assert main(["bench", "day", "--nodes", "20", "--pods", "500", "--json", "--backend", backend]) == 0
    day = json.loads(capsys.readouterr().out)
    assert (day["workload"], day["nodes"]) == ("day", 20)
    # 50 serving pods (one Deployment) and 4 Jobs of 100 pods, the last arriving at 18:00
    assert day["pods"] == 450 and day["succeeded"] == 400
    assert day["virtualSeconds"] <= 86400 and day["timeline"] > 0
    assert day["wallSeconds"] > 0 and day["peakRssMiB"] > 0


@pytest.mark.parametrize(
    ("workload", "nodes", "init_pods", "pods", "pending"),
    [
        # each row's count is what the runner's stuck check reports after the work
        pytest.param("basic", 10, 300, 200, 100, id="basic: 40 pods of 100m per 4-CPU node"),
        pytest.param("basic", 10, 300, 100, 0, id="basic: exactly full"),
        pytest.param("pod-anti-affinity", 5, 3, 3, 1, id="anti-affinity: one pod per node, init and measured"),
        pytest.param("pod-anti-affinity", 5, 6, 1, 1, id="anti-affinity: the init pods alone"),
        pytest.param("preemption", 50, 400, 100, 200, id="preemption: 4 low-priority pods per node"),
        pytest.param("preemption", 5, 20, 6, 1, id="preemption: one 3-CPU preemptor per node"),
        pytest.param("preemption", 5, 20, 5, 0, id="preemption: every node preempted once"),
        pytest.param("topology-spreading", 4, 0, 126, 1, id="spreading: zones of 2, 1, 1 nodes, maxSkew 5"),
        pytest.param("topology-spreading", 4, 0, 125, 0, id="spreading: 45 + 40 + 40"),
        pytest.param("preemption-churn", 10, 40, 41, 1, id="churn: 400m left per node beside 4 x 900m"),
        pytest.param("gang", 3, 0, 123, 3, id="gang: 40 per node"),
    ],
)
def test_impossible_sizes_are_found_by_arithmetic(
    workload: str, nodes: int, init_pods: int, pods: int, pending: int
) -> None:
    w = sized(WORKLOADS[workload], nodes=nodes, init_pods=init_pods, pods=pods)
    if not pending:
        check_sizes(w)
        return
    with pytest.raises(ConfigError) as info:
        check_sizes(w)
    assert str(info.value).startswith(f"{pending} pods cannot be scheduled on these sizes: ")


@pytest.mark.parametrize(
    ("workload", "nodes", "init_pods", "pods"),
    [
        pytest.param("pod-anti-affinity", 5, 2, 3, id="anti-affinity: every node taken"),
        pytest.param("topology-spreading", 4, 0, 125, id="spreading: the largest count the skew allows"),
        pytest.param("preemption", 5, 20, 5, id="preemption: every node full, then preempted"),
    ],
)
@pytest.mark.anyio
async def test_sizes_at_the_limit_run(workload: str, nodes: int, init_pods: int, pods: int) -> None:
    """The check is a necessary condition: what it lets through at the limit is scheduled."""
    result = await run_workload(sized(WORKLOADS[workload], nodes=nodes, init_pods=init_pods, pods=pods))
    assert result.bound == pods


def test_help_shows_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    """``bench --help``: the flags' defaults, and each workload's sizes (they differ per
    workload) in a table."""
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "the event loop (default: asyncio)" in out
    rows = {line.split()[0]: line.split()[1:] for line in out.split("default sizes per workload")[1].splitlines()[2:] if line.strip()}
    assert rows.pop("workload") == ["--nodes", "--init-pods", "--pods"]
    assert rows == {
        **{name: [f"{w.nodes:,}", f"{w.init_pods:,}", f"{w.pods:,}"] for name, w in WORKLOADS.items()},
        "day": [f"{DAY_NODES:,}", "-", f"{DAY_PODS:,}"],
    }


def test_cli_config_replaces_the_workloads_profile(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--config``: the file's profiles instead of the workload's (a plugin package's plugins
    measured on a workload); a file that is not a valid configuration is one line, exit 2."""
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    score:\n      disabled: [{name: '*'}]\n"
    )
    argv = ["bench", "basic", "--nodes", "20", "--init-pods", "0", "--pods", "10", "--json", "--config", str(cfg)]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["pods"] == 10
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: 3\n")
    assert main(["bench", "basic", "--config", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0]



def test_a_command_runs_with_the_long_run_collector_thresholds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command that runs a scheduler runs with the CLI's GC_THRESHOLDS (a full collection a
    tenth as often), fake-apiserver with the caller's, and the caller's thresholds come back
    afterwards, also when the command fails."""
    import kubesched.cli as cli
    from kubesched.cli import bench as bench_cli

    seen: list[tuple[int, ...]] = []
    real_run = bench_cli.run

    def spy(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real_run(*args, **kwargs)

    monkeypatch.setattr(bench_cli, "run", spy)
    before = gc.get_threshold()
    gc.set_threshold(650, 9, 9)
    try:
        assert main(["bench", "basic", "--nodes", "5", "--pods", "2", "--init-pods", "0"]) == 0
        assert seen == [cli.GC_THRESHOLDS] and cli.GC_THRESHOLDS != (650, 9, 9)
        assert gc.get_threshold() == (650, 9, 9)
        assert main(["bench", "no-such-workload"]) == 2
        assert gc.get_threshold() == (650, 9, 9)
        # the fake API server keeps the collector as it was (its closed connections' cycles)
        from kubesched.cli import fake_apiserver

        monkeypatch.setattr(fake_apiserver, "main", lambda *a, **k: seen.append(gc.get_threshold()) or 0)
        assert main(["fake-apiserver"]) == 0
        assert seen[-1] == (650, 9, 9) and gc.get_threshold() == (650, 9, 9)
    finally:
        gc.set_threshold(*before)
    capsys.readouterr()
