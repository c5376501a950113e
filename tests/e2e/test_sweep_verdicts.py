"""A sweep that decides: two variants that truly differ, on known seeds, judged against a hand
computation; and the sweep page in a real browser (Debian's headless chromium, as the report's
tests): a section per scenario with its own axes, the verdict table, every axis labelled.

The sweep runs once, in this process (a Dask LocalCluster of one thread: the cells are the same
simulations a process worker runs), over a small generated scenario: six 4-CPU nodes, about eight
pods of 1 or 2.5 CPUs arriving over ten minutes, each running an hour.  The default profile
(LeastAllocated) spreads them over all six nodes on every seed; MostAllocated packs them onto 3 or
4, depending on the seed's workload.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.experiments import load_sweep, run_sweep, summary_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# the module's sweep runs once: every test here runs on one xdist worker
pytestmark = pytest.mark.xdist_group("sweep-verdicts")
SPEC = {"nodes": 6, "nodeCpu": "4", "nodeMemory": "16Gi", "pods": 8, "span": "10m", "duration": "1h",
        "shapes": [{"cpu": "1", "memory": "1Gi", "share": 2}, {"cpu": "2500m", "memory": "1Gi"}]}
SWEEP = f"""\
scenarios:
- {{name: small, generate: {json.dumps(SPEC)}}}
variants:
- {{name: default}}
- {{name: packed, config: packed.yaml}}
seeds: [1, 2, 3, 4, 5]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from distributed import Client, LocalCluster

    d = tmp_path_factory.mktemp("verdicts")
    (d / "packed.yaml").write_text((EXAMPLES / "scenarios" / "most-allocated-config.yaml").read_text())
    (d / "sweep.yaml").write_text(SWEEP)
    # the scheduler's HTTP server on a free port: 8787 may be another cluster's (a warning, an error here)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0",
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:
        report = run_sweep(load_sweep(str(d / "sweep.yaml")), d / "out", client)
    assert report.failed == 0, report.errors
    yield d / "out"


def table(out: Path) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO((out / "results.csv").read_text()))
    return list(reader.fieldnames or []), list(reader)


def sv_metrics(out: Path) -> list[str]:
    from kubesched.experiments import grid

    return grid(*table(out))[0].metrics


def test_the_verdict_and_its_interval_match_a_hand_computation(swept: Path) -> None:
    columns, rows = table(swept)
    peak = {(r["variant"], r["seed"]): float(r["nodesUsedPeak"]) for r in rows}
    # the known seeds: default uses all six nodes on each; packed uses 3, 4, 3, 4, 3
    assert [peak["default", s] for s in "12345"] == [6, 6, 6, 6, 6]
    assert [peak["packed", s] for s in "12345"] == [3, 4, 3, 4, 3]
    # by hand: d = -3, -2, -3, -2, -3; mean -2.6; s^2 = (3 * 0.4^2 + 2 * 0.6^2) / 4 = 0.3;
    # t(0.975, 4) = 2.776 (the t table); half-width 2.776 * sqrt(0.3) / sqrt(5) = 0.680
    half = 2.776 * math.sqrt(0.3) / math.sqrt(5)
    assert round(-2.6 - half, 1) == -3.3 and round(-2.6 + half, 1) == -1.9
    verdict = "packed: \u22122.6 peak nodes used [\u22123.3, \u22121.9], better in 5/5 seeds"

    from kubesched.experiments import grid

    [sv] = grid(columns, rows)
    v = sv.verdict("nodesUsedPeak", "packed")
    assert v is not None and v.text == verdict
    assert v.difference.interval.low == pytest.approx(-2.6 - half, abs=1e-3)
    assert v.difference.interval.high == pytest.approx(-2.6 + half, abs=1e-3)
    # the same pods on both sides: no difference, by construction
    assert sv.verdict("pods", "packed").text == "packed: 0 pods [0, 0], no difference"  # type: ignore[union-attr]
    # the time-weighted mean agrees in direction, seed by seed
    mean = {(r["variant"], r["seed"]): float(r["nodesUsedMean"]) for r in rows}
    assert all(mean["packed", s] < mean["default", s] for s in "12345")
    assert sv.verdict("nodesUsedMean", "packed").tail == "better in 5/5 seeds"  # type: ignore[union-attr]

    # the terminal table (sweep --summary) and the page say the same
    summary = summary_text(columns, rows)
    line = next(x for x in summary.splitlines() if x.startswith("peak nodes used"))
    assert line.split("  ")[-1].strip() == "\u22122.6 [\u22123.3, \u22121.9], better in 5/5 seeds"
    assert f'title="{verdict}"' in (swept / "sweep.html").read_text()


def test_results_keep_one_row_per_cell_with_the_promised_columns(swept: Path) -> None:
    columns, rows = table(swept)
    assert [(r["variant"], r["seed"]) for r in rows] == [(v, str(s)) for v in ("default", "packed") for s in range(1, 6)]
    for c in ("scheduledFraction", "attemptsPerPod", "failedScheduling", "preempted", "nodesUsedPeak", "nodesUsedMean"):
        assert c in columns and all(r[c] != "" for r in rows), c
    assert all(r["nodesUsed"] == "0" for r in rows)  # the run drains: empty at the end, not over the run


def test_the_sweep_page_in_a_browser(swept: Path, tmp_path: Path) -> None:
    from test_report import assert_drawn, charts, open_in_chromium

    assert (swept / "sweep.html").stat().st_size < 1_500_000  # plotly.js once, gzipped (was 4.9 MB)
    loaded = open_in_chromium(swept / "sweep.html", tmp_path, "sweep")
    # one section for the scenario: its differences and its values per seed
    assert_drawn(loaded, 2)
    sections = re.findall(r'<section class="scenario" id="scenario-\d+" data-scenario="([^"]+)">', loaded.dom)
    assert sections == ["small"]
    # the verdict table: one row per variant other than the baseline, one column per headline metric
    verdicts = loaded.dom.split('id="verdicts"')[1].split("</table>")[0]
    assert verdicts.count("<tr>") == 2  # the header, packed − default
    assert "packed \u2212 default" in verdicts and "lower is better" in verdicts and "higher is better" in verdicts
    assert re.search(r'<td class="better" title="packed: \u22122\.6 peak nodes used[^"]*">', verdicts)
    assert '<td class="same" title="packed: 0 scheduled fraction (%) [0, 0], no difference">' in verdicts
    # the scenario's table: the headline metrics, and every metric folded under it, by human name
    scenario = loaded.dom.split('id="verdicts-1"')[1].split("</table>")[0]
    assert "peak nodes used" in scenario and "nodesUsedPeak" not in scenario
    every = loaded.dom.split('id="all-verdicts-1"')[1].split("</table>")[0]
    assert every.count("<tr>") == 1 + len(sv_metrics(swept)) and "FailedScheduling events" in every
    # every axis of every panel is labelled, by name and unit
    for chunk in charts(loaded.dom):
        svg = chunk.split("<script")[0]  # the drawn svg, not the figure data
        xs = re.findall(r'class="x\d*title"[^>]*>([^<]+)<', svg)
        ys = re.findall(r'class="y\d*title"[^>]*>([^<]+)<', svg)
        panels = len(re.findall(r'class="subplot x\d*y\d*"', svg))
        assert len(xs) == len(ys) == panels > 1, (xs, ys)
        assert not [t for t in xs + ys if re.search(r"[a-z][A-Z]", t)], "a data key as an axis title"
    first, second = charts(loaded.dom)
    assert "\u0394 peak nodes used" in first and "\u0394 mean nodes used" in first
    assert "peak nodes used" in second and "mean nodes used" in second
    # a metric the same for both variants on every seed (every pod bound at once: p99 latency 0 on
    # both; every pod scheduled) is named in a line, not drawn as a flat panel (issue 38 item 9)
    flat = re.search(r'<p class="note">the same for every variant on every seed, so not drawn: ([^<]*)</p>', loaded.dom)
    assert flat is not None and "p99 latency (s)" in flat[1] and "scheduled fraction (%)" in flat[1]
    assert "\u0394 p99 latency (s)" not in first and "scheduled fraction (%)" not in second.split("<script")[0]


@pytest.mark.parametrize("width", [900])
def test_sweep_page_headers_wrap_between_words(swept: Path, tmp_path: Path, width: int) -> None:
    """No header word is broken over two lines ("preemptio n"), at any window width: a column is
    at least as wide as its longest word (issue 38 item 9)."""
    from test_report import split_header_words

    headers, split = split_header_words(swept / "sweep.html", tmp_path, f"sweep-{width}", width)
    assert headers > 15 and split == []
