"""Loading Kubernetes manifests for ``kubesched simulate``: decode, validate, order by arrival.

Every error is one :class:`ConfigError` line naming the file, the document and the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import yaml

from ._errors import ConfigError
from ._objects import KINDS, Node, Pod, PodGroup, PriorityClass, convert
from ._resources import QuantityError, parse_quantity

ARRIVAL_ANNOTATION = "kubesched.io/arrival"
# libyaml's safe loader when PyYAML was built with it (8x faster), else the pure-Python one
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
INPUT_KINDS = {
    ("v1", "Node"),
    ("v1", "Pod"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("policy/v1", "PodDisruptionBudget"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
}
# the PriorityClasses every cluster has
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """A Go duration ("90s", "5m", "1h30m", "500ms", "-1m") in seconds; a bare number is seconds."""
    s = str(text).strip()
    if not s:
        raise ValueError('time: invalid duration ""')
    try:
        value = float(s)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise ValueError(f'time: invalid duration "{s}"')
        return value
    sign, body = (-1.0, s[1:]) if s[0] == "-" else (1.0, s[1:] if s[0] == "+" else s)
    pos = 0
    total = 0.0
    for m in _DURATION_PART.finditer(body):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(body) or pos == 0:
        raise ValueError(f'time: invalid duration "{s}"')
    return sign * total


@dataclass
class Manifest:
    """One decoded object with where it came from and when it arrives."""

    obj: Any
    kind: str
    source: str
    doc: int
    arrival: float
    order: int
    where: str = ""

    @property
    def label(self) -> str:
        """Where the object came from, as error messages name it: ``file: document N (Kind name)``."""
        if self.where:
            return self.where
        md = self.obj.metadata
        name = f"{md.namespace}/{md.name}" if md.namespace else md.name
        return f"{self.source}: document {self.doc} ({self.kind} {name})"


def _where(source: str, doc: int, kind: str = "", name: str = "") -> str:
    what = f" ({kind} {name})" if kind and name else f" ({kind})" if kind else ""
    return f"{source}: document {doc}{what}"


_GOT_TYPES: dict[str, Any] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, float),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _resolve(data: Any, parts: list[str], got: Any) -> str | None:
    """The path below ``data`` with each ``[...]`` (a map key msgspec does not name) filled in."""
    if not parts:
        return "" if got is None or got(data) else None
    head, rest = parts[0], parts[1:]
    if head == "[...]":
        if not isinstance(data, dict):
            return None
        for key, value in data.items():
            sub = _resolve(value, rest, got)
            if sub is not None:
                return f"[{key}]{sub}"
        return None
    if head.startswith("["):
        i = int(head[1:-1])
        if not isinstance(data, list) or i >= len(data):
            return None
        sub = _resolve(data[i], rest, got)
        return None if sub is None else f"{head}{sub}"
    if not isinstance(data, dict) or head not in data:
        return None
    sub = _resolve(data[head], rest, got)
    return None if sub is None else f".{head}{sub}"


def _msgspec_field(err: msgspec.ValidationError, data: Any = None) -> tuple[str, str]:
    """(field path, message) of a msgspec error, the map keys filled in from ``data``."""
    text = str(err)
    m = re.search(r" - at `\$(.*)`$", text)
    if not m:
        return "", text
    msg, path = text[: m.start()], m.group(1)
    if "[...]" in path:
        parts = [f".{a}" if a else f"[{b}]" for a, b in _PATH_PART.findall(path)]
        parts = [p[1:] if p.startswith(".") else p for p in parts]
        got = re.search(r"got `(\w+)`", msg)
        resolved = _resolve(data, parts, _GOT_TYPES.get(got.group(1)) if got else None)
        if resolved is not None:
            path = resolved
    return path.lstrip("."), msg


def _go(value: Any) -> str:
    """A value as Go's field errors print it (strings quoted with double quotes)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def _supported(values: Iterable[str]) -> str:
    return ", ".join(_go(v) for v in sorted(values))


_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _check_node_selector_requirements(reqs: Any, path: str) -> None:
    """``ValidateNodeSelectorRequirement``."""
    for i, r in enumerate(reqs):
        p = f"{path}[{i}]"
        if r.operator in ("In", "NotIn") and not r.values:
            raise ConfigError("Required value: must be specified when `operator` is 'In' or 'NotIn'", field=f"{p}.values")
        if r.operator in ("Exists", "DoesNotExist") and r.values:
            raise ConfigError(
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'", field=f"{p}.values"
            )
        if r.operator in ("Gt", "Lt") and len(r.values) != 1:
            raise ConfigError(
                "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'", field=f"{p}.values"
            )
        if r.operator not in _NODE_SELECTOR_OPS:
            raise ConfigError(
                f"Unsupported value: {_go(r.operator)}: supported values: {_supported(_NODE_SELECTOR_OPS)}",
                field=f"{p}.operator",
            )


def _check_node_selector_term(term: Any, path: str) -> None:
    _check_node_selector_requirements(term.match_expressions, f"{path}.matchExpressions")
    _check_node_selector_requirements(term.match_fields, f"{path}.matchFields")


def _check_label_selector(sel: Any, path: str) -> None:
    """``ValidateLabelSelectorRequirement``."""
    if sel is None:
        return
    for i, r in enumerate(sel.match_expressions):
        p = f"{path}.matchExpressions[{i}]"
        if r.operator in ("In", "NotIn"):
            if not r.values:
                raise ConfigError(
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'", field=f"{p}.values"
                )
        elif r.operator in ("Exists", "DoesNotExist"):
            if r.values:
                raise ConfigError(
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    field=f"{p}.values",
                )
        else:
            raise ConfigError(f"Invalid value: {_go(r.operator)}: not a valid selector operator", field=f"{p}.operator")


def _check_pod_affinity(aff: Any, path: str) -> None:
    if aff is None:
        return
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    pref = "preferredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(aff.required_during_scheduling_ignored_during_execution):
        _check_label_selector(term.label_selector, f"{path}.{req}[{i}].labelSelector")
        _check_label_selector(term.namespace_selector, f"{path}.{req}[{i}].namespaceSelector")
    for i, wt in enumerate(aff.preferred_during_scheduling_ignored_during_execution):
        term = wt.pod_affinity_term
        _check_label_selector(term.label_selector, f"{path}.{pref}[{i}].podAffinityTerm.labelSelector")
        _check_label_selector(term.namespace_selector, f"{path}.{pref}[{i}].podAffinityTerm.namespaceSelector")


def _check_tolerations(tolerations: Any, path: str) -> None:
    """``validateTolerations``."""
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if not t.key and t.operator != "Exists":
            raise ConfigError(
                f'Invalid value: {_go(t.operator)}: operator must be Exists when `key` is empty, which means '
                '"match all values and all keys"',
                field=f"{p}.operator",
            )
        if t.operator == "Exists" and t.value:
            raise ConfigError(
                f"Invalid value: {_go(t.value)}: value must be empty when `operator` is 'Exists'", field=f"{p}.operator"
            )
        if t.operator not in ("", "Equal", "Exists"):
            raise ConfigError(
                f'Unsupported value: {_go(t.operator)}: supported values: "Equal", "Exists"', field=f"{p}.operator"
            )
        if t.effect and t.effect not in _TAINT_EFFECTS:
            raise ConfigError(
                f"Unsupported value: {_go(t.effect)}: supported values: {_supported(_TAINT_EFFECTS)}",
                field=f"{p}.effect",
            )


def _check_pod_spec(pod: Pod) -> None:
    spec = pod.spec
    for group, containers in (("containers", spec.containers), ("initContainers", spec.init_containers)):
        for i, c in enumerate(containers):
            _check_quantities(c.resources.requests, f"spec.{group}[{i}].resources.requests")
            _check_quantities(c.resources.limits, f"spec.{group}[{i}].resources.limits")
    _check_quantities(spec.overhead, "spec.overhead")
    _check_tolerations(spec.tolerations, "spec.tolerations")
    aff = spec.affinity
    if aff is not None and aff.node_affinity is not None:
        na, p = aff.node_affinity, "spec.affinity.nodeAffinity"
        if na.required_during_scheduling_ignored_during_execution is not None:
            req = f"{p}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
            for i, term in enumerate(na.required_during_scheduling_ignored_during_execution.node_selector_terms):
                _check_node_selector_term(term, f"{req}[{i}]")
        for i, pt in enumerate(na.preferred_during_scheduling_ignored_during_execution):
            _check_node_selector_term(pt.preference, f"{p}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference")
    if aff is not None:
        _check_pod_affinity(aff.pod_affinity, "spec.affinity.podAffinity")
        _check_pod_affinity(aff.pod_anti_affinity, "spec.affinity.podAntiAffinity")
    for i, tsc in enumerate(spec.topology_spread_constraints):
        _check_label_selector(tsc.label_selector, f"spec.topologySpreadConstraints[{i}].labelSelector")


def _check_quantities(rl: Any, path: str) -> None:
    if not rl:
        return
    if not isinstance(rl, dict):
        raise ConfigError("must be a map of resource quantities", field=path)
    for name, value in rl.items():
        try:
            q = parse_quantity(value)
        except QuantityError as e:
            raise ConfigError(str(e), field=f"{path}.{name}") from None
        if q < 0:
            raise ConfigError(f"Invalid value: {_go(value)}: must be greater than or equal to 0", field=f"{path}.{name}")


def _validate(obj: Any, kind: str) -> None:
    if not obj.metadata.name:
        raise ConfigError("Required value: name or generateName is required", field="metadata.name")
    if kind == "Pod":
        _check_pod_spec(obj)
    elif kind == "PodDisruptionBudget":
        _check_label_selector(obj.spec.selector, "spec.selector")
    elif kind == "Node":
        node: Node = obj
        for i, taint in enumerate(node.spec.taints):
            if not taint.effect:
                raise ConfigError("Required value", field=f"spec.taints[{i}].effect")
            if taint.effect not in _TAINT_EFFECTS:
                raise ConfigError(
                    f"Unsupported value: {_go(taint.effect)}: supported values: {_supported(_TAINT_EFFECTS)}",
                    field=f"spec.taints[{i}].effect",
                )
        _check_quantities(node.status.allocatable, "status.allocatable")
        _check_quantities(node.status.capacity, "status.capacity")
        if not node.status.allocatable and node.status.capacity:
            node.status.allocatable = dict(node.status.capacity)
    elif kind == "PodGroup":
        pg: PodGroup = obj
        _check_quantities(pg.spec.min_resources, "spec.minResources")
        if pg.spec.min_member < 1:
            raise ConfigError(f"Invalid value: {pg.spec.min_member}: must be at least 1", field="spec.minMember")


def load_documents(path: str, text: str | None = None) -> list[tuple[int, Any]]:
    """The documents of one YAML / JSON file (1-based document numbers).

    ``text`` gives the content directly (``path`` then only names it in errors).
    """
    p = Path(path)
    if text is None:
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot read: {e.strerror or e}", source=path) from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"cannot read: not UTF-8 text (byte {e.start})", source=path) from None
    if p.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}", source=path) from None
        kind = data.get("kind") if isinstance(data, dict) else None
        items = data.get("items") if isinstance(kind, str) and kind.endswith("List") else None
        docs = items if isinstance(items, list) else [data]
        return list(enumerate(docs, start=1))
    try:
        docs = list(yaml.load_all(text, Loader=_YAML_LOADER))
    except yaml.YAMLError:
        # parse again with the pure-Python loader: its messages are the clearer ones
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise _yaml_error(path, text, e) from None
    return [(i, d) for i, d in enumerate(docs, start=1) if d is not None]


def _yaml_error(path: str, text: str, e: yaml.YAMLError) -> ConfigError:
    """One line for a YAML syntax error: where, and what."""
    mark = getattr(e, "problem_mark", None)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    doc = text[: _offset(text, mark)].count("\n---") + 1 if mark is not None else 1
    return ConfigError(f"malformed YAML{where}: {problem}", source=f"{path}: document {doc}")


def _offset(text: str, mark: Any) -> int:
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[: mark.line])


def load_manifests(paths: Iterable[str], texts: dict[str, str] | None = None) -> list[Manifest]:
    """Decode, validate and order (by arrival, then file order) every object in ``paths``.

    ``texts`` maps a path to its content, for manifests that are not files (the demo).
    """
    out: list[Manifest] = []
    order = 0
    seen: dict[tuple[str, str, str], str] = {}
    texts = texts or {}
    for path in paths:
        for doc, data in load_documents(path, texts.get(path)):
            where = _where(path, doc)
            if not isinstance(data, dict):
                raise ConfigError("a document must be a mapping (a Kubernetes object)", source=where)
            api, kind = data.get("apiVersion"), data.get("kind")
            if not kind:
                raise ConfigError("Required value: kind is required", source=where, field="kind")
            if not isinstance(kind, str):
                raise ConfigError(f"Invalid value: {kind!r}: must be a string", source=where, field="kind")
            if not api:
                raise ConfigError("Required value: apiVersion is required", source=where, field="apiVersion")
            if not isinstance(api, str):
                raise ConfigError(f"Invalid value: {api!r}: must be a string", source=where, field="apiVersion")
            if (api, kind) not in INPUT_KINDS:
                supported = ", ".join(f"{a}/{k}" for a, k in sorted(INPUT_KINDS))
                raise ConfigError(f'unknown kind "{api}/{kind}" (supported: {supported})', source=where, field="kind")
            md = data.get("metadata") or {}
            name = md.get("name", "") if isinstance(md, dict) else ""
            ns = md.get("namespace", "") if isinstance(md, dict) else ""
            if isinstance(name, str) and isinstance(ns, str) and ns and name:
                name = f"{ns}/{name}"
            where = _where(path, doc, kind, name if isinstance(name, str) else "")
            try:
                obj = convert(data, KINDS[(api, kind)])
            except msgspec.ValidationError as e:
                fld, msg = _msgspec_field(e, data)
                raise ConfigError(msg, source=where, field=fld) from None
            try:
                _validate(obj, kind)
            except ConfigError as e:
                raise e.at(source=where) from None
            if kind in ("Pod", "PodDisruptionBudget", "PodGroup") and not obj.metadata.namespace:
                obj.metadata.namespace = "default"
            key = (kind, obj.metadata.namespace, obj.metadata.name)
            if key in seen:
                raise ConfigError(f"already defined in {seen[key]}", source=where, field="metadata.name")
            seen[key] = where
            arrival = 0.0
            raw = obj.metadata.annotations.get(ARRIVAL_ANNOTATION)
            if raw is not None:
                try:
                    arrival = parse_duration(raw)
                except ValueError as e:
                    raise ConfigError(str(e), source=where, field=f"metadata.annotations[{ARRIVAL_ANNOTATION}]") from None
                if arrival < 0:
                    raise ConfigError(
                        f"Invalid value: {_go(raw)}: must not be negative",
                        source=where,
                        field=f"metadata.annotations[{ARRIVAL_ANNOTATION}]",
                    )
            out.append(Manifest(obj, kind, path, doc, arrival, order, where))
            order += 1
    _check_priority_classes(out)
    out.sort(key=lambda m: (m.arrival, m.order))
    return out


def _check_priority_classes(manifests: list[Manifest]) -> None:
    """As the PriorityClass admission does when each object is created (in arrival order)."""
    classes: dict[str, Manifest] = {}
    default = ""
    for m in sorted(manifests, key=lambda m: (m.arrival, m.order)):
        if isinstance(m.obj, PriorityClass):
            classes[m.obj.metadata.name] = m
            if m.obj.global_default:
                if default:
                    raise ConfigError(
                        f"Forbidden: PriorityClass {default} is already marked as default. "
                        "Only one default can exist",
                        source=m.label,
                        field="globalDefault",
                    )
                default = m.obj.metadata.name
        elif isinstance(m.obj, Pod):
            name = m.obj.spec.priority_class_name
            if not name or name in classes or name in SYSTEM_PRIORITY_CLASSES:
                continue
            later = next((c for c in manifests if isinstance(c.obj, PriorityClass) and c.obj.metadata.name == name), None)
            why = f" (it arrives later, at {later.arrival:g}s)" if later is not None else ""
            raise ConfigError(
                f"no PriorityClass with name {name} was found{why}",
                source=m.label,
                field="spec.priorityClassName",
            )


def system_priority_classes() -> list[PriorityClass]:
    from ._objects import ObjectMeta

    return [PriorityClass(metadata=ObjectMeta(name=n), value=v) for n, v in SYSTEM_PRIORITY_CLASSES.items()]


__all__ = ["ARRIVAL_ANNOTATION", "Manifest", "load_manifests", "parse_duration"]
