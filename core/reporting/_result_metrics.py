"""The numbers a person judges a scheduling policy by, computed once from a simulate result.

Everything that shows a result — ``simulate``'s outputs, ``kubesched report``, ``kubesched
compare`` (table, JSON and HTML) and, later, sweeps — reads it through :func:`compute`, so a
number is defined in one place and means the same thing everywhere.

Input is the ``--output json`` object (its fields: README, docs/results.md).  Its lifecycle
fields (``pods[].createdAt``/``scheduledAt``, ``timeline``, ``workloads``) and the ``nodes``
section are optional: a metric
whose input is absent is ``None`` (shown as "n/a"), never a guess, and :attr:`Metrics.missing`
says which sections were absent so a report can say so.

Definitions:

- latency: ``scheduledAt - createdAt`` of every pod ever bound; percentiles interpolate linearly
  between the closest ranks (numpy's default), so p50 of 1, 2, 3, 4 is 2.5.
- allocation over time: per resource, ``allocated / capacity`` of each timeline entry, holding
  until the next entry; the mean is weighted by how long each value held, up to the end of the
  run (``summary.virtualSeconds``, or the last entry); a run that spans no time has the mean of
  its single instant.  Peak is the largest fraction at any entry.
- node balance: the population standard deviation of the per-node fractions
  ``allocated / capacity`` in the final ``nodes`` section (0 = perfectly even; high = packed or
  fragmented); nodes used: the nodes with at least one pod at the end.
- nodes used over the run: a pod holds its node from ``scheduledAt`` until ``finishedAt`` or
  ``deletedAt`` (when its deletion began: a preemption, an eviction, a drain, its node's loss, a
  scale-down, ``kubesched.io/deletion``), whichever comes first, or else to the end of the run
  (a pod still running); after each instant, the nodes holding at least one pod.  A result
  older than ``deletedAt`` ends a victim's hold at its ``Preempted`` event and holds any other
  deleted pod to the end (:attr:`Metrics.open_ended` counts those).  Peak is the largest
  count after any instant; the mean is weighted by how long each count held, from 0 to the end
  of the run.  A run that drains ends with ``nodes used 0``: these two say what it used.
- preemptions: ``summary.preemptions``; victims: one per ``Preempted`` event (an ``events``
  entry folded from isomorphic events counts as its ``series.count``).
- Jobs' completion: ``completedAt - createdAt`` of every Job in ``workloads`` that completed.
- time to drain: ``summary.virtualSeconds`` (when the last thing happened).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._decoding import decode_json, read_text

PREEMPTED = re.compile(r"^Preempted by pod (?P<uid>\S+) on node (?P<node>\S+)$")

#: the resources every chart and table shows first, in this order
MAIN_RESOURCES = ("cpu", "memory", "pods")


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100), linear between closest ranks; None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def stdev(values: Sequence[float]) -> float | None:
    """Population standard deviation; None for no values."""
    if not values:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


@dataclass
class Preemption:
    """One preemption: the preemptor, the node, when its victims were evicted, and who they were."""

    time: float
    preemptor: str  # the preemptor's uid, as in the Preempted event's message
    preemptor_name: str  # namespace/name when the result knows the uid, else the uid
    node: str
    victims: list[str] = field(default_factory=list)


@dataclass
class PodRow:
    """One line of the per-pod table."""

    name: str
    priority: int
    node: str | None
    phase: str
    deleted: bool
    created_at: float | None
    scheduled_at: float | None
    finished_at: float | None
    owner: str | None
    why_pending: str  # the last FailedScheduling message, "" when none

    @property
    def state(self) -> str:
        if self.deleted:
            return "Deleted"
        return self.phase


@dataclass
class Metrics:
    """Every number and series a report or a comparison shows (see the module docstring)."""

    pods: int = 0
    scheduled: int = 0
    pending: int = 0
    deleted: int = 0
    succeeded: int = 0
    preemptions: int = 0
    victims: int = 0
    attempts: int = 0
    virtual_seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    latency: dict[str, float | None] = field(default_factory=dict)  # p50, p90, p99
    resources: list[str] = field(default_factory=list)
    # over time (from the timeline): time, pending, running, allocated[r], capacity[r]
    times: list[float] = field(default_factory=list)
    pending_series: list[int] = field(default_factory=list)
    running_series: list[int] = field(default_factory=list)
    allocated_series: dict[str, list[float]] = field(default_factory=dict)
    capacity_series: dict[str, list[float]] = field(default_factory=dict)
    allocation_mean: dict[str, float | None] = field(default_factory=dict)  # fractions
    allocation_peak: dict[str, float | None] = field(default_factory=dict)
    peak_pending: int | None = None
    # at the end (from the nodes section)
    node_names: list[str] = field(default_factory=list)
    node_fractions: dict[str, list[float]] = field(default_factory=dict)  # per resource, per node
    node_balance: dict[str, float | None] = field(default_factory=dict)  # stdev of node_fractions
    nodes_used: int | None = None
    # over the run (from the pods' binding intervals): nodes holding a pod, and pods per node
    nodes_used_times: list[float] = field(default_factory=list)
    nodes_used_series: list[int] = field(default_factory=list)
    nodes_used_peak: int | None = None
    nodes_used_mean: float | None = None
    node_pods_peak: dict[str, int] = field(default_factory=dict)
    node_pods_mean: dict[str, float] = field(default_factory=dict)
    open_ended: int = 0  # results older than deletedAt: deleted pods (not victims) held to the end
    emulated_version: str | None = None  # summary.emulatedVersion; None in results older than it
    preemption_list: list[Preemption] = field(default_factory=list)
    jobs: list[tuple[str, float]] = field(default_factory=list)  # (ns/name, completion seconds)
    jobs_incomplete: int = 0
    job_completion: dict[str, float | None] = field(default_factory=dict)  # p50, p99
    pod_rows: list[PodRow] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # absent sections: "timeline", ...

    def table(self) -> dict[str, Any]:
        """The comparison row as data: one flat mapping of metric name to value (None: n/a)."""
        row: dict[str, Any] = {
            "pods": self.pods,
            "scheduled": self.scheduled,
            "pending": self.pending,
            "succeeded": self.succeeded,
            "preemptions": self.preemptions,
            "victims": self.victims,
            "latencyP50": self.latency.get("p50"),
            "latencyP99": self.latency.get("p99"),
        }
        for r in self.resources:
            row[f"allocationMean.{r}"] = self.allocation_mean.get(r)
            row[f"allocationPeak.{r}"] = self.allocation_peak.get(r)
        for r in self.resources:
            row[f"nodeBalance.{r}"] = self.node_balance.get(r)
        row["nodesUsed"] = self.nodes_used
        row["nodesUsedPeak"] = self.nodes_used_peak
        row["nodesUsedMean"] = self.nodes_used_mean
        row["jobCompletionP50"] = self.job_completion.get("p50")
        row["jobCompletionP99"] = self.job_completion.get("p99")
        row["timeToDrain"] = self.virtual_seconds
        return row


# --- loading -----------------------------------------------------------------------------------


def load_result(path: str) -> dict[str, Any]:
    """Read a saved ``simulate --output json`` result; anything else is a ConfigError."""
    try:
        text = read_text(path)
    except OSError as e:
        raise ConfigError(f"cannot read the result: {e.strerror or e}", source=path) from None
    try:
        obj = decode_json(text)  # nesting bounded, lone surrogates replaced
    except ValueError as e:
        raise ConfigError(f"not a kubesched result: not JSON ({e})", source=path) from None
    check_result(obj, path)
    try:
        compute(obj)  # every value a page reads, of the type it reads it as
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, ZeroDivisionError) as e:
        raise ConfigError(f"not a kubesched result: {type(e).__name__}: {_one_line(e)}", source=path) from None
    return obj  # type: ignore[no-any-return]


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= 200 else text[:197] + "..."


def check_result(obj: Any, source: str = "") -> None:
    """Raise a ConfigError naming the first field that makes ``obj`` no kubesched result."""
    if not isinstance(obj, dict):
        raise ConfigError("not a kubesched result: expected a JSON object", source=source)
    for key, kind in (("pods", list), ("events", list), ("summary", dict)):
        if key not in obj:
            raise ConfigError(f"not a kubesched result: no {key!r} section", source=source, field=key)
        if not isinstance(obj[key], kind):
            raise ConfigError(
                f"not a kubesched result: expected {'a list' if kind is list else 'an object'}",
                source=source,
                field=key,
            )
    for key in ("timeline", "workloads", "nodes"):
        if key in obj and not isinstance(obj[key], list):
            raise ConfigError("not a kubesched result: expected a list", source=source, field=key)
    for i, p in enumerate(obj["pods"]):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise ConfigError("not a kubesched result: a pod needs a name", source=source, field=f"pods[{i}].name")


# --- computing ---------------------------------------------------------------------------------


def occurrences(e: dict[str, Any]) -> int:
    """How many occurrences an ``events`` entry stands for: its ``series.count`` when isomorphic
    events were folded into it, else 1."""
    s = e.get("series")
    return int(s["count"]) if isinstance(s, dict) else 1


def last_seen(e: dict[str, Any]) -> float:
    """An ``events`` entry's last occurrence: its ``series.lastObservedTime``, else its time."""
    s = e.get("series")
    return float(s["lastObservedTime"] if isinstance(s, dict) else e.get("time", 0.0))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _resources(obj: dict[str, Any]) -> list[str]:
    seen: list[str] = []
    for section, keys in (("timeline", ("allocated", "capacity")), ("nodes", ("allocated", "capacity"))):
        for entry in obj.get(section) or []:
            for k in keys:
                for r in entry.get(k) or {}:
                    if r not in seen:
                        seen.append(r)
    main = [r for r in MAIN_RESOURCES if r in seen]
    return main + sorted(r for r in seen if r not in MAIN_RESOURCES)


def compute(obj: dict[str, Any]) -> Metrics:
    """Every metric of one result (a ``simulate --output json`` object)."""
    m = Metrics()
    pods = obj.get("pods") or []
    summary = obj.get("summary") or {}
    events = obj.get("events") or []
    m.pods = int(summary.get("pods", len(pods)))
    m.scheduled = int(summary.get("scheduled", sum(1 for p in pods if p.get("nodeName") and not p.get("deleted"))))
    m.pending = int(summary.get("pending", sum(1 for p in pods if not p.get("nodeName") and not p.get("deleted"))))
    m.deleted = int(summary.get("deleted", sum(1 for p in pods if p.get("deleted"))))
    m.succeeded = int(summary.get("succeeded", sum(1 for p in pods if p.get("phase") == "Succeeded")))
    m.preemptions = int(summary.get("preemptions", 0))
    m.attempts = int(summary.get("attempts", 0))
    m.virtual_seconds = float(summary.get("virtualSeconds", 0.0))
    version = summary.get("emulatedVersion")
    m.emulated_version = version if isinstance(version, str) else None
    m.resources = _resources(obj)

    # pods: latency and the per-pod table
    by_uid = {p.get("uid"): f"{p.get('namespace', 'default')}/{p['name']}" for p in pods if p.get("uid")}
    why: dict[str, tuple[float, str]] = {}  # the last message (a folded entry: its last occurrence)
    for e in events:
        if e.get("reason") == "FailedScheduling":
            who, at = str(e.get("object", "")), last_seen(e)
            if who not in why or at >= why[who][0]:
                why[who] = (at, str(e.get("message", "")))
    has_created = any("createdAt" in p for p in pods)
    for p in pods:
        name = f"{p.get('namespace', 'default')}/{p['name']}"
        created, bound = _num(p.get("createdAt")), _num(p.get("scheduledAt"))
        if created is not None and bound is not None:
            m.latencies.append(bound - created)
        pending_now = not p.get("nodeName") and not p.get("deleted")
        m.pod_rows.append(
            PodRow(
                name=name,
                priority=int(p.get("priority") or 0),
                node=p.get("nodeName"),
                phase=str(p.get("phase") or "Pending"),
                deleted=bool(p.get("deleted")),
                created_at=created,
                scheduled_at=bound,
                finished_at=_num(p.get("finishedAt")),
                owner=p.get("owner"),
                why_pending=why.get(name, (0.0, ""))[1] if pending_now else "",
            )
        )
    if not has_created:
        m.missing.append("pods[].createdAt")
    m.latency = {f"p{q}": percentile(m.latencies, q) for q in (50, 90, 99)}

    # preemptions: one Preempted event per victim, grouped by preemptor and node
    groups: dict[tuple[str, str], Preemption] = {}
    for e in events:
        if e.get("reason") != "Preempted":
            continue
        match = PREEMPTED.match(str(e.get("message", "")))
        uid, node = (match["uid"], match["node"]) if match else ("?", "?")
        m.victims += occurrences(e)
        key = (uid, node)
        if key not in groups:
            groups[key] = Preemption(float(e.get("time", 0.0)), uid, by_uid.get(uid, uid), node)
            m.preemption_list.append(groups[key])
        groups[key].victims.append(str(e.get("object", "")))

    _over_time(m, obj)
    _final_nodes(m, obj)
    _occupancy(m, obj, events)

    # Jobs
    if "workloads" in obj:
        for w in obj["workloads"]:
            if w.get("kind") != "Job":
                continue
            created, done = _num(w.get("createdAt")), _num(w.get("completedAt"))
            if created is not None and done is not None:
                m.jobs.append((f"{w.get('namespace', 'default')}/{w.get('name')}", done - created))
            else:
                m.jobs_incomplete += 1
    else:
        m.missing.append("workloads")
    durations = [d for _, d in m.jobs]
    m.job_completion = {"p50": percentile(durations, 50), "p99": percentile(durations, 99)}
    return m


def _over_time(m: Metrics, obj: dict[str, Any]) -> None:
    timeline = obj.get("timeline")
    if not timeline:
        m.missing.append("timeline")
        m.allocation_mean = dict.fromkeys(m.resources)
        m.allocation_peak = dict.fromkeys(m.resources)
        return
    entries = sorted(timeline, key=lambda t: float(t.get("time", 0.0)))
    m.times = [float(t.get("time", 0.0)) for t in entries]
    m.pending_series = [int(t.get("pending", 0)) for t in entries]
    m.running_series = [int(t.get("running", 0)) for t in entries]
    m.peak_pending = max(m.pending_series)
    end = max(m.virtual_seconds, m.times[-1])
    for r in m.resources:
        alloc = [float((t.get("allocated") or {}).get(r, 0)) for t in entries]
        cap = [float((t.get("capacity") or {}).get(r, 0)) for t in entries]
        m.allocated_series[r] = alloc
        m.capacity_series[r] = cap
        fracs = [a / c if c > 0 else None for a, c in zip(alloc, cap, strict=True)]
        known = [f for f in fracs if f is not None]
        m.allocation_peak[r] = max(known) if known else None
        weighted = 0.0
        span = 0.0
        for i, f in enumerate(fracs):
            until = m.times[i + 1] if i + 1 < len(m.times) else end
            if f is not None:
                weighted += f * (until - m.times[i])
                span += until - m.times[i]
        if span > 0:
            m.allocation_mean[r] = weighted / span
        else:  # the run spans no time: the last instant is the whole story
            m.allocation_mean[r] = known[-1] if known else None


def _final_nodes(m: Metrics, obj: dict[str, Any]) -> None:
    nodes = obj.get("nodes")
    if nodes is None:
        m.missing.append("nodes")
        m.node_balance = dict.fromkeys(m.resources)
        return
    m.node_names = [str(n.get("name")) for n in nodes]
    used = 0
    for n in nodes:
        if int((n.get("allocated") or {}).get("pods", 0)) > 0:
            used += 1
    m.nodes_used = used
    for r in m.resources:
        fracs = []
        for n in nodes:
            cap = float((n.get("capacity") or {}).get(r, 0))
            fracs.append(float((n.get("allocated") or {}).get(r, 0)) / cap if cap > 0 else 0.0)
        m.node_fractions[r] = fracs
        has_capacity = any(float((n.get("capacity") or {}).get(r, 0)) > 0 for n in nodes)
        m.node_balance[r] = stdev(fracs) if has_capacity else None


def _occupancy(m: Metrics, obj: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Nodes used and pods per node over the run (see the module docstring)."""
    pods = obj.get("pods") or []
    if not any("scheduledAt" in p for p in pods):
        return  # a result from before the lifecycle fields: no binding times
    end = max([m.virtual_seconds, *m.times])
    evicted: dict[str, float] = {}
    for e in events:
        if e.get("reason") == "Preempted":
            evicted.setdefault(str(e.get("object", "")), float(e.get("time", 0.0)))
    deltas: dict[float, dict[str, int]] = {}
    names: list[str] = list(m.node_names)
    for p in pods:
        node, start = p.get("nodeName"), _num(p.get("scheduledAt"))
        if not node or start is None:
            continue
        stop = _num(p.get("finishedAt"))
        gone = _num(p.get("deletedAt"))
        if gone is not None and (stop is None or gone < stop):
            stop = gone
        elif stop is None and p.get("deleted") and "deletedAt" not in p:  # a result older than deletedAt
            stop = evicted.get(f"{p.get('namespace', 'default')}/{p['name']}")
            if stop is None:
                m.open_ended += 1
        if stop is not None and stop <= start:
            continue
        if node not in names:
            names.append(node)
        deltas.setdefault(start, {}).setdefault(node, 0)
        deltas[start][node] += 1
        if stop is not None:
            deltas.setdefault(stop, {}).setdefault(node, 0)
            deltas[stop][node] -= 1
    on: dict[str, int] = dict.fromkeys(names, 0)
    peak: dict[str, int] = dict.fromkeys(names, 0)
    held: dict[str, float] = dict.fromkeys(names, 0.0)
    times = sorted(t for t in deltas if t <= end)
    used = 0
    last = 0.0
    weighted = 0.0
    for t in times:
        weighted += used * (t - last)
        for node in names:
            held[node] += on[node] * (t - last)
        last = t
        for node, d in deltas[t].items():
            on[node] += d
            peak[node] = max(peak[node], on[node])
        used = sum(1 for n in on.values() if n > 0)
        m.nodes_used_times.append(t)
        m.nodes_used_series.append(used)
    weighted += used * (end - last)
    for node in names:
        held[node] += on[node] * (end - last)
    if not m.nodes_used_series:
        m.nodes_used_times, m.nodes_used_series = [0.0], [0]
    m.nodes_used_peak = max(m.nodes_used_series)
    m.nodes_used_mean = weighted / end if end > 0 else float(m.nodes_used_series[-1])
    m.node_pods_peak = peak
    m.node_pods_mean = {n: held[n] / end if end > 0 else float(on[n]) for n in names}


# --- formatting --------------------------------------------------------------------------------

#: how each metric of :meth:`Metrics.table` is labelled and shown in a text or HTML table
LABELS: dict[str, str] = {
    "pods": "pods",
    "scheduled": "scheduled",
    "pending": "pending",
    "succeeded": "succeeded",
    "preemptions": "preemptions",
    "victims": "victims",
    "latencyP50": "latency p50",
    "latencyP99": "latency p99",
    "nodesUsed": "nodes used at the end",
    "nodesUsedPeak": "peak nodes used",
    "nodesUsedMean": "mean nodes used",
    "jobCompletionP50": "Job completion p50",
    "jobCompletionP99": "Job completion p99",
    "timeToDrain": "time to drain",
}


def label(key: str) -> str:
    """The human label of a :meth:`Metrics.table` key."""
    if key in LABELS:
        return LABELS[key]
    kind, _, res = key.partition(".")
    return {"allocationMean": "mean allocation", "allocationPeak": "peak allocation",
            "nodeBalance": "node balance (std)"}.get(kind, kind) + f" {res}"


def _seconds(key: str) -> bool:
    return key.startswith(("latency", "jobCompletion")) or key == "timeToDrain"


def fmt(key: str, value: Any, places: int | None = None) -> str:
    """A metric value as text: seconds with an 's', fractions as percentages, n/a for None.
    ``places``: the decimals, where a row needs more than the metric's own to tell values apart."""
    if value is None:
        return "n/a"
    if places is not None:
        if key.startswith(("allocationMean", "allocationPeak")):
            return f"{100 * value:.{places}f}%"
        return f"{value:.{places}f}" + ("s" if _seconds(key) else "")
    if key.startswith(("allocationMean", "allocationPeak")):
        return f"{100 * value:.1f}%"
    if key.startswith("nodeBalance"):
        return f"{value:.3f}"
    if _seconds(key):
        return f"{value:g}s"
    if key == "nodesUsedMean" or (isinstance(value, float) and not value.is_integer()):
        return f"{value:.2f}"
    return str(value)


def fmt_diff(key: str, d: float | None, places: int | None = None) -> str:
    """A difference of two values of metric ``key`` as text: signed, a typeset minus; fractions in
    percentage points (``+1.2 pp``), seconds with an 's'; '' for None.  ``places``: the decimals,
    where the metric's own would print a difference as 0."""
    if d is None:
        return ""
    unit = "s" if _seconds(key) else ""
    if key.startswith(("allocationMean", "allocationPeak")):
        text, unit = f"{100 * d:+.{1 if places is None else places}f}", " pp"
    elif places is not None:
        text = f"{d:+.{places}f}"
    elif key.startswith("nodeBalance"):
        text = f"{d:+.3f}"
    elif key == "nodesUsedMean":
        text = f"{d:+.2f}"
    elif isinstance(d, float) and not d.is_integer():
        text = f"{d:+.4g}"
    else:
        text = f"{int(d):+d}"
    if float(text) == 0:
        return "0" + unit
    return text.replace("-", "\u2212") + unit


def side_by_side(labels: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """A text table: one line per metric, one column per variant (a metric n/a everywhere is left out)."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys and any(r.get(k) is not None for r in rows)]
    lines = [["metric", *labels]]
    for k in keys:
        lines.append([label(k), *(fmt(k, row.get(k)) for row in rows)])
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for j, line in enumerate(lines):
        cells = [line[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)]
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out) + "\n"
