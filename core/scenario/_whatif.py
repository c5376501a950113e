"""What-if overlays: the later documents that drain, delete or add to a scenario's objects at a
time, written after the scenario (``kubesched whatif``; docs/what-if.md).

A Node is changed by a later document of the whole node (a later document replaces an object as
written): a drain is that copy arriving at T with ``kubesched.io/drain: T``; a deletion (a node
lost) is that copy arriving 1 ms before T with ``kubesched.io/deletion: T`` (its pods go with
it; their controllers replace them); an addition is N copies of a pod (unbound, owned by
nobody) arriving at T.  ``kubesched compare snapshot.yaml overlay.yaml --config default
--config mine.yaml`` then compares policies under that change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from msgspec.structs import replace

from kubesched._errors import ConfigError
from kubesched.api._durations import format_duration, parse_duration
from kubesched.api._objects import ObjectMeta, Pod, PodStatus
from kubesched.scenario._manifests import (
    ARRIVAL_ANNOTATION,
    DELETION_ANNOTATION,
    DRAIN_ANNOTATION,
    Manifest,
)
from kubesched.scenario._writing import document, dump
from kubesched.validation._validation import go_quote

ZONE_LABEL = "topology.kubernetes.io/zone"

__all__ = ["ZONE_LABEL", "overlay", "overlay_text"]


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


def overlay(
    manifests: Sequence[Manifest],
    *,
    drain: Sequence[str] = (),
    delete_node: Sequence[str] = (),
    lose_zone: Sequence[str] = (),
    add: Sequence[str] = (),
    zone_label: str = ZONE_LABEL,
) -> list[Any]:
    """The overlay's objects, in arrival order (then in the order given): a later document of
    an object must come after its earlier ones.  Each change is written as ``kubesched whatif``
    takes it: ``drain`` and ``delete_node`` ``NODE@TIME``, ``lose_zone`` ``ZONE@TIME`` (the
    nodes whose ``zone_label`` is ZONE), ``add`` ``[NS/]POD=COUNT@TIME``; a bad one is a
    :class:`~kubesched.ConfigError` naming its option."""
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

    for text in drain:
        name, at = _at(text, "--drain")
        t = _seconds(at)
        out.append((at, _copy_at(node(name, "--drain", text), at, {ARRIVAL_ANNOTATION: t, DRAIN_ANNOTATION: t},
                                 "--drain", text)))  # fmt: skip
    deletions: list[tuple[str, float, str, str]] = [(*_at(t, "--delete-node"), "--delete-node", t) for t in delete_node]
    for text in lose_zone:
        zone, at = _at(text, "--lose-zone")
        names = [n for n, m in nodes.items() if m.obj.metadata.labels.get(zone_label) == zone]
        if not names:
            raise ConfigError(f"Invalid value: {go_quote(text)}: no Node has the label {zone_label}={zone}",
                              field="--lose-zone")
        deletions += [(n, at, "--lose-zone", text) for n in names]
    for name, at, flag, text in deletions:
        # a deletion comes after the document that carries it: that document arrives 1 ms before
        before = {ARRIVAL_ANNOTATION: _seconds(max(at - 0.001, 0.0)), DELETION_ANNOTATION: _seconds(at)}
        out.append((at - 0.001, _copy_at(node(name, flag, text), at - 0.001, before, flag, text)))
    for text in add:
        what, at = _at(text, "--add")
        match = _ADD.match(what)
        if match is None:
            raise ConfigError(f"Invalid value: {go_quote(text)}: expected [NAMESPACE/]POD=COUNT@TIME, e.g. web=50@5m",
                              field="--add")
        ns, name, n = match["ns"] or "default", match["pod"], int(match["n"])
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


def overlay_text(files: Sequence[str], objs: Sequence[Any]) -> str:
    """The overlay file for the scenario ``files``: a comment saying how to use it, then one
    document per object."""
    scenario = " ".join(files)
    text = f"# kubesched whatif overlay for {scenario}: pass it after the scenario (kubesched simulate {scenario} OVERLAY)\n"
    return text + "".join(dump(document(o)) for o in objs)
