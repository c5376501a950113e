"""examples/third_party_plugin: pip-install it, enable its plugins by name, see what they decide.

The cluster: n1 has no pool label, n4 the wrong pool; n2 and n3 are in pool "batch".  n2 is big
(64 cpu) but has only 8 pod slots, 2 taken; n3 is small (4 cpu) with 32 free slots.

- NodeLabelGate (Filter, label example.io/pool in [batch]) keeps every pod off n1 and n4;
- PreferEmptyNodes (Score, weight 5) sends ``web`` to n3, where NodeResourcesFit alone (least
  allocated) would choose n2;
- ``big`` (48 cpu) only fits n2; ``wide`` (60 cpu) fits nowhere, and says why.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli, load_entry_point_plugins

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "third_party_plugin"

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "64", memory: 64Gi, pods: "32"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {example.io/pool: batch}}
status: {allocatable: {cpu: "64", memory: 64Gi, pods: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {example.io/pool: batch}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "32"}}
---
apiVersion: v1
kind: Node
metadata: {name: n4, labels: {example.io/pool: gpu}}
status: {allocatable: {cpu: "64", memory: 64Gi, pods: "32"}}
---
apiVersion: v1
kind: Pod
metadata: {name: running-1}
spec: {nodeName: n2, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: running-2}
spec: {nodeName: n2, containers: [{name: c, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {priority: 2, containers: [{name: c, image: app, resources: {requests: {cpu: "1", memory: 1Gi}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {priority: 1, containers: [{name: c, image: app, resources: {requests: {cpu: "48"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: wide}
spec: {containers: [{name: c, image: app, resources: {requests: {cpu: "60"}}}]}
"""


def config(*enabled: str, gate_args: str = "{label: example.io/pool, values: [batch]}") -> str:
    plugins = "".join(
        f"      - name: {name}\n" + ("        weight: 5\n" if name == "PreferEmptyNodes" else "")
        for name in enabled
    )
    return f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
{plugins}  pluginConfig:
  - name: NodeLabelGate
    args: {gate_args}
"""


WIDE_PENDING = (
    "0/4 nodes are available: 1 node(s) didn't have label example.io/pool, "
    "1 node(s) had label example.io/pool with a value not in [batch], 2 Insufficient cpu. "
    "preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, "
    "3 Preemption is not helpful for scheduling."
)
"""Why ``wide`` stays pending.  NodeLabelGate's rejections are UnschedulableAndUnresolvable, and
so is n3's cpu (60 asked, 4 allocatable: upstream fit.go): preemption is not helpful there; n2
holds no pod of lower priority than ``wide``'s 0.
framework.FitError.Error() (upstream pkg/scheduler/framework/types.go, v1.28+) appends
DefaultPreemption's message, itself a FitError text ending in ".", with " %v": one period."""


@pytest.fixture(scope="module")
def example_installed() -> None:
    """``pip install -e examples/third_party_plugin`` into this venv (offline: no index, no deps)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-e",
            str(EXAMPLE),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # A new interpreter finds the package through the editable install's .pth file; this one
    # read its .pth files at start-up, so make the freshly installed package importable here.
    src = str(EXAMPLE / "src")
    if src not in sys.path:
        sys.path.append(src)
    importlib.invalidate_caches()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {
        "cluster": CLUSTER,
        "both": config("NodeLabelGate", "PreferEmptyNodes"),
        "gate": config("NodeLabelGate"),
        "bad": config("NodeLabelGate", gate_args="{values: [batch]}"),
    }
    out = {}
    for key, text in paths.items():
        path = tmp_path / f"{key}.yaml"
        path.write_text(text)
        out[key] = str(path)
    return out


def placements(report: dict[str, Any]) -> dict[str, str | None]:
    return {p["name"]: p["nodeName"] for p in report["pods"]}


def pending_message(report: dict[str, Any], name: str) -> str:
    pod = next(p for p in report["pods"] if p["name"] == name)
    return next(c["message"] for c in pod["conditions"] if c["type"] == "PodScheduled")


def test_installed_distribution_registers_both_plugins(example_installed: None) -> None:
    from kubesched_example_plugins import NodeLabelGate, PreferEmptyNodes

    found = load_entry_point_plugins()
    assert found["NodeLabelGate"] is NodeLabelGate
    assert found["PreferEmptyNodes"] is PreferEmptyNodes


def test_simulate_in_a_fresh_interpreter_uses_the_plugins(
    example_installed: None, files: dict[str, str]
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched.cli",
            "simulate",
            files["cluster"],
            "--config",
            files["both"],
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert placements(report) == {
        "running-1": "n2",
        "running-2": "n2",
        "web": "n3",
        "big": "n2",
        "wide": None,
    }
    assert pending_message(report, "wide") == WIDE_PENDING


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_without_the_score_plugin_web_goes_to_the_least_allocated_node(
    example_installed: None, files: dict[str, str], backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli.main(["simulate", files["cluster"], "--config", files["gate"], "--backend", backend])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert placements(report) == {
        "running-1": "n2",
        "running-2": "n2",
        "web": "n2",
        "big": "n2",
        "wide": None,
    }
    assert pending_message(report, "wide") == WIDE_PENDING


def test_default_profile_leaves_installed_plugins_off(
    example_installed: None, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["simulate", files["cluster"]]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["pending"] == 0  # nothing gated: n1 and n4 take pods


def test_bad_plugin_args_are_an_input_error(
    example_installed: None, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["simulate", files["cluster"], "--config", files["bad"]]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"kubesched: error: {files['bad']}, profiles[0].pluginConfig[0].args.label: Required value: a label key"
    )
