"""PreBind per version: PreBindPreFlight's Skip (v1.34, with NominatedNodeNameForExpectation)
and the parallel PreBind of 1.36 (kubernetes#135393, ``RunPreBindPlugins`` /
``getPreBindPluginGroups``; VolumeBinding and DynamicResources allow it).

A pod with a WaitForFirstConsumer claim (provisioned 3 s after the scheduler picks the node) and
a ResourceClaim whose device has binding conditions nobody sets: before 1.36 DynamicResources'
PreBind starts once VolumeBinding's has ended (its claim is written, and its wait starts, at
3 s); from 1.36 both start at once (at 0 s), and the first to fail ends the binding cycle with
its status, the other cancelled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from kubesched.cli import main
from kubesched.runtime._binding_runners import (
    MSG_OTHER_PRE_BIND_FAILED,
    BindingRunners,
    pre_bind_groups,
    run_concurrently,
)
from kubesched.runtime._cyclestate import (
    PRE_BIND_PRE_FLIGHT_KEY,
    CycleState,
    PreBindPreFlightResult,
)
from kubesched.runtime._status import Code, Status
from kubesched.scheduler._expectation import run_pre_bind_pre_flights
from kubesched.scheduler._results import AttemptRecord

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: wffc, annotations: {kubesched.io/provisioning-delay: "3"}}
provisioner: disk.csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], storageClassName: wffc, resources: {requests: {storage: 1Gi}}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, bindingConditions: [Attached], bindingFailureConditions: [Failed]}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
"""

VERSIONS = {
    # binding conditions are alpha in 1.35, on by default in 1.36
    "1.35": ("--emulated-version", "1.35", "--feature-gates", "DRADeviceBindingConditions=true"),
    "1.36": ("--emulated-version", "1.36"),
}


def _config(tmp_path: Path, plugin: str, args: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"profiles:\n- pluginConfig:\n  - name: {plugin}\n    args: {args}\n"
    )
    return str(path)


def _events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, *flags: str, until: str = "3.5"
) -> list[tuple[float, str, str]]:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), *VERSIONS[version], "--until", until, *flags]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return [(e["time"], e["reason"], e["message"]) for e in out["events"] if e["object"] == "default/train"]


PENDING = "BindingConditionsPending", "waiting for binding conditions for device on node n1"


@pytest.mark.parametrize(("version", "start"), [("1.35", 3.0), ("1.36", 0.0)])
def test_dynamic_resources_prebind_starts_after_volume_binding_before_1_36(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, start: float
) -> None:
    assert _events(tmp_path, capsys, version) == [(start, *PENDING)]


VB_FAILED = 'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
DRA_FAILED = 'running PreBind plugin "DynamicResources": device binding timeout'


@pytest.mark.parametrize(
    ("version", "want"),
    [
        # VolumeBinding fails first: before 1.36 DynamicResources' PreBind never ran
        ("1.35", [(1.0, "FailedScheduling", VB_FAILED)]),
        # from 1.36 it ran from the start, and its wait was cancelled by VolumeBinding's failure
        ("1.36", [(0.0, *PENDING), (1.0, "FailedScheduling", VB_FAILED)]),
    ],
)
def test_the_first_prebind_to_fail_ends_the_cycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, want: list[tuple[float, str, str]]
) -> None:
    config = _config(tmp_path, "VolumeBinding", "{bindTimeoutSeconds: 1}")
    assert _events(tmp_path, capsys, version, "--config", config, until="2.5") == want


@pytest.mark.parametrize(
    ("version", "want"),
    [
        # in turn: VolumeBinding's PreBind succeeds at 3 s, DynamicResources' times out 2 s later
        ("1.35", [(3.0, *PENDING)]),
        # at once: DynamicResources times out first and its status wins; VolumeBinding's
        # wait for the provisioned volume is cancelled
        ("1.36", [(0.0, *PENDING), (2.0, "FailedScheduling", DRA_FAILED)]),
    ],
)
def test_dynamic_resources_failing_first_wins_from_1_36(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, want: list[tuple[float, str, str]]
) -> None:
    config = _config(tmp_path, "DynamicResources", "{bindingTimeout: 2s}")
    assert _events(tmp_path, capsys, version, "--config", config) == want


def test_a_parallel_prebind_group_gives_the_same_bytes_on_both_event_loops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    config = _config(tmp_path, "DynamicResources", "{bindingTimeout: 2s}")
    outs = []
    for backend in ("asyncio", "trio"):
        out = tmp_path / f"{backend}.json"
        args = ["simulate", str(path), "--until", "30", "--config", config, "--backend", backend, "--report", str(out)]
        assert main(args) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


# --- the framework's runner ----------------------------------------------------------------


class _Entry:
    def __init__(self, name: str, plugin: Any) -> None:
        self.name, self.plugin = name, plugin


def _entries(names: str) -> list[Any]:
    return [_Entry(n, None) for n in names]


@pytest.mark.parametrize(
    ("skipped", "parallel", "want"),
    [
        pytest.param("", "", ["A", "B", "C", "D"], id="none parallel: one at a time"),
        pytest.param("", "ABCD", ["ABCD"], id="all parallel: one group"),
        pytest.param("", "AB", ["AB", "C", "D"], id="a parallel run, then the others"),
        pytest.param("", "ABD", ["AB", "C", "D"], id="a plugin that does not allow it ends the group"),
        pytest.param("B", "ABD", ["A", "C", "D"], id="a skipped parallel plugin is left out"),
        pytest.param("C", "ABD", ["AB", "D"], id="a skipped sequential plugin still ends the group"),
        pytest.param("ABCD", "ABCD", [], id="all skipped: nothing runs"),
    ],
)
def test_framework__getPreBindPluginGroups(skipped: str, parallel: str, want: list[str]) -> None:
    groups = pre_bind_groups(_entries("ABCD"), set(skipped), set(parallel))
    assert ["".join(e.name for e in g) for g in groups] == want


class _Sleeper:
    """A PreBind that sleeps ``delay`` virtual seconds, then answers ``answer``."""

    def __init__(self, log: list[tuple[float, str]], name: str, delay: float, answer: Status | None) -> None:
        self.log, self.name, self.delay, self.answer = log, name, delay, answer

    async def kubesched_pre_bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        self.log.append((anyio.current_time(), f"{self.name} starts"))
        await anyio.sleep(self.delay)
        self.log.append((anyio.current_time(), f"{self.name} ends"))
        return self.answer

    def pre_bind_pre_flight(self, state: CycleState, pod: Any, node_name: str) -> tuple[PreBindPreFlightResult, None]:
        return PreBindPreFlightResult(allow_parallel=True), None


class _Calls:
    errors = None

    @staticmethod
    def call(e: Any, what: str, fn: Any, *args: Any) -> Any:
        return fn(*args)

    @staticmethod
    async def call_async(e: Any, what: str, fn: Any, *args: Any) -> Any:
        st = await fn(*args)
        if isinstance(st, Status):
            st.plugin = e.name
        return st


def _runners(*plugins: _Sleeper) -> BindingRunners:
    return BindingRunners({"preBind": [_Entry(p.name, p) for p in plugins]}, _Calls())  # type: ignore[arg-type]


def _state(parallel: bool) -> CycleState:
    state = CycleState()
    state.recording = AttemptRecord()
    if parallel:
        state.write(PRE_BIND_PRE_FLIGHT_KEY, (set(), {"A", "B"}))
    return state


@pytest.mark.anyio
@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "parallel"])
async def test_framework__RunPreBindPlugins_first_failure(parallel: bool) -> None:
    log: list[tuple[float, str]] = []
    slow_ok = _Sleeper(log, "A", 5.0, None)
    fast_error = _Sleeper(log, "B", 2.0, Status(Code.ERROR, "boom"))
    state = _state(parallel)
    t0 = anyio.current_time()
    st = await _runners(slow_ok, fast_error).run_pre_bind_plugins(state, None, "n1")  # type: ignore[arg-type]
    assert st is not None and st.code == Code.ERROR and st.message == 'running PreBind plugin "B": boom'
    assert state.recording is not None
    got = [(t - t0, what) for t, what in log]
    if parallel:
        # both start at once (in the order the event loop picks); B's failure at 2 s cancels A,
        # which never ends
        assert sorted(got) == [(0.0, "A starts"), (0.0, "B starts"), (2.0, "B ends")]
        assert state.recording.prebind == {"B": "boom", "A": MSG_OTHER_PRE_BIND_FAILED}
    else:
        assert got == [(0.0, "A starts"), (5.0, "A ends"), (5.0, "B starts"), (7.0, "B ends")]
        assert state.recording.prebind == {"A": "success", "B": "boom"}


@pytest.mark.anyio
async def test_framework__RunPreBindPlugins_parallel_success_takes_the_longest() -> None:
    log: list[tuple[float, str]] = []
    state = _state(True)
    t0 = anyio.current_time()
    runners = _runners(_Sleeper(log, "A", 5.0, None), _Sleeper(log, "B", 2.0, None))
    assert await runners.run_pre_bind_plugins(state, None, "n1", run_concurrently) is None  # type: ignore[arg-type]
    assert anyio.current_time() - t0 == 5.0
    assert state.recording is not None and state.recording.prebind == {"B": "success", "A": "success"}


class _Framework:
    def __init__(self, runners: BindingRunners) -> None:
        self.binding = runners


@pytest.mark.parametrize(("parallel", "want"), [(False, set()), (True, {"A", "B"})], ids=["1.35", "1.36"])
def test_framework__RunPreBindPreFlights_records_the_parallel_plugins_from_1_36(parallel: bool, want: set[str]) -> None:
    runners = _runners(_Sleeper([], "A", 0, None), _Sleeper([], "B", 0, None))
    state = CycleState()
    assert run_pre_bind_pre_flights(_Framework(runners), state, None, "n1", parallel=parallel) is None  # type: ignore[arg-type]
    assert state.read(PRE_BIND_PRE_FLIGHT_KEY) == (set(), want)
