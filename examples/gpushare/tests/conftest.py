"""The package's tests: the fixtures kubesched gives plugin authors (both anyio backends, in
virtual time), imported so the tests run from the package's folder and from kubesched's suite."""

import random

import pytest

from kubesched.pytest_plugin import anyio_backend, temporary_plugin

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
              "deletion_time,scheduled_time")



__all__ = ["anyio_backend", "temporary_plugin", "trace"]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """60 nodes (2, 4 or 8 cards of three models) and 400 tasks: shares of a card (the trace's
    common 0.25-0.5 ones), whole cards, multi-card and cpu-only tasks, some asking for models."""
    rng = random.Random(37)
    d = tmp_path_factory.mktemp("openb")
    nodes = [NODE_HEADER]
    for i in range(60):
        cards = rng.choice([2, 4, 8, 8])
        nodes.append(f"openb-node-{i:04},{cards * 12000},{cards * 65536},{cards},{rng.choice(['T4', 'P100', 'V100M16'])}")
    pods = [POD_HEADER]
    for i in range(400):
        kind = rng.random()
        if kind < 0.6:
            num, milli = 1, rng.choice([250, 300, 460, 500, 500, 700])
        elif kind < 0.8:
            num, milli = 1, 1000
        elif kind < 0.88:
            num, milli = rng.choice([2, 4, 8]), 1000
        else:
            num, milli = 0, 0
        spec = rng.choice(["V100M16", "T4|P100"]) if num and rng.random() < 0.1 else ""
        pods.append(f"openb-pod-{i:04},{rng.choice([2000, 4000, 6000, 8000])},16384,{num},{milli},{spec},LS,Running,{i},,{i}")
    (d / "nodes.csv").write_text("\n".join(nodes) + "\n")
    (d / "pods.csv").write_text("\n".join(pods) + "\n")
    return str(d / "nodes.csv"), str(d / "pods.csv")
