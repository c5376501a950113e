"""``sweep.html``: the verdicts of a sweep (and of ``compare --seeds --html``), one self-contained page.

The page, top to bottom::

    Verdicts       one row per (scenario, variant other than the baseline), one column per
                   headline metric: the paired difference, its interval, better/worse/no difference
                   (one row saying so for a scenario where every variant gave the same results)
    per scenario   (a section each, its own axes; where every variant gave the same results on
                   every seed, one line saying so and the values folded under it, no charts)
      verdict table  the headline metrics (every metric under "every metric", folded): the
                     baseline's mean [95% interval], each variant's mean and its difference
                     from the baseline, with the verdict
      differences    one panel per headline metric (but those the same for every variant on every
                     seed, named in a line instead): each variant's mean difference and interval,
                     a dotted line at 0 (no difference)
      values         one panel per headline metric: each variant's value per seed (a box and the
                     points), so a 3-pod scenario is not a flat line beside a 1,000-pod one
    failed cells   the one-line error of every cell that did not run

Names and units come from :mod:`kubesched.reporting._measures`, numbers from :mod:`._verdicts` (over :mod:`._stats`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kubesched.experiments._stats import Verdict, mean_text
from kubesched.experiments._verdicts import ScenarioVerdicts, grid
from kubesched.reporting._charts import Page, escape
from kubesched.reporting._measures import HEADLINE, measure

COLORS = {"better": "#2e7d32", "worse": "#c62828"}
GREY = "#777"
COLUMNS = 3  # panels per row


def _verdict_cell(v: Verdict | None) -> str:
    if v is None:
        return '<td class="unknown">no paired seeds</td>'
    return (f'<td class="{v.outcome}" title="{escape(v.text)}">{escape(v.figure)}'
            f"<br><small>{escape(v.tail)}</small></td>")


def _metric_th(key: str) -> str:
    m = measure(key)
    return f"<th>{escape(m.name)}<br><small>{escape(m.direction)}</small></th>"


def _summary_table(svs: Sequence[ScenarioVerdicts]) -> str:
    keys: list[str] = []
    for sv in svs:
        keys += [k for k in sv.headline() if k not in keys]
    keys.sort(key=HEADLINE.index)
    parts = ['<table id="verdicts" class="verdicts"><thead><tr><th class="name">scenario</th><th class="name">variant</th>',
             *(_metric_th(k) for k in keys), "</tr></thead><tbody>"]
    for sv in svs:
        if sv.identical:  # one line, not a row of "0 [0, 0]" per variant
            parts.append(f"<tr><td>{escape(sv.scenario)}</td><td>every variant</td>"
                         f'<td class="same identical" colspan="{len(keys)}">{escape(_identical_text(sv))}</td></tr>')
            continue
        for v in sv.others:
            parts.append(f"<tr><td>{escape(sv.scenario)}</td><td>{escape(v)} \u2212 {escape(sv.baseline)}</td>")
            for k in keys:
                parts.append(_verdict_cell(sv.verdict(k, v)) if k in sv.metrics
                             else '<td class="unknown">n/a<br><small>not measured here</small></td>')
            parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _identical_text(sv: ScenarioVerdicts) -> str:
    n = len(sv.variants)
    return (f"identical: {'both' if n == 2 else f'all {n}'} variants gave the same results on every seed "
            f"({len(sv.seeds)} seed{'' if len(sv.seeds) == 1 else 's'}), every metric")


def _values_table(sv: ScenarioVerdicts, table_id: str) -> str:
    """One column of values for a scenario whose variants all gave the same results."""
    parts = [f'<table class="verdicts scenario-verdicts" id="{table_id}"><thead><tr><th class="name">metric</th>'
             "<th>every variant<br><small>mean [95% interval]</small></th></tr></thead><tbody>"]
    for k in sv.metrics:
        m = measure(k)
        parts.append(f"<tr><td>{escape(m.name)}<br><small>{escape(m.direction)}</small></td>"
                     f'<td class="num">{escape(mean_text(sv.mean(k, sv.baseline), m.scale))}</td></tr>')
    parts.append("</tbody></table>")
    return "".join(parts)


def _scenario_table(sv: ScenarioVerdicts, keys: Sequence[str], table_id: str) -> str:
    parts = [f'<table class="verdicts scenario-verdicts" id="{table_id}"><thead><tr><th class="name">metric</th>'
             f"<th>{escape(sv.baseline)} (baseline)<br><small>mean [95% interval]</small></th>"]
    for v in sv.others:
        parts.append(f"<th>{escape(v)}<br><small>mean [95% interval]</small></th>"
                     f"<th>{escape(v)} \u2212 {escape(sv.baseline)}<br><small>paired by seed</small></th>")
    parts.append("</tr></thead><tbody>")
    for k in keys:
        m = measure(k)
        places = sv.places(k)  # one row, one precision: values that differ print differently
        parts.append(f"<tr><td>{escape(m.name)}<br><small>{escape(m.direction)}</small></td>"
                     f'<td class="num">{escape(mean_text(sv.mean(k, sv.baseline), m.scale, places))}</td>')
        for v in sv.others:
            parts.append(f'<td class="num">{escape(mean_text(sv.mean(k, v), m.scale, places))}</td>')
            parts.append(_verdict_cell(sv.verdict(k, v)))
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _panels(keys: Sequence[str]) -> Any:
    from plotly.subplots import make_subplots

    rows = math.ceil(len(keys) / COLUMNS)
    titles = [f"{measure(k).name}<br><sup>{measure(k).direction}</sup>" for k in keys]
    return make_subplots(rows=rows, cols=min(COLUMNS, len(keys)), subplot_titles=titles,
                         horizontal_spacing=0.12, vertical_spacing=min(0.3, 0.5 / rows) if rows > 1 else 0.1)


def _differences(page: Page, sv: ScenarioVerdicts, keys: Sequence[str]) -> str:
    import plotly.graph_objects as go

    fig = _panels(keys)
    for i, k in enumerate(keys):
        row, col = i // COLUMNS + 1, i % COLUMNS + 1
        m = measure(k)
        lows, highs = [0.0], [0.0]
        for v in sv.others:
            verdict = sv.verdict(k, v)
            if verdict is None:
                continue
            iv = verdict.difference.interval
            mean = iv.mean * m.scale
            lo = iv.low * m.scale if iv.low is not None else mean
            hi = iv.high * m.scale if iv.high is not None else mean
            lows.append(lo)
            highs.append(hi)
            color = COLORS.get(verdict.outcome, GREY)
            fig.add_trace(go.Scatter(
                x=[mean], y=[v], mode="markers", marker={"size": 11, "color": color}, showlegend=False,
                error_x={"type": "data", "symmetric": False, "array": [hi - mean], "arrayminus": [mean - lo],
                         "color": color, "thickness": 2, "width": 6},
                hovertext=[verdict.text], hoverinfo="text", name=v,
            ), row=row, col=col)
        lo, hi = min(lows), max(highs)
        pad = (hi - lo) * 0.15 or 1.0
        fig.add_vline(x=0, line_dash="dot", line_color="#444", row=row, col=col)
        fig.update_xaxes(title_text=f"\u0394 {m.name}", range=[lo - pad, hi + pad], zeroline=False, row=row, col=col)
        fig.update_yaxes(title_text="variant", type="category", categoryorder="array", categoryarray=sv.others,
                         autorange="reversed", row=row, col=col)
    fig.update_layout(title={"text": f"{sv.scenario}: each variant minus {sv.baseline}, mean and 95% interval "
                                     "over seeds (paired by seed)"})
    return page.chart(fig, 160 + 260 * math.ceil(len(keys) / COLUMNS), top=110)


def _values(page: Page, sv: ScenarioVerdicts, keys: Sequence[str]) -> str:
    import plotly.graph_objects as go

    fig = _panels(keys)
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
    for i, k in enumerate(keys):
        row, col = i // COLUMNS + 1, i % COLUMNS + 1
        m = measure(k)
        values: list[float] = []
        for j, v in enumerate(sv.variants):
            series = sv.series(k, v)
            ys = [series[s] * m.scale for s in sv.seeds if s in series]
            values += ys
            fig.add_trace(go.Box(
                x=[v] * len(ys), y=ys, text=[f"seed {s}" for s in sv.seeds if s in series], name=v,
                boxpoints="all", jitter=0.3, pointpos=0, showlegend=False,
                marker={"color": palette[j % len(palette)]},
                hovertemplate="%{x}, %{text}: %{y}<extra></extra>",
            ), row=row, col=col)
        fig.update_yaxes(title_text=m.name, row=row, col=col)
        if values and all(y == 0 for y in values):
            fig.update_yaxes(range=[0, 1], autorange=False, row=row, col=col)
        fig.update_xaxes(title_text="variant", type="category", categoryorder="array", categoryarray=sv.variants,
                         row=row, col=col)
    fig.update_layout(title={"text": f"{sv.scenario}: each variant's value per seed"})
    return page.chart(fig, 160 + 260 * math.ceil(len(keys) / COLUMNS), top=110)


#: how a sweep gets more seeds, said on a page of one seed (``compare --seeds`` says its flag)
SWEEP_SEEDS = "list more seeds in the sweep file (seeds: [1, 2, 3, 4, 5])"


def render(title: str, columns: Sequence[str], rows: Sequence[dict[str, str]], baseline: str | None = None,
           *, more_seeds: str = SWEEP_SEEDS) -> str:
    """The page (see the module docstring) for the rows of a ``results.csv``; ``more_seeds`` tells a
    page of one seed how to get intervals."""
    svs = grid(columns, rows, baseline)
    page = Page(title)
    ok = sum(1 for r in rows if r.get("status") == "ok")
    seeds = len({r["seed"] for r in rows})
    base = svs[0].baseline if svs else ""
    variants = svs[0].variants if svs else []
    page.raw(
        f'<p class="note">{len(rows)} cells: {len(svs)} scenario(s) \u00d7 {len(variants)} variant(s) \u00d7 '
        f"{seeds} seed(s); {ok} ok, {len(rows) - ok} failed. Baseline: <b>{escape(base)}</b>. Each verdict is "
        "a variant minus the baseline, seed by seed (the same workload and random choices on both sides): "
        "the mean difference and its 95% confidence interval (Student t over the seeds both ran); "
        "<i>no difference</i> when the interval spans 0, else <i>better</i> or <i>worse</i> by the metric's "
        "stated direction, with the seeds that went that way. Percentages differ in percentage points.</p>"
    )
    if seeds == 1:
        page.raw(f'<p class="missing" id="one-seed">One seed: no interval, so no verdict (a difference may be '
                 f"that seed's luck). For a 95% interval and a verdict on each difference, {escape(more_seeds)}.</p>")
    if len(variants) > 1:
        page.h2("Verdicts")
        page.raw(_summary_table(svs))
    for i, sv in enumerate(svs, 1):
        page.raw(f'<section class="scenario" id="scenario-{i}" data-scenario="{escape(sv.scenario)}">')
        page.h2(f"Scenario: {sv.scenario}")
        page.note(f"baseline {sv.baseline}; {len(sv.seeds)} seed(s): {', '.join(sv.seeds)}"
                  + (f"; {sv.failed} cell(s) failed" if sv.failed else ""))
        if not sv.metrics:
            page.missing("no cell of this scenario ran")
            page.raw("</section>")
            continue
        if sv.identical:  # one line saying so, the values folded under it: no flat charts
            page.raw(f'<p class="identical" id="identical-{i}">{escape(_identical_text(sv)[0].upper())}'
                     f"{escape(_identical_text(sv)[1:])}: nothing to compare.</p>")
            page.raw(f"<details><summary>the values ({len(sv.metrics)} metrics)</summary>"
                     + _values_table(sv, f"all-verdicts-{i}") + "</details>")
            page.raw("</section>")
            continue
        same = [v for v in sv.others if sv.same_as_baseline(v)]
        if same:
            page.note(f"{', '.join(same)} gave the same results as {sv.baseline} on every seed, every metric")
        keys = sv.headline()
        page.raw(_scenario_table(sv, keys, f"verdicts-{i}"))
        page.raw(f"<details><summary>every metric ({len(sv.metrics)})</summary>"
                 + _scenario_table(sv, sv.metrics, f"all-verdicts-{i}") + "</details>")
        flat = [k for k in keys if sv.same_for_all(k)]
        if flat and sv.others:  # a chart of these would be flat lines at 0 and identical boxes
            page.note("the same for every variant on every seed, so not drawn: "
                      + ", ".join(measure(k).name for k in flat))
            keys = [k for k in keys if k not in flat]
        if keys and sv.others:
            page.raw(_differences(page, sv, keys))
        if keys:
            page.raw(_values(page, sv, keys))
        page.raw("</section>")
    failed = [r for r in rows if r.get("status") != "ok"]
    if failed:
        page.h2("Failed cells")
        page.raw("<table><thead><tr><th>scenario</th><th>variant</th><th>seed</th><th>error</th></tr></thead><tbody>"
                 + "".join(f"<tr><td>{escape(r['scenario'])}</td><td>{escape(r['variant'])}</td>"
                           f"<td>{escape(r['seed'])}</td><td>{escape(r['status'])}</td></tr>" for r in failed)
                 + "</tbody></table>")
    return page.render()


__all__ = ["render"]
