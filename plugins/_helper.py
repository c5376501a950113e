"""Helpers shared by the in-tree plugins (upstream ``plugins/helper`` and ``component-helpers``).

- :func:`default_normalize_score` — ``helper.DefaultNormalizeScore``.
- :func:`build_broken_linear_function` — ``helper.BuildBrokenLinearFunction`` (Go integer division).
- Label selectors (``metav1.LabelSelector``): :func:`compile_label_selector`,
  :func:`label_selector_matches`.
- Node selectors (``component-helpers/scheduling/corev1/nodeaffinity``): :class:`NodeSelector`
  (strict or lazy-error), :class:`PreferredSchedulingTerms`, :class:`RequiredNodeAffinity`.
- Taints and tolerations (``v1.Toleration.ToleratesTaint``): :func:`toleration_tolerates_taint`,
  :func:`tolerations_tolerate_taint`, :func:`find_matching_untolerated_taint`.
- Resource names: :func:`is_extended_resource_name`, :func:`is_scalar_resource_name`.

Node-level matchers accept either a single Node (``match``) or a whole :class:`~kubesched.NodeBatch`
(``match_batch``), the latter evaluating each requirement over a label column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched._errors import ConfigError
from kubesched._framework import MAX_NODE_SCORE

if TYPE_CHECKING:
    from kubesched._nodeinfo import NodeBatch
    from kubesched._objects import (
        LabelSelector,
        Node,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        Pod,
        PreferredSchedulingTerm,
        Taint,
        Toleration,
    )
    from kubesched._objects import (
        NodeSelector as NodeSelectorObj,
    )

# --- scores ------------------------------------------------------------------------------------


def default_normalize_score(max_priority: int, reverse: bool, scores: np.ndarray) -> None:
    """``DefaultNormalizeScore``: scale ``scores`` (int64, in place) to [0, max_priority].

    ``s = max_priority * s // max(scores)``; with ``reverse``, ``s = max_priority - s``.  When
    every score is 0, reverse sets them all to ``max_priority`` and otherwise leaves them.
    """
    if len(scores) == 0:
        return
    max_count = int(scores.max())
    if max_count == 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = go_div(max_priority * scores, max_count)
    if reverse:
        scaled = max_priority - scaled
    scores[:] = scaled


def go_div(a: Any, b: Any) -> Any:
    """Go's integer division (truncates toward zero), for ints or int64 arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q)
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def build_broken_linear_function(
    shape: Sequence[tuple[int, int]],
) -> Callable[[Any], Any]:
    """``BuildBrokenLinearFunction`` over ``(utilization, score)`` points, sorted by utilization.

    ``f(p)`` is ``shape[0].score`` for ``p <= shape[0].utilization``, ``shape[-1].score`` above the
    last point, and linear between points with Go's integer division.  Works on ints and on int64
    arrays.
    """
    xs = [int(u) for u, _ in shape]
    ys = [int(s) for _, s in shape]

    def scalar(p: int) -> int:
        for i, x in enumerate(xs):
            if p <= x:
                if i == 0:
                    return ys[0]
                return ys[i - 1] + go_div((ys[i] - ys[i - 1]) * (p - xs[i - 1]), xs[i] - xs[i - 1])
        return ys[-1]

    def f(p: Any) -> Any:
        if not isinstance(p, np.ndarray):
            return scalar(int(p))
        out = np.full(p.shape, ys[-1], dtype=np.int64)
        done = np.zeros(p.shape, dtype=bool)
        for i, x in enumerate(xs):
            hit = (~done) & (p <= x)
            if i == 0:
                out[hit] = ys[0]
            else:
                seg = ys[i - 1] + go_div((ys[i] - ys[i - 1]) * (p[hit] - xs[i - 1]), np.int64(xs[i] - xs[i - 1]))
                out[hit] = seg
            done |= hit
        return out

    return f


def go_slice(items: Iterable[Any]) -> str:
    """Go's ``%v`` of a slice: ``[a b c]``."""
    return "[" + " ".join(str(i) for i in items) + "]"


def go_value(value: Any) -> str:
    """How ``field.Invalid`` prints a value (``%q`` for strings, ``%#v`` for string slices)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[]string{" + ", ".join(go_value(v) for v in value) + "}"
    return str(value)


# --- resource names ----------------------------------------------------------------------------

_NATIVE_PREFIX = "kubernetes.io/"
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def queueing_hints_enabled(handle: Any) -> bool:
    """``fts.EnableSchedulingQueueHint``: the ``SchedulerQueueingHints`` gate as the handle
    carries it (on when the handle has no gates).  Off, upstream plugins register extra node
    update events because a Node/Add may be filtered out by ``preCheckForNode``
    (kubernetes#109437)."""
    gates = getattr(handle, "feature_gates", None) or {}
    return bool(gates.get("SchedulerQueueingHints", True))


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


# --- label selectors ---------------------------------------------------------------------------

LabelMatcher = Callable[[Mapping[str, str]], bool]


def _nothing(_: Mapping[str, str]) -> bool:
    return False


def _everything(_: Mapping[str, str]) -> bool:
    return True


def compile_label_selector(selector: LabelSelector | None) -> LabelMatcher:
    """``metav1.LabelSelectorAsSelector``: a predicate over a label map.

    ``None`` selects nothing; an empty selector selects everything.  Raises ``ValueError`` for an
    invalid requirement (In/NotIn without values, Exists/DoesNotExist with values, unknown op).
    """
    if selector is None:
        return _nothing
    if not selector.match_labels and not selector.match_expressions:
        return _everything
    reqs = selector_requirements(selector)

    def match(labels: Mapping[str, str]) -> bool:
        return requirements_match(reqs, labels)

    return match


Requirement = tuple[str, str, frozenset[str]]


def selector_requirements(selector: LabelSelector) -> list[Requirement]:
    """A selector as (key, operator, values) requirements; ValueError for an invalid one."""
    reqs: list[Requirement] = [(k, "In", frozenset((v,))) for k, v in selector.match_labels.items()]
    for e in selector.match_expressions:
        op = e.operator
        if op in ("In", "NotIn"):
            if not e.values:
                raise ValueError("for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if e.values:
                raise ValueError("values set must be empty for exists and does not exist")
        else:
            raise ValueError(f'"{op}" is not a valid label selector operator')
        reqs.append((e.key, op, frozenset(e.values)))
    return reqs


def requirements_match(reqs: Iterable[Requirement], labels: Mapping[str, str]) -> bool:
    """Do ``labels`` satisfy every requirement?"""
    for key, op, values in reqs:
        if op == "In":
            v = labels.get(key)
            if v is None or v not in values:
                return False
        elif op == "NotIn":
            v = labels.get(key)
            if v is not None and v in values:
                return False
        elif op == "Exists":
            if key not in labels:
                return False
        elif key in labels:  # DoesNotExist
            return False
    return True


def label_selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Does ``selector`` select ``labels``?  An invalid selector selects nothing."""
    try:
        return compile_label_selector(selector)(labels)
    except ValueError:
        return False


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


class NodeSelector:
    """``nodeaffinity.NodeSelector`` / ``LazyErrorNodeSelector``: terms ORed.

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
    def parse(cls, ns: NodeSelectorObj, path: str = "nodeSelectorTerms") -> NodeSelector:
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
        self.node_selector: NodeSelector | None = None
        aff = pod.spec.affinity
        if (
            aff is not None
            and aff.node_affinity is not None
            and aff.node_affinity.required_during_scheduling_ignored_during_execution is not None
        ):
            self.node_selector = NodeSelector(
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
    "MAX_NODE_SCORE",
    "NodeSelector",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "build_broken_linear_function",
    "compile_label_selector",
    "default_normalize_score",
    "do_not_schedule_taints_filter",
    "find_matching_untolerated_taint",
    "go_div",
    "go_slice",
    "go_value",
    "is_extended_resource_name",
    "is_native_resource",
    "is_scalar_resource_name",
    "label_selector_matches",
    "qualified_name_errors",
    "toleration_tolerates_taint",
    "tolerations_tolerate_taint",
]
