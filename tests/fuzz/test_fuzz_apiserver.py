"""Fuzzing the fake API server's request handling over real sockets (one ``kubesched
fake-apiserver`` process for the module).

Properties: every request gets an HTTP answer (never a dropped connection, never a hang); a
client's error is a 4xx ``Status`` whose ``code`` is the HTTP status (never a 500); and after the
hostile requests of issue 15 the server still answers a normal request within 100 ms with its RSS
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
