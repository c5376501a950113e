"""The metrics kubesched exports, per emulated version, as that version's
``pkg/scheduler/metrics/metrics.go`` has them (v1.30.6 and v1.35.4 as vendored, 1.31–1.34 by the
pull requests that changed them, 1.36 after v1.36.0):

- ``scheduler_pod_scheduling_sli_duration_seconds``: its help read "queue an d might" until the
  typo was fixed in 1.31 (kubernetes#124221);
- the cache size gauge: ``scheduler_scheduler_cache_size`` until 1.32, both names in 1.33 (the
  old one deprecated, kubernetes#128810), ``scheduler_cache_size`` from 1.34 (kubernetes#131425);
- ``scheduler_batch_attempts_total`` and ``scheduler_batch_cache_flushed_total`` from 1.35
  (OpportunisticBatching);
- ``scheduler_preemption_goroutines_*`` with SchedulerAsyncPreemption (1.32 alpha, on from 1.33);
- ``scheduler_pod_scheduled_after_flush_total`` from 1.36 (kubernetes#135126; its own test in
  test_versions_e2e).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cli import main

TYPO = "from the time the pod enters the scheduling queue an d might involve multiple scheduling attempts."
FIXED = "from the time the pod enters the scheduling queue and might involve multiple scheduling attempts."
CACHE_HELP = "Number of nodes, pods, and assumed (bound) pods in the scheduler cache."
OLD_CACHE = "scheduler_scheduler_cache_size"
NEW_CACHE = "scheduler_cache_size"
BATCH = ("scheduler_batch_attempts_total", "scheduler_batch_cache_flushed_total")


def _metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    """The demo's metrics at the end of its run."""
    out = tmp_path / "metrics.txt"
    assert main(["simulate", "--metrics", str(out), *flags]) == 0
    capsys.readouterr()
    return out.read_text()


def _families(text: str) -> dict[str, str]:
    """Each family's name and help."""
    return {
        name: help_text
        for name, _, help_text in (line[len("# HELP ") :].partition(" ") for line in text.splitlines()
                                   if line.startswith("# HELP "))
    }  # fmt: skip


@pytest.mark.parametrize(
    ("version", "sli_help", "cache", "batch"),
    [
        ("1.30", TYPO, {OLD_CACHE: CACHE_HELP}, False),
        ("1.31", FIXED, {OLD_CACHE: CACHE_HELP}, False),
        ("1.32", FIXED, {OLD_CACHE: CACHE_HELP}, False),
        ("1.33", FIXED, {NEW_CACHE: CACHE_HELP, OLD_CACHE: f"(Deprecated since 1.33.0) {CACHE_HELP}"}, False),
        ("1.34", FIXED, {NEW_CACHE: CACHE_HELP}, False),
        ("1.35", FIXED, {NEW_CACHE: CACHE_HELP}, True),
        ("1.36", FIXED, {NEW_CACHE: CACHE_HELP}, True),
    ],
)
def test_metrics_of_each_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, sli_help: str, cache: dict[str, str], batch: bool
) -> None:
    families = _families(_metrics(tmp_path, capsys, "--emulated-version", version))
    assert families["scheduler_pod_scheduling_sli_duration_seconds"] == f"E2e latency for a pod being scheduled, {sli_help}"
    assert {name: h for name, h in families.items() if name.endswith("cache_size")} == cache
    assert all((name in families) == batch for name in BATCH)


def test_the_cache_size_counts_nodes_pods_and_assumed_pods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _metrics(tmp_path, capsys)
    # the demo: 3 nodes, 8 pods bound, none left assumed at the end
    assert [line for line in text.splitlines() if line.startswith(NEW_CACHE)] == [
        'scheduler_cache_size{type="assumed_pods"} 0.0',
        'scheduler_cache_size{type="nodes"} 3.0',
        'scheduler_cache_size{type="pods"} 8.0',
    ]


def test_the_batch_counters_are_the_batches_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The default profile signs no pod: every scheduling cycle asks for a hint and gets none
    (``no_hint``), and every pod placed flushes the batch, as not batchable or with no other
    node to keep (v1.35 batch.go ``GetNodeHint`` / ``StoreScheduleResults``)."""
    text = _metrics(tmp_path, capsys, "--emulated-version", "1.35")
    lines = text.splitlines()
    attempts = sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("scheduler_schedule_attempts_total"))
    placed = sum(float(line.rsplit(" ", 1)[1]) for line in lines
                 if line.startswith('scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}'))  # fmt: skip
    assert [line for line in lines if line.startswith(BATCH[0])] == [
        f'scheduler_batch_attempts_total{{profile="default-scheduler",result="no_hint"}} {attempts}'
    ]
    flushed = [line for line in lines if line.startswith(BATCH[1])]
    assert {line.split('reason="')[1].split('"')[0] for line in flushed} <= {"empty_list", "pod_not_batchable"}
    assert sum(float(line.rsplit(" ", 1)[1]) for line in flushed) == placed


def test_no_batch_counters_with_the_gate_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upstream registers the counters at 1.35 whatever the gate; with OpportunisticBatching off
    nothing counts, so the families have no series."""
    text = _metrics(tmp_path, capsys, "--emulated-version", "1.35", "--feature-gates", "OpportunisticBatching=false")
    assert [line for line in text.splitlines() if line.startswith(BATCH)] == []


PREEMPTION = str(Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "preemption.yaml")


@pytest.mark.parametrize(
    ("flags", "exported"),
    [
        pytest.param(("--emulated-version", "1.32"), False, id="1.32: the gate alpha, off"),
        pytest.param(("--emulated-version", "1.32", "--feature-gates", "SchedulerAsyncPreemption=true"), True,
                     id="1.32 with the gate"),
        pytest.param(("--emulated-version", "1.33"), True, id="1.33: beta, on"),
        pytest.param(("--feature-gates", "SchedulerAsyncPreemption=false"), False, id="1.36 with the gate off"),
    ],
)  # fmt: skip
def test_preemption_goroutine_metrics_with_async_preemption(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], exported: bool
) -> None:
    """``scheduler_preemption_goroutines_*`` are registered with SchedulerAsyncPreemption (v1.35.4
    ``metrics.go`` ``Register``).  The one preemption of the scenario counts one goroutine,
    ``success`` and observed at 0 s: ``prepareCandidateAsync`` defers
    ``PreemptionGoroutinesDuration.WithLabelValues(result).Observe(SinceInSeconds(startTime))``,
    whose label and duration Go evaluates when the goroutine starts."""
    text = _metrics(tmp_path, capsys, PREEMPTION, *flags)
    lines = [line for line in text.splitlines() if line.startswith("scheduler_preemption_goroutines")]
    if not exported:
        assert lines == [] and "scheduler_preemption_goroutines" not in text
        return
    assert 'scheduler_preemption_goroutines_execution_total{result="success"} 1.0' in lines
    assert 'scheduler_preemption_goroutines_duration_seconds_bucket{le="0.01",result="success"} 1.0' in lines
    assert 'scheduler_preemption_goroutines_duration_seconds_sum{result="success"} 0.0' in lines


@pytest.mark.parametrize(("version", "runs"), [("1.34", False), ("1.35", True), ("1.36", True)])
def test_the_prebind_pre_flight_extension_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, runs: bool
) -> None:
    """``framework_extension_point_duration_seconds{extension_point="PreBindPreFlight"}``: each
    binding cycle that runs the pre-flights (with NominatedNodeNameForExpectation, on from 1.35);
    the demo's pods have no volume or claim to bind, so all of them answer Skip (v1.35
    ``framework.go`` ``RunPreBindPreFlights``)."""
    text = _metrics(tmp_path, capsys, "--emulated-version", version)
    counts = [line for line in text.splitlines()
              if line.startswith("scheduler_framework_extension_point_duration_seconds_count")
              and 'extension_point="PreBindPreFlight"' in line]  # fmt: skip
    placed = next(line for line in text.splitlines()
                  if line.startswith('scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}'))  # fmt: skip
    if not runs:
        assert counts == []
        return
    n = placed.rsplit(" ", 1)[1]
    assert counts == [
        'scheduler_framework_extension_point_duration_seconds_count{extension_point="PreBindPreFlight",'
        f'profile="default-scheduler",status="Skip"}} {n}'
    ]


@pytest.mark.parametrize(("version", "signs"), [("1.34", False), ("1.35", True)])
def test_the_sign_extension_point_of_the_sampled_cycles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, version: str, signs: bool
) -> None:
    """From 1.35 (OpportunisticBatching) every cycle asks for a node hint, signing the pod first;
    a sampled cycle observes ``framework_extension_point_duration_seconds{extension_point="Sign"}``,
    its status Success whatever the plugins answer (v1.35 ``framework.go`` ``SignPod``: the
    deferred observation reads an outer ``status`` that the loop's ``:=`` shadows), the default
    profile (which signs nothing) included.  Every cycle sampled here."""
    from kubesched.metrics._metrics import MetricsRecorder

    monkeypatch.setattr(MetricsRecorder, "sample", lambda self: True)
    lines = _metrics(tmp_path, capsys, "--emulated-version", version).splitlines()
    sign = [line for line in lines if line.startswith("scheduler_framework_extension_point_duration_seconds_count")
            and 'extension_point="Sign"' in line]  # fmt: skip
    if not signs:
        assert sign == []
        return
    hints = next(line for line in lines if line.startswith("scheduler_batch_attempts_total")).rsplit(" ", 1)[1]
    assert sign == [
        'scheduler_framework_extension_point_duration_seconds_count{extension_point="Sign",'
        f'profile="default-scheduler",status="Success"}} {hints}'
    ]
