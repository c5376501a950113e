"""The PreFilter runner's plain-pod path (kubesched.runtime._filter_runners): the in-tree plugins
that say they Skip a pod without volumes, without host ports or without node selection (a
nodeSelector or required node affinity) are not called for such a pod, and the cycle comes out
as the full loop leaves it."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kubesched.api._objects import GCEPersistentDiskVolumeSource, HostPathVolumeSource, Volume
from kubesched.config._config import default_profile
from kubesched.plugins import IN_TREE
from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._framework import build_framework
from kubesched.runtime._infos import PodInfo
from kubesched.runtime._status import SKIP, Code, Status
from kubesched.testing import make_node, make_node_info, make_pod

DECLARED = {"NodePorts", "NodeAffinity", "VolumeZone", "VolumeRestrictions", "NodeVolumeLimits"}
# what each declaring plugin needs of a pod to do more than Skip
NEEDS = {
    "NodePorts": "host ports",
    "NodeAffinity": "node selection",
    "VolumeZone": "volumes",
    "VolumeRestrictions": "volumes",
    "NodeVolumeLimits": "volumes",
}


def _plain_pod(rng: random.Random, i: int) -> Any:
    b = make_pod(f"p{i}").priority(rng.randrange(3))
    if rng.random() < 0.7:
        b = b.req(cpu=f"{rng.randrange(1, 2000)}m", memory=f"{rng.randrange(1, 512)}Mi")
    if rng.random() < 0.3:
        b = b.toleration("k", "v", "NoSchedule")
    if rng.random() < 0.3:
        b = b.label("app", rng.choice(["a", "b"]))
    if rng.random() < 0.3:
        b = b.spread(1, "zone", "DoNotSchedule", {"app": "a"})
    return b.obj()


def _pod_with_traits(rng: random.Random, i: int) -> tuple[Any, set[str]]:
    """A pod with some of the traits (and pod affinity, which is no node selection), and the
    traits it has."""
    b = make_pod(f"t{i}").req(cpu=f"{rng.randrange(1, 2000)}m")
    traits: set[str] = set()
    if rng.random() < 0.4:
        b = b.host_port(8000 + i)
        traits.add("host ports")
    if rng.random() < 0.3:
        b = b.node_selector({"zone": "a"})
        traits.add("node selection")
    if rng.random() < 0.3:
        b = b.node_affinity_in("zone", ["a", "b"])
        traits.add("node selection")
    if rng.random() < 0.3:
        b = b.preferred_node_affinity(5, "zone", ["a"])  # preferred only: no node selection
    if rng.random() < 0.3:
        b = b.pod_affinity("app", ["a"], "zone")
    pod = b.obj()
    if rng.random() < 0.4:
        source = rng.choice(["hostPath", "gce"])
        vol = (
            Volume(name="v", host_path=HostPathVolumeSource(path="/data"))
            if source == "hostPath"
            else Volume(name="v", gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name=f"disk{i}"))
        )
        pod.spec.volumes = [vol]
        traits.add("volumes")
    return pod, traits


def _state(pod: Any) -> CycleState:
    state = CycleState()
    state.pod_info = PodInfo(pod)
    return state


def test_the_declaring_plugins_are_the_expected_ones() -> None:
    fw = build_framework(default_profile(), IN_TREE)
    assert fw.filters._plain_skips == DECLARED
    assert {e.name: e.plugin.skips_pre_filter_without for e in fw.filters.pre_filter if e.name in DECLARED} == NEEDS


@pytest.mark.parametrize("seed", range(5))
def test_declaring_plugins_skip_a_plain_pod_and_write_nothing(seed: int) -> None:
    fw = build_framework(default_profile(), IN_TREE)
    rng = random.Random(seed)
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    for i in range(20):
        pod = _plain_pod(rng, i)
        for e in fw.filters.pre_filter:
            if e.name in DECLARED:
                state = _state(pod)
                assert e.plugin.kubesched_pre_filter(state, pod, nodes) is SKIP, e.name
                assert state._data == {}, e.name


@pytest.mark.parametrize("seed", range(5))
def test_plain_path_leaves_the_cycle_as_the_full_loop(seed: int) -> None:
    fw = build_framework(default_profile(), IN_TREE)
    full = copy.copy(fw.filters)
    full._plain_skips = frozenset()  # the full loop: every plugin called
    rng = random.Random(seed)
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    for i in range(20):
        pod = _plain_pod(rng, i) if i % 2 else _pod_with_traits(rng, i)[0]
        a, b = _state(pod), _state(pod)
        out_a = fw.filters.run_pre_filter_plugins(a, pod, nodes)
        out_b = full.run_pre_filter_plugins(b, pod, nodes)
        assert (out_a[0], out_a[2]) == (out_b[0], out_b[2])
        assert (out_a[1] is None) == (out_b[1] is None)
        assert a.skip_filter_plugins == b.skip_filter_plugins
        if i % 2:  # a plain pod
            assert a.skip_filter_plugins >= DECLARED
        assert set(a._data) == set(b._data)


@pytest.mark.parametrize("seed", range(5))
def test_a_declaring_plugin_is_called_for_a_pod_with_what_it_needs_only(seed: int) -> None:
    """Each declaring plugin is left out for a pod without the trait it names (and it Skips
    that pod, writing nothing), and called for a pod with it, whatever the others need."""
    fw = build_framework(default_profile(), IN_TREE)
    rng = random.Random(seed)
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    for i in range(30):
        pod, traits = _pod_with_traits(rng, i)
        called: list[str] = []
        runners = copy.copy(fw.filters)
        runners._plain_tables = [
            ([(*t[:3], _spy(called, t[2], t[3]), t[4]) for t in table], skips) for table, skips in runners._plain_tables
        ]
        runners.run_pre_filter_plugins(_state(pod), pod, nodes)
        for name, need in NEEDS.items():
            assert (name in called) == (need in traits), (name, traits)
            if need not in traits:
                state = _state(pod)
                plugin = next(e.plugin for e in fw.filters.pre_filter if e.name == name)
                assert plugin.kubesched_pre_filter(state, pod, nodes) is SKIP, name
                assert state._data == {}, name


def _spy(called: list[str], name: str, hook: Any) -> Any:
    def call(state: CycleState, pod: Any, nodes: Any) -> Any:
        called.append(name)
        return hook(state, pod, nodes)

    return call


def test_a_pod_with_host_ports_or_node_selection_takes_the_full_loop() -> None:
    fw = build_framework(default_profile(), IN_TREE)
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    for pod in (
        make_pod("ports").host_port(8080).obj(),
        make_pod("sel").node_selector({"zone": "a"}).obj(),
        make_pod("aff").node_affinity_in("zone", ["a"]).obj(),
    ):
        state = _state(pod)
        fw.filters.run_pre_filter_plugins(state, pod, nodes)
        assert not {"NodePorts", "NodeAffinity"} <= state.skip_filter_plugins, pod.metadata.name



def test_an_early_return_marks_only_the_plain_skippers_before_it() -> None:
    """A plugin that fails the pod ends the loop: the plain skippers after it were never
    reached, as in the full loop (preemption's dry runs read the skipped set)."""
    fw = build_framework(default_profile(), IN_TREE)
    runners = fw.filters

    def reject(state: CycleState, pod: Any, nodes: Any) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no")

    # VolumeBinding fails the pod: VolumeZone, a plain skipper, comes after it
    runners._pre_filter_table = [(*t[:3], reject if t[2] == "VolumeBinding" else t[3], t[4]) for t in runners._pre_filter_table]
    runners._plain_tables = [
        ([(*t[:3], reject if t[2] == "VolumeBinding" else t[3], t[4]) for t in table], skips)
        for table, skips in runners._plain_tables
    ]
    full = copy.copy(runners)
    full._plain_skips = frozenset()
    nodes = [make_node_info(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())]
    pod = make_pod("p").req(cpu="1").obj()
    a, b = _state(pod), _state(pod)
    out_a = runners.run_pre_filter_plugins(a, pod, nodes)
    out_b = full.run_pre_filter_plugins(b, pod, nodes)
    assert out_a[1] is not None and out_b[1] is not None
    assert (out_a[1].code, out_a[1].message, out_a[2]) == (out_b[1].code, out_b[1].message, out_b[2])
    assert a.skip_filter_plugins == b.skip_filter_plugins == DECLARED - {"VolumeZone"}
