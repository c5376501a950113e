"""What the pages say, read from their HTML (no browser: test_report.py and test_sweep_verdicts.py
open the pages in chromium): numbers with the precision that tells them apart, n/a for what is
missing, identical variants said once, the end state hidden for runs that drained, a pointer to
``--seeds`` on a page of one seed (issue 38 item 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kubesched.experiments import render_sweep_page
from kubesched.reporting import render

FIXTURE = Path(__file__).parent / "fixtures" / "lifecycle-result.json"
COLUMNS = ["scenario", "variant", "seed", "status", "nodesUsedMean", "jobCompletionP99"]
BLANK = re.compile(r"<td[^>]*>\s*(&nbsp;)?\s*</td>")


def rows(values: dict[str, list[float]], scenario: str = "s", **extra: list[str]) -> list[dict[str, str]]:
    """A sweep's rows: ``{variant: [nodesUsedMean per seed]}``; ``extra`` columns likewise."""
    out = []
    for v, ns in values.items():
        for seed, n in enumerate(ns, 1):
            row = {"scenario": scenario, "variant": v, "seed": str(seed), "status": "ok", "nodesUsedMean": repr(n)}
            for col, texts in extra.items():
                row[col] = texts[seed - 1] if v == next(iter(values)) else ""
            out.append(row)
    return out


def result() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


# --- precision --------------------------------------------------------------------------------


def test_a_value_and_its_baseline_that_differ_print_differently() -> None:
    """The issue's case: the baseline 11.6 on every seed beside a variant of 11.4 [10.9, 11.9] read
    ``12`` and ``11 [11, 12]``; one row, one precision: ``11.6`` and ``11.4 [10.9, 11.9]``."""
    page = render_sweep_page("t", COLUMNS[:5], rows({"base": [11.6, 11.6, 11.6], "other": [11.2, 11.4, 11.6]}))
    [row] = re.findall(r"<tr><td>mean nodes used.*?</tr>", page.split('id="verdicts-1"')[1].split("</table>")[0])
    values = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert values == ["11.6", "11.4 [10.9, 11.9]"]


def test_the_text_table_uses_the_rows_precision_too() -> None:
    from kubesched.experiments import grid, text_table

    [sv] = grid(COLUMNS[:5], rows({"base": [11.6, 11.6, 11.6], "other": [11.2, 11.4, 11.6]}))
    line = text_table(sv, means=True).splitlines()[3]
    assert "11.6" in line and "11.4 [10.9, 11.9]" in line and " 12 " not in line


def test_one_seeds_values_that_differ_print_differently(tmp_path: Path) -> None:
    """Side by side (one seed): 45.03% and 45.04% CPU allocation are not both ``45.0%``, and their
    difference is not ``0 pp``."""
    from kubesched.reporting._pages import _diff_texts, _row_texts

    assert _row_texts("allocationMean.cpu", [0.4503, 0.4504]) == ["45.03%", "45.04%"]
    assert _diff_texts("allocationMean.cpu", [0.4503, 0.4504], [0.4504 - 0.4503]) == ["+0.01 pp"]
    assert _row_texts("allocationMean.cpu", [0.45, 0.46]) == ["45.0%", "46.0%"]  # the metric's own
    assert _diff_texts("allocationMean.cpu", [0.45, 0.45], [0.0]) == ["0 pp"]
    assert _row_texts("nodesUsedMean", [2.004, 2.001, None]) == ["2.004", "2.001", "n/a"]
    assert _row_texts("latencyP99", [1.0000001, 1.0]) == ["1.0000001s", "1.0000000s"]


# --- n/a --------------------------------------------------------------------------------------


def test_no_blank_cell_in_a_report() -> None:
    page = render(["r.json"], [result()])
    assert BLANK.search(page) is None
    pods = page.split('id="pods"')[1].split("</table>")[0]
    assert "<td>n/a</td>" in pods  # the pending pod's node, a running pod's reason to be pending


def test_no_blank_cell_in_a_comparison() -> None:
    other = result()
    del other["workloads"]  # no Jobs section: its metrics are n/a, and so is their difference
    page = render(["a.json", "b.json"], [result(), other])
    assert BLANK.search(page) is None
    table = page.split('id="side-by-side"')[1].split("</table>")[0]
    assert '<td class="num">n/a</td>' in table


def test_no_blank_cell_in_a_sweep_page() -> None:
    """A metric only one scenario has (p99 Job completion) is n/a for the other, in the verdict table."""
    page = render_sweep_page("t", COLUMNS, [
        *rows({"base": [3.0, 4.0], "other": [2.0, 2.5]}, "jobs", jobCompletionP99=["10", "12"]),
        *rows({"base": [3.0, 4.0], "other": [2.0, 2.5]}, "no-jobs"),
    ])
    assert BLANK.search(page) is None
    verdicts = page.split('id="verdicts"')[1].split("</table>")[0]
    assert verdicts.count(">n/a<") == 1
    assert "n/a" in page.split('id="verdicts-1"')[1].split("</table>")[0]  # other's Job completion


# --- the end state of a run that drained ------------------------------------------------------


def drained(later: float = 0.0) -> dict[str, Any]:
    """The fixture with every node empty at the end; ``later``: every binding that much later (another run)."""
    r = result()
    for node in r["nodes"]:
        node["allocated"] = {k: 0 for k in node["allocated"]}
    for p in r["pods"]:
        if p["scheduledAt"] is not None:
            p["scheduledAt"] += later
    return r


def end_state(page: str) -> str:
    return page.split("<h2>Allocation per node at the end of the run</h2>")[1].split("<h2>")[0]


def test_a_run_that_drained_draws_no_end_state() -> None:
    page = end_state(render(["r.json"], [drained()]))
    assert 'class="kubesched-chart"' not in page and "the run drained" in page
    assert 'class="kubesched-chart"' in end_state(render(["r.json"], [result()]))  # one that did not: drawn


def test_a_comparison_draws_the_end_state_of_the_runs_that_did_not_drain() -> None:
    both = end_state(render(["a.json", "b.json"], [drained(), drained(later=5.0)]))
    assert 'class="kubesched-chart"' not in both and "the runs drained" in both
    one = end_state(render(["a.json", "b.json"], [drained(), result()]))
    assert one.count('class="kubesched-chart"') == 2  # cpu and memory, for b.json alone
    assert "every node is empty at the end of a.json (drained)" in one
    assert '"name":"b.json"' in one and '"name":"a.json"' not in one


# --- one seed: how to get intervals -----------------------------------------------------------


def test_a_comparison_of_one_seed_points_to_seeds() -> None:
    page = render(["a.json", "b.json"], [result(), drained()])
    assert "One run per variant, on one seed" in page and "--seeds 1-10" in page


def test_a_sweep_page_of_one_seed_says_how_to_get_intervals() -> None:
    one = render_sweep_page("t", COLUMNS[:5], rows({"base": [3.0], "other": [2.0]}))
    assert 'id="one-seed"' in one and "seeds: [1, 2, 3, 4, 5]" in one
    flag = render_sweep_page("t", COLUMNS[:5], rows({"base": [3.0], "other": [2.0]}),
                             more_seeds="give compare more seeds (--seeds 1-10)")
    assert "give compare more seeds (--seeds 1-10)" in flag
    many = render_sweep_page("t", COLUMNS[:5], rows({"base": [3.0, 4.0], "other": [2.0, 2.5]}))
    assert 'id="one-seed"' not in many and "--seeds" not in many


def test_compare_seeds_of_one_seed_points_to_its_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kubesched.cli import main

    scenarios = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
    out = tmp_path / "one.html"
    assert main(["compare", str(scenarios / "packing.yaml"), "--config", "default", "--config",
                 str(scenarios / "most-allocated-config.yaml"), "--seeds", "1", "--html", str(out)]) == 0
    capsys.readouterr()
    assert "give compare more seeds (--seeds 1-10)" in out.read_text()


# --- identical variants -----------------------------------------------------------------------


def test_a_scenario_where_every_variant_is_the_same_is_one_line() -> None:
    page = render_sweep_page("t", COLUMNS[:5], [
        *rows({"base": [3.0, 4.0], "other": [2.0, 2.5], "third": [3.0, 4.0]}, "differs"),
        *rows({"base": [3.0, 4.0], "other": [3.0, 4.0], "third": [3.0, 4.0]}, "same"),
    ])
    verdicts = page.split('id="verdicts"')[1].split("</table>")[0]
    assert verdicts.count("<tr>") == 1 + 2 + 1  # the header, differs: two rows, same: one
    assert ('<td>same</td><td>every variant</td><td class="same identical" colspan="1">identical: all 3 variants '
            "gave the same results on every seed (2 seeds), every metric</td>") in verdicts
    same = page.split('data-scenario="same">')[1].split("</section>")[0]
    assert 'id="identical-2">Identical: all 3 variants gave the same results on every seed' in same
    assert 'class="kubesched-chart"' not in same and "3.5 [\u22122.9, 9.9]" in same  # the values, folded
    differs = page.split('data-scenario="differs">')[1].split("</section>")[0]
    assert "third gave the same results as base on every seed, every metric" in differs
    assert differs.count('class="kubesched-chart"') == 2


def test_a_metric_the_same_for_every_variant_is_named_not_drawn() -> None:
    page = render_sweep_page("t", COLUMNS[:5] + ["victims"], [
        {**r, "victims": "2"} for r in rows({"base": [3.0, 4.0], "other": [2.0, 2.5]})])
    section = page.split('data-scenario="s">')[1].split("</section>")[0]
    assert "the same for every variant on every seed, so not drawn: preemption victims" in section
    for chart in section.split('class="kubesched-figure"')[1:]:
        assert "mean nodes used" in chart and "preemption victims" not in chart


def test_a_comparison_of_identical_runs_shows_the_run_once() -> None:
    page = render(["a.json", "b.json", "c.json"], [result(), result(), result()])
    assert ('<p class="identical" id="identical">Identical: all 3 variants (a.json, b.json, c.json) gave the same '
            "results, every metric and every curve; the run is shown once.</p>") in page
    assert 'id="side-by-side"' not in page and "identical: a.json = b.json" not in page
    one = render(["a.json"], [result()])
    assert page.count('class="kubesched-chart"') == one.count('class="kubesched-chart"') == 10
    assert 'id="identical"' not in render(["a.json", "b.json"], [result(), drained()])


def test_a_name_in_a_chart_cannot_close_its_script() -> None:
    """A figure is JSON inside a <script>: a name with ``</script>`` in it stays inside."""
    r = result()
    r["nodes"][0]["name"] = "n1</script><script>alert(1)</script>"
    page = render(["r.json"], [r])
    assert "</script><script>alert(1)" not in page
    assert '"n1\\u003c' in page  # the heatmap's row, in its JSON, with < escaped
