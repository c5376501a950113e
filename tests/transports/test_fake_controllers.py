"""The fake cluster's store feeds controllers: the contract a new controller (Job, ReplicaSet,
Deployment) relies on.  Every test runs on both backends in virtual time."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kubesched.testing import make_node, make_pdb, make_pod
from kubesched.transports.fake import FakeCluster
from kubesched.transports.fake._store import Change, Controller, Store

pytestmark = pytest.mark.anyio


class Mirror(Controller):
    """A toy ReplicaSet: for each pod labelled ``mirror=yes``, create ``<name>-copy``."""

    kinds = ("Pod", "PodDisruptionBudget")

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.seen: list[tuple[str, str, str, str]] = []

    def observe(self, change: Change) -> None:
        obj = change.obj
        self.seen.append(
            (change.type, change.verb, obj.metadata.name, obj.metadata.resource_version)
        )
        if change.type == "ADDED" and change.kind == "Pod" and obj.metadata.labels.get("mirror"):
            copy = make_pod(f"{obj.metadata.name}-copy").label("app", "web").obj()
            self.store.create(copy)


async def test_controllers_are_fed_in_resource_version_order() -> None:
    async with FakeCluster() as cluster:
        mirror = Mirror(cluster._store)
        cluster._store.register(mirror)
        cluster.create(make_node("n1").obj())
        cluster.create(make_pdb("pdb", match_labels={"app": "web"}, min_available=1))
        watch = cluster.watch()
        while (ev := watch.get_nowait()) is not None and ev.type != "SYNCED":
            pass
        cluster.create(make_pod("web").label("app", "web").label("mirror", "yes").obj())
        events = []
        while (ev := watch.get_nowait()) is not None:
            events.append(
                (ev.type, ev.obj.kind, ev.obj.metadata.name, ev.obj.metadata.resource_version)
            )
        # the pod, the disruption controller's status (registered first), the copy, its status
        assert events == [
            ("ADDED", "Pod", "web", "3"),
            ("MODIFIED", "PodDisruptionBudget", "pdb", "4"),
            ("ADDED", "Pod", "web-copy", "5"),
            ("MODIFIED", "PodDisruptionBudget", "pdb", "6"),
        ]
        # the controller saw every change once, in resourceVersion order, its own write included
        assert mirror.seen == [
            ("ADDED", "create", "pdb", "2"),
            ("ADDED", "create", "web", "3"),
            ("MODIFIED", "status", "pdb", "4"),
            ("ADDED", "create", "web-copy", "5"),
            ("MODIFIED", "status", "pdb", "6"),
        ]
        # a controller's create goes through admission like any other
        copy = cluster.get_pod("default", "web-copy")
        assert copy is not None and copy.status.phase == "Pending" and copy.spec.priority == 0


async def test_an_admin_update_setting_node_name_is_not_a_binding() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_pod("p").obj())
        pod = cluster.get_pod("default", "p")
        assert pod is not None
        stored = cluster.update(replace(pod, spec=replace(pod.spec, node_name="n1")))
        # the kubelet starts a pod on a binding only (verb "bind"), as before the split
        assert stored.spec.node_name == "n1"
        assert stored.status.phase == "Pending" and stored.status.start_time is None


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_virtual_time_reaches_deadlines_far_out_and_off_the_nanosecond_grid(backend: str) -> None:
    """Deadlines far out (where a nanosecond is below a float's spacing) and between grid
    points used to leave asyncio's virtual loop spinning; a long idle wait is one jump.  Run in
    a child process so that a regression fails in seconds instead of hanging the suite."""
    import subprocess
    import sys

    code = f"""
import anyio
from kubesched.transports.fake.virtual_time import run
async def main():
    await anyio.sleep(0.1)
    await anyio.sleep_until(anyio.current_time() + 5.2170000000000005)
    for delay in (1e6 + 0.3, 3.3e9 + 0.1, 5e12 + 0.7):
        await anyio.sleep_until(anyio.current_time() + delay)
    print(anyio.current_time())
run(main, backend={backend!r})
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) > 5e12
