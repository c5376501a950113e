"""``scheduler_queue_incoming_pods_total{queue,event}`` after the demo simulation, per emulated
minor: upstream's event labels (``runtime._events.queue_label``), never kubesched's own names
(``UnscheduledPodAdd``) nor an empty label."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cli import main

PREFIX = "scheduler_queue_incoming_pods_total{"


def _incoming(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str) -> dict[str, float]:
    out = tmp_path / "metrics.txt"
    assert main(["simulate", "--emulated-version", version, "--metrics", str(out)]) == 0
    capsys.readouterr()
    series = (line.rpartition(" ") for line in out.read_text().splitlines() if line.startswith(PREFIX))
    return {key[len(PREFIX) - 1:]: float(value) for key, _, value in series}


@pytest.mark.parametrize(
    ("version", "added"),
    [("1.30", "PodAdd"), ("1.31", "PodAdd"), ("1.32", "UnschedulablePodAdd"), ("1.36", "UnschedulablePodAdd")],
)
def test_the_demos_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str, added: str) -> None:
    m = _incoming(tmp_path, capsys, version)
    assert m[f'{{event="{added}",queue="active"}}'] == 11  # the demo's pods, each added once
    assert m['{event="ScheduleAttemptFailure",queue="unschedulable"}'] >= 1
    assert not any('event=""' in k or "Unscheduled" in k for k in m)
    if version < "1.32":
        # an assigned pod's update (empty before this label fix): AssignedPodUpdate before 1.32
        assert m['{event="AssignedPodUpdate",queue="backoff"}'] == 1
