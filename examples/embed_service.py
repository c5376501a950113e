"""Embed kubesched in an async service: your event loop, your task group, your plugin.

The service below owns everything the scheduler runs on:

- a transport (here the in-memory ``FakeCluster``; a live cluster would be the ``kube`` one),
- a configuration, read and checked by ``kubesched.load_config`` before anything starts (a bad
  one is a ``kubesched.ConfigError`` naming the field; every kubesched error is a
  ``kubesched.KubeschedError``),
- a ``kubesched.Scheduler`` built from them and a ``registry=`` holding a plugin the service
  builds itself (so the plugin can talk to the service: here, an audit log),
- the task group the scheduler runs in: ``await tg.start(scheduler.run)`` returns once the
  scheduler's cache holds the cluster, and cancelling the group shuts it down cleanly.

It feeds nodes and two waves of pods, waits for ``scheduler.wait_idle()`` after each, and prints
where every pod went.  It runs in virtual time, on asyncio or trio, so the 30 s between the waves
take no real time::

    python examples/embed_service.py [--backend asyncio|trio]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import numpy as np

import kubesched
from kubesched.framework import Handle
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster
from kubesched.transports.fake.virtual_time import run as run_in_virtual_time

TEAM_LABEL = "example.io/team"


class TeamAffinity:
    """Score: prefer nodes labelled with the pod's team; PostBind: report to the service.

    A plugin is any object with a ``name`` and ``@kubesched.hookimpl`` methods named after the
    hooks (kubesched.hookspecs).  Score is a batch hook: one call scores every feasible node.
    """

    name = "TeamAffinity"

    def __init__(
        self, args: dict[str, Any] | None, handle: Handle, audit: Callable[[str], None]
    ) -> None:
        unknown = sorted(set(args or {}) - {"label"})
        if unknown:  # reported as profiles[0].pluginConfig[0].args.<field>
            raise kubesched.ConfigError(f'unknown field "{unknown[0]}"', field=unknown[0])
        self.label = (args or {}).get("label", TEAM_LABEL)
        self.audit = audit

    @kubesched.hookimpl
    def kubesched_score(
        self, state: kubesched.CycleState, pod: kubesched.Pod, nodes: kubesched.NodeBatch
    ) -> np.ndarray:
        team = pod.metadata.labels.get(self.label)
        if team is None:
            return np.zeros(len(nodes), dtype=np.int64)
        return np.array(
            [100 if v == team else 0 for v in nodes.label_values(self.label)], dtype=np.int64
        )

    @kubesched.hookimpl
    async def kubesched_post_bind(
        self, state: kubesched.CycleState, pod: kubesched.Pod, node_name: str
    ) -> None:
        # PostBind may be async: it runs in the pod's binding task, never in the scheduling cycle
        self.audit(f"t={anyio.current_time():5.1f}s  bound {pod.metadata.name} to {node_name}")


CONFIG = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled: [{{name: TeamAffinity, weight: 5}}]
  pluginConfig:
  - name: TeamAffinity
    args: {{label: {TEAM_LABEL}}}
"""
"""The default profile, plus TeamAffinity on every extension point it implements (a service
would read this from a file: ``kubesched.load_config(path)``)."""


class PlacementService:
    """A service that places pods with an embedded scheduler and keeps an audit log."""


    def __init__(self) -> None:
        self.audit_log: list[str] = []

    def team_affinity(self, args: Any, handle: Handle) -> TeamAffinity:
        """The plugin factory ``(args, handle) -> plugin`` given to the scheduler's registry."""
        return TeamAffinity(args, handle, self.audit_log.append)

    async def run(
        self, nodes: Sequence[kubesched.Node], waves: Sequence[Sequence[kubesched.Pod]]
    ) -> dict[str, str | None]:
        """Start a scheduler, feed it ``waves`` of pods 30 s apart, return pod → node.

        A bad configuration raises ``kubesched.ConfigError`` here, before anything starts."""
        registry = {TeamAffinity.name: self.team_affinity}
        config = kubesched.load_config(CONFIG, registry=registry)
        async with FakeCluster() as cluster:
            for node in nodes:
                cluster.create(node)
            scheduler = kubesched.Scheduler(cluster, config, registry=registry, seed=0)
            async with anyio.create_task_group() as tg:
                await tg.start(scheduler.run)  # back once the cache is synced
                start = anyio.current_time()
                for i, wave in enumerate(waves):
                    await anyio.sleep_until(start + 30 * i)
                    for pod in wave:
                        cluster.create(pod)
                    await scheduler.wait_idle()  # nothing left to do for this wave
                placements = {p.metadata.name: p.spec.node_name or None for p in cluster.pods()}
                tg.cancel_scope.cancel()  # stop the scheduler: every task it started ends here
        return placements


def demo_cluster() -> tuple[list[kubesched.Node], list[list[kubesched.Pod]]]:
    nodes = [
        make_node("node-a").capacity(cpu="4", memory="8Gi").label(TEAM_LABEL, "search").obj(),
        make_node("node-b").capacity(cpu="4", memory="8Gi").label(TEAM_LABEL, "ads").obj(),
        make_node("node-c").capacity(cpu="8", memory="16Gi").obj(),
    ]
    first = [
        make_pod("search-1").label(TEAM_LABEL, "search").req(cpu="1").obj(),
        make_pod("ads-1").label(TEAM_LABEL, "ads").req(cpu="1").obj(),
        make_pod("batch-1").req(cpu="2").obj(),
    ]
    second = [
        make_pod("search-2").label(TEAM_LABEL, "search").req(cpu="1").obj(),
        make_pod("huge").req(cpu="16").obj(),  # fits nowhere: stays pending
    ]
    return nodes, [first, second]


async def main() -> dict[str, str | None]:
    service = PlacementService()
    nodes, waves = demo_cluster()
    placements = await service.run(nodes, waves)
    for line in service.audit_log:
        print(line)
    for pod, node in placements.items():
        print(f"{pod:<10} -> {node or 'Pending'}")
    return placements


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    ns = parser.parse_args()
    try:
        run_in_virtual_time(main, backend=ns.backend)
    except kubesched.KubeschedError as err:  # one line, as the kubesched command prints it
        raise SystemExit(f"embed_service: error: {err}") from None
