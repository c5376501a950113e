"""Quiet stretches skipped in virtual time (kubesched.scheduler._quiet, issue 38 item 1): a pod
retried every 330 s until its victim's 3e11 s grace period ends is accounted for, not run; and
the skip changes no byte of the output (random scenarios run both ways)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kubesched.scenario._config import simulation_config
from kubesched.simulation import Simulation
from kubesched.simulation._simulation import load_manifests

GRACE = """\
apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim}
spec:
  priority: 0
  terminationGracePeriodSeconds: 300000000000
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: preemptor, annotations: {kubesched.io/arrival: 10s}}
spec:
  priority: 1000
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""


def _sim(text: str, *, skip: bool = True, gates: str = "", version: str = "1.36", **options: Any) -> Simulation:
    manifests = load_manifests(["in.yaml"], {"in.yaml": text})
    sim = Simulation(manifests, simulation_config("", gates, emulated_version=version), **options)
    sim.skip_quiet = skip
    return sim


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_victims_3e11_s_grace_period_ends_without_running_its_retries(backend: str) -> None:
    """The preemptor, nominated to n0, is retried by every 5-minute flush (each 330 s: the 30 s
    tick after 300 s; v1.35.0 pkg/scheduler/backend/queue/scheduling_queue.go,
    flushUnschedulablePodsLeftover with podMaxInUnschedulablePodsDuration) until the victim is
    gone at 3e11 + 10 s: 909,090,909 retries that fail the same way ("not eligible due to a
    terminating pod on the nominated node", default_preemption.go PodEligibleToPreemptOthers),
    accounted for (attempts, one FailedScheduling series as client-go's tools/events keeps it)
    while fewer than 100 cycles run."""
    sim = _sim(GRACE)
    result = sim.run_in_virtual_time(backend)
    out = json.loads(result.to_json())
    pods = {p["name"]: p for p in out["pods"]}
    assert pods["preemptor"]["nodeName"] == "n0"
    assert pods["victim"]["deleted"]
    retries = 909_090_909  # at 330, 660, ..., 299,999,999,970
    assert out["summary"]["attempts"] == 1 + 1 + retries + 1  # victim, preemptor at 10 s, retries, bind
    assert pods["preemptor"]["attempts"] == 1 + retries + 1
    assert out["summary"]["virtualSeconds"] == 300_000_000_010.0
    series = [e for e in out["events"] if e["reason"] == "FailedScheduling"]
    assert [e.get("series") for e in series] == [None, {"count": retries, "lastObservedTime": 299_999_999_970.0}]
    assert "terminating pod on the nominated node" in series[1]["message"]
    assert out["events"][-1]["reason"] == "Scheduled" and out["events"][-1]["time"] == 300_000_000_010.0
    executed = out["summary"]["attempts"] - sim.skipped_attempts
    assert executed < 100, executed


def test_the_skip_stops_before_until() -> None:
    """With --until the skipped periods end before it: the same cut-short output either way."""
    text = GRACE.replace("300000000000", "100000")
    outs = [_sim(text, skip=skip, until=50_000.0).run_in_virtual_time("trio").to_json() for skip in (True, False)]
    assert outs[0] == outs[1]
    assert json.loads(outs[0])["summary"]["cutShort"]["reason"] == "until"


# --- the differential: random scenarios run with and without skipping ------------------------------


def _node(name: str, cpu: int, arrival: int = 0) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"kubernetes.io/hostname": name}}
    if arrival:
        meta["annotations"] = {"kubesched.io/arrival": f"{arrival}s"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "110"}}}  # fmt: skip


def _pod(name: str, r: random.Random, *, prio: int, cpu: str, arrival: int = 0, grace: int | None = None) -> dict[str, Any]:
    annotations: dict[str, str] = {}
    if arrival:
        annotations["kubesched.io/arrival"] = f"{arrival}s"
    if r.random() < 0.15:
        annotations["kubesched.io/duration"] = f"{r.choice([2000, 7000])}s"
    if r.random() < 0.1:
        annotations["kubesched.io/deletion"] = f"{arrival + r.randint(100, 9000)}s"
    spec: dict[str, Any] = {"priority": prio, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if r.random() < 0.15:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "s"}},
        }]  # fmt: skip
    meta: dict[str, Any] = {"name": name, "labels": {"app": "s"} if r.random() < 0.3 else {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def quiet_scenario(seed: int) -> tuple[str, dict[str, Any]]:
    """Low-priority pods with long grace periods fill 1-3 nodes; high-priority pods arrive and
    preempt them, then wait (nominated) for the victims to go; pods too big for any node wait
    for a node that may arrive late; completions, deletions and ``until`` end quiet stretches
    at other instants; the queue's gates, the seed, --explain and --metrics vary."""
    r = random.Random(seed)
    docs = [_node(f"n{i}", r.randint(2, 4)) for i in range(r.randint(1, 3))]
    if r.random() < 0.4:
        docs.append(_node("late", 8, arrival=r.choice([1500, 4000, 9000])))
    graces = [0, 5, 1800, 4000, 9001]
    for i in range(r.randint(2, 8)):
        docs.append(_pod(f"low{i}", r, prio=r.choice([0, 1, 5]), cpu=f"{r.choice([500, 1000, 1500])}m",
                         grace=r.choice(graces)))  # fmt: skip
    for i in range(r.randint(1, 4)):
        docs.append(_pod(f"high{i}", r, prio=r.choice([100, 1000]), cpu=str(r.randint(1, 3)),
                         arrival=r.randint(1, 700), grace=r.choice([None, 30])))  # fmt: skip
    if r.random() < 0.3:
        docs.append(_pod("huge", r, prio=r.choice([0, 2000]), cpu="6", arrival=r.randint(0, 50)))
    version, gates = r.choice([("1.36", ""), ("1.32", "SchedulerQueueingHints=false"), ("1.30", ""),
                               ("1.36", "SchedulerPopFromBackoffQ=true"), ("1.33", "SchedulerAsyncPreemption=true")])
    options: dict[str, Any] = {"seed": r.randint(0, 3), "gates": gates, "version": version,
                               "events": r.choice(["series", "series", "all"])}  # fmt: skip
    if r.random() < 0.2:
        options["explain"] = True
    if r.random() < 0.25:
        options["metrics"] = True
    if r.random() < 0.25:
        options["until"] = float(r.choice([3000, 5000.5, 8000]))
    return "\n---\n".join(json.dumps(d) for d in docs), options


def test_skipping_changes_no_byte_of_the_output() -> None:
    """60 random scenarios, each run with the skip and without (every retry run), alternating
    backends: the JSON outputs (and the metrics' exposition) are identical byte for byte, and
    most scenarios skipped."""
    skipped = 0
    for seed in range(60):
        text, options = quiet_scenario(seed)
        backend = ("asyncio", "trio")[seed % 2]
        with_skip = _sim(text, **options)
        fast = with_skip.run_in_virtual_time(backend)
        slow = _sim(text, skip=False, **options).run_in_virtual_time(backend)
        assert fast.to_json() == slow.to_json(), f"seed {seed}: {options}\n{text}"
        assert fast.metrics == slow.metrics, f"seed {seed}: {options}\n{text}"
        skipped += with_skip.skipped_attempts > 0
    assert skipped >= 20, skipped


# --- the skipped periods' events, folded as if recorded one by one ---------------------------------


def _ev(t: float, name: str, message: str = "0/1 nodes are available: 1 Insufficient cpu.", *, core: bool = False) -> Any:
    from kubesched.api._objects import ObjectReference
    from kubesched.transports.fake import EventRecord

    ref = ObjectReference(api_version="v1", kind="Pod", namespace="default", name=name, uid=f"u-{name}")
    source = "replicaset-controller" if core else "default-scheduler"
    return EventRecord(t, "Warning", "FailedScheduling", f"default/{name}", message, regarding=ref, source=source,
                       core=core)  # fmt: skip


@pytest.mark.parametrize("period", [330.0, 359.0, 360.0, 660.0, 10.0])
@pytest.mark.parametrize("count", [1, 2, 7])
def test_a_repeat_folds_as_its_occurrences_recorded_one_by_one(period: float, count: int) -> None:
    """fold_events and occurrences of records plus a Repeat equal those of the records with the
    repeat's occurrences written out: series that go on (closer than finishSeries' window) or
    break (a period of 360 s or more), core/v1 events counted without a window, two messages."""
    from kubesched.scheduler._quiet import Repeat
    from kubesched.simulation._events import fold_events, occurrences

    before = [_ev(0.0, "a"), _ev(5.0, "b", core=True), _ev(30.0, "a", "other")]
    block = (_ev(30.0 + period / 2, "a"), _ev(30.0 + period / 2, "b", core=True), _ev(30.0 + period, "a"))
    after_time = 30.0 + period
    rep = Repeat(block, period, count, after_time)
    expanded = [
        _ev(e.time + j * period, e.regarding.name, e.message, core=e.core) for j in range(1, count + 1) for e in block
    ]
    end = after_time + count * period
    later = [_ev(end + 1.0, "a"), _ev(end + 400.0, "b", core=True), _ev(end + 2000.0, "a")]
    records = [*before, *block, *later]
    assert fold_events(records, [rep]) == fold_events([*before, *block, *expanded, *later])
    assert occurrences(records, [rep]) == occurrences([*before, *block, *expanded, *later])


def test_explain_keeps_the_history_the_retries_would_leave() -> None:
    """--explain over the 3e11 s wait: the preemptor's result history is full (the newest
    attempts that fit in 256 KiB), as after running every retry, and the run stays quick."""
    sim = _sim(GRACE, explain=True)
    out = json.loads(sim.run_in_virtual_time("trio").to_json())
    pods = {p["name"]: p for p in out["pods"]}
    history = json.loads(pods["preemptor"]["annotations"]["kube-scheduler-simulator.sigs.k8s.io/result-history"])
    assert 100 < len(history) < 1000
    assert history[-1]["kube-scheduler-simulator.sigs.k8s.io/selected-node"] == "n0"
    assert out["summary"]["attempts"] - sim.skipped_attempts < 100


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_count_the_skipped_attempts_and_their_sampled_plugin_timings(seed: int) -> None:
    """--metrics over a 1e5 s wait: the exposition (attempts, extension points, incoming pods,
    and the plugin timings of the attempts the recorder's rng samples, one in ten) is that of
    running every retry, though most retries were skipped."""
    text = GRACE.replace("300000000000", "100000")
    fast = _sim(text, metrics=True, seed=seed)
    out = fast.run_in_virtual_time("asyncio")
    slow = _sim(text, metrics=True, seed=seed, skip=False).run_in_virtual_time("asyncio")
    assert fast.skipped_attempts > 200
    assert out.metrics is not None and out.metrics == slow.metrics
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 304.0' in out.metrics


def test_events_all_refuses_to_list_a_billion_retries() -> None:
    """--events all over the 3e11 s wait would be 909 million entries: one line naming --events
    series instead (exit 2 in the CLI), after a run that took well under a second."""
    from kubesched._errors import ConfigError

    with pytest.raises(ConfigError, match=r"--events all: one entry per occurrence would be 909,090,90\d entries"):
        _sim(GRACE, events="all").run_in_virtual_time("trio")


def test_the_draws_of_skipped_retries_are_replayed() -> None:
    """A pod that fits n0 only if both its pods went is retried every 330 s, and each retry's
    preemption dry run draws its candidate offset from the seeded rng (and finds no victims: the
    other pod has a higher priority); after the quiet stretch, three equal nodes arrive and the
    ties between them are broken by that rng: the placements are those of running every retry."""

    def pod(name: str, cpu: str, prio: int = 0, arrival: int = 0) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name}
        if arrival:
            meta["annotations"] = {"kubesched.io/arrival": f"{arrival}s"}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": {"priority": prio, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}  # fmt: skip

    docs = [_node("n0", 2), pod("low", "1"), pod("high", "1", 200), pod("big", "2", 100, 5)]
    docs += [_node(f"m{i}", 4, arrival=50_000) for i in range(3)]
    docs += [pod(f"p{i}", "100m", arrival=50_001 + i) for i in range(8)]
    text = "\n---\n".join(json.dumps(d) for d in docs)
    for seed in range(4):
        fast = _sim(text, seed=seed)
        out = fast.run_in_virtual_time("trio").to_json()
        assert fast.skipped_attempts > 100
        assert out == _sim(text, skip=False, seed=seed).run_in_virtual_time("trio").to_json()


LIST_SPREADING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - {name: PodTopologySpread, args: {defaultingType: List}}
"""


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_the_batch_counters_of_the_skipped_attempts(version: str) -> None:
    """--metrics with OpportunisticBatching and a profile that signs pods (no system-default
    spreading): ``scheduler_batch_attempts_total`` / ``scheduler_batch_cache_flushed_total``
    count the skipped retries as if they had run."""
    text = GRACE.replace("300000000000", "100000")
    manifests = load_manifests(["in.yaml"], {"in.yaml": text})
    runs = []
    for skip in (True, False):
        cfg = simulation_config("c.yaml", "", LIST_SPREADING, emulated_version=version)
        sim = Simulation(manifests, cfg, metrics=True, seed=1)
        sim.skip_quiet = skip
        runs.append((sim, sim.run_in_virtual_time("trio")))
    (fast, fast_out), (_, slow_out) = runs
    assert fast.skipped_attempts > 200
    assert fast_out.metrics is not None and fast_out.metrics == slow_out.metrics
    assert 'scheduler_batch_attempts_total{profile="default-scheduler",result="no_hint"}' in fast_out.metrics
