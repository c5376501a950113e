"""What-if: drain a node during a simulation, and ``kubesched whatif``, which writes overlays.

Draining (``kubesched.io/drain: D`` on a Node document), as ``kubectl drain --ignore-daemonsets
--force`` does it::

    at D:  cordon (spec.unschedulable: true) ─► evict every pod on the node, in creation order
           (not DaemonSet pods, not mirror pods; a finished pod is just deleted)
    evict: the pod's PodDisruptionBudget allows it (disruptionsAllowed > 0, one budget at most)
           ─► its budget spent, DisruptionTarget (EvictionByEvictionAPI) on the pod, graceful
              deletion: its controller replaces it at once, as upstream
           refused ─► that pod is tried again 5 s later (kubectl drain's retry), until it goes

Drains are a timed source of the simulation's loop (:class:`Drains`): a drain still refused when
the run ends is counted as unfinished (``summary.cutShort.drains``).

``kubesched whatif SCENARIO... [--drain NODE@T] [--delete-node NODE@T] [--lose-zone ZONE@T]
[--add [NS/]POD=N@T] -o overlay.yaml`` writes the later documents that do these to the scenario's
objects, to pass after it: ``kubesched compare snapshot.yaml overlay.yaml --config default
--config mine.yaml``.  A Node is changed by a later document of the whole node (a later document
replaces an object as written): a drain is that copy arriving at T with ``kubesched.io/drain: T``;
a deletion (a node lost) is that copy arriving 1 ms before T with ``kubesched.io/deletion: T``
(its pods go with it; their controllers replace them); ``--add`` writes N copies of a pod
(unbound, owned by nobody) arriving at T.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched.api._durations import format_duration, parse_duration
from kubesched.api._labels import selector_matches
from kubesched.api._objects import ObjectMeta, Pod, PodCondition, PodStatus, to_builtins
from kubesched.validation._validation import go_quote

from .._errors import ConfigError
from .manifests import ARRIVAL_ANNOTATION, DELETION_ANNOTATION, Manifest

DRAIN_ANNOTATION = "kubesched.io/drain"
EVICTION_RETRY = 5.0
"""Seconds before a refused eviction is tried again (``kubectl drain``'s)."""
ZONE_LABEL = "topology.kubernetes.io/zone"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_TERMINAL = ("Succeeded", "Failed")

__all__ = ["DRAIN_ANNOTATION", "Drains", "add_arguments", "cmd_whatif", "document", "dump"]


# --- manifests out ------------------------------------------------------------------------------


def document(obj: Any) -> dict[str, Any]:
    """An API object as a manifest: apiVersion and kind first, an empty status left out."""
    body = to_builtins(obj)
    body.pop("apiVersion", None)
    body.pop("kind", None)
    if not body.get("status"):
        body.pop("status", None)
    return {"apiVersion": obj.api_version, "kind": obj.kind, **body}


def dump(doc: dict[str, Any]) -> str:
    """One YAML document, ``---`` first, in block style (PyYAML's ``safe_dump`` layout, written
    directly: a hundred thousand pods in seconds, where PyYAML's representer takes a minute).
    A string is plain only when no YAML 1.1 resolver could read it as anything else, else
    double-quoted with JSON's escapes (and the characters YAML may not hold raw escaped too)."""
    out = ["---\n"]
    _mapping(doc, "", out)
    return "".join(out)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_NOT_PLAIN = {"yes", "no", "true", "false", "on", "off", "null", "y", "n"}
# what YAML may not hold raw in a double-quoted scalar (non-printable, or a line break)
_UNPRINTABLE = re.compile("[^\x09\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        if _PLAIN.fullmatch(v) and v.lower() not in _NOT_PLAIN:
            return v
        quoted = json.dumps(v, ensure_ascii=False)
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return ".nan"
        if v in (float("inf"), float("-inf")):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v).lower()
        return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text
    if isinstance(v, dict | list) and not v:
        return "{}" if isinstance(v, dict) else "[]"
    raise TypeError(f"cannot write {type(v).__name__} as YAML")


def _mapping(d: dict[str, Any], indent: str, out: list[str]) -> None:
    for k, v in d.items():
        key = _scalar(str(k))
        if isinstance(v, dict) and v:
            out.append(f"{indent}{key}:\n")
            _mapping(v, indent + "  ", out)
        elif isinstance(v, list) and v:
            out.append(f"{indent}{key}:\n")
            _sequence(v, indent, out)
        else:
            out.append(f"{indent}{key}: {_scalar(v)}\n")


def _sequence(items: list[Any], indent: str, out: list[str]) -> None:
    for item in items:
        if isinstance(item, dict) and item:
            first = len(out)
            _mapping(item, indent + "  ", out)
            out[first] = f"{indent}- {out[first][len(indent) + 2:]}"
        elif isinstance(item, list) and item:
            out.append(f"{indent}-\n")
            _sequence(item, indent + "  ", out)
        else:
            out.append(f"{indent}- {_scalar(item)}\n")


# --- draining, in a simulation ------------------------------------------------------------------


def planned_drains(manifests: Sequence[Manifest]) -> list[tuple[float, int, str]]:
    """(seconds, order, node) of every ``kubesched.io/drain`` of ``manifests``, in time order; a
    bad one is one ConfigError naming its document."""
    out = []
    fld = f"metadata.annotations[{DRAIN_ANNOTATION}]"
    for m in manifests:
        raw = m.obj.metadata.annotations.get(DRAIN_ANNOTATION)
        if raw is None:
            continue
        if m.kind != "Node":
            raise ConfigError(f"Invalid value: {go_quote(raw)}: only a Node is drained", source=m.label, field=fld)
        try:
            at = parse_duration(raw)
        except ValueError as e:
            raise ConfigError(str(e), source=m.label, field=fld) from None
        if at < m.arrival:
            raise ConfigError(
                f"Invalid value: {go_quote(raw)}: must not be earlier than the arrival ({m.arrival:g}s)",
                source=m.label,
                field=fld,
            )
        out.append((at, m.order, m.obj.metadata.name))
    return sorted(out)


class Drains:
    """The node drains of one simulation, a timed source of its loop (see the module docstring).

    ``next_planned`` (the next drain to begin) belongs with the run's other timed events; the
    retries of refused evictions are in ``next_due`` only, so that a drain a budget blocks for
    ever does not keep a run going for ever (it ends as ``retrying``, with the drain unfinished).
    """

    def __init__(self, manifests: Sequence[Manifest]) -> None:
        self.plan = planned_drains(manifests)
        self._next = 0
        self.blocked: dict[str, float] = {}
        """Node → when (anyio time) its refused evictions are tried again."""
        self.cluster: Any = None
        self.start = 0.0

    def __bool__(self) -> bool:
        return bool(self.plan)

    def bind(self, cluster: Any, start: float) -> None:
        """The fake cluster it drains, and the anyio time of the run's start."""
        self.cluster, self.start = cluster, start

    def next_planned(self) -> float | None:
        if self._next >= len(self.plan):
            return None
        return self.start + self.plan[self._next][0]

    def next_due(self) -> float | None:
        times = [t for t in (self.next_planned(), min(self.blocked.values(), default=None)) if t is not None]
        return min(times, default=None)

    def pending(self) -> int:
        """Drains not begun, or with evictions still refused."""
        return len(self.plan) - self._next + len(self.blocked)

    def run_due(self) -> None:
        now = anyio.current_time()
        while self._next < len(self.plan) and self.start + self.plan[self._next][0] <= now + 1e-9:
            name = self.plan[self._next][2]
            self._next += 1
            self._cordon(name)
            self.blocked[name] = now
        for name, at in sorted(self.blocked.items(), key=lambda item: (item[1], item[0])):
            if at > now + 1e-9:
                continue
            if self._evict_all(name):
                del self.blocked[name]
            else:
                self.blocked[name] = now + EVICTION_RETRY

    def _cordon(self, name: str) -> None:
        node = self.cluster.get("Node", "", name)
        if node is not None and not node.spec.unschedulable:
            meta = replace(node.metadata, resource_version="")
            self.cluster.update(replace(node, metadata=meta, spec=replace(node.spec, unschedulable=True)))

    def _evict_all(self, name: str) -> bool:
        """Evict what may go now; whether nothing is left to evict."""
        if self.cluster.get("Node", "", name) is None:
            return True  # deleted meanwhile: its pods went with it
        done = True
        for pod in self.cluster.pods():
            if pod.spec.node_name != name or pod.metadata.deletion_timestamp is not None or _stays(pod):
                continue
            if not self._evict(pod):
                done = False
        return done

    def _evict(self, pod: Pod) -> bool:
        """The eviction API: refused (False) when the pod's budget allows no disruption."""
        cluster, md = self.cluster, pod.metadata
        if pod.status.phase not in _TERMINAL:
            budgets = [
                b for b in cluster.list("PodDisruptionBudget")
                if b.metadata.namespace == md.namespace and selector_matches(b.spec.selector, md.labels)
            ]  # fmt: skip
            if len(budgets) > 1:
                return False  # upstream: "This pod has more than one PodDisruptionBudget"
            now = cluster.timestamp()
            if budgets:
                pdb = budgets[0]
                st = pdb.status
                if st is None or st.disruptions_allowed <= 0:
                    return False
                spent = replace(st, disruptions_allowed=st.disruptions_allowed - 1,
                                disrupted_pods={**st.disrupted_pods, md.name: now})  # fmt: skip
                cluster.update(replace(pdb, metadata=replace(pdb.metadata, resource_version=""), status=spent))
            cond = PodCondition(type="DisruptionTarget", status="True", reason="EvictionByEvictionAPI",
                                message="Eviction API: evicting", last_transition_time=now)  # fmt: skip
            conditions = [c for c in pod.status.conditions if c.type != cond.type] + [cond]
            cluster.update(replace(pod, metadata=replace(md, resource_version=""),
                                   status=replace(pod.status, conditions=conditions)))  # fmt: skip
        cluster.delete_now("Pod", md.namespace, md.name, graceful=True)
        return True


def _stays(pod: Pod) -> bool:
    """What ``kubectl drain --ignore-daemonsets`` leaves: DaemonSet pods and mirror (static) pods."""
    if MIRROR_ANNOTATION in pod.metadata.annotations:
        return True
    return any(r.controller and r.kind in ("DaemonSet", "Node") for r in pod.metadata.owner_references)


# --- the command ----------------------------------------------------------------------------------

_AT = re.compile(r"^(?P<what>[^@]+)@(?P<at>[^@]+)$")
_ADD = re.compile(r"^(?:(?P<ns>[^/=@]+)/)?(?P<pod>[^/=@]+)=(?P<n>[0-9]+)$")
MAX_COPIES = 100_000


def _at(text: str, flag: str) -> tuple[str, float]:
    m = _AT.match(text)
    if m is None:
        raise ConfigError(f"Invalid value: {go_quote(text)}: expected NAME@TIME, e.g. n1@10m", field=flag)
    try:
        at = parse_duration(m["at"])
    except ValueError as e:
        raise ConfigError(f"{e}", field=flag) from None
    if at < 0:
        raise ConfigError(f"Invalid value: {go_quote(text)}: the time must not be negative", field=flag)
    return m["what"], at


def _copy_at(m: Manifest, at: float, annotations: dict[str, str], flag: str, text: str) -> Any:
    """The latest document of an object, to arrive again at ``at`` with ``annotations``."""
    if at <= m.arrival + 1e-9:
        raise ConfigError(
            f"Invalid value: {go_quote(text)}: must be later than the {m.kind}'s last document "
            f"({m.label}, arriving at {m.arrival:g}s)",
            field=flag,
        )
    if m.deletion is not None and m.deletion <= at:
        raise ConfigError(
            f"Invalid value: {go_quote(text)}: the {m.kind} is deleted at {m.deletion:g}s ({m.label}), before",
            field=flag,
        )
    md = m.obj.metadata
    kept = {k: v for k, v in md.annotations.items() if k not in (ARRIVAL_ANNOTATION, DELETION_ANNOTATION, DRAIN_ANNOTATION)}
    meta = replace(md, uid="", resource_version="", annotations={**kept, **annotations})
    return replace(m.obj, metadata=meta)


def _seconds(at: float) -> str:
    return format_duration(round(at * 1e9))


def overlay(manifests: Sequence[Manifest], args: argparse.Namespace) -> list[Any]:
    """The overlay's objects, in arrival order (then in the order of the flags): a later
    document of an object must come after its earlier ones."""
    nodes: dict[str, Manifest] = {}
    pods: dict[tuple[str, str], Manifest] = {}
    for m in manifests:  # arrival order: the last one of each object wins
        if m.kind == "Node":
            nodes[m.obj.metadata.name] = m
        elif m.kind == "Pod":
            pods[(m.obj.metadata.namespace, m.obj.metadata.name)] = m
    out: list[tuple[float, Any]] = []

    targeted: dict[str, str] = {}

    def node(name: str, flag: str, text: str) -> Manifest:
        m = nodes.get(name)
        if m is None:
            raise ConfigError(f"Invalid value: {go_quote(text)}: no Node {name} in the scenario", field=flag)
        if name in targeted:  # its second document would bring it back, or drain what is gone
            raise ConfigError(f"Invalid value: {go_quote(text)}: Node {name} is {targeted[name]} already", field=flag)
        targeted[name] = f"in {flag} {text}"
        return m

    for text in args.drain:
        name, at = _at(text, "--drain")
        t = _seconds(at)
        out.append((at, _copy_at(node(name, "--drain", text), at, {ARRIVAL_ANNOTATION: t, DRAIN_ANNOTATION: t},
                                 "--drain", text)))  # fmt: skip
    deletions: list[tuple[str, float, str, str]] = [(*_at(t, "--delete-node"), "--delete-node", t) for t in args.delete_node]
    for text in args.lose_zone:
        zone, at = _at(text, "--lose-zone")
        names = [n for n, m in nodes.items() if m.obj.metadata.labels.get(args.zone_label) == zone]
        if not names:
            raise ConfigError(f"Invalid value: {go_quote(text)}: no Node has the label {args.zone_label}={zone}",
                              field="--lose-zone")
        deletions += [(n, at, "--lose-zone", text) for n in names]
    for name, at, flag, text in deletions:
        # a deletion comes after the document that carries it: that document arrives 1 ms before
        before = {ARRIVAL_ANNOTATION: _seconds(max(at - 0.001, 0.0)), DELETION_ANNOTATION: _seconds(at)}
        out.append((at - 0.001, _copy_at(node(name, flag, text), at - 0.001, before, flag, text)))
    for text in args.add:
        what, at = _at(text, "--add")
        add = _ADD.match(what)
        if add is None:
            raise ConfigError(f"Invalid value: {go_quote(text)}: expected [NAMESPACE/]POD=COUNT@TIME, e.g. web=50@5m",
                              field="--add")
        ns, name, n = add["ns"] or "default", add["pod"], int(add["n"])
        if not 1 <= n <= MAX_COPIES:
            raise ConfigError(f"Invalid value: {go_quote(text)}: the count must be 1 to {MAX_COPIES}", field="--add")
        src = pods.get((ns, name))
        if src is None:
            raise ConfigError(f"Invalid value: {go_quote(text)}: no Pod {ns}/{name} in the scenario", field="--add")
        out += [(at, c) for c in _copies(src.obj, n, at)]
    return [obj for _, obj in sorted(out, key=lambda item: item[0])]


def _copies(pod: Pod, n: int, at: float) -> list[Pod]:
    """``n`` unbound copies of ``pod`` named ``<pod>-whatif-<i>``, owned by nobody, arriving at ``at``."""
    md = pod.metadata
    kept = {k: v for k, v in md.annotations.items() if k not in (ARRIVAL_ANNOTATION, DELETION_ANNOTATION, DRAIN_ANNOTATION)}
    if at > 0:
        kept[ARRIVAL_ANNOTATION] = _seconds(at)
    spec = replace(pod.spec, node_name="")
    return [
        Pod(
            metadata=ObjectMeta(name=f"{md.name}-whatif-{i}", namespace=md.namespace, labels=md.labels, annotations=kept),
            spec=spec,
            status=PodStatus(),
        )
        for i in range(1, n + 1)
    ]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``kubesched whatif``."""
    p.add_argument("files", nargs="+", metavar="SCENARIO", help="the scenario's manifests (a snapshot, say)")
    p.add_argument("--drain", action="append", default=[], metavar="NODE@TIME",
                   help="cordon NODE at TIME and evict its pods as kubectl drain does (PDBs respected)")
    p.add_argument("--delete-node", action="append", default=[], metavar="NODE@TIME",
                   help="delete NODE at TIME: its pods go with it, their controllers replace them")
    p.add_argument("--lose-zone", action="append", default=[], metavar="ZONE@TIME",
                   help="delete every node of ZONE at TIME (see --zone-label)")
    p.add_argument("--zone-label", default=ZONE_LABEL, metavar="KEY", help=f"the zone label of --lose-zone (default {ZONE_LABEL})")
    p.add_argument("--add", action="append", default=[], metavar="[NS/]POD=COUNT@TIME",
                   help="COUNT unbound copies of the scenario's POD arriving at TIME")
    p.add_argument("-o", "--output", metavar="FILE", default="-", help="where to write the overlay (default: stdout)")


def cmd_whatif(args: argparse.Namespace) -> int:
    """Run ``kubesched whatif``: write the overlay; 2 for bad input."""
    from .manifests import load_manifests

    if not (args.drain or args.delete_node or args.lose_zone or args.add):
        raise ConfigError("nothing to do: give --drain, --delete-node, --lose-zone or --add", field="--drain")
    # a field the kind does not have is simulate's to refuse (or not, as its --validate says)
    manifests = load_manifests(
        args.files, validation="Warn", warn=lambda line: print(f"kubesched: warning: {line}", file=sys.stderr)
    )
    objs = overlay(manifests, args)
    scenario = " ".join(args.files)
    text = f"# kubesched whatif overlay for {scenario}: pass it after the scenario (kubesched simulate {scenario} OVERLAY)\n"
    text += "".join(dump(document(o)) for o in objs)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ConfigError(f"cannot write: {e.strerror or e}", source=args.output) from None
    return 0
