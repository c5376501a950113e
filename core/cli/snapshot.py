"""``kubesched snapshot``: the flags, the progress line, the scenario on stdout or in a file (none
when the read fails), the notes and the closing line on stderr.  Reading a cluster into a
scenario: :mod:`kubesched.snapshot`."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import IO

import anyio

from kubesched._errors import ConfigError, TransportError
from kubesched._outputs import open_output
from kubesched.cli.options import warn_line
from kubesched.cli.progress import SnapshotProgress
from kubesched.snapshot import DEFAULT_CHUNK_SIZE, Options, snapshot, summary
from kubesched.validation._validation import dns1123_label_errors

__all__ = ["add_arguments", "cmd_snapshot"]


def add_arguments(p: argparse.ArgumentParser, int_type: Callable[[str], int]) -> None:
    """The flags of ``kubesched snapshot``."""
    conn = p.add_argument_group("connection (default: in-cluster, else $KUBECONFIG or ~/.kube/config)")
    conn.add_argument("--kubeconfig", metavar="PATH", help="a kubeconfig file")
    conn.add_argument("--server", metavar="URL", help="the API server URL (overrides the kubeconfig's)")
    conn.add_argument("--context", help="the kubeconfig context (default: its current-context)")
    conn.add_argument("--kube-api-qps", type=float, default=50.0, help="client-side QPS limit (default 50)")
    conn.add_argument("--kube-api-burst", type=int_type, default=100, help="client-side burst (default 100)")
    p.add_argument("-o", "--output", metavar="FILE", default="-", help="where to write the scenario (default: stdout)")
    p.add_argument("-n", "--namespace", action="append", default=[], metavar="NS",
                   help="only this namespace's pods, workloads, PDBs and PodGroups (repeat for several; "
                   "default: every namespace); nodes and PriorityClasses are always all read")
    p.add_argument("-l", "--selector", default="", metavar="SELECTOR",
                   help="only the pods and workloads whose own labels match, as kubectl get -l does "
                   "(PDBs, PodGroups, nodes and PriorityClasses are all read)")
    p.add_argument("--chunk-size", type=int_type, default=DEFAULT_CHUNK_SIZE, metavar="N",
                   help=f"objects per list request (limit/continue; default {DEFAULT_CHUNK_SIZE})")
    p.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")


def cmd_snapshot(args: argparse.Namespace) -> int:
    """Run ``kubesched snapshot``: 0, 2 for bad flags (ConfigError), 1 when the cluster fails."""
    for ns in args.namespace:
        errors = dns1123_label_errors(ns)
        if errors:
            raise ConfigError(f'Invalid value: "{ns}": {errors[0]}', field="--namespace")
    if args.chunk_size < 1:
        raise ConfigError(f"Invalid value: {args.chunk_size}: must be at least 1", field="--chunk-size")
    opts = Options(
        kubeconfig=args.kubeconfig, server=args.server, context=args.context,
        namespaces=list(dict.fromkeys(args.namespace)), selector=args.selector, chunk_size=args.chunk_size,
        qps=args.kube_api_qps, burst=args.kube_api_burst,
    )  # fmt: skip
    target = args.output
    # opened before the cluster is read (an unwritable path fails at once); half a cluster is not
    # a snapshot: on failure the file that was there stays as it was (open_output)
    output = open_output(target)
    try:
        out: IO[str] = output.__enter__()
    except OSError as e:
        raise ConfigError(f"cannot write: {e.strerror or e}", source=target) from None
    try:
        progress = SnapshotProgress()
        with progress:
            red = anyio.run(functools.partial(snapshot, opts, out, progress=progress, warn=warn_line), backend=args.backend)
    except BaseException as e:
        output.__exit__(type(e), e, e.__traceback__)
        if isinstance(e, TransportError):
            print(f"kubesched: error: snapshot: {_one_line(str(e))}", file=sys.stderr)
            return 1
        raise
    try:
        output.__exit__(None, None, None)
    except OSError as e:
        raise ConfigError(f"cannot write: {e.strerror or e}", source=target) from None
    for note in red.notes:
        print(f"kubesched: note: {note}", file=sys.stderr)
    print(f"kubesched: {summary(red, '' if target == '-' else target)}", file=sys.stderr)
    return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())
