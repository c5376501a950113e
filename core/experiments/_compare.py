"""Comparing: one scenario, several scheduler configurations, side by side (``kubesched compare``).

A variant is a configuration and/or feature gates.  ``--config`` and ``--feature-gates`` may each
be given several times: given several times both, they pair up in order (and must be as many);
given once, one applies to every variant.  ``--config default`` is the built-in default profile
(unless a file of that name exists).  A variant is labelled by its configuration's file name,
followed by its feature gates when those differ between variants::

    kubesched compare examples/scenarios/packing.yaml \\
        --config default --config examples/scenarios/most-allocated-config.yaml
    kubesched compare examples/scenarios/preemption.yaml \\
        --feature-gates SchedulerAsyncPreemption=true --feature-gates SchedulerAsyncPreemption=false

Every run is a ``simulate`` of the same files with the same seed and ``--until``; the metrics are
:mod:`kubesched.reporting`'s, so they mean what they mean in the report.  The first variant is
the baseline: the table marks the better value of each metric that has a better direction and
gives each other variant's difference from it.

``--seeds 1-10`` runs every variant once per seed (in this process, or with ``--dask`` /
``--scheduler`` as a sweep's cells on Dask) and reports, per metric, each variant's mean over
the seeds and its difference from the baseline paired by seed, with 95% intervals and a verdict
(:mod:`._verdicts`), as a sweep does for one scenario.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched._errors import ConfigError
from kubesched.config._config import SchedulerConfig
from kubesched.experiments._verdicts import ScenarioVerdicts, grid
from kubesched.reporting._measures import best, differences, measure
from kubesched.reporting._result_metrics import fmt, fmt_diff, label

DEFAULT = "default"
MAX_SEEDS = 10_000
SEEDS = re.compile(r"^\d+(-\d+)?$")


@dataclass
class CompareVariant:
    """One configuration of a comparison: its label, its configuration file ("" for the
    built-in defaults) and its feature gates."""

    label: str
    config: str  # a path, or "" for the built-in defaults
    feature_gates: str


def variants(configs: list[str], gates: list[str]) -> list[CompareVariant]:
    """The variants that ``--config`` × ``--feature-gates`` describe (see the module docstring)."""
    n, k = len(configs), len(gates)
    if n > 1 and k > 1 and n != k:
        raise ConfigError(
            f"{n} --config and {k} --feature-gates: given several times both, they pair up and must be as many",
            field="--feature-gates",
        )
    count = max(n, k)
    if count < 2:
        raise ConfigError("compare needs at least two variants: give --config or --feature-gates twice or more",
                          field="--config")
    out = []
    for i in range(count):
        cfg = configs[i] if n > 1 else (configs[0] if n == 1 else DEFAULT)
        fg = gates[i] if k > 1 else (gates[0] if k == 1 else "")
        path = "" if cfg == DEFAULT and not Path(cfg).exists() else cfg
        label = Path(cfg).name if path else DEFAULT
        if k > 1:
            label += f" [{fg}]" if fg else " [no gates]"
        out.append(CompareVariant(label, path, fg))
    seen: dict[str, int] = {}
    for v in out:
        seen[v.label] = seen.get(v.label, 0) + 1
        if seen[v.label] > 1:
            v.label += f" #{seen[v.label]}"
    return out


def parse_seeds(text: str) -> list[int]:
    """``--seeds``: ``1-10``, ``1,2,5`` or ``0-4,10`` (inclusive ranges), each seed once."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not SEEDS.match(part):
            raise ConfigError(f'Invalid value: "{text}": seeds are N, A-B or a comma-separated list of them',
                              field="--seeds")
        a, _, b = part.partition("-")
        lo, hi = int(a), int(b or a)
        if hi < lo:
            raise ConfigError(f'Invalid value: "{part}": the range runs backwards', field="--seeds")
        if hi - lo + 1 + len(seeds) > MAX_SEEDS:
            raise ConfigError(f'Invalid value: "{text}": at most {MAX_SEEDS} seeds', field="--seeds")
        seeds.extend(range(lo, hi + 1))
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f'Invalid value: "{text}": a seed is given twice', field="--seeds")
    return seeds


# --- the table of one seed --------------------------------------------------------------------


def table(labels: list[str], rows: list[dict[str, Any]]) -> str:
    """The text table of one seed: a line per metric (n/a everywhere: left out), its better
    direction, one column per variant with the better value marked ``*``, then the differences."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys and any(r.get(k) is not None for r in rows)]
    diffs = differences(rows)
    diff_heads = ["difference"] if len(labels) == 2 else [f"\u0394 {lb}" for lb in labels[1:]]
    lines = [["metric", "better", *labels, *diff_heads]]
    for k in keys:
        values = [r.get(k) for r in rows]
        marked = best(k, values)
        cells = [fmt(k, v) + ("*" if i in marked else " ") for i, v in enumerate(values)]
        lines.append([label(k), measure(k).better or "\u2013", *cells, *(fmt_diff(k, d.get(k)) for d in diffs)])
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for j, line in enumerate(lines):
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    what = f"{labels[1]} \u2212 {labels[0]}" if len(labels) == 2 else f"each variant \u2212 {labels[0]}"
    out.append(f"* the better value, where the metric has a better direction; difference: {what}")
    return "\n".join(out) + "\n"


# --- running ----------------------------------------------------------------------------------

RunProgress = Callable[[float, int], None]
ProgressFactory = Callable[[str, float | None, int], AbstractContextManager[RunProgress | None]]
"""``progress(what, until, pods)``: a context for one run, giving the run's progress callback
(or None); ``kubesched compare`` draws a progress line with it."""


@contextlib.contextmanager
def _no_progress(what: str, until: float | None, pods: int) -> Iterator[RunProgress | None]:
    yield None


def run_local(
    files: Sequence[str],
    vs: Sequence[CompareVariant],
    configs: Sequence[SchedulerConfig],
    seeds: Sequence[int],
    *,
    validation: str = "Strict",
    until: float | None = None,
    backend: str = "trio",
    progress: ProgressFactory | None = None,
    warn: Callable[[str], object] | None = None,
) -> list[dict[str, Any]]:
    """Every (variant, seed) run in this process: ``[{"variant", "seed", "result"}]`` (the
    result as its JSON object).  ``warn`` is told each run's warnings, prefixed with its label."""
    from kubesched.scenario._manifests import load_manifests
    from kubesched.simulation._simulation import Simulation

    progress = progress or _no_progress
    runs = []
    for v, cfg in zip(vs, configs, strict=True):
        for seed in seeds:
            manifests = load_manifests(list(files), validation=validation)  # fresh: a run changes its own
            pods = sum(1 for m in manifests if m.kind == "Pod")
            what = f"compare: {v.label}" + (f", seed {seed}" if len(seeds) > 1 else "")
            with progress(what, until, pods) as step:
                sim = Simulation(manifests, cfg, seed=seed, until=until, progress=step)
                result = sim.run_in_virtual_time(backend)
            if warn is not None:
                for warning in result.warnings:
                    warn(f"{v.label}: {warning}")
            runs.append({"variant": v.label, "seed": seed, "result": result.to_json_obj()})
    return runs


def run_dask(
    files: Sequence[str],
    vs: Sequence[CompareVariant],
    seeds: Sequence[int],
    *,
    validation: str = "Strict",
    until: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
) -> list[dict[str, Any]]:
    """Every (variant, seed) as a sweep cell on Dask (a LocalCluster of ``workers`` processes,
    or the scheduler at ``scheduler``): ``[{"variant", "seed", "status", "metrics"}]``."""
    from kubesched.api._decoding import read_text
    from kubesched.experiments._sweep import check_address, connect, run_cell

    if scheduler:
        check_address(scheduler)
    if workers is not None and workers < 1:
        raise ConfigError(f"Invalid value: {workers}: must be at least 1", field="--workers")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ConfigError("compare --dask runs on Dask: pip install 'kubesched[sweep]'", field="--dask") from None
    texts = [[f, read_text(f)] for f in files]
    tasks = [
        {"scenario": ", ".join(files), "files": texts, "text": None, "generate": None, "variant": v.label,
         "configName": v.config, "config": read_text(v.config) if v.config else None,
         "featureGates": v.feature_gates, "seed": seed, "until": until, "validation": validation}
        for v in vs for seed in seeds
    ]  # fmt: skip
    client, cluster = connect(scheduler, workers, 5.0)
    try:
        futures = [client.submit(run_cell, t, key=f"kubesched-compare-{i}", retries=2) for i, t in enumerate(tasks)]
        outcomes = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return [{"variant": t["variant"], "seed": t["seed"], **o} for t, o in zip(tasks, outcomes, strict=True)]


# --- what a comparison gives ------------------------------------------------------------------


def one_seed_json(files: Sequence[str], seed: int, vs: Sequence[CompareVariant], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``compare --output json`` of one seed: each variant's metrics and its difference from the
    baseline (the first)."""
    diffs = [None, *differences(rows)]
    return {
        "scenario": list(files),
        "seed": seed,
        "baseline": vs[0].label,
        "better": {k: measure(k).better for k in rows[0]},
        "variants": [
            {"name": v.label, "config": v.config or None, "featureGates": v.feature_gates or None,
             "metrics": row, **({"difference": d} if d is not None else {})}
            for v, row, d in zip(vs, rows, diffs, strict=True)
        ],
    }  # fmt: skip


@dataclass
class SeedComparison:
    """The runs of a comparison over several seeds, as a sweep's rows of one scenario, and their
    verdicts (each variant against the first, paired by seed)."""

    scenario: str
    seeds: list[int]
    runs: list[dict[str, Any]]
    """``[{"variant", "seed", "status", "metrics"}]``, in variant then seed order."""
    columns: list[str]
    rows: list[dict[str, str]]
    verdicts: ScenarioVerdicts

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.runs if r["status"] != "ok"]

    def to_json(self, files: Sequence[str], vs: Sequence[CompareVariant]) -> dict[str, Any]:
        """``compare --seeds --output json``."""
        sv = self.verdicts
        return {
            "scenario": list(files),
            "seeds": self.seeds,
            "baseline": sv.baseline,
            "better": {k: measure(k).better for k in sv.metrics},
            "variants": [_variant_json(v, sv, self.runs) for v in vs],
        }


def seed_comparison(files: Sequence[str], seeds: list[int], runs: list[dict[str, Any]]) -> SeedComparison:
    """The rows and verdicts of ``runs`` (from :func:`run_dask`, or :func:`run_local` with each
    result turned into a cell's metrics)."""
    from kubesched.experiments._sweep import FIXED_COLUMNS, format_value

    scenario = ", ".join(Path(f).name for f in files)
    columns = list(FIXED_COLUMNS)
    rows = []
    for r in runs:
        columns += [k for k in r["metrics"] if k not in columns]
        rows.append({"scenario": scenario, "variant": r["variant"], "seed": str(r["seed"]), "status": r["status"],
                     **{k: format_value(v) for k, v in r["metrics"].items()}})  # fmt: skip
    return SeedComparison(scenario, seeds, runs, columns, rows, grid(columns, rows)[0])


def _variant_json(v: CompareVariant, sv: ScenarioVerdicts, runs: list[dict[str, Any]]) -> dict[str, Any]:
    def iv(i: Any) -> dict[str, Any] | None:
        return None if i is None else {"mean": i.mean, "low": i.low, "high": i.high, "n": i.n}

    out: dict[str, Any] = {
        "name": v.label, "config": v.config or None, "featureGates": v.feature_gates or None,
        "runs": [{"seed": r["seed"], "status": r["status"], "metrics": r["metrics"]}
                 for r in runs if r["variant"] == v.label],
        "metrics": {k: iv(sv.mean(k, v.label)) for k in sv.metrics},
    }
    if v.label != sv.baseline:
        diff: dict[str, Any] = {}
        for k in sv.metrics:
            verdict = sv.verdict(k, v.label)
            if verdict is None:
                diff[k] = None
                continue
            d = verdict.difference
            diff[k] = {**(iv(d.interval) or {}), "higher": d.higher, "lower": d.lower, "outcome": verdict.outcome,
                       "verdict": verdict.text}
        out["difference"] = diff
    return out


__all__ = [
    "CompareVariant", "SeedComparison", "one_seed_json", "parse_seeds", "run_dask", "run_local", "seed_comparison",
    "table", "variants",
]
