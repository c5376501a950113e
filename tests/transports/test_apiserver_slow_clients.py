"""The fake API server under slow, idle and greedy clients: upstream's
header and idle timeouts, a refused body read before it is answered, a watch that does not read
closed once its backlog is full, each change encoded once for every watch, and no request's CPU
work or memory keeping the others (or a signal) waiting.

In-process tests run one server per test on both backends, in real time, with small timeouts;
the memory and signal tests run ``kubesched fake-apiserver`` in a subprocess and read its RSS.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest

from kubesched.transports.apiserver import APIServer, _watch
from kubesched.transports.apiserver._http import MAX_REQUEST_BODY_BYTES
from kubesched.transports.fake import FakeCluster

pytestmark = [
    # httpx's aiter_lines() nests async generators (aiter_text, aiter_bytes, ...); closing the outer
    # one early leaves the inner ones to the garbage collector, which trio reports
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <async_generator object:pytest.PytestUnraisableExceptionWarning"
    ),
]

PODS = "/api/v1/namespaces/default/pods"
WATCH = b"GET /api/v1/namespaces/default/pods?watch=true%s HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Real sockets and real time: the plain backends, not the virtual-time loop."""
    return str(request.param)


@asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[APIServer]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster, APIServer(cluster, **options) as srv:
        yield srv


def pod(name: str, annotation: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if annotation:
        meta["annotations"] = {"blob": "x" * annotation}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


async def closed_by_server(stream: anyio.abc.ByteStream) -> None:
    """Read until the server closes the connection (what it sent is ignored)."""
    try:
        while await stream.receive():
            pass
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        pass


# --- header and idle timeouts ------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    "head",
    [
        pytest.param(b"", id="nothing sent"),
        pytest.param(b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n", id="a head never finished"),
    ],
)
async def test_a_head_not_read_in_time_closes_the_connection(head: bytes) -> None:
    """http.Server.ReadHeaderTimeout (32 s in kube-apiserver, secure_serving.go): from the
    connection's accept until its request's head is read; closed without an answer."""
    async with serving(read_header_timeout=0.3, idle_timeout=30) as srv:
        stream = await anyio.connect_tcp("127.0.0.1", srv.port)
        async with stream:
            start = anyio.current_time()
            if head:
                await stream.send(head)
            with anyio.fail_after(5):
                await closed_by_server(stream)
            assert anyio.current_time() - start >= 0.25


@pytest.mark.anyio
async def test_a_trickled_head_is_cut_off_at_the_header_timeout() -> None:
    """Slowloris: a byte every 50 ms keeps no connection past the header timeout."""
    async with serving(read_header_timeout=0.5, idle_timeout=30) as srv:
        stream = await anyio.connect_tcp("127.0.0.1", srv.port)
        head = b"GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 200
        start = anyio.current_time()
        with anyio.fail_after(5):
            try:
                for byte in head:
                    await stream.send(bytes([byte]))
                    await anyio.sleep(0.05)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
            await closed_by_server(stream)
        assert 0.45 <= anyio.current_time() - start < 4
        await stream.aclose()


@pytest.mark.anyio
async def test_a_kept_alive_connection_idle_past_the_idle_timeout_is_closed() -> None:
    """http.Server.IdleTimeout (90 s in kube-apiserver): a connection waiting for its next
    request; requests coming sooner keep it open past it."""
    async with (
        serving(read_header_timeout=30, idle_timeout=1.0) as srv,
        httpx.AsyncClient(base_url=srv.url, timeout=5) as client,
    ):
        stream = await anyio.connect_tcp("127.0.0.1", srv.port)
        async with stream:
            # 12 × 0.1 s: longer than the idle timeout, never idle past it (0.9 s to spare for a
            # loaded machine's scheduling delays)
            for _ in range(12):
                await stream.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                with anyio.fail_after(5):
                    answer = b""
                    while not answer.endswith(b"ok"):
                        answer += await stream.receive()
                assert answer.startswith(b"HTTP/1.1 200 ")
                await anyio.sleep(0.1)
            start = anyio.current_time()
            with anyio.fail_after(5):
                await closed_by_server(stream)
            assert anyio.current_time() - start < 3
        # httpx opens a new connection when the server closed its kept-alive one
        assert (await client.get("/healthz")).status_code == 200
        await anyio.sleep(1.2)
        assert (await client.get("/healthz")).status_code == 200


# --- a refused body ----------------------------------------------------------------------------


def _send_all_then_read(port: int, raw: bytes) -> bytes:
    """A client that writes its whole request before it reads (as http.client does)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(raw)
        chunks = []
        while data := s.recv(65536):
            chunks.append(data)
        return b"".join(chunks)


@pytest.mark.anyio
@pytest.mark.parametrize("size", [MAX_REQUEST_BODY_BYTES + 1, 8 << 20])
async def test_a_body_over_the_limit_is_read_then_refused(size: int) -> None:
    """413 RequestEntityTooLarge once the body is read: a client that sends it all, then reads,
    gets the answer rather than a reset."""
    async with serving() as srv:
        head = (
            f"POST {PODS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n"
        ).encode()
        answer = await anyio.to_thread.run_sync(_send_all_then_read, srv.port, head + b" " * size)
    head_part, _, body = answer.partition(b"\r\n\r\n")
    assert head_part.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"connection: close" in head_part.lower()
    status = json.loads(body)
    assert (status["code"], status["reason"]) == (413, "RequestEntityTooLarge")
    assert status["message"] == f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"


# --- watches -----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_change_is_encoded_once_for_every_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fan-out without per-watch copies: one JSON line per change, whatever the number of
    watches of its resource (with or without a selector that lets it through)."""
    encoded: list[str] = []
    real = _watch.event_line

    def counting(*args: Any) -> bytes:
        encoded.append(args[2])
        return real(*args)

    monkeypatch.setattr(_watch, "event_line", counting)
    async with serving() as srv, httpx.AsyncClient(base_url=srv.url, timeout=10) as client:
        rv = srv.resource_version
        params = [{"watch": "1", "resourceVersion": rv}] * 5
        params.append({"watch": "1", "resourceVersion": rv, "fieldSelector": "metadata.name=p"})
        async with anyio.create_task_group() as tg:
            got: list[list[str]] = []

            async def watch(p: dict[str, str]) -> None:
                async with (
                    client.stream("GET", PODS, params=p) as r,
                    aclosing(r.aiter_lines()) as lines,
                ):
                    line = await lines.__anext__()
                    got.append([json.loads(line)["object"]["metadata"]["name"]])

            for p in params:
                tg.start_soon(watch, p)
            with anyio.fail_after(5):
                while len(srv.store.watchers) < len(params):
                    await anyio.sleep(0.01)
            assert (await client.post(PODS, json=pod("p"))).status_code == 201
        assert got == [["p"]] * len(params)
    assert encoded == ["ADDED"]


@pytest.mark.anyio
async def test_a_watch_that_does_not_read_is_closed_and_the_others_carry_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A watch whose backlog passes its bound is closed, as the watch cache closes an
    unresponsive watcher; what it held goes; a watch that reads gets every change, and a GET is
    answered at once."""
    caplog.set_level(logging.INFO, logger="kubesched.apiserver")
    async with (
        serving(watch_backlog_events=20) as srv,
        httpx.AsyncClient(base_url=srv.url, timeout=10) as client,
    ):
        rv = srv.resource_version.encode()
        stuck = socket.socket()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        with stuck:
            stuck.connect(("127.0.0.1", srv.port))  # the kernel's handshake: no need of the loop
            stuck.sendall(WATCH % (b"&resourceVersion=" + rv))
            seen: list[str] = []
            params = {"watch": "1", "resourceVersion": rv.decode()}
            async with client.stream("GET", PODS, params=params) as r, aclosing(r.aiter_lines()) as lines:
                with anyio.fail_after(5):
                    while len(srv.store.watchers) < 2:
                        await anyio.sleep(0.01)
                with anyio.fail_after(30):
                    n = 0
                    while len(srv.store.watchers) == 2:  # until the one not reading is closed
                        assert (await client.post(PODS, json=pod(f"p{n}", 20_000))).status_code == 201
                        seen.append(json.loads(await lines.__anext__())["object"]["metadata"]["name"])
                        n += 1
                    start = time.monotonic()
                    assert (await client.get("/api/v1/nodes")).status_code == 200
                    assert time.monotonic() - start < 1
                    assert (await client.post(PODS, json=pod("last"))).status_code == 201
                    seen.append(json.loads(await lines.__anext__())["object"]["metadata"]["name"])
            assert seen == [f"p{i}" for i in range(n)] + ["last"]
            with anyio.fail_after(5):  # the reading one goes once the server sees its client go
                while srv.store.watchers:
                    await anyio.sleep(0.01)
            forced = [r.getMessage() for r in caplog.records if "unresponsiveness" in r.getMessage()]
            assert len(forced) == 1
            assert forced[0].startswith(
                'Forcing pods watcher close due to unresponsiveness: key: "/pods/default", labels: "", fields: "".'
            )
            # its connection is closed: what the kernel held, then the end
            await anyio.to_thread.run_sync(_read_to_the_end, stuck)


def _read_to_the_end(s: socket.socket) -> None:
    s.setblocking(True)
    s.settimeout(10)
    with contextlib.suppress(ConnectionResetError):
        while s.recv(1 << 20):
            pass


# --- a subprocess: memory, CPU and signals -----------------------------------------------------


class ServerProcess:
    """``kubesched fake-apiserver`` with one Node, in a subprocess."""

    def __init__(self, tmp: Path) -> None:
        nodes = tmp / "nodes.yaml"
        nodes.write_text(
            'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4000", pods: "10000"}}\n'
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli", "fake-apiserver", str(nodes), "--kubeconfig", str(tmp / "kc")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("serving the fake cluster on http://"), line
        self.url = line.split()[-1]
        host, port = self.url.rsplit("//", 1)[1].rsplit(":", 1)
        self.host, self.port = host, int(port)

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.communicate(timeout=30)


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def timed_get(client: httpx.Client) -> float:
    start = time.monotonic()
    assert client.get("/api/v1/nodes").status_code == 200
    return time.monotonic() - start


def quantity_pod(name: str, digits: int) -> bytes:
    body = pod(name)
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1" * digits}}
    return json.dumps(body).encode()


def test_big_quantities_keep_no_client_waiting_and_sigterm_stops_the_server(
    server_process: ServerProcess,
) -> None:
    """A POST of a pod whose quantity has a million digits (or three, up to the
    3 MiB body limit) is parsed in linear time: a GET meanwhile is answered within 1 s, and
    SIGTERM stops the server at once, even while a big body is being decoded."""
    with httpx.Client(base_url=server_process.url, timeout=60) as client:
        for digits in (1 << 20, MAX_REQUEST_BODY_BYTES - 400):
            body = quantity_pod(f"q{digits}", digits)
            assert len(body) <= MAX_REQUEST_BODY_BYTES
            answers: list[int] = []

            def post(body: bytes = body, answers: list[int] = answers) -> None:
                with httpx.Client(base_url=server_process.url, timeout=60) as c:
                    r = c.post(PODS, content=body, headers={"content-type": "application/json"})
                    answers.append(r.status_code)

            poster = threading.Thread(target=post)
            poster.start()
            worst = 0.0
            while poster.is_alive():
                worst = max(worst, timed_get(client))
            poster.join()
            assert answers == [201]
            assert worst < 1.0, f"a GET waited {worst:.2f} s behind a {len(body)} B quantity"
        many = pod("many")
        many["spec"]["containers"] = [{"name": f"c{i}", "image": "x"} for i in range(40_000)]
        body = json.dumps(many).encode()
        assert len(body) <= MAX_REQUEST_BODY_BYTES
        poster = threading.Thread(target=lambda: _post_quietly(server_process.url, body))
        poster.start()
        time.sleep(0.2)  # the body is on its way (or read): the signal lands mid-request
        start = time.monotonic()
        server_process.proc.send_signal(signal.SIGTERM)
        _, err = server_process.proc.communicate(timeout=30)
        assert time.monotonic() - start < 5, err
        assert server_process.proc.returncode == 0, err
        poster.join()


def _post_quietly(url: str, body: bytes) -> None:
    with contextlib.suppress(httpx.HTTPError), httpx.Client(base_url=url, timeout=60) as c:
        c.post(PODS, content=body, headers={"content-type": "application/json"})


def _open_watches(server: ServerProcess, n: int, rv: str) -> list[socket.socket]:
    """``n`` watches that never read (a small receive buffer: the server's writes stall soon):
    half from the listing, half from ``rv``."""
    socks = []
    for i in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((server.host, server.port))
        s.sendall(WATCH % (b"" if i % 2 else b"&resourceVersion=" + rv.encode()))
        socks.append(s)
    return socks


def test_a_thousand_watches_that_do_not_read(server_process: ServerProcess) -> None:
    """1000 watches that never read while pods (of 8 KB) are
    created: the server's RSS stays bounded, a GET is answered within 1 s throughout, and once
    the watches close their memory is given back (and a second thousand reuses it, no growth)."""
    server = server_process
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for i in range(100):  # what each watch from the listing starts with: 100 × 8 KB
            assert client.post(PODS, json=pod(f"pre{i}", 8000)).status_code == 201
        for _ in range(20):
            timed_get(client)
        base = server.rss_mib()
        peaks = []
        for round_ in range(2):
            rv = client.get(PODS).json()["metadata"]["resourceVersion"]
            socks = _open_watches(server, 1000, rv)
            try:
                worst = timed_get(client)
                for i in range(100):
                    assert client.post(PODS, json=pod(f"r{round_}-{i}", 8000)).status_code == 201
                    if i % 10 == 0:
                        worst = max(worst, timed_get(client))
                peaks.append(server.rss_mib())
                assert worst < 1.0, f"a GET waited {worst:.2f} s"
                assert peaks[-1] - base < 80, f"RSS {base:.0f} → {peaks[-1]:.0f} MiB"
            finally:
                for s in socks:
                    s.close()
            deadline = time.monotonic() + 15
            while server.rss_mib() - base > 50 and time.monotonic() < deadline:
                assert timed_get(client) < 1.0
            after = server.rss_mib()
            assert after - base <= 50, f"RSS {base:.0f} → {peaks[-1]:.0f} → {after:.0f} MiB after closing"
        # +2-4 MiB on a quiet machine; +23 once under the whole suite's load (the peaks are read
        # while the fan-out may still be under way): 30 still tells reuse from growth (a thousand
        # watches each keeping the round's 100 pods of 8 KB would be about 800 MiB)
        assert peaks[1] - peaks[0] < 30, f"the second thousand took more: {peaks} MiB (from {base:.0f})"


def test_the_command_line_sets_the_timeouts(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``kubesched fake-apiserver --read-header-timeout D --idle-timeout D`` reach the server;
    a bad duration is one line and exit 2."""
    from kubesched import cli
    from kubesched.cli import fake_apiserver

    seen: dict[str, object] = {}
    monkeypatch.setattr(fake_apiserver, "main", lambda files, **kw: seen.update(kw) or 0)
    assert cli.main(["fake-apiserver", "--read-header-timeout", "5s", "--idle-timeout", "1m30s"]) == 0
    assert (seen["read_header_timeout"], seen["idle_timeout"]) == (5.0, 90.0)
    assert cli.main(["fake-apiserver", "--idle-timeout", "0s"]) == 2
    assert capsys.readouterr().err == 'kubesched: error: --idle-timeout: Invalid value: "0s": must be greater than 0\n'
