"""Label and field selectors in their string form (``?labelSelector=``, ``?fieldSelector=``).

Label selectors follow ``labels.Parse``: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``,
``k notin (a,b)``, ``k``, ``!k``, ``k>1``, ``k<1``, comma-separated and ANDed.  Field selectors
follow ``fields.ParseSelector``: ``path=v``, ``path==v``, ``path!=v`` over the object's wire form
(``metadata.name``, ``spec.nodeName``, ``status.phase``, ``involvedObject.name``, ...); a missing
field compares as "".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SelectorError", "label_selector_string", "parse_field_selector", "parse_label_selector"]


class SelectorError(ValueError):
    """A selector that does not parse (a 400 BadRequest)."""


LabelMatcher = Callable[[Mapping[str, str]], bool]
FieldMatcher = Callable[[Any], bool]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_EXISTS = re.compile(rf"^(!?)\s*({_KEY})$")
_EQUALITY = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)$")
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s*\(([^()]*)\)$")
_GT_LT = re.compile(rf"^({_KEY})\s*([<>])\s*(-?\d+)$")


def _split_terms(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return [t.strip() for t in terms]


def _label_term(term: str) -> LabelMatcher:
    if m := _SET.match(term):
        key, op = m.group(1), m.group(2)
        values = {v.strip() for v in m.group(3).split(",") if v.strip()}
        if op == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: key not in labels or labels[key] not in values
    if m := _EQUALITY.match(term):
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: key in labels and labels[key] == value
    if m := _GT_LT.match(term):
        key, op, num = m.group(1), m.group(2), int(m.group(3))

        def compare(labels: Mapping[str, str]) -> bool:
            try:
                v = int(labels[key])
            except (KeyError, ValueError):
                return False
            return v > num if op == ">" else v < num

        return compare
    if m := _EXISTS.match(term):
        neg, key = m.groups()
        if neg:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise SelectorError(f"unable to parse requirement: {term!r}")


def parse_label_selector(text: str | None) -> LabelMatcher | None:
    """A matcher over a labels mapping, or None for an empty selector (everything matches)."""
    if not text or not text.strip():
        return None
    matchers = [_label_term(t) for t in _split_terms(text)]
    return lambda labels: all(m(labels) for m in matchers)


def field_value(obj: Any, path: str, default: str = "") -> str:
    """The value at a dotted ``path`` of a wire-form object, as a selector compares it
    (``default`` when absent)."""
    cur = obj
    for part in path.split(".") if path else ():
        if not isinstance(cur, dict):
            return default
        cur = cur.get(part)
    if cur is None or not path:
        return default
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


Resolve = Callable[[str], tuple[str, str, str]]
"""A field label → (path in the wire form, value when absent, a path read when that is empty);
ValueError with the message of a label the kind does not serve."""


def parse_field_selector(text: str | None, resolve: Resolve | None = None) -> FieldMatcher | None:
    """A matcher over a wire-form (dict) object, or None for an empty selector.  ``resolve``
    checks each label against the kind's (a SelectorError with its message), after the whole
    selector parsed, as upstream transforms a parsed selector."""
    if not text or not text.strip():
        return None
    terms: list[tuple[str, bool, str]] = []
    for term in _split_terms(text):
        if not term:
            continue
        for op in ("!=", "==", "="):
            if op in term:
                path, _, value = term.partition(op)
                terms.append((path.strip(), op == "!=", value.strip()))
                break
        else:
            raise SelectorError(f"invalid selector: {text!r}; can't understand {term!r}")
    reqs: list[tuple[str, str, str, bool, str]] = []
    for label, neg, value in terms:
        if resolve is None:
            reqs.append((label, "", "", neg, value))
            continue
        try:
            path, default, fallback = resolve(label)
        except ValueError as e:
            raise SelectorError(str(e)) from None
        reqs.append((path, default, fallback, neg, value))

    def value_of(obj: Any, path: str, default: str, fallback: str) -> str:
        v = field_value(obj, path, default)
        return field_value(obj, fallback, default) if fallback and not v else v

    return lambda obj: all(
        (value_of(obj, p, d, f) != v) if neg else (value_of(obj, p, d, f) == v)
        for p, d, f, neg, v in reqs
    )


_OPERATORS = {"In": " in ", "NotIn": " notin ", "Exists": "", "DoesNotExist": ""}


def label_selector_string(selector: Any, *, as_set: bool = False) -> str:
    """A metav1.LabelSelector (or, ``as_set``, a plain map of labels as a ReplicationController's
    selector) in string form, as ``LabelSelectorAsSelector(...).String()`` writes it: one
    requirement per label and expression, sorted by key, ``k=v``, ``k in (a,b)`` (values
    sorted), ``k notin (a,b)``, ``k``, ``!k``, joined by commas; "" for none or an empty one."""
    if not isinstance(selector, dict):
        return ""
    labels = selector if as_set else selector.get("matchLabels")
    expressions = [] if as_set else selector.get("matchExpressions")
    labels = labels if isinstance(labels, dict) else {}
    reqs: list[tuple[str, str]] = [(str(k), f"{k}={v}") for k, v in labels.items()]
    for e in expressions if isinstance(expressions, list) else []:
        if not isinstance(e, dict):
            continue
        key, op = str(e.get("key", "")), e.get("operator", "")
        raw = e.get("values")
        values = sorted(str(v) for v in raw) if isinstance(raw, list) else []
        if op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
        elif op == "Exists":
            reqs.append((key, key))
        elif op in _OPERATORS:
            reqs.append((key, f"{key}{_OPERATORS[op]}({','.join(values)})"))
    return ",".join(r for _, r in sorted(reqs, key=lambda r: r[0]))
