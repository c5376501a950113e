"""The ``kubesched`` command line: ``simulate``, ``explain``, ``report``, ``compare``, ``generate``,
``trace``, ``sweep``, ``bench``, ``run``, ``fake-apiserver``, ``snapshot`` and ``whatif``.

Bad input is one line on stderr naming the file, the document and the field, and exit code 2.

This package is the application layer: it parses arguments, calls the library and prints; the
library and the engine (the rest of ``kubesched``) never import it.  What each command does is
a library package's: ``simulate`` :mod:`kubesched.simulation` (its input :mod:`kubesched.scenario`),
``explain`` and ``report`` :mod:`kubesched.reporting`, ``compare`` and ``sweep``
:mod:`kubesched.experiments`, ``generate`` :mod:`kubesched.generate`, ``trace``
:mod:`kubesched.traces`, ``snapshot`` :mod:`kubesched.snapshot`, ``whatif``
:mod:`kubesched.scenario`, ``bench`` :mod:`kubesched.bench`, ``run`` and ``fake-apiserver``
:mod:`kubesched.service`.  Here: the parser and one ``cmd_*`` per command, a module for each
command with flags or output of its own (:mod:`.compare`, :mod:`.sweep`, :mod:`.generate`,
:mod:`.trace`, :mod:`.snapshot`, :mod:`.whatif`, :mod:`.bench`, :mod:`.fake_apiserver`), the
progress lines (:mod:`.progress`) and the warning line (:mod:`.options`).
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml

from kubesched._errors import ConfigError
from kubesched._outputs import open_output, write_output
from kubesched.api._durations import parse_duration
from kubesched.cli.options import PROG as PROG
from kubesched.cli.options import warn_line as warn_line
from kubesched.config._versions import DEFAULT_VERSION, VERSION_RANGE
from kubesched.runtime._framework import PluginError
from kubesched.scenario import (
    MAX_PODS,
    check_profiles,
    load_config_file,
    load_documents,
    load_manifests,
    parse_until,
    simulation_config,
    validation_mode,
)
from kubesched.validation._validation import go_quote


def cmd_simulate(args: argparse.Namespace) -> int:
    from kubesched.cli.progress import Progress
    from kubesched.scenario import DEMO_CONFIG, DEMO_MANIFESTS
    from kubesched.simulation import Simulation

    files = list(args.files)
    config_path = args.config or ""
    texts: dict[str, str] = {}
    if not files:  # the built-in demo
        files = ["<demo>/cluster.yaml"]
        texts[files[0]] = DEMO_MANIFESTS
        if not config_path:
            config_path = "<demo>/config.yaml"
            texts[config_path] = DEMO_CONFIG
    manifests = load_manifests(
        files, texts, validation=validation_mode(args.validate), warn=warn_line, max_pods=args.max_pods
    )
    cfg = simulation_config(config_path, args.feature_gates or "", texts.get(config_path), warn=warn_line,
                            emulated_version=args.emulated_version or DEFAULT_VERSION)
    until = parse_until(args.until)
    pods = sum(1 for m in manifests if m.kind == "Pod")
    with Progress("simulate", total_time=until, total_pods=pods) as progress:
        sim = Simulation(
            manifests, cfg, seed=args.seed, until=until, progress=progress if progress.active else None,
            explain=args.explain, max_pods=args.max_pods, metrics=args.metrics is not None, events=args.events,
        )  # fmt: skip
        result = sim.run_in_virtual_time(args.backend)
    if args.metrics is not None and result.metrics is not None:
        try:
            write_output(args.metrics, result.metrics)
        except OSError as e:
            raise ConfigError(f"cannot write the metrics: {e.strerror or e}", source=args.metrics) from None
    if args.report:
        try:
            with open_output(args.report) as out_file:
                result.write_json(out_file.write)
        except OSError as e:
            raise ConfigError(f"cannot write the report: {e.strerror or e}", source=args.report) from None
    if args.html:
        from kubesched import reporting

        name = ", ".join(Path(f).name for f in files)
        reporting.write(args.html, reporting.render([name], [result.to_json_obj()]))
    for warning in result.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    output = args.output or (None if args.html else "json")
    if output == "json":  # streamed: a 100,000-pod report is never one string in memory
        result.write_json(sys.stdout.write)
    elif output == "text":
        sys.stdout.write(result.to_text())
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from kubesched import reporting

    results = [reporting.load_result(path) for path in args.results]
    reporting.write(args.o, reporting.render(_labels(args.results), results))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from kubesched.cli.compare import cmd_compare as compare

    return compare(args)


def _labels(paths: Sequence[str]) -> list[str]:
    """Each path's file name, made unique with the parent folder (or a number) where needed."""
    names = [Path(p).name or p for p in paths]
    for i, n in enumerate(names):
        if names.count(n) > 1:
            names[i] = str(Path(paths[i]).parent.name + "/" + n) if Path(paths[i]).parent.name else n
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return out


def cmd_bench(args: argparse.Namespace) -> int:
    from kubesched.cli.bench import cmd_bench as bench

    return bench(args)


def cmd_run(args: argparse.Namespace) -> int:
    import anyio

    from kubesched.service import (
        RunOptions,
        apply_config_sections,
        configure_logging,
        run_scheduler,
    )

    configure_logging(args.verbosity, args.log_level, stream=sys.stderr)
    config_path = args.config or ""
    cfg = load_config_file(config_path, args.feature_gates or "", warn=warn_line,
                           emulated_version=args.emulated_version or DEFAULT_VERSION)
    check_profiles(cfg, config_path)
    opts = RunOptions(seed=args.seed, record_plugin_results=args.record_plugin_results)
    if config_path:
        apply_config_sections(opts, load_documents(config_path)[0][1], config_path)
    for flag, attr in (("kubeconfig", "kubeconfig"), ("server", "server"), ("context", "context"),
                       ("kube_api_qps", "qps"), ("kube_api_burst", "burst"),
                       ("lease_name", "lease_name"), ("lease_namespace", "lease_namespace"),
                       ("metrics_port", "metrics_port"), ("metrics_address", "metrics_address")):
        value = getattr(args, flag)
        if value is not None:
            setattr(opts, attr, value)
    if args.leader_elect is not None:
        opts.leader_elect = args.leader_elect
    opts.take_over_default_scheduler = args.take_over_default_scheduler
    opts.built_in_profile = not config_path
    return anyio.run(functools.partial(run_scheduler, opts, cfg), backend=args.backend)


def cmd_generate(args: argparse.Namespace) -> int:
    from kubesched.cli.generate import cmd_generate as generate

    return generate(args)


def cmd_sweep(args: argparse.Namespace) -> int:
    from kubesched.cli.sweep import cmd_sweep as sweep

    return sweep(args)


def cmd_explain(args: argparse.Namespace) -> int:
    from kubesched.config._versions import parse_version
    from kubesched.reporting import explain

    version = parse_version(args.emulated_version) if args.emulated_version else None
    sys.stdout.write(explain(args.result, args.pod, max_nodes=args.nodes, top=args.top, version=version))
    return 0


def cmd_fake_apiserver(args: argparse.Namespace) -> int:
    from kubesched.cli.fake_apiserver import main as serve
    from kubesched.config._versions import parse_feature_gates, parse_version

    timeouts = {}
    for flag, key in (("--read-header-timeout", "read_header_timeout"), ("--idle-timeout", "idle_timeout")):
        text = getattr(args, key)
        try:
            seconds = parse_duration(text)
        except ValueError as e:
            raise ConfigError(str(e), field=flag) from None
        if seconds <= 0:
            raise ConfigError(f"Invalid value: {go_quote(text)}: must be greater than 0", field=flag)
        timeouts[key] = seconds
    version = parse_version(args.emulated_version) if args.emulated_version else DEFAULT_VERSION
    gates = parse_feature_gates(args.feature_gates or "", version=version)
    return int(serve(args.files, port=args.port, kubeconfig=args.kubeconfig, backend=args.backend,
                     validation=validation_mode(args.validate), emulated_version=version,
                     feature_gates=gates, **timeouts))


def _int(text: str) -> int:
    """An integer in ASCII digits (Python's int() would also take "١٢" and "1_000")."""
    if re.fullmatch(r"[+-]?[0-9]{1,30}", text) is None:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}")
    return int(text)


def _verbosity(text: str) -> int:
    """klog's ``-v``: a number from 0, also spelled ``-v=4`` (argparse hands a short option
    written with ``=`` its value with the ``=``)."""
    value = _int(text.removeprefix("="))
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid verbosity {text!r}: must be 0 or more")
    return value


def _port(text: str) -> int:
    """A TCP port number (0: any free port)."""
    if not text.isascii() or not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: must be an integer in 0-65535")
    return int(text)


def _version() -> str:
    """The installed distribution's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kubesched")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


class _Parser(argparse.ArgumentParser):
    """argparse with the contract's error: one line on stderr, exit code 2 (no usage block)."""

    def error(self, message: str) -> NoReturn:
        line = _one_line(" ".join(message.split()))
        self.exit(2, f"{PROG}: error: {line} (see {self.prog} --help)\n")


BENCH_SIZES_EPILOG = "the workloads' default sizes"
"""``bench --help``'s epilog, replaced by the table when the help is shown."""


class _BenchHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``bench --help``: its epilog is the table of every workload's default sizes
    (:func:`kubesched.cli.bench.sizes_table`), made only when the help is shown: importing the
    workloads costs every other command 60 ms."""

    def add_text(self, text: str | None) -> None:
        if text is BENCH_SIZES_EPILOG:
            from kubesched.cli.bench import sizes_table

            text = sizes_table()
        super().add_text(text)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="The Kubernetes scheduler, in Python.")
    p.add_argument("--version", action="version",
                   version=f"{PROG} {_version()} (emulates Kubernetes {VERSION_RANGE}, default {DEFAULT_VERSION})")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("simulate", help="schedule manifests on a fake cluster in virtual time")
    s.add_argument("files", nargs="*", metavar="FILE", help="YAML/JSON manifests (none: the built-in demo)")
    s.add_argument("--config", help="a KubeSchedulerConfiguration file")
    s.add_argument("--feature-gates", default="", help="K=V,... e.g. SchedulerAsyncPreemption=false")
    s.add_argument("--emulated-version", default="", metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor to behave as ({VERSION_RANGE}; default {DEFAULT_VERSION}): its "
                   "feature gates, default plugins, messages and queue")
    s.add_argument("--output", choices=("json", "text"), default=None,
                   help="what to print on stdout (default json; nothing with --html unless given)")
    s.add_argument("--seed", type=_int, default=0)
    s.add_argument("--validate", default="strict", metavar="strict|warn|ignore",
                   help="unknown fields in manifests: an error (default), a warning each, or dropped (as kubectl)")
    s.add_argument("--max-pods", type=_int, default=MAX_PODS, metavar="N",
                   help=f"the most pods one workload may ask for, and the most the cluster's controllers "
                        f"keep at once (default {MAX_PODS})")
    s.add_argument("--until", default=None,
                   help="stop after this much virtual time (default: run until nothing more can happen)")
    s.add_argument("--backend", choices=("asyncio", "trio"), default="trio")
    s.add_argument("--report", help="also write the JSON report to this path")
    s.add_argument("--html", metavar="PATH", help="also write a self-contained HTML report (charts) to this path")
    s.add_argument("--metrics", metavar="FILE", default=None,
                   help="also write kube-scheduler's metrics at the end of the run to FILE (Prometheus "
                        "text format; durations in virtual time)")
    s.add_argument(
        "--explain", action="store_true",
        help="record every plugin's result of every attempt (pods[].annotations, "
        "kube-scheduler-simulator's keys; with --output text, the explain view of every pod)",
    )
    s.add_argument("--events", choices=("series", "all"), default="series",
                   help="series (default): isomorphic events folded into one entry with series.count, as "
                        "the API server keeps them; all: one entry per occurrence")
    s.set_defaults(func=cmd_simulate)

    rp = sub.add_parser("report", help="an HTML report of saved simulate JSON results (several: compared)")
    rp.add_argument("results", nargs="+", metavar="RESULT.json", help="simulate --output json results")
    rp.add_argument("-o", required=True, metavar="PATH", help="the HTML file to write")
    rp.set_defaults(func=cmd_report)

    c = sub.add_parser(
        "compare",
        help="run one scenario under several configurations / feature gates, metrics side by side",
        description="Each --config (and/or --feature-gates, --emulated-version) is a variant; given "
        "several times, they pair up in order, and one given once applies to every "
        "variant. --config default is the built-in default profile.",
    )
    c.add_argument("files", nargs="+", metavar="SCENARIO", help="YAML/JSON manifests")
    c.add_argument("--config", action="append", default=[], metavar="FILE",
                   help="a KubeSchedulerConfiguration (repeat: one variant each; 'default': the defaults)")
    c.add_argument("--feature-gates", action="append", default=[], metavar="K=V,...",
                   help="feature gates (repeat: one variant each, paired with --config in order)")
    c.add_argument("--emulated-version", action="append", default=[], metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor to behave as ({VERSION_RANGE}; default {DEFAULT_VERSION}; repeat: "
                   "one variant each, paired with --config / --feature-gates in order)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--validate", default="strict", metavar="strict|warn|ignore",
                   help="unknown fields in manifests: an error (default), a warning each, or dropped (as kubectl)")
    c.add_argument("--until", default=None,
                   help="stop each run after this much virtual time (default: until nothing more can happen)")
    c.add_argument("--backend", choices=("asyncio", "trio"), default="trio")
    c.add_argument("--output", choices=("text", "json"), default="text")
    c.add_argument("--html", metavar="PATH", help="also write the variants' charts overlaid to this HTML file")
    c.add_argument("--seeds", metavar="1-10", default=None,
                   help="run each variant once per seed (N, A-B, or a comma-separated list; instead of --seed) "
                   "and report means and paired differences with 95%% intervals")
    c.add_argument("--dask", action="store_true",
                   help="with --seeds: run the seeds as a sweep's cells on a Dask LocalCluster")
    c.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --seeds: run them on this Dask scheduler, e.g. tcp://HOST:8786 (implies --dask)")
    c.add_argument("--workers", type=int, default=None, metavar="N",
                   help="with --dask: LocalCluster worker processes (default: one per core)")
    c.set_defaults(func=cmd_compare)

    b = sub.add_parser("bench", help="scheduler_perf-style workloads, in wall-clock time",
                       formatter_class=_BenchHelpFormatter, epilog=BENCH_SIZES_EPILOG)
    b.add_argument(
        "workload",
        help="basic | pod-anti-affinity | pod-affinity | topology-spreading | node-affinity | "
        "preemption | preemption-async | preemption-churn | gang | gang-upstream | dra-template | dra-steady | "
        "dra-shared-claim | all (every workload, one line each) | "
        "day (a day of Jobs and Deployments in virtual time: wall time and peak RSS)",
    )
    b.add_argument("--nodes", type=_int, default=None, metavar="N",
                   help="nodes (default: the workload's, in the table below)")
    b.add_argument("--pods", type=_int, default=None, metavar="N",
                   help="measured pods (default: the workload's; gang: rounded down to whole gangs)")
    b.add_argument("--init-pods", type=_int, default=None, metavar="N",
                   help="pods scheduled before the measured ones (default: the workload's)")
    b.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio",
                   help="the event loop (default: %(default)s)")
    b.add_argument("--json", action="store_true", help="print the result as JSON (default: one text line)")
    b.add_argument("--record-plugin-results", action="store_true",
                   help="record every plugin's result of every attempt (the cost of --explain; default: off)")
    b.add_argument("--emulated-version", default="", metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor to behave as ({VERSION_RANGE}; default {DEFAULT_VERSION}): its "
                   "feature gates, default plugins, messages and queue")
    b.add_argument("--config", metavar="FILE",
                   help="a KubeSchedulerConfiguration file: its profiles replace the workload's (e.g. to "
                   "measure an installed plugin package's plugins; default: the workload's own)")
    b.set_defaults(func=cmd_bench)

    r = sub.add_parser("run", help="schedule a live cluster (pods whose schedulerName is a profile's)")
    conn = r.add_argument_group("connection (default: in-cluster, else $KUBECONFIG or ~/.kube/config)")
    conn.add_argument("--kubeconfig", metavar="PATH", help="a kubeconfig file")
    conn.add_argument("--server", metavar="URL", help="the API server URL (overrides the kubeconfig's)")
    conn.add_argument("--context", help="the kubeconfig context (default: its current-context)")
    conn.add_argument("--kube-api-qps", type=float, default=None, help="client-side QPS limit (default 50)")
    conn.add_argument("--kube-api-burst", type=_int, default=None, help="client-side burst (default 100)")
    r.add_argument("--config", help="a KubeSchedulerConfiguration file")
    r.add_argument("--feature-gates", default="", help="K=V,... e.g. SchedulerAsyncPreemption=false")
    r.add_argument("--emulated-version", default="", metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor to behave as ({VERSION_RANGE}; default {DEFAULT_VERSION}): its "
                   "feature gates, default plugins, messages and queue")
    le = r.add_argument_group("leader election")
    le.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=None,
                    help="run only while holding the lease (default: off, or the config's leaderElection)")
    le.add_argument("--lease-name", default=None, help="the Lease name (default kubesched)")
    le.add_argument("--lease-namespace", default=None, help="the Lease namespace (default kube-system)")
    r.add_argument("--take-over-default-scheduler", action="store_true",
                   help="schedule default-scheduler pods: needed without --config (its default profile "
                   "takes them), and to run while a kube-scheduler holds its lease")
    r.add_argument("--metrics-port", type=_port, default=None, metavar="N", help="serve Prometheus /metrics on this port")
    r.add_argument("--metrics-bind-address", "--metrics-address", dest="metrics_address", default=None,
                   metavar="ADDRESS", help="the metrics listen address (default 127.0.0.1; 0.0.0.0 for all interfaces)")
    r.add_argument("-v", "--v", dest="verbosity", type=_verbosity, default=0, metavar="N",
                   help="log verbosity, as kube-scheduler's -v=N (default: %(default)s): 2 each bind and "
                   "each pod that does not fit, 3 each scheduling attempt, 6 each API request, 8 the "
                   "HTTP connections and headers, 10 everything")
    r.add_argument("--log-level", default=None, choices=("debug", "info", "warning", "error"),
                   help="the least level logged (default: info; with -v the more verbose of the two)")
    r.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    r.add_argument("--seed", type=_int, default=0, help="seed of the scheduler's random choices")
    r.add_argument("--record-plugin-results", action="store_true",
                   help="write every plugin's result of every attempt onto the pod as "
                   "kube-scheduler-simulator's annotations (kube-scheduler-simulator.sigs.k8s.io/*)")
    r.set_defaults(func=cmd_run)

    from kubesched.cli.generate import add_arguments as generate_arguments

    g = sub.add_parser(
        "generate",
        help="write a synthetic workload (nodes, Pods, Jobs, gangs, Deployments) as manifests",
        description="Write a synthetic workload as ordinary manifests, deterministic by seed.",
    )
    generate_arguments(g)
    g.set_defaults(func=cmd_generate)

    from kubesched.cli.trace import add_arguments as trace_arguments

    trace_arguments(sub.add_parser(
        "trace",
        help="a published cluster trace (openb: Alibaba GPU v2023) as manifests: replay or the fill experiment",
        description="Write a published cluster trace as ordinary manifests for simulate (see docs/traces.md).",
    ))

    w = sub.add_parser(
        "sweep",
        help="run scenarios x variants x seeds on Dask into one results table",
        description="Run every cell of SWEEP.yaml (scenarios x variants x seeds) as one simulation on "
        "Dask: a LocalCluster on this machine, or an existing cluster with --scheduler.",
    )
    w.add_argument("sweep", metavar="SWEEP.yaml", help="scenarios, variants, seeds and until (see the README)")
    w.add_argument("--validate", default="strict", metavar="strict|warn|ignore",
                   help="unknown fields in the scenarios: a failed cell (default), a warning each, or dropped")
    w.add_argument("--out", metavar="DIR", default="sweep-out",
                   help="results.csv, results.parquet (with pyarrow) and sweep.html go here (default: sweep-out)")
    w.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler, e.g. tcp://HOST:8786 (default: a LocalCluster)")
    w.add_argument("--workers", type=int, default=None, metavar="N",
                   help="LocalCluster worker processes (default: one per core)")
    w.add_argument("--connect-timeout", type=float, default=5.0, metavar="SECONDS",
                   help="give up on an unreachable --scheduler after this long (default 5)")
    w.add_argument("--summary", action="store_true",
                   help="print the verdict table (each variant against the baseline, per scenario) on stdout")
    w.set_defaults(func=cmd_sweep)
    x = sub.add_parser("explain", help="why a pod is pending, or why it landed where it did")
    x.add_argument("result", metavar="RESULT.json",
                   help="a simulate --explain report, or pods as kubectl get -o json prints them")
    x.add_argument("pod", metavar="POD", help="name or namespace/name")
    x.add_argument("--nodes", type=int, default=20, help="rows of the Filter table (default 20)")
    x.add_argument("--top", type=int, default=5, help="nodes in the score table (default 5)")
    x.add_argument("--emulated-version", default="", metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor the result was made for ({VERSION_RANGE}): stated first, Filter "
                   "columns in its default profile's order, a simulate report of another minor refused "
                   "(default: as the result says, not stated)")
    x.set_defaults(func=cmd_explain)

    f = sub.add_parser("fake-apiserver", help="serve a fake cluster over the Kubernetes API on 127.0.0.1")
    f.add_argument("files", nargs="*", metavar="FILE", help="YAML/JSON manifests to load (arrivals honoured in real time)")
    f.add_argument("--port", type=_port, default=0, help="the port to listen on (default: any free port)")
    f.add_argument("--kubeconfig", metavar="PATH", help="write the kubeconfig here (default: a temporary file)")
    f.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    f.add_argument("--validate", default="strict", metavar="strict|warn|ignore",
                   help="unknown fields in manifests: an error (default), a warning each, or dropped (as kubectl)")
    f.add_argument("--read-header-timeout", default="32s", metavar="DURATION",
                   help="close a connection whose request head takes longer (kube-apiserver's 32s)")
    f.add_argument("--idle-timeout", default="90s", metavar="DURATION",
                   help="close a kept-alive connection idle this long (kube-apiserver's 90s)")
    f.add_argument("--emulated-version", default="", metavar="MAJOR.MINOR",
                   help=f"the Kubernetes minor whose API to serve ({VERSION_RANGE}; default {DEFAULT_VERSION}): "
                   "with GenericWorkload on, 1.35 serves scheduling.k8s.io/v1alpha1 Workloads, 1.36 v1alpha2 "
                   "Workloads and PodGroups")
    f.add_argument("--feature-gates", default="", metavar="K=V,...",
                   help="feature gates of the API server, e.g. GenericWorkload=true (the Workload API)")
    f.set_defaults(func=cmd_fake_apiserver)

    from kubesched.cli.snapshot import add_arguments as snapshot_arguments
    from kubesched.cli.snapshot import cmd_snapshot
    from kubesched.cli.whatif import add_arguments as whatif_arguments
    from kubesched.cli.whatif import cmd_whatif

    snap = sub.add_parser("snapshot", help="read a live cluster (or the fake API server) into a scenario for simulate",
                          description="Write the cluster's nodes, pods, workloads, PDBs, PodGroups and PriorityClasses "
                          "as a scenario simulate takes unchanged (secrets and config maps are never read).")
    snapshot_arguments(snap, _int)
    snap.set_defaults(func=cmd_snapshot)
    wi = sub.add_parser("whatif", help="write an overlay that drains, deletes or adds to a scenario at a time",
                        description="Write an overlay of later documents for SCENARIO (a snapshot, say): pass it to "
                        "simulate or compare after the scenario (see docs/what-if.md).")
    whatif_arguments(wi)
    wi.set_defaults(func=cmd_whatif)
    return p


def _one_line(message: object) -> str:
    """An error as exactly one printable line: control characters (a newline in a user's value),
    lone surrogates and the like escaped, as Go's %q would show them."""
    text = str(message)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode("ascii") for c in text)


def _error(message: object) -> int:
    print(f"{PROG}: error: {_one_line(message)}", file=sys.stderr)
    return 2


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """The parser, built once per process: parsing leaves it as it was (``append`` options copy
    their default), and building it is 8 ms, which tests calling :func:`main` pay thousands of times."""
    return build_parser()


# The collector's thresholds while a command that runs a scheduler runs.  CPython's default third
# threshold (10) makes a full collection once ten middle-generation passes have run and the
# long-lived heap has grown by a quarter.  A scheduler's long-lived heap is the cluster: API
# objects (untracked structs, see api._objects) and their lists, none of them in a reference
# cycle, so a full pass walks a few hundred thousand objects and frees nothing: at 10,000 pods it
# ran three times in `bench basic`'s measured window, a twentieth of its CPU.  With 100, a full
# collection waits for a hundred middle-generation passes (about 700,000 tracked allocations); the
# young generations, where the cycles of tasks and exceptions are found, are collected as often as
# before.  fake-apiserver keeps the default: a server's closed connections leave cycles that
# should go back to the allocator soon.  main() restores the caller's thresholds: a process
# embedding kubesched keeps its own.
GC_THRESHOLDS = (700, 10, 100)
_DEFAULT_COLLECTOR = frozenset({"fake-apiserver"})


def main(argv: Sequence[str] | None = None) -> int:
    thresholds = gc.get_threshold()
    try:
        return _main(argv)
    finally:
        gc.set_threshold(*thresholds)


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command not in _DEFAULT_COLLECTOR:
        gc.set_threshold(*GC_THRESHOLDS)
    try:
        code: Any = args.func(args)
    except ConfigError as e:
        return _error(e)
    except PluginError as e:
        return _error(e)
    except yaml.YAMLError as e:  # pragma: no cover - load_documents wraps these
        return _error(str(e).splitlines()[0])
    except BaseExceptionGroup as eg:  # bad input found inside the run's task group
        bad, rest = eg.split((ConfigError, PluginError))
        if bad is None or rest is not None:
            raise
        return _error(_first_leaf(bad))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `| head`: the reader has all it wants; no traceback at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:  # standard output (or a file) could not take the output: a full disk
        return _write_error(e)
    try:
        sys.stdout.flush()  # what is still buffered fails here, not in the interpreter's exit
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as e:
        return _write_error(e)
    return int(code or 0)


def _write_error(e: OSError) -> int:
    """A write that failed (``> /dev/full``): one line, exit code 1, and nothing more at exit."""
    print(f"{PROG}: error: write error: {e.strerror or e}", file=sys.stderr)
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


def _first_leaf(eg: BaseExceptionGroup[BaseException]) -> BaseException:
    first = eg.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
