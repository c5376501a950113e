"""A plugin that raises, at any extension point, is an Error for that pod — never a dead scheduler."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched import hookimpl
from kubesched._config import ProfileConfig, SchedulerConfig, default_multi_point
from kubesched.cli.manifests import load_manifests
from kubesched.cli.simulate import simulate

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
    result = await simulate(manifests, config, registry={"Boom": Boom}, until=60)
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
