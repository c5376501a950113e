"""``kubesched compare``: the flags, the runs (:mod:`kubesched.experiments`), the table or JSON on
stdout and the page (``--html``).  What a variant is and how the runs are judged:
:mod:`kubesched.experiments._compare`."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubesched._errors import ConfigError
from kubesched.cli.options import warn_line
from kubesched.cli.progress import Progress
from kubesched.config._versions import DEFAULT_VERSION
from kubesched.experiments import (
    CompareVariant,
    cell_metrics,
    one_seed_json,
    parse_seeds,
    run_dask,
    run_local,
    seed_comparison,
    table,
    text_table,
    variants,
)
from kubesched.scenario import load_manifests, parse_until, simulation_config, validation_mode


@contextlib.contextmanager
def _progress(what: str, until: float | None, pods: int) -> Iterator[Any]:
    """One run's progress line (a terminal only)."""
    with Progress(what, total_time=until, total_pods=pods) as progress:
        yield progress if progress.active else None


def cmd_compare(args: argparse.Namespace) -> int:
    vs = variants(list(args.config), list(args.feature_gates), list(args.emulated_version))
    until = parse_until(args.until)
    seeds = parse_seeds(args.seeds) if getattr(args, "seeds", None) else None
    dask = bool(getattr(args, "dask", False) or getattr(args, "scheduler", None))
    if dask and seeds is None:
        raise ConfigError("runs on Dask only with --seeds", field="--dask" if args.dask else "--scheduler")
    # every input is checked before the first run
    configs = [
        simulation_config(v.config, v.feature_gates, warn=warn_line, emulated_version=v.emulated_version or DEFAULT_VERSION)
        for v in vs
    ]
    mode = validation_mode(args.validate)
    load_manifests(list(args.files), validation=mode, warn=warn_line)  # warned once, before any run
    if seeds is not None:
        return _many_seeds(args, vs, configs, seeds, mode, until, dask)
    runs = run_local(args.files, vs, configs, [args.seed], validation=mode, until=until, backend=args.backend,
                     progress=_progress, warn=warn_line)  # fmt: skip
    labels = [v.label for v in vs]
    from kubesched.reporting import compute, render_compare, write

    ms = [compute(r["result"]) for r in runs]
    if args.html:
        title = f"kubesched compare: {', '.join(Path(f).name for f in args.files)} (seed {args.seed})"
        write(args.html, render_compare(title, labels, ms))
    rows = [m.table() for m in ms]
    if args.output == "json":
        doc = one_seed_json(args.files, args.seed, vs, rows)
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(table(labels, rows))
    return 0


def _many_seeds(args: argparse.Namespace, vs: list[CompareVariant], configs: list[Any], seeds: list[int], mode: str,
                until: float | None, dask: bool) -> int:
    if dask:
        runs = run_dask(args.files, vs, seeds, validation=mode, until=args.until, scheduler=args.scheduler,
                        workers=args.workers)  # fmt: skip
    else:
        runs = [{"variant": r["variant"], "seed": r["seed"], "status": "ok", "metrics": cell_metrics(r["result"])}
                for r in run_local(args.files, vs, configs, seeds, validation=mode, until=until,
                                   backend=args.backend, progress=_progress, warn=warn_line)]  # fmt: skip
    comparison = seed_comparison(args.files, seeds, runs)
    for r in comparison.failed:
        print(f"kubesched: {r['variant']} / seed {r['seed']}: {r['status']}", file=sys.stderr)
    if args.html:
        from kubesched.experiments import render_sweep_page
        from kubesched.reporting import write

        title = f"kubesched compare: {comparison.scenario} (seeds {args.seeds})"
        write(args.html, render_sweep_page(title, comparison.columns, comparison.rows,
                                           more_seeds="give compare more seeds (--seeds 1-10)"))
    if args.output == "json":
        sys.stdout.write(json.dumps(comparison.to_json(args.files, vs), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(text_table(comparison.verdicts, means=True))
    return 1 if comparison.failed else 0
