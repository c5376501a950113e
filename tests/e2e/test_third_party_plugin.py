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
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli, load_entry_point_plugins

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "third_party_plugin"

# one pip install for the module: every test here runs on one xdist worker
pytestmark = pytest.mark.xdist_group("third-party-plugin")

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
    "preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, "
    "2 Preemption is not helpful for scheduling."
)
"""Why ``wide`` stays pending.  NodeLabelGate's rejections are UnschedulableAndUnresolvable, and
so is n3's cpu (60 asked, 4 allocatable: upstream fit.go): preemption is not helpful there; n2
holds no pod of lower priority than ``wide``'s 0.
framework.FitError.Error() (upstream pkg/scheduler/framework/types.go, v1.28+) appends
DefaultPreemption's message, itself a FitError text ending in ".", with " %v": one period."""


@pytest.fixture(scope="module")
def example_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``pip install examples/third_party_plugin`` into a directory of its own (offline: no
    index, no deps), put on this interpreter's path and on a fresh one's ``PYTHONPATH``: the
    project's venv is left as it was (``make test`` installs nothing for good).  pip builds a
    copy of the example: setuptools' build tree and egg-info stay out of the repository."""
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("example") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
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
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    try:
        yield str(target)
    finally:
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m.split(".")[0] == "kubesched_example_plugins"]:
            del sys.modules[name]
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


def test_installed_distribution_registers_both_plugins(example_installed: str) -> None:
    from kubesched_example_plugins import NodeLabelGate, PreferEmptyNodes

    found = load_entry_point_plugins()
    assert found["NodeLabelGate"] is NodeLabelGate
    assert found["PreferEmptyNodes"] is PreferEmptyNodes


def test_simulate_in_a_fresh_interpreter_uses_the_plugins(
    example_installed: str, files: dict[str, str]
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
        env={**os.environ, "PYTHONPATH": example_installed},
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
    example_installed: str, files: dict[str, str], backend: str, capsys: pytest.CaptureFixture[str]
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
    example_installed: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["simulate", files["cluster"]]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["pending"] == 0  # nothing gated: n1 and n4 take pods


def test_the_projects_venv_is_left_as_it_was(example_installed: str) -> None:
    """Installed for these tests only: a fresh interpreter of the venv does not find it."""
    proc = subprocess.run(
        [sys.executable, "-c", "import kubesched_example_plugins"],
        capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert proc.returncode == 1 and "ModuleNotFoundError" in proc.stderr


def test_bad_plugin_args_are_an_input_error(
    example_installed: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["simulate", files["cluster"], "--config", files["bad"]]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"kubesched: error: {files['bad']}, profiles[0].pluginConfig[0].args.label: Required value: a label key"
    )


# --- a pip package whose entry point fails to import ----------------------------------------------

BROKEN_MODULE = "kubesched_broken_example"


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    """A directory holding an installed distribution, ``acme-broken`` 1.0, whose entry point
    ``FancyGate`` imports a module that fails (a dependency it does not declare)."""
    site = tmp_path / "site"
    info = site / "acme_broken-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-broken\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[kubesched]\nFancyGate = {BROKEN_MODULE}:FancyGate\n")
    (site / f"{BROKEN_MODULE}.py").write_text("import numpy_extras_not_installed\n")
    return site


BROKEN_WHY = (
    f"loading entry point 'FancyGate' ({BROKEN_MODULE}:FancyGate) of distribution 'acme-broken 1.0' "
    "in group 'kubesched': ModuleNotFoundError: No module named 'numpy_extras_not_installed'"
)


def plain_config(*enabled: str) -> str:
    """A profile enabling ``enabled`` on multiPoint, without pluginConfig."""
    return config(*enabled).split("  pluginConfig:")[0]


def _cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m kubesched.cli ARGS`` in a fresh interpreter that has ``site`` installed."""
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "kubesched.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path},
    )


def test_a_broken_package_leaves_configs_that_do_not_use_it_alone(
    broken_site: Path, files: dict[str, str], tmp_path: Path
) -> None:
    default = _cli(broken_site, "simulate", files["cluster"], "--output", "json")
    assert default.returncode == 0, default.stderr
    assert json.loads(default.stdout)["summary"]["pending"] == 0
    # one warning line, naming the entry point and the error
    assert default.stderr.splitlines() == [f"plugin 'FancyGate' is unavailable: {BROKEN_WHY}"]
    other = tmp_path / "other.yaml"
    other.write_text(plain_config("NodeResourcesFit"))
    compared = _cli(broken_site, "compare", files["cluster"], "--config", "default", "--config", str(other))
    assert compared.returncode == 0, compared.stderr
    assert compared.stderr.splitlines() == [f"plugin 'FancyGate' is unavailable: {BROKEN_WHY}"]


def test_a_config_that_enables_a_broken_plugin_is_an_input_error(
    broken_site: Path, files: dict[str, str], tmp_path: Path
) -> None:
    cfg = tmp_path / "fancy.yaml"
    cfg.write_text(plain_config("FancyGate"))
    proc = _cli(broken_site, "simulate", files["cluster"], "--config", str(cfg))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"plugin 'FancyGate' is unavailable: {BROKEN_WHY}",
        f'kubesched: error: {cfg}, profiles[0].plugins.multiPoint.enabled[0].name: Invalid value: '
        f'"FancyGate": plugin "FancyGate" does not exist: {BROKEN_WHY}',
    ]
