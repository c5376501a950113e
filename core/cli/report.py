"""The HTML report: one self-contained page that shows a result, or several side by side.

``kubesched simulate --html PATH`` and ``kubesched report RESULT.json... -o PATH`` write it; for
one result it is the report of that run, for several (and for ``kubesched compare --html``) the
variants' curves are overlaid on the same axes under a side-by-side table.

Charts are drawn by plotly.js, inlined once in the page (plotly's Python package ships the
bundle), so the file works offline; a Content-Security-Policy in the page forbids every request
to anything but the page itself (no CDN, fonts or images from elsewhere).  Every number comes
from :mod:`.metrics`.  A section whose input the result does not carry (a result from before the
lifecycle additions has no ``timeline``) says so instead of drawing an empty chart.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from . import metrics
from .metrics import Metrics

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
UNITS = {"cpu": "millicores", "memory": "bytes", "pods": "pods"}

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 1em 2em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: .9em; }
th, td { padding: .25em .7em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 1em; }
.missing { color: #8a6d3b; background: #fcf8e3; padding: .5em 1em; border-radius: 4px; }
.note { color: #666; font-size: .9em; }
#pod-search { padding: .3em .6em; width: 24em; margin-bottom: .5em; }
.summary { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.pods { max-height: 36em; overflow-y: auto; display: block; }
"""

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


class _Page:
    """Collects sections; numbers each chart's div so the page is the same bytes on every run."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.parts: list[str] = []
        self.charts = 0

    def h2(self, text: str) -> None:
        self.parts.append(f"<h2>{_e(text)}</h2>")

    def missing(self, text: str) -> None:
        self.parts.append(f'<p class="missing">{_e(text)}</p>')

    def note(self, text: str) -> None:
        self.parts.append(f'<p class="note">{_e(text)}</p>')

    def raw(self, text: str) -> None:
        self.parts.append(text)

    def chart(self, fig: Any, height: int = 360) -> str:
        self.charts += 1
        fig.update_layout(height=height, margin={"l": 60, "r": 20, "t": 50, "b": 50}, template="plotly_white")
        div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"chart-{self.charts}",
                          config=PLOT_CONFIG)
        return f'<div class="kubesched-chart">{div}</div>'

    def grid(self, charts: Sequence[str]) -> None:
        self.parts.append('<div class="grid">' + "".join(charts) + "</div>")

    def render(self) -> str:
        from plotly.offline import get_plotlyjs

        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>{_e(self.title)}</title>\n<style>{STYLE}</style>\n"
            f"<script>{get_plotlyjs()}</script>\n</head><body>\n<h1>{_e(self.title)}</h1>\n"
            + "\n".join(self.parts)
            + "\n</body></html>\n"
        )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], *, numeric_from: int = 1,
           table_id: str = "", css: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{_e(c)}</td>' if i >= numeric_from else f"<td>{_e(c)}</td>" for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    attrs = (f' id="{table_id}"' if table_id else "") + (f' class="{css}"' if css else "")
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _summary_table(labels: Sequence[str], ms: Sequence[Metrics]) -> str:
    rows = [m.table() for m in ms]
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    return _table(["metric", *labels], [[metrics.label(k), *(metrics.fmt(k, r.get(k)) for r in rows)] for k in keys])


def _summary_groups(m: Metrics) -> str:
    """One run's summary as a row of small tables (counts, time, allocation, balance, Jobs)."""
    row = m.table()
    groups: dict[str, list[str]] = {"counts": [], "time": [], "allocation": [], "balance": [], "jobs": []}
    for k in row:
        if k.startswith("allocation"):
            groups["allocation"].append(k)
        elif k.startswith("nodeBalance") or k == "nodesUsed":
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


def _fraction_label(r: str) -> str:
    return f"{r} allocated / capacity"


# --- one result --------------------------------------------------------------------------------


def render_single(title: str, m: Metrics) -> str:
    """The report of one run."""
    import plotly.graph_objects as go

    page = _Page(title)
    page.h2("Summary")
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
            fig.update_layout(title=f"{r} ({UNITS.get(r, 'units')})", xaxis_title="virtual seconds",
                              yaxis={"tickformat": "~s", "rangemode": "tozero"})
            charts.append(page.chart(fig, 300))
        page.grid(charts)

    page.h2("Pending and running pods")
    if not _missing_note(page, m, "timeline", "pods over time"):
        fig = go.Figure()
        fig.add_scatter(x=m.times, y=m.pending_series, name="pending", mode="lines", line_shape="hv")
        fig.add_scatter(x=m.times, y=m.running_series, name="running", mode="lines", line_shape="hv")
        fig.update_layout(title="pods over time", xaxis_title="virtual seconds", yaxis_title="pods")
        page.raw(page.chart(fig))

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
            fig.update_layout(title="scheduledAt − createdAt", xaxis_title="seconds", yaxis_title="pods",
                              showlegend=False)
            page.raw(page.chart(fig))

    page.h2("Final allocation per node")
    if not _missing_note(page, m, "nodes", "the per-node allocation"):
        resources = [r for r in m.resources if r in m.node_fractions]
        if not m.node_names:
            page.missing("the cluster has no nodes")
        else:
            z = [[m.node_fractions[r][i] for r in resources] for i in range(len(m.node_names))]
            fig = go.Figure(go.Heatmap(
                z=z, x=resources, y=m.node_names, zmin=0, zmax=1, colorscale="Viridis",
                text=[[f"{100 * v:.0f}%" for v in row] for row in z],
                texttemplate="%{text}" if len(m.node_names) <= 40 else None,
                hovertemplate="%{y} %{x}: %{text}<extra></extra>", colorbar={"title": "allocated"},
            ))
            fig.update_layout(title="allocated / capacity at the end", yaxis={"autorange": "reversed"})
            page.raw(page.chart(fig, min(900, 160 + 22 * len(m.node_names))))

    page.h2("Preemptions")
    if not m.preemption_list:
        page.note("no preemptions in this run")
    else:
        fig = go.Figure(go.Scatter(
            x=[p.time for p in m.preemption_list], y=[len(p.victims) for p in m.preemption_list],
            mode="markers", marker={"size": 12, "color": "#c0392b"},
            hovertext=[f"{p.preemptor_name} on {p.node}: evicted {', '.join(p.victims)}" for p in m.preemption_list],
            hoverinfo="text+x",
        ))
        fig.update_layout(title=f"{m.preemptions} preemptions, {m.victims} victims",
                          xaxis={"title": "virtual seconds", "range": [0, max(m.virtual_seconds, 1.0)]},
                          yaxis={"title": "victims", "rangemode": "tozero", "dtick": 1})
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
            fig.update_layout(title="completion time (completedAt − createdAt)", xaxis_title="seconds")
            page.raw(page.chart(fig, min(900, 160 + 22 * len(jobs))))
            if m.jobs_incomplete:
                page.note(f"{m.jobs_incomplete} Jobs did not complete")

    page.h2("Pods")
    page.raw('<input id="pod-search" type="search" placeholder="filter pods: name, node, phase, reason…">')
    page.raw(_table(
        ["pod", "priority", "node", "phase", "created", "scheduled", "why pending (last FailedScheduling)"],
        [[r.name, str(r.priority), r.node or "", r.state,
          "" if r.created_at is None else f"{r.created_at:g}s",
          "" if r.scheduled_at is None else f"{r.scheduled_at:g}s", r.why_pending] for r in m.pod_rows],
        numeric_from=99, table_id="pods", css="pods",
    ))
    page.raw(f"<script>{SEARCH_JS}</script>")
    return page.render()


# --- several results ---------------------------------------------------------------------------


def render_compare(title: str, labels: Sequence[str], ms: Sequence[Metrics]) -> str:
    """Several runs of one scenario: a side-by-side table, then each chart with a curve per variant."""
    import plotly.graph_objects as go

    page = _Page(title)

    def chart(fig: Any, height: int = 360) -> str:
        fig.update_layout(showlegend=True)  # a variant is named even when it alone has a curve
        return page.chart(fig, height)

    page.h2("Side by side")
    page.raw(_summary_table(labels, ms))
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
            fig = go.Figure()
            for label, m in timed:
                fr = [a / c if c else None for a, c in zip(m.allocated_series[r], m.capacity_series[r], strict=True)]
                fig.add_scatter(x=m.times, y=fr, name=label, mode="lines", line_shape="hv")
            fig.update_layout(title=_fraction_label(r), xaxis_title="virtual seconds",
                              yaxis={"tickformat": ".1~%", "rangemode": "tozero"})
            charts.append(chart(fig, 300))
        page.grid(charts)

        page.h2("Pending and running pods")
        charts = []
        for what in ("pending", "running"):
            fig = go.Figure()
            for label, m in timed:
                fig.add_scatter(x=m.times, y=m.pending_series if what == "pending" else m.running_series,
                                name=label, mode="lines", line_shape="hv")
            fig.update_layout(title=f"{what} pods", xaxis_title="virtual seconds")
            charts.append(chart(fig, 300))
        page.grid(charts)

    page.h2("Scheduling latency")
    with_latency = [(label, m) for label, m in zip(labels, ms, strict=True) if m.latencies]
    if not with_latency:
        page.missing("no scheduling latency in these results (pods[].createdAt/scheduledAt)")
    else:
        fig = go.Figure()
        for label, m in with_latency:
            xs = sorted(m.latencies)
            fig.add_scatter(x=xs, y=[(i + 1) / len(xs) for i in range(len(xs))], name=label, mode="lines", line_shape="hv")
        fig.update_layout(title="share of pods bound within (cumulative)", xaxis_title="seconds",
                          yaxis={"tickformat": ".1~%"})
        page.raw(chart(fig))

    page.h2("Final allocation per node")
    with_nodes = [(label, m) for label, m in zip(labels, ms, strict=True) if "nodes" not in m.missing]
    if not with_nodes:
        page.missing("no nodes section in these results")
    else:
        charts = []
        resources = [r for r in ms[0].resources if r != "pods" and all(r in m.node_fractions for _, m in with_nodes)]
        for r in resources:
            fig = go.Figure()
            for label, m in with_nodes:
                ranked = sorted(m.node_fractions[r], reverse=True)
                fig.add_bar(x=list(range(1, len(ranked) + 1)), y=ranked, name=label)
            fig.update_layout(title=f"{r} per node, fullest first", xaxis_title="node rank", barmode="group",
                              yaxis={"tickformat": ".1~%"})
            charts.append(chart(fig, 300))
        page.grid(charts)

    page.h2("Preemptions")
    if not any(m.preemption_list for m in ms):
        page.note("no preemptions in these runs")
    else:
        fig = go.Figure()
        for label, m in zip(labels, ms, strict=True):
            xs, ys, total = [0.0], [0], 0
            for p in m.preemption_list:
                total += len(p.victims)
                xs.append(p.time)
                ys.append(total)
            xs.append(max(m.virtual_seconds, xs[-1]))
            ys.append(total)
            fig.add_scatter(x=xs, y=ys, name=label, mode="lines", line_shape="hv")
        fig.update_layout(title="victims so far", xaxis_title="virtual seconds")
        page.raw(chart(fig, 300))

    page.h2("Jobs")
    with_jobs = [(label, m) for label, m in zip(labels, ms, strict=True) if m.jobs]
    if not with_jobs:
        page.note("no completed Jobs in these runs")
    else:
        fig = go.Figure()
        for label, m in with_jobs:
            xs = sorted(d for _, d in m.jobs)
            fig.add_scatter(x=xs, y=[(i + 1) / len(xs) for i in range(len(xs))], name=label, mode="lines", line_shape="hv")
        fig.update_layout(title="Jobs completed within (cumulative)", xaxis_title="seconds",
                          yaxis={"tickformat": ".1~%"})
        page.raw(chart(fig))
    return page.render()


def render(labels: Sequence[str], results: Sequence[dict[str, Any]], title: str = "") -> str:
    """One result: its report; several: the comparison.  ``results`` are simulate JSON objects."""
    ms = [metrics.compute(r) for r in results]
    if len(ms) == 1:
        return render_single(title or f"kubesched report: {labels[0]}", ms[0])
    return render_compare(title or "kubesched comparison: " + " vs ".join(labels), labels, ms)


def write(path: str, text: str) -> None:
    """Write a report; a path that cannot be written is bad input (one line, exit 2)."""
    from pathlib import Path

    from .._errors import ConfigError

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot write the report: {e.strerror or e}", source=path) from None


__all__ = ["render", "render_compare", "render_single", "write"]
