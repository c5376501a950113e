"""The HTML report and ``kubesched report``, opened in a real browser (Debian's headless chromium).

One page load per kind of page (the report of one run, the comparison of several): no console
message at all (an error, or a request the page's Content-Security-Policy blocked, shows there),
every chart drawn by plotly in the rendered DOM, and a screenshot in the test's folder.  chromium
is installed by ``make test``; where it is missing these tests fail, they never skip.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubesched.cli import main

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "lifecycle-result.json"
EXAMPLES = HERE.parent.parent / "examples" / "scenarios"


@dataclass
class Loaded:
    dom: str
    console: list[str]
    screenshot: Path


def open_in_chromium(page: Path, tmp_path: Path, name: str, *, width: int = 1280) -> Loaded:
    """Load ``page`` once (in a window ``width`` pixels wide): its rendered DOM, every console
    message, and a screenshot."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed: `make test` installs Debian's chromium (apt-get install chromium)")
    shot = tmp_path / f"{name}.png"
    proc = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-extensions", "--mute-audio", f"--user-data-dir={tmp_path / f'{name}-profile'}",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", f"--window-size={width},4000",
         f"--screenshot={shot}", "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return Loaded(proc.stdout, console, shot)


# Run in the page: every word of every table header cell that the layout broke over two lines
# (a word whose range has boxes on more than one line), as "header text: word".  A word runs
# between spaces or hyphens: "lifecycle-result.json" may wrap after its hyphen, as text does.
SPLIT_WORDS_JS = """
var split = [];
document.querySelectorAll('th').forEach(function (th) {
  var walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (var node = walker.nextNode(); node; node = walker.nextNode()) {
    var re = /[^\\s-]+/g, m;  // a word: between spaces or hyphens (a line may break after a hyphen)
    while ((m = re.exec(node.data)) !== null) {
      var range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      var tops = {};
      Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width > 0) tops[Math.round(r.top)] = 1; });
      if (Object.keys(tops).length > 1) split.push(th.textContent.trim() + ': ' + m[0]);
    }
  }
});
document.body.setAttribute('data-headers', String(document.querySelectorAll('th').length));
document.body.setAttribute('data-split-words', JSON.stringify(split));
"""


def split_header_words(page: Path, tmp_path: Path, name: str, width: int) -> tuple[int, list[str]]:
    """The header cells of ``page`` and the header words chromium breaks in a window ``width``
    pixels wide (a copy of the page with :data:`SPLIT_WORDS_JS` at its end)."""
    import html

    probe = tmp_path / f"{name}-probe.html"
    probe.write_text(page.read_text().replace("</body>", f"<script>{SPLIT_WORDS_JS}</script></body>"))
    dom = open_in_chromium(probe, tmp_path, name, width=width).dom
    found = re.search(r'<body data-headers="(\d+)" data-split-words="([^"]*)"', dom)
    assert found is not None, dom[:500]
    return int(found[1]), json.loads(html.unescape(found[2]))


def charts(dom: str) -> list[str]:
    """The rendered DOM of each chart of the page, one string per chart."""
    return dom.split('class="kubesched-chart"')[1:]


def assert_drawn(loaded: Loaded, expected_charts: int) -> None:
    assert loaded.console == []
    found = charts(loaded.dom)
    assert len(found) == expected_charts
    for i, chunk in enumerate(found, 1):
        # plotly marks a plotted div js-plotly-plot and draws its axes and traces in main-svg
        assert "js-plotly-plot" in chunk.split("</script>")[0], f"chart {i} was not plotted"
        assert 'class="main-svg"' in chunk, f"chart {i} has no svg"
        assert re.search(r'class="(scatterlayer|barlayer|heatmaplayer|trace)', chunk), f"chart {i} has no trace"
    assert loaded.screenshot.stat().st_size > 10_000


def test_report_of_one_run_draws_every_chart_in_a_browser(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(FIXTURE), "-o", str(out)]) == 0
    loaded = open_in_chromium(out, tmp_path, "report")
    # allocation cpu, memory, pods; pending/running; nodes used over the run; latency; pods per node
    # over the run; per-node heatmap at the end; preemptions; Jobs
    assert_drawn(loaded, 10)
    # time reads as a clock, the exact virtual seconds on hover
    first = charts(loaded.dom)[0]
    assert "virtual time (h:mm)" in first and ">0:05<" in first and ">0:20<" in first
    assert "virtual s" in first.split("</script>")[0]  # the hover template
    nodes_used = next(c for c in charts(loaded.dom) if "nodes holding a pod" in c)
    assert "peak 3, mean 3.00, at the end 3" in nodes_used  # the mean as the summary table gives it
    assert 'class="missing"' not in loaded.dom
    table = loaded.dom.split('id="pods"')[1].split("</table>")[0]
    assert table.count("<tr>") == 1 + 10  # header + every pod
    # why huge is pending: its whole last FailedScheduling message, the row's last cell
    # (FitError.Error(), pkg/scheduler/framework/types.go, appends DefaultPreemption's FitError
    # text with " %v": one period)
    assert (
        "<td>0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.</td></tr>"
    ) in table
    assert 'id="pod-search"' in loaded.dom


def test_comparison_page_draws_every_chart_in_a_browser(tmp_path: Path) -> None:
    other = json.loads(FIXTURE.read_text())
    for entry in other["timeline"]:
        entry["allocated"]["cpu"] = entry["allocated"]["cpu"] // 2
    for p in other["pods"]:
        if p["scheduledAt"] is not None:
            p["scheduledAt"] += 5.0
    b = tmp_path / "b.json"
    b.write_text(json.dumps(other))
    out = tmp_path / "compare.html"
    assert main(["report", str(FIXTURE), str(b), "-o", str(out)]) == 0
    loaded = open_in_chromium(out, tmp_path, "compare")
    # allocation cpu, memory, pods; pending; running; nodes used; latency; pods per node over the run;
    # per-node cpu, memory at the end; preemptions; Jobs
    assert_drawn(loaded, 12)
    # what b.json left alone is drawn twice and said to be the same, not one line hiding another
    same = [c for c in charts(loaded.dom) if "identical: lifecycle-result.json = b.json" in c]
    for title in ("pending pods", "running pods", "memory allocated / capacity", "victims so far"):
        assert any(title in c for c in same), title
    cpu = next(c for c in charts(loaded.dom) if "cpu allocated / capacity" in c)
    assert "identical:" not in cpu  # b.json halved cpu: two curves, no note
    # two variants overlaid: each chart has a legend entry per variant
    assert all(chunk.count('class="legendtext"') >= 2 for chunk in charts(loaded.dom)
               if 'class="legendtext"' in chunk)
    assert "lifecycle-result.json" in loaded.dom and "b.json" in loaded.dom
    headers, split = split_header_words(out, tmp_path, "compare-narrow", 700)
    assert headers >= 5 and split == []  # header words never break, even narrow


# Run in the page: once the first chart is drawn, its first trace's hover clock (customdata) and x
CLOCK_JS = """
(function wait() {
  var gd = document.getElementById('chart-1');
  if (!gd || !gd.data) { setTimeout(wait, 50); return; }
  document.body.setAttribute('data-clock', JSON.stringify(gd.data.map(function (t) { return [t.x, t.customdata]; })));
})();
"""


def test_time_hover_reads_as_a_clock(tmp_path: Path) -> None:
    """The clock time of each point on hover is made in the page (not carried per point), as
    :func:`kubesched.reporting.clock` makes it; a step line keeps only the points that step."""
    import html

    from kubesched.reporting import clock

    out = tmp_path / "report.html"
    assert main(["report", str(FIXTURE), "-o", str(out)]) == 0
    out.write_text(out.read_text().replace("</body>", f"<script>{CLOCK_JS}</script></body>"))
    dom = open_in_chromium(out, tmp_path, "clock").dom
    found = re.search(r'data-clock="([^"]*)"', dom)
    assert found is not None
    (cap_x, cap_clock), (alloc_x, alloc_clock) = json.loads(html.unescape(found[1]))  # cpu: capacity, allocated
    assert alloc_clock == [clock(x, seconds=True) for x in alloc_x] and len(alloc_x) >= 5
    assert cap_clock == [clock(x, seconds=True) for x in cap_x]
    timeline = json.loads(FIXTURE.read_text())["timeline"]
    for xs, key in ((cap_x, "capacity"), (alloc_x, "allocated")):
        ys = [e[key]["cpu"] for e in timeline]
        steps = sum(1 for i in range(1, len(ys) - 1) if ys[i] != ys[i - 1])
        assert len(xs) == 2 + steps, key  # the first point, each step, the end
    assert len(cap_x) == 2 < len(timeline)  # a capacity that never changes: from the start to the end


def test_the_split_word_check_sees_a_split_word(tmp_path: Path) -> None:
    """The word check can fail: a header that may break anywhere, in a narrow column, is seen."""
    page = tmp_path / "narrow.html"
    page.write_text('<!DOCTYPE html><html><body><table style="width:60px; table-layout:fixed">'
                    '<tr><th style="overflow-wrap:anywhere">preemption victims</th></tr></table></body></html>')
    headers, split = split_header_words(page, tmp_path, "narrow", 800)
    assert headers == 1 and split == ["preemption victims: preemption"]


def test_the_browser_check_sees_errors_and_blocked_requests(tmp_path: Path) -> None:
    """The two checks above can fail: a script error and a request to the network are seen."""
    from kubesched.reporting import CSP

    page = tmp_path / "bad.html"
    page.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"></head>'
        '<body><img src="https://example.com/x.png"><script>undefinedFunction();</script></body></html>'
    )
    loaded = open_in_chromium(page, tmp_path, "bad")
    text = "\n".join(loaded.console)
    assert "Uncaught ReferenceError" in text
    assert "violates the following Content Security Policy" in text
    assert charts(loaded.dom) == []


def test_simulate_html_of_an_example_is_self_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real run (no timeline yet in simulate's output): the sections it cannot draw say so."""
    out = tmp_path / "r.html"
    assert main(["simulate", str(EXAMPLES / "preemption.yaml"), "--html", str(out), "--output", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    page = out.read_text()
    from kubesched.reporting._charts import plotly_bundle

    bundle = plotly_bundle()
    # plotly.js inlined once (gzipped, base64), and one call draws every chart from its JSON
    assert page.count(bundle) == 1 and page.count("Plotly.newPlot") == 1
    assert len(page.encode()) < 1_500_000  # was 4.9 MB with plotly.py's full bundle
    ours = page.replace(bundle, "")
    assert re.search(r"""(src|href)=["']https?:""", ours) is None
    assert "Content-Security-Policy" in page
    has_timeline = "timeline" in result
    assert ("no timeline in this result" in page) != has_timeline
    assert page.count('class="kubesched-chart"') >= 2  # the per-node heatmap and the preemption
    pods = page.split('id="pods"')[1].split("</table>")[0]
    assert pods.count("<tr>") == 1 + len(result["pods"])
    assert "default/urgent" in pods and "Deleted" in pods  # the victim


def test_the_pages_plotly_js_is_the_version_plotly_py_writes_figures_for() -> None:
    """The pages carry plotly.js's cartesian bundle, not plotly.py's full one: the same plotly.js
    release (an upgrade of plotly.py must bring the bundle along), and every trace type a page draws."""
    import base64
    import gzip

    from plotly.offline import get_plotlyjs_version

    from kubesched.reporting._charts import PLOTLY_JS_VERSION, plotly_bundle

    code = gzip.decompress(base64.b64decode(plotly_bundle())).decode()
    assert get_plotlyjs_version() == PLOTLY_JS_VERSION
    assert code.startswith(f"/**\n* plotly.js (cartesian - minified) v{PLOTLY_JS_VERSION}\n")
    assert "window.Plotly = Plotly;" in code
    for trace in ("scatter", "bar", "box", "heatmap", "histogram"):
        assert re.search(rf'moduleType:"trace",name:"{trace}"', code), trace


def test_report_of_the_same_result_is_the_same_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert main(["report", str(FIXTURE), "-o", str(a)]) == 0
    assert main(["report", str(FIXTURE), "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(None, "r.json: cannot read the result: No such file or directory", id="missing file"),
        pytest.param("{oops", "r.json: not a kubesched result: not JSON", id="not JSON"),
        pytest.param('{"apiVersion": "v1", "kind": "Pod"}', "r.json, pods: not a kubesched result: no 'pods' section",
                     id="a manifest, not a result"),
    ],
)
def test_report_of_something_else_is_one_line_and_exit_2(
    tmp_path: Path, content: str | None, message: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    if content is not None:
        Path("r.json").write_text(content)
    assert main(["report", "r.json", "-o", "out.html"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"kubesched: error: {message}")
    assert not Path("out.html").exists()


def test_report_to_an_unwritable_path_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(FIXTURE), "-o", str(tmp_path / "no" / "such" / "dir.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the report" in err
