"""A Coscheduling gang that does not fit yet, at the default arguments (no podGroupBackoffSeconds).

One member fails Filter, its PostFilter rejects the waiting members, a member popped again fits,
waits at Permit and activates its siblings (scheduler-plugins ``pkg/coscheduling/core/core.go``
ActivateSiblings); from v1.33 a pod is also popped from backoffQ whenever activeQ is empty
(SchedulerPopFromBackoffQ).  Upstream loops like this in real time until the cluster changes
(scheduler-plugins #429); kubesched used to stop the whole simulation at the first instant with its
livelock warning.  Now the loop's pods wait out their backoff in virtual time
(:mod:`kubesched.scheduler._instant`) and the gang binds once the blocker finishes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli

NODE = "apiVersion: v1\nkind: Node\nmetadata: {{name: {}}}\nstatus: {{allocatable: {{cpu: '1', memory: 1Gi, pods: '110'}}}}\n"
POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {{name: {}, labels: {{{}}}, annotations: {{{}}}}}\n"
    "spec: {{containers: [{{name: c, image: pause, resources: {{requests: {{cpu: '1'}}}}}}]}}\n"
)
CONFIG = (
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
    "- schedulerName: default-scheduler\n  plugins:\n"
    "    multiPoint: {enabled: [{name: Coscheduling}]}\n"
    "    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: PrioritySort}]}\n"
)


def scenario() -> str:
    """Three one-CPU nodes, a one-CPU blocker running 30 s on one, and a gang of three one-CPU
    members arriving at 1 s: two fit at once, the third only after the blocker is gone."""
    docs = [NODE.format(f"n{i}") for i in (1, 2, 3)]
    docs.append(POD.format("blocker", "", "kubesched.io/duration: 30s"))
    docs.append("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: job}\nspec: {minMember: 3}\n")
    label = "scheduling.x-k8s.io/pod-group: job"
    docs += [POD.format(f"job-{i}", label, "kubesched.io/arrival: 1s") for i in range(3)]
    return "---\n".join(docs)


@pytest.mark.parametrize("version", ["1.30", "1.33", "1.35", "1.36"])
def test_a_gang_that_does_not_fit_yet_backs_off_instead_of_livelocking(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(scenario())
    Path("c.yaml").write_text(CONFIG)
    assert cli.main(["simulate", "s.yaml", "--config", "c.yaml", "--emulated-version", version]) == 0
    out, err = capsys.readouterr()
    assert "livelock" not in err
    result: dict[str, Any] = json.loads(out)
    pods = {p["name"]: p for p in result["pods"]}
    times = {pods[f"job-{i}"]["scheduledAt"] for i in range(3)}
    assert all(pods[f"job-{i}"]["nodeName"] for i in range(3))
    assert len(times) == 1  # all at one instant, once the blocker is gone
    (bound,) = times
    assert 30.0 <= bound <= 30.0 + 10.0  # within one maximum backoff of the room appearing
    assert max(pods[f"job-{i}"]["attempts"] for i in range(3)) < 200  # retries bounded in virtual time


def test_the_gang_retries_agree_on_both_backends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The held-back attempts are part of the deterministic loop: asyncio and trio give the same
    result, byte for byte, and the loop's rejections are spread over virtual time."""
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(scenario())
    Path("c.yaml").write_text(CONFIG)
    outs = []
    for backend in ("asyncio", "trio"):
        assert cli.main(["simulate", "s.yaml", "--config", "c.yaml", "--events", "all", "--backend", backend]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    events = json.loads(outs[0])["events"]
    # the loop's rejections, from the gang's arrival until the blocker is gone at 30 s
    rejections = {e["time"] for e in events if "optimistic rejection in PostFilter" in e["message"]}
    assert min(rejections) == 1.0 and len(rejections) > 2 and max(rejections) < 31.0


def test_a_member_deleted_while_the_gang_retries_ends_the_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A member deleted at 12 s, in the middle of the loop (it may be held back then): the other
    two can no longer make the quorum (PreFilter turns them away) and stay pending; the run ends
    with the blocker, nothing scheduled for the deleted pod."""
    monkeypatch.chdir(tmp_path)
    text = scenario().replace(
        "name: job-2, labels: {scheduling.x-k8s.io/pod-group: job}, annotations: {kubesched.io/arrival: 1s}",
        "name: job-2, labels: {scheduling.x-k8s.io/pod-group: job}, annotations: {kubesched.io/arrival: 1s, "
        "kubesched.io/deletion: 12s}",
    )
    assert "deletion: 12s" in text
    Path("s.yaml").write_text(text)
    Path("c.yaml").write_text(CONFIG)
    assert cli.main(["simulate", "s.yaml", "--config", "c.yaml"]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err
    result = json.loads(out)
    got = {p["name"]: (p["nodeName"], p["deleted"]) for p in result["pods"]}
    assert got == {"blocker": ("n2", False), "job-0": (None, False), "job-1": (None, False), "job-2": (None, True)}
    assert result["summary"]["virtualSeconds"] == 30.0
