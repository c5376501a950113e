"""``kubectl rollout status`` and ``kubectl wait --for=condition=Available`` return against
``kubesched fake-apiserver`` while ``kubesched run`` schedules the Deployment's pods: the fake
cluster's controllers fill in the ReplicaSet's and the Deployment's status as upstream's do.

Three processes (the fake API server, the scheduler, kubectl), real time; every wait is
kubectl's own, bounded by its ``--timeout``, and every process by a watchdog.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
"""


def _start(args: list[str], log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("w") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "kubesched.cli", *args], stdout=subprocess.PIPE, stderr=err, text=True, env=env
        )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Path]:
    """``kubesched fake-apiserver`` with two nodes and ``kubesched run`` taking its
    default-scheduler pods; the kubeconfig of both."""
    (tmp_path / "nodes.yaml").write_text(NODES)
    kubeconfig = tmp_path / "kubeconfig"
    server = _start(["fake-apiserver", str(tmp_path / "nodes.yaml"), "--port", "0", "--kubeconfig", str(kubeconfig)],
                    tmp_path / "server.log")  # fmt: skip
    watchdog = threading.Timer(120, server.kill)
    watchdog.start()
    scheduler = None
    try:
        while not (line := server.stdout.readline() if server.stdout else "").startswith("kubeconfig: "):
            assert line, f"fake-apiserver exited early: {(tmp_path / 'server.log').read_text()}"
        scheduler = _start(["run", "--kubeconfig", str(kubeconfig), "--take-over-default-scheduler"],
                           tmp_path / "run.log")  # fmt: skip
        yield kubeconfig
        assert scheduler.poll() is None, (tmp_path / "run.log").read_text()
    finally:
        watchdog.cancel()
        if scheduler is not None:
            _stop(scheduler)
        _stop(server)


def test_rollout_status_and_wait_available_return(served: Path, tmp_path: Path) -> None:
    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(KUBECTL), "--kubeconfig", str(served), "--cache-dir", str(tmp_path / "cache"), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=90)

    made = kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
    assert made.returncode == 0, made.stderr
    rollout = kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert rollout.returncode == 0, rollout.stderr
    assert rollout.stdout.splitlines()[-1] == 'deployment "web" successfully rolled out'
    wait = kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=60s")
    assert wait.returncode == 0, wait.stderr
    assert wait.stdout.strip() == "deployment.apps/web condition met"

    d = json.loads(kubectl("get", "deployment", "web", "-o", "json").stdout)
    status = d["status"]
    assert {k: status[k] for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")} == dict.fromkeys(
        ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"), 3
    )
    assert status["observedGeneration"] == d["metadata"]["generation"] == 1
    reasons = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert reasons == {"Available": ("True", "MinimumReplicasAvailable"), "Progressing": ("True", "NewReplicaSetAvailable")}
    [rs] = json.loads(kubectl("get", "rs", "-o", "json").stdout)["items"]
    assert {k: rs["status"][k] for k in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")} == dict.fromkeys(
        ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"), 3
    )
    pods = json.loads(kubectl("get", "pods", "-o", "json").stdout)["items"]
    assert len(pods) == 3 and all(
        any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"]) for p in pods
    )

    # kubectl drain finds pods/eviction in discovery and evicts through it; the ReplicaSet
    # replaces the evicted pods on the other node and the rollout is complete again
    on_n1 = [p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == "n1"]
    assert on_n1  # (the default scoring spreads the three pods over both nodes)
    drain = kubectl("drain", "n1", "--grace-period=1", "--timeout=60s")
    assert drain.returncode == 0, drain.stderr
    assert [f"pod/{name} evicted" for name in on_n1] == [line for line in drain.stdout.splitlines() if line.endswith(" evicted")]
    assert drain.stdout.splitlines()[-1] == "node/n1 drained"
    rollout = kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert rollout.returncode == 0, rollout.stderr
    pods = json.loads(kubectl("get", "pods", "-o", "json").stdout)["items"]
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["n2"] * 3
