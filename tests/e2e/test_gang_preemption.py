"""Gang preemption (``gangPreemption: true``) for the Permit-style gang plugins, Gang and
Coscheduling, end to end through ``simulate``: a gang preempts for all its members in one decision,
or evicts nothing; asyncio and trio agree byte for byte.  kubesched's own behaviour: no upstream."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from kubesched import ConfigError
from kubesched.config._config import parse_config
from kubesched.plugins import coscheduling, gang
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate
from kubesched.transports.fake.virtual_time import run as run_on

pytestmark = pytest.mark.anyio

GANG = gang.DEFAULT_GROUP_NAME_LABEL
COUNT = gang.DEFAULT_AVAILABLE_COUNT_LABEL


def config(plugin: str, preemption: bool = True, **args: Any) -> dict[str, Any]:
    """A profile with ``plugin`` on; with ``preemption``, its PostFilter before DefaultPreemption."""
    plugins: dict[str, Any] = {
        "multiPoint": {"enabled": [{"name": plugin}]},
        "queueSort": {"enabled": [{"name": plugin}], "disabled": [{"name": "*"}]},
    }
    if preemption:
        plugins["postFilter"] = {
            "enabled": [{"name": plugin}, {"name": "DefaultPreemption"}],
            "disabled": [{"name": "*"}],
        }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"plugins": plugins, "pluginConfig": [{"name": plugin, "args": {"gangPreemption": preemption, **args}}]}
        ],
    }


def node(name: str, cpu: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str, *, labels: dict[str, str] | None = None, priority: int = 0, node_name: str | None = None,
    cpu: int = 1, arrival: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"name": name, "labels": labels or {}}
    if arrival:
        meta["annotations"] = {"kubesched.io/arrival": arrival}
    spec: dict[str, Any] = {
        "priority": priority,
        "terminationGracePeriodSeconds": 5,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": str(cpu)}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def gang_pod(name: str, group: str, count: int, priority: int = 100, arrival: str | None = None) -> dict[str, Any]:
    return pod(name, labels={GANG: group, COUNT: str(count)}, priority=priority, arrival=arrival)


def group_pod(name: str, group: str, priority: int = 100, arrival: str | None = None) -> dict[str, Any]:
    return pod(name, labels={coscheduling.POD_GROUP_LABEL: group}, priority=priority, arrival=arrival)


def pod_group(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": min_member},
    }


def full_cluster(nodes: int = 3) -> list[dict[str, Any]]:
    """``nodes`` one-CPU nodes, each full with a running low-priority pod."""
    docs = [node(f"n{i}") for i in range(nodes)]
    docs += [pod(f"low-{i}", node_name=f"n{i}") for i in range(nodes)]
    return docs


async def simulate_docs(docs: list[dict[str, Any]], cfg: dict[str, Any], until: float = 600.0) -> dict[str, Any]:
    text = "\n---\n".join(json.dumps(d) for d in docs)
    manifests = load_manifests(["gang.yaml"], texts={"gang.yaml": text})
    result = await simulate(manifests, parse_config(cfg), until=until, events="all")
    out: dict[str, Any] = result.to_json_obj()
    return out


def events(out: dict[str, Any], reason: str) -> list[tuple[float, str]]:
    return [(e["time"], e["object"].split("/", 1)[1]) for e in out["events"] if e["reason"] == reason]


def placements(out: dict[str, Any]) -> dict[str, str | None]:
    return {p["name"]: p["nodeName"] for p in out["pods"]}


# --- Gang (labels) -----------------------------------------------------------------------------


async def test_gang_of_three_preempts_three_pods_in_one_decision_and_binds_at_one_instant() -> None:
    docs = full_cluster() + [gang_pod(f"train-{i}", "train", 3) for i in range(3)]
    out = await simulate_docs(docs, config("Gang"))
    preempted = events(out, "Preempted")
    assert sorted(name for _, name in preempted) == ["low-0", "low-1", "low-2"]
    assert len({t for t, _ in preempted}) == 1  # one decision
    notes = {e["message"] for e in out["events"] if e["reason"] == "Preempted"}
    assert len(notes) == 3 and all(n.startswith("Preempted by pod ") for n in notes)
    assert len({n.split(" on node ")[0] for n in notes}) == 1  # one preemptor for the three
    scheduled = events(out, "Scheduled")
    assert sorted(name for _, name in scheduled) == ["train-0", "train-1", "train-2"]
    assert len({t for t, _ in scheduled}) == 1  # all three bind at one instant
    where = placements(out)
    assert sorted(where[f"train-{i}"] or "" for i in range(3)) == ["n0", "n1", "n2"]
    assert all(p["deleted"] for p in out["pods"] if p["name"].startswith("low-"))


async def test_gang_that_cannot_fit_even_after_evicting_everything_evicts_nothing() -> None:
    docs = full_cluster() + [gang_pod(f"train-{i}", "train", 4) for i in range(4)]
    out = await simulate_docs(docs, config("Gang"), until=120.0)
    assert events(out, "Preempted") == []
    where = placements(out)
    assert [where[f"low-{i}"] for i in range(3)] == ["n0", "n1", "n2"]
    assert all(where[f"train-{i}"] is None for i in range(4))
    failed = [e["message"] for e in out["events"] if e["reason"] == "FailedScheduling"]
    assert any("preemption: gang train: 3 of 4 members fit even after preempting every lower-priority pod" in m
               for m in failed)  # fmt: skip


async def test_without_the_argument_default_preemption_evicts_for_a_gang_that_cannot_start() -> None:
    """The behaviour the argument exists for (scheduler-plugins #431): one pod at a time, the
    gang evicts pods and still never starts."""
    docs = full_cluster() + [gang_pod(f"train-{i}", "train", 4) for i in range(4)]
    out = await simulate_docs(docs, config("Gang", preemption=False), until=120.0)
    assert events(out, "Preempted") != []
    assert all(placements(out)[f"train-{i}"] is None for i in range(4))


async def test_gang_preemption_spares_victims_it_does_not_need() -> None:
    """Two free CPUs already: the gang of three needs one victim, the least important one."""
    docs = [node("n0", 2), node("n1", 2)]
    docs += [pod("low-a", node_name="n0", priority=5), pod("low-b", node_name="n1", priority=1)]
    docs += [gang_pod(f"train-{i}", "train", 3) for i in range(3)]
    out = await simulate_docs(docs, config("Gang"))
    assert [name for _, name in events(out, "Preempted")] == ["low-b"]
    assert len({t for t, _ in events(out, "Scheduled")}) == 1
    assert placements(out)["low-a"] == "n0"


async def test_gang_preemption_leaves_higher_priority_pods_alone() -> None:
    docs = full_cluster(2) + [pod("vip", node_name="n2", priority=1000), node("n2")]
    docs += [gang_pod(f"train-{i}", "train", 3) for i in range(3)]
    out = await simulate_docs(docs, config("Gang"), until=120.0)
    assert events(out, "Preempted") == []
    assert placements(out)["vip"] == "n2"


def test_gang_preemption_argument_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError, match="must be a boolean"):
        gang.parse_args({"gangPreemption": "yes"})
    with pytest.raises(ConfigError, match="must be a boolean"):
        coscheduling.parse_args({"gangPreemption": 1})
    assert gang.parse_args({"gangPreemption": True}).gang_preemption
    assert not gang.parse_args(None).gang_preemption
    assert coscheduling.parse_args({"gangPreemption": True}).gang_preemption


def test_without_the_argument_the_plugins_have_no_gang_post_filter() -> None:
    from kubesched.testing import FakeHandle

    h = FakeHandle()
    assert type(gang.new(None, h)) is gang.Gang
    assert type(coscheduling.new({}, h)) is coscheduling.Coscheduling
    assert isinstance(gang.new({"gangPreemption": True}, h), gang.GangWithPreemption)
    assert isinstance(coscheduling.new({"gangPreemption": True}, h), coscheduling.CoschedulingWithPreemption)


# --- Coscheduling (PodGroup) ------------------------------------------------------------------


async def test_coscheduling_group_of_three_preempts_in_one_decision_and_binds_at_one_instant() -> None:
    docs: list[dict[str, Any]] = [*full_cluster(), pod_group("train", 3)]
    docs += [group_pod(f"train-{i}", "train") for i in range(3)]
    out = await simulate_docs(docs, config("Coscheduling", permitWaitingTimeSeconds=30))
    preempted = events(out, "Preempted")
    assert sorted(name for _, name in preempted) == ["low-0", "low-1", "low-2"]
    assert len({t for t, _ in preempted}) == 1
    scheduled = events(out, "Scheduled")
    assert sorted(name for _, name in scheduled) == ["train-0", "train-1", "train-2"]
    assert len({t for t, _ in scheduled}) == 1


async def test_coscheduling_group_that_cannot_fit_evicts_nothing() -> None:
    docs: list[dict[str, Any]] = [*full_cluster(), pod_group("train", 4)]
    docs += [group_pod(f"train-{i}", "train") for i in range(4)]
    out = await simulate_docs(docs, config("Coscheduling", permitWaitingTimeSeconds=30), until=120.0)
    assert events(out, "Preempted") == []
    assert [placements(out)[f"low-{i}"] for i in range(3)] == ["n0", "n1", "n2"]


# --- asyncio and trio --------------------------------------------------------------------------


def scenario(seed: int, plugin: str = "Gang") -> list[dict[str, Any]]:
    """Random gangs (label gangs, or PodGroups for Coscheduling) over full and half-full nodes,
    mixed priorities, late arrivals."""
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(r.randint(2, 4)):
        cpu = r.randint(1, 3)
        docs.append(node(f"n{i}", cpu))
        for j in range(r.randint(0, cpu)):
            docs.append(pod(f"run-{i}-{j}", node_name=f"n{i}", priority=r.choice([0, 10, 1000])))
    for g in range(r.randint(1, 3)):
        size = r.randint(1, 4)
        prio = r.choice([10, 100, 1000])
        arrival = f"{r.randint(0, 20)}s" if r.random() < 0.4 else None
        if plugin == "Gang":
            docs += [gang_pod(f"g{g}-{i}", f"g{g}", size, prio, arrival) for i in range(size)]
        else:
            docs.append(pod_group(f"g{g}", size))
            docs += [group_pod(f"g{g}-{i}", f"g{g}", prio, arrival) for i in range(size)]
    for i in range(r.randint(0, 3)):
        docs.append(pod(f"p{i}", priority=r.choice([0, 100]), arrival=f"{r.randint(0, 30)}s"))
    return docs


def _simulate_on(docs: list[dict[str, Any]], backend: str, plugin: str) -> str:
    text = "\n---\n".join(json.dumps(d) for d in docs)
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})

    async def go() -> str:
        result = await simulate(manifests, parse_config(config(plugin, permitWaitingTimeSeconds=5)), seed=3, until=120.0)
        return result.to_json()

    return run_on(go, backend=backend)


@pytest.mark.parametrize("plugin", ["Gang", "Coscheduling"])
@pytest.mark.parametrize("seed", range(10))
def test_gang_preemption_asyncio_and_trio_agree_byte_for_byte(seed: int, plugin: str) -> None:
    docs = scenario(seed, plugin)
    assert _simulate_on(docs, "asyncio", plugin) == _simulate_on(docs, "trio", plugin)


def test_the_random_scenarios_preempt_and_each_gang_binds_whole_at_one_instant() -> None:
    """The byte-for-byte scenarios are not idle (preemptions happen in them), and in each a gang
    (whose count is its size) binds all its members at one instant, or none."""
    preempting = 0
    for seed in range(10):
        docs = scenario(seed)
        out = json.loads(_simulate_on(docs, "trio", "Gang"))
        if any(e["reason"] == "Preempted" for e in out["events"]):
            preempting += 1
        sizes: dict[str, int] = {}
        for d in docs:
            g = d["metadata"].get("labels", {}).get(GANG) if d["kind"] == "Pod" else None
            if g:
                sizes[g] = sizes.get(g, 0) + 1
        for g, size in sizes.items():
            times = [e["time"] for e in out["events"]
                     if e["reason"] == "Scheduled" and e["object"].split("/", 1)[1].startswith(f"{g}-")]  # fmt: skip
            assert times == [] or (len(times) == size and len(set(times)) == 1), (seed, g, times)
    assert preempting >= 3


async def test_gang_preemption_puts_pdb_violating_victims_back_first() -> None:
    """One victim is enough; without a budget the less important pod (low-a) goes, with a budget
    protecting low-a it is put back first and low-b goes."""
    docs: list[dict[str, Any]] = [node("n0", 3)]
    low_a = pod("low-a", node_name="n0", priority=1, labels={"app": "a"})
    low_b = pod("low-b", node_name="n0", priority=2)
    gang_pods = [gang_pod(f"train-{i}", "train", 2) for i in range(2)]
    out = await simulate_docs([*docs, low_a, low_b, *gang_pods], config("Gang"))
    assert [name for _, name in events(out, "Preempted")] == ["low-a"]
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "a"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}},
    }
    out = await simulate_docs([*docs, pdb, low_a, low_b, *gang_pods], config("Gang"))
    assert [name for _, name in events(out, "Preempted")] == ["low-b"]
    assert len({t for t, _ in events(out, "Scheduled")}) == 1


async def test_gang_preemption_is_not_tried_for_a_preemptor_that_never_preempts() -> None:
    docs = full_cluster() + [gang_pod(f"train-{i}", "train", 3) for i in range(3)]
    for d in docs[-3:]:
        d["spec"]["preemptionPolicy"] = "Never"
    out = await simulate_docs(docs, config("Gang"), until=60.0)
    assert events(out, "Preempted") == []
    failed = [e["message"] for e in out["events"] if e["reason"] == "FailedScheduling"]
    assert any("preemption: not eligible due to preemptionPolicy=Never." in m for m in failed)


async def test_gang_preemption_with_anti_affinity_keeps_one_member_per_node() -> None:
    """Members that repel each other (required anti-affinity on the gang label) are placed on
    three nodes: the PreFilter state of each member learns where the others went."""
    docs = [node(f"n{i}", 2) for i in range(3)]
    docs += [pod(f"low-{i}", node_name=f"n{i}", cpu=2) for i in range(3)]
    members = [gang_pod(f"train-{i}", "train", 3) for i in range(3)]
    for m in members:
        m["spec"]["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {GANG: "train"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    out = await simulate_docs([*docs, *members], config("Gang"))
    assert sorted(name for _, name in events(out, "Preempted")) == ["low-0", "low-1", "low-2"]
    where = placements(out)
    assert sorted(where[f"train-{i}"] or "" for i in range(3)) == ["n0", "n1", "n2"]
    assert len({t for t, _ in events(out, "Scheduled")}) == 1


# --- the example ------------------------------------------------------------------------------


async def _example(config_name: str) -> dict[str, Any]:
    import yaml

    root = Path(__file__).parents[2] / "examples" / "scenarios"
    manifests = load_manifests([str(root / "gang-preemption.yaml")])
    cfg = parse_config(yaml.safe_load((root / config_name).read_text()))
    result = await simulate(manifests, cfg, until=600.0)
    out: dict[str, Any] = result.to_json_obj()
    return out


async def test_example_gang_preemption_a_gang_that_cannot_start_evicts_nothing_the_other_binds_at_40s() -> None:
    out = await _example("gang-preemption-config.yaml")
    preempted = events(out, "Preempted")
    assert len(preempted) == 6 and {t for t, _ in preempted} == {10.0}
    assert {t for t, name in events(out, "Scheduled")} == {40.0}
    assert sorted(name for _, name in events(out, "Scheduled")) == ["train-0", "train-1", "train-2"]


async def test_example_without_gang_preemption_the_gang_that_cannot_start_evicts_and_holds_the_nodes() -> None:
    out = await _example("gang-config.yaml")
    assert {t for t, _ in events(out, "Preempted")} == {5.0}
    assert {t for t, name in events(out, "Scheduled")} == {95.0}


@pytest.mark.parametrize("plugin", ["Gang", "Coscheduling"])
async def test_members_waiting_at_permit_count_toward_the_gang_and_only_the_rest_preempts(plugin: str) -> None:
    """Two members fit on free nodes and wait at Permit; the third fits nowhere: one victim is
    enough, and the three bind together."""
    docs: list[dict[str, Any]] = [node("n0"), node("n1"), node("n2"), pod("low-a", node_name="n2")]
    if plugin == "Gang":
        docs += [gang_pod(f"train-{i}", "train", 3) for i in range(3)]
    else:
        docs += [pod_group("train", 3), *(group_pod(f"train-{i}", "train") for i in range(3))]
    out = await simulate_docs(docs, config(plugin, permitWaitingTimeSeconds=60))
    assert [name for _, name in events(out, "Preempted")] == ["low-a"]
    scheduled = events(out, "Scheduled")
    assert sorted(name for _, name in scheduled) == ["train-0", "train-1", "train-2"]
    assert len({t for t, _ in scheduled}) == 1
