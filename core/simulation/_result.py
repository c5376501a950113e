"""What a simulation produces, and how it is shown: :class:`SimulationResult` (the pods'
records, the events, the summary), written as the JSON report (the output contract of
``kubesched simulate``) or as the text a person reads (``--output text``, :func:`render_text`).

The run (:mod:`._simulation`) builds the result; this module never imports it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api._objects import Pod, to_builtins


@dataclass(slots=True)
class PodRecord:
    pod: Pod
    deleted: bool = False
    created_at: float | None = None
    scheduled_at: float | None = None
    finished_at: float | None = None
    deleted_at: float | None = None
    """When its deletion began: the API server set its ``deletionTimestamp`` (an eviction, a
    preemption, a drain, a scale-down, ``kubesched.io/deletion``) or removed it at once (node loss);
    a pod terminating with a grace period still runs until it is gone."""
    owner: str | None = None
    attempts: int = 0
    waiting_on_permit: list[str] | None = None
    no_profile: bool = False
    """Pending, and its ``schedulerName`` matches no profile: this scheduler never takes it."""


@dataclass
class SimulationResult:
    """What a simulation produced: the pods (input order), events and summary."""

    pods: list[PodRecord] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    workloads: list[dict[str, Any]] = field(default_factory=list)
    pod_groups: list[dict[str, Any]] = field(default_factory=list)
    """``podGroups``: the Workload API's PodGroups (scheduling.k8s.io/v1alpha2) at the end of the
    run, in input order, with their conditions; the key is left out of the JSON when there are
    none (so outputs without them are unchanged)."""
    claims: list[dict[str, Any]] = field(default_factory=list)
    """The ResourceClaims at the end of the run (:func:`claim_rows`); the JSON report has the
    ``claims`` key only when there is one, so a run without DRA writes the same bytes as before."""
    warnings: list[str] = field(default_factory=list)
    """What the user should know about the run itself (stderr, not the output contract)."""
    profiles: list[str] = field(default_factory=list)
    """The scheduler names of the run's profiles."""
    # ``--explain``: pod uid -> the recorded plugin results (kube-scheduler-simulator's keys)
    results: dict[str, dict[str, str]] | None = None
    metrics: str | None = None
    """``--metrics``: kube-scheduler's metrics at the end of the run (Prometheus text format)."""

    def _pod_json(self, rec: PodRecord) -> dict[str, Any]:
        p = rec.pod
        row: dict[str, Any] = {
            "namespace": p.metadata.namespace,
            "name": p.metadata.name,
            "uid": p.metadata.uid,
            "priority": p.spec.priority or 0,
            "nodeName": p.spec.node_name or None,
            "phase": p.status.phase or "Pending",
            "deleted": rec.deleted,
            "nominatedNodeName": p.status.nominated_node_name or None,
            "conditions": [
                {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                for c in p.status.conditions
            ],
            "createdAt": rec.created_at,
            "scheduledAt": rec.scheduled_at,
            "finishedAt": rec.finished_at,
            "deletedAt": rec.deleted_at,
            "owner": rec.owner,
            "attempts": rec.attempts,
            "waitingOnPermit": rec.waiting_on_permit,
            "schedulerName": p.spec.scheduler_name,
            "noProfile": rec.no_profile,
        }
        sg = p.spec.scheduling_group
        if sg is not None and sg.pod_group_name:  # a Workload API PodGroup's member (1.36)
            row["podGroup"] = sg.pod_group_name
        if self.results is not None:
            row["annotations"] = self.annotations(p)
        return row

    def to_json_obj(self) -> dict[str, Any]:
        pods = [self._pod_json(rec) for rec in self.pods]
        return {
            "pods": pods,
            "events": self.events,
            "summary": self.summary,
            "nodes": self.nodes,
            "timeline": self.timeline,
            "workloads": self.workloads,
            **({"podGroups": self.pod_groups} if self.pod_groups else {}),
            **({"claims": self.claims} if self.claims else {}),
        }

    def annotations(self, pod: Pod) -> dict[str, str]:
        """The pod's annotations with its recorded plugin results (``--explain``)."""
        recorded = (self.results or {}).get(pod.metadata.uid, {})
        return {**(pod.metadata.annotations or {}), **recorded}

    def write_json(self, write: Callable[[str], object]) -> None:
        """The JSON report, written piece by piece: the same bytes as ``to_json()`` without
        building the whole document (or its dicts) in memory at once."""

        def items(key: str, values: Iterable[Any], last: bool) -> None:
            write(f'  "{key}": [')
            first = True
            for v in values:
                text = json.dumps(v, indent=2, ensure_ascii=False)
                write(("\n" if first else ",\n") + "    " + text.replace("\n", "\n    "))
                first = False
            write("]" if first else "\n  ]")
            write("\n" if last else ",\n")

        write("{\n")
        items("pods", (self._pod_json(rec) for rec in self.pods), False)
        items("events", self.events, False)
        summary = json.dumps(self.summary, indent=2, ensure_ascii=False)
        write('  "summary": ' + summary.replace("\n", "\n  ") + ",\n")
        items("nodes", self.nodes, False)
        items("timeline", self.timeline, False)
        items("workloads", self.workloads, not self.pod_groups and not self.claims)
        if self.pod_groups:
            items("podGroups", self.pod_groups, not self.claims)
        if self.claims:
            items("claims", self.claims, True)
        write("}\n")

    def to_json(self) -> str:
        parts: list[str] = []
        self.write_json(parts.append)
        return "".join(parts)

    def to_text(self) -> str:
        text = render_text(self)
        if self.results is None:
            return text
        from kubesched.reporting._explain import explain_pod

        for rec in self.pods:
            text += "\n" + explain_pod(rec.pod.metadata.namespace, rec.pod.metadata.name, self.annotations(rec.pod))
        return text


def claim_rows(claims: Iterable[Any]) -> list[dict[str, Any]]:
    """One JSON row per ResourceClaim: ``namespace``, ``name``, ``allocation`` (its device
    results and ``nodeSelector`` as the API has them, or null) and ``reservedFor`` (its
    consumers)."""
    rows = []
    for c in claims:
        alloc = c.status.allocation
        rows.append({
            "namespace": c.metadata.namespace,
            "name": c.metadata.name,
            "allocation": None if alloc is None else {
                "devices": [to_builtins(r) for r in alloc.devices.results],
                "nodeSelector": None if alloc.node_selector is None else to_builtins(alloc.node_selector),
            },
            "reservedFor": [to_builtins(r) for r in c.status.reserved_for],
        })
    return rows


def render_text(result: SimulationResult) -> str:
    """A person's view: where each pod went, and why each pending pod is pending."""
    lines: list[str] = []
    rows = []
    for rec in result.pods:
        p = rec.pod
        if rec.deleted:
            state = f"deleted (was on {p.spec.node_name})" if p.spec.node_name else "deleted"
        elif p.spec.node_name:
            state = f"→ {p.spec.node_name}"
        else:
            state = "Pending"
            if p.status.nominated_node_name:
                state += f" (nominated to {p.status.nominated_node_name})"
        rows.append((f"{p.metadata.namespace}/{p.metadata.name}", str(p.spec.priority or 0), state))
    w0 = max((len(r[0]) for r in rows), default=3)
    w1 = max((len(r[1]) for r in rows), default=8)
    lines.append(f"{'POD':<{w0}}  {'PRIORITY':>{max(w1, 8)}}  PLACEMENT")
    for r in rows:
        lines.append(f"{r[0]:<{w0}}  {r[1]:>{max(w1, 8)}}  {r[2]}")
    pending = [rec for rec in result.pods if not rec.deleted and not rec.pod.spec.node_name]
    if pending:
        lines.append("")
        lines.append("Why pending:")
        for rec in pending:
            cond = next((c for c in rec.pod.status.conditions if c.type == "PodScheduled"), None)
            why = cond.message if cond is not None and cond.message else "not attempted yet"
            if rec.waiting_on_permit is not None:
                why = f"waiting on Permit ({', '.join(rec.waiting_on_permit)})"
            elif rec.no_profile:
                names = ", ".join(result.profiles)
                why = (
                    f'not scheduled here: schedulerName "{rec.pod.spec.scheduler_name}" matches no '
                    f"profile (profiles: {names})"
                )
            lines.append(f"  {rec.pod.metadata.namespace}/{rec.pod.metadata.name}: {why}")
    if result.events:
        lines.append("")
        lines.append("Events:")
        for e in result.events:
            line = f"  {e['time']:>9.3f}s  {e['type']:<7}  {e['reason']:<16}  {e['object']}: {e['message']}"
            if "series" in e:  # folded isomorphic events, as kubectl shows them
                s = e["series"]
                over = f"{s['lastObservedTime'] - e['time']:.6f}".rstrip("0").rstrip(".")
                line += f" (x{s['count']} over {over}s)"
            lines.append(line)
    lines += _over_time(result)
    s = result.summary
    lines.append("")
    lines.append(
        f"{s['pods']} pods: {s['scheduled']} scheduled, {s['pending']} pending, {s['deleted']} deleted; "
        f"{s['preemptions']} preemptions, {s['attempts']} scheduling attempts, "
        f"{s['virtualSeconds']:g} virtual seconds"
    )
    return "\n".join(lines) + "\n"


def _over_time(result: SimulationResult) -> list[str]:
    """Peak pending, each resource's time-weighted mean allocation (of schedulable capacity),
    and when each Job completed."""
    timeline = result.timeline
    if not timeline:
        return []
    end = max(float(result.summary.get("virtualSeconds", 0.0)), timeline[-1]["time"])
    peak = max(timeline, key=lambda t: t["pending"])
    lines = ["", "Over time:", f"  peak pending: {peak['pending']} (at {peak['time']:g}s)"]
    keys = list(timeline[-1]["capacity"])
    means = []
    for k in keys:
        total = weighted = 0.0
        for i, t in enumerate(timeline):
            until = timeline[i + 1]["time"] if i + 1 < len(timeline) else end
            span = until - t["time"]
            if span <= 0 and not (i + 1 == len(timeline) and total == 0):
                continue
            span = span if span > 0 else 1.0
            cap = t["capacity"].get(k, 0)
            weighted += span * (t["allocated"].get(k, 0) / cap if cap else 0.0)
            total += span
        means.append(f"{k} {100 * weighted / total:.1f}%")
    lines.append("  mean allocation: " + ", ".join(means))
    for w in result.workloads:
        if w["kind"] == "Job":
            done = f"completed at {w['completedAt']:g}s" if w["completedAt"] is not None else "not completed"
            pods = f"{w['pods']} pod" + ("" if w["pods"] == 1 else "s")
            lines.append(f"  Job {w['namespace']}/{w['name']}: {done} ({pods})")
    return lines
