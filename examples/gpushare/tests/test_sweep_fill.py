"""``kubesched sweep`` over policies x a trace's fill x seeds (issue 37 item 4): an ``openb``
scenario runs the fill in each cell, on Dask, resumable as every sweep."""

from __future__ import annotations

import csv
import io
import json
import logging
import shutil
from pathlib import Path

import pytest

from kubesched import cli
from kubesched.experiments import load_sweep, run_sweep

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
pytestmark = pytest.mark.xdist_group("gpushare-sweep")


def test_sweep_of_policies_over_a_fill(trace: tuple[str, str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from distributed import Client, LocalCluster

    shutil.copy(trace[0], tmp_path / "nodes.csv")
    shutil.copy(trace[1], tmp_path / "pods.csv")
    for p in ("random", "fgd"):
        shutil.copy(CONFIGS / f"{p}.yaml", tmp_path / f"{p}.yaml")
    (tmp_path / "sweep.yaml").write_text(
        "scenarios:\n- {name: small, openb: {nodes: nodes.csv, pods: pods.csv, fill: 1.3}}\n"
        "variants:\n- {name: random, config: random.yaml}\n- {name: fgd, config: fgd.yaml}\n"
        "seeds: [1, 2]\n")
    sweep = load_sweep(str(tmp_path / "sweep.yaml"))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        report = run_sweep(sweep, tmp_path / "out", client)
        assert (report.cells, report.ran, report.failed) == (4, 4, 0), report.errors
        again = run_sweep(load_sweep(str(tmp_path / "sweep.yaml")), tmp_path / "out", client)
        assert (again.ran, again.skipped) == (0, 4)  # resumed: every cell already done
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "results.csv").read_text())))
    assert [(r["variant"], r["seed"], r["status"]) for r in rows] == [
        ("random", "1", "ok"), ("random", "2", "ok"), ("fgd", "1", "ok"), ("fgd", "2", "ok")]
    # each cell is the fill the trace command runs
    for r in rows:
        assert cli.main(["trace", "openb", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"), "--fill", "1.3",
                         "--seed", r["seed"], "--config", str(tmp_path / f"{r['variant']}.yaml"),
                         "--output", "json"]) == 0
        fill = json.loads(capsys.readouterr().out)["fill"]
        for pct in (30, 60, 80, 90, 100, 110, 120, 130):
            assert float(r[f"allocation{pct}"]) == fill["allocation"][pct]
        assert float(r["fragRatio130"]) == fill["fragRatio"][130]
        assert int(r["placed"]) == fill["placed"]
    page = (tmp_path / "out" / "sweep.html").read_text()
    assert "GPU allocation at 130 % arrived (%)" in page and "fgd − random" in page
