"""How ``kubesched simulate`` shows its result to a person (``--output text``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .simulate import SimulationResult


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
            lines.append(f"  {e['time']:>9.3f}s  {e['type']:<7}  {e['reason']:<16}  {e['object']}: {e['message']}")
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
