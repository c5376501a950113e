"""A simulation's result for people: its numbers, its pages, and why each pod went where it did.

::

    result JSON (simulate --output json, or SimulationResult.to_json_obj())
        │ load_result(path): checked (check_result), one ConfigError line if it is no result
        ▼
    compute(result) ─► Metrics: every number and series, defined once (latency percentiles,
        │              allocation over time, node balance, nodes used, preemptions, Jobs)
        │  measure(key): each metric's name, unit and better direction; best, differences
        ▼
    render(labels, results) / render_single / render_compare ─► one self-contained HTML page
        (plotly.js inlined, a CSP that lets no request out; chart conventions: Page, time_axis,
        zero_safe, mark_identical) ─► write(path, page)

    explain(path, pod) / explain_pod(namespace, name, annotations): one pod's recorded plugin
        results (simulate --explain, run --record-plugin-results), as text

Modules: :mod:`._result_metrics`, :mod:`._measures`, :mod:`._charts`, :mod:`._pages`,
:mod:`._explain`.
"""

from kubesched.reporting._charts import (
    CSP,
    Page,
    clock,
    escape,
    identical,
    mark_identical,
    time_axis,
    time_ticks,
    zero_safe,
)
from kubesched.reporting._explain import attempts, explain, explain_attempt, explain_pod
from kubesched.reporting._measures import (
    HEADLINE,
    HIGHER,
    LOWER,
    Measure,
    best,
    differences,
    measure,
    resource_name,
)
from kubesched.reporting._pages import render, render_compare, render_single, write
from kubesched.reporting._result_metrics import (
    Metrics,
    PodRow,
    Preemption,
    check_result,
    compute,
    fmt,
    fmt_diff,
    label,
    load_result,
    percentile,
    side_by_side,
    stdev,
)

__all__ = [
    "CSP",
    "HEADLINE",
    "HIGHER",
    "LOWER",
    "Measure",
    "Metrics",
    "Page",
    "PodRow",
    "Preemption",
    "attempts",
    "best",
    "check_result",
    "clock",
    "compute",
    "differences",
    "escape",
    "explain",
    "explain_attempt",
    "explain_pod",
    "fmt",
    "fmt_diff",
    "identical",
    "label",
    "load_result",
    "mark_identical",
    "measure",
    "percentile",
    "render",
    "render_compare",
    "render_single",
    "resource_name",
    "side_by_side",
    "stdev",
    "time_axis",
    "time_ticks",
    "write",
    "zero_safe",
]
