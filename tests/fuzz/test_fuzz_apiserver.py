"""Fuzzing the fake API server's request handling over real sockets (one ``kubesched
fake-apiserver`` process for the module).

Properties: every request gets an HTTP answer (never a dropped connection, never a hang); a
client's error is a 4xx ``Status`` whose ``code`` is the HTTP status (never a 500); and after the
hostile requests found by fuzzing the server still answers a normal request within 100 ms with its RSS
back within 20% of where it started.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from conftest import ServerProcess
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(
    derandomize=True,
    max_examples=400,
    deadline=timedelta(seconds=10),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


def http(method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None, host: bool = True) -> bytes:
    hdrs = {"Host": "127.0.0.1", "Content-Type": "application/json", **(headers or {})}
    if not host:
        hdrs.pop("Host")
    if body or method in ("POST", "PUT", "PATCH"):
        hdrs.setdefault("Content-Length", str(len(body)))
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
    return head.encode("latin-1") + body


def parse(answer: bytes) -> tuple[int, dict[str, Any] | None]:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    status = int(answer[9:12])
    head, _, body = answer.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        return status, None
    try:
        doc = json.loads(body) if body else None
    except ValueError:
        doc = None
    return status, doc if isinstance(doc, dict) else None


def check(answer: bytes, head: bool = False) -> int:
    status, doc = parse(answer)
    assert status < 500, answer[:400]
    if status >= 400 and not head:
        assert doc is not None and doc.get("kind") == "Status" and doc.get("code") == status, answer[:400]
    return status


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
segments = st.one_of(
    st.sampled_from(["default", "kube-system", "p", "n1", "Foo", ".", "..", "a%2Fb", "%25", "%ff", "%00", "x" * 300]),
    st.text(max_size=8).map(lambda s: quote(s, safe="")),
)
paths = st.one_of(
    st.builds(lambda ns, n: f"/api/v1/namespaces/{ns}/pods/{n}", segments, segments),
    st.builds(lambda ns: f"/api/v1/namespaces/{ns}/pods", segments),
    st.builds(lambda n: f"/api/v1/nodes/{n}", segments),
    st.sampled_from(["/api/v1/nodes", "/api/v1/pods", "/apis/scheduling.k8s.io/v1/priorityclasses", "/api",
                     "/apis/policy/v1/namespaces/default/poddisruptionbudgets", "/version", "/", "//", "/api/v1/%zz"]),
)
query_values = st.one_of(
    st.sampled_from(["abc", "nan", "inf", "1e308", "-1", "0", "1", "99999999999999999999999", "", "0.05"]),
    st.text(max_size=6),
)
queries = st.dictionaries(
    st.sampled_from(["limit", "gracePeriodSeconds", "labelSelector", "fieldSelector", "continue",
                     "resourceVersion", "dryRun", "timeoutSeconds"]),
    query_values, max_size=3,
)
bodies = st.one_of(
    st.just(b""),
    st.binary(max_size=40),
    st.builds(lambda n: (b"[" * n + b"]" * n), st.integers(90, 3000)),
    st.builds(lambda cpu: json.dumps({**POD, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}).encode(),
        st.sampled_from(["1e999999999", "1e-999999999", "١٢", "-1", "x"])),
    st.builds(lambda name: json.dumps({**POD, "metadata": {"name": name}}).encode(), st.text(max_size=10)),
    st.just(b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a\\ud800"}}'),
    st.just(b'{"kind": "Pod", "kind": "Pod"}'),
)


@FUZZ
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "BREW"]),
       path=paths, query=queries, body=bodies, host=st.booleans(),
       ctype=st.sampled_from(["application/json", "application/merge-patch+json", "application/strategic-merge-patch+json"]))
def test_fuzz_requests(apiserver_process: ServerProcess, method: str, path: str, query: dict[str, str],
                       body: bytes, host: bool, ctype: str) -> None:
    q = "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
    target = f"{path}?{q}" if q else path
    answer = apiserver_process.request(http(method, target, body, {"Content-Type": ctype}, host=host))
    assert answer, "no answer"
    check(answer, head=method == "HEAD")


def test_fuzz_watch_timeouts(apiserver_process: ServerProcess) -> None:
    """A watch's timeoutSeconds is an int64 number of seconds: nan, inf, 1e308 are 400, never a
    watch that does not end; a valid short one ends."""
    for bad in ("nan", "inf", "1e308", "-inf", "abc", "99999999999999999999"):
        answer = apiserver_process.request(http("GET", f"/api/v1/pods?watch=true&timeoutSeconds={bad}"), timeout=5)
        assert check(answer) == 400, bad
    t0 = time.monotonic()
    answer = apiserver_process.request(http("GET", "/api/v1/pods?watch=true&timeoutSeconds=0.05"), timeout=5)
    assert parse(answer)[0] == 200 and time.monotonic() - t0 < 5


def hostile_requests(server: ServerProcess) -> list[tuple[str, int]]:
    """The issue's hostile requests, each with the answer upstream gives."""
    pod_json = json.dumps(POD).encode()
    huge = json.dumps({**POD, "metadata": {"name": "huge"}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1e999999999"}}}]}}).encode()
    deep = b"[" * 5000 + b"]" * 5000
    bomb_lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    bomb_lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    bomb = ("apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\n" + "\n".join(bomb_lines)
            + "\nspec: {containers: [{name: c, image: x, args: *a8}]}\n").encode()
    out: list[tuple[str, int]] = []
    cases: list[tuple[str, bytes, int]] = [
        # 200 MiB announced: refused before it is read
        ("200 MiB body", http("POST", "/api/v1/namespaces/default/pods", pod_json[:10],
                              {"Content-Length": str(200 * 1024 * 1024)}), 413),
        ("huge exponent pod", http("POST", "/api/v1/namespaces/default/pods", huge), 201),
        ("deep JSON", http("POST", "/api/v1/namespaces/default/pods", deep), 400),
        ("alias bomb", http("POST", "/api/v1/namespaces/default/pods", bomb, {"Content-Type": "application/yaml"}), 400),
        ("limit=abc", http("GET", "/api/v1/pods?limit=abc"), 400),
        ("gracePeriodSeconds=abc", http("DELETE", "/api/v1/namespaces/default/pods/huge?gracePeriodSeconds=abc"), 400),
        ("no Host", http("GET", "/api/v1/nodes", host=False), 400),
        ("invalid name in body", http("POST", "/api/v1/namespaces/default/pods",
                                      json.dumps({**POD, "metadata": {"name": "Foo_"}}).encode()), 422),
        ("name with an encoded slash", http("GET", "/api/v1/namespaces/default/pods/a%2Fb"), 400),
        ("watch timeoutSeconds=inf", http("GET", "/api/v1/pods?watch=true&timeoutSeconds=inf"), 400),
    ]
    for what, raw, _ in cases:
        answer = server.request(raw, timeout=10)
        out.append((what, parse(answer)[0]))
    # a 20 MiB chunked body: read up to the 3 MiB limit, then refused
    chunk = b"x" * (1 << 20)
    raw = http("POST", "/api/v1/namespaces/default/pods", headers={"Transfer-Encoding": "chunked"})
    raw = raw.replace(b"Content-Length: 0\r\n", b"")
    raw += b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(20)) + b"0\r\n\r\n"
    out.append(("20 MiB chunked body", parse(server.request(raw, timeout=10))[0]))
    return out


def test_server_survives_hostile_requests(apiserver_process: ServerProcess) -> None:
    server = apiserver_process
    for _ in range(20):  # warm up: every code path of a normal request has run once
        check(server.request(http("GET", "/api/v1/nodes")))
    rss_before = server.rss_kib()
    answers = hostile_requests(server)
    assert answers == [
        ("200 MiB body", 413), ("huge exponent pod", 201), ("deep JSON", 400), ("alias bomb", 400),
        ("limit=abc", 400), ("gracePeriodSeconds=abc", 400), ("no Host", 400), ("invalid name in body", 422),
        ("name with an encoded slash", 400), ("watch timeoutSeconds=inf", 400), ("20 MiB chunked body", 413),
    ]
    t0 = time.monotonic()
    status, doc = parse(server.request(http("GET", "/api/v1/nodes")))
    elapsed = time.monotonic() - t0
    assert status == 200 and doc is not None and [n["metadata"]["name"] for n in doc["items"]] == ["n1"]
    assert elapsed < 0.1, f"a normal request took {elapsed * 1000:.0f} ms after the hostile ones"
    rss_after = server.rss_kib()
    assert rss_after <= rss_before * 1.2, f"RSS {rss_before} KiB → {rss_after} KiB"


def test_server_validates_as_simulate(apiserver_process: ServerProcess) -> None:
    """One validation code path: what ``simulate`` refuses, the server answers 422 Invalid with
    the same field and message."""
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
           "spec": {"minAvailable": "150%"}}
    tsc = {**POD, "metadata": {"name": "skew"}, "spec": {**POD["spec"], "topologySpreadConstraints": [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}}
    for path, body, field, message in [
        ("/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb, "spec.minAvailable",
         'Invalid value: "150%": must not be greater than 100%'),
        ("/api/v1/namespaces/default/pods", tsc, "spec.topologySpreadConstraints[0].maxSkew",
         "Invalid value: 0: must be greater than zero"),
    ]:
        status, doc = parse(apiserver_process.request(http("POST", path, json.dumps(body).encode())))
        assert status == 422 and doc is not None and doc["reason"] == "Invalid", doc
        assert doc["details"]["causes"][0] == {"reason": "FieldValueInvalid", "field": field, "message": message}


# --- request options, refused bodies, slow clients, watches that do not read, big
# quantities ---------------------------------------------------------------------------------------

import socket as _socket  # noqa: E402
import subprocess as _subprocess  # noqa: E402
import sys as _sys  # noqa: E402
from collections.abc import Iterator as _Iterator  # noqa: E402

import pytest as _pytest  # noqa: E402

# the server processes (the session's, shared with test_fuzz_fields, and quick_server) start once:
# every test that uses them runs on one xdist worker
pytestmark = _pytest.mark.xdist_group("fuzz-apiserver")

FEW = settings(FUZZ, max_examples=12)

list_paths = st.sampled_from([
    "/api/v1/pods", "/api/v1/namespaces/default/pods", "/api/v1/nodes", "/api/v1/events",
    "/apis/events.k8s.io/v1/events", "/apis/batch/v1/jobs", "/apis/coordination.k8s.io/v1/leases",
    "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "/apis/resource.k8s.io/v1/resourceslices",
])
option_values = st.one_of(
    st.sampled_from(["abc", "-1", "0", "1", "18446744073709551616", "", "Exact", "NotOlderThan", "Bogus",
                     "true", "false", "True", "0x10", "+1"]),
    st.text(max_size=6),
)
list_options = st.dictionaries(
    st.sampled_from(["resourceVersion", "resourceVersionMatch", "sendInitialEvents", "allowWatchBookmarks",
                     "continue", "limit", "watch"]),
    option_values, max_size=4,
)
field_selectors = st.one_of(
    st.just(""),
    st.builds(lambda label, op, value: f"{label}{op}{value}",
              st.sampled_from(["metadata.name", "metadata.namespace", "spec.nodeName", "spec.host", "spec.foo",
                               "status.phase", "spec.unschedulable", "status.successful", "involvedObject.name",
                               "regarding.name", "source", "spec.driver", "x"]),
              st.sampled_from(["=", "==", "!="]), st.sampled_from(["", "n1", "default", "false"])),
)


def _go_bool(q: dict[str, str], key: str) -> bool:
    return key in q and q[key] not in ("0",) and q[key].lower() != "false"


@FUZZ
@given(path=list_paths, options=list_options, selector=field_selectors)
def test_fuzz_list_and_watch_options(apiserver_process: ServerProcess, path: str, options: dict[str, str],
                                     selector: str) -> None:
    """Upstream's ListOptions rules: every answer a 2xx or a 4xx Status, never a 500, and a
    resourceVersionMatch or sendInitialEvents out of place is 422 (ValidateListOptions)."""
    q = dict(options)
    if selector:
        q["fieldSelector"] = selector
    if _go_bool(q, "watch"):
        q["timeoutSeconds"] = "-1"  # a watch that is valid ends at once
    target = path + "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in q.items())
    status = check(apiserver_process.request(http("GET", target), timeout=10))
    assert status in (200, 400, 410, 422), (target, status)
    match, send_initial = q.get("resourceVersionMatch", ""), "sendInitialEvents" in q
    if not _go_bool(q, "watch") and send_initial:
        assert status in (400, 422), target  # sendInitialEvents is forbidden for list
    if _go_bool(q, "watch") and match and not send_initial:
        assert status in (400, 422), target  # resourceVersionMatch is forbidden for watch...


@FUZZ
@given(policy=st.one_of(st.none(), st.sampled_from(["Foreground", "Background", "Orphan", "Bogus", "", "orphan"])),
       orphan=st.sampled_from([None, True, False]), in_query=st.booleans())
def test_fuzz_delete_options(apiserver_process: ServerProcess, policy: str | None, orphan: bool | None,
                             in_query: bool) -> None:
    """ValidateDeleteOptions: 422 for a propagationPolicy other than Foreground, Background or
    Orphan, or one with orphanDependents; else the delete goes on (404: no such pod)."""
    opts: dict[str, Any] = {}
    if policy is not None:
        opts["propagationPolicy"] = policy
    if orphan is not None:
        opts["orphanDependents"] = orphan
    target = "/api/v1/namespaces/default/pods/fz-absent"
    if in_query and opts:
        target += "?" + "&".join(f"{k}={quote(str(v).lower() if isinstance(v, bool) else v, safe='')}"
                                 for k, v in opts.items())
        raw = http("DELETE", target)
    else:
        raw = http("DELETE", target, json.dumps(opts).encode() if opts else b"")
    status = check(apiserver_process.request(raw))
    invalid = policy is not None and (policy not in ("Foreground", "Background", "Orphan") or orphan is not None)
    assert status == (422 if invalid else 404), (opts, in_query, status)


@FUZZ
@given(ctype=st.sampled_from(["application/apply-patch+yaml", "application/merge-patch+json",
                              "application/strategic-merge-patch+json", "application/json-patch+json"]),
       manager=st.sampled_from([None, "", "kubectl", "fz"]), force=st.sampled_from([None, "true", "false", ""]))
def test_fuzz_patch_options(apiserver_process: ServerProcess, ctype: str, manager: str | None,
                            force: str | None) -> None:
    """ValidatePatchOptions: a server-side apply without fieldManager, or ``force`` on another
    patch, is 422 before the object is looked up."""
    q = {k: v for k, v in (("fieldManager", manager), ("force", force)) if v is not None}
    target = "/api/v1/namespaces/default/pods/fz-absent" + ("?" + "&".join(f"{k}={v}" for k, v in q.items()) if q else "")
    body = b"[]" if ctype == "application/json-patch+json" else b"{}"
    status = check(apiserver_process.request(http("PATCH", target, body, {"Content-Type": ctype})))
    apply = ctype == "application/apply-patch+yaml"
    invalid = (apply and not manager) or (not apply and force is not None)
    if invalid:
        assert status == 422, (ctype, q, status)
    else:
        assert status != 422 or apply, (ctype, q, status)


@FUZZ
@given(kind=st.one_of(st.sampled_from(["Node", "", "Pod", "node", "Nodes"]), st.text(max_size=5)),
       name=st.sampled_from(["n1", "", "nope"]))
def test_fuzz_binding_targets(apiserver_process: ServerProcess, kind: str, name: str) -> None:
    """ValidatePodBinding: a target that is not a Node (or has no name) is 422; never a 500."""
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "fz-absent"},
               "target": {"kind": kind, "name": name}}
    raw = http("POST", "/api/v1/namespaces/default/pods/fz-absent/binding", json.dumps(binding).encode())
    status = check(apiserver_process.request(raw))
    invalid = kind not in ("", "Node") or not name
    assert status == (422 if invalid else 404), (kind, name, status)


def _send_all_then_read(server: ServerProcess, raw: bytes) -> bytes:
    with _socket.create_connection((server.host, server.port), timeout=20) as s:
        s.sendall(raw)
        chunks = []
        while data := s.recv(65536):
            chunks.append(data)
        return b"".join(chunks)


@FEW
@given(extra=st.integers(1, 4 << 20), chunked=st.booleans())
def test_fuzz_oversized_bodies_are_answered(apiserver_process: ServerProcess, extra: int, chunked: bool) -> None:
    """A body over the 3 MiB limit, sent whole before the client reads: a 413 Status, never a
    connection reset before the answer."""
    size = 3 * 1024 * 1024 + extra
    head = "POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    if chunked:
        piece = b"x" * (1 << 20)
        body = b"".join(b"%x\r\n" % len(piece[: size - i]) + piece[: size - i] + b"\r\n"
                        for i in range(0, size, len(piece))) + b"0\r\n\r\n"
        raw = (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + body
    else:
        raw = (head + f"Content-Length: {size}\r\n\r\n").encode() + b" " * size
    answer = _send_all_then_read(apiserver_process, raw)
    assert check(answer) == 413


SMALL_TIMEOUTS = """
import anyio
from kubesched.service import serve_manifests
anyio.run(lambda: serve_manifests([], ready=lambda s: print(s.url, flush=True),
                                  read_header_timeout=0.5, idle_timeout=0.5, watch_backlog_events=50))
"""


@_pytest.fixture(scope="module")
def quick_server() -> _Iterator[ServerProcess]:
    """A fake API server with half-second header and idle timeouts and short watch backlogs."""
    proc = _subprocess.Popen([_sys.executable, "-c", SMALL_TIMEOUTS], stdout=_subprocess.PIPE,
                             stderr=_subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://"), url + (proc.stderr.read() if proc.stderr else "")
    host, port = url.rsplit("//", 1)[1].rsplit(":", 1)
    try:
        yield ServerProcess(proc, host, int(port))
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


REQUEST = b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n"


@FEW
@given(cut=st.integers(0, len(REQUEST)), trickle=st.booleans())
def test_fuzz_slow_and_idle_clients_are_let_go(quick_server: ServerProcess, cut: int, trickle: bool) -> None:
    """A request head not read within the header timeout, or a kept-alive connection idle past
    the idle timeout, is closed (without an answer to a head never finished), and a GET on
    another connection is answered meanwhile."""
    start = time.monotonic()
    with _socket.create_connection((quick_server.host, quick_server.port), timeout=10) as s:
        try:
            for i in range(cut):
                s.sendall(REQUEST[i : i + 1])
                if trickle:
                    time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):
            assert trickle  # cut off mid-head at the header timeout
        answer = b""
        try:
            while data := s.recv(65536):
                answer += data
        except ConnectionResetError:
            pass
    elapsed = time.monotonic() - start
    if cut == len(REQUEST):  # answered, then closed when idle
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:100]
    else:
        assert answer == b"", answer[:100]
    assert elapsed < 5, elapsed
    assert parse(quick_server.request(http("GET", "/api/v1/nodes")))[0] == 200


@FEW
@given(watches=st.integers(1, 60), creates=st.integers(0, 80), size=st.sampled_from([0, 1000, 20_000]))
def test_fuzz_watches_that_do_not_read(quick_server: ServerProcess, watches: int, creates: int, size: int) -> None:
    """Watches that never read, any number of changes: a GET is answered within 1 s and the
    server's memory stays bounded (each backlog is bounded and the changes' bytes are shared)."""
    rss_before = quick_server.rss_kib()
    socks = []
    try:
        for i in range(watches):
            s = _socket.socket()
            s.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVBUF, 4096)
            s.connect((quick_server.host, quick_server.port))
            s.sendall(b"GET /api/v1/namespaces/fz/pods?watch=true%s HTTP/1.1\r\nHost: x\r\n\r\n"
                      % (b"&allowWatchBookmarks=true" if i % 2 else b""))
            socks.append(s)
        for i in range(creates):
            body = {**POD, "metadata": {"name": f"w{watches}-{creates}-{size}-{i}", "namespace": "fz",
                                        "annotations": {"a": "x" * size}}}
            status = check(quick_server.request(http("POST", "/api/v1/namespaces/fz/pods", json.dumps(body).encode())))
            assert status in (201, 409)
        t0 = time.monotonic()
        assert parse(quick_server.request(http("GET", "/api/v1/nodes")))[0] == 200
        assert time.monotonic() - t0 < 1.0
        assert quick_server.rss_kib() - rss_before < 100 * 1024
    finally:
        for s in socks:
            s.close()


quantities = st.builds(
    lambda digits, shape: {"int": "7" * digits, "frac": "0." + "0" * digits + "1", "exp": "1" * digits + "e3",
                           "suffix": "9" * digits + "Mi", "milli": "5" * digits + "m", "bad": "1." * (digits // 2)}[shape],
    st.integers(1 << 16, 1 << 20), st.sampled_from(["int", "frac", "exp", "suffix", "milli", "bad"]),
)


@FEW
@given(quantity=quantities)
def test_fuzz_big_quantities(quick_server: ServerProcess, quantity: str) -> None:
    """A quantity of up to a million digits (any form) is parsed in linear time: answered (201,
    or 4xx for a bad one, never 500) and a GET after it within 100 ms... of the answer."""
    body = {**POD, "metadata": {"name": f"q{len(quantity)}-{quantity[-3:].strip('.')}".lower(), "namespace": "fz"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": quantity}}}]}}
    t0 = time.monotonic()
    status = check(quick_server.request(http("POST", "/api/v1/namespaces/fz/pods", json.dumps(body).encode()), timeout=30))
    assert status in (201, 400, 409, 422), status
    assert time.monotonic() - t0 < 10
    t0 = time.monotonic()
    assert parse(quick_server.request(http("GET", "/api/v1/nodes")))[0] == 200
    assert time.monotonic() - t0 < 1.0
