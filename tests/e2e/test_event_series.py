"""`simulate`'s events as the API server keeps them (issue 38, item 3): pods retried for hours
fold into one entry each with `series: {count, lastObservedTime}`, `--events all` keeps every
occurrence, and what reads events (the text output, the metrics, results.csv's columns) counts
occurrences either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.cli import main
from kubesched.experiments._sweep import cell_metrics
from kubesched.reporting import compute

NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\nstatus: {allocatable: {cpu: "4", memory: 32Gi, pods: "110"}}'  # noqa: E501
# keeps the run going for hours: the pending pods are retried at every 5-minute flush
LONG = 'apiVersion: v1\nkind: Pod\nmetadata: {name: long, annotations: {kubesched.io/duration: 5h}}\nspec:\n  nodeName: n1\n  containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]'  # noqa: E501
MESSAGE = (
    "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
    "available: 1 No preemption victims found for incoming pod."
)


def saturated(n: int) -> str:
    """``n`` pods that never fit (8 CPU on a 4-CPU node)."""
    pods = [
        f'apiVersion: v1\nkind: Pod\nmetadata: {{name: big-{i:03d}}}\nspec:\n  containers: [{{name: c, image: pause, resources: {{requests: {{cpu: "8"}}}}}}]'  # noqa: E501
        for i in range(n)
    ]
    return "\n---\n".join([NODE, LONG, *pods]) + "\n"


def simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *argv: str) -> str:
    (tmp_path / "in.yaml").write_text(text)
    code = main(["simulate", str(tmp_path / "in.yaml"), *argv])
    out, _ = capsys.readouterr()
    assert code == 0
    return out


def count(e: dict[str, Any]) -> int:
    return int(e["series"]["count"]) if "series" in e else 1


def test_400_pods_retried_for_4_hours_fit_in_a_small_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every 5 minutes for 4 hours, 400 FailedScheduling events: 17,600 occurrences, 5.7 MB with
    ``--events all``; folded, one entry per pod, 0.49 MB, with counts that add up."""
    out = simulate(tmp_path, capsys, saturated(400), "--until", "4h")
    assert len(out.encode()) < 1_500_000
    result = json.loads(out)
    events = result["events"]
    assert len(events) == 400
    assert {(e["reason"], e["message"], count(e), e["series"]["lastObservedTime"]) for e in events} == {
        ("FailedScheduling", MESSAGE, 44, 14190.0)
    }
    assert sum(count(e) for e in events) == result["summary"]["attempts"] == 17600


def test_every_occurrence_with_events_all_and_the_same_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folded = json.loads(simulate(tmp_path, capsys, saturated(20), "--until", "1h"))
    every = json.loads(simulate(tmp_path, capsys, saturated(20), "--until", "1h", "--events", "all"))
    assert len(every["events"]) == 20 * 11 and not any("series" in e for e in every["events"])
    assert [count(e) for e in folded["events"]] == [11] * 20
    assert {k: v for k, v in folded.items() if k != "events"} == {k: v for k, v in every.items() if k != "events"}
    # the first occurrences, as they were
    assert [{k: v for k, v in e.items() if k != "series"} for e in folded["events"]] == every["events"][:20]
    assert cell_metrics(folded) == cell_metrics(every)
    assert cell_metrics(folded)["failedScheduling"] == 220
    assert [r.why_pending for r in compute(folded).pod_rows] == [r.why_pending for r in compute(every).pod_rows]


def test_the_text_shows_a_series_as_kubectl_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = simulate(tmp_path, capsys, saturated(1), "--until", "1h", "--output", "text")
    lines = [line for line in out.splitlines() if "FailedScheduling" in line]
    assert lines == [f"      0.000s  Warning  FailedScheduling  default/big-000: {MESSAGE} (x11 over 3300s)"]
    every = simulate(tmp_path, capsys, saturated(1), "--until", "1h", "--output", "text", "--events", "all")
    assert sum("FailedScheduling" in line for line in every.splitlines()) == 11
    assert "(x" not in every


def test_a_bad_events_mode_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.yaml").write_text(saturated(1))
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", str(tmp_path / "in.yaml"), "--events", "some"])
    _, err = capsys.readouterr()
    assert exit_.value.code == 2
    assert err == (
        "kubesched: error: argument --events: invalid choice: 'some' (choose from 'series', 'all') "
        "(see kubesched simulate --help)\n"
    )
