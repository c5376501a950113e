"""Chart conventions shared by the report, the comparison and the sweep page (plotly figures).

- Virtual time reads as a clock: ticks at round steps labelled ``h:mm`` (``h:mm:ss`` below a
  minute, ``2d 6:00`` past a day), the exact virtual seconds on hover.
- A series that is zero everywhere gets an axis from 0 to 1 (percent: 0 to 100%), not plotly's
  −1…1 around nothing.
- A table's column is at least as wide as the longest word of its header (the table layout is
  automatic and header words never break: "preemption", not "preemptio n"); a page too narrow for
  a wide table scrolls sideways rather than cut a word.
- Curves that are the same numbers are said to be the same: a note under the chart's title, and
  the later ones dashed so that the first shows through (one line never silently hides another).
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence
from typing import Any

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:"
)
PLOT_CONFIG = {"displaylogo": False, "responsive": True}

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 1em 2em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: .9em; }
th, td { padding: .25em .7em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { word-break: normal; overflow-wrap: normal; hyphens: manual; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 1em; }
.missing { color: #8a6d3b; background: #fcf8e3; padding: .5em 1em; border-radius: 4px; }
.note { color: #666; font-size: .9em; }
#pod-search { padding: .3em .6em; width: 24em; margin-bottom: .5em; }
.summary { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.pods { max-height: 36em; overflow-y: auto; display: block; }
table.verdicts { width: 100%; font-size: .85em; }
table.verdicts td { overflow-wrap: break-word; }
table.verdicts th small, table.verdicts td small { font-weight: normal; color: #666; }
table.verdicts th.name { width: 14%; } details { margin: .8em 0; } summary { cursor: pointer; color: #345; }
td.better { background: #e3f4e1; } td.worse { background: #f9e0dd; }
td.same, td.unknown, td.higher, td.lower { background: #f4f4f4; }
td.best { font-weight: bold; }
section.scenario { margin-top: 2.5em; }
p.identical { background: #f4f4f4; padding: .5em 1em; border-radius: 4px; }
"""


def escape(text: Any) -> str:
    return html.escape(str(text), quote=True)


#: plotly.js's cartesian bundle (scatter, bar, box, heatmap, histogram: every trace a page draws),
#: the npm package plotly.js-cartesian-dist-min at the plotly.js version plotly.py 7 writes
#: figures for (4.1.1; its MIT licence beside it), gzipped: 496 kB against the 4.8 MB full bundle
#: that plotly.py ships.  A page carries it once, base64, and the browser inflates it
#: (``DecompressionStream``) before drawing the charts.
BUNDLE = "plotly-cartesian.min.js.gz"
PLOTLY_JS_VERSION = "4.1.1"

# The page's one script: inflate the bundle, run it as an inline script (the CSP allows inline
# scripts and nothing else: no eval, no blob: or data: sources), then draw each chart from its
# JSON with the shared template.
CLOCK = "kubesched-clock"  # a trace's meta: its x is virtual seconds, shown as a clock on hover
LOADER_JS = """
(function () {
  function clock(t) {  // virtual seconds as h:mm:ss (2d 6:00:00 past a day): _charts.clock(t, seconds=True)
    if (!isFinite(t)) { return 'not a time'; }
    var total = Math.round(t), days = Math.floor(total / 86400), rest = total - days * 86400;
    var h = Math.floor(rest / 3600), m = Math.floor(rest % 3600 / 60), s = rest % 60;
    var text = h + ':' + (m < 10 ? '0' : '') + m + ':' + (s < 10 ? '0' : '') + s;
    return days ? days + 'd ' + text : text;
  }
  function drawAll() {
    var template = JSON.parse(document.getElementById('kubesched-template').textContent);
    var config = JSON.parse(document.getElementById('kubesched-config').textContent);
    var figures = document.querySelectorAll('script.kubesched-figure');
    for (var i = 0; i < figures.length; i++) {
      var fig = JSON.parse(figures[i].textContent);
      fig.layout.template = template;
      fig.data.forEach(function (trace) {
        if (trace.meta === '""" + CLOCK + """') { trace.customdata = trace.x.map(clock); }
      });
      Plotly.newPlot(figures[i].getAttribute('data-chart'), fig.data, fig.layout, config);
    }
  }
  if (typeof DecompressionStream === 'undefined') {  // browsers before 2023 (Safari 16.4, Firefox 113)
    var note = document.createElement('p');
    note.className = 'missing';
    note.textContent = 'This browser cannot inflate the page\\'s plotly.js (it lacks DecompressionStream): ' +
      'the charts need a browser from 2023 or later.';
    document.body.insertBefore(note, document.body.firstChild);
    return;
  }
  var text = atob(document.getElementById('kubesched-plotly').textContent);
  var bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  new Response(stream).text().then(function (code) {
    var s = document.createElement('script');
    s.textContent = code;
    document.head.appendChild(s);
    drawAll();
  });
})();
"""


@functools.cache
def plotly_bundle() -> str:
    """The gzipped plotly.js bundle as base64, made once per process."""
    import base64
    from importlib.resources import files

    return base64.b64encode(files("kubesched.reporting").joinpath(BUNDLE).read_bytes()).decode("ascii")


def _script_json(value: Any) -> str:
    """JSON to sit inside a ``<script type="application/json">``: every ``<`` escaped, so no
    string in it can close the element."""
    from plotly.io.json import to_json_plotly

    return str(to_json_plotly(value)).replace("<", "\\u003c")


class Page:
    """A self-contained page of charts: plotly.js inlined once (gzipped, see :data:`BUNDLE`), a
    Content-Security-Policy that lets no request leave it; numbers each chart's div so the page is
    the same bytes on every run.  A chart is its div and its figure as JSON (data and layout); the
    template and the config, the same for every chart, are in the page once."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.parts: list[str] = []
        self.charts = 0

    def h2(self, text: str) -> None:
        self.parts.append(f"<h2>{escape(text)}</h2>")

    def missing(self, text: str) -> None:
        self.parts.append(f'<p class="missing">{escape(text)}</p>')

    def note(self, text: str) -> None:
        self.parts.append(f'<p class="note">{escape(text)}</p>')

    def raw(self, text: str) -> None:
        self.parts.append(text)

    def chart(self, fig: Any, height: int = 360, *, top: int = 50) -> str:
        self.charts += 1
        fig.update_layout(height=height, margin={"l": 60, "r": 20, "t": top, "b": 50})
        data = fig.to_dict()
        data["layout"].pop("template", None)  # the page's one template (LOADER_JS)
        div = f"chart-{self.charts}"
        return (f'<div class="kubesched-chart"><div id="{div}" style="height:{height}px; width:100%;"></div>'
                f'<script type="application/json" class="kubesched-figure" data-chart="{div}">'
                f"{_script_json(data)}</script></div>")

    def grid(self, charts: Sequence[str]) -> None:
        self.parts.append('<div class="grid">' + "".join(charts) + "</div>")

    def render(self) -> str:
        scripts = ""
        if self.charts:  # a page without charts carries no plotly.js
            scripts = (f'<script type="application/json" id="kubesched-template">{_script_json(_white_template())}</script>\n'
                       f'<script type="application/json" id="kubesched-config">{_script_json(PLOT_CONFIG)}</script>\n'
                       f'<script type="application/octet-stream" id="kubesched-plotly">{plotly_bundle()}</script>\n'
                       f"<script>{LOADER_JS}</script>\n")
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>{escape(self.title)}</title>\n<style>{STYLE}</style>\n</head><body>\n<h1>{escape(self.title)}</h1>\n"
            + "\n".join(self.parts)
            + "\n" + scripts + "</body></html>\n"
        )


@functools.cache
def _white_template() -> dict[str, Any]:
    """plotly's ``plotly_white`` template as a figure holds it, made once: setting it by name on
    each figure validates and copies it again (80% of a chart's cost); the page holds it once."""
    import plotly.graph_objects as go

    template: dict[str, Any] = go.Figure(layout={"template": "plotly_white"}).to_dict()["layout"]["template"]
    return template


#: tick steps for a time axis, in seconds
STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
         2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400)


def clock(t: float, *, seconds: bool = False) -> str:
    """Virtual seconds as ``h:mm`` (``h:mm:ss`` with ``seconds``; ``2d 6:00`` past a day)."""
    if not math.isfinite(t):  # a malformed result: say so rather than fail the page
        return "not a time"
    total = int(round(t)) if seconds else int(t // 60) * 60
    days, rest = divmod(total, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    text = f"{h}:{m:02d}" + (f":{s:02d}" if seconds else "")
    return f"{days}d {text}" if days else text


def time_ticks(end: float, ticks: int = 6) -> tuple[list[float], list[str]]:
    """Tick positions and labels for a time axis from 0 to ``end`` virtual seconds."""
    span = max(end, 1.0) if math.isfinite(end) else 1.0
    step = next((s for s in STEPS if span / s <= ticks), None)
    if step is None:  # beyond the largest step: whole days, still ``ticks`` of them at most
        step = math.ceil(span / ticks / 86400) * 86400
    n = int(math.floor(span / step)) + 1
    vals = [float(i * step) for i in range(n)]
    return vals, [clock(v, seconds=step < 60) for v in vals]


def time_axis_title(end: float) -> str:
    vals, _ = time_ticks(end)
    step = vals[1] - vals[0] if len(vals) > 1 else 60.0
    return "virtual time (h:mm:ss)" if step < 60 else "virtual time (h:mm)"


def time_axis(fig: Any, end: float, *, y_hover: str = "%{y}", row: int | None = None, col: int | None = None) -> None:
    """Make ``fig``'s x axis (or one subplot's) a clock from 0 to ``end``; every trace on it
    shows the clock time and the virtual seconds on hover."""
    end = end if math.isfinite(end) else 1.0
    vals, text = time_ticks(end)
    fig.update_xaxes(tickmode="array", tickvals=vals, ticktext=text, title_text=time_axis_title(end),
                     range=[0, max(end, 1.0)], row=row, col=col)
    for trace in fig.data:
        xs = getattr(trace, "x", None)
        if xs is None or trace.type not in ("scatter", "scattergl"):
            continue
        if trace.line.shape == "hv" and trace.mode == "lines" and trace.y is not None:
            trace.x, trace.y = _steps(list(xs), list(trace.y))
        trace.meta = CLOCK  # the page's script gives each point its clock time (customdata)
        trace.hovertemplate = ("%{customdata} (%{x:,.0f} virtual s)<br>" + y_hover
                               + "<extra>%{fullData.name}</extra>")


def _steps(xs: list[Any], ys: list[Any]) -> tuple[list[Any], list[Any]]:
    """A step line (``hv``) without the points that do not step: a capacity that changes twice in
    a day is three points and the end, not one per timeline entry.  The same line is drawn."""
    keep = [i for i in range(len(xs)) if i in (0, len(xs) - 1) or ys[i] != ys[i - 1]]
    return [xs[i] for i in keep], [ys[i] for i in keep]


def _values(trace: Any, axis: str) -> list[float]:
    vals = getattr(trace, axis, None)
    if vals is None:
        return []
    return [float(v) for v in vals if isinstance(v, int | float) and not isinstance(v, bool)]


def zero_safe(fig: Any, *, percent: bool = False) -> None:
    """An all-zero figure's y axis runs 0..1 (0..100% with ``percent``) instead of −1..1; so does a
    numeric x axis whose values are all zero (a latency distribution where every pod was bound at
    once).  A time axis (:func:`time_axis`) has its range already."""
    ys = [v for trace in fig.data for v in _values(trace, "y")]
    if all(v == 0 for v in ys):
        fig.update_yaxes(range=[0, 1], autorange=False)
        if not percent:
            fig.update_yaxes(dtick=1)
    xs = [v for trace in fig.data if getattr(trace, "orientation", None) != "h" for v in _values(trace, "x")]
    if xs and all(v == 0 for v in xs) and fig.layout.xaxis.range is None:
        fig.update_xaxes(range=[0, 1], autorange=False)


def identical(series: Sequence[tuple[str, Sequence[Any], Sequence[Any]]]) -> list[list[str]]:
    """Groups (two or more) of labels whose (x, y) series are the same numbers."""
    groups: dict[tuple[tuple[Any, ...], tuple[Any, ...]], list[str]] = {}
    for label, xs, ys in series:
        groups.setdefault((tuple(xs), tuple(ys)), []).append(label)
    return [g for g in groups.values() if len(g) > 1]


def mark_identical(fig: Any, title: str, series: Sequence[tuple[str, Sequence[Any], Sequence[Any]]]) -> list[list[str]]:
    """Title ``fig``, saying under the title which curves are identical; the later of each
    identical group are drawn dashed over the first.  Returns the groups."""
    groups = identical(series)
    first = {g[0] for g in groups}
    later = {label for g in groups for label in g[1:]}
    for trace in fig.data:
        if trace.name in first:
            trace.line.width = 5  # wide underneath: the dashed copies show on top of it
        elif trace.name in later:
            trace.line.dash = "dash"
            trace.line.width = 2
    if groups:
        said = "; ".join(" = ".join(g) for g in groups)
        fig.update_layout(title={"text": f"{title}<br><sup>identical: {said}</sup>"})
    else:
        fig.update_layout(title={"text": title})
    return groups


__all__ = ["CSP", "Page", "clock", "escape", "identical", "mark_identical", "time_axis", "time_ticks", "zero_safe"]
