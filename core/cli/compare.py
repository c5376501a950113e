"""``kubesched compare``: one scenario, several scheduler configurations, side by side.

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
:mod:`.metrics`'s, so they mean what they mean in the report.  The first variant is the
baseline: the table marks the better value of each metric that has a better direction
(:mod:`.measures`) and gives each other variant's difference from it.

``--seeds 1-10`` runs every variant once per seed (in this process, or with ``--dask`` /
``--scheduler`` as a sweep's cells on Dask) and reports, per metric, each variant's mean over
the seeds and its difference from the baseline paired by seed, with 95% intervals and a verdict
(:mod:`.verdicts`), as a sweep does for one scenario.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .measures import best, differences, measure
from .metrics import compute, fmt, fmt_diff, label

DEFAULT = "default"
MAX_SEEDS = 10_000
SEEDS = re.compile(r"^\d+(-\d+)?$")


@dataclass
class Variant:
    label: str
    config: str  # a path, or "" for the built-in defaults
    feature_gates: str


def variants(configs: list[str], gates: list[str]) -> list[Variant]:
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
        out.append(Variant(label, path, fg))
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


def _run_local(args: argparse.Namespace, vs: list[Variant], configs: list[Any], seeds: list[int],
               mode: str, until: float | None) -> list[dict[str, Any]]:
    """Every (variant, seed) run in this process: ``[{"variant", "seed", "result"}]``."""
    from kubesched.transports.fake import virtual_time

    from .manifests import load_manifests
    from .progress import Progress
    from .simulate import simulate

    runs = []
    for v, cfg in zip(vs, configs, strict=True):
        for seed in seeds:
            manifests = load_manifests(list(args.files), validation=mode)  # fresh: a run changes its own
            pods = sum(1 for m in manifests if m.kind == "Pod")
            what = f"compare: {v.label}" + (f", seed {seed}" if len(seeds) > 1 else "")
            with Progress(what, total_time=until, total_pods=pods) as progress:
                result = virtual_time.run(
                    functools.partial(simulate, manifests, cfg, seed=seed, until=until,
                                      progress=progress if progress.enabled else None),
                    backend=args.backend,
                )
            for warning in result.warnings:
                print(f"kubesched: warning: {v.label}: {warning}", file=sys.stderr)
            runs.append({"variant": v.label, "seed": seed, "result": result.to_json_obj()})
    return runs


def _run_dask(args: argparse.Namespace, vs: list[Variant], seeds: list[int], mode: str) -> list[dict[str, Any]]:
    """Every (variant, seed) as a sweep cell on Dask: ``[{"variant", "seed", "status", "metrics"}]``."""
    from kubesched.api._decoding import read_text

    from .sweep import check_address, connect, run_cell

    if args.scheduler:
        check_address(args.scheduler)
    if args.workers is not None and args.workers < 1:
        raise ConfigError(f"Invalid value: {args.workers}: must be at least 1", field="--workers")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ConfigError("compare --dask runs on Dask: pip install 'kubesched[sweep]'", field="--dask") from None
    files = [[f, read_text(f)] for f in args.files]
    tasks = [
        {"scenario": ", ".join(args.files), "files": files, "text": None, "generate": None, "variant": v.label,
         "configName": v.config, "config": read_text(v.config) if v.config else None,
         "featureGates": v.feature_gates, "seed": seed, "until": args.until, "validation": mode}
        for v in vs for seed in seeds
    ]
    client, cluster = connect(args.scheduler, args.workers, 5.0)
    try:
        futures = [client.submit(run_cell, t, key=f"kubesched-compare-{i}", retries=2) for i, t in enumerate(tasks)]
        outcomes = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return [{"variant": t["variant"], "seed": t["seed"], **o} for t, o in zip(tasks, outcomes, strict=True)]


def run_compare(args: argparse.Namespace) -> int:
    from .manifests import load_manifests
    from .options import parse_until, simulation_config, validation_mode, warn_line

    vs = variants(list(args.config), list(args.feature_gates))
    until = parse_until(args.until)
    seeds = parse_seeds(args.seeds) if getattr(args, "seeds", None) else None
    dask = bool(getattr(args, "dask", False) or getattr(args, "scheduler", None))
    if dask and seeds is None:
        raise ConfigError("runs on Dask only with --seeds", field="--dask" if args.dask else "--scheduler")
    # every input is checked before the first run
    configs = [simulation_config(v.config, v.feature_gates) for v in vs]
    mode = validation_mode(args.validate)
    load_manifests(list(args.files), validation=mode, warn=warn_line)  # warned once, before any run
    if seeds is not None:
        return _many_seeds(args, vs, configs, seeds, mode, until, dask)
    runs = _run_local(args, vs, configs, [args.seed], mode, until)
    labels = [v.label for v in vs]
    ms = [compute(r["result"]) for r in runs]
    if args.html:
        from . import report

        title = f"kubesched compare: {', '.join(Path(f).name for f in args.files)} (seed {args.seed})"
        report.write(args.html, report.render_compare(title, labels, ms))
    rows = [m.table() for m in ms]
    if args.output == "json":
        diffs = [None, *differences(rows)]
        doc = {
            "scenario": list(args.files),
            "seed": args.seed,
            "baseline": labels[0],
            "better": {k: measure(k).better for k in rows[0]},
            "variants": [
                {"name": v.label, "config": v.config or None, "featureGates": v.feature_gates or None,
                 "metrics": row, **({"difference": d} if d is not None else {})}
                for v, row, d in zip(vs, rows, diffs, strict=True)
            ],
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(table(labels, rows))
    return 0


def _many_seeds(args: argparse.Namespace, vs: list[Variant], configs: list[Any], seeds: list[int], mode: str,
                until: float | None, dask: bool) -> int:
    from .sweep import FIXED_COLUMNS, cell_metrics, format_value
    from .verdicts import grid, text_table

    if dask:
        runs = _run_dask(args, vs, seeds, mode)
    else:
        runs = [{"variant": r["variant"], "seed": r["seed"], "status": "ok", "metrics": cell_metrics(r["result"])}
                for r in _run_local(args, vs, configs, seeds, mode, until)]
    scenario = ", ".join(Path(f).name for f in args.files)
    columns = list(FIXED_COLUMNS)
    rows = []
    for r in runs:
        columns += [k for k in r["metrics"] if k not in columns]
        rows.append({"scenario": scenario, "variant": r["variant"], "seed": str(r["seed"]), "status": r["status"],
                     **{k: format_value(v) for k, v in r["metrics"].items()}})
    failed = [r for r in runs if r["status"] != "ok"]
    for r in failed:
        print(f"kubesched: {r['variant']} / seed {r['seed']}: {r['status']}", file=sys.stderr)
    sv = grid(columns, rows)[0]
    if args.html:
        from . import report, sweep_page

        title = f"kubesched compare: {scenario} (seeds {args.seeds})"
        report.write(args.html, sweep_page.render(title, columns, rows))
    if args.output == "json":
        doc = {
            "scenario": list(args.files),
            "seeds": seeds,
            "baseline": sv.baseline,
            "better": {k: measure(k).better for k in sv.metrics},
            "variants": [_variant_json(v, sv, runs) for v in vs],
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(text_table(sv, means=True))
    return 1 if failed else 0


def _variant_json(v: Variant, sv: Any, runs: list[dict[str, Any]]) -> dict[str, Any]:
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


__all__ = ["Variant", "parse_seeds", "run_compare", "table", "variants"]
