"""``kubesched run`` end to end over real HTTP: the fake API server (transports/apiserver) on
127.0.0.1 and the scheduler with the live transport, in one process, on real sockets and the
real clock.

- the same placements as ``kubesched simulate`` gives in memory (a preemption-free scenario);
- faults — watches dropped, 410 Gone, bind 409 and 500 (also a 500 whose bind did land), an API
  server restart, a scheduler restart mid-run — end with no pod lost and none bound twice;
- the CLI itself: ``kubesched run`` as a subprocess, Prometheus metrics, SIGTERM.
"""

from __future__ import annotations

import functools
import io
import json
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, redirect_stdout, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest

from kubesched import ConflictError, Scheduler, cli
from kubesched.api._objects import Binding
from kubesched.api._resources import parse_quantity, pod_requests
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
  - schedulerName: kubesched
"""


def _node(name: str, cpu: str, mem: str, zone: str, extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}}}
{extra}status:
  allocatable: {{cpu: "{cpu}", memory: {mem}, pods: "20"}}
  capacity: {{cpu: "{cpu}", memory: {mem}, pods: "20"}}
"""


def _pod(
    name: str, prio: int, cpu: str, mem: str, extra: str = "", scheduler: str = "kubesched"
) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  schedulerName: {scheduler}
  priority: {prio}
  terminationGracePeriodSeconds: 0
{extra}  containers:
    - name: c
      image: busybox
      resources: {{requests: {{cpu: "{cpu}", memory: {mem}}}}}
"""


def scenario(prefix: str = "p", count: int = 10, base_prio: int = 1000) -> list[str]:
    """Pods of distinct priorities (a defined scheduling order) and sizes."""
    docs = []
    for i in range(count):
        extra = ""
        if i == 3:
            extra = "  nodeSelector: {topology.kubernetes.io/zone: b}\n"
        if i == 5:
            extra = "  tolerations: [{key: dedicated, operator: Equal, value: batch, effect: NoSchedule}]\n"
        cpu = f"{300 + 110 * (i % 4)}m"
        mem = f"{256 + 64 * (i % 3)}Mi"
        docs.append(_pod(f"{prefix}{i}", base_prio - 10 * i, cpu, mem, extra))
    return docs


NODES = [
    _node("n1", "2", "4Gi", "a"),
    _node("n2", "3", "6Gi", "a"),
    _node("n3", "2500m", "8Gi", "b"),
    _node(
        "n4",
        "1500m",
        "2Gi",
        "b",
        "spec:\n  taints: [{key: dedicated, value: batch, effect: NoSchedule}]\n",
    ),
]
EXTRA_PODS = [
    _pod("too-big", 1, "64", "1Gi"),  # fits nowhere: stays pending with FailedScheduling
    _pod("not-ours", 5000, "100m", "64Mi", scheduler="default-scheduler"),  # ignored
]


def write(tmp: Path, docs: list[str], name: str = "cluster.yaml") -> Path:
    path = tmp / name
    path.write_text("---\n".join(docs))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("run-e2e")
    return {
        "cluster": write(d, NODES + scenario() + EXTRA_PODS),
        "config": write(d, [CONFIG], "config.yaml"),
    }


@pytest.fixture(scope="module")
def simulated(files: dict[str, Path]) -> dict[str, str | None]:
    """``kubesched simulate`` of the same files: pod → node (in this process: the command, not
    its process, is what the placements are compared with)."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["simulate", str(files["cluster"]), "--config", str(files["config"]), "--output", "json"]) == 0
    return {p["name"]: p["nodeName"] for p in json.loads(out.getvalue())["pods"]}


# --- the harness -------------------------------------------------------------------------------


@dataclass
class Harness:
    cluster: FakeCluster
    server: APIServer
    binds: Counter[str] = field(default_factory=Counter)
    conflicts: list[str] = field(default_factory=list)
    schedulers: list[Scheduler] = field(default_factory=list)

    def placements(self) -> dict[str, str | None]:
        return {p.metadata.name: p.spec.node_name or None for p in self.cluster.pods()}

    def condition(self, name: str) -> Any:
        pod = self.cluster.get_pod("default", name)
        assert pod is not None
        return next((c for c in pod.status.conditions if c.type == "PodScheduled"), None)

    def check_invariants(self) -> None:
        """No pod bound twice; no node over its allocatable."""
        assert all(n == 1 for n in self.binds.values()), self.binds
        used: dict[str, Counter[str]] = {}
        for p in self.cluster.pods():
            if p.spec.node_name:
                req = pod_requests(p)
                c = used.setdefault(p.spec.node_name, Counter())
                c["cpu"] += req.milli_cpu
                c["memory"] += req.memory
        for node in self.cluster.nodes():
            alloc = node.status.allocatable
            u = used.get(node.metadata.name, Counter())
            assert u["cpu"] <= parse_quantity(alloc["cpu"]) * 1000, node.metadata.name
            assert u["memory"] <= parse_quantity(alloc["memory"]), node.metadata.name


def count_binds(h: Harness, *, land_then_fail: int = 0) -> None:
    """Record every bind that lands; optionally make the next binds land and still answer 500
    (a lost answer: the client must not bind again elsewhere)."""
    original = h.cluster.bind
    failing = [land_then_fail]

    async def bind(binding: Binding) -> None:
        try:
            await original(binding)
        except ConflictError:
            h.conflicts.append(binding.metadata.name)
            raise
        h.binds[binding.metadata.name] += 1
        if failing[0] > 0:
            failing[0] -= 1
            raise RuntimeError("etcdserver: request timed out")

    h.cluster.bind = bind  # type: ignore[method-assign]


_REQUEST_LINE = re.compile(rb"^(GET|POST|PUT|PATCH|DELETE) (\S+) HTTP/1\.1\r$", re.MULTILINE)


class CuttingProxy:
    """A TCP proxy in front of the API server whose connections can be cut mid-stream (a
    network failure, whatever the server is doing)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.streams: set[anyio.abc.ByteStream] = set()
        self.port = 0
        self.requests: list[tuple[bytes, bytes]] = []
        """(method, path) of every request that went through."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _pipe(
        self, src: anyio.abc.ByteStream, dst: anyio.abc.ByteStream, *, requests: bool = False
    ) -> None:
        try:
            async for chunk in src:
                if requests:
                    self.requests.extend(_REQUEST_LINE.findall(chunk))
                await dst.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            await dst.aclose()

    async def _handle(self, client: anyio.abc.ByteStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.upstream_port) as upstream:
            self.streams |= {client, upstream}
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(functools.partial(self._pipe, client, upstream, requests=True))
                    tg.start_soon(self._pipe, upstream, client)
            finally:
                self.streams -= {client, upstream}

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
            self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
            task_status.started()
            await listener.serve(self._handle)

    async def cut(self) -> None:
        """Close every proxied connection at once."""
        for stream in list(self.streams):
            await stream.aclose()


@asynccontextmanager
async def fake_apiserver(paths: list[Path]) -> AsyncIterator[Harness]:
    async with FakeCluster(epoch="2024-01-01T00:00:00Z") as cluster:
        for m in load_manifests([str(p) for p in paths]):
            cluster.create(m.obj)
        async with APIServer(cluster) as server:
            h = Harness(cluster, server)
            count_binds(h)
            yield h


@asynccontextmanager
async def kubesched_run(h: Harness, config: Path, **opts: Any) -> AsyncIterator[Scheduler]:
    cfg = load_config_file(str(config))
    options = RunOptions(server=opts.pop("server", h.server.url), **opts)
    async with anyio.create_task_group() as tg:
        sched: Scheduler = await tg.start(
            lambda task_status: run_scheduler(
                options, cfg, handle_signals=False, task_status=task_status
            )
        )
        h.schedulers.append(sched)
        yield sched
        tg.cancel_scope.cancel()


async def wait_for(pred: Callable[[], bool], timeout: float = 45.0, what: str = "") -> None:
    with anyio.fail_after(timeout):
        while not pred():
            await anyio.sleep(0.05)


def settled(h: Harness, expected: dict[str, str | None]) -> Callable[[], bool]:
    """Every expected placement made, every expected-pending pod reported unschedulable."""

    def check() -> bool:
        got = h.placements()
        for name, node in expected.items():
            if node is None:
                if name != "not-ours":
                    c = h.condition(name)
                    if c is None or c.status != "False":
                        return False
            elif got.get(name) is None:
                return False
        return all(s.is_idle() for s in h.schedulers[-1:])

    return check


# --- the same placements as in memory ---------------------------------------------------------------


async def test_same_placements_as_simulate(
    files: dict[str, Path], simulated: dict[str, str | None]
) -> None:
    assert sum(1 for v in simulated.values() if v) >= 8  # the scenario places most pods
    assert simulated["too-big"] is None and simulated["not-ours"] is None
    async with fake_apiserver([files["cluster"]]) as h, kubesched_run(h, files["config"]):
        await wait_for(settled(h, simulated))
        assert h.placements() == simulated
        c = h.condition("too-big")
        assert c.reason == "Unschedulable"
        assert c.message == (
            "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
            "3 Insufficient cpu. preemption: 0/4 nodes are available: "
            "1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
        )
        assert h.condition("not-ours") is None  # another scheduler's pod: untouched
        events = [e for e in h.cluster.events if e.object == "default/too-big"]
        assert events and events[0].reason == "FailedScheduling"
        assert not h.conflicts
        h.check_invariants()


# --- faults ---------------------------------------------------------------------------------------


def second_wave(tmp: Path) -> list[Any]:
    """Small pods created while the scheduler runs: they fit whatever the order."""
    docs = [_pod(f"q{i}", 500 - i, "100m", "64Mi") for i in range(6)]
    return [m.obj for m in load_manifests([str(write(tmp, docs, "wave2.yaml"))])]


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param("watch-dropped", id="connections cut mid-stream, twice"),
        pytest.param("watch-410", id="watch history compacted: 410 Gone, re-list"),
        pytest.param("bind-409", id="bind answers 409 (someone else's conflict)"),
        pytest.param("bind-500", id="bind answers 500 twice, then succeeds"),
        pytest.param("bind-500-landed", id="bind lands but answers 500"),
    ],
)
async def test_faults_lose_no_pod_and_bind_none_twice(
    files: dict[str, Path], simulated: dict[str, str | None], tmp_path: Path, fault: str
) -> None:
    wave2 = second_wave(tmp_path)
    async with fake_apiserver([files["cluster"]]) as h:
        if fault == "bind-409":
            h.cluster.faults.fail_next(
                "bind", ConflictError("Operation cannot be fulfilled"), times=2
            )
        elif fault == "bind-500":
            h.cluster.faults.fail_next("bind", RuntimeError("etcdserver: leader changed"), times=2)
        elif fault == "bind-500-landed":
            _wrap_landed(h, times=2)
        async with anyio.create_task_group() as proxies:
            proxy = CuttingProxy(h.server.port)
            await proxies.start(proxy.serve)
            async with kubesched_run(h, files["config"], server=proxy.url) as sched:
                if fault == "watch-dropped":
                    await proxy.cut()
                elif fault == "watch-410":
                    h.server.compact()
                    h.server.drop_watches()
                for pod in wave2:
                    h.cluster.create(pod)
                if fault == "watch-dropped":
                    await anyio.sleep(0.2)
                    await proxy.cut()
                expected = {**simulated_without(simulated), **{p.metadata.name: "?" for p in wave2}}
                await wait_for(
                    lambda: (
                        all(
                            (h.placements().get(n) is not None) == (v is not None)
                            for n, v in expected.items()
                        )
                        and sched.is_idle()
                    ),
                    timeout=60,
                )
            proxies.cancel_scope.cancel()
        placed = {n: v for n, v in h.placements().items() if v}
        assert set(placed) == {n for n, v in expected.items() if v}
        h.check_invariants()
        if fault.startswith("bind-500"):
            assert not h.conflicts or fault == "bind-500-landed"


def simulated_without(simulated: dict[str, str | None]) -> dict[str, str | None]:
    """What must end bound (a placement) or unbound (None) — placements may differ from the
    fault-free run once a failed bind reorders the queue, the bound set may not."""
    return {n: ("?" if v else None) for n, v in simulated.items()}


def _wrap_landed(h: Harness, times: int) -> None:
    inner = h.cluster.bind
    left = [times]

    async def bind(binding: Binding) -> None:
        await inner(binding)
        if left[0] > 0:
            left[0] -= 1
            raise RuntimeError("etcdserver: request timed out")

    h.cluster.bind = bind  # type: ignore[method-assign]


async def _serve(
    cluster: FakeCluster,
    port: int,
    stop: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[APIServer],
) -> None:
    async with APIServer(cluster, port=port) as server:
        task_status.started(server)
        await stop.wait()


async def test_api_server_restart(
    files: dict[str, Path], simulated: dict[str, str | None], tmp_path: Path
) -> None:
    """The API server goes away while the cluster changes, then comes back on the same port:
    the scheduler re-lists (with backoff) and schedules what arrived meanwhile."""
    wave2 = second_wave(tmp_path)
    async with FakeCluster(epoch="2024-01-01T00:00:00Z") as cluster:
        for m in load_manifests([str(files["cluster"])]):
            cluster.create(m.obj)
        async with anyio.create_task_group() as servers:
            stop = anyio.Event()
            server: APIServer = await servers.start(_serve, cluster, 0, stop)
            h = Harness(cluster, server)
            count_binds(h)
            async with kubesched_run(h, files["config"]) as sched:
                await wait_for(settled(h, simulated))
                port = server.port
                stop.set()  # the API server goes away...
                await wait_for(lambda: server._tg is None)
                for pod in wave2:  # ...while the cluster changes
                    cluster.create(pod)
                await anyio.sleep(1.0)
                stop = anyio.Event()
                h.server = await servers.start(_serve, cluster, port, stop)
                await wait_for(
                    lambda: all(h.placements()[p.metadata.name] for p in wave2) and sched.is_idle(),
                    timeout=60,
                )
            stop.set()
        for name, node in simulated.items():  # the first wave was not disturbed
            assert h.placements()[name] == node
        h.check_invariants()
        assert not h.conflicts


# --- restart safety -----------------------------------------------------------------------------------


async def test_scheduler_restart_mid_run_loses_no_pod_and_binds_none_twice(
    files: dict[str, Path], simulated: dict[str, str | None]
) -> None:
    """Binds are slow (pod pN's takes 0.15·(N+1) s); the first scheduler is stopped once three
    have landed: some pods are bound, the others assumed with their binds in flight (which the
    server may still complete).  The second scheduler re-lists, rebuilds its cache from what is
    bound, and finishes the job: every pod placed, none bound twice, no node overcommitted."""
    async with fake_apiserver([files["cluster"]]) as h:
        inner = h.cluster.bind

        async def slow_bind(binding: Binding) -> None:
            digits = binding.metadata.name.lstrip("pq")
            await anyio.sleep(0.15 * (int(digits) + 1 if digits.isdigit() else 1))
            await inner(binding)

        h.cluster.bind = slow_bind  # type: ignore[method-assign]
        async with kubesched_run(h, files["config"]):
            await wait_for(lambda: sum(h.binds.values()) >= 3, timeout=30)
        unbound_after_first = [
            n for n, v in h.placements().items() if v is None and simulated.get(n)
        ]
        assert unbound_after_first, "stopped too late to test anything"
        async with kubesched_run(h, files["config"]) as second:
            await wait_for(settled(h, simulated))
            await wait_for(second.is_idle)
        placed = {n for n, v in h.placements().items() if v}
        assert placed == {n for n, v in simulated.items() if v}
        assert all(n == 1 for n in h.binds.values())
        h.check_invariants()
        # the first scheduler's binds in flight landed after the second one listed: its own
        # binds of those pods answered 409, were found bound to the chosen node, and stopped
        assert set(h.conflicts) <= set(unbound_after_first)


async def test_leader_election_over_http(
    files: dict[str, Path], simulated: dict[str, str | None]
) -> None:
    """Two schedulers with --leader-elect: one schedules, the other waits; when the leader stops
    (releasing its lease), the other takes over within a retry period."""
    async with fake_apiserver([files["cluster"]]) as h:
        leaders: list[str] = []

        def holder() -> str | None:
            lease = h.server._dicts["Lease"].get(("kube-system", "kubesched"))
            return lease["spec"].get("holderIdentity") if lease else None

        async def candidate(who: str, scope: anyio.CancelScope) -> None:
            with scope:
                async with kubesched_run(h, files["config"], leader_elect=True):
                    leaders.append(who)
                    await anyio.sleep_forever()

        a_scope, b_scope = anyio.CancelScope(), anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            tg.start_soon(candidate, "a", a_scope)
            await wait_for(lambda: leaders == ["a"])
            first = holder()
            assert first
            tg.start_soon(candidate, "b", b_scope)
            await wait_for(settled(h, simulated))
            await anyio.sleep(1.0)
            assert leaders == ["a"] and holder() == first
            a_scope.cancel()
            await wait_for(lambda: leaders == ["a", "b"], timeout=20)
            assert holder() not in (None, first)
            b_scope.cancel()
        assert holder() is None  # released on the way out
        assert not h.conflicts
        h.check_invariants()


# --- the deploy example's RBAC ------------------------------------------------------------------------

DEPLOY = Path(__file__).resolve().parents[2] / "examples" / "deploy"


def _access(method: str, target: str) -> tuple[str, str, str]:
    """(apiGroup, resource[/subresource], verb) of one request, as the authorizer sees it."""
    path, _, query = target.partition("?")
    parts = path.strip("/").split("/")
    group = "" if parts[0] == "api" else parts[1]
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) > 2:
        rest = rest[2:]
    resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
    named = len(rest) > 1
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method)
    if verb is None:
        verb = "watch" if "watch=true" in query else ("get" if named else "list")
    return group, resource, verb


def _allowed() -> set[tuple[str, str, str]]:
    import yaml

    out = set()
    for doc in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()):
        for rule in doc.get("rules", []):
            for g in rule["apiGroups"]:
                for r in rule["resources"]:
                    out |= {(g, r, v) for v in rule["verbs"]}
    return out


def _volume_docs() -> list[str]:
    sc = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: {}}}\nprovisioner: {}\nvolumeBindingMode: WaitForFirstConsumer\n"
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {}, namespace: default}}\nspec: {{accessModes: [ReadWriteOnce], storageClassName: {}, resources: {{requests: {{storage: 1Gi}}}}}}\n"
    pv = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-local}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], storageClassName: local, hostPath: {path: /data}}\n"
    vol = "  volumes: [{{name: d, persistentVolumeClaim: {{claimName: {}}}}}]\n"
    return [sc.format("local", "kubernetes.io/no-provisioner"), sc.format("dyn", "disk.csi.example.com"), pv,
            pvc.format("c-static", "local"), pvc.format("c-dyn", "dyn"),
            _pod("vol-static", 10, "10m", "1Mi", extra=vol.format("c-static")),
            _pod("vol-dyn", 10, "10m", "1Mi", extra=vol.format("c-dyn"))]  # fmt: skip


async def test_deploy_rbac_allows_exactly_the_verbs_used(
    files: dict[str, Path], simulated: dict[str, str | None], tmp_path: Path
) -> None:
    """A run that binds (one bind answering 409), reports failures, preempts, binds volumes and
    holds the lease, through a proxy recording every request: what it used is what rbac.yaml grants."""
    vip = load_manifests([str(write(tmp_path, [_pod("vip", 100000, "2800m", "1Gi")], "vip.yaml"))])[
        0
    ].obj
    async with fake_apiserver([files["cluster"]]) as h, anyio.create_task_group() as proxies:
        proxy = CuttingProxy(h.server.port)
        await proxies.start(proxy.serve)
        h.cluster.faults.fail_next("bind", ConflictError("Operation cannot be fulfilled"))
        async with kubesched_run(
            h,
            files["config"],
            server=proxy.url,
            leader_elect=True,
            renew_deadline=3.0,
            retry_period=1.0,
            lease_duration=5.0,
        ) as sched:
            await wait_for(settled(h, simulated))
            h.cluster.create(vip)
            await wait_for(
                lambda: h.placements().get("vip") is not None and sched.is_idle(), timeout=60
            )
            # VolumeBinding's PreBind updates a static PV and a claim to provision, each read first
            for obj in load_manifests([str(write(tmp_path, _volume_docs(), "volumes.yaml"))]):
                h.cluster.create(obj.obj)
            await wait_for(
                lambda: all(h.placements().get(p) is not None for p in ("vol-static", "vol-dyn"))
                and sched.is_idle(),
                timeout=60,
            )
            with anyio.move_on_after(20):  # until every verb granted is used (a lease renewal among them)
                await wait_for(lambda: {_access(m.decode(), t.decode()) for m, t in proxy.requests} >= _allowed())
        proxies.cancel_scope.cancel()
    used = {_access(m.decode(), t.decode()) for m, t in proxy.requests}
    assert any(v == "delete" for _, _, v in used), "no preemption happened"
    assert used == _allowed()
    h.check_invariants()


def test_deploy_config_is_valid() -> None:
    import yaml

    from kubesched.service import apply_config_sections

    cm = yaml.safe_load((DEPLOY / "config.yaml").read_text())
    text = cm["data"]["config.yaml"]
    cfg = load_config_file("config.yaml", text=text)
    assert [p.scheduler_name for p in cfg.profiles] == ["kubesched"]
    opts = RunOptions()
    apply_config_sections(opts, yaml.safe_load(text))
    assert (opts.leader_elect, opts.lease_namespace, opts.lease_name) == (
        True,
        "kube-system",
        "kubesched",
    )
    assert (opts.lease_duration, opts.renew_deadline, opts.retry_period) == (15.0, 10.0, 2.0)
    deployment = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "run" and "--config=/etc/kubesched/config.yaml" in args
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "--metrics-bind-address=0.0.0.0" in args  # probes reach the pod's IP, not loopback
    assert (container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"]) == (
        "/healthz", "/readyz")


# --- the command line ------------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the subprocess has its own loop: once is enough
async def test_cli_run_serves_metrics_and_stops_on_sigterm(
    files: dict[str, Path], simulated: dict[str, str | None], tmp_path: Path, anyio_backend: str
) -> None:
    scheduled_key = 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"}'
    expected = sum(1 for v in simulated.values() if v)
    port = free_port()
    log = tmp_path / "stderr.log"
    async with fake_apiserver([files["cluster"]]) as h:
        with log.open("wb") as err:
            proc = await anyio.open_process(
                [
                    sys.executable,
                    "-m",
                    "kubesched.cli",
                    "run",
                    "--server",
                    h.server.url,
                    "--config",
                    str(files["config"]),
                    "--metrics-port",
                    str(port),
                    "--metrics-address",
                    "127.0.0.1",
                ],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
            try:
                await wait_for(
                    lambda: all(h.placements()[n] == v for n, v in simulated.items() if v),
                    timeout=60,
                )
                text = ""
                async with httpx.AsyncClient() as client:
                    with anyio.fail_after(30):
                        while _metric(text, scheduled_key) < expected:
                            await anyio.sleep(0.1)
                            with suppress(httpx.HTTPError):
                                text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
                assert _metric(text, 'scheduler_pending_pods{queue="unschedulable"}') == 1
                assert _metric(text, 'scheduler_pending_pods{queue="active"}') == 0
                assert "scheduler_scheduling_attempt_duration_seconds_bucket" in text
                assert _metric(text, "scheduler_preemption_attempts_total") >= 1  # too-big tried
                proc.send_signal(signal.SIGTERM)
                with anyio.fail_after(20):
                    code = await proc.wait()
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
                await proc.aclose()
    assert code == 0, log.read_text()
    assert "received SIGTERM: shutting down" in log.read_text()
    assert h.placements() == simulated


def _metric(text: str, key: str) -> float:
    for line in text.splitlines():
        if line.startswith(key + " "):
            return float(line.split()[-1])
    return 0.0


def free_port() -> int:
    """A port that was free a moment ago."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_cli_run_bad_lease_name_is_one_line(files: dict[str, Path]) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched.cli",
            "run",
            "--server",
            "http://127.0.0.1:9",
            "--config",
            str(files["config"]),
            "--leader-elect",
            "--lease-name",
            "kube-scheduler",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == (
        "kubesched: error: kube-system/kube-scheduler is the default scheduler's lease: use another name"
    )


DEFAULT_PROFILE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
"""


async def _lease(h: Harness, renewed_ago: float, holder: str = "kind-control-plane_1b2c") -> None:
    """kube-system/kube-scheduler as a running kube-scheduler keeps it (15 s lease)."""
    from datetime import UTC, datetime, timedelta

    renew = (datetime.now(UTC) - timedelta(seconds=renewed_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renew, "acquireTime": renew},
    }
    async with httpx.AsyncClient(base_url=h.server.url) as client:
        r = await client.post("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", json=lease)
        assert r.status_code == 201, r.text


@pytest.mark.anyio
async def test_run_refuses_to_compete_with_a_running_kube_scheduler(files: dict[str, Path], tmp_path: Path) -> None:
    """A config whose profile takes default-scheduler pods and a kube-scheduler leading (its lease renewed 2 s ago): one line, nothing scheduled.  With another
    schedulerName, or --take-over-default-scheduler, or a lease long expired, it runs."""
    from kubesched import ConfigError

    config = write(tmp_path, [DEFAULT_PROFILE], "default.yaml")
    async with fake_apiserver([files["cluster"]]) as h:
        await _lease(h, renewed_ago=2)
        with pytest.raises(ConfigError) as info:
            await run_scheduler(RunOptions(server=h.server.url), load_config_file(str(config)), handle_signals=False)
        # the lease's age is read on the wall clock: 2 s, or a little more on a loaded machine
        assert re.sub(r"renewed [2-9]s ago", "renewed 2s ago", str(info.value)) == (
            "a kube-scheduler is running (lease kube-system/kube-scheduler held by "
            "kind-control-plane_1b2c, renewed 2s ago) and a profile schedules \"default-scheduler\" "
            "pods: both would bind them; pass a --config whose profiles have another schedulerName, "
            "or --take-over-default-scheduler"
        )
        assert h.binds == Counter()
        async with kubesched_run(h, files["config"]):  # schedulerName kubesched: no conflict
            pass
        async with kubesched_run(h, config, take_over_default_scheduler=True):
            pass
    async with fake_apiserver([files["cluster"]]) as h:
        await _lease(h, renewed_ago=60)  # expired: nobody leads
        async with kubesched_run(h, config):
            pass

