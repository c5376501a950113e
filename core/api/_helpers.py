"""Helpers the engine and the plugins share (upstream ``component-helpers`` and apimachinery).

Re-exported for plugin authors by :mod:`kubesched.framework`; label selectors live in
``_labels.py``.

- Go-style values in validation messages: :func:`go_value` (how ``field.Invalid`` prints one).
- Names (``validation.IsQualifiedName``, ``v1helper``): :func:`qualified_name_errors`,
  :func:`is_native_resource`, :func:`is_extended_resource_name`, :func:`is_scalar_resource_name`.
- Node selectors (``component-helpers/scheduling/corev1/nodeaffinity``):
  :class:`NodeSelectorMatcher` (upstream's ``nodeaffinity.NodeSelector``, strict or lazy-error;
  named apart from the ``v1.NodeSelector`` API object), :class:`PreferredSchedulingTerms`,
  :class:`RequiredNodeAffinity`.
- Taints and tolerations (``v1.Toleration.ToleratesTaint``, ``v1helper``):
  :func:`toleration_tolerates_taint`, :func:`tolerations_tolerate_taint`,
  :func:`find_matching_untolerated_taint`, :func:`do_not_schedule_taints_filter`.

Node-level matchers accept either a single Node (``match``) or a whole :class:`~kubesched.NodeBatch`
(``match_batch``), the latter evaluating each requirement over a label column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched._errors import ConfigError

if TYPE_CHECKING:
    from kubesched.api._objects import (
        Node,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        Pod,
        PreferredSchedulingTerm,
        Taint,
        Toleration,
    )
    from kubesched.api._objects import (
        NodeSelector as NodeSelectorObj,
    )
    from kubesched.runtime._nodeinfo import NodeBatch

# --- values in messages ------------------------------------------------------------------------


def go_value(value: Any) -> str:
    """How ``field.Invalid`` prints a value (``%q`` for strings, ``%#v`` for string slices)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[]string{" + ", ".join(go_value(v) for v in value) + "}"
    return str(value)


# --- names --------------------------------------------------------------------------------------

_NATIVE_PREFIX = "kubernetes.io/"
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: no domain, or a ``kubernetes.io/`` domain."""
    return "/" not in name or _NATIVE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: fully-qualified, outside ``kubernetes.io``, not ``requests.*``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def is_scalar_resource_name(name: str) -> bool:
    """``IsScalarResourceName``: extended, hugepages, prefixed-native or attachable volumes."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or (_NATIVE_PREFIX in name)
        or name.startswith("attachable-volumes-")
    )


def qualified_name_errors(value: str) -> list[str]:
    """``validation.IsQualifiedName``: the messages upstream returns (empty when valid)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            errs.append("prefix part must be no more than 253 characters")
        elif not _DNS1123_SUBDOMAIN.match(prefix):
            errs.append(
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            )
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    elif not _QUALIFIED_NAME.match(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
            "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return errs


# --- node selectors ----------------------------------------------------------------------------

OBJECT_NAME_FIELD = "metadata.name"
_INT64 = re.compile(r"^[+-]?[0-9]+$")
_VALID_SELECTOR_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
_VALID_FIELD_OPS = ["In", "NotIn"]


def _parse_go_int(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: None when not a base-10 int64."""
    if not _INT64.match(s):
        return None
    v = int(s)
    if v < -(2**63) or v > 2**63 - 1:
        return None
    return v


class _Requirement:
    """One parsed label requirement of a node selector term."""

    __slots__ = ("key", "op", "values", "number")

    def __init__(self, key: str, op: str, values: frozenset[str], number: int = 0) -> None:
        self.key = key
        self.op = op
        self.values = values
        self.number = number

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.matches_value(labels.get(self.key))

    def matches_column(self, column: Sequence[str | None]) -> np.ndarray:
        n = len(column)
        op, values = self.op, self.values
        if op == "In":  # None is never in a set of strings
            return np.fromiter((v in values for v in column), bool, n)
        if op == "NotIn":
            return np.fromiter((v not in values for v in column), bool, n)
        if op == "Exists":
            return np.fromiter((v is not None for v in column), bool, n)
        if op == "DoesNotExist":
            return np.fromiter((v is None for v in column), bool, n)
        return np.fromiter((self.matches_value(v) for v in column), bool, n)

    def matches_value(self, v: str | None) -> bool:
        op = self.op
        if op == "In":
            return v is not None and v in self.values
        if op == "NotIn":
            return v is None or v not in self.values
        if op == "Exists":
            return v is not None
        if op == "DoesNotExist":
            return v is None
        if v is None:
            return False
        n = _parse_go_int(v)
        if n is None:
            return False
        return n > self.number if op == "Gt" else n < self.number


def _label_requirements(
    exprs: Sequence[NodeSelectorRequirement], path: str
) -> tuple[list[_Requirement], list[ConfigError]]:
    """``nodeSelectorRequirementsAsLabelRequirements``."""
    reqs: list[_Requirement] = []
    errs: list[ConfigError] = []
    for i, e in enumerate(exprs):
        p = f"{path}[{i}]"
        op = e.operator
        if op not in _VALID_SELECTOR_OPS:
            supported = ", ".join(go_value(o) for o in _VALID_SELECTOR_OPS)
            errs.append(
                ConfigError(
                    f"Unsupported value: {go_value(op)}: supported values: {supported}",
                    field=f"{p}.operator",
                )
            )
            continue
        key_errs = qualified_name_errors(e.key)
        if key_errs:
            errs.append(ConfigError(f"Invalid value: {go_value(e.key)}: {key_errs[0]}", field=f"{p}.key"))
            continue
        values = list(e.values)
        if op in ("In", "NotIn") and not values:
            errs.append(
                ConfigError(
                    f"Invalid value: {go_value(values)}: for 'in', 'notin' operators, values set can't be empty",
                    field=f"{p}.values",
                )
            )
            continue
        if op in ("Exists", "DoesNotExist") and values:
            errs.append(
                ConfigError(
                    f"Invalid value: {go_value(values)}: values set must be empty for exists and does not exist",
                    field=f"{p}.values",
                )
            )
            continue
        number = 0
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(
                    ConfigError(
                        f"Invalid value: {go_value(values)}: for 'Gt', 'Lt' operators, exactly one value is required",
                        field=f"{p}.values",
                    )
                )
                continue
            n = _parse_go_int(values[0])
            if n is None:
                errs.append(
                    ConfigError(
                        f"Invalid value: {go_value(values[0])}: for 'Gt', 'Lt' operators, the value must be an integer",
                        field=f"{p}.values[0]",
                    )
                )
                continue
            number = n
        reqs.append(_Requirement(e.key, op, frozenset(values), number))
    return reqs, errs


def _field_requirements(
    exprs: Sequence[NodeSelectorRequirement], path: str
) -> tuple[list[tuple[str, bool, str]], list[ConfigError]]:
    """``nodeSelectorRequirementsAsFieldSelector``: (field, equal?, value) terms."""
    out: list[tuple[str, bool, str]] = []
    errs: list[ConfigError] = []
    for i, e in enumerate(exprs):
        p = f"{path}[{i}]"
        if e.operator in _VALID_FIELD_OPS:
            if len(e.values) != 1:
                errs.append(
                    ConfigError(
                        f"Invalid value: {go_value(list(e.values))}: must have one element",
                        field=f"{p}.values",
                    )
                )
            else:
                out.append((e.key, e.operator == "In", e.values[0]))
        else:
            supported = ", ".join(go_value(o) for o in _VALID_FIELD_OPS)
            errs.append(
                ConfigError(
                    f"Unsupported value: {go_value(e.operator)}: supported values: {supported}",
                    field=f"{p}.operator",
                )
            )
    return out, errs


def _field_value(node: Node, key: str) -> str:
    return node.metadata.name if key == OBJECT_NAME_FIELD else ""


class _Term:
    """A parsed ``NodeSelectorTerm`` (its expressions and fields are ANDed)."""

    __slots__ = ("labels", "fields", "errors")

    def __init__(self, term: NodeSelectorTerm, path: str) -> None:
        self.labels: list[_Requirement] = []
        self.fields: list[tuple[str, bool, str]] = []
        self.errors: list[ConfigError] = []
        if term.match_expressions:
            self.labels, errs = _label_requirements(term.match_expressions, f"{path}.matchExpressions")
            self.errors.extend(errs)
        if term.match_fields:
            self.fields, errs = _field_requirements(term.match_fields, f"{path}.matchFields")
            self.errors.extend(errs)

    def match(self, node: Node) -> bool:
        labels = node.metadata.labels
        for r in self.labels:
            if not r.matches(labels):
                return False
        return all((_field_value(node, key) == value) == equal for key, equal, value in self.fields)

    def match_batch(self, nodes: NodeBatch) -> np.ndarray:
        ok = np.ones(len(nodes), dtype=bool)
        for r in self.labels:
            ok &= r.matches_column(nodes.label_values(r.key))
            if not ok.any():
                return ok
        for key, equal, value in self.fields:
            if key == OBJECT_NAME_FIELD:
                hit = np.fromiter((n == value for n in nodes.names), bool, len(nodes))
            else:
                hit = np.full(len(nodes), value == "", dtype=bool)
            ok &= hit if equal else ~hit
        return ok


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class NodeSelectorMatcher:
    """``nodeaffinity.NodeSelector`` / ``LazyErrorNodeSelector``: terms ORed (a compiled
    ``v1.NodeSelector``).

    Empty terms are dropped (so a selector with only empty terms matches nothing).  In strict
    mode (:meth:`parse`) any parse error raises :class:`ConfigError`; in lazy mode a term with
    errors never matches (``LazyErrorNodeSelector``, used for pods' own affinity).
    """

    __slots__ = ("terms",)

    def __init__(self, ns: NodeSelectorObj, path: str = "nodeSelectorTerms", *, lazy: bool = True) -> None:
        self.terms: list[_Term] = []
        for i, term in enumerate(ns.node_selector_terms):
            if _is_empty_term(term):
                continue
            t = _Term(term, f"{path}[{i}]")
            if t.errors and not lazy:
                raise t.errors[0]
            self.terms.append(t)

    @classmethod
    def parse(cls, ns: NodeSelectorObj, path: str = "nodeSelectorTerms") -> NodeSelectorMatcher:
        return cls(ns, path, lazy=False)

    def match(self, node: Node | None) -> bool:
        if node is None:
            return False
        return any(not t.errors and t.match(node) for t in self.terms)

    def match_batch(self, nodes: NodeBatch) -> np.ndarray:
        ok = np.zeros(len(nodes), dtype=bool)
        for t in self.terms:
            if t.errors:
                continue
            if ok.all():
                break
            ok |= t.match_batch(nodes)
        return ok


class PreferredSchedulingTerms:
    """``nodeaffinity.PreferredSchedulingTerms``: the summed weight of the matching terms.

    Terms with weight 0 or no requirements are dropped; a parse error raises ConfigError.
    """

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[PreferredSchedulingTerm], path: str = "") -> None:
        self.terms: list[tuple[int, _Term]] = []
        errs: list[ConfigError] = []
        for i, term in enumerate(terms):
            if term.weight == 0 or _is_empty_term(term.preference):
                continue
            p = f"{path}[{i}].preference" if path else f"[{i}].preference"
            t = _Term(term.preference, p)
            if t.errors:
                errs.extend(t.errors)
                continue
            self.terms.append((term.weight, t))
        if errs:
            raise errs[0]

    def score(self, node: Node) -> int:
        return sum(w for w, t in self.terms if t.match(node))

    def score_batch(self, nodes: NodeBatch) -> np.ndarray:
        out = np.zeros(len(nodes), dtype=np.int64)
        for w, t in self.terms:
            out += np.where(t.match_batch(nodes), w, 0)
        return out


class RequiredNodeAffinity:
    """``nodeaffinity.RequiredNodeAffinity``: ``spec.nodeSelector`` AND the required terms.

    Parse errors in the pod's terms make those terms never match (``LazyErrorNodeSelector``).
    """

    __slots__ = ("label_selector", "node_selector")

    def __init__(self, pod: Pod) -> None:
        self.label_selector: dict[str, str] | None = dict(pod.spec.node_selector) or None
        self.node_selector: NodeSelectorMatcher | None = None
        aff = pod.spec.affinity
        if (
            aff is not None
            and aff.node_affinity is not None
            and aff.node_affinity.required_during_scheduling_ignored_during_execution is not None
        ):
            self.node_selector = NodeSelectorMatcher(
                aff.node_affinity.required_during_scheduling_ignored_during_execution
            )

    def match(self, node: Node | None) -> bool:
        if node is None:
            return False
        if self.label_selector is not None:
            labels = node.metadata.labels
            for k, v in self.label_selector.items():
                if labels.get(k) != v:
                    return False
        if self.node_selector is not None:
            return self.node_selector.match(node)
        return True

    def match_batch(self, nodes: NodeBatch) -> np.ndarray:
        ok = np.ones(len(nodes), dtype=bool)
        if self.label_selector is not None:
            for k, v in self.label_selector.items():
                ok &= np.fromiter((x == v for x in nodes.label_values(k)), bool, len(nodes))
        if self.node_selector is not None and ok.any():
            ok &= self.node_selector.match_batch(nodes)
        return ok


# --- taints and tolerations --------------------------------------------------------------------

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def toleration_tolerates_taint(t: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``.

    An empty effect matches every effect; an empty key (with Exists) matches every key; operator
    "" means Equal (values compared), Exists ignores the value; any other operator never matches.
    """
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    if t.operator in ("", "Equal"):
        return t.value == taint.value
    return t.operator == "Exists"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """``TolerationsTolerateTaint``: does any toleration tolerate ``taint``?"""
    return any(toleration_tolerates_taint(t, taint) for t in tolerations)


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """``DoNotScheduleTaintsFilterFunc``: NoSchedule and NoExecute taints only."""
    return taint.effect in (NO_SCHEDULE, NO_EXECUTE)


def find_matching_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    inclusion: Callable[[Taint], bool] | None = None,
) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint (passing ``inclusion``) not tolerated."""
    for taint in taints:
        if inclusion is not None and not inclusion(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None



__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "OBJECT_NAME_FIELD",
    "PREFER_NO_SCHEDULE",
    "TAINT_NODE_UNSCHEDULABLE",
    "NodeSelectorMatcher",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "do_not_schedule_taints_filter",
    "find_matching_untolerated_taint",
    "go_value",
    "is_extended_resource_name",
    "is_native_resource",
    "is_scalar_resource_name",
    "qualified_name_errors",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
]
