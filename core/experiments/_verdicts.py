"""From rows of (scenario, variant, seed, metrics) to verdicts: each variant against a baseline.

The rows are a sweep's ``results.csv`` (or ``compare --seeds``'s runs, in the same shape): one per
cell, metric values as text.  Per scenario, on its own::

    rows ──► ScenarioVerdicts: metric → variant → seed → value (ok rows, numbers only)
                 │ baseline: the first variant, or the one named (SWEEP.yaml ``baseline:``)
                 ├─► mean(metric, variant)     the mean over seeds and its 95% interval
                 └─► verdict(metric, variant)  variant − baseline, paired by seed (:mod:`._stats`)

:func:`text_table` prints one scenario's verdicts (``sweep --summary``, ``compare --seeds``); the
sweep page (:mod:`._sweep_page`) draws them.  Names, units and better directions come from
:mod:`kubesched.reporting._measures`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.experiments._stats import (
    Interval,
    Verdict,
    decimals,
    interval,
    interval_values,
    mean_text,
    paired,
    same,
)
from kubesched.reporting._measures import HEADLINE, measure

FIXED_COLUMNS = ("scenario", "variant", "seed", "status")
DIGEST_COLUMN = "cell"


def number(text: str | None) -> float | None:
    """A CSV cell as a finite number, or None ('' and text that is no number)."""
    try:
        v = float(text or "")
    except ValueError:
        return None
    return v if math.isfinite(v) else None


@dataclass
class ScenarioVerdicts:
    """One scenario's values, every variant against ``baseline``."""

    scenario: str
    baseline: str
    variants: list[str]  # every variant, in the sweep's order (the baseline among them)
    seeds: list[str]
    metrics: list[str] = field(default_factory=list)  # the columns with a number in some ok row
    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # metric, variant, seed
    failed: int = 0  # cells of this scenario that did not run

    @property
    def others(self) -> list[str]:
        return [v for v in self.variants if v != self.baseline]

    def series(self, metric: str, variant: str) -> dict[str, float]:
        return self.values.get(metric, {}).get(variant, {})

    def mean(self, metric: str, variant: str) -> Interval | None:
        return interval(list(self.series(metric, variant).values()))

    def places(self, metric: str) -> int:
        """The decimals of a row of means: every variant's mean and bounds (shown scaled), so that
        two that differ print differently (a baseline ``11.6`` beside ``11.4 [10.9, 11.9]``)."""
        scale = measure(metric).scale
        return decimals(*(x for v in self.variants for x in interval_values(self.mean(metric, v), scale)))

    def verdict(self, metric: str, variant: str) -> Verdict | None:
        d = paired(self.series(metric, self.baseline), self.series(metric, variant))
        if d is None:
            return None
        m = measure(metric)
        return Verdict(variant, m.name, m.better, d, m.scale)

    def same_values(self, metric: str, variant: str) -> bool:
        """``variant``'s ``metric`` is the baseline's: on the same seeds, the same values."""
        base, mine = self.series(metric, self.baseline), self.series(metric, variant)
        return base.keys() == mine.keys() and all(same(base[s], mine[s]) for s in base)

    def same_as_baseline(self, variant: str) -> bool:
        """``variant`` gave the baseline's results: every metric on the same seeds, the same values."""
        return all(self.same_values(metric, variant) for metric in self.metrics)

    def same_for_all(self, metric: str) -> bool:
        """Every variant's ``metric`` is the baseline's, seed by seed (a chart of it would be flat)."""
        return all(self.same_values(metric, v) for v in self.others)

    @property
    def identical(self) -> bool:
        """Every variant gave the same results on every seed (and some cell ran): nothing to compare."""
        return bool(self.metrics) and len(self.variants) > 1 and all(self.same_as_baseline(v) for v in self.others)

    def headline(self) -> list[str]:
        """The metrics the summary table and the charts show (those of them with data here)."""
        return [k for k in HEADLINE if k in self.metrics]


def grid(columns: Sequence[str], rows: Sequence[dict[str, str]], baseline: str | None = None) -> list[ScenarioVerdicts]:
    """Every scenario's verdicts, in the rows' order; the baseline is the first variant unless named."""
    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    base = baseline if baseline in variants else (variants[0] if variants else "")
    metric_cols = [c for c in columns if c not in FIXED_COLUMNS and c != DIGEST_COLUMN]
    out = []
    for s in scenarios:
        mine = [r for r in rows if r["scenario"] == s]
        sv = ScenarioVerdicts(s, base, variants, list(dict.fromkeys(r["seed"] for r in mine)))
        sv.failed = sum(1 for r in mine if r.get("status") != "ok")
        for c in metric_cols:
            per: dict[str, dict[str, float]] = {}
            for r in mine:
                v = number(r.get(c)) if r.get("status") == "ok" else None
                if v is not None:
                    per.setdefault(r["variant"], {})[r["seed"]] = v
            if per:
                sv.metrics.append(c)
                sv.values[c] = per
        out.append(sv)
    return out


def _table(lines: list[list[str]], right_from: int) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for j, line in enumerate(lines):
        cells = [c.ljust(w) if i < right_from else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out) + "\n"


def text_table(sv: ScenarioVerdicts, *, means: bool = False) -> str:
    """One scenario's verdicts as a text table: a line per metric, the baseline's mean, then each
    other variant's difference (and, with ``means``, each variant's own mean)."""
    header = ["metric", "better", f"{sv.baseline} (baseline)"]
    for v in sv.others:
        if means:
            header.append(v)
        header.append(f"{v} \u2212 {sv.baseline}")
    lines = [header]
    for k in sv.metrics:
        m = measure(k)
        places = sv.places(k) if means else None
        line = [m.name, m.better or "\u2013", mean_text(sv.mean(k, sv.baseline), m.scale, places)]
        for v in sv.others:
            if means:
                line.append(mean_text(sv.mean(k, v), m.scale, places))
            verdict = sv.verdict(k, v)
            line.append(verdict.short if verdict is not None else "no paired seeds")
        lines.append(line)
    seeds, variants = len(sv.seeds), len(sv.variants)
    head = (f"{sv.scenario}: {variants} variant{'' if variants == 1 else 's'} \u00d7 "
            f"{seeds} seed{'' if seeds == 1 else 's'}; each variant minus {sv.baseline}, paired by seed: "
            "mean [95% interval]")
    if sv.failed:
        head += f"; {sv.failed} cell{'' if sv.failed == 1 else 's'} failed"
    if not sv.metrics:
        return head + "\nno cell of this scenario ran\n"
    return head + "\n" + _table(lines, 99)


def summary_text(columns: Sequence[str], rows: Sequence[dict[str, str]], baseline: str | None = None) -> str:
    """``sweep --summary``: every scenario's verdict table, one after another."""
    return "\n".join(text_table(sv) for sv in grid(columns, rows, baseline))


__all__ = ["ScenarioVerdicts", "grid", "number", "summary_text", "text_table"]
