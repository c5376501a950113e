"""``kubesched compare``: one scenario, one seed, several scheduler configurations, side by side.

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
:mod:`.metrics`'s, so they mean what they mean in the report.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .metrics import compute, side_by_side

DEFAULT = "default"


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


def run_compare(args: argparse.Namespace) -> int:
    from kubesched.transports.fake import virtual_time

    from . import parse_until, simulation_config, validation_mode, warn_line
    from .manifests import load_manifests
    from .progress import Progress
    from .simulate import simulate

    vs = variants(list(args.config), list(args.feature_gates))
    until = parse_until(args.until)
    # every input is checked before the first run
    configs = [simulation_config(v.config, v.feature_gates) for v in vs]
    mode = validation_mode(args.validate)
    load_manifests(list(args.files), validation=mode, warn=warn_line)  # warned once, before any run
    results: list[dict[str, Any]] = []
    for v, cfg in zip(vs, configs, strict=True):
        manifests = load_manifests(list(args.files), validation=mode)  # fresh: a run changes its own
        pods = sum(1 for m in manifests if m.kind == "Pod")
        with Progress(f"compare: {v.label}", total_time=until, total_pods=pods) as progress:
            result = virtual_time.run(
                functools.partial(simulate, manifests, cfg, seed=args.seed, until=until,
                                  progress=progress if progress.enabled else None),
                backend=args.backend,
            )
        for warning in result.warnings:
            print(f"kubesched: warning: {v.label}: {warning}", file=sys.stderr)
        results.append(result.to_json_obj())
    labels = [v.label for v in vs]
    ms = [compute(r) for r in results]
    if args.html:
        from . import report

        title = f"kubesched compare: {', '.join(Path(f).name for f in args.files)} (seed {args.seed})"
        report.write(args.html, report.render_compare(title, labels, ms))
    if args.output == "json":
        doc = {
            "scenario": list(args.files),
            "seed": args.seed,
            "variants": [
                {"name": v.label, "config": v.config or None, "featureGates": v.feature_gates or None,
                 "metrics": m.table()}
                for v, m in zip(vs, ms, strict=True)
            ],
        }
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(side_by_side(labels, [m.table() for m in ms]))
    return 0
