"""The fuzz suite: Hypothesis, derandomized and bounded, whose properties are the
input contract.  One real ``kubesched fake-apiserver`` process serves the request fuzzing."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    host: str
    port: int

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def request(self, raw: bytes, timeout: float = 5.0) -> bytes:
        """Send raw bytes, half-close, read the whole answer (the server closes after it)."""
        with socket.create_connection((self.host, self.port), timeout=timeout) as s:
            try:
                s.sendall(raw)
                s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered (413) and closed before reading everything
            chunks = []
            try:
                while True:
                    data = s.recv(65536)
                    if not data:
                        break
                    chunks.append(data)
            except ConnectionResetError:
                pass
            return b"".join(chunks)


@pytest.fixture(scope="session")
def apiserver_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("fuzz-apiserver")
    nodes = tmp / "nodes.yaml"
    nodes.write_text(
        'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4", pods: "10"}}\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli", "fake-apiserver", str(nodes), "--kubeconfig", str(tmp / "kc")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("serving the fake cluster on http://"), line + (proc.stderr.read() if proc.stderr else "")
    hostport = line.rsplit("//", 1)[1].strip()
    host, port = hostport.rsplit(":", 1)
    try:
        yield ServerProcess(proc, host, int(port))
    finally:
        proc.terminate()
        proc.communicate(timeout=10)  # also closes the pipes
