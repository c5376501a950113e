"""The Workload API over real HTTP (issue 36 item 1): ``kubesched run`` with GenericWorkload and
GangScheduling on lists and watches the fake API server's Workloads and PodGroups (1.36), places
a gang of 3 on 3 one-CPU nodes through the PodGroup cycle (in real time: the instant is the
virtual-time tests'), and writes the
PodGroup's ``PodGroupScheduled`` condition through ``podgroups/status``; ``kubesched snapshot``
reads them back into a scenario that ``simulate`` takes with the same gates.  A gang of 3 on 2
nodes binds none, and its PodGroup says why."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import anyio
import anyio.from_thread
import pytest
import yaml

from kubesched import Scheduler, cli
from kubesched.config._versions import Version
from kubesched.scenario import load_config_file, load_manifests
from kubesched.scenario._workloadapi import check_workload_api
from kubesched.service import RunOptions, run_scheduler
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

GATES = {"GenericWorkload": True, "GangScheduling": True}
GATES_FLAG = "GenericWorkload=true,GangScheduling=true"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kubesched
"""


def scenario(nodes: int) -> str:
    docs = [
        f"""\
apiVersion: v1
kind: Node
metadata: {{name: n{i}}}
status: {{allocatable: {{cpu: "1", memory: 4Gi, pods: "10"}}}}
"""
        for i in range(nodes)
    ]
    docs.append("""\
apiVersion: scheduling.k8s.io/v1alpha2
kind: Workload
metadata: {name: train}
spec:
  podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 3}}}]
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train-0}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: {gang: {minCount: 3}}
""")
    docs += [
        f"""\
apiVersion: v1
kind: Pod
metadata: {{name: w{i}}}
spec:
  schedulerName: kubesched
  schedulingGroup: {{podGroupName: train-0}}
  terminationGracePeriodSeconds: 0
  containers: [{{name: c, image: trainer, resources: {{requests: {{cpu: "1"}}}}}}]
"""
        for i in range(3)
    ]
    return "---\n".join(docs)


@asynccontextmanager
async def serving(path: Path) -> AsyncIterator[APIServer]:
    manifests = load_manifests([str(path)])
    check_workload_api(manifests, Version(1, 36), GATES)
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster:
        for m in manifests:
            cluster.create(m.obj)
        async with APIServer(cluster, feature_gates=GATES) as server:
            yield server


@asynccontextmanager
async def running(server: APIServer, config: Path) -> AsyncIterator[Scheduler]:
    cfg = load_config_file(str(config), GATES_FLAG)
    async with anyio.create_task_group() as tg:
        sched: Scheduler = await tg.start(
            lambda task_status: run_scheduler(RunOptions(server=server.url), cfg, handle_signals=False, task_status=task_status)
        )
        yield sched
        tg.cancel_scope.cancel()


async def wait_for(pred: Callable[[], bool], timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not pred():
            await anyio.sleep(0.05)


def _condition(server: APIServer) -> tuple[str, str] | None:
    pg = server.cluster.get("SchedulingPodGroup", "default", "train-0")
    cond = next((c for c in pg.status.conditions if c.type == "PodGroupScheduled"), None)
    return None if cond is None else (cond.status, cond.reason)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_run_places_a_gang_and_snapshot_reads_it_back(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gang.yaml"
    path.write_text(scenario(3))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    snap = tmp_path / "snap.yaml"

    async def run(server: APIServer) -> None:
        async with running(server, config):
            await wait_for(lambda: _condition(server) == ("True", "Scheduled"))
            await wait_for(lambda: all(p.spec.node_name for p in server.cluster.pods()))
        assert sorted(p.spec.node_name for p in server.cluster.pods()) == ["n0", "n1", "n2"]

    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(serving(path)) as server,
    ):
        portal.call(run, server)
        assert cli.main(["snapshot", "--server", server.url, "-o", str(snap), "--backend", backend]) == 0
    docs = [d for d in yaml.safe_load_all(snap.read_text()) if d]
    kinds = {(d["apiVersion"], d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("scheduling.k8s.io/v1alpha2", "Workload", "train"), ("scheduling.k8s.io/v1alpha2", "PodGroup", "train-0")} <= kinds
    pg = next(d for d in docs if d["kind"] == "PodGroup")
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}} and not pg.get("status", {}).get("conditions")
    assert {d["spec"]["schedulingGroup"]["podGroupName"] for d in docs if d["kind"] == "Pod"} == {"train-0"}
    capsys.readouterr()
    assert cli.main(["simulate", str(snap), "--feature-gates", GATES_FLAG, "--output", "json"]) == 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_run_binds_none_of_a_gang_that_does_not_fit(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "gang.yaml"
    path.write_text(scenario(2))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)

    async def run(server: APIServer) -> None:
        async with running(server, config):
            await wait_for(lambda: _condition(server) == ("False", "Unschedulable"))
        assert [p.spec.node_name for p in server.cluster.pods()] == ["", "", ""]

    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(serving(path)) as server,
    ):
        portal.call(run, server)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--emulated-version", "1.34", "--feature-gates", "GenericWorkload=true"],
         "kubesched: error: --feature-gates: unrecognized feature gate: GenericWorkload"),
        (["--emulated-version", "1.99"],
         'kubesched: error: --emulated-version: Invalid value: "1.99": must be a Kubernetes minor version MAJOR.MINOR '
         "from 1.30 to 1.36"),
    ],
)  # fmt: skip
def test_fake_apiserver_flags_are_checked_before_it_serves(args: list[str], line: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fake-apiserver", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [line]


V135 = """\
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train}
spec:
  podGroups: [{name: workers, policy: {gang: {minCount: 2}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: w0}
spec:
  workloadRef: {name: train, podGroup: workers}
  containers: [{name: c, image: trainer}]
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_snapshot_of_a_1_35_server_keeps_its_v1alpha1_workloads(backend: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """At 1.35 the server serves scheduling.k8s.io/v1alpha1 Workloads (and 404 for v1alpha2, which
    the snapshot reads as none); the snapshot simulates at 1.35 with the same gates."""
    path = tmp_path / "v135.yaml"
    path.write_text(V135)
    snap = tmp_path / "snap.yaml"

    @asynccontextmanager
    async def serving_135() -> AsyncIterator[APIServer]:
        manifests = load_manifests([str(path)])
        check_workload_api(manifests, Version(1, 35), GATES)
        async with FakeCluster(epoch=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")) as cluster:
            for m in manifests:
                cluster.create(m.obj)
            async with APIServer(cluster, emulated_version=Version(1, 35), feature_gates=GATES) as server:
                yield server

    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(serving_135()) as server,
    ):
        assert cli.main(["snapshot", "--server", server.url, "-o", str(snap), "--backend", backend]) == 0
    docs = [d for d in yaml.safe_load_all(snap.read_text()) if d]
    workload = next(d for d in docs if d["kind"] == "Workload")
    assert workload["apiVersion"] == "scheduling.k8s.io/v1alpha1"
    assert workload["spec"]["podGroups"] == [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]
    assert next(d for d in docs if d["kind"] == "Pod")["spec"]["workloadRef"] == {"name": "train", "podGroup": "workers"}
    capsys.readouterr()
    assert cli.main(["simulate", str(snap), "--emulated-version", "1.35", "--feature-gates", GATES_FLAG, "--output", "json"]) == 0
