"""``scheduler_event_handling_duration_seconds`` (from 1.31, kubernetes#125929; observed by the
event handlers, v1.31+ ``pkg/scheduler/eventhandlers.go``) and ``scheduler_plugin_evaluation_total``
(every version; counted by the instrumented PreFilter / Filter / PreScore / Score plugins,
``framework/runtime/instrumented_plugins.go``), after the demo simulation."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.runtime import _events as ev

EVENT_HELP = "# HELP scheduler_event_handling_duration_seconds Event handling latency in seconds."
EVAL_HELP = (
    "# HELP scheduler_plugin_evaluation_total Number of attempts to schedule pods by each plugin and the "
    "extension point (available only in PreFilter, Filter, PreScore, and Score)."
)


def _metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str) -> str:
    out = tmp_path / "metrics.txt"
    assert main(["simulate", "--emulated-version", version, "--metrics", str(out)]) == 0
    capsys.readouterr()
    return out.read_text()


def _value(text: str, series: str) -> float:
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rpartition(" ")[2])
    raise AssertionError(f"{series} not exported")


@pytest.mark.parametrize("version", ["1.30", "1.31", "1.32", "1.35", "1.36"])
def test_presence_by_version(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str) -> None:
    text = _metrics(tmp_path, capsys, version)
    assert EVAL_HELP in text
    assert "# TYPE scheduler_plugin_evaluation_total counter" in text
    if version == "1.30":
        assert "scheduler_event_handling_duration_seconds" not in text
        return
    assert EVENT_HELP in text
    assert "# TYPE scheduler_event_handling_duration_seconds histogram" in text
    # upstream's buckets: ExponentialBuckets(0.0001, 2, 12), the last 0.2048
    assert 'scheduler_event_handling_duration_seconds_bucket{event="NodeAdd",le="0.0001"}' in text
    assert 'scheduler_event_handling_duration_seconds_bucket{event="NodeAdd",le="0.2048"}' in text


def test_values_after_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _metrics(tmp_path, capsys, "1.36")
    # the demo's three nodes, each added once, handled in 0 s of virtual time
    assert _value(text, 'scheduler_event_handling_duration_seconds_count{event="NodeAdd"}') == 3
    assert _value(text, 'scheduler_event_handling_duration_seconds_sum{event="NodeAdd"}') == 0
    assert _value(text, 'scheduler_event_handling_duration_seconds_count{event="UnschedulablePodAdd"}') > 0
    assert _value(text, 'scheduler_event_handling_duration_seconds_count{event="AssignedPodAdd"}') > 0
    # every Filter call on a node counts, every PreFilter not a Skip; a series from the start
    assert _value(text, 'scheduler_plugin_evaluation_total{extension_point="Filter",plugin="NodeName",profile="default-scheduler"}') > 0
    assert _value(text, 'scheduler_plugin_evaluation_total{extension_point="PreFilter",plugin="InterPodAffinity",profile="default-scheduler"}') == 0


@pytest.mark.parametrize(
    ("event", "v131", "v132"),
    [
        (ev.NODE_ADD, "NodeAdd", "NodeAdd"),
        (ev.ClusterEvent(ev.Resource.NODE, ev.ActionType.UPDATE_NODE_TAINT), "NodeTaintChange", "NodeUpdateNodeTaint"),
        (ev.UNSCHEDULED_POD_ADD, "UnschedulablePodAdd", "UnschedulablePodAdd"),
        (ev.ASSIGNED_POD_UPDATE, "AssignedPodUpdate", "AssignedPodUpdate"),
        (ev.ClusterEvent(ev.Resource.ASSIGNED_POD, ev.ActionType.UPDATE_POD_LABEL), "PodLabelChange", "AssignedPodUpdatePodLabel"),
        (ev.ClusterEvent(ev.Resource.ASSIGNED_POD, ev.ActionType.UPDATE_POD_OTHER), "AssignedPodUpdate", "AssignedPodUpdate"),
        (ev.STORAGE_EVENTS[(ev.Resource.PERSISTENT_VOLUME, "ADDED")], "PvAdd", "PersistentVolumeAdd"),
        (ev.STORAGE_EVENTS[(ev.Resource.CSI_NODE, "MODIFIED")], "CSINodeUpdate", "storage.k8s.io/CSINodeUpdate"),
        (ev.UNSCHEDULABLE_TIMEOUT, "UnschedulableTimeout", "UnschedulableTimeout"),
    ],
)
def test_event_labels(event: ev.ClusterEvent, v131: str, v132: str) -> None:
    """v1.31 ``internal/queue/events.go`` labels; from 1.32 ``ClusterEvent.Label()``."""
    assert ev.metric_label(event, (1, 31)) == v131
    assert ev.metric_label(event, (1, 32)) == v132
    assert ev.metric_label(event, (1, 36)) == v132
