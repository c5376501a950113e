"""Scheduler extenders over real HTTP: filter, prioritize, bind, preempt; config validation.

Why one file: the extender protocol's upstream cases (filter, prioritize, bind, preempt,
config), one table each, over the same test servers.

The extenders are tiny HTTP servers the tests start on 127.0.0.1 (``http.server`` in a thread,
so the same server serves both anyio backends).  Real sockets need the real clock: this module
overrides the virtual-time ``anyio_backend`` fixture.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import numpy as np
import pytest

import kubesched
from kubesched import Status, hookimpl, per_node_filter
from kubesched.api._objects import Container, ResourceRequirements
from kubesched.config._config import ProfileConfig, SchedulerConfig, parse_config
from kubesched.plugins import IN_TREE
from kubesched.preemption import Candidate
from kubesched.queue._scheduling_queue import QueuedPodInfo
from kubesched.runtime._extender import HTTPExtender, parse_extenders
from kubesched.runtime._framework import CycleState
from kubesched.runtime._nodeinfo import NodeBatch, PodInfo
from kubesched.runtime._status import Code
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import FakeHandle, framework_for, make_node, make_pod
from kubesched.transports.fake import FakeCluster


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --- a tiny extender server ----------------------------------------------------------------------

Handler = Callable[[Any], Any]  # JSON body -> JSON answer, or (status code, answer)


class ExtenderServer:
    """An HTTP extender on 127.0.0.1: ``routes[verb](body)`` answers ``POST /<prefix>/<verb>``."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.requests: list[tuple[str, Any]] = []
        self.release = threading.Event()  # a hanging handler waits for it (bounded)
        outer = self

        class _H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                verb = self.path.rstrip("/").rsplit("/", 1)[-1]
                outer.requests.append((verb, body))
                assert self.headers["Content-Type"] == "application/json"
                fn = outer.routes.get(verb)
                code, answer = (404, {}) if fn is None else fn(body)
                data = json.dumps(answer).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/scheduler"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def route(self, verb: str, fn: Handler) -> None:
        self.routes[verb] = lambda body: r if isinstance(r := fn(body), tuple) else (200, r)

    def hang(self, verb: str) -> None:
        def wait(body: Any) -> Any:
            self.release.wait(10)  # bounded: the test's timeout fires long before
            return {}

        self.route(verb, wait)

    def verbs(self) -> list[str]:
        return [v for v, _ in self.requests]


@pytest.fixture
def servers() -> Iterator[Callable[[], ExtenderServer]]:
    started: list[ExtenderServer] = []

    def start() -> ExtenderServer:
        s = ExtenderServer()
        s.thread.start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.release.set()
        s.httpd.shutdown()
        s.httpd.server_close()
        s.thread.join(5)


def _names(body: Any) -> list[str]:
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def predicate(keep: Callable[[str], bool], *, unresolvable: bool = False) -> Handler:
    """tf.FakeExtender's Filter with one predicate: failing nodes get its message."""

    def fn(body: Any) -> Any:
        names = _names(body)
        kept = [n for n in body["Nodes"]["items"] if keep(n["metadata"]["name"])]
        failed = {n: f'FakeExtender: node "{n}" failed' for n in names if not keep(n)}
        key = "FailedAndUnresolvableNodes" if unresolvable else "FailedNodes"
        return {
            "Nodes": {"metadata": {}, "items": kept},
            "NodeNames": None,
            key: failed,
            "Error": "",
        }

    return fn


def error_predicate(body: Any) -> Any:
    return {"Error": "some error"}


def prioritizer(best: str, weight: int = 10) -> Handler:
    """tf.Node1PrioritizerExtender-like: ``best`` scores 10, the others 1 (× the function's weight)."""

    def fn(body: Any) -> Any:
        return [{"Host": n, "Score": (10 if n == best else 1) * weight} for n in _names(body)]

    return fn


def ext_config(server: ExtenderServer, **kw: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"urlPrefix": server.url}
    cfg.update(kw)
    return cfg


# --- plugins for the TestSchedulerWithExtenders profiles -----------------------------------------


class TrueFilter:
    name = "TrueFilter"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    @per_node_filter
    def kubesched_filter(
        self, state: CycleState, pod: kubesched.Pod, node_info: kubesched.NodeInfo
    ) -> Status | None:
        return None


class EqualPrioritizer:
    name = "EqualPrioritizer"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def kubesched_score(
        self, state: CycleState, pod: kubesched.Pod, nodes: kubesched.NodeBatch
    ) -> np.ndarray:
        return np.ones(len(nodes), dtype=np.int64)


class Node2Prioritizer:
    """tf.Node2PrioritizerPlugin: node2 scores MaxNodeScore, the others 0."""

    name = "Node2Prioritizer"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def kubesched_score(
        self, state: CycleState, pod: kubesched.Pod, nodes: kubesched.NodeBatch
    ) -> np.ndarray:
        return np.array([100 if n == "node2" else 0 for n in nodes.names], dtype=np.int64)


REGISTRY = {
    **IN_TREE,
    "TrueFilter": TrueFilter,
    "EqualPrioritizer": EqualPrioritizer,
    "Node2Prioritizer": Node2Prioritizer,
}


def _scheduler(
    extenders: list[dict[str, Any]],
    nodes: list[str],
    *,
    filters: bool = True,
    scores: tuple[tuple[str, int], ...] = (),
) -> Scheduler:
    enabled: dict[str, list[tuple[str, int]]] = {
        "queueSort": [("PrioritySort", 0)],
        "bind": [("DefaultBinder", 0)],
    }
    if filters:
        enabled["filter"] = [("TrueFilter", 0)]
    if scores:
        enabled["score"] = list(scores)
    cfg = SchedulerConfig(profiles=[ProfileConfig(enabled=enabled)], extenders=extenders)
    sched = Scheduler(FakeCluster(), cfg, registry=REGISTRY)
    for n in nodes:
        sched.handlers.on_node("ADDED", make_node(n).capacity(cpu="4", memory="8Gi").obj())
    return sched


async def _schedule(sched: Scheduler, pod: kubesched.Pod | None = None) -> Any:
    fw = sched.profiles["default-scheduler"]
    try:
        return await sched.scheduling.schedule_pod(fw, CycleState(), PodInfo(pod or make_pod("p").obj()))
    finally:
        for ext in sched.extenders:
            await ext.aclose()


# --- TestSchedulerWithExtenders (pkg/scheduler/extender_test.go), over HTTP ----------------------

WITH_EXTENDERS = [
    # (extenders: [(filter, prioritize, weight, extra config)], nodes, scores, want (host, evaluated, feasible) or error)
    pytest.param(
        [(lambda n: True, None, 0, {}), (error_predicate, None, 0, {})],
        ["node1", "node2"],
        (),
        "some error",
        id="test 1",
    ),
    pytest.param(
        [(lambda n: True, None, 0, {}), (lambda n: False, None, 0, {})],
        ["node1", "node2"],
        (),
        "fit",
        id="test 2",
    ),
    pytest.param(
        [(lambda n: True, None, 0, {}), (lambda n: n == "node1", None, 0, {})],
        ["node1", "node2"],
        (("EqualPrioritizer", 1),),
        ("node1", 2, 1),
        id="test 3",
    ),
    pytest.param(
        [(lambda n: n == "node2", None, 0, {}), (lambda n: n == "node1", None, 0, {})],
        ["node1", "node2"],
        (),
        "fit",
        id="test 4",
    ),
    pytest.param(
        [(lambda n: True, "error", 1, {})],
        ["node1"],
        (),
        ("node1", 1, 1),
        id="test 5",
    ),
    pytest.param(
        [
            (lambda n: True, prioritizer("node1"), 1, {}),
            (lambda n: True, prioritizer("node2"), 5, {}),
        ],
        ["node1", "node2"],
        (),
        ("node2", 2, 2),
        id="test 6",
    ),
    pytest.param(
        [(lambda n: True, prioritizer("node1"), 1, {})],
        ["node1", "node2"],
        (("Node2Prioritizer", 20),),
        ("node2", 2, 2),
        id="test 7 - node2 has higher score",
    ),
    pytest.param(
        [(error_predicate, "error", 1, {"managedResources": [{"name": "example.com/foo"}]})],
        ["node1", "node2"],
        (("Node2Prioritizer", 1),),
        ("node2", 2, 2),
        id="test 8 - not interested: never called",
    ),
    pytest.param(
        [(error_predicate, None, 0, {"ignorable": True}), (lambda n: n == "node1", None, 0, {})],
        ["node1", "node2"],
        (("EqualPrioritizer", 1),),
        ("node1", 2, 1),
        id="test 9 - ignorable error skipped",
    ),
    pytest.param(
        [(lambda n: True, None, 0, {}), (lambda n: n == "node1", None, 0, {})],
        ["node1", "node2"],
        (),
        ("node1", 2, 1),
        id="test 10 - no scoring, extender filters configured, multiple feasible nodes are evaluated",
    ),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("exts", "nodes", "scores", "want"), WITH_EXTENDERS)
async def test_scheduler_with_extenders(
    servers: Callable[[], ExtenderServer], exts: list[Any], nodes: list[str], scores: Any, want: Any
) -> None:
    configs = []
    for filt, prio, weight, extra in exts:
        srv = servers()
        srv.route("filter", filt if filt is error_predicate else predicate(filt))
        cfg = ext_config(srv, filterVerb="filter", **extra)
        if prio is not None:
            srv.route("prioritize", (lambda body: (500, {})) if prio == "error" else prio)
            cfg.update(prioritizeVerb="prioritize", weight=weight)
        configs.append(cfg)
    sched = _scheduler(configs, nodes, scores=scores)
    if want == "fit":
        with pytest.raises(kubesched.FitError):
            await _schedule(sched)
    elif isinstance(want, str):
        with pytest.raises(Exception, match=want):
            await _schedule(sched)
    else:
        result = await _schedule(sched)
        assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == want


@pytest.mark.anyio
async def test_binder_only_extender_evaluates_a_single_node(
    servers: Callable[[], ExtenderServer],
) -> None:
    """test 11 - no scoring, no prefilters or extender filters configured, a single feasible node is evaluated."""
    srv = servers()
    sched = _scheduler([ext_config(srv, bindVerb="bind")], ["node1", "node2"], filters=False)
    result = await _schedule(sched)
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("node1", 1, 1)
    assert srv.requests == []


# --- filter ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_filter_failed_nodes_are_in_the_fit_error(
    servers: Callable[[], ExtenderServer],
) -> None:
    a, b = servers(), servers()
    a.route("filter", predicate(lambda n: n != "node1", unresolvable=True))
    b.route("filter", predicate(lambda n: n != "node2"))
    sched = _scheduler(
        [ext_config(a, filterVerb="filter"), ext_config(b, filterVerb="filter")], ["node1", "node2"]
    )
    with pytest.raises(kubesched.FitError) as err:
        await _schedule(sched)
    assert str(err.value) == (
        '0/2 nodes are available: 1 FakeExtender: node "node1" failed, 1 FakeExtender: node "node2" failed.'
    )
    d = err.value.diagnosis
    assert d.node_to_status["node1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert d.node_to_status["node2"].code == Code.UNSCHEDULABLE
    assert d.unschedulable_plugins == {"Extender"}
    # the second extender saw only what the first kept
    assert _names(b.requests[0][1]) == ["node2"]


@pytest.mark.anyio
async def test_failed_and_unresolvable_takes_precedence(
    servers: Callable[[], ExtenderServer],
) -> None:
    srv = servers()
    srv.route(
        "filter",
        lambda body: {
            "Nodes": {"items": []},
            "FailedNodes": {"node1": "retry me"},
            "FailedAndUnresolvableNodes": {"node1": "never"},
        },
    )
    sched = _scheduler([ext_config(srv, filterVerb="filter")], ["node1"])
    with pytest.raises(kubesched.FitError) as err:
        await _schedule(sched)
    assert str(err.value) == "0/1 nodes are available: 1 never."
    assert err.value.diagnosis.node_to_status["node1"] == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "never"
    )


@pytest.mark.anyio
async def test_filter_request_is_upstreams_wire_format(
    servers: Callable[[], ExtenderServer],
) -> None:
    srv = servers()
    # answer with lower-case field names: read case-insensitively, as Go's encoding/json does
    srv.route(
        "filter",
        lambda body: {
            "nodes": {"items": body["Nodes"]["items"][:1]},
            "failedNodes": {"node2": "no"},
        },
    )
    sched = _scheduler([ext_config(srv, filterVerb="filter")], ["node1", "node2"])
    pod = make_pod("p").uid("uid-p").req(cpu="500m").obj()
    result = await _schedule(sched, pod)
    assert result.suggested_host == "node1"
    verb, body = srv.requests[0]
    assert verb == "filter"
    assert set(body) == {"Pod", "Nodes", "NodeNames"}
    assert body["NodeNames"] is None
    assert body["Pod"]["metadata"] == {"name": "p", "namespace": "default", "uid": "uid-p"}
    assert body["Pod"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "500m"}}
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["node1", "node2"]
    assert body["Nodes"]["items"][0]["status"]["allocatable"]["cpu"] == "4"


@pytest.mark.anyio
async def test_filter_errors(servers: Callable[[], ExtenderServer]) -> None:
    srv = servers()
    srv.route("filter", lambda body: (500, {}))
    sched = _scheduler([ext_config(srv, filterVerb="filter")], ["node1"])
    with pytest.raises(
        Exception, match=f"failed filter with extender at URL {srv.url}/filter, code 500"
    ):
        await _schedule(sched)
    srv.route("filter", lambda body: {"Nodes": {"items": [{"metadata": {"name": "ghost"}}]}})
    with pytest.raises(Exception, match=f'extender "{srv.url}" claims a filtered node "ghost"'):
        await _schedule(sched)


@pytest.mark.anyio
async def test_filter_error_fails_the_cycle_with_scheduler_error(
    servers: Callable[[], ExtenderServer],
) -> None:
    srv = servers()
    srv.route("filter", error_predicate)
    sched = _scheduler([ext_config(srv, filterVerb="filter")], ["node1"])
    fw = sched.profiles["default-scheduler"]
    qpi = QueuedPodInfo(PodInfo(make_pod("p").obj()))
    _, _, status, nominating = await sched.scheduling.scheduling_cycle(fw, CycleState(), qpi)
    await sched.extenders[0].aclose()
    assert status is not None and status.code == Code.ERROR and status.message == "some error"
    assert nominating == ""


@pytest.mark.anyio
async def test_timeout_and_unreachable(servers: Callable[[], ExtenderServer]) -> None:
    slow = servers()
    slow.hang("filter")
    sched = _scheduler([ext_config(slow, filterVerb="filter", httpTimeout="200ms")], ["node1"])
    with anyio.fail_after(5):
        with pytest.raises(Exception, match="context deadline exceeded"):
            await _schedule(sched)
    # ignorable: a timeout and a refused connection are both skipped
    gone = servers()
    dead_url = gone.url
    gone.httpd.shutdown()
    gone.httpd.server_close()
    sched = _scheduler(
        [
            ext_config(slow, filterVerb="filter", httpTimeout="200ms", ignorable=True),
            {"urlPrefix": dead_url, "filterVerb": "filter", "ignorable": True},
        ],
        ["node1", "node2"],
    )
    with anyio.fail_after(5):
        result = await _schedule(sched)
    assert result.feasible_nodes == 2


# --- prioritize -------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_prioritize_weights(servers: Callable[[], ExtenderServer]) -> None:
    a, b = servers(), servers()
    a.route(
        "prioritize", lambda body: [{"Host": "node1", "Score": 10}, {"Host": "node2", "Score": 3}]
    )
    b.route(
        "prioritize", lambda body: [{"host": "node2", "score": 5}, {"Host": "unknown", "Score": 10}]
    )
    sched = _scheduler(
        [
            ext_config(a, prioritizeVerb="prioritize", weight=1),
            ext_config(b, prioritizeVerb="prioritize", weight=3),
        ],
        ["node1", "node2", "node3"],
        scores=(("EqualPrioritizer", 1),),
    )
    fw = sched.profiles["default-scheduler"]
    sched.snapshot.update(sched.cache)
    pod = make_pod("p").obj()
    total = await sched.scheduling.prioritize_nodes(
        fw, CycleState(), pod, NodeBatch(snapshot=sched.snapshot, indices=np.arange(3))
    )
    for ext in sched.extenders:
        await ext.aclose()
    # EqualPrioritizer gives 1; an extender adds score × weight × 10
    assert total.tolist() == [1 + 10 * 1 * 10, 1 + 3 * 1 * 10 + 5 * 3 * 10, 1]


# --- bind -------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_bind_extender_binds_before_bind_plugins(
    servers: Callable[[], ExtenderServer],
) -> None:
    srv = servers()
    srv.route("bind", lambda body: {"Error": ""})
    sched = _scheduler([ext_config(srv, bindVerb="bind")], ["node1"])
    fw = sched.profiles["default-scheduler"]
    pod = make_pod("p").uid("uid-p").obj()
    st = await sched.binding.bind(fw, CycleState(), pod, "node1")
    assert st is None
    assert srv.requests == [
        ("bind", {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "node1"})
    ]
    srv.route("bind", lambda body: {"Error": "no room at the inn"})
    st = await sched.binding.bind(fw, CycleState(), pod, "node1")
    await sched.extenders[0].aclose()
    assert st is not None and st.code == Code.ERROR and st.message == "no room at the inn"


@pytest.mark.anyio
async def test_bind_extender_not_interested_or_ignorable_falls_back_to_bind_plugins(
    servers: Callable[[], ExtenderServer],
) -> None:
    srv = servers()
    srv.route("bind", lambda body: (503, {}))
    for extra in ({"ignorable": True}, {"managedResources": [{"name": "example.com/foo"}]}):
        async with FakeCluster() as cluster:
            pod = make_pod("p").obj()
            cluster.create(make_node("node1").obj())
            cluster.create(pod)
            cfg = SchedulerConfig(
                profiles=[
                    ProfileConfig(
                        enabled={"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)]}
                    )
                ],
                extenders=[ext_config(srv, bindVerb="bind", **extra)],
            )
            sched = Scheduler(cluster, cfg)
            fw = sched.profiles["default-scheduler"]
            st = await sched.binding.bind(fw, CycleState(), cluster.get_pod("default", "p"), "node1")
            await sched.extenders[0].aclose()
            assert st is None
            bound = cluster.get_pod("default", "p")
            assert bound is not None and bound.spec.node_name == "node1"
    assert srv.verbs() == ["bind"]  # called once (ignorable), never when not interested


@pytest.mark.anyio
async def test_end_to_end_with_filter_prioritize_and_bind(
    servers: Callable[[], ExtenderServer],
) -> None:
    """The scheduler loop on a fake cluster: the extender filters, scores, and binds."""
    srv = servers()
    srv.route("filter", predicate(lambda n: n != "node3"))
    srv.route("prioritize", prioritizer("node2", weight=1))
    srv.route("bind", lambda body: {})
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": [
            ext_config(
                srv, filterVerb="filter", prioritizeVerb="prioritize", weight=5, bindVerb="bind"
            )
        ],
    }
    cfg = parse_config(doc)
    async with FakeCluster() as cluster:
        for n in ("node1", "node2", "node3"):
            cluster.create(make_node(n).capacity(cpu="4", memory="8Gi").obj())
        cluster.create(make_pod("p").req(cpu="1").obj())
        sched = Scheduler(cluster, cfg)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            with anyio.fail_after(10):
                while "bind" not in srv.verbs():
                    await anyio.sleep(0.01)
                while not any(e.reason == "Scheduled" for e in cluster.events):
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    assert srv.verbs() == ["filter", "prioritize", "bind"]
    assert srv.requests[2][1]["Node"] == "node2"
    ev = next(e for e in cluster.events if e.reason == "Scheduled")
    assert ev.message == "Successfully assigned default/p to node2"
    assert sched.extenders[0]._client is None  # closed when the scheduler stopped


# --- preempt ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_process_preemption_over_http(servers: Callable[[], ExtenderServer]) -> None:
    srv = servers()
    victims_on = {"node1": ["v1", "v2"], "node2": ["v3"]}

    def preempt(body: Any) -> Any:
        # keep node1 only, and only its first victim
        got = body["NodeNameToVictims"]
        assert body["NodeNameToMetaVictims"] is None
        assert {n: [p["metadata"]["name"] for p in v["Pods"]] for n, v in got.items()} == victims_on
        assert got["node1"]["NumPDBViolations"] == 1
        return {
            "NodeNameToMetaVictims": {"node1": {"Pods": [{"UID": "uid-v1"}], "NumPDBViolations": 1}}
        }

    srv.route("preempt", preempt)
    pods = [
        make_pod(n).uid(f"uid-{n}").node(node).obj()
        for node, names in victims_on.items()
        for n in names
    ]
    fw = framework_for({"filter": []}, [make_node("node1").obj(), make_node("node2").obj()], pods)
    ext = HTTPExtender(ext_config(srv, preemptVerb="preempt"))
    by_name = {p.metadata.name: p for p in pods}
    candidates = {
        "node1": Candidate("node1", [by_name["v1"], by_name["v2"]], 1),
        "node2": Candidate("node2", [by_name["v3"]], 0),
    }
    got = await ext.process_preemption(make_pod("preemptor").obj(), candidates, fw.snapshot)
    assert {
        n: ([v.metadata.name for v in c.victims], c.num_pdb_violations) for n, c in got.items()
    } == {"node1": (["v1"], 1)}
    # a victim the scheduler does not know is an error
    srv.route(
        "preempt", lambda body: {"NodeNameToMetaVictims": {"node2": {"Pods": [{"UID": "nope"}]}}}
    )
    # upstream extender.go convertPodUIDToPod's error, whole (%v of a *MetaPod prints &{nope})
    with pytest.raises(Exception) as raised:
        await ext.process_preemption(make_pod("preemptor").obj(), candidates, fw.snapshot)
    assert str(raised.value) == (
        f"extender: {srv.url} claims to preempt pod (UID: &{{nope}}) on node: node2, "
        "but the pod is not found on that node"
    )
    await ext.aclose()


@pytest.mark.anyio
async def test_call_extenders_with_http_extenders(servers: Callable[[], ExtenderServer]) -> None:
    """Evaluator.callExtenders with real extenders: an ignorable error is skipped, the other
    narrows the candidates, a non-preempting one is never asked."""
    broken, narrowing, filter_only = servers(), servers(), servers()
    broken.route("preempt", lambda body: (500, {}))
    narrowing.route(
        "preempt",
        lambda body: {
            "NodeNameToMetaVictims": {
                "node2": {
                    "Pods": [
                        {"UID": p["metadata"]["uid"]}
                        for p in body["NodeNameToVictims"]["node2"]["Pods"]
                    ]
                }
            }
        },
    )
    pods = [
        make_pod("a").uid("uid-a").node("node1").obj(),
        make_pod("b").uid("uid-b").node("node2").obj(),
    ]
    extenders = [
        HTTPExtender(ext_config(broken, preemptVerb="preempt", ignorable=True)),
        HTTPExtender(ext_config(narrowing, preemptVerb="preempt")),
        HTTPExtender(ext_config(filter_only, filterVerb="filter")),
    ]
    nodes = [make_node("node1").obj(), make_node("node2").obj()]
    fw = framework_for(
        {"postFilter": ["DefaultPreemption"]}, handle=FakeHandle(nodes, pods, extenders=extenders)
    )
    ev = fw.plugin("DefaultPreemption").evaluator
    cands = [Candidate("node1", [pods[0]]), Candidate("node2", [pods[1]])]
    got, st = await ev.call_extenders(make_pod("p").obj(), cands)
    assert st is None
    assert [(c.name, [v.metadata.name for v in c.victims]) for c in got] == [("node2", ["b"])]
    # not ignorable: the error fails preemption
    extenders[0] = HTTPExtender(ext_config(broken, preemptVerb="preempt"))
    got, st = await ev.call_extenders(make_pod("p").obj(), cands)
    assert st is not None and st.code == Code.ERROR
    assert st.message == f"failed preempt with extender at URL {broken.url}/preempt, code 500"
    # an empty victim list from a non-ignorable extender is an error
    narrowing.route("preempt", lambda body: {"NodeNameToMetaVictims": {"node1": {"Pods": []}}})
    del extenders[0]  # the handle's list
    got, st = await ev.call_extenders(make_pod("p").obj(), cands)
    assert st is not None and st.message == 'expected at least one victim pod on node "node1"'
    for ext in extenders:
        await ext.aclose()
    assert filter_only.requests == []


# --- interest (TestIsInterested) -----------------------------------------------------------------


def _with_limits(limits: dict[str, str]) -> kubesched.Pod:
    pod = make_pod("p").obj()
    pod.spec.containers = [Container(name="c", resources=ResourceRequirements(limits=limits))]
    return pod


@pytest.mark.parametrize(
    ("managed", "pod", "want"),
    [
        pytest.param([], make_pod("p").obj(), True, id="Empty managed resources"),
        pytest.param(
            ["example.com/mem"],
            make_pod("p").container().obj(),
            False,
            id="Managed memory, empty resources",
        ),
        pytest.param(
            ["example.com/mem"],
            make_pod("p").req_list({"example.com/mem": "0"}).obj(),
            True,
            id="Managed memory, container memory with Requests",
        ),
        pytest.param(
            ["example.com/mem"],
            _with_limits({"example.com/mem": "0"}),
            True,
            id="Managed memory, container memory with Limits",
        ),
        pytest.param(
            ["example.com/mem"],
            make_pod("p").container().init_req({"example.com/mem": "0"}).obj(),
            True,
            id="Managed memory, init container memory",
        ),
        pytest.param(
            ["example.com/mem"], make_pod("p").req(cpu="1").obj(), False, id="other resources only"
        ),
    ],
)
def test_is_interested(managed: list[str], pod: kubesched.Pod, want: bool) -> None:
    ext = HTTPExtender(
        {"urlPrefix": "http://127.0.0.1:1", "managedResources": [{"name": n} for n in managed]}
    )
    assert ext.is_interested(pod) is want


# --- configuration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extenders", "message"),
    [
        pytest.param(
            [{"urlPrefix": "http://x", "prioritizeVerb": "prioritize", "weight": 0}],
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
            id="TestValidateKubeSchedulerConfiguration › negative extender weight",
        ),
        pytest.param(
            [{"urlPrefix": "http://x", "prioritizeVerb": "prioritize"}],
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
            id="prioritize without a weight",
        ),
        pytest.param(
            [
                {"urlPrefix": "http://x", "bindVerb": "bar"},
                {"urlPrefix": "http://y", "bindVerb": "baz"},
            ],
            'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
            id="TestValidateKubeSchedulerConfiguration › only one extender can implement bind",
        ),
        pytest.param(
            [
                {
                    "urlPrefix": "http://x",
                    "managedResources": [{"name": "example.com/foo"}, {"name": "example.com/foo"}],
                }
            ],
            'extenders[0].managedResources[1].name: Invalid value: "example.com/foo": duplicate extender managed resource name',
            id="TestValidateKubeSchedulerConfiguration › duplicate extender managed resource name",
        ),
        pytest.param(
            [{"urlPrefix": "http://x", "managedResources": [{"name": "kubernetes.io/foo"}]}],
            'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid extended resource name',
            id="TestValidateKubeSchedulerConfiguration › invalid extended resource name",
        ),
        pytest.param(
            [{"filterVerb": "filter"}],
            "extenders[0].urlPrefix: Required value: the extender's URL prefix is required",
            id="urlPrefix is required",
        ),
        pytest.param(
            [{"urlPrefix": "http://x", "nodeCacheCapable": True}],
            "extenders[0].nodeCacheCapable: Unsupported value: true: kubesched keeps no node cache for extenders; "
            "only nodeCacheCapable: false is supported (full Node objects are sent)",
            id="nodeCacheCapable is not supported",
        ),
        pytest.param(
            [{"urlPrefix": "http://x", "filterVerb": "filter", "verb": "x"}],
            'strict decoding error: unknown field "extenders[0].verb"',
            id="unknown field",
        ),
        pytest.param(
            [{"urlPrefix": "http://x", "httpTimeout": "soon"}],
            'extenders[0].httpTimeout: Invalid value: "soon": time: invalid duration "soon"',
            id="bad httpTimeout",
        ),
        pytest.param(
            [{"urlPrefix": "http://x", "weight": "heavy"}],
            'extenders[0].weight: Invalid value: "heavy": must be an integer',
            id="weight of the wrong type",
        ),
    ],
)
def test_config_validation(extenders: list[Any], message: str) -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "extenders": extenders,
    }
    with pytest.raises(kubesched.ConfigError) as err:
        parse_config(doc)
    assert str(err.value) == message


@pytest.mark.anyio
async def test_config_defaults_and_ignored_resources() -> None:
    [cfg] = parse_extenders(
        [
            {
                "urlPrefix": "https://ext:8443/",
                "filterVerb": "filter",
                "enableHTTPS": True,
                "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
            }
        ]
    )
    assert cfg.http_timeout == 5.0  # upstream's DefaultExtenderTimeout
    assert cfg.ignored_by_scheduler == ("example.com/gpu",)
    assert (
        parse_extenders([{"urlPrefix": "http://x", "httpTimeout": "30s"}])[0].http_timeout == 30.0
    )
    ext = HTTPExtender(cfg)
    assert ext.name == "https://ext:8443/"
    assert ext._verify() is False  # HTTPS without a CA: insecure, as makeTransport
    # ignoredByScheduler resources are NodeResourcesFit's ignoredResources
    sched = Scheduler(
        FakeCluster(),
        SchedulerConfig(
            extenders=[
                {
                    "urlPrefix": "http://x",
                    "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
                }
            ]
        ),
    )
    fit = sched.profiles["default-scheduler"].plugins["NodeResourcesFit"]
    assert fit.args.ignored_resources == ["example.com/gpu"]
