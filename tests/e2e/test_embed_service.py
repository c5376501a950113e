"""examples/embed_service.py: a service embedding the scheduler, on both backends, in virtual time;
the README's embedding example, read from the README itself (so it cannot drift); and
``Scheduler.wait_idle`` in a service running in real time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

import kubesched
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "embed_service.py"
README = ROOT / "README.md"
README_MARKER = "<!-- embedding example: tests/e2e/test_embed_service.py runs this block -->"

PLACEMENTS = {
    "search-1": "node-a",  # TeamAffinity: the search team's node
    "ads-1": "node-b",  # the ads team's node
    "batch-1": "node-c",  # no team: the emptiest node
    "search-2": "node-a",  # second wave, 30 s later
    "huge": None,  # 16 cpu fits no node
}


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("embed_service_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_service_places_pods_with_its_own_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example()
    start = anyio.current_time()
    assert await example.main() == PLACEMENTS
    assert anyio.current_time() - start == pytest.approx(30.0, abs=0.5)  # virtual seconds
    out = capsys.readouterr().out
    assert "t= 30.0s  bound search-2 to node-a" in out
    assert "huge       -> Pending" in out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_runs_as_a_script(backend: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--backend", backend],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        "t=  0.0s  bound search-1 to node-a",
        "t=  0.0s  bound ads-1 to node-b",
        "t=  0.0s  bound batch-1 to node-c",
        "t= 30.0s  bound search-2 to node-a",
    ]
    assert lines[4:] == [f"{pod:<10} -> {node or 'Pending'}" for pod, node in PLACEMENTS.items()]


def test_a_bad_configuration_is_one_error_before_anything_starts() -> None:
    example = load_example()
    example.CONFIG = example.CONFIG.replace("{label: ", "{lable: ")
    with pytest.raises(kubesched.ConfigError) as exc:
        anyio.run(example.main)
    assert str(exc.value) == 'profiles[0].pluginConfig[0].args.lable: unknown field "lable"'
    assert isinstance(exc.value, kubesched.KubeschedError)


def test_a_bad_configuration_ends_the_script_with_one_line(tmp_path: Path) -> None:
    script = tmp_path / "embed_service.py"
    script.write_text(EXAMPLE.read_text().replace("weight: 5}}", "weight: -5}}"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "embed_service: error: profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: -5: "
        "weight must be non-negative\n"
    )


# --- the README's embedding example --------------------------------------------------------------


def readme_example() -> str:
    """The python block that follows the marker in the README."""
    text = README.read_text(encoding="utf-8")
    assert text.count(README_MARKER) == 1
    after = text.split(README_MARKER, 1)[1]
    assert after.startswith("\n```python\n")
    return after[len("\n```python\n") :].split("\n```\n", 1)[0]


def _run_readme_example(backend: str, config: str | None = None) -> Any:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(readme_example(), str(README), "exec"), namespace)
    if config is not None:
        namespace["CONFIG"] = config
    return anyio.run(namespace["main"], backend=backend)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_readme_example_places_both_pods_on_one_node(backend: str) -> None:
    code = readme_example()
    assert "kubesched.load_config(" in code and "except kubesched.KubeschedError" in code
    placements = _run_readme_example(backend)
    assert placements == {"a": "n2", "b": "n2"}  # MostAllocated packs
    assert f"print(anyio.run(main))  # {placements}:" in code  # what the README says it prints


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_readme_example_ends_with_one_line_for_a_bad_configuration(backend: str) -> None:
    bad = readme_example().split('CONFIG = """', 1)[1].split('"""', 1)[0].replace("weight: 1}", "weight: 200}")
    with pytest.raises(SystemExit) as exc:
        _run_readme_example(backend, config=bad)
    assert str(exc.value) == (
        "bad configuration: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: "
        "Invalid value: 200: resource weight of cpu not in valid range (0, 100]"
    )


def test_the_readme_example_runs_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "readme_example.py"
    script.write_text(readme_example())
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "{'a': 'n2', 'b': 'n2'}\n"


# --- Scheduler.wait_idle in a real-time service ----------------------------------------------------


class SlowPreBind:
    """PreBind that takes a real round trip: a binding cycle stays in flight for a while."""

    name = "SlowPreBind"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @kubesched.hookimpl
    async def kubesched_pre_bind(self, state: kubesched.CycleState, pod: kubesched.Pod, node_name: str) -> None:
        await anyio.sleep(0.05)


class FlakyOnce:
    """Filter: an Error for the first attempt of pod ``flaky`` (it backs off, then fits)."""

    name = "FlakyOnce"

    def __init__(self, args: Any, handle: Any) -> None:
        self.failed = False

    @kubesched.hookimpl
    def kubesched_filter(
        self, state: kubesched.CycleState, pod: kubesched.Pod, nodes: kubesched.NodeBatch
    ) -> dict[int, kubesched.Status] | None:
        if pod.metadata.name == "flaky" and not self.failed:
            self.failed = True
            raise RuntimeError("backend not ready")
        return None


def _live_config() -> kubesched.SchedulerConfig:
    config = kubesched.SchedulerConfig()
    config.profiles[0].multi_point += [(SlowPreBind.name, 1), (FlakyOnce.name, 1)]
    config.pod_initial_backoff_seconds = 0.1
    config.pod_max_backoff_seconds = 0.2
    return config


async def _real_time_service() -> list[dict[str, str | None]]:
    """A service on the in-memory cluster in real time: two waves of pods, ``wait_idle`` after
    each (a retried Error, slow binds, a preemption whose victim must go first)."""
    waves: list[dict[str, str | None]] = []
    async with FakeCluster(default_grace_seconds=0) as cluster:
        for name in ("n1", "n2"):
            cluster.create(make_node(name).capacity(cpu="4").obj())
        scheduler = kubesched.Scheduler(
            cluster, _live_config(), registry={SlowPreBind.name: SlowPreBind, FlakyOnce.name: FlakyOnce}
        )
        assert not scheduler.deterministic
        async with anyio.create_task_group() as tg:
            await tg.start(scheduler.run)
            for pod in (
                make_pod("a").req(cpu="3").obj(),
                make_pod("b").req(cpu="3").obj(),
                make_pod("flaky").req(cpu="1").obj(),
                make_pod("huge").req(cpu="16").obj(),
            ):
                cluster.create(pod)
            with anyio.fail_after(5):  # a safety net: wait_idle returns on its own
                await scheduler.wait_idle()
            assert scheduler.is_idle()
            waves.append({p.metadata.name: p.spec.node_name or None for p in cluster.pods()})
            with anyio.fail_after(1):
                await scheduler.wait_idle()  # idle already: at once
            # a high-priority pod that fits only once a low-priority one is preempted; two tasks
            # wait for the scheduler at the same time
            cluster.create(make_pod("vip").priority(1000).req(cpu="3").obj())
            done: list[str] = []

            async def waiter(name: str) -> None:
                await scheduler.wait_idle()
                done.append(name)

            with anyio.fail_after(5):
                async with anyio.create_task_group() as waiters:
                    waiters.start_soon(waiter, "first")
                    waiters.start_soon(waiter, "second")
            assert sorted(done) == ["first", "second"]
            assert scheduler.is_idle()
            waves.append({p.metadata.name: p.spec.node_name or None for p in cluster.pods()})
            tg.cancel_scope.cancel()
    return waves


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_wait_idle_returns_in_a_real_time_service(backend: str) -> None:
    first, second = anyio.run(_real_time_service, backend=backend)
    assert first["flaky"] is not None  # retried after its backoff before wait_idle returned
    assert first["huge"] is None  # unschedulable: pending, and idle
    assert {first["a"], first["b"]} == {"n1", "n2"}
    # vip took the node of the pod it preempted (deleted at once: no grace period)
    assert second["vip"] is not None
    assert len(second) == 4 and second["huge"] is None
