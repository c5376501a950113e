"""``kubesched fake-apiserver``: load manifests into a fake cluster and serve it until a signal."""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched.api._objects import Node, NodeCondition
from kubesched.transports.apiserver import APIServer, write_kubeconfig
from kubesched.transports.fake import FakeCluster

from .manifests import Manifest, load_manifests

__all__ = ["main", "serve_manifests"]


def _now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _admit(obj: Any) -> Any:
    """A Node's kubelet reports Ready as soon as it registers (as the server does on create)."""
    if isinstance(obj, Node) and not any(c.type == "Ready" for c in obj.status.conditions):
        ready = NodeCondition(
            type="Ready",
            status="True",
            reason="KubeletReady",
            message="kubelet is posting ready status",
        )
        obj = replace(obj, status=replace(obj.status, conditions=[*obj.status.conditions, ready]))
    return obj


async def serve_manifests(
    manifests: Sequence[Manifest],
    *,
    port: int = 0,
    ready: Callable[[APIServer], Any] | None = None,
    **server_options: Any,
) -> None:
    """Serve a fake cluster holding ``manifests`` until cancelled.

    Objects arriving at t=0 exist before the server accepts connections; an object with a later
    ``kubesched.io/arrival`` is created that many real seconds after start.  ``ready(server)``
    is called once the server listens.
    """
    async with FakeCluster(epoch=_now_rfc3339()) as cluster:
        start = anyio.current_time()
        now = [m for m in manifests if m.arrival <= 0]
        later = [m for m in manifests if m.arrival > 0]
        for m in now:
            cluster.create(_admit(m.obj))
        async with (
            APIServer(cluster, port=port, **server_options) as server,
            anyio.create_task_group() as tg,
        ):
            if ready is not None:
                ready(server)

            async def arrivals() -> None:
                for m in later:
                    await anyio.sleep_until(start + m.arrival)
                    cluster.create(_admit(m.obj))

            tg.start_soon(arrivals)
            await anyio.sleep_forever()


def main(
    files: Sequence[str],
    *,
    port: int = 0,
    kubeconfig: str | None = None,
    backend: str = "asyncio",
    validation: str = "Strict",
    **server_options: Any,
) -> int:
    """Run ``kubesched fake-apiserver``: serve until SIGINT/SIGTERM; exit code 0.

    ``server_options`` go to :class:`APIServer` (``read_header_timeout``, ``idle_timeout``).

    Prints the URL and the kubeconfig path on stdout.  Without ``kubeconfig`` one is written to
    a temporary directory that is removed on exit.  Bad manifests raise ConfigError.
    """
    from .options import warn_line

    manifests = load_manifests(files, validation=validation, warn=warn_line)
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
