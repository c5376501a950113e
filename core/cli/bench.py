"""``kubesched bench WORKLOAD|all|day``: the sizes from the flags, a progress line, one line (or
one JSON object) per workload on stdout.  The workloads and how they are timed:
:mod:`kubesched.bench`."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
from pathlib import Path

from kubesched._errors import ConfigError
from kubesched.bench import DAY_NODES, DAY_PODS, WORKLOADS, run, run_day, sized
from kubesched.cli.progress import Progress
from kubesched.config._config import SchedulerConfig
from kubesched.config._load import load_config
from kubesched.config._versions import DEFAULT_VERSION, Version, parse_version

__all__ = ["cmd_bench", "sizes_table"]


def sizes_table() -> str:
    """The default sizes of every workload, as ``bench --help`` shows them (the flags' defaults
    differ per workload)."""
    rows = [(name, f"{w.nodes:,}", f"{w.init_pods:,}", f"{w.pods:,}") for name, w in WORKLOADS.items()]
    rows.append(("day", f"{DAY_NODES:,}", "-", f"{DAY_PODS:,}"))
    header = ("workload", "--nodes", "--init-pods", "--pods")
    width = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = ["default sizes per workload (each flag given replaces one):", ""]
    for r in [header, *rows]:
        lines.append("  " + r[0].ljust(width[0]) + "".join("  " + c.rjust(w) for c, w in zip(r[1:], width[1:], strict=True)))
    return "\n".join(lines)


def cmd_bench(args: argparse.Namespace) -> int:
    """``kubesched bench WORKLOAD|all``: one line (or one JSON object) per workload."""
    if args.workload == "day":
        day = run_day(args.nodes, args.pods, backend=args.backend, emulated_version=args.emulated_version)
        print(json.dumps(day) if args.json else (
            f"day: {day['nodes']} nodes, {day['pods']} pods ({day['succeeded']} succeeded, "
            f"{day['attempts']} attempts) over {day['virtualSeconds']:g} virtual seconds in "
            f"{day['wallSeconds']:.1f}s wall, peak RSS {day['peakRssMiB']:.0f} MiB"
        ))  # fmt: skip
        return 0
    if args.workload == "all":
        names = list(WORKLOADS)
    elif args.workload in WORKLOADS:
        names = [args.workload]
    else:
        raise ConfigError(
            f"unknown workload {args.workload!r} (known: all, {', '.join(WORKLOADS)})",
            field="WORKLOAD",
        )
    _check_sizes(args)
    version = parse_version(args.emulated_version) if args.emulated_version else None
    config = getattr(args, "config", None)
    if config:
        load_config(Path(config), emulated_version=version or DEFAULT_VERSION)  # bad input: exit 2 now
    for name in names:
        w = sized(WORKLOADS[name], nodes=args.nodes, pods=args.pods, init_pods=args.init_pods,
                  record_plugin_results=args.record_plugin_results, emulated_version=version)
        if config:
            w = dataclasses.replace(w, config=functools.partial(_load_at, Path(config)))
        try:
            with Progress(f"bench {name}", total_pods=w.pods, time_label="elapsed") as progress:
                result = run(w, progress=progress if progress.active else None, backend=args.backend)
        except ConfigError as e:
            if args.workload != "all":
                raise
            print(
                json.dumps({"workload": name, "error": str(e)})
                if args.json
                else f"{name}: skipped: {e}"
            )
            continue
        if args.json:
            print(json.dumps({"name": name, **dataclasses.asdict(result)}))
        else:
            print(f"{name}: {result.text()}", flush=True)
    return 0


def _load_at(path: Path, version: Version) -> SchedulerConfig:
    """``--config``'s configuration at the workload's emulated version."""
    return load_config(path, emulated_version=version)


def _check_sizes(args: argparse.Namespace) -> None:
    for flag in ("nodes", "pods", "init_pods"):
        value = getattr(args, flag, None)
        least = 0 if flag == "init_pods" else 1
        if value is not None and value < least:
            raise ConfigError(
                f"Invalid value: {value}: must be at least {least}", field=f"--{flag.replace('_', '-')}"
            )
