"""A plugin that raises, or returns a result of the wrong type, at any extension point, is an Error
for that pod — never a dead scheduler.  A hook declared ``async def`` where a plain function is
required is refused when the profile is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kubesched import ConfigError, Scheduler, Status, cli, hookimpl
from kubesched.config._config import ProfileConfig, SchedulerConfig, default_multi_point
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate
from kubesched.testing import register_temporary_plugin
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, labels: {boom: "yes"}}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bystander}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


def _boom(pod: Any) -> None:
    if pod.metadata.labels.get("boom"):
        raise RuntimeError("kaboom")


class Boom:
    """Raises at every extension point for pods labelled ``boom``."""

    name = "Boom"

    def __init__(self, args: Any, handle: Any) -> None:
        self.point = (args or {})["point"]

    @hookimpl
    def kubesched_pre_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        if self.point == "preFilter":
            _boom(pod)

    @hookimpl
    def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        if self.point == "filter":
            _boom(pod)

    @hookimpl
    def kubesched_pre_score(self, state: Any, pod: Any, nodes: Any) -> None:
        if self.point == "preScore":
            _boom(pod)

    @hookimpl
    def kubesched_score(self, state: Any, pod: Any, nodes: Any) -> np.ndarray:
        if self.point == "score":
            _boom(pod)
        return np.zeros(len(nodes), dtype=np.int64)

    @hookimpl
    def kubesched_reserve(self, state: Any, pod: Any, node_name: str) -> None:
        if self.point == "reserve":
            _boom(pod)

    @hookimpl
    def kubesched_unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        if self.point == "reserve":
            _boom(pod)

    @hookimpl
    def kubesched_permit(self, state: Any, pod: Any, node_name: str) -> None:
        if self.point == "permit":
            _boom(pod)

    @hookimpl
    async def kubesched_pre_bind(self, state: Any, pod: Any, node_name: str) -> None:
        if self.point == "preBind":
            _boom(pod)


# What a raise becomes.  Go plugins return an error Status and never raise: kubesched names the
# raise 'running "Boom" <point> plugin: <exception>', and the framework wraps it as upstream's
# runtime/framework.go wraps a plugin's error ("running PreScore plugin %q: %w", "running Score
# plugins: %w", "running Reserve plugin %q: %w", ...).  PreFilter and Filter add no second
# "running ..." (for Filter the raise's own text is upstream's wrap, "running %q filter plugin: %w").
RAISED = {
    "preFilter": 'running "Boom" prefilter plugin: kaboom',
    "filter": 'running "Boom" filter plugin: kaboom',
    "preScore": 'running PreScore plugin "Boom": running "Boom" prescore plugin: kaboom',
    "score": 'running Score plugins: running "Boom" score plugin: kaboom',
    "reserve": 'running Reserve plugin "Boom": running "Boom" reserve plugin: kaboom',
    "permit": 'running Permit plugin "Boom": running "Boom" permit plugin: kaboom',
    "preBind": 'running PreBind plugin "Boom": running "Boom" prebind plugin: kaboom',
}


@pytest.mark.parametrize("point", list(RAISED))
async def test_raising_plugin_is_an_error_for_that_pod_only(point: str) -> None:
    mp = [(n, w) for n, w in default_multi_point() if n != "DefaultPreemption"] + [("Boom", 1)]
    config = SchedulerConfig(profiles=[ProfileConfig(multi_point=mp, plugin_args={"Boom": {"point": point}})])
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": SCENARIO})
    result = await simulate(manifests, config, registry={"Boom": Boom}, until=60, events="all")
    pods = {r.pod.metadata.name: r.pod for r in result.pods}
    assert pods["bystander"].spec.node_name
    assert not pods["victim"].spec.node_name
    failures = [e for e in result.events if e["object"] == "default/victim"]
    assert failures and all(e["reason"] == "FailedScheduling" for e in failures)
    # an Error is no FitError: the event's message is the status's own, every attempt alike
    assert {e["message"] for e in failures} == {RAISED[point]}
    cond = next(c for c in pods["victim"].status.conditions if c.type == "PodScheduled")
    assert (cond.status, cond.reason, cond.message) == ("False", "SchedulerError", RAISED[point])
    # errors are retried after a backoff, again and again, without stopping the scheduler
    assert len(failures) >= 3


# --- results of the wrong type -------------------------------------------------------------------


class Wrong:
    """Returns a value of the wrong type at one extension point for pods labelled ``boom``."""

    name = "Wrong"

    def __init__(self, args: Any, handle: Any) -> None:
        self.point = (args or {})["point"]

    def _out(self, point: str, pod: Any, value: Any, ok: Any = None) -> Any:
        return value if self.point == point and pod.metadata.labels.get("boom") else ok

    @hookimpl
    def kubesched_pre_filter(self, state: Any, pod: Any, nodes: Any) -> Any:
        return self._out("preFilter", pod, ["n1"])

    @hookimpl
    def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> Any:
        return self._out("filter", pod, [Status.unschedulable("no")] * len(nodes))

    @hookimpl
    def kubesched_pre_score(self, state: Any, pod: Any, nodes: Any) -> Any:
        return self._out("preScore", pod, True)

    @hookimpl
    def kubesched_score(self, state: Any, pod: Any, nodes: Any) -> Any:
        return self._out("score", pod, [0.5] * len(nodes), np.zeros(len(nodes), dtype=np.int64))

    @hookimpl
    def kubesched_reserve(self, state: Any, pod: Any, node_name: str) -> Any:
        return self._out("reserve", pod, "reserved")

    @hookimpl
    def kubesched_permit(self, state: Any, pod: Any, node_name: str) -> Any:
        return self._out("permit", pod, (Status.wait(), "10s"))

    @hookimpl
    async def kubesched_pre_bind(self, state: Any, pod: Any, node_name: str) -> Any:
        return self._out("preBind", pod, {"ok": True})


# runtime/framework.go's wrap of a plugin's error status, per extension point ("running PreFilter
# plugin %q: %w", "running %q filter plugin: %w", ...); Score has no status: it reads as a raise.
WRONG = {
    "preFilter": 'running PreFilter plugin "Wrong": returned list, expected a PreFilterResult, a Status, '
    "(PreFilterResult, Status) or None",
    "filter": 'running "Wrong" filter plugin: returned list, expected a mapping {index in batch: Status} or None',
    "preScore": 'running PreScore plugin "Wrong": returned bool, expected a Status or None',
    "score": 'running Score plugins: running "Wrong" score plugin: returned list of float64, expected one '
    "integer score per node (an integer array or a sequence of int)",
    "reserve": 'running Reserve plugin "Wrong": returned str, expected a Status or None',
    "permit": 'running Permit plugin "Wrong": returned tuple, expected a Status, (Status, timeout in seconds) '
    "or None",
    "preBind": 'running PreBind plugin "Wrong": returned dict, expected a Status or None',
}


@pytest.mark.parametrize("point", list(WRONG))
async def test_a_wrong_result_is_an_error_for_that_pod_only(point: str) -> None:
    mp = [(n, w) for n, w in default_multi_point() if n != "DefaultPreemption"] + [("Wrong", 1)]
    config = SchedulerConfig(profiles=[ProfileConfig(multi_point=mp, plugin_args={"Wrong": {"point": point}})])
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": SCENARIO})
    result = await simulate(manifests, config, registry={"Wrong": Wrong}, until=60, events="all")
    pods = {r.pod.metadata.name: r.pod for r in result.pods}
    assert pods["bystander"].spec.node_name
    assert not pods["victim"].spec.node_name
    failures = [e for e in result.events if e["object"] == "default/victim"]
    assert failures and all(e["reason"] == "FailedScheduling" for e in failures)
    assert {e["message"] for e in failures} == {WRONG[point]}
    cond = next(c for c in pods["victim"].status.conditions if c.type == "PodScheduled")
    assert (cond.status, cond.reason, cond.message) == ("False", "SchedulerError", WRONG[point])
    assert len(failures) >= 3  # retried after each backoff, the scheduler still going


# --- async def where a plain function is required -------------------------------------------------


class AsyncFilter:
    """A Filter declared ``async def``: Filter runs in the scheduling cycle, never awaited."""

    name = "AsyncFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    async def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None


ASYNC_FILTER = (
    'plugin "AsyncFilter": kubesched_filter (Filter) is declared async def, but it runs in the scheduling '
    "cycle and must be a plain function (only PostFilter, Unreserve, PreBind, Bind, PostBind may be async)"
)


async def test_an_async_filter_is_a_config_error_when_the_scheduler_is_built() -> None:
    config = SchedulerConfig(profiles=[ProfileConfig(multi_point=[*default_multi_point(), ("AsyncFilter", 1)])])
    async with FakeCluster() as cluster:
        with pytest.raises(ConfigError) as exc:
            Scheduler(cluster, config, registry={"AsyncFilter": AsyncFilter})
    assert str(exc.value) == ASYNC_FILTER


def test_an_async_filter_is_an_input_error_for_simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SCENARIO)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: AsyncFilter\n"
    )
    with register_temporary_plugin("AsyncFilter", AsyncFilter):
        assert cli.main(["simulate", str(scenario), "--config", str(cfg)]) == 2
    assert capsys.readouterr().err.strip() == f"kubesched: error: {cfg}: {ASYNC_FILTER}"
