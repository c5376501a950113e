"""The plugin handle (``kubesched.framework.Handle``): what the scheduler gives each profile's
plugins, what a Framework built alone gives them, and mypy holding a plugin to the Protocol."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest

import kubesched.framework
from kubesched.metrics._metrics import MetricsRecorder
from kubesched.plugins import IN_TREE
from kubesched.runtime._framework import Framework
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import FakeHandle, framework_for, make_node, make_pod
from kubesched.transports.fake import FakeCluster

ROOT = Path(__file__).resolve().parents[2]
PROFILE = {"queueSort": [("PrioritySort", 1)], "bind": [("DefaultBinder", 1)]}


@pytest.mark.anyio
async def test_the_scheduler_lends_each_profile_its_parts() -> None:
    """Every profile's handle holds the scheduler's own parts, typed, set once when built; no
    way back to the scheduler."""
    transport = FakeCluster()
    sched = Scheduler(transport, seed=3)
    (fw,) = sched.profiles.values()
    h = fw.handle
    assert h.snapshot is sched.snapshot and fw.snapshot is sched.snapshot
    assert h.cluster is sched.cluster
    assert h.nominator is sched.queue.nominator and fw.nominator is sched.queue.nominator
    assert h.client is transport
    assert h.rng is sched.rng
    assert h.extenders is sched.extenders
    assert h.metrics is sched.metrics
    assert h.wall_clock == transport.wall_clock
    assert not hasattr(h, "scheduler") and not hasattr(fw, "scheduler")
    assert h.metrics_recorder is None
    recorder = MetricsRecorder()
    recorder.attach(sched)
    assert h.metrics_recorder is recorder
    # the plugins got this handle from their factories
    assert fw.plugin("DefaultPreemption").handle is h


@pytest.mark.anyio
async def test_a_plugin_sees_the_feature_gates_when_it_is_built() -> None:
    from kubesched.config._config import SchedulerConfig

    cfg = SchedulerConfig()
    cfg.feature_gates["SchedulerAsyncPreemption"] = True
    sched = Scheduler(FakeCluster(), cfg)
    (fw,) = sched.profiles.values()
    assert fw.handle.feature_gates["SchedulerAsyncPreemption"] is True
    assert fw.plugin("DefaultPreemption").async_enabled()


@pytest.mark.anyio
async def test_a_framework_built_alone_says_what_it_lacks() -> None:
    """Without a scheduler the handle's snapshot, listers and nominator are empty, and what
    only a running scheduler has raises a RuntimeError naming the member."""
    fw = Framework("p", PROFILE, IN_TREE, feature_gates={"SchedulerQueueingHints": False})
    h = fw.handle
    assert len(h.snapshot) == 0 and h.cluster.list_pods() == [] and h.nominator.for_node("n") == []
    assert dict(h.feature_gates) == {"SchedulerQueueingHints": False}
    pod = make_pod("p").obj()
    for call in (
        lambda: h.activate([pod]),
        lambda: h.spawn(anyio.sleep, 0),
    ):
        with pytest.raises(RuntimeError, match="not attached to a scheduler"):
            call()
    with pytest.raises(RuntimeError, match=r"handle\.client\.delete_pod\(\): .*not attached"):
        await h.client.delete_pod("default", "p")
    with pytest.raises(RuntimeError, match=r"handle\.record_event\('Preempted'\) for pod default/p"):
        await h.record_event(pod, "Normal", "Preempted", "Preempting", "")


def test_fake_handle_records_and_its_framework_shares_its_parts() -> None:
    node = make_node("n1").obj()
    bound, pending = make_pod("a").node("n1").obj(), make_pod("b").obj()
    fh = FakeHandle([node], [bound, pending], clock=5.0, wall_epoch=100.0)
    assert [ni.name for ni in fh.snapshot.node_infos] == ["n1"]
    assert fh.snapshot.get("n1").pods[0].pod is bound
    assert fh.cluster.get_pod("default", "b") is pending
    assert (fh.now(), fh.wall_clock()) == (5.0, 105.0)
    fh.clock = 7.0
    assert fh.now() == 7.0
    fh.activate([pending])
    assert fh.activated == ["default/b"]
    fh.delete(pending)
    assert fh.cluster.get_pod("default", "b") is None
    with pytest.raises(RuntimeError, match="no framework"):
        fh.has_pre_filter_extensions(kubesched.framework.CycleState())
    fw = framework_for({}, handle=fh)
    assert fw.handle.snapshot is fh.snapshot and fw.handle.cluster is fh.cluster
    assert fw.handle.client is fh.client and fw.handle.now() == 7.0
    assert fw.handle.has_pre_filter_extensions(kubesched.framework.CycleState()) is False


# --- mypy holds plugins to the Protocol ------------------------------------------------------------

TYPO_PLUGIN = '''
"""A third-party plugin written against kubesched.framework alone."""

from collections.abc import Mapping
from typing import Any

from kubesched.framework import CycleState, Handle, Pod, Status, hookimpl


class Stamp:
    name = "Stamp"

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        state.write("stamp", self.handle.now())
        self.handle.some_typo
        return None


def new(args: Mapping[str, Any] | None, handle: Handle) -> Stamp:
    return Stamp(args, handle)
'''


def test_a_plugin_that_misuses_the_handle_fails_mypy() -> None:
    """``handle.some_typo`` in a plugin typed against ``kubesched.framework.Handle`` is a mypy
    error; the example plugin package (examples/third_party_plugin) type-checks clean.

    mypy reads kubesched through a link tree (as ``make typecheck`` does) and keeps its cache
    next to it in the venv: the first run analyses the engine (~half a minute), later runs
    only the two plugins (a few seconds)."""
    api = pytest.importorskip("mypy.api")
    work = Path(sys.prefix) / "mypy-plugin-check"
    tree = work / "tree" / "kubesched"
    tree.mkdir(parents=True, exist_ok=True)
    for src in [*sorted((ROOT / "core").iterdir()), ROOT / "plugins", ROOT / "transports"]:
        if src.name == "__pycache__":
            continue
        link = tree / src.name
        if not link.is_symlink() or link.resolve() != src.resolve():
            if link.is_symlink():
                link.unlink()
            link.symlink_to(src)
    config = work / "mypy.ini"
    config.write_text(
        textwrap.dedent(f"""\
            [mypy]
            python_version = 3.11
            strict = True
            ignore_missing_imports = True
            warn_unused_ignores = False
            mypy_path = {work / "tree"}
            [mypy-kubesched.*]
            follow_imports = silent
            """)
    )
    plugin = work / "stamp_plugin.py"  # one path: mypy's cache knows a module by it
    if not plugin.exists() or plugin.read_text() != TYPO_PLUGIN:
        plugin.write_text(TYPO_PLUGIN)
    example = ROOT / "examples" / "third_party_plugin" / "src" / "kubesched_example_plugins"
    out, err, status = api.run(
        ["--config-file", str(config), "--cache-dir", str(work / "cache"), str(plugin), str(example)]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    line = TYPO_PLUGIN.splitlines().index("        self.handle.some_typo") + 1
    want = f'stamp_plugin.py:{line}: error: "Handle" has no attribute "some_typo"  [attr-defined]'
    assert len(errors) == 1 and errors[0].endswith(want), out + err
    assert status == 1
