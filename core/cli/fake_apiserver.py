"""``kubesched fake-apiserver``: load manifests into a fake cluster and serve it until a signal
(:func:`kubesched.service.serve_manifests`); the URL and the kubeconfig on stdout."""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from kubesched.cli.options import warn_line
from kubesched.config._versions import DEFAULT_VERSION, Version, default_feature_gates
from kubesched.scenario import load_manifests
from kubesched.scenario._gatedfields import apply_gated_fields
from kubesched.scenario._workloadapi import check_workload_api
from kubesched.service import serve_manifests
from kubesched.transports.apiserver import APIServer, write_kubeconfig

__all__ = ["main"]


def main(
    files: Sequence[str],
    *,
    port: int = 0,
    kubeconfig: str | None = None,
    backend: str = "asyncio",
    validation: str = "Strict",
    emulated_version: Version = DEFAULT_VERSION,
    feature_gates: dict[str, bool] | None = None,
    **server_options: Any,
) -> int:
    """Run ``kubesched fake-apiserver``: serve until SIGINT/SIGTERM; exit code 0.

    ``server_options`` go to :class:`APIServer` (``read_header_timeout``, ``idle_timeout``);
    ``emulated_version`` and ``feature_gates`` choose the gated APIs it serves (the Workload API
    with GenericWorkload), and the manifests may use only those.

    Prints the URL and the kubeconfig path on stdout.  Without ``kubeconfig`` one is written to
    a temporary directory that is removed on exit.  Bad manifests raise ConfigError.
    """
    manifests = load_manifests(files, validation=validation, warn=warn_line)
    gates = default_feature_gates(emulated_version) if feature_gates is None else feature_gates
    check_workload_api(manifests, emulated_version, gates)
    apply_gated_fields(manifests, gates)
    server_options.update(emulated_version=emulated_version, feature_gates=gates)
    tmpdir = None
    if kubeconfig is None:
        tmpdir = tempfile.mkdtemp(prefix="kubesched-")
        path = Path(tmpdir) / "kubeconfig"
    else:
        path = Path(kubeconfig)

    def ready(server: APIServer) -> None:
        write_kubeconfig(path, server.url)
        print(f"serving the fake cluster on {server.url}", flush=True)
        print(f"kubeconfig: {path}", flush=True)
        print(f"try: kubectl --kubeconfig {path} get nodes", flush=True)

    async def run() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve_manifests(manifests, port=port, ready=ready, **server_options))
                async for _ in signals:
                    print("shutting down", file=sys.stderr, flush=True)
                    break
                tg.cancel_scope.cancel()

    try:
        anyio.run(run, backend=backend)
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return 0
