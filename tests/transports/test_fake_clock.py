"""The fake cluster's clock (its kept second and fast path against datetime) and one time a
write (a binding and the kubelet's start of the pod share it).  Async tests run on both backends
in virtual time."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from kubesched import Binding
from kubesched.api._objects import ObjectMeta, ObjectReference
from kubesched.testing import make_node, make_pod
from kubesched.transports.fake import FakeCluster
from kubesched.transports.fake._store import Clock

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("epoch", ["2024-03-01T12:00:00Z", "2024-03-01T23:59:59.999500Z", "2024-02-29T00:00:00.25+01:00"])
def test_clock_timestamps_match_datetime(epoch: str) -> None:
    """The clock's kept second and its fast path (a fraction with no carry) give what datetime
    gives, for times in one second, across seconds, at whole seconds and with the epoch's own
    microseconds carrying into the next second."""
    clock = Clock(epoch)
    start = datetime.fromisoformat(epoch.replace("Z", "+00:00")).astimezone(UTC)
    rng = random.Random(7)
    seconds = 0.0
    for _ in range(3000):
        seconds += rng.choice([0.0, 1e-6, 0.0004, 0.3, 1.0, rng.random()])
        if rng.random() < 0.05:
            seconds = float(round(seconds))
        t = start + timedelta(microseconds=round(seconds * 1_000_000))
        want = t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{t.microsecond:06d}" if t.microsecond else "") + "Z"
        assert clock.timestamp_at(seconds) == want, seconds


async def test_a_binding_has_one_time() -> None:
    """The binding's PodScheduled condition and the kubelet's start (startTime, its conditions)
    carry one time: one write, one clock read (the API server stamps a write once)."""
    async with FakeCluster() as cluster:
        cluster.create(make_node("n1").obj())
        cluster.create(make_pod("p").obj())
        await anyio.sleep(0.25)
        await cluster.bind(Binding(metadata=ObjectMeta(namespace="default", name="p"), target=ObjectReference(kind="Node", name="n1")))
        status = cluster.get_pod("default", "p").status
        assert status.start_time == "2024-01-01T00:00:00.250000Z"
        assert [(c.type, c.last_transition_time) for c in status.conditions] == [
            (t, status.start_time) for t in ("PodScheduled", "Initialized", "Ready", "ContainersReady")
        ]
