"""DefaultPreemption: args, PostFilter (DP/TestPostFilter), PreEnqueue (the preempting pods), events, and
end-to-end preemption through ``kubesched simulate``."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from kubesched import ConfigError, CycleState, NodeInfo, Pod, Status, hookimpl
from kubesched.config._config import SchedulerConfig
from kubesched.plugins import IN_TREE, defaultpreemption
from kubesched.runtime._events import ActionType, QueueingHint, Resource
from kubesched.runtime._status import Code
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate
from kubesched.testing import FakeHandle, framework_for, make_node, make_pdb, make_pod

pytestmark = pytest.mark.anyio

LOW, MID, HIGH, VHIGH = 0, 100, 1000, 10000
L = {"cpu": "300m", "memory": "300"}
M = {"cpu": "200m", "memory": "200"}
ONE_POD = {"pods": 1}
NODE_RES = {"cpu": "200m", "memory": "400"}
FIT = "NodeResourcesFit"


# --- args -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": -1},
            "minCandidateNodesPercentage",
            "Invalid value: -1: not in valid range [0, 100]",
            id="percentage below 0",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 900},
            "minCandidateNodesPercentage",
            "Invalid value: 900: not in valid range [0, 100]",
            id="percentage above 100",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            "minCandidateNodesAbsolute",
            "Invalid value: -1: not in valid range [0, inf)",
            id="negative absolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "minCandidateNodesPercentage",
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            id="both zero",
        ),
    ],
)
def test_args_validation(args: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        defaultpreemption.new(args, FakeHandle())
    assert exc.value.field == field and exc.value.message == message


def test_args_defaults_and_values() -> None:
    pl = defaultpreemption.new(None, FakeHandle())
    assert (pl.min_candidate_nodes_percentage, pl.min_candidate_nodes_absolute) == (10, 100)
    pl = defaultpreemption.new(
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 3}, None
    )
    assert pl.evaluator.calculate_num_candidates(50) == 3


async def test_bad_args_in_a_config_name_the_field() -> None:
    from kubesched.config._config import parse_config

    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "pluginConfig": [
                    {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": -2}}
                ]
            }
        ],
    }
    from kubesched.scheduler._scheduler import Scheduler
    from kubesched.transports.fake import FakeCluster

    with pytest.raises(ConfigError) as exc:
        Scheduler(FakeCluster(), parse_config(cfg))
    assert "minCandidateNodesAbsolute" in exc.value.field
    assert exc.value.message == "Invalid value: -2: not in valid range [0, inf)"


def test_registered_in_tree_and_in_the_default_profile() -> None:
    from kubesched.config._config import default_profile

    assert IN_TREE["DefaultPreemption"] is defaultpreemption.new
    assert ("DefaultPreemption", 0) in default_profile().multi_point


# --- PostFilter (DP/TestPostFilter) -----------------------------------------------------------------


class ErrPlugin:
    """Upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def kubesched_pre_filter(self, state: CycleState, pod: Pod, nodes: Any) -> None:
        return None

    @hookimpl
    def kubesched_pre_filter_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Any, node_info: NodeInfo
    ) -> Status | None:
        if node_info.labels.get("error") == "true":
            return Status.as_error(f"failed to add pod: {pod.metadata.name}")
        return None

    @hookimpl
    def kubesched_pre_filter_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Any, node_info: NodeInfo
    ) -> Status | None:
        if node_info.labels.get("error") == "true":
            return Status.as_error(f"failed to remove pod: {pod.metadata.name}")
        return None


def p(
    name: str,
    prio: int | None = None,
    node: str = "",
    req: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> Pod:
    b = make_pod(name).uid(name)
    if prio is not None:
        b.priority(prio)
    if node:
        b.node(node)
    if req:
        b.req(**req)
    if labels:
        b.labels(labels)
    return b.obj()


def n(name: str, capacity: dict[str, Any], **labels: str) -> Any:
    b = make_node(name).capacity_list(dict(capacity))
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


U = Status(Code.UNSCHEDULABLE)
UU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
VIOL = "test.kubernetes.io/is-violating-pdb"

POST_FILTER_CASES = [
    pytest.param(
        p("p", HIGH),
        [p("p1", None, "node1")],
        [n("node1", ONE_POD)],
        {"node1": U},
        [],
        "node1",
        Code.SUCCESS,
        "",
        id="DP/TestPostFilter/pod with higher priority can be made schedulable",
    ),
    pytest.param(
        p("p"),
        [p("p1", None, "node1")],
        [n("node1", ONE_POD)],
        {"node1": U},
        [],
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        id="DP/TestPostFilter/pod with tied priority is still unschedulable",
    ),
    pytest.param(
        p("p", HIGH),
        [p("p1", None, "node1")],
        [n("node1", ONE_POD)],
        {"node1": UU},
        [],
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="DP/TestPostFilter/preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        p("p", HIGH),
        [p("p1", None, "node1")],
        [n("node1", ONE_POD)],
        {},
        [],
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        id="DP/TestPostFilter/preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
    ),
    pytest.param(
        p("p", MID),
        [p("p1", HIGH, "node1"), p("p2", LOW, "node2")],
        [n("node1", ONE_POD), n("node2", ONE_POD)],
        {"node1": U, "node2": U},
        [],
        "node2",
        Code.SUCCESS,
        "",
        id="DP/TestPostFilter/pod can be made schedulable on one node",
    ),
    pytest.param(
        p("p", VHIGH),
        [
            p("p1", HIGH, "node1", labels={VIOL: "non-violating"}),
            p("p2", LOW, "node1", labels={VIOL: "violating"}),
            p("p3", MID, "node2", labels={VIOL: "violating"}),
        ],
        [n("node1", ONE_POD), n("node2", ONE_POD)],
        {"node1": U, "node2": U},
        [
            make_pdb("violating-pdb", match_labels={VIOL: "violating"}, min_available="100%"),
            make_pdb(
                "non-violating-pdb",
                match_labels={VIOL: "non-violating"},
                min_available="0",
                disruptions_allowed=2**31 - 1,
            ),
        ],
        "node2",
        Code.SUCCESS,
        "",
        id="DP/TestPostFilter/pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        p("p", HIGH, req=L),
        [p("p1", None, "node1"), p("p2", None, "node2")],
        [n("node1", NODE_RES), n("node2", NODE_RES)],
        {"node1": U, "node2": U},
        [],
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
        id="DP/TestPostFilter/no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        p("p", HIGH, req=L),
        [p("p1", HIGH, "node1"), p("p2", None, "node2"), p("p3", HIGH, "node3")],
        [n("node1", ONE_POD), n("node2", NODE_RES), n("node3", ONE_POD)],
        {"node1": U, "node2": U, "node3": U},
        [],
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
        id="DP/TestPostFilter/no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    pytest.param(
        p("p", HIGH, req=L),
        [p("p1", None, "node1"), p("p2", None, "node2")],
        [n(f"node{i}", NODE_RES) for i in range(1, 5)],
        {"node1": U, "node2": U, "node4": UU},
        [],
        "",
        Code.UNSCHEDULABLE,
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
        id="DP/TestPostFilter/no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
    ),
    pytest.param(
        p("p", HIGH, req=L),
        [p("p1", None, "node1")],
        [n("node1", L, error="true")],
        {"node1": U},
        [],
        None,
        Code.ERROR,
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
        id="DP/TestPostFilter/only one node but failed with TestPlugin",
    ),
    pytest.param(
        p("p", HIGH, req=L),
        [p("p1", None, "node1"), p("p2", None, "node2", req=M)],
        [n("node1", L, error="true"), n("node2", L)],
        {"node1": U, "node2": U},
        [],
        "node2",
        Code.SUCCESS,
        "",
        id="DP/TestPostFilter/one failed with TestPlugin and the other pass",
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "statuses", "pdbs", "want_node", "want_code", "want_msg"),
    POST_FILTER_CASES,
)
async def test_post_filter(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Any],
    statuses: dict[str, Status],
    pdbs: list[Any],
    want_node: str | None,
    want_code: Code,
    want_msg: str,
) -> None:
    fw = framework_for(
        {"preFilter": [FIT, "test-plugin"], "filter": [FIT], "postFilter": ["DefaultPreemption"]},
        nodes,
        [pod, *pods],
        registry={**IN_TREE, "test-plugin": ErrPlugin},
        pdbs=pdbs,
    )
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, fw.snapshot.node_infos)
    result, status = await fw.run_post_filter_plugins(state, pod, statuses)
    assert status.code == want_code
    assert status.message == want_msg
    assert (result.nominated_node_name if result is not None else None) == want_node
    assert fw.handle.metrics.preemption_attempts == 1


async def test_post_filter_keeps_nomination_when_not_eligible() -> None:
    pod = make_pod("p").priority(HIGH).preemption_policy("Never").obj()
    fw = framework_for(
        {"filter": [FIT], "postFilter": ["DefaultPreemption"]},
        [n("node1", ONE_POD)],
        [pod, p("p1", None, "node1")],
    )
    result, status = await fw.plugin("DefaultPreemption").kubesched_post_filter(
        CycleState(), pod, {"node1": U}
    )
    assert result is None
    assert (status.code, status.message) == (
        Code.UNSCHEDULABLE,
        "preemption: not eligible due to preemptionPolicy=Never.",
    )


def _state(fw: Any, pod: Pod) -> CycleState:
    state = CycleState()
    fw.run_pre_filter_plugins(state, pod, fw.snapshot.node_infos)
    return state


# --- PreEnqueue and events ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gate", "check", "want"),
    [
        pytest.param(
            False, "p", None, id="J6 DP/TestPreEnqueue/AsyncPreemption disabled, returns nil"
        ),
        pytest.param(
            True,
            "p",
            "waiting for the preemption for this pod to be finished",
            id="J7 DP/TestPreEnqueue/AsyncPreemption enabled, same pod, returns UnschedulableAndUnresolvable",
        ),
        pytest.param(
            True,
            "p_other",
            None,
            id="J8 DP/TestPreEnqueue/AsyncPreemption enabled, different pod, returns nil",
        ),
    ],
)
async def test_pre_enqueue(gate: bool, check: str, want: str | None) -> None:
    trigger = p("p", HIGH)
    victim = p("p1", None, "node1")
    async with anyio.create_task_group() as tg:
        fw = framework_for(
            {"preFilter": [FIT], "filter": [FIT], "postFilter": ["DefaultPreemption"]},
            [n("node1", ONE_POD)],
            [trigger, victim],
            feature_gates={"SchedulerAsyncPreemption": gate},
            task_group=tg,
        )
        fw.handle.client.block = anyio.Event()  # hold the preemption's deletions open
        pl = fw.plugin("DefaultPreemption")
        result, status = (
            (await pl.kubesched_post_filter(_state(fw, trigger), trigger, {"node1": U}))
            if gate
            else (None, None)
        )
        if gate:
            assert status is not None and status.is_success() and result is not None
        st = pl.kubesched_pre_enqueue(p(check, HIGH))
        if want is None:
            assert st is None
        else:
            assert st is not None and (st.code, st.message) == (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                want,
            )
        fw.handle.client.block.set()
    assert pl.kubesched_pre_enqueue(p(check, HIGH)) is None  # the preemption is over


async def test_pre_enqueue_open_once_last_victim_is_terminating() -> None:
    """IsPodRunningPreemption: the gate opens when the lister shows the last victim going."""
    trigger = p("p", HIGH)
    victim = p("p1", None, "node1")
    async with anyio.create_task_group() as tg:
        fw = framework_for(
            {"preFilter": [FIT], "filter": [FIT], "postFilter": ["DefaultPreemption"]},
            [n("node1", ONE_POD)],
            [trigger, victim],
            feature_gates={"SchedulerAsyncPreemption": True},
            task_group=tg,
        )
        fw.handle.client.block = anyio.Event()
        pl = fw.plugin("DefaultPreemption")
        await pl.kubesched_post_filter(_state(fw, trigger), trigger, {"node1": U})
        await anyio.wait_all_tasks_blocked()
        assert pl.kubesched_pre_enqueue(trigger) is not None
        victim.metadata.deletion_timestamp = "1970-01-01T00:00:30Z"
        assert pl.kubesched_pre_enqueue(trigger) is None
        fw.handle.client.block.set()


def test_events_to_register() -> None:
    fw = framework_for(
        {"postFilter": ["DefaultPreemption"]}, feature_gates={"SchedulerAsyncPreemption": True}
    )
    pl = fw.plugin("DefaultPreemption")
    evs = pl.kubesched_events_to_register()
    assert len(evs) == 1
    assert (
        evs[0].event.resource == Resource.ASSIGNED_POD and evs[0].event.action == ActionType.DELETE
    )
    assert evs[0].hint(p("x"), p("y", None, "n"), None) == QueueingHint.QUEUE_SKIP
    fw.handle.feature_gates["SchedulerAsyncPreemption"] = False  # read when asked
    assert pl.kubesched_events_to_register() == []


async def test_scheduler_registers_async_events_from_its_gates() -> None:
    from kubesched.scheduler._scheduler import Scheduler
    from kubesched.transports.fake import FakeCluster

    for gate in (True, False):
        cfg = SchedulerConfig()
        cfg.feature_gates["SchedulerAsyncPreemption"] = gate
        sched = Scheduler(FakeCluster(), cfg)
        regs = [plugin for plugin, _, _ in sched.queue._registered["default-scheduler"]]
        assert ("DefaultPreemption" in regs) is gate


# --- end to end -----------------------------------------------------------------------------------

BASIC = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec: {priority: 0, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: high, annotations: {kubesched.io/arrival: 10s}}
spec: {priority: 100, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
"""


async def _simulate(text: str, gates: dict[str, bool] | None = None) -> dict[str, Any]:
    cfg = SchedulerConfig()
    cfg.feature_gates.update(gates or {})
    result = await simulate(load_manifests(["m.yaml"], {"m.yaml": text}), cfg)
    return json.loads(result.to_json())


def _pod(out: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in out["pods"] if x["name"] == name)


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
async def test_e2e_high_priority_pod_preempts_a_lower_one(async_preemption: bool) -> None:
    out = await _simulate(BASIC, {"SchedulerAsyncPreemption": async_preemption})
    low, high = _pod(out, "low"), _pod(out, "high")
    assert low["deleted"] is True and low["nodeName"] == "n1"
    assert {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
    } in low["conditions"]
    assert high["nodeName"] == "n1" and high["deleted"] is False
    events = [(e["time"], e["reason"], e["object"], e["message"]) for e in out["events"]]
    assert events == [
        (0.0, "Scheduled", "default/low", "Successfully assigned default/low to n1"),
        (10.0, "Preempted", "default/low", f"Preempted by pod {high['uid']} on node n1"),
        (10.0, "FailedScheduling", "default/high", "0/1 nodes are available: 1 Insufficient cpu."),
        (40.0, "Scheduled", "default/high", "Successfully assigned default/high to n1"),
    ]
    assert out["summary"]["preemptions"] == 1


async def test_e2e_sync_and_async_reach_the_same_end_state() -> None:
    a = await _simulate(BASIC, {"SchedulerAsyncPreemption": True})
    b = await _simulate(BASIC, {"SchedulerAsyncPreemption": False})
    assert a["pods"] == b["pods"] and a["events"] == b["events"]


async def test_e2e_preemptor_is_nominated_before_it_is_bound() -> None:
    """The preemptor's nominatedNodeName is written (status patch) before the victim is gone."""
    from kubesched.transports.fake import FakeCluster

    seen: list[tuple[str, str]] = []
    async with FakeCluster() as cluster:
        for m in load_manifests(
            ["m.yaml"],
            {"m.yaml": BASIC.replace("spec: {priority: 0,", "spec: {nodeName: n1, priority: 0,")},
        ):
            cluster.create(m.obj)
        from kubesched.scheduler._scheduler import Scheduler

        sched = Scheduler(cluster, SchedulerConfig())
        watch = cluster.watch()
        async with anyio.create_task_group() as tg:

            async def track() -> None:
                async for ev in watch:
                    obj = ev.obj
                    if isinstance(obj, Pod) and obj.metadata.name == "high":
                        seen.append((obj.status.nominated_node_name, obj.spec.node_name))

            tg.start_soon(track)
            await tg.start(sched.run)
            await anyio.sleep(60)
            tg.cancel_scope.cancel()
    assert ("n1", "") in seen  # nominated while pending
    assert seen[-1][1] == "n1"  # then bound


PDB = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: protected, labels: {app: db}}
spec: {nodeName: n1, priority: 0, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other}
spec: {nodeName: n2, priority: 10, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}
---
apiVersion: v1
kind: Pod
metadata: {name: high, annotations: {kubesched.io/arrival: 5s}}
spec: {priority: 100, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
"""


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
async def test_e2e_pdb_protected_victim_is_avoided(async_preemption: bool) -> None:
    out = await _simulate(PDB, {"SchedulerAsyncPreemption": async_preemption})
    assert _pod(out, "protected")["deleted"] is False
    assert _pod(out, "other")["deleted"] is True
    assert _pod(out, "high")["nodeName"] == "n2"
    # without the PDB the lower-priority victim on n1 would have been chosen
    out2 = await _simulate(
        PDB.split("---\napiVersion: policy/v1")[0] + "---" + PDB.split("---")[-1],
        {"SchedulerAsyncPreemption": async_preemption},
    )
    assert _pod(out2, "protected")["deleted"] is True and _pod(out2, "high")["nodeName"] == "n1"


NOT_HELPFUL = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: first}
spec: {priority: 100, containers: [{name: c, resources: {requests: {cpu: 800m}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: second, annotations: {kubesched.io/arrival: 10s}}
spec: {priority: 100, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
"""


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
async def test_e2e_failed_scheduling_carries_the_preemption_message(async_preemption: bool) -> None:
    out = await _simulate(NOT_HELPFUL, {"SchedulerAsyncPreemption": async_preemption})
    failed = [e["message"] for e in out["events"] if e["reason"] == "FailedScheduling"]
    assert failed and failed[0] == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    second = _pod(out, "second")
    assert (
        second["nodeName"] is None and not second["deleted"] and second["nominatedNodeName"] is None
    )
    assert out["summary"]["preemptions"] == 0


def test_cli_feature_gate_flag(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from kubesched import cli

    f = tmp_path / "m.yaml"
    f.write_text(BASIC)
    outs = []
    for gate in ("true", "false"):
        argv = ["simulate", str(f), "--output", "json", "--feature-gates", f"SchedulerAsyncPreemption={gate}"]
        code = cli.main(argv)
        out, err = capsys.readouterr()
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["pods"] == outs[1]["pods"]
    assert _pod(outs[0], "low")["deleted"] is True and _pod(outs[0], "high")["nodeName"] == "n1"
