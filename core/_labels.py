"""Label selectors (``metav1.LabelSelectorAsSelector(sel).Matches``), for core and transports.

Plugins use the validating, compiled form in ``kubesched.plugins._helper``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._objects import LabelSelector


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
