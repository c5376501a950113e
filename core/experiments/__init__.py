"""Experiments: many simulations, judged against a baseline.

::

    compare   variants(configs, gates) ─► run_local (this process) or run_dask (a sweep's cells)
              one seed:  each variant's metrics, the better value, the difference from the first
              seeds:     seed_comparison ─► means and paired differences with 95% intervals
    sweep     load_sweep(SWEEP.yaml) ─► Sweep.cells() (scenario x variant x seed) ─► run_sweep on
              a Dask client: run_cell per cell (simulate_cell, then cell_metrics) ─► results.csv,
              results.parquet, sweep.html (render_sweep_page)
    verdicts  grid(columns, rows) ─► ScenarioVerdicts per scenario: mean(metric, variant),
              verdict(metric, variant) over the paired statistics (interval, paired, Verdict)

Modules: :mod:`._compare`, :mod:`._sweep`, :mod:`._verdicts` over :mod:`._stats`, and
:mod:`._sweep_page` (the page of a sweep's verdicts).
"""

from kubesched.experiments._compare import (
    CompareVariant,
    SeedComparison,
    one_seed_json,
    parse_seeds,
    run_dask,
    run_local,
    seed_comparison,
    table,
    variants,
)
from kubesched.experiments._stats import (
    Difference,
    Interval,
    Verdict,
    interval,
    mean_text,
    paired,
    t_cdf,
    t_quantile,
)
from kubesched.experiments._sweep import (
    FIXED_COLUMNS,
    Cell,
    CellProgress,
    Results,
    Scenario,
    Sweep,
    SweepReport,
    Variant,
    cell_metrics,
    check_address,
    connect,
    format_value,
    load_sweep,
    run_cell,
    run_sweep,
    simulate_cell,
)
from kubesched.experiments._sweep_page import render as render_sweep_page
from kubesched.experiments._verdicts import ScenarioVerdicts, grid, summary_text, text_table

__all__ = [
    "FIXED_COLUMNS",
    "Cell",
    "CellProgress",
    "CompareVariant",
    "Difference",
    "Interval",
    "Results",
    "Scenario",
    "ScenarioVerdicts",
    "SeedComparison",
    "Sweep",
    "SweepReport",
    "Variant",
    "Verdict",
    "cell_metrics",
    "check_address",
    "connect",
    "format_value",
    "grid",
    "interval",
    "load_sweep",
    "mean_text",
    "one_seed_json",
    "paired",
    "parse_seeds",
    "render_sweep_page",
    "run_cell",
    "run_dask",
    "run_local",
    "run_sweep",
    "seed_comparison",
    "simulate_cell",
    "summary_text",
    "t_cdf",
    "t_quantile",
    "table",
    "text_table",
    "variants",
]
