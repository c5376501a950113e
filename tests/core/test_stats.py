"""Verdicts by hand: the Student t quantile against the printed table, a paired interval computed on
paper, the verdict sentences, every metric's better direction, the time axis, and nodes used over
a run that drains."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from kubesched.experiments import (
    Verdict,
    grid,
    interval,
    mean_text,
    paired,
    t_cdf,
    t_quantile,
    text_table,
)
from kubesched.reporting import clock, compute, identical, measure, time_ticks


@pytest.mark.parametrize(
    ("df", "t"),
    [  # two-sided 95%: the t table of any statistics textbook, three decimals
        pytest.param(1, 12.706, id="df 1"),
        pytest.param(2, 4.303, id="df 2"),
        pytest.param(4, 2.776, id="df 4"),
        pytest.param(9, 2.262, id="df 9"),
        pytest.param(29, 2.045, id="df 29"),
        pytest.param(120, 1.980, id="df 120"),
        pytest.param(1e9, 1.960, id="normal limit"),
    ],
)
def test_t_quantile_matches_the_printed_table(df: float, t: float) -> None:
    assert round(t_quantile(0.975, df), 3) == t
    assert t_quantile(0.025, df) == -t_quantile(0.975, df)
    assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-9)


def test_t_cdf_closed_forms() -> None:
    # df 1 is the Cauchy distribution; df 2 has F(t) = 1/2 + t / (2 sqrt(2 + t^2))
    for t in (-3.0, -0.5, 0.0, 0.7, 5.0):
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)
        assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)


def test_a_paired_interval_by_hand() -> None:
    # five seeds; the variant uses 3, 4, 3, 4, 3 nodes where the baseline uses 6 on every seed:
    # d = -3, -2, -3, -2, -3; mean -2.6; s^2 = (3 * 0.4^2 + 2 * 0.6^2) / 4 = 0.3;
    # half-width t(0.975, 4) * s / sqrt(5) = 2.776 * 0.5477 / 2.2361 = 0.680
    d = paired({1: 6, 2: 6, 3: 6, 4: 6, 5: 6}, {1: 3, 2: 4, 3: 3, 4: 4, 5: 3})
    assert d is not None
    assert d.n == 5 and (d.higher, d.lower) == (0, 5)
    assert d.interval.mean == pytest.approx(-2.6)
    assert d.interval.low == pytest.approx(-2.6 - 2.776 * math.sqrt(0.3) / math.sqrt(5), abs=1e-3)
    assert d.interval.high == pytest.approx(-2.6 + 2.776 * math.sqrt(0.3) / math.sqrt(5), abs=1e-3)
    v = Verdict("packed", "peak nodes used", "lower", d)
    assert v.text == "packed: \u22122.6 peak nodes used [\u22123.3, \u22121.9], better in 5/5 seeds"
    assert v.short == "\u22122.6 [\u22123.3, \u22121.9], better in 5/5 seeds"
    assert v.outcome == "better"


def test_pairing_uses_the_seeds_both_sides_have() -> None:
    d = paired({1: 10.0, 2: 12.0, 3: 11.0}, {2: 13.0, 3: 12.5, 4: 0.0})
    assert d is not None and d.seeds == (2, 3) and d.interval.mean == pytest.approx(1.25)
    assert paired({1: 1.0}, {2: 1.0}) is None


@pytest.mark.parametrize(
    ("base", "variant", "better", "text"),
    [
        pytest.param([10, 10, 10], [10, 10, 10], "lower", "v: 0 nodes [0, 0], no difference", id="identical"),
        # d = 0.5, -0.2, 0.6: mean 0.3, s^2 = 0.38 / 2, half-width 4.303 * 0.4359 / sqrt(3) = 1.083
        pytest.param([10, 11, 12], [10.5, 10.8, 12.6], "lower",
                     "v: +0.3 nodes [\u22120.8, 1.4], no difference", id="interval spans zero"),
        # d = 1, 1, 1, 1.5: mean 1.125, s = 0.25, half-width 3.182 * 0.25 / 2 = 0.398
        pytest.param([1, 2, 3, 4], [2, 3, 4, 5.5], "lower", "v: +1.1 nodes [0.7, 1.5], worse in 4/4 seeds",
                     id="worse"),
        pytest.param([1, 2, 3, 4], [2, 3, 4, 5.5], None, "v: +1.1 nodes [0.7, 1.5], higher in 4/4 seeds",
                     id="no better direction"),
        pytest.param([1, 2, 3, 4], [2, 3, 4, 5.5], "higher", "v: +1.1 nodes [0.7, 1.5], better in 4/4 seeds",
                     id="higher is better"),
        pytest.param([5], [3], "lower", "v: \u22122 nodes, 1 seed: no interval", id="one seed"),
    ],
)
def test_verdict_sentences(base: list[float], variant: list[float], better: str | None, text: str) -> None:
    d = paired(dict(enumerate(base)), dict(enumerate(variant)))
    assert d is not None
    assert Verdict("v", "nodes", better, d).text == text


def test_better_in_counts_only_the_seeds_that_went_that_way() -> None:
    # 9 of 10 seeds lower, one equal: the interval is clear of 0, "better in 9/10 seeds"
    base = dict.fromkeys(range(10), 10.0)
    variant = {i: 10.0 if i == 0 else 8.0 + 0.1 * i for i in range(10)}
    d = paired(base, variant)
    assert d is not None
    assert Verdict("v", "x", "lower", d).tail == "better in 9/10 seeds"


def test_fractions_are_shown_in_percent() -> None:
    # d = 0.10, 0.09, 0.11: mean 10 points, s = 1 point, half-width 4.303 * 1 / sqrt(3) = 2.48 points
    d = paired({1: 0.50, 2: 0.52, 3: 0.51}, {1: 0.60, 2: 0.61, 3: 0.62})
    assert d is not None
    m = measure("allocationMean.cpu")
    assert m.name == "mean CPU allocation (%)" and m.scale == 100
    assert Verdict("v", m.name, m.better, d, m.scale).text == (
        "v: +10 mean CPU allocation (%) [8, 12], better in 3/3 seeds")
    assert mean_text(interval([0.5, 0.5]), 100) == "50"


def test_every_metric_has_a_human_name_and_a_stated_direction() -> None:
    from kubesched.experiments import cell_metrics

    row = cell_metrics({"pods": [], "events": [], "summary": {"pods": 1, "scheduled": 1, "attempts": 1},
                        "timeline": [{"time": 0, "pending": 0, "running": 0, "allocated": {"cpu": 0},
                                      "capacity": {"cpu": 1}}], "nodes": [], "workloads": []})
    for key in row:
        m = measure(key)
        assert re.search(r"[a-z][A-Z]", m.name.replace("FailedScheduling", "")) is None, (key, m.name)
        assert m.direction in ("lower is better", "higher is better", "no better direction")
    assert measure("nodesUsedMean").better == "lower"  # packing's goal: the same work on fewer nodes
    assert measure("latencyP99").better == "lower"
    assert measure("scheduledFraction").better == "higher"
    assert measure("nodeBalance.cpu").better is None  # spreading wants it low, packing high


def test_the_text_table_of_one_scenario() -> None:
    cols = ["scenario", "variant", "seed", "status", "nodesUsedPeak"]
    rows = [{"scenario": "s", "variant": v, "seed": str(seed), "status": "ok", "nodesUsedPeak": str(n)}
            for v, ns in (("default", [6, 6, 6, 6, 6]), ("packed", [3, 4, 3, 4, 3])) for seed, n in enumerate(ns, 1)]
    [sv] = grid(cols, rows)
    assert sv.baseline == "default" and sv.others == ["packed"]
    lines = text_table(sv, means=True).splitlines()
    assert lines[0] == ("s: 2 variants \u00d7 5 seeds; each variant minus default, paired by seed: "
                        "mean [95% interval]")
    assert lines[1].split("  ")[0] == "metric"
    assert lines[3].split() == ["peak", "nodes", "used", "lower", "6", "3.4", "[2.7,", "4.1]",
                                "\u22122.6", "[\u22123.3,", "\u22121.9],", "better", "in", "5/5", "seeds"]
    [named] = grid(cols, rows, baseline="packed")
    assert named.verdict("nodesUsedPeak", "default").text == (  # type: ignore[union-attr]
        "default: +2.6 peak nodes used [1.9, 3.3], worse in 5/5 seeds")


# --- the time axis and identical curves -------------------------------------------------------


def test_virtual_time_reads_as_a_clock() -> None:
    assert clock(0) == "0:00" and clock(5400) == "1:30" and clock(90061, seconds=True) == "1d 1:01:01"
    assert time_ticks(7200) == ([0.0, 1800.0, 3600.0, 5400.0, 7200.0], ["0:00", "0:30", "1:00", "1:30", "2:00"])
    assert time_ticks(110)[1] == ["0:00:00", "0:00:30", "0:01:00", "0:01:30"]
    assert time_ticks(3 * 86400)[1][2] == "1d 0:00"


def test_identical_curves_are_found() -> None:
    a = ("a", [0, 1], [1, 2])
    assert identical([a, ("b", [0, 1], [1, 2]), ("c", [0, 1], [1, 3])]) == [["a", "b"]]
    assert identical([a, ("c", [0, 1], [1, 3])]) == []


# --- nodes used over a run that drains ---------------------------------------------------------


def _pod(name: str, node: str, start: float, stop: float | None, **kw: Any) -> dict[str, Any]:
    return {"namespace": "default", "name": name, "uid": name, "nodeName": node, "phase": "Succeeded",
            "deleted": False, "createdAt": start, "scheduledAt": start, "finishedAt": stop, **kw}


def test_nodes_used_over_a_run_that_drains() -> None:
    # n1 holds a from 0 to 100 and b from 50 to 150; n2 holds c from 20 to 60; the victim v is on n3
    # from 0 until its Preempted event at 30; at 200 (the end) every node is empty.
    # nodes used: [0,20) 2 (n1, n3), [20,30) 3, [30,60) 2, [60,150) 1, [150,200) 0
    # mean = (2*20 + 3*10 + 2*30 + 1*90) / 200 = 220 / 200 = 1.1; peak 3; at the end 0
    result = {
        "pods": [_pod("a", "n1", 0, 100), _pod("b", "n1", 50, 150), _pod("c", "n2", 20, 60),
                 _pod("v", "n3", 0, None, phase="Running", deleted=True)],
        "events": [{"time": 30.0, "type": "Normal", "reason": "Preempted", "object": "default/v",
                    "message": "Preempted by pod x on node n3"}],
        "summary": {"pods": 4, "virtualSeconds": 200.0},
        "nodes": [{"name": n, "capacity": {"pods": 110}, "allocated": {"pods": 0}} for n in ("n1", "n2", "n3")],
    }
    m = compute(result)
    assert (m.nodes_used, m.nodes_used_peak) == (0, 3)
    assert m.nodes_used_mean == pytest.approx(1.1)
    assert m.nodes_used_series == [2, 3, 2, 2, 1, 1, 0]
    assert m.node_pods_peak == {"n1": 2, "n2": 1, "n3": 1}
    assert m.node_pods_mean["n1"] == pytest.approx((100 + 100) / 200)  # a 100 s, b 100 s
    assert m.open_ended == 0
    table = m.table()
    assert (table["nodesUsed"], table["nodesUsedPeak"]) == (0, 3)


@pytest.mark.parametrize(
    ("values", "places"),
    [
        pytest.param((11.6, 11.4, 10.9, 11.9), 1, id="12 vs 11 [11, 12]: one decimal tells them apart"),
        pytest.param((41.0, 39.0, 43.0), 0, id="whole numbers"),
        pytest.param((3.4, 2.7, 4.1, 6.0), 1, id="two significant digits already apart"),
        pytest.param((0.12345, 0.12346), 5, id="apart only at the fifth decimal"),
        pytest.param((1.0, 1.0 + 1e-12), 1, id="a billionth apart is rounding, not a difference"),
    ],
)
def test_decimals_tell_apart_values_that_differ(values: tuple[float, ...], places: int) -> None:
    from kubesched.experiments._stats import decimals, number

    assert decimals(*values) == places
    printed = {number(v, places) for v in values}
    assert len(printed) == len({round(v, 9) for v in values})


def test_an_interval_prints_with_the_decimals_that_separate_its_bounds() -> None:
    # 11.2, 11.4, 11.6: mean 11.4, s = 0.2, half-width 4.303 * 0.2 / sqrt(3) = 0.497
    assert mean_text(interval([11.2, 11.4, 11.6])) == "11.4 [10.9, 11.9]"  # was "11 [11, 12]"
    assert mean_text(interval([11.6, 11.6, 11.6]), 1.0, 1) == "11.6"
    assert mean_text(interval([6, 6, 6]), 1.0, 1) == "6"  # a whole number loses nothing
    assert mean_text(None) == "n/a"
