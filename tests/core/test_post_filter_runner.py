"""RunPostFilterPlugins: the first Success, Error or UnschedulableAndUnresolvable ends the run
(kubernetes#114699, from v1.27.0), otherwise the merged reasons with the first rejector.

Ported from upstream ``pkg/scheduler/framework/runtime/framework_test.go`` ``TestPostFilterPlugins``
(v1.36.0), every case; the injected reason is upstream's ``injectReason``."""

from __future__ import annotations

from typing import Any

import pytest

import kubesched
from kubesched import Code, CycleState, Framework, PostFilterResult, Status, hookimpl
from kubesched.plugins import IN_TREE
from kubesched.testing import make_pod

pytestmark = pytest.mark.anyio

INJECT_REASON = "injected status"


def _plugin(code: Code) -> Any:
    class TestPlugin:
        def __init__(self, args: Any, handle: Any) -> None:
            self.calls = 0

        @hookimpl
        def kubesched_post_filter(
            self, state: CycleState, pod: kubesched.Pod, node_statuses: Any
        ) -> tuple[PostFilterResult | None, Status]:
            self.calls += 1
            return None, Status(code, INJECT_REASON)

    return TestPlugin


async def _run(*codes: Code) -> tuple[Status, Framework]:
    names = [f"TestPlugin{i + 1}" for i in range(len(codes))]
    fw = Framework(
        "default-scheduler",
        {"queueSort": [("PrioritySort", 0)], "bind": [("DefaultBinder", 0)], "postFilter": [(n, 0) for n in names]},
        {**IN_TREE, **{n: _plugin(c) for n, c in zip(names, codes, strict=True)}},
    )
    _, st = await fw.run_post_filter_plugins(CycleState(), make_pod("p").obj(), {})
    return st, fw


async def test_framework__TestPostFilterPlugins_a_single_plugin_makes_a_Pod_schedulable() -> None:
    st, _ = await _run(Code.SUCCESS)
    assert st.is_success()


async def test_framework__TestPostFilterPlugins_plugin1_failed_followed_by_plugin2_which_makes_the_Pod_schedulable() -> None:
    st, _ = await _run(Code.UNSCHEDULABLE, Code.SUCCESS)
    assert st.is_success()


async def test_framework__TestPostFilterPlugins_plugin1_makes_a_Pod_schedulable_followed_by_plugin2_which_cannot() -> None:
    st, _ = await _run(Code.SUCCESS, Code.UNSCHEDULABLE)
    assert st.is_success()


async def test_framework__TestPostFilterPlugins_plugin1_errors_followed_by_plugin2_which_makes_the_Pod_schedulable() -> None:
    st, _ = await _run(Code.ERROR, Code.SUCCESS)
    assert (st.code, st.message, st.plugin) == (Code.ERROR, INJECT_REASON, "TestPlugin1")


async def test_framework__TestPostFilterPlugins_plugin1_failed_followed_by_plugin2_which_makes_the_Pod_unresolvable() -> None:
    st, _ = await _run(Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (INJECT_REASON,), "TestPlugin2")


async def test_framework__TestPostFilterPlugins_both_plugins_failed_to_make_a_Pod_schedulable() -> None:
    st, _ = await _run(Code.UNSCHEDULABLE, Code.UNSCHEDULABLE)
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, (INJECT_REASON, INJECT_REASON), "TestPlugin1")


async def test_an_unresolvable_post_filter_status_ends_the_run_before_the_next_plugin() -> None:
    """The case kubernetes#114699 added, seen from the next plugin: it is not called."""
    st, fw = await _run(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SUCCESS)
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (INJECT_REASON,), "TestPlugin1")
    second = next(e.plugin for e in fw.points["postFilter"] if e.name == "TestPlugin2")
    assert second.calls == 0
