"""Label selectors (``metav1.LabelSelectorAsSelector``) for the engine, transports and plugins.

- :func:`selector_matches`: one selector against one label map, without validation (an unknown
  operator matches nothing); the engine's and the fake cluster's matcher.
- The validating, compiled form (re-exported by :mod:`kubesched.framework` for plugins):
  :func:`compile_label_selector` (a :data:`LabelMatcher`; ValueError for an invalid selector),
  :func:`selector_requirements` / :func:`requirements_match` over :data:`LabelRequirement`
  tuples, and :func:`label_selector_matches` (an invalid selector selects nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kubesched.api._objects import LabelSelector


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` match ``selector`` (``None`` matches nothing, ``{}`` everything).

    matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) are ANDed; an unknown
    operator matches nothing.
    """
    if selector is None:
        return False
    for k, v in selector.match_labels.items():
        if labels.get(k) != v:
            return False
    for req in selector.match_expressions:
        op = req.operator
        present = req.key in labels
        if op == "In":
            if not present or labels[req.key] not in req.values:
                return False
        elif op == "NotIn":
            if present and labels[req.key] in req.values:
                return False
        elif op == "Exists":
            if not present:
                return False
        elif op == "DoesNotExist":
            if present:
                return False
        else:
            return False
    return True


LabelMatcher = Callable[[Mapping[str, str]], bool]
"""A compiled label selector: ``matcher(labels)`` is True when the labels are selected."""


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


LabelRequirement = tuple[str, str, frozenset[str]]
"""One requirement of a label selector: ``(key, operator, values)``, operator In, NotIn, Exists or
DoesNotExist (matchLabels entries become In with one value)."""


def selector_requirements(selector: LabelSelector) -> list[LabelRequirement]:
    """A selector as (key, operator, values) requirements; ValueError for an invalid one."""
    reqs: list[LabelRequirement] = [(k, "In", frozenset((v,))) for k, v in selector.match_labels.items()]
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


def requirements_match(reqs: Iterable[LabelRequirement], labels: Mapping[str, str]) -> bool:
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
