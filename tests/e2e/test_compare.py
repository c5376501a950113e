"""``kubesched compare`` and the progress line of long runs, end to end through the command line."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from kubesched._errors import ConfigError
from kubesched.cli import main
from kubesched.cli.progress import Progress
from kubesched.experiments import variants
from kubesched.reporting import compute

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples" / "scenarios"
PACKING = str(EXAMPLES / "packing.yaml")
MOST_ALLOCATED = str(EXAMPLES / "most-allocated-config.yaml")


def compare_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["compare", *argv, "--output", "json"]) == 0
    out = capsys.readouterr()
    assert out.err == ""  # stderr is no terminal here: no progress line
    return json.loads(out.out)  # type: ignore[no-any-return]


def test_most_allocated_packs_the_cluster_tighter(capsys: pytest.CaptureFixture[str]) -> None:
    """Default profile (LeastAllocated) against NodeResourcesFit MostAllocated on the packing example."""
    doc = compare_json([PACKING, "--config", "default", "--config", MOST_ALLOCATED], capsys)
    default, packed = (v["metrics"] for v in doc["variants"])
    assert [v["name"] for v in doc["variants"]] == ["default", "most-allocated-config.yaml"]
    assert default["scheduled"] == packed["scheduled"] == 12
    # the expected direction: fewer nodes carry the same pods, so per-node fill is less even
    assert packed["nodesUsed"] < default["nodesUsed"]
    assert packed["nodeBalance.cpu"] > default["nodeBalance.cpu"]
    assert packed["nodeBalance.memory"] > default["nodeBalance.memory"]


def test_the_table_shows_each_variant_by_its_file_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", PACKING, "--config", "default", "--config", MOST_ALLOCATED]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["metric", "better", "default", "most-allocated-config.yaml", "difference"]

    def row(name: str) -> list[str]:
        return next(line for line in lines if line.startswith(name + "  ")).removeprefix(name).split()

    # the better value marked where "better" has a direction, and the difference from the first
    assert row("nodes used at the end") == ["lower", "6", "3*", "\u22123"]
    assert row("peak nodes used") == ["lower", "6", "3*", "\u22123"]
    assert row("mean nodes used") == ["lower", "4.64", "1.91*", "\u22122.73"]
    assert row("node balance (std) cpu") == ["\u2013", "0.112", "0.480", "+0.367"]  # no better direction
    assert row("scheduled") == ["higher", "12", "12", "0"]  # equal: nothing marked
    assert row("mean allocation cpu") == ["higher", "23.7%", "23.7%", "0", "pp"]
    assert lines[-1] == ("* the better value, where the metric has a better direction; "
                         "difference: most-allocated-config.yaml \u2212 default")


def test_json_names_the_baseline_the_better_direction_and_the_differences(capsys: pytest.CaptureFixture[str]) -> None:
    doc = compare_json([PACKING, "--config", "default", "--config", MOST_ALLOCATED], capsys)
    assert doc["baseline"] == "default"
    assert (doc["better"]["nodesUsed"], doc["better"]["scheduled"], doc["better"]["nodeBalance.cpu"]) == (
        "lower", "higher", None)
    assert "difference" not in doc["variants"][0]
    diff = doc["variants"][1]["difference"]
    assert (diff["nodesUsed"], diff["nodesUsedPeak"], diff["scheduled"]) == (-3, -3, 0)
    assert diff["jobCompletionP50"] is None  # n/a on both sides


# --- many seeds ---------------------------------------------------------------------------------


def test_many_seeds_give_means_and_paired_differences(capsys: pytest.CaptureFixture[str]) -> None:
    from kubesched.experiments import cell_metrics

    doc = compare_json([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "1-3"], capsys)
    assert doc["seeds"] == [1, 2, 3] and doc["baseline"] == "default"
    default, packed = doc["variants"]
    assert [r["seed"] for r in packed["runs"]] == [1, 2, 3] and all(r["status"] == "ok" for r in packed["runs"])
    # each run is the simulate run of that seed
    assert main(["simulate", PACKING, "--config", MOST_ALLOCATED, "--seed", "2"]) == 0
    alone = cell_metrics(json.loads(capsys.readouterr().out))
    assert packed["runs"][1]["metrics"] == alone
    assert default["metrics"]["nodesUsed"] == {"mean": 6.0, "low": 6.0, "high": 6.0, "n": 3}
    d = packed["difference"]["nodesUsed"]
    assert (d["mean"], d["n"], d["lower"], d["outcome"]) == (-3.0, 3, 3, "better")
    assert d["verdict"] == "most-allocated-config.yaml: \u22123 nodes used at the end [\u22123, \u22123], better in 3/3 seeds"
    assert packed["difference"]["scheduled"]["verdict"] == (
        "most-allocated-config.yaml: 0 pods scheduled [0, 0], no difference")


def test_many_seeds_as_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "seeds.html"
    assert main(["compare", PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "1,2",
                 "--html", str(page)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("packing.yaml: 2 variants \u00d7 2 seeds; each variant minus default, paired by seed: "
                        "mean [95% interval]")
    assert lines[1].split()[:2] == ["metric", "better"] and "most-allocated-config.yaml \u2212 default" in lines[1]
    row = next(line for line in lines if line.startswith("peak nodes used"))
    assert row.split() == ["peak", "nodes", "used", "lower", "6", "3", "\u22123", "[\u22123,", "\u22123],", "better",
                           "in", "2/2", "seeds"]
    html = page.read_text()  # the sweep's page, for one scenario
    assert '<section class="scenario" id="scenario-1" data-scenario="packing.yaml">' in html
    assert 'id="verdicts"' in html and html.count('class="kubesched-figure"') == 2


def test_many_seeds_on_dask_are_the_same_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """``--scheduler``: the sweep's cells on a Dask cluster (here one in this process, over TCP)."""
    import logging

    from distributed import LocalCluster

    argv = [PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "4-5"]
    local = compare_json(argv, capsys)
    # the scheduler's HTTP server on a free port: 8787 may be another cluster's (a warning, an error here)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                      dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL) as cluster:
        assert main(["compare", *argv, "--scheduler", cluster.scheduler_address, "--output", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == local


def test_compare_uses_the_metrics_of_simulate_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One definition: a variant's row is metrics.compute of that variant's simulate output."""
    doc = compare_json([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seed", "3"], capsys)
    assert main(["simulate", PACKING, "--config", MOST_ALLOCATED, "--seed", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert doc["variants"][1]["metrics"] == compute(result).table()
    assert doc["seed"] == 3 and doc["variants"][1]["config"] == MOST_ALLOCATED


def test_variants_that_differ_only_by_feature_gates(capsys: pytest.CaptureFixture[str]) -> None:
    doc = compare_json([str(EXAMPLES / "preemption.yaml"), "--feature-gates", "SchedulerAsyncPreemption=true",
                        "--feature-gates", "SchedulerAsyncPreemption=false"], capsys)
    assert [v["name"] for v in doc["variants"]] == [
        "default [SchedulerAsyncPreemption=true]", "default [SchedulerAsyncPreemption=false]"]
    assert [v["featureGates"] for v in doc["variants"]] == ["SchedulerAsyncPreemption=true",
                                                            "SchedulerAsyncPreemption=false"]
    for v in doc["variants"]:
        assert (v["metrics"]["preemptions"], v["metrics"]["victims"]) == (1, 1)


@pytest.mark.parametrize(
    ("configs", "gates", "expected"),
    [
        pytest.param(["a/x.yaml", "b/y.yaml"], [], [("x.yaml", "a/x.yaml", "")] + [("y.yaml", "b/y.yaml", "")],
                     id="two configs"),
        pytest.param(["x.yaml"], ["G=true", "G=false"], [("x.yaml [G=true]", "x.yaml", "G=true"),
                                                         ("x.yaml [G=false]", "x.yaml", "G=false")],
                     id="one config shared, gates per variant"),
        pytest.param(["x.yaml", "y.yaml"], ["G=false"], [("x.yaml", "x.yaml", "G=false"), ("y.yaml", "y.yaml", "G=false")],
                     id="gates shared"),
        pytest.param(["a/x.yaml", "b/x.yaml"], [], [("x.yaml", "a/x.yaml", ""), ("x.yaml #2", "b/x.yaml", "")],
                     id="same file name twice"),
    ],
)
def test_variants(configs: list[str], gates: list[str], expected: list[tuple[str, str, str]]) -> None:
    assert [(v.label, v.config, v.feature_gates) for v in variants(configs, gates)] == expected


def test_compare_html_overlays_the_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "compare.html"
    assert main(["compare", PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--html", str(out)]) == 0
    capsys.readouterr()
    page = out.read_text()
    assert page.count('class="kubesched-chart"') >= 2  # per-node cpu and memory, fullest first
    assert page.count('"name":"default"') >= 2 and page.count('"name":"most-allocated-config.yaml"') >= 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param([PACKING, "--config", "default", "--config", "missing.yaml"],
                     "missing.yaml: cannot read: No such file", id="a missing config"),
        pytest.param([PACKING, "--config", MOST_ALLOCATED], "--config: compare needs at least two variants",
                     id="one variant"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--config", MOST_ALLOCATED,
                      "--feature-gates", "A=true", "--feature-gates", "A=false"],
                     "--feature-gates: 3 --config and 2 --feature-gates", id="configs and gates do not pair"),
        pytest.param([PACKING, "--feature-gates", "Nope=true", "--feature-gates", "Nope=false"],
                     "unrecognized feature gate", id="an unknown gate"),
        pytest.param(["nowhere.yaml", "--config", "default", "--config", MOST_ALLOCATED],
                     "nowhere.yaml: cannot read: No such file", id="a missing scenario"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--until=-1s"],
                     "--until: Invalid value", id="a negative --until"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "3-1"],
                     '--seeds: Invalid value: "3-1": the range runs backwards', id="a backwards range"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "1,x"],
                     '--seeds: Invalid value: "1,x": seeds are N, A-B or a comma-separated list of them',
                     id="not a seed"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "1-3,2"],
                     '--seeds: Invalid value: "1-3,2": a seed is given twice', id="a seed twice"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--seeds", "0-100000"],
                     '--seeds: Invalid value: "0-100000": at most 10000 seeds', id="too many seeds"),
        pytest.param([PACKING, "--config", "default", "--config", MOST_ALLOCATED, "--dask"],
                     "--dask: runs on Dask only with --seeds", id="dask without seeds"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", *argv]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1 and out.err.startswith("kubesched: error: ")
    assert message in out.err


def test_variants_need_two() -> None:
    with pytest.raises(ConfigError, match="at least two variants"):
        variants([], [])


# --- progress --------------------------------------------------------------------------------


def test_progress_draws_virtual_time_and_pods_on_a_terminal() -> None:
    stream = io.StringIO()
    with Progress("simulate", total_time=3600, total_pods=12, stream=stream, enabled=True, width=160) as p:
        p(90.0, 7)
    text = stream.getvalue()
    assert "simulate" in text and "virtual time 0:01:30 / 1:00:00" in text and "7 pods scheduled / 12" in text


def test_progress_is_silent_when_stderr_is_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBESCHED_PROGRESS_EVERY", "10")
    stream = io.StringIO()
    with Progress("simulate", total_time=10, stream=stream) as p:  # a run shorter than 10 s
        p(5.0, 1)
    assert not p.enabled and p.active and stream.getvalue() == ""


def test_without_a_terminal_a_long_run_writes_a_plain_line_every_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBESCHED_PROGRESS_EVERY", "0.01")
    stream = io.StringIO()
    with Progress("simulate", total_time=3600, total_pods=12, stream=stream) as p:
        p(90.0, 7)
        waited = threading.Event()
        for _ in range(1000):  # until the ticker has written twice, at most 10 s
            if stream.getvalue().count("\n") >= 2:
                break
            waited.wait(0.01)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2
    assert set(lines) == {"kubesched simulate: virtual time 0:01:30 / 1:00:00, 7 pods scheduled / 12"}


def test_the_plain_line_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBESCHED_PROGRESS_EVERY", "0")
    with Progress("simulate", stream=io.StringIO()) as p:
        assert not p.active


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(["simulate", PACKING], ["simulate", "pods scheduled / 12"], id="simulate"),
        pytest.param(["compare", PACKING, "--config", "default", "--config", MOST_ALLOCATED],
                     ["compare: default", "compare: most-allocated-config.yaml", "pods scheduled / 12"], id="compare"),
        pytest.param(["bench", "basic", "--nodes", "20", "--pods", "40", "--init-pods", "0"],
                     ["bench basic", "elapsed", "pods scheduled / 40"], id="bench"),
    ],
)
def test_long_runs_show_progress_on_a_terminal_stderr_only(argv: list[str], expected: list[str]) -> None:
    """Run the command with its stderr on a pseudo-terminal: the line is there; stdout is clean."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm"}
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", *argv],
        stdout=subprocess.PIPE, stderr=slave, env=env, timeout=120, check=False,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.returncode == 0
    err = b"".join(chunks).decode(errors="replace")
    for text in expected:
        assert text in err
    assert b"\x1b" not in proc.stdout  # no control characters in the output itself
