"""kubesched.testing for plugin authors: scheduler_for / SimCluster.settle, temporary plugins,
and the ``kubesched.pytest_plugin`` fixtures."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import kubesched
from kubesched import CycleState, NodeInfo, Pod, Status
from kubesched.config._config import parse_config
from kubesched.scheduler._scheduler import Scheduler
from kubesched.testing import make_node, make_pod, register_temporary_plugin, scheduler_for
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio
pytest_plugins = ["pytester"]

CONFIG_BASE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


class OnlyNode:
    """Filter: every node but ``args.node`` is rejected (UnschedulableAndUnresolvable)."""

    name = "OnlyNode"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        self.node = (args or {}).get("node", "n2")

    @kubesched.hookimpl
    @kubesched.per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.name != self.node:
            return Status.unresolvable("node(s) aren't the chosen one")
        return None


class FlakyFilter:
    """Filter: an Error for the first ``args.failures`` cycles (the pod backs off), then passes."""

    name = "FlakyFilter"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        self.failures = (args or {}).get("failures", 1)
        self.calls = 0

    @kubesched.hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: kubesched.NodeBatch
    ) -> dict[int, Status] | None:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError("flaky backend")
        return None


def nodes(*names: str) -> list[kubesched.Node]:
    return [make_node(n).capacity(cpu="4", memory="8Gi").obj() for n in names]


async def test_scheduler_for_runs_plugins_given_by_factory() -> None:
    async with scheduler_for(
        nodes("n1", "n2", "n3"),
        plugins={"OnlyNode": OnlyNode},
        enable=["OnlyNode"],
        plugin_args={"OnlyNode": {"node": "n3"}},
    ) as sim:
        sim.create(make_pod("p1").req(cpu="1").obj(), make_pod("p2").req(cpu="1").obj())
        await sim.settle()
        assert sim.placements() == {"p1": "n3", "p2": "n3"}
        assert sim.node_of("p1") == "n3"
        assert [e.message for e in sim.events("Scheduled")] == [
            "Successfully assigned default/p1 to n3",
            "Successfully assigned default/p2 to n3",
        ]
        assert anyio.current_time() - sim.cluster.elapsed() >= 0  # still the same loop


async def test_a_pending_pod_tells_why() -> None:
    async with scheduler_for(  # 1.33: no DynamicResources in the default profile
        nodes("n1"), plugins={"OnlyNode": OnlyNode}, enable=["OnlyNode"], emulated_version="1.33"
    ) as sim:
        sim.create(make_pod("p").obj())
        await sim.settle()
        assert sim.placements() == {"p": None}
        cond = sim.condition("p")
        assert cond is not None and (cond.status, cond.reason) == ("False", "Unschedulable")
        assert cond.message == (
            "0/1 nodes are available: 1 node(s) aren't the chosen one. preemption: "
            "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        )


async def test_settle_waits_through_backoff_in_virtual_time() -> None:
    async with scheduler_for(
        nodes("n1"),
        plugins={"FlakyFilter": FlakyFilter},
        enable=["FlakyFilter"],
        plugin_args={"FlakyFilter": {"failures": 2}},
        emulated_version="1.32",  # before SchedulerPopFromBackoffQ (1.33: backoffs end on 1 s windows)
    ) as sim:
        start = anyio.current_time()
        sim.create(make_pod("p").obj())
        await sim.settle()
        assert sim.node_of("p") == "n1"
        assert sim.scheduler.profiles["default-scheduler"].plugin("FlakyFilter").calls == 3
        # two backoffs (1s, then 2s; completed by the queue's 1s backoff flush) on the virtual clock
        assert 3.0 <= anyio.current_time() - start <= 5.0


async def test_settle_times_out_when_the_scheduler_never_rests() -> None:
    async with scheduler_for(
        nodes("n1"),
        plugins={"FlakyFilter": FlakyFilter},
        enable=["FlakyFilter"],
        plugin_args={"FlakyFilter": {"failures": 10**9}},
    ) as sim:
        sim.create(make_pod("p").obj())
        with pytest.raises(TimeoutError, match=r"did not settle within 30s: .*"):
            await sim.settle(timeout=30)


async def test_settle_on_an_empty_cluster_returns_at_once() -> None:
    async with scheduler_for() as sim:
        start = anyio.current_time()
        await sim.settle()
        assert anyio.current_time() == start
        assert sim.placements() == {}


async def test_config_document_is_validated_like_the_config_flag() -> None:
    config = {
        **CONFIG_BASE,
        "profiles": [
            {
                "plugins": {"filter": {"enabled": [{"name": "OnlyNode"}]}},
                "pluginConfig": [{"name": "OnlyNode", "args": {"node": "n1"}}],
            }
        ],
    }
    async with scheduler_for(
        nodes("n1", "n2"), plugins={"OnlyNode": OnlyNode}, config=config
    ) as sim:
        sim.create(make_pod("p").obj())
        await sim.settle()
        assert sim.placements() == {"p": "n1"}
    bad = {**CONFIG_BASE, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]}
    with pytest.raises(
        kubesched.ConfigError,
        match='profiles\\[0\\].plugins.filter.enabled\\[0\\].name: Invalid value: "Nope"',
    ):
        async with scheduler_for(config=bad):
            pass
    with pytest.raises(ValueError, match="either config= or enable="):
        async with scheduler_for(config=config, enable=["OnlyNode"]):
            pass


async def test_an_error_in_the_block_comes_out_as_itself() -> None:
    with pytest.raises(KeyError, match="mine"):
        async with scheduler_for(nodes("n1")):
            raise KeyError("mine")


class StrictArgs:
    """Validates its args as an in-tree plugin does: a ConfigError naming the field."""

    name = "StrictArgs"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        if not isinstance((args or {}).get("node"), str):
            raise kubesched.ConfigError("Required value: a node name", field="node")

    @kubesched.hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: kubesched.NodeBatch) -> None:
        return None


class AsyncFilter:
    name = "AsyncFilter"

    def __init__(self, args: dict[str, Any] | None, handle: Any) -> None:
        pass

    @kubesched.hookimpl
    async def kubesched_filter(self, state: CycleState, pod: Pod, nodes: kubesched.NodeBatch) -> None:
        return None


async def test_bad_plugin_args_raise_config_error_itself() -> None:
    with pytest.raises(kubesched.ConfigError) as exc:
        async with scheduler_for(
            nodes("n1"), plugins={"StrictArgs": StrictArgs}, enable=["StrictArgs"],
            plugin_args={"StrictArgs": {"node": 3}},
        ):
            pytest.fail("the block must not run")
    assert str(exc.value) == "profiles[0].pluginConfig[0].args.node: Required value: a node name"
    # an in-tree plugin's args, as a plugin author's test would get them wrong
    with pytest.raises(kubesched.ConfigError, match=r'scoringStrategy\.type: Unsupported value: "Bogus"'):
        async with scheduler_for(
            nodes("n1"), enable=["NodeResourcesFit"],
            plugin_args={"NodeResourcesFit": {"scoringStrategy": {"type": "Bogus"}}},
        ):
            pytest.fail("the block must not run")


async def test_an_async_filter_raises_config_error_itself() -> None:
    with pytest.raises(kubesched.ConfigError, match='^plugin "AsyncFilter": kubesched_filter \\(Filter\\) is declared async def'):
        async with scheduler_for(nodes("n1"), plugins={"AsyncFilter": AsyncFilter}, enable=["AsyncFilter"]):
            pytest.fail("the block must not run")


async def test_a_profile_that_cannot_be_built_raises_plugin_error_itself() -> None:
    from kubesched.config._config import ProfileConfig, SchedulerConfig

    config = SchedulerConfig(profiles=[ProfileConfig(enabled={"filter": [("Nope", 0)]})])
    with pytest.raises(kubesched.PluginError, match='^"Nope" does not exist$'):
        async with scheduler_for(nodes("n1"), config=config):
            pytest.fail("the block must not run")


async def test_an_exception_group_from_the_block_is_left_as_it_is() -> None:
    with pytest.raises(ExceptionGroup) as exc:
        async with scheduler_for(nodes("n1")):
            raise ExceptionGroup("mine", [KeyError("a")])
    assert exc.value.message == "mine"


async def test_wait_idle_of_the_running_scheduler() -> None:
    """``sim.scheduler`` is a live scheduler: its wait_idle returns once nothing is left to do."""
    async with scheduler_for(
        nodes("n1", "n2"), plugins={"FlakyFilter": FlakyFilter}, enable=["FlakyFilter"],
        plugin_args={"FlakyFilter": {"failures": 2}},
    ) as sim:
        sim.create(make_pod("p1").req(cpu="1").obj(), make_pod("p2").req(cpu="1").obj())
        await sim.scheduler.wait_idle()
        assert sim.scheduler.is_idle()
        assert set(sim.placements()) == {"p1", "p2"}
        assert None not in sim.placements().values()
        start = anyio.current_time()
        await sim.scheduler.wait_idle()  # idle: at once, and as often as asked
        assert anyio.current_time() == start


async def test_feature_gates_and_cluster_options_reach_scheduler_and_cluster() -> None:
    async with scheduler_for(
        feature_gates={"SchedulerAsyncPreemption": False}, default_grace_seconds=5
    ) as sim:
        assert sim.scheduler.config.feature_gates["SchedulerAsyncPreemption"] is False
        assert sim.cluster.default_grace_seconds == 5


async def test_register_temporary_plugin_is_known_by_name_inside_the_block_only() -> None:
    config = {
        **CONFIG_BASE,
        "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "OnlyNode"}]}}}],
    }
    with register_temporary_plugin("OnlyNode", OnlyNode):
        cfg = parse_config(config)
        async with FakeCluster() as cluster:
            sched = Scheduler(cluster, cfg)
            assert isinstance(sched.profiles["default-scheduler"].plugin("OnlyNode"), OnlyNode)
        async with scheduler_for(nodes("n1", "n2"), enable=["OnlyNode"]) as sim:
            sim.create(make_pod("p").obj())
            await sim.settle()
            assert sim.placements() == {"p": "n2"}
    with pytest.raises(kubesched.ConfigError, match='plugin "OnlyNode" does not exist'):
        parse_config(config)


def test_register_temporary_plugin_nests_and_may_replace_an_in_tree_plugin() -> None:
    from kubesched.plugins import IN_TREE
    from kubesched.runtime._entrypoints import all_plugins

    with register_temporary_plugin("NodeName", OnlyNode):
        assert all_plugins()["NodeName"] is OnlyNode
        with register_temporary_plugin("NodeName", FlakyFilter):
            assert all_plugins()["NodeName"] is FlakyFilter
        assert all_plugins()["NodeName"] is OnlyNode
    assert all_plugins()["NodeName"] is IN_TREE["NodeName"]
    with pytest.raises(TypeError, match="must be callable"), register_temporary_plugin("X", 42):  # type: ignore[arg-type]
        pass


def test_pytest_plugin_gives_both_backends_in_virtual_time_and_temporary_plugins(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest('pytest_plugins = ["kubesched.pytest_plugin"]\n')
    pytester.makepyfile(
        test_author="""
        import anyio
        import kubesched
        import pytest
        from kubesched.testing import make_node, make_pod, scheduler_for

        pytestmark = pytest.mark.anyio


        class NoNodes:
            def __init__(self, args, handle):
                pass

            @kubesched.hookimpl
            @kubesched.per_node_filter
            def kubesched_filter(self, state, pod, node_info):
                return kubesched.Status.unschedulable("no")


        async def test_gate(temporary_plugin, anyio_backend_name):
            temporary_plugin("NoNodes", NoNodes)
            async with scheduler_for([make_node("n1").obj()], enable=["NoNodes"]) as sim:
                sim.create(make_pod("p").obj())
                await sim.settle()
                assert sim.placements() == {"p": None}
                await anyio.sleep(3600)  # virtual: no real wait
            assert anyio_backend_name in ("asyncio", "trio")


        def test_gone_after_the_test():
            from kubesched.runtime._entrypoints import all_plugins

            assert "NoNodes" not in all_plugins()
        """
    )
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
