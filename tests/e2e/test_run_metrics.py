"""``kubesched run --metrics-port``: kube-scheduler's metrics and health endpoints, scraped from a
live run over real HTTP (the fake API server on 127.0.0.1, the live transport, the real clock).

Two profiles: ``alpha`` places its three pods; ``beta`` places one and cannot place the other
(too big), so the scrape shows per-profile attempts, an ``unschedulable`` attempt's duration,
the extension-point and plugin histograms with upstream's buckets, the queue's gauges and
counters; ``/healthz``, ``/livez``, ``/readyz`` answer ``ok`` and any other path is 404.
"""

from __future__ import annotations

import re
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest

from kubesched import Scheduler
from kubesched.metrics._metrics import EXTENSION_POINT_BUCKETS, MetricsRecorder
from kubesched.scenario import load_config_file, load_manifests
from kubesched.service import RunOptions, run_scheduler
from kubesched.transports.apiserver import APIServer
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: alpha
  - schedulerName: beta
"""

NODES = [
    f"""\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status:
  allocatable: {{cpu: "2", memory: 4Gi, pods: "20"}}
  capacity: {{cpu: "2", memory: 4Gi, pods: "20"}}
"""
    for name in ("n1", "n2")
]


def pod(name: str, scheduler: str, cpu: str = "100m") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  schedulerName: {scheduler}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


PODS = [pod("a1", "alpha"), pod("a2", "alpha"), pod("a3", "alpha"), pod("b1", "beta"),
        pod("b-too-big", "beta", cpu="64")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def live_run(
    tmp_path: Path, recorder: MetricsRecorder | None = None
) -> AsyncIterator[tuple[str, FakeCluster, Scheduler]]:
    """A fake API server with the pods, and ``kubesched run --metrics-port`` on it: (base URL of
    the metrics endpoint, the cluster, the scheduler)."""
    (tmp_path / "cluster.yaml").write_text("---\n".join(NODES + PODS))
    (tmp_path / "config.yaml").write_text(CONFIG)
    cfg = load_config_file(str(tmp_path / "config.yaml"))
    async with FakeCluster(epoch="2024-01-01T00:00:00Z") as cluster:
        for m in load_manifests([str(tmp_path / "cluster.yaml")]):
            cluster.create(m.obj)
        async with APIServer(cluster) as server, anyio.create_task_group() as tg:
            port = free_port()
            opts = RunOptions(server=server.url, metrics_port=port)
            sched: Scheduler = await tg.start(
                lambda task_status: run_scheduler(
                    opts, cfg, recorder=recorder, handle_signals=False, task_status=task_status
                )
            )
            yield f"http://127.0.0.1:{port}", cluster, sched
            tg.cancel_scope.cancel()


async def wait_for(pred: Callable[[], bool], timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not pred():
            await anyio.sleep(0.02)


def samples(text: str) -> dict[str, float]:
    """``name{labels}`` -> value, for every sample line of an exposition."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


async def test_a_live_run_exposes_kube_schedulers_metrics_and_health(tmp_path: Path) -> None:
    async with live_run(tmp_path) as (url, cluster, sched), httpx.AsyncClient(base_url=url) as client:
        await wait_for(lambda: sched.metrics.attempts >= 5 and sched.is_idle())
        bound = {p.metadata.name: p.spec.node_name for p in cluster.pods()}
        assert all(bound[n] for n in ("a1", "a2", "a3", "b1")) and not bound["b-too-big"]

        r = await client.get("/metrics")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = r.text
        m = samples(text)

        # attempts and their durations under each pod's own profile, every result
        assert m['scheduler_schedule_attempts_total{profile="alpha",result="scheduled"}'] == 3
        assert m['scheduler_schedule_attempts_total{profile="beta",result="scheduled"}'] == 1
        assert m['scheduler_schedule_attempts_total{profile="beta",result="unschedulable"}'] >= 1
        assert not any('profile="alpha",result="unschedulable"' in k for k in m)
        key = 'scheduler_scheduling_attempt_duration_seconds_count{profile="beta",result="unschedulable"}'
        assert m[key] >= 1
        assert m['scheduler_scheduling_attempt_duration_seconds_bucket{le="+Inf",profile="alpha",result="scheduled"}'] == 3

        # an extension point's histogram, upstream's buckets exactly (ExponentialBuckets(0.0001, 2, 12))
        series = 'extension_point="Filter",profile="alpha",status="Success"'
        les = re.findall(
            r'^scheduler_framework_extension_point_duration_seconds_bucket\{extension_point="Filter",le="([^"]+)",'
            r'profile="alpha",status="Success"\}', text, re.MULTILINE,
        )
        assert les == ["0.0001", "0.0002", "0.0004", "0.0008", "0.0016", "0.0032", "0.0064", "0.0128",
                       "0.0256", "0.0512", "0.1024", "0.2048", "+Inf"]
        assert len(EXTENSION_POINT_BUCKETS) == 12
        assert m[f"scheduler_framework_extension_point_duration_seconds_count{{{series}}}"] == 3
        for point in ("PreFilter", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"):
            assert any(f'extension_point="{point}"' in k and 'profile="alpha"' in k for k in m), point
        assert any(f'extension_point="PostFilter",profile="beta",status="{s}"' in k
                   for k in m for s in ("Unschedulable", "Success"))

        # the queue: incoming pods by queue and event, pending pods by queue, rejections by plugin
        assert m['scheduler_queue_incoming_pods_total{event="UnschedulablePodAdd",queue="active"}'] == 5
        assert m['scheduler_pending_pods{queue="unschedulable"}'] == 1
        assert m['scheduler_pending_pods{queue="active"}'] == 0
        assert m['scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="beta"}'] == 1
        assert m["scheduler_preemption_attempts_total"] >= 1
        assert m["scheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"1\"}"] == 4
        assert "scheduler_preemption_victims_bucket{le=\"64\"}" in m  # Go's formatting: not "64.0"
        assert "process_cpu_seconds_total" in m  # as kube-scheduler's /metrics
        assert not any(k.split("{")[0].endswith("_created") for k in m)

        for path in ("/healthz", "/livez", "/readyz"):
            r = await client.get(path)
            assert (r.status_code, r.text) == (200, "ok"), path
        r = await client.get("/readyz?verbose")
        assert r.text == "[+]shutdown ok\n[+]sched-handler-sync ok\nreadyz check passed\n"
        r = await client.get("/healthz/ping")
        assert (r.status_code, r.text) == (200, "ok")
        r = await client.head("/metrics")
        assert r.status_code == 200 and r.content == b""
        for path in ("/", "/nope", "/metrics/extra", "/readyz/nope"):
            r = await client.get(path)
            assert (r.status_code, r.text) == (404, "404 page not found\n"), path


async def test_the_totals_carry_over_to_the_next_scheduler(tmp_path: Path) -> None:
    """A new leadership term builds a new Scheduler: the recorder keeps counting where it was."""
    recorder = MetricsRecorder()
    async with live_run(tmp_path, recorder) as (_, _, sched):
        await wait_for(lambda: sched.metrics.attempts >= 5 and sched.is_idle())
        assert recorder.scheduler is sched
        before = dict(recorder.attempts)
        preemptions = recorder.preemption_attempts
        assert before[("scheduled", "alpha")] == 3 and preemptions >= 1
    recorder.attach(Scheduler(sched.transport, sched.config))
    assert recorder.attempts == before
    assert recorder.preemption_attempts == preemptions
