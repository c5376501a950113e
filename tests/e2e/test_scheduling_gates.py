"""SchedulingGates end to end: a gated pod stays out of the active queue, says SchedulingGated,
and is scheduled once its gates are removed."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from kubesched.api._objects import PodSchedulingGate
from kubesched.scenario import load_manifests
from kubesched.scheduler._scheduler import Scheduler
from kubesched.simulation import simulate
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

GATED = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: c, image: x}]
"""


async def test_gated_pod_says_scheduling_gated_and_is_never_attempted() -> None:
    result = await simulate(load_manifests(["g.yaml"], texts={"g.yaml": GATED}))
    (rec,) = result.pods
    cond = next(c for c in rec.pod.status.conditions if c.type == "PodScheduled")
    assert (cond.status, cond.reason, cond.message) == (
        "False",
        "SchedulingGated",
        "Scheduling is blocked due to non-empty scheduling gates",
    )
    assert result.events == []
    assert result.summary["attempts"] == 0


async def test_removing_the_gates_lets_the_pod_schedule() -> None:
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").capacity(cpu="4", memory="8Gi").obj())
        pod = make_pod("p").req(cpu="1").obj()
        pod.spec.scheduling_gates = [PodSchedulingGate(name="example.com/quota")]
        cluster.create(pod)
        sched = Scheduler(cluster)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            await anyio.sleep(5)
            assert sched.metrics.attempts == 0
            assert sched.queue.get(pod.metadata.uid) in sched.queue.unschedulable.values()
            live = cluster.get_pod("default", "p")
            assert live is not None
            cluster.update(msgspec.structs.replace(live, spec=msgspec.structs.replace(live.spec, scheduling_gates=[])))
            await anyio.sleep(1)
            bound = cluster.get_pod("default", "p")
            assert bound is not None and bound.spec.node_name == "n1"
            tg.cancel_scope.cancel()
