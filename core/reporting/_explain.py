"""``kubesched explain RESULT.json POD``: why a pod is pending, or why it landed where it did.

It reads the plugin results recorded by ``simulate --explain`` (``pods[].annotations``) or by
``run --record-plugin-results`` (a pod as ``kubectl get pod -o json`` prints it, or a list of
them): kube-scheduler-simulator's annotations (:mod:`kubesched.scheduler._results`).  For each attempt
(``result-history``, oldest first) it shows:

- the outcome (bound to a node, rejected at a stage, or no node fits);
- PreFilter verdicts that were not a plain success;
- a table of nodes × Filter plugins: ``pass``, the plugin's reason, or ``·`` (not run: an
  earlier plugin already rejected the node); the Filter plugins' order is inferred from how many
  nodes each evaluated;
- the rejected nodes grouped by reason (plugin and message);
- PostFilter's nominated node and victims;
- the top nodes by final score, with each Score plugin's weighted part;
- Reserve, Permit (with the timeouts of a wait), PreBind and Bind.

With ``emulated_version`` (``kubesched explain --emulated-version 1.32``) the view opens with the
Kubernetes minor the result was made for, the Filter columns that the counts cannot order
follow that minor's default profile (the order its scheduler runs them), and a simulate report
made for another minor (its ``summary.emulatedVersion``) is refused: its texts and decisions are
that minor's.  A pod read back from a cluster records no version: the flag says which one ran.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._decoding import decode_json, read_text
from kubesched.config._versions import Version
from kubesched.scheduler._results import (
    BIND_RESULT,
    FILTER_RESULT,
    FINALSCORE_RESULT,
    PASSED,
    PERMIT_RESULT,
    PERMIT_TIMEOUT,
    POSTFILTER_RESULT,
    POSTFILTER_VICTIMS,
    PREBIND_RESULT,
    PREFILTER_RESULT,
    PREFILTER_STATUS,
    PRESCORE_RESULT,
    RESERVE_RESULT,
    RESULT_HISTORY,
    SCORE_RESULT,
    SELECTED_NODE,
    SUCCESS,
    WAIT,
)

NOT_RUN = "·"
PASS = "pass"


def _load(value: str | None, default: Any) -> Any:
    if not value:
        return default
    try:
        return json.loads(value)
    except ValueError:
        return default


def attempts(annotations: Mapping[str, str]) -> list[Mapping[str, str]]:
    """Every recorded attempt, oldest first (the history, else the latest attempt's keys)."""
    history = _load(annotations.get(RESULT_HISTORY), None)
    if isinstance(history, list) and history:
        return [h for h in history if isinstance(h, Mapping)]
    if SELECTED_NODE in annotations or FILTER_RESULT in annotations:
        return [annotations]
    return []


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [len(h) for h in header]
    for r in rows:
        for i, cell in enumerate(r):
            widths[i] = max(widths[i], len(cell))
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [(indent + fmt.format(*r)).rstrip() for r in [header, *rows]]


def _names(nodes: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(nodes[:limit])
    return shown + (f", … ({len(nodes) - limit} more)" if len(nodes) > limit else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _outcome(a: Mapping[str, str], filters: Mapping[str, Mapping[str, str]]) -> str:
    selected = a.get(SELECTED_NODE, "")
    if not selected:
        for plugin, verdict in _load(a.get(PREFILTER_STATUS), {}).items():
            if verdict != SUCCESS and verdict:
                return f"unschedulable: PreFilter plugin {plugin} rejected the pod"
        return f"unschedulable: no node fits ({_plural(len(filters), 'node')} evaluated)"
    for stage, key in (("Reserve", RESERVE_RESULT), ("Permit", PERMIT_RESULT),
                       ("PreBind", PREBIND_RESULT), ("Bind", BIND_RESULT)):
        for plugin, verdict in _load(a.get(key), {}).items():
            if verdict not in (SUCCESS, WAIT):
                return f"{stage} plugin {plugin} rejected node {selected}: {verdict}"
    if SUCCESS in _load(a.get(BIND_RESULT), {}).values():
        return f"bound to {selected}"
    if WAIT in _load(a.get(PERMIT_RESULT), {}).values():
        return f"selected {selected}; waited at Permit and was not bound"
    return f"selected {selected}; not bound"


def _default_filter_order(version: Version) -> dict[str, int]:
    """Each plugin's place in ``version``'s default profile (:func:`kubesched.config.default_multi_point`
    at that version's feature gates): the order its Filter plugins run in."""
    from kubesched.config._config import default_multi_point

    return {name: i for i, (name, _) in enumerate(default_multi_point(None, version))}


def explain_attempt(
    a: Mapping[str, str], *, max_nodes: int = 20, top: int = 5, version: Version | None = None
) -> list[str]:
    """The explain view of one attempt, as lines (``version``: see the module's docstring)."""
    filters: dict[str, dict[str, str]] = _load(a.get(FILTER_RESULT), {})
    lines = [f"  Outcome: {_outcome(a, filters)}"]
    pf_status: dict[str, str] = _load(a.get(PREFILTER_STATUS), {})
    pf_result: dict[str, list[str]] = _load(a.get(PREFILTER_RESULT), {})
    notes = [f"{p}: {v}" for p, v in pf_status.items() if v not in (SUCCESS, "")]
    skipped = [p for p, v in pf_status.items() if v == ""]
    if skipped:
        notes.append("Skip from " + ", ".join(skipped))
    notes += [f"{p} narrowed the nodes to {_names(sorted(n))}" for p, n in pf_result.items()]
    if notes:
        lines.append("  PreFilter: " + "; ".join(notes))
    if filters:
        # the plugins' order: each ran on every node the ones before it passed, and a node
        # rejected by one shows the ones that ran before it
        counts: dict[str, int] = {}
        before: dict[str, set[str]] = {}
        for verdicts in filters.values():
            for p, v in verdicts.items():
                counts[p] = counts.get(p, 0) + 1
                if v != PASSED:
                    before.setdefault(p, set()).update(q for q in verdicts if q != p)
        if version is None:
            plugins = sorted(counts, key=lambda p: (-counts[p], len(before.get(p, ())), p))
        else:  # ties in the order the version's default profile runs them, then others by name
            rank = _default_filter_order(version)
            plugins = sorted(counts, key=lambda p: (-counts[p], len(before.get(p, ())), rank.get(p, len(rank)), p))
        rejected = {n: next(((p, v) for p, v in vs.items() if v != PASSED), None) for n, vs in filters.items()}
        order = sorted(filters, key=lambda n: (rejected[n] is None, n))
        rows = [
            [n] + [
                PASS if filters[n].get(p) == PASSED else filters[n].get(p, NOT_RUN)
                for p in plugins
            ]
            for n in order[:max_nodes]
        ]
        n_rej = sum(1 for r in rejected.values() if r is not None)
        lines.append(
            f"  Filter: {_plural(len(filters), 'node')} evaluated, {n_rej} rejected, "
            f"{len(filters) - n_rej} passed"
        )
        lines += _table(["NODE", *plugins], rows, indent="    ")
        if len(order) > max_nodes:
            rest = order[max_nodes:]
            more_rej = sum(1 for n in rest if rejected[n] is not None)
            lines.append(
                f"    … {_plural(len(rest), 'more node')} ({more_rej} rejected, "
                f"{len(rest) - more_rej} passed)"
            )
        groups: dict[tuple[str, str], list[str]] = {}
        for n in sorted(filters):
            r = rejected[n]
            if r is not None:
                groups.setdefault(r, []).append(n)
        if groups:
            lines.append("  Rejected nodes by reason:")
            for (plugin, reason), nodes in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                lines.append(f"    {plugin}: {reason} — {_plural(len(nodes), 'node')}: {_names(nodes)}")
    victims: dict[str, dict[str, Any]] = _load(a.get(POSTFILTER_VICTIMS), {})
    for plugin, info in victims.items():
        pods = info.get("victims") or []
        lines.append(
            f"  PostFilter: {plugin} nominated {info.get('nominatedNodeName')}"
            + (f" (victims: {', '.join(pods)})" if pods else "")
        )
    if not victims and not a.get(SELECTED_NODE) and _load(a.get(POSTFILTER_RESULT), {}):
        lines.append("  PostFilter: no node nominated")
    prescore: dict[str, str] = _load(a.get(PRESCORE_RESULT), {})
    notes = [f"{p}: {v}" for p, v in prescore.items() if v not in (SUCCESS, "")]
    skipped = [p for p, v in prescore.items() if v == ""]
    if skipped:
        notes.append("Skip from " + ", ".join(skipped))
    if notes:
        lines.append("  PreScore: " + "; ".join(notes))
    final: dict[str, dict[str, str]] = _load(a.get(FINALSCORE_RESULT), {})
    raw: dict[str, dict[str, str]] = _load(a.get(SCORE_RESULT), {})
    if final:
        plugins = sorted({p for s in final.values() for p in s})
        totals = {n: sum(int(s.get(p, 0)) for p in plugins) for n, s in final.items()}
        best = sorted(totals, key=lambda n: (-totals[n], n))[:top]
        selected = a.get(SELECTED_NODE, "")
        lines.append(
            f"  Score: top {len(best)} of {_plural(len(final), 'node')} by final score "
            "(each plugin: normalized score × weight, raw score in brackets)"
        )
        rows = [
            [("* " if n == selected else "  ") + n, str(totals[n])]
            + [f"{final[n].get(p, '-')} ({raw.get(n, {}).get(p, '-')})" for p in plugins]
            for n in best
        ]
        lines += _table(["  NODE", "TOTAL", *plugins], rows, indent="    ")
    for stage, key in (("Reserve", RESERVE_RESULT), ("Permit", PERMIT_RESULT),
                       ("PreBind", PREBIND_RESULT), ("Bind", BIND_RESULT)):
        results: dict[str, str] = _load(a.get(key), {})
        if not results:
            continue
        timeouts: dict[str, str] = _load(a.get(PERMIT_TIMEOUT), {}) if key == PERMIT_RESULT else {}
        parts = [
            f"{p} {v}" + (f" (timeout {timeouts[p]})" if v == WAIT and p in timeouts else "")
            for p, v in results.items()
        ]
        lines.append(f"  {stage}: " + "; ".join(parts))
    return lines


def explain_pod(
    namespace: str,
    name: str,
    annotations: Mapping[str, str],
    *,
    max_nodes: int = 20,
    top: int = 5,
    version: Version | None = None,
) -> str:
    """The explain view of one pod: every recorded attempt (``version``: the module's docstring)."""
    runs = attempts(annotations)
    head = f"Pod {namespace}/{name}"
    if not runs:
        return f"{head}: no scheduling attempt recorded\n"
    out: list[str] = [] if version is None else [f"Emulated Kubernetes version: {version}"]
    for i, a in enumerate(runs, 1):
        out.append(f"{head} — attempt {i} of {len(runs)}")
        out += explain_attempt(a, max_nodes=max_nodes, top=top, version=version)
    return "\n".join(out) + "\n"


def _pods_of(doc: Any) -> list[tuple[str, str, Mapping[str, str]]]:
    """(namespace, name, annotations) of every pod in a simulate report, a Pod or a list."""
    if isinstance(doc, Mapping) and isinstance(doc.get("pods"), list) and "summary" in doc:
        return [
            (p.get("namespace", "default"), p.get("name", ""), p.get("annotations") or {})
            for p in doc["pods"]
            if isinstance(p, Mapping)
        ]
    items: list[Any] = [doc]
    if isinstance(doc, Mapping) and isinstance(doc.get("items"), list):
        items = doc["items"]
    out = []
    for item in items:
        md = item.get("metadata") if isinstance(item, Mapping) else None
        if isinstance(md, Mapping):
            out.append((md.get("namespace") or "default", md.get("name", ""), md.get("annotations") or {}))
    return out


def explain(
    path: str,
    pod: str,
    *,
    max_nodes: int = 20,
    top: int = 5,
    text: str | None = None,
    version: Version | None = None,
) -> str:
    """``kubesched explain``: the view of ``pod`` ("name" or "namespace/name") in ``path``;
    ``version``: ``--emulated-version`` (the module's docstring)."""
    try:
        raw = text if text is not None else read_text(path)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror or e}", source=path) from None
    try:
        doc = decode_json(raw)  # nesting bounded, lone surrogates replaced
    except ValueError as e:
        raise ConfigError(f"not JSON: {e}", source=path) from None
    try:
        return _explain(doc, path, pod, max_nodes=max_nodes, top=top, version=version)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as e:
        text = " ".join(str(e).split())[:200]
        raise ConfigError(f"not a kubesched result: {type(e).__name__}: {text}", source=path) from None


def _check_version(doc: Any, path: str, version: Version) -> None:
    """A simulate report made for another minor than ``--emulated-version`` is refused."""
    if not (isinstance(doc, Mapping) and isinstance(doc.get("summary"), Mapping)):
        return
    made = doc["summary"].get("emulatedVersion")
    if isinstance(made, str) and made != str(version):
        raise ConfigError(
            f"Invalid value: {json.dumps(made)}: the result was made for Kubernetes {made}, not "
            f"{version} (--emulated-version): simulate again with --emulated-version {version}, or "
            "explain it without the flag",
            source=path,
            field="summary.emulatedVersion",
        )


def _explain(doc: Any, path: str, pod: str, *, max_nodes: int, top: int, version: Version | None) -> str:
    if version is not None:
        _check_version(doc, path, version)
    namespace, _, name = pod.rpartition("/")
    pods = _pods_of(doc)
    matches = [p for p in pods if p[1] == name and (not namespace or p[0] == namespace)]
    if not matches:
        raise ConfigError(f'pod "{pod}" not found', source=path, field="POD")
    if len(matches) > 1:
        spaces = ", ".join(sorted(p[0] for p in matches))
        raise ConfigError(f'pod "{pod}" is in several namespaces ({spaces}): give namespace/name', source=path, field="POD")
    ns, nm, annotations = matches[0]
    if not attempts(annotations):
        raise ConfigError(
            f'pod "{ns}/{nm}" has no recorded plugin results (simulate --explain, or run '
            "--record-plugin-results)",
            source=path,
        )
    return (
        explain_pod(ns, nm, annotations, max_nodes=max_nodes, top=top, version=version)
        + _device_lines(doc, ns, nm, annotations)
        + _pod_group_lines(doc, ns, nm)
    )


DRA_PLUGIN = "DynamicResources"


def _device_lines(doc: Any, namespace: str, name: str, annotations: Mapping[str, str]) -> str:
    """DRA: the allocator's verdict per node at the last attempt that ran DynamicResources'
    Filter (nodes it could give the claims' devices, and each reason, as upstream's plugin
    words it), and the claims reserved for the pod at the end of the run (the result's
    ``claims``) with their devices."""
    lines: list[str] = []
    verdicts: dict[str, str] = {}
    for a in reversed(attempts(annotations)):
        filters: dict[str, dict[str, str]] = _load(a.get(FILTER_RESULT), {})
        verdicts = {n: vs[DRA_PLUGIN] for n, vs in filters.items() if DRA_PLUGIN in vs}
        if verdicts:
            break
    if verdicts:
        lines.append("Devices (DynamicResources' allocator, per node, at the last attempt that asked it):")
        fit = sorted(n for n, v in verdicts.items() if v == PASSED)
        if fit:
            lines.append(f"  the claims can be allocated on {_plural(len(fit), 'node')}: {_names(fit)}")
        groups: dict[str, list[str]] = {}
        for n, v in verdicts.items():
            if v != PASSED:
                groups.setdefault(v, []).append(n)
        for reason, nodes in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"  {reason}: {_plural(len(nodes), 'node')}: {_names(sorted(nodes))}")
    claims = doc.get("claims") if isinstance(doc, Mapping) else None
    mine = [
        c for c in claims or []
        if isinstance(c, Mapping) and c.get("namespace") == namespace
        and any(isinstance(r, Mapping) and r.get("name") == name for r in c.get("reservedFor") or [])
    ]  # fmt: skip
    if mine:
        lines.append("ResourceClaims reserved for the pod at the end of the run:")
        for c in mine:
            alloc = c.get("allocation") or {}
            devices = ", ".join(
                f"{d.get('driver')}/{d.get('pool')}/{d.get('device')} (request {d.get('request')})"
                for d in alloc.get("devices") or [] if isinstance(d, Mapping)
            )  # fmt: skip
            users = ", ".join(str(r.get("name")) for r in c.get("reservedFor") or [] if isinstance(r, Mapping))
            lines.append(f"  {c.get('name')}: {devices or 'no devices'}; reserved for {users}")
    return "\n".join(lines) + "\n" if lines else ""


def _pod_group_lines(doc: Any, namespace: str, name: str) -> str:
    """The group's decision, for a member of a Workload API PodGroup (the result's ``podGroups``)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("podGroups"), list):
        return ""
    row = next((p for p in doc.get("pods", []) if isinstance(p, Mapping)
                and p.get("namespace") == namespace and p.get("name") == name), None)  # fmt: skip
    group = row.get("podGroup") if row is not None else None
    pg = next((g for g in doc["podGroups"] if isinstance(g, Mapping)
               and g.get("namespace") == namespace and g.get("name") == group), None)  # fmt: skip
    if pg is None:
        return ""
    policy = f"gang, minCount {pg.get('minCount')}" if pg.get("policy") == "Gang" else "basic"
    lines = [f"PodGroup {namespace}/{group} ({policy}), scheduled together in the PodGroup cycle:"]
    for c in pg.get("conditions") or []:
        reason = f" {c.get('reason')}" if c.get("reason") else ""
        message = f": {c.get('message')}" if c.get("message") else ""
        lines.append(f"  {c.get('type')} {c.get('status')}{reason}{message}")
    if len(lines) == 1:
        lines.append("  no condition (the group never reached the PodGroup cycle)")
    return "\n".join(lines) + "\n"
