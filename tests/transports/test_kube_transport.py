"""The live-API transport's protocol, against ``httpx.MockTransport``, in virtual time on both
backends: list-then-watch, bookmarks, 410 and dropped-connection re-lists, the write verbs and
their error mapping, the QPS limiter, leader election.

Why one file: one transport's protocol end to end; each section is one verb or behaviour, in the
order the transport's module defines them.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from kubesched import (
    Binding,
    ConflictError,
    Event,
    Node,
    NotFoundError,
    Pod,
    PriorityClass,
    Scheduler,
    TransportError,
    UnavailableError,
    WatchEvent,
)
from kubesched.api._objects import ObjectMeta, ObjectReference, PodCondition
from kubesched.testing import make_node, make_pod
from kubesched.transports.kube import (
    RESOURCES,
    ApiClient,
    ClusterConfig,
    KubeTransport,
    LeaderElectionLost,
    LeaderElector,
    TokenBucket,
)

pytestmark = pytest.mark.anyio

PATHS = {r.kind: r.path for r in RESOURCES}


# --- a scriptable API server ---------------------------------------------------------------------


class _Lines:
    """One open watch response: lines pushed by the test, ended cleanly or with an error."""

    def __init__(self) -> None:
        self.lines: deque[bytes] = deque()
        self.wakeup = anyio.Event()
        self.end: BaseException | bool = False

    def push(self, line: bytes) -> None:
        self.lines.append(line)
        self.wakeup.set()

    def close(self, error: BaseException | None = None) -> None:
        self.end = error or True
        self.wakeup.set()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            while self.lines:
                yield self.lines.popleft()
            if self.end is not False:
                if isinstance(self.end, BaseException):
                    raise self.end
                return
            self.wakeup = anyio.Event()
            await self.wakeup.wait()


def _wire(obj: Any) -> dict[str, Any]:
    return obj if isinstance(obj, dict) else msgspec.to_builtins(obj)


class MockApi:
    """Objects per collection path with resource versions, watches the test drives, one-shot
    scripted answers, and a record of every request."""

    def __init__(self) -> None:
        self.rv = 100
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {
            p: {} for p in PATHS.values()
        }
        self.watches: dict[str, list[_Lines]] = {p: [] for p in PATHS.values()}
        self.requests: list[httpx.Request] = []
        self.scripted: list[tuple[str, str, Callable[[httpx.Request], httpx.Response]]] = []
        self.oldest_rv = 0  # a watch from below this is 410 Gone
        self.page_size: int | None = None
        self.handlers: list[Callable[[httpx.Request], httpx.Response | None]] = []

    # the test's side
    def put(
        self, kind: str, obj: Any, *, notify: bool = True, type_: str | None = None
    ) -> dict[str, Any]:
        self.rv += 1
        data = _wire(obj)
        md = data.setdefault("metadata", {})
        md["resourceVersion"] = str(self.rv)
        md.setdefault("uid", f"uid-{md['name']}")
        key = (md.get("namespace", ""), md["name"])
        table = self.objects[PATHS[kind]]
        existed = key in table
        table[key] = data
        if notify:
            self.send(kind, type_ or ("MODIFIED" if existed else "ADDED"), data)
        return data

    def remove(self, kind: str, name: str, namespace: str = "", *, notify: bool = True) -> None:
        self.rv += 1
        data = self.objects[PATHS[kind]].pop((namespace, name))
        data["metadata"]["resourceVersion"] = str(self.rv)
        if notify:
            self.send(kind, "DELETED", data)

    def send(self, kind: str, type_: str, obj: dict[str, Any]) -> None:
        line = json.dumps({"type": type_, "object": obj}).encode() + b"\n"
        for w in self.watches[PATHS[kind]]:
            w.push(line)

    def bookmark(self, kind: str) -> None:
        self.rv += 1
        self.send(kind, "BOOKMARK", {"kind": kind, "metadata": {"resourceVersion": str(self.rv)}})

    def drop(self, kind: str, error: BaseException | None = None) -> None:
        for w in self.watches[PATHS[kind]]:
            w.close(error)
        self.watches[PATHS[kind]].clear()

    def script(
        self,
        method: str,
        path: str,
        response: Callable[[httpx.Request], httpx.Response] | httpx.Response,
    ) -> None:
        """Answer the next ``method path`` with ``response`` (once)."""
        fn = response if callable(response) else (lambda _r, resp=response: resp)
        self.scripted.append((method, path, fn))

    def of(self, method: str, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == method and r.url.path == path]

    def watch_requests(self, kind: str) -> list[httpx.Request]:
        return [r for r in self.of("GET", PATHS[kind]) if r.url.params.get("watch")]

    def list_requests(self, kind: str) -> list[httpx.Request]:
        return [r for r in self.of("GET", PATHS[kind]) if not r.url.params.get("watch")]

    # the server's side
    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for i, (method, path, fn) in enumerate(self.scripted):
            if method == request.method and path == request.url.path:
                del self.scripted[i]
                return fn(request)
        for h in self.handlers:
            resp = h(request)
            if resp is not None:
                return resp
        path = request.url.path
        if request.method == "GET" and path in self.objects:
            if request.url.params.get("watch"):
                rv = int(request.url.params.get("resourceVersion") or 0)
                if rv < self.oldest_rv:
                    return status(410, "Expired", "too old resource version")
                lines = _Lines()
                self.watches[path].append(lines)
                return httpx.Response(200, content=aiter(lines))
            items = list(self.objects[path].values())
            start = int(request.url.params.get("continue") or 0)
            size = self.page_size or len(items) or 1
            page = items[start : start + size]
            more = start + size < len(items)
            meta = {
                "resourceVersion": str(self.rv),
                **({"continue": str(start + size)} if more else {}),
            }
            return httpx.Response(200, json={"kind": "List", "items": page, "metadata": meta})
        return status(404, "NotFound", f"{path} not found")


def status(code: int, reason: str, message: str) -> httpx.Response:
    return httpx.Response(
        code,
        json={
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": reason,
            "message": message,
            "code": code,
        },
    )


@pytest.fixture
def api() -> MockApi:
    return MockApi()


def transport(api: MockApi, **kw: Any) -> KubeTransport:
    kw.setdefault("seed", 1)
    return KubeTransport("http://mock", http_transport=httpx.MockTransport(api), **kw)


async def eventually(pred: Callable[[], Any], timeout: float = 120.0) -> None:
    with anyio.fail_after(timeout):
        while not pred():
            await anyio.sleep(0.05)


async def take(watch: Any, n: int) -> list[WatchEvent]:
    out = []
    with anyio.fail_after(120):
        async for ev in watch:
            out.append(ev)
            if len(out) == n:
                break
    return out


def names(events: list[WatchEvent]) -> list[tuple[str, str]]:
    return [(e.type, e.obj.metadata.name if e.obj is not None else "") for e in events]


async def until_synced(watch: Any) -> list[WatchEvent]:
    out = []
    with anyio.fail_after(120):
        async for ev in watch:
            if ev.type == "SYNCED":
                return out
            out.append(ev)
    raise AssertionError("watch ended before SYNCED")


def pod(name: str, **kw: Any) -> dict[str, Any]:
    data = msgspec.to_builtins(make_pod(name).obj())
    data["metadata"]["uid"] = f"uid-{name}"
    data["metadata"].update(kw)
    return data


# --- list then watch --------------------------------------------------------------------------


async def test_lists_every_kind_in_order_then_synced_then_changes(api: MockApi) -> None:
    api.put("Pod", pod("p1"), notify=False)
    api.put("Node", make_node("n1").obj(), notify=False)
    api.put(
        "PriorityClass", PriorityClass(metadata=ObjectMeta(name="high"), value=10), notify=False
    )
    async with transport(api) as t:
        w = t.watch()
        listed = await until_synced(w)
        assert [type(e.obj) for e in listed] == [PriorityClass, Node, Pod]
        assert all(e.type == "ADDED" for e in listed)
        assert listed[2].obj.metadata.uid == "uid-p1"
        await eventually(lambda: len(api.watch_requests("Pod")) == 1)
        wr = api.watch_requests("Pod")[0]
        assert wr.url.params["allowWatchBookmarks"] == "true"
        assert wr.url.params["resourceVersion"] == str(api.rv)
        assert 300 <= int(wr.url.params["timeoutSeconds"]) <= 600
        api.put("Pod", pod("p2"))
        api.put("Pod", pod("p1", labels={"a": "b"}))
        api.remove("Pod", "p2", "default")
        assert names(await take(w, 3)) == [("ADDED", "p2"), ("MODIFIED", "p1"), ("DELETED", "p2")]
        assert w.get_nowait() is None and not w.pending()


async def test_get_nowait_returns_delivered_events(api: MockApi) -> None:
    async with transport(api) as t:
        w = t.watch()
        await until_synced(w)
        await eventually(lambda: len(api.watch_requests("Node")) == 1)
        api.put("Node", make_node("n1").obj())
        api.put("Node", make_node("n2").obj())
        await eventually(w.pending)
        await eventually(lambda: len(w._queue) == 2)
        assert names([w.get_nowait(), w.get_nowait()]) == [("ADDED", "n1"), ("ADDED", "n2")]  # type: ignore[list-item]
        assert w.get_nowait() is None and not w.pending()


async def test_paginated_list(api: MockApi) -> None:
    api.page_size = 2
    for i in range(5):
        api.put("Node", make_node(f"n{i}").obj(), notify=False)
    async with transport(api, page_size=2) as t:
        listed = await until_synced(t.watch())
    assert [e.obj.metadata.name for e in listed] == [f"n{i}" for i in range(5)]
    pages = api.list_requests("Node")
    assert [r.url.params.get("continue") for r in pages] == [None, "2", "4"]
    assert all(r.url.params["limit"] == "2" for r in pages)


async def test_podgroups_not_served_is_empty(api: MockApi) -> None:
    api.objects.pop(PATHS["PodGroup"])
    api.put("Node", make_node("n1").obj(), notify=False)
    async with transport(api) as t:
        listed = await until_synced(t.watch())
        assert names(listed) == [("ADDED", "n1")]
        assert not api.watch_requests("PodGroup")


async def test_bookmark_moves_the_resource_version_without_an_event(api: MockApi) -> None:
    async with transport(api) as t:
        w = t.watch()
        await until_synced(w)
        await eventually(lambda: len(api.watch_requests("Pod")) == 1)
        api.bookmark("Pod")
        bookmark_rv = str(api.rv)
        await eventually(lambda: t.reflectors[-1].resource_version == bookmark_rv)
        assert not w.pending()
        api.drop("Pod")  # the server's timeoutSeconds: a clean end
        await eventually(lambda: len(api.watch_requests("Pod")) == 2)
        assert api.watch_requests("Pod")[1].url.params["resourceVersion"] == bookmark_rv
        assert len(api.list_requests("Pod")) == 1  # no re-list after a clean end
        api.put("Pod", pod("p1"))
        assert names(await take(w, 1)) == [("ADDED", "p1")]


@pytest.mark.parametrize(
    "how",
    [
        pytest.param("error-event", id="410 as a watch ERROR event"),
        pytest.param("http-status", id="410 answering the watch request"),
        pytest.param("dropped", id="connection dropped mid-stream"),
    ],
)
async def test_relist_diffs_against_what_was_seen(api: MockApi, how: str) -> None:
    api.put("Pod", pod("keep"), notify=False)
    api.put("Pod", pod("change"), notify=False)
    api.put("Pod", pod("gone"), notify=False)
    api.put("Pod", pod("recreated"), notify=False)
    async with transport(api) as t:
        w = t.watch()
        assert len(await until_synced(w)) == 4
        await eventually(lambda: len(api.watch_requests("Pod")) == 1)
        # changes the watch never delivers
        api.put("Pod", pod("change", labels={"v": "2"}), notify=False)
        api.remove("Pod", "gone", "default", notify=False)
        api.remove("Pod", "recreated", "default", notify=False)
        api.put("Pod", pod("recreated", uid="uid-new"), notify=False)
        api.put("Pod", pod("new"), notify=False)
        if how == "error-event":
            api.send(
                "Pod",
                "ERROR",
                {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
            )
        elif how == "http-status":
            api.oldest_rv = api.rv
            await anyio.sleep(5)
            api.drop("Pod")  # the server's timeout: a clean end; the re-watch gets 410
        else:
            api.drop("Pod", httpx.RemoteProtocolError("peer closed connection"))
        events = await take(w, 5)
        assert sorted(names(events)) == sorted(
            [
                ("DELETED", "gone"),
                ("DELETED", "recreated"),
                ("ADDED", "recreated"),
                ("ADDED", "new"),
                ("MODIFIED", "change"),
            ]
        )
        by = {(e.type, e.obj.metadata.name): e.obj for e in events}
        assert by[("DELETED", "recreated")].metadata.uid == "uid-recreated"
        assert by[("ADDED", "recreated")].metadata.uid == "uid-new"
        assert len(api.list_requests("Pod")) == 2
        assert len(api.list_requests("Node")) == 1  # only the failed kind re-lists
        if how == "http-status":
            assert [r.url.params["resourceVersion"] for r in api.watch_requests("Pod")][1:] == [
                "104",
                "109",
            ]
        await eventually(lambda: len(api.watch_requests("Pod")) >= 2)
        api.put("Pod", pod("later"))
        assert names(await take(w, 1)) == [("ADDED", "later")]


async def test_failed_relists_back_off(api: MockApi) -> None:
    async with transport(api) as t:
        w = t.watch()
        await until_synced(w)
        await eventually(lambda: len(api.watch_requests("Pod")) == 1)
        for _ in range(3):
            api.script("GET", PATHS["Pod"], status(503, "ServiceUnavailable", "etcd is down"))
        # the ApiClient retries a 503 itself: make each list attempt fail past its retries
        t.api.max_retries = 0
        start = anyio.current_time()
        api.drop("Pod", httpx.ReadError("reset"))
        await eventually(lambda: len(api.list_requests("Pod")) == 5)
        waited = anyio.current_time() - start
        # 0.8 + 1.6 + 3.2 + 6.4 s, each with up to 100% jitter
        assert 0.8 + 1.6 + 3.2 + 6.4 <= waited <= 2 * (0.8 + 1.6 + 3.2 + 6.4) + 1


async def test_watch_needs_async_with(api: MockApi) -> None:
    t = transport(api)
    with pytest.raises(RuntimeError, match="async with"):
        t.watch()
    await t.aclose()


# --- writes -----------------------------------------------------------------------------------

BIND_PATH = "/api/v1/namespaces/default/pods/p1/binding"
POD_PATH = "/api/v1/namespaces/default/pods/p1"


def binding(node: str = "n1", uid: str = "uid-p1") -> Binding:
    return Binding(
        metadata=ObjectMeta(namespace="default", name="p1", uid=uid),
        target=ObjectReference(kind="Node", name=node),
    )


async def test_bind_posts_the_binding_subresource(api: MockApi) -> None:
    api.script(
        "POST",
        BIND_PATH,
        httpx.Response(201, json={"kind": "Status", "status": "Success", "code": 201}),
    )
    async with transport(api) as t:
        await t.bind(binding())
    (req,) = api.of("POST", BIND_PATH)
    assert json.loads(req.content) == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p1", "namespace": "default", "uid": "uid-p1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }
    assert req.headers["content-type"] == "application/json"


async def test_bind_409_bound_elsewhere_is_a_conflict_not_a_retry(api: MockApi) -> None:
    api.script(
        "POST", BIND_PATH, status(409, "Conflict", 'pod p1 is already assigned to node "n2"')
    )
    bound = pod("p1")
    bound["spec"]["nodeName"] = "n2"
    api.script("GET", POD_PATH, httpx.Response(200, json=bound))
    async with transport(api) as t:
        with pytest.raises(ConflictError, match="already assigned"):
            await t.bind(binding("n1"))
    assert len(api.of("POST", BIND_PATH)) == 1


async def test_bind_409_bound_to_the_same_node_is_success(api: MockApi) -> None:
    # a retried bind whose first attempt landed but whose answer was lost
    api.script("POST", BIND_PATH, status(500, "InternalError", "etcdserver: request timed out"))
    api.script(
        "POST", BIND_PATH, status(409, "Conflict", 'pod p1 is already assigned to node "n1"')
    )
    bound = pod("p1")
    bound["spec"]["nodeName"] = "n1"
    api.script("GET", POD_PATH, httpx.Response(200, json=bound))
    async with transport(api) as t:
        await t.bind(binding("n1"))
    assert len(api.of("POST", BIND_PATH)) == 2


async def test_bind_retries_500_then_succeeds(api: MockApi) -> None:
    api.script("POST", BIND_PATH, status(500, "InternalError", "boom"))
    api.script("POST", BIND_PATH, httpx.Response(201, json={"kind": "Status", "code": 201}))
    async with transport(api) as t:
        await t.bind(binding())
    assert len(api.of("POST", BIND_PATH)) == 2


async def test_unavailable_after_the_retries(api: MockApi) -> None:
    api.handlers.append(
        lambda r: status(503, "ServiceUnavailable", "down") if r.method == "POST" else None
    )
    async with transport(api, max_retries=3) as t:
        with pytest.raises(UnavailableError, match="503 down"):
            await t.bind(binding())
    assert len(api.of("POST", BIND_PATH)) == 4


async def test_429_honours_retry_after(api: MockApi) -> None:
    too_many = status(429, "TooManyRequests", "slow down")
    too_many.headers["Retry-After"] = "7"
    api.script("POST", BIND_PATH, too_many)
    api.script("POST", BIND_PATH, httpx.Response(201, json={}))
    async with transport(api) as t:
        start = anyio.current_time()
        await t.bind(binding())
        assert anyio.current_time() - start == pytest.approx(7.0, abs=0.01)


async def test_delete_sends_the_uid_precondition(api: MockApi) -> None:
    api.script("DELETE", POD_PATH, httpx.Response(200, json=pod("p1")))
    async with transport(api) as t:
        await t.delete_pod("default", "p1", uid="uid-p1")
        api.script(
            "DELETE",
            POD_PATH,
            status(409, "Conflict", "Precondition failed: UID in precondition: uid-x"),
        )
        with pytest.raises(ConflictError, match="Precondition failed"):
            await t.delete_pod("default", "p1", uid="uid-x")
        api.script("DELETE", POD_PATH, status(404, "NotFound", 'pods "p1" not found'))
        with pytest.raises(NotFoundError):
            await t.delete_pod("default", "p1", uid="uid-p1")
    first = api.of("DELETE", POD_PATH)[0]
    assert json.loads(first.content) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "uid-p1"},
    }


async def test_patch_status_is_a_strategic_merge_patch(api: MockApi) -> None:
    path = POD_PATH + "/status"
    api.handlers.append(
        lambda r: httpx.Response(200, json=pod("p1")) if r.method == "PATCH" else None
    )
    async with transport(api) as t:
        cond = PodCondition(
            type="PodScheduled",
            status="False",
            reason="Unschedulable",
            message="0/1 nodes are available: 1 Insufficient cpu.",
        )
        await t.patch_pod_status("default", "p1", condition=cond, nominated_node_name="n1")
        await t.patch_pod_status("default", "p1", nominated_node_name="")
    first, second = api.of("PATCH", path)
    assert first.headers["content-type"] == "application/strategic-merge-patch+json"
    body = json.loads(first.content)
    (c,) = body["status"]["conditions"]
    assert c["type"] == "PodScheduled" and c["status"] == "False" and c["reason"] == "Unschedulable"
    assert c["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert c["lastProbeTime"] is None and c["lastTransitionTime"].endswith("Z")
    assert body["status"]["nominatedNodeName"] == "n1"
    assert json.loads(second.content) == {"status": {"nominatedNodeName": None}}


async def test_patch_pod_group_status_merges_its_condition(api: MockApi) -> None:
    """The PodGroup cycle's PodGroupScheduled on a Workload API PodGroup (1.36): a strategic merge
    of the status subresource, conditions merged by type."""
    from kubesched.api import Condition

    path = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups/train/status"
    api.handlers.append(lambda r: httpx.Response(200, json={}) if r.method == "PATCH" else None)
    async with transport(api) as t:
        await t.patch_pod_group_status("default", "train", Condition(type="PodGroupScheduled", status="True", reason="Scheduled"))
    (req,) = api.of("PATCH", path)
    assert req.headers["content-type"] == "application/strategic-merge-patch+json"
    (c,) = json.loads(req.content)["status"]["conditions"]
    assert (c["type"], c["status"], c["reason"]) == ("PodGroupScheduled", "True", "Scheduled")
    assert c["lastTransitionTime"].endswith("Z")


async def test_record_event_posts_an_events_k8s_io_event(api: MockApi) -> None:
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    api.handlers.append(lambda r: httpx.Response(201, json={}) if r.url.path == path else None)
    ev = Event(
        metadata=ObjectMeta(namespace="default", name="p1.scheduled"),
        reporting_controller="default-scheduler",
        reporting_instance="kubesched",
        action="Binding",
        reason="Scheduled",
        note="Successfully assigned default/p1 to n1",
        regarding=ObjectReference(
            api_version="v1", kind="Pod", namespace="default", name="p1", uid="u"
        ),
    )
    async with transport(api) as t:
        await t.record_event(ev)
        await t.record_event(ev)
    a, b = (json.loads(r.content) for r in api.of("POST", path))
    assert a["metadata"]["name"] != b["metadata"]["name"]
    assert a["metadata"]["name"].startswith("p1.")
    assert a["reason"] == "Scheduled" and a["type"] == "Normal" and a["action"] == "Binding"
    assert a["regarding"]["name"] == "p1" and a["note"] == "Successfully assigned default/p1 to n1"
    assert a["eventTime"].endswith("Z") and a["reportingController"] == "default-scheduler"


async def test_forbidden_is_a_plain_transport_error(api: MockApi) -> None:
    api.script("POST", BIND_PATH, status(403, "Forbidden", "cannot create resource pods/binding"))
    async with transport(api) as t:
        with pytest.raises(TransportError, match="403") as ei:
            await t.bind(binding())
    assert not isinstance(ei.value, ConflictError | NotFoundError | UnavailableError)
    assert len(api.of("POST", BIND_PATH)) == 1


# --- the QPS limiter -------------------------------------------------------------------------


async def test_token_bucket_in_virtual_time() -> None:
    bucket = TokenBucket(qps=10, burst=5)
    start = anyio.current_time()
    times = []
    for _ in range(25):
        await bucket.acquire()
        times.append(anyio.current_time() - start)
    assert times[:5] == [0.0] * 5
    assert times[-1] == pytest.approx(2.0)
    assert times[5] == pytest.approx(0.1)


async def test_token_bucket_refills_up_to_burst() -> None:
    bucket = TokenBucket(qps=10, burst=3)
    for _ in range(3):
        await bucket.acquire()
    await anyio.sleep(60)
    start = anyio.current_time()
    for _ in range(4):
        await bucket.acquire()
    assert anyio.current_time() - start == pytest.approx(0.1)


async def test_transport_requests_respect_qps(api: MockApi) -> None:
    api.handlers.append(lambda r: httpx.Response(201, json={}) if r.method == "POST" else None)
    async with transport(api, qps=5, burst=2) as t:
        start = anyio.current_time()
        async with anyio.create_task_group() as tg:
            for _ in range(12):
                tg.start_soon(t.bind, binding())
        assert anyio.current_time() - start == pytest.approx(2.0)


# --- the scheduler over the transport -----------------------------------------------------------


def serve_binds(api: MockApi) -> None:
    """Make the binding subresource act: set nodeName and tell the watchers."""

    def handler(r: httpx.Request) -> httpx.Response | None:
        if r.method == "POST" and r.url.path.endswith("/binding"):
            body = json.loads(r.content)
            key = (body["metadata"]["namespace"], body["metadata"]["name"])
            cur = api.objects[PATHS["Pod"]][key]
            if cur["spec"].get("nodeName"):
                return status(
                    409,
                    "Conflict",
                    f"pod {key[1]} is already assigned to node {cur['spec']['nodeName']!r}",
                )
            cur["spec"]["nodeName"] = body["target"]["name"]
            api.put("Pod", cur)
            return httpx.Response(201, json={"kind": "Status", "status": "Success", "code": 201})
        if r.method in ("POST", "PATCH"):
            return httpx.Response(200, json={})
        return None

    api.handlers.append(handler)


async def test_scheduler_binds_pods_over_the_transport(api: MockApi) -> None:
    serve_binds(api)
    api.put("Node", make_node("n1").capacity(cpu="2", memory="4Gi", pods=10).obj(), notify=False)
    api.put("Pod", msgspec.to_builtins(make_pod("p1").req(cpu="1").obj()), notify=False)
    async with transport(api) as t:
        sched = Scheduler(t)
        async with anyio.create_task_group() as tg:
            await tg.start(sched.run)
            api.put("Pod", msgspec.to_builtins(make_pod("p2").req(cpu="1").obj()))
            api.put("Pod", msgspec.to_builtins(make_pod("p3").req(cpu="1").obj()))

            def placed() -> dict[str, str]:
                return {
                    k[1]: p["spec"].get("nodeName", "")
                    for k, p in api.objects[PATHS["Pod"]].items()
                }

            await eventually(lambda: sorted(placed().values()) == ["", "n1", "n1"])
            await eventually(
                lambda: (
                    len(api.of("PATCH", "/api/v1/namespaces/default/pods/p3/status"))
                    + len(api.of("PATCH", "/api/v1/namespaces/default/pods/p2/status"))
                    == 1
                )
            )
            tg.cancel_scope.cancel()
    assert sched.metrics.schedule_attempts["scheduled"] == 2


# --- leader election --------------------------------------------------------------------------

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"


class LeaseServer:
    """A Lease store with optimistic concurrency."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.rv = 0
        self.down = False
        self.log: list[tuple[str, str | None]] = []

    def __call__(self, r: httpx.Request) -> httpx.Response | None:
        if not r.url.path.startswith("/apis/coordination.k8s.io/"):
            return None
        if self.down:
            return status(503, "ServiceUnavailable", "down")
        if r.method == "GET":
            if self.lease is None:
                return status(404, "NotFound", 'leases.coordination.k8s.io "kubesched" not found')
            return httpx.Response(200, json=self.lease)
        body = json.loads(r.content)
        if r.method == "POST":
            if self.lease is not None:
                return status(409, "AlreadyExists", "exists")
        elif r.method == "PUT" and (
            self.lease is None
            or body["metadata"].get("resourceVersion") != self.lease["metadata"]["resourceVersion"]
        ):
            return status(409, "Conflict", "the object has been modified")
        self.rv += 1
        body["metadata"]["resourceVersion"] = str(self.rv)
        self.lease = body
        self.log.append((r.method, body["spec"].get("holderIdentity")))
        return httpx.Response(201 if r.method == "POST" else 200, json=body)


async def test_leader_election_one_leader_at_a_time(api: MockApi) -> None:
    leases = LeaseServer()
    api.handlers.append(leases)
    async with transport(api) as t:
        a = LeaderElector(t, identity="a")
        b = LeaderElector(t, identity="b")
        assert a.name == "kubesched" and a.namespace == "kube-system"
        running: list[str] = []

        async def work(who: str) -> None:
            running.append(who)
            await anyio.sleep_forever()

        async with anyio.create_task_group() as tg:
            tg.start_soon(a.run, lambda: work("a"))
            await eventually(lambda: running == ["a"])
            tg.start_soon(b.run, lambda: work("b"))
            await anyio.sleep(60)  # b keeps trying; a keeps renewing
            assert running == ["a"] and a.is_leader and not b.is_leader
            assert leases.lease is not None and leases.lease["spec"]["holderIdentity"] == "a"
            assert leases.lease["spec"]["leaseDurationSeconds"] == 15
            # a renews every retryPeriod (2 s): about 30 renewals in a minute
            assert 25 <= sum(1 for m, who in leases.log if who == "a") <= 32
            assert not any(who == "b" for _, who in leases.log)
            tg.cancel_scope.cancel()


async def test_leader_takeover_after_expiry(api: MockApi) -> None:
    leases = LeaseServer()
    api.handlers.append(leases)
    async with transport(api) as t:
        a = LeaderElector(t, identity="a", release_on_cancel=False)
        b = LeaderElector(t, identity="b")
        running: list[str] = []

        async def work(who: str) -> None:
            running.append(who)
            await anyio.sleep_forever()

        async with anyio.create_task_group() as outer:
            with anyio.CancelScope() as a_scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(a.run, lambda: work("a"))
                    await eventually(lambda: running == ["a"])
                    outer.start_soon(b.run, lambda: work("b"))
                    await anyio.sleep(30)
                    assert running == ["a"]
                    a_scope.cancel()  # a dies without releasing
            died = anyio.current_time()
            await eventually(lambda: running == ["a", "b"])
            assert anyio.current_time() - died >= 15 - 2  # the lease had to expire first
            assert leases.lease is not None and leases.lease["spec"]["holderIdentity"] == "b"
            assert leases.lease["spec"]["leaseTransitions"] == 1
            outer.cancel_scope.cancel()


async def test_losing_the_lease_stops_the_work(api: MockApi) -> None:
    leases = LeaseServer()
    api.handlers.append(leases)
    async with transport(api) as t:
        el = LeaderElector(t, identity="a")
        cancelled = anyio.Event()

        async def work() -> None:
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.set()

        async def down_later() -> None:
            await anyio.sleep(20)
            leases.down = True

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(down_later)
                with pytest.raises(LeaderElectionLost):
                    await el.run(work)
                lost_at = anyio.current_time()
        assert cancelled.is_set()
        assert 20 + 10 - 2 <= lost_at <= 20 + 10 + 2.5  # within renewDeadline of the last renewal


@pytest.mark.parametrize(
    "raised",
    [
        pytest.param(ValueError("work failed"), id="an error"),
        pytest.param(ExceptionGroup("work's own", [KeyError("a")]), id="an exception group of its own"),
    ],
)
async def test_what_the_work_raises_comes_out_as_itself(api: MockApi, raised: Exception) -> None:
    """Not wrapped in the ExceptionGroup of the elector's task group; the lease is released."""
    leases = LeaseServer()
    api.handlers.append(leases)
    async with transport(api) as t:
        el = LeaderElector(t, identity="a")

        async def work() -> None:
            await anyio.sleep(5)
            raise raised

        with pytest.raises(type(raised)) as exc:
            await el.run(work)
        assert exc.value is raised
        assert not el.is_leader
    assert leases.lease is not None
    assert "holderIdentity" not in leases.lease["spec"]


async def test_release_on_cancel_and_default_lease_name_guard(api: MockApi) -> None:
    leases = LeaseServer()
    api.handlers.append(leases)
    async with transport(api) as t:
        with pytest.raises(Exception, match="default scheduler"):
            LeaderElector(t, name="kube-scheduler")
        el = LeaderElector(t, identity="a")
        started = anyio.Event()

        async def work() -> None:
            started.set()
            await anyio.sleep_forever()

        async with anyio.create_task_group() as tg:
            tg.start_soon(el.run, work)
            await started.wait()
            tg.cancel_scope.cancel()
    assert leases.lease is not None
    assert "holderIdentity" not in leases.lease["spec"]
    assert leases.lease["spec"]["leaseDurationSeconds"] == 1


async def test_api_client_repr_hides_the_token() -> None:
    cfg = ClusterConfig(server="https://example:6443", token="s3cret-token")
    client = ApiClient(cfg)
    try:
        assert "s3cret" not in repr(cfg) and "s3cret" not in repr(client.http.auth)
        assert repr(cfg) == "ClusterConfig(server='https://example:6443', auth='token', source='')"
    finally:
        await client.aclose()


def test_the_workload_api_is_watched_only_with_generic_workload() -> None:
    """As kube-scheduler starts its Workload and PodGroup informers only with GenericWorkload."""
    from kubesched.transports.kube import RESOURCES, WORKLOAD_API_RESOURCES, resources_for

    assert resources_for({}) == RESOURCES
    on = resources_for({"GenericWorkload": True})
    assert on[-1].kind == "Pod" and set(WORKLOAD_API_RESOURCES) <= set(on)
    assert [r.path for r in WORKLOAD_API_RESOURCES] == [
        "/apis/scheduling.k8s.io/v1alpha1/workloads",
        "/apis/scheduling.k8s.io/v1alpha2/workloads",
        "/apis/scheduling.k8s.io/v1alpha2/podgroups",
    ]


def test_a_listed_workload_gets_the_version_it_was_listed_at() -> None:
    """A list's items carry no apiVersion: a v1alpha1 Workload (1.35) must not read as the
    Struct's default, v1alpha2."""
    import random

    from kubesched.transports.kube import WORKLOAD_API_RESOURCES, Reflector

    item = b'{"metadata":{"name":"w","namespace":"default"},"spec":{"podGroups":[{"name":"g","policy":{"gang":{"minCount":2}}}]}}'
    for res, want in zip(WORKLOAD_API_RESOURCES[:2], ("scheduling.k8s.io/v1alpha1", "scheduling.k8s.io/v1alpha2"), strict=True):
        reflector = Reflector(None, res, lambda _: None, rng=random.Random(0))  # type: ignore[arg-type]
        assert reflector._decode(item).api_version == want
    assert WORKLOAD_API_RESOURCES[2].api_version == "scheduling.k8s.io/v1alpha2"
