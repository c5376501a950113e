"""Same input, same seed: the same bytes on asyncio and trio for random Workload API gang scenarios
(issue 36): PodGroups of 1.36 through the PodGroup cycle, Workloads of 1.35 through Permit, with
priorities (preemption, groups that wait on it), late arrivals and tight capacity."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.scenario import load_manifests, simulation_config
from kubesched.simulation import simulate
from kubesched.transports.fake.virtual_time import run

GATES = "GenericWorkload=true,GangScheduling=true"


def scenario(seed: int, version: str) -> str:
    r = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(r.randint(1, 4)):
        docs.append({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": str(r.randint(1, 4)), "memory": "8Gi", "pods": "110"}},
        })  # fmt: skip
    for g in range(r.randint(0, 3)):
        size = r.randint(1, 4)
        min_count = r.randint(1, size)
        arrival = f"{r.randint(1, 20)}s" if r.random() < 0.3 else None
        if version == "1.36":
            docs.append({
                "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": f"g{g}"},
                "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
            })  # fmt: skip
            ref: dict[str, Any] = {"schedulingGroup": {"podGroupName": f"g{g}"}}
        else:
            docs.append({
                "apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": f"g{g}"},
                "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": min_count}}}]},
            })  # fmt: skip
            ref = {"workloadRef": {"name": f"g{g}", "podGroup": "workers"}}
        for i in range(size):
            meta: dict[str, Any] = {"name": f"g{g}-{i}"}
            if arrival is not None or r.random() < 0.2:
                meta["annotations"] = {"kubesched.io/arrival": arrival or f"{r.randint(1, 20)}s"}
            docs.append(_pod(meta, r, ref))
    for i in range(r.randint(0, 5)):
        meta = {"name": f"p{i}"}
        if r.random() < 0.5:
            meta["annotations"] = {"kubesched.io/arrival": f"{r.randint(0, 40)}s"}
        docs.append(_pod(meta, r, {}))
    return "\n---\n".join(json.dumps(d) for d in docs)


def _pod(meta: dict[str, Any], r: random.Random, ref: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {
            **ref, "priority": r.choice([0, 10, 100, 1000]),
            "containers": [{"name": "c", "resources": {"requests": {"cpu": str(r.randint(1, 2))}}}],
        },
    }  # fmt: skip


def simulate_text(text: str, backend: str, version: str, async_preemption: bool = True) -> str:
    manifests = load_manifests(["s.yaml"], texts={"s.yaml": text})
    cfg = simulation_config("", f"{GATES},SchedulerAsyncPreemption={str(async_preemption).lower()}", None,
                            emulated_version=version)  # fmt: skip

    async def go() -> str:
        result = await simulate(manifests, cfg, seed=3, until=120.0)
        return result.to_json()

    return run(go, backend=backend)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), v136=st.booleans(), async_preemption=st.booleans())
def test_asyncio_and_trio_agree_on_workload_api_gangs(seed: int, v136: bool, async_preemption: bool) -> None:
    version = "1.36" if v136 else "1.35"
    text = scenario(seed, version)
    out = simulate_text(text, "trio", version, async_preemption)
    assert simulate_text(text, "asyncio", version, async_preemption) == out
    assert_all_or_nothing(text, json.loads(out))


def assert_all_or_nothing(text: str, doc: dict[str, Any]) -> None:
    """A gang is all-or-nothing: of a gang of minCount m, either no member ever bound or at least m."""
    for d in text.split("\n---\n"):
        obj = json.loads(d)
        if obj["kind"] not in ("PodGroup", "Workload"):
            continue
        spec = obj["spec"]
        policy = spec["schedulingPolicy"] if "schedulingPolicy" in spec else spec["podGroups"][0]["policy"]
        name, m = obj["metadata"]["name"], policy["gang"]["minCount"]
        bound = sum(1 for p in doc["pods"] if p["name"].startswith(f"{name}-") and p["scheduledAt"] is not None)
        assert bound == 0 or bound >= m, (name, bound, m)
