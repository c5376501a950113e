"""``kubesched compare`` and the progress line of long runs, end to end through the command line."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched._errors import ConfigError
from kubesched.cli import main
from kubesched.cli.compare import variants
from kubesched.cli.metrics import compute
from kubesched.cli.progress import Progress

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
    assert lines[0].split() == ["metric", "default", "most-allocated-config.yaml"]
    nodes_used = next(line for line in lines if line.startswith("nodes used"))
    assert nodes_used.split()[2:] == ["6", "3"]


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


def test_progress_is_silent_when_stderr_is_no_terminal() -> None:
    stream = io.StringIO()
    with Progress("simulate", total_time=10, stream=stream) as p:
        p(5.0, 1)
    assert not p.enabled and stream.getvalue() == ""


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
