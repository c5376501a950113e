"""The HTML report: one self-contained page that shows a result, or several side by side.

``kubesched simulate --html PATH`` and ``kubesched report RESULT.json... -o PATH`` write it; for
one result it is the report of that run, for several (and for ``kubesched compare --html``) the
variants' curves are overlaid on the same axes under a side-by-side table that marks the better
value of each metric with a better direction and gives each variant's difference from the first.

What a run used is shown over the run, and the end state separately: a run that drains ends
with every node empty, so nodes used and pods per node are drawn over the run (peak and
time-weighted mean, :mod:`._result_metrics`), and the per-node allocation at the end is its own view.
Time axes read as a clock (``h:mm``) with the virtual seconds on hover; curves that are the same
numbers say so; an all-zero series gets a 0..1 axis (:mod:`._charts`).

Charts are drawn by plotly.js, inlined once in the page (its cartesian bundle, gzipped:
:data:`._charts.BUNDLE`; a report is well under 1.5 MB), so the file works offline; a Content-Security-Policy in the page forbids every request
to anything but the page itself (no CDN, fonts or images from elsewhere).  Every number comes
from :mod:`._result_metrics`.  A section whose input the result does not carry (a result from before the
lifecycle additions has no ``timeline``) says so instead of drawing an empty chart.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from typing import Any

from kubesched.experiments._stats import MOST_PLACES, same
from kubesched.reporting import _result_metrics as metrics
from kubesched.reporting._charts import CSP, Page, mark_identical, time_axis, zero_safe
from kubesched.reporting._measures import best, differences, measure
from kubesched.reporting._result_metrics import Metrics

_Page = Page  # the page of charts (kept under its old name for this module's sections)
UNITS = {"cpu": "millicores", "memory": "bytes", "pods": "pods"}
NA = "n/a"  # what a table cell says for a value the result does not have
ONE_SEED = ("One run per variant, on one seed: a difference here may be that seed's luck. For a 95% interval "
            "and a verdict on each difference, run every variant on several seeds: kubesched compare \u2026 "
            "--seeds 1-10 (pairs the runs by seed).")

SEARCH_JS = """
document.getElementById('pod-search').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  var rows = document.querySelectorAll('#pods tbody tr');
  for (var i = 0; i < rows.length; i++) {
    rows[i].style.display = rows[i].textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  }
});
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], *, numeric_from: int = 1,
           table_id: str = "", css: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(  # a missing value reads n/a, never a blank cell
            f'<td class="num">{_e(c or NA)}</td>' if i >= numeric_from else f"<td>{_e(c or NA)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    attrs = (f' id="{table_id}"' if table_id else "") + (f' class="{css}"' if css else "")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _apart(values: Sequence[Any], texts: Sequence[str]) -> bool:
    """Whether every two of ``values`` that differ have different ``texts``."""
    nums = [(v, t) for v, t in zip(values, texts, strict=True) if isinstance(v, int | float)]
    return all(ta != tb for i, (a, ta) in enumerate(nums) for b, tb in nums[i + 1:] if not same(a, b))


def _row_texts(k: str, values: Sequence[Any]) -> list[str]:
    """A row's values as text, with the decimals that tell apart two values that differ
    (``45.03%`` and ``45.04%``, not ``45.0%`` twice)."""
    texts = [metrics.fmt(k, v) for v in values]
    places = 1
    while not _apart(values, texts) and places <= MOST_PLACES:
        texts = [metrics.fmt(k, v, places) for v in values]
        places += 1
    return texts


def _diff_texts(k: str, values: Sequence[Any], diffs: Sequence[float | None]) -> list[str]:
    """Each variant's difference from the first as text ('n/a' where either is missing), with
    the decimals that keep a difference that is there from reading 0."""
    def shown(places: int | None) -> list[str]:
        return [metrics.fmt_diff(k, d, places) or "n/a" for d in diffs]

    texts, places = shown(None), 1
    differ = [d is not None and not same(v, values[0]) for v, d in zip(values[1:], diffs, strict=True)]
    while any(f and t in ("0", "0s", "0 pp") for f, t in zip(differ, texts, strict=True)) and places <= MOST_PLACES:
        texts, places = shown(places), places + 1
    return texts


def _summary_table(labels: Sequence[str], ms: Sequence[Metrics]) -> str:
    """Metrics side by side: the better direction, the better value in bold with a ``*``, and each
    variant's difference from the first."""
    rows = [m.table() for m in ms]
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    diffs = differences(rows)
    heads = ["difference"] if len(labels) == 2 else [f"\u0394 {lb}" for lb in labels[1:]]
    head = "".join(f"<th>{_e(h)}</th>" for h in ["metric", "better", *labels, *heads])
    body = []
    for k in keys:
        values = [r.get(k) for r in rows]
        marked = best(k, values)
        texts = _row_texts(k, values)
        cells = "".join(
            f'<td class="num best" title="better">{_e(t)}&nbsp;*</td>' if i in marked
            else f'<td class="num">{_e(t)}</td>' for i, t in enumerate(texts)
        )
        cells += "".join(f'<td class="num">{_e(t)}</td>' for t in _diff_texts(k, values, [d.get(k) for d in diffs]))
        better = measure(k).better or "\u2013"
        body.append(f"<tr><td>{_e(metrics.label(k))}</td><td>{_e(better)}</td>{cells}</tr>")
    what = f"{labels[1]} \u2212 {labels[0]}" if len(labels) == 2 else f"each variant \u2212 {labels[0]}"
    return (f'<table id="side-by-side"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f'<p class="note">* the better value, where the metric has a better direction; difference: {_e(what)}</p>')


def _summary_groups(m: Metrics) -> str:
    """One run's summary as a row of small tables (counts, time, allocation, balance, Jobs)."""
    row = m.table()
    groups: dict[str, list[str]] = {"counts": [], "time": [], "allocation": [], "balance": [], "jobs": []}
    for k in row:
        if k.startswith("allocation"):
            groups["allocation"].append(k)
        elif k.startswith(("nodeBalance", "nodesUsed")):
            groups["balance"].append(k)
        elif k.startswith("jobCompletion"):
            groups["jobs"].append(k)
        elif k.startswith("latency") or k == "timeToDrain":
            groups["time"].append(k)
        else:
            groups["counts"].append(k)
    tables = [
        _table(["metric", "value"], [[metrics.label(k), metrics.fmt(k, row[k])] for k in keys])
        for keys in groups.values() if keys
    ]
    return '<div class="summary">' + "".join(tables) + "</div>"


def _missing_note(page: _Page, m: Metrics, section: str, what: str) -> bool:
    if section in m.missing:
        page.missing(f"no {section} in this result: {what} needs it (a simulate run with the lifecycle "
                     "additions writes it)")
        return True
    return False


def _identical_runs(ms: Sequence[Metrics]) -> bool:
    """Every run gave the same results: every number and every series (the emulated version aside)."""
    first = dataclasses.replace(ms[0], emulated_version=None)
    return all(dataclasses.replace(m, emulated_version=None) == first for m in ms[1:])


def _drained(m: Metrics) -> bool:
    """Nothing is left on any node at the end of the run: its end state is empty, not drawn."""
    return all(v == 0 for fractions in m.node_fractions.values() for v in fractions)


def _fraction_label(r: str) -> str:
    return f"{r} allocated / capacity"


def _end(ms: Sequence[Metrics]) -> float:
    """Where a time axis ends: the last instant any of the runs reached."""
    return max([0.0, *(m.virtual_seconds for m in ms), *(t for m in ms for t in m.times[-1:])])


def _open_ended_note(page: _Page, ms: Sequence[tuple[str, Metrics]]) -> None:
    for label, m in ms:
        if m.open_ended:
            who = f"{label}: " if len(ms) > 1 else ""
            page.note(f"{who}{m.open_ended} deleted pod(s) have no recorded end (a result from before "
                      "pods[].deletedAt; not preemption victims, not finished): they count on their node "
                      "until the end of the run")


# --- one result --------------------------------------------------------------------------------


def render_single(title: str, m: Metrics) -> str:
    """The report of one run."""
    page = _Page(title)
    _single_sections(page, m)
    return page.render()


def _single_sections(page: _Page, m: Metrics) -> None:
    """The sections of one run's report, on ``page``."""
    import plotly.graph_objects as go

    end = _end([m])
    page.h2("Summary")
    if m.emulated_version:
        page.note(f"emulated Kubernetes version: {m.emulated_version}")
    page.raw(_summary_groups(m))
    if m.missing:
        page.note("not in this result: " + ", ".join(m.missing))

    page.h2("Allocation over time")
    if not _missing_note(page, m, "timeline", "allocation over time"):
        charts = []
        for r in m.resources:
            fig = go.Figure()
            fig.add_scatter(x=m.times, y=m.capacity_series[r], name="capacity", mode="lines", line_shape="hv",
                            line={"dash": "dash", "color": "#888"})
            fig.add_scatter(x=m.times, y=m.allocated_series[r], name="allocated", mode="lines", line_shape="hv", fill="tozeroy")
            unit = UNITS.get(r, "units")
            fig.update_layout(title=f"{r} ({unit})", yaxis={"tickformat": "~s", "rangemode": "tozero", "title": unit})
            time_axis(fig, end, y_hover=f"%{{y:,}} {unit}")
            zero_safe(fig)
            charts.append(page.chart(fig, 300))
        page.grid(charts)

    page.h2("Pending and running pods")
    if not _missing_note(page, m, "timeline", "pods over time"):
        fig = go.Figure()
        fig.add_scatter(x=m.times, y=m.pending_series, name="pending", mode="lines", line_shape="hv")
        fig.add_scatter(x=m.times, y=m.running_series, name="running", mode="lines", line_shape="hv")
        fig.update_layout(title="pods over time", yaxis_title="pods")
        time_axis(fig, end, y_hover="%{y} pods")
        zero_safe(fig)
        page.raw(page.chart(fig))

    page.h2("Nodes used over the run")
    if _missing_note(page, m, "pods[].createdAt", "nodes used over the run (pods[].scheduledAt)"):
        pass
    elif m.nodes_used_peak is None:
        page.missing("no pod binding times in this result (pods[].scheduledAt)")
    else:
        fig = go.Figure()
        fig.add_scatter(x=[*m.nodes_used_times, end], y=[*m.nodes_used_series, m.nodes_used_series[-1]],
                        name="nodes used", mode="lines", line_shape="hv", fill="tozeroy")
        fig.update_layout(title=f"nodes holding a pod: peak {m.nodes_used_peak}, mean {metrics.fmt('nodesUsedMean', m.nodes_used_mean)}, "
                                f"at the end {m.nodes_used if m.nodes_used is not None else 'n/a'}",
                          yaxis={"title": "nodes used", "rangemode": "tozero"}, showlegend=False)
        time_axis(fig, end, y_hover="%{y} nodes used")
        zero_safe(fig)
        page.raw(page.chart(fig, 300))
        _open_ended_note(page, [("", m)])

    page.h2("Scheduling latency")
    if not _missing_note(page, m, "pods[].createdAt", "scheduling latency"):
        if not m.latencies:
            page.missing("no pod was bound: no latency to show")
        else:
            fig = go.Figure()
            fig.add_histogram(x=m.latencies, name="pods", nbinsx=min(50, max(5, len(m.latencies))))
            for q, dash in (("p50", "solid"), ("p90", "dash"), ("p99", "dot")):
                v = m.latency[q]
                fig.add_vline(x=v, line_dash=dash, line_color="#c0392b",
                              annotation_text=f"{q} {v:g}s", annotation_position="top right")
            fig.update_layout(title="scheduledAt − createdAt", xaxis_title="latency (s)", yaxis_title="pods",
                              showlegend=False)
            page.raw(page.chart(fig))

    page.h2("Pods per node over the run")
    if m.node_pods_mean:
        names = list(m.node_pods_mean)
        fig = go.Figure()
        fig.add_bar(x=names, y=[m.node_pods_mean[n] for n in names], name="time-weighted mean",
                    hovertemplate="%{x}: %{y:.2f} pods on average<extra></extra>")
        fig.add_scatter(x=names, y=[m.node_pods_peak[n] for n in names], name="peak", mode="markers",
                        marker={"symbol": "line-ew-open", "size": 14, "color": "#c0392b"},
                        hovertemplate="%{x}: peak %{y} pods<extra></extra>")
        fig.update_layout(title="pods on each node: time-weighted mean (bars) and peak (marks)",
                          xaxis_title="node", yaxis={"title": "pods", "rangemode": "tozero"})
        zero_safe(fig)
        page.raw(page.chart(fig, 320))
    else:
        page.note("no pod binding times in this result: pods per node over the run needs pods[].scheduledAt")

    page.h2("Allocation per node at the end of the run")
    if not _missing_note(page, m, "nodes", "the per-node allocation"):
        resources = [r for r in m.resources if r in m.node_fractions]
        if not m.node_names:
            page.missing("the cluster has no nodes")
        elif _drained(m):
            page.note("every node is empty at the end (the run drained), so the end state is not drawn: "
                      "what the run used is over the run, above")
        else:
            z = [[m.node_fractions[r][i] for r in resources] for i in range(len(m.node_names))]
            fig = go.Figure(go.Heatmap(
                z=z, x=resources, y=m.node_names, zmin=0, zmax=1, colorscale="Viridis",
                text=[[f"{100 * v:.0f}%" for v in row] for row in z],
                texttemplate="%{text}" if len(m.node_names) <= 40 else None,
                hovertemplate="%{y} %{x}: %{text}<extra></extra>", colorbar={"title": "allocated"},
            ))
            fig.update_layout(title="allocated / capacity at the end", yaxis={"autorange": "reversed", "title": "node"},
                              xaxis_title="resource")
            page.raw(page.chart(fig, min(900, 160 + 22 * len(m.node_names))))

    page.h2("Preemptions")
    if not m.preemption_list:
        page.note("no preemptions in this run")
    else:
        fig = go.Figure(go.Scatter(
            x=[p.time for p in m.preemption_list], y=[len(p.victims) for p in m.preemption_list],
            mode="markers", marker={"size": 12, "color": "#c0392b"},
            hovertext=[f"{p.preemptor_name} on {p.node}: evicted {', '.join(p.victims)}" for p in m.preemption_list],
        ))
        fig.update_layout(title=f"{m.preemptions} preemptions, {m.victims} victims", xaxis={"range": [0, max(end, 1.0)]},
                          yaxis={"title": "victims", "rangemode": "tozero", "dtick": 1})
        time_axis(fig, max(end, 1.0), y_hover="%{hovertext}")
        page.raw(page.chart(fig, 300))
        page.raw(_table(["time", "preemptor", "node", "victims"],
                        [[f"{p.time:g}s", p.preemptor_name, p.node, ", ".join(p.victims)] for p in m.preemption_list],
                        numeric_from=4))

    page.h2("Jobs")
    if not _missing_note(page, m, "workloads", "Jobs' completion times"):
        if not m.jobs and not m.jobs_incomplete:
            page.note("no Jobs in this run")
        elif not m.jobs:
            page.missing(f"none of the {m.jobs_incomplete} Jobs completed")
        else:
            jobs = sorted(m.jobs, key=lambda j: j[1])
            fig = go.Figure(go.Bar(x=[d for _, d in jobs], y=[n for n, _ in jobs], orientation="h"))
            fig.update_layout(title="completion time (completedAt − createdAt)", xaxis_title="completion time (s)",
                              yaxis_title="Job")
            page.raw(page.chart(fig, min(900, 160 + 22 * len(jobs))))
            if m.jobs_incomplete:
                page.note(f"{m.jobs_incomplete} Jobs did not complete")

    page.h2("Pods")
    page.raw('<input id="pod-search" type="search" placeholder="filter pods: name, node, phase, reason…">')
    page.raw(_table(
        ["pod", "priority", "node", "phase", "created", "scheduled", "why pending (last FailedScheduling)"],
        [[r.name, str(r.priority), r.node or "", r.state,  # "": n/a (_table)
          "" if r.created_at is None else f"{r.created_at:g}s",
          "" if r.scheduled_at is None else f"{r.scheduled_at:g}s", r.why_pending] for r in m.pod_rows],
        numeric_from=99, table_id="pods", css="pods",
    ))
    page.raw(f"<script>{SEARCH_JS}</script>")


# --- several results ---------------------------------------------------------------------------


def render_compare(title: str, labels: Sequence[str], ms: Sequence[Metrics]) -> str:
    """Several runs of one scenario: a side-by-side table, then each chart with a curve per variant."""
    import plotly.graph_objects as go

    page = _Page(title)
    end = _end(ms)
    series: list[tuple[str, Sequence[Any], Sequence[Any]]]

    def chart(fig: Any, height: int = 360) -> str:
        fig.update_layout(showlegend=True)  # a variant is named even when it alone has a curve
        return page.chart(fig, height)

    def lines(title: str, series: Sequence[tuple[str, Sequence[float], Sequence[Any]]], *, timed: bool,
              y_hover: str = "%{y}", percent: bool = False, **layout: Any) -> Any:
        fig = go.Figure()
        for label, xs, ys in series:
            fig.add_scatter(x=list(xs), y=list(ys), name=label, mode="lines", line_shape="hv")
        fig.update_layout(**layout)
        mark_identical(fig, title, series)
        if timed:
            time_axis(fig, end, y_hover=y_hover)
        zero_safe(fig, percent=percent)
        return fig

    page.h2("Side by side")
    versions = [f"{label}: {m.emulated_version}" for label, m in zip(labels, ms, strict=True) if m.emulated_version]
    if versions:
        page.note("emulated Kubernetes version: " + "; ".join(versions))
    if _identical_runs(ms):  # one line saying so, and the run once: not every chart's curves on top of each other
        who = "both variants" if len(ms) == 2 else f"all {len(ms)} variants"
        page.raw(f'<p class="identical" id="identical">Identical: {_e(who)} ({_e(", ".join(labels))}) gave the same '
                 "results, every metric and every curve; the run is shown once.</p>")
        page.note(ONE_SEED)
        _single_sections(page, ms[0])
        return page.render()
    page.raw(_summary_table(labels, ms))
    page.note(ONE_SEED)
    for label, m in zip(labels, ms, strict=True):
        if m.missing:
            page.note(f"{label}: not in this result: " + ", ".join(m.missing))

    timed = [(label, m) for label, m in zip(labels, ms, strict=True) if "timeline" not in m.missing]
    page.h2("Allocation over time")
    if not timed:
        page.missing("no timeline in these results")
    else:
        charts = []
        resources = [r for r in ms[0].resources if all(r in m.allocated_series for _, m in timed)]
        for r in resources:
            series = [(label, m.times, [a / c if c else None for a, c in
                                        zip(m.allocated_series[r], m.capacity_series[r], strict=True)])
                      for label, m in timed]
            charts.append(chart(lines(_fraction_label(r), series, timed=True, y_hover="%{y:.1%}", percent=True,
                                      yaxis={"tickformat": ".1~%", "rangemode": "tozero",
                                             "title": f"{r} allocated (%)"}), 300))
        page.grid(charts)

        page.h2("Pending and running pods")
        charts = []
        for what in ("pending", "running"):
            series = [(label, m.times, m.pending_series if what == "pending" else m.running_series) for label, m in timed]
            charts.append(chart(lines(f"{what} pods", series, timed=True, y_hover="%{y} pods",
                                      yaxis={"title": f"{what} pods", "rangemode": "tozero"}), 300))
        page.grid(charts)

    page.h2("Nodes used over the run")
    used = [(label, m) for label, m in zip(labels, ms, strict=True) if m.nodes_used_peak is not None]
    if not used:
        page.missing("no pod binding times in these results (pods[].scheduledAt)")
    else:
        series = [(label, [*m.nodes_used_times, end], [*m.nodes_used_series, m.nodes_used_series[-1]])
                  for label, m in used]
        page.raw(chart(lines("nodes holding a pod", series, timed=True, y_hover="%{y} nodes used",
                             yaxis={"title": "nodes used", "rangemode": "tozero"}), 320))
        _open_ended_note(page, used)

    page.h2("Scheduling latency")
    with_latency = [(label, m) for label, m in zip(labels, ms, strict=True) if m.latencies]
    if not with_latency:
        page.missing("no scheduling latency in these results (pods[].createdAt/scheduledAt)")
    else:
        series = []
        for label, m in with_latency:
            xs = sorted(m.latencies)
            series.append((label, xs, [(i + 1) / len(xs) for i in range(len(xs))]))
        page.raw(chart(lines("share of pods bound within (cumulative)", series, timed=False, percent=True,
                             xaxis_title="latency (s)", yaxis={"tickformat": ".1~%", "title": "pods bound"})))

    page.h2("Pods per node over the run")
    with_occupancy = [(label, m) for label, m in zip(labels, ms, strict=True) if m.node_pods_mean]
    if not with_occupancy:
        page.missing("no pod binding times in these results (pods[].scheduledAt)")
    else:
        fig = go.Figure()
        for label, m in with_occupancy:
            ranked = sorted(m.node_pods_mean.values(), reverse=True)
            fig.add_bar(x=list(range(1, len(ranked) + 1)), y=ranked, name=label)
        fig.update_layout(title="time-weighted mean pods per node, fullest first", xaxis_title="node rank",
                          barmode="group", yaxis={"title": "pods (mean over the run)", "rangemode": "tozero"})
        zero_safe(fig)
        page.raw(chart(fig, 300))

    page.h2("Allocation per node at the end of the run")
    with_nodes = [(label, m) for label, m in zip(labels, ms, strict=True) if "nodes" not in m.missing]
    if not with_nodes:
        page.missing("no nodes section in these results")
    else:
        charts = []
        drained = [label for label, m in with_nodes if _drained(m)]
        with_nodes = [(label, m) for label, m in with_nodes if not _drained(m)]
        if drained and not with_nodes:
            page.note("every node is empty at the end (the runs drained), so the end state is not drawn: "
                      "what they used is over the run, above")
        elif drained:
            page.note(f"every node is empty at the end of {', '.join(drained)} (drained): not drawn here")
        resources = [r for r in ms[0].resources if r != "pods" and all(r in m.node_fractions for _, m in with_nodes)]
        for r in resources if with_nodes else []:
            fig = go.Figure()
            for label, m in with_nodes:
                ranked = sorted(m.node_fractions[r], reverse=True)
                fig.add_bar(x=list(range(1, len(ranked) + 1)), y=ranked, name=label)
            fig.update_layout(title=f"{r} per node at the end, fullest first", xaxis_title="node rank", barmode="group",
                              yaxis={"tickformat": ".1~%", "title": f"{r} allocated (%)"})
            zero_safe(fig, percent=True)
            charts.append(chart(fig, 300))
        page.grid(charts)

    page.h2("Preemptions")
    if not any(m.preemption_list for m in ms):
        page.note("no preemptions in these runs")
    else:
        series = []
        for label, m in zip(labels, ms, strict=True):
            xs, ys, total = [0.0], [0], 0
            for p in m.preemption_list:
                total += len(p.victims)
                xs.append(p.time)
                ys.append(total)
            xs.append(max(end, xs[-1]))
            ys.append(total)
            series.append((label, xs, ys))
        page.raw(chart(lines("victims so far", series, timed=True, y_hover="%{y} victims",
                             yaxis={"title": "victims", "rangemode": "tozero"}), 300))

    page.h2("Jobs")
    with_jobs = [(label, m) for label, m in zip(labels, ms, strict=True) if m.jobs]
    if not with_jobs:
        page.note("no completed Jobs in these runs")
    else:
        series = []
        for label, m in with_jobs:
            xs = sorted(d for _, d in m.jobs)
            series.append((label, xs, [(i + 1) / len(xs) for i in range(len(xs))]))
        page.raw(chart(lines("Jobs completed within (cumulative)", series, timed=False, percent=True,
                             xaxis_title="completion time (s)", yaxis={"tickformat": ".1~%", "title": "Jobs completed"})))
    return page.render()


def render(labels: Sequence[str], results: Sequence[dict[str, Any]], title: str = "") -> str:
    """One result: its report; several: the comparison.  ``results`` are simulate JSON objects."""
    ms = [metrics.compute(r) for r in results]
    if len(ms) == 1:
        return render_single(title or f"kubesched report: {labels[0]}", ms[0])
    return render_compare(title or "kubesched comparison: " + " vs ".join(labels), labels, ms)


def write(path: str, text: str) -> None:
    """Write a report; a path that cannot be written is bad input (one line, exit 2)."""
    from kubesched._errors import ConfigError
    from kubesched._outputs import write_output

    try:
        write_output(path, text)
    except OSError as e:
        raise ConfigError(f"cannot write the report: {e.strerror or e}", source=path) from None


__all__ = ["CSP", "render", "render_compare", "render_single", "write"]
