"""A scenario served over the Kubernetes API (``kubesched fake-apiserver``): its manifests in a
fake cluster behind the API server, the later ones arriving in real time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched.api._objects import Node, NodeCondition
from kubesched.api._pvhelpers import vac_matching
from kubesched.config._versions import DEFAULT_VERSION, default_feature_gates
from kubesched.scenario._manifests import Manifest
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

__all__ = ["serve_manifests"]


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
    is called once the server listens.  The cluster's own gated behaviour follows the server's
    ``emulated_version`` and ``feature_gates`` (ClearingNominatedNodeNameAfterBinding, the PV
    controller's VolumeAttributesClass).
    """
    version = server_options.get("emulated_version") or DEFAULT_VERSION
    gates = server_options.get("feature_gates") or default_feature_gates(version)
    clear_nnn = bool(gates.get("ClearingNominatedNodeNameAfterBinding", False))
    async with FakeCluster(epoch=_now_rfc3339(), clear_nominated_node_name_on_binding=clear_nnn,
                           volume_attributes_class=vac_matching(version, gates)) as cluster:  # fmt: skip
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
