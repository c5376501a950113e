"""plugins/_helper: DefaultNormalizeScore (``plugins/helper/normalize_score.go``); and the helpers the plugins take from
kubesched.framework: label selectors, resource names."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api._objects import LabelSelector, LabelSelectorRequirement
from kubesched.framework import (
    compile_label_selector,
    is_extended_resource_name,
    is_scalar_resource_name,
    label_selector_matches,
)
from kubesched.plugins._helper import default_normalize_score, go_div


@pytest.mark.parametrize(
    ("reverse", "scores", "want"),
    [
        pytest.param(False, [10, 20, 30, 40], [25, 50, 75, 100], id="TestDefaultNormalizeScore › straight"),
        pytest.param(True, [10, 20, 30, 40], [75, 50, 25, 0], id="TestDefaultNormalizeScore › reverse"),
        pytest.param(False, [1000, 10, 20, 30], [100, 1, 2, 3], id="TestDefaultNormalizeScore › straight, with a big value"),
        pytest.param(True, [1000, 10, 20, 30], [0, 99, 98, 97], id="TestDefaultNormalizeScore › reverse, with a big value"),
        pytest.param(False, [1, 1, 1, 1], [100, 100, 100, 100], id="TestDefaultNormalizeScore › all equal"),
        pytest.param(False, [0, 0, 0, 0], [0, 0, 0, 0], id="TestDefaultNormalizeScore › all zero"),
        pytest.param(True, [0, 0, 0, 0], [100, 100, 100, 100], id="TestDefaultNormalizeScore › all zero, reverse"),
    ],
)
def test_default_normalize_score(reverse, scores, want) -> None:
    arr = np.array(scores, dtype=np.int64)
    default_normalize_score(100, reverse, arr)
    assert arr.tolist() == want


def test_go_div_truncates_toward_zero() -> None:
    assert go_div(-7, 2) == -3 and go_div(7, -2) == -3 and go_div(7, 2) == 3
    assert go_div(np.array([-7, 7, -8]), 2).tolist() == [-3, 3, -4]


def _sel(labels=None, *exprs):
    return LabelSelector(
        match_labels=labels or {},
        match_expressions=[LabelSelectorRequirement(key=k, operator=o, values=v) for k, o, v in exprs],
    )


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param(None, {"a": "b"}, False, id="nil selector selects nothing"),
        pytest.param(_sel(), {"a": "b"}, True, id="empty selector selects everything"),
        pytest.param(_sel({"a": "b"}), {"a": "b", "c": "d"}, True, id="matchLabels"),
        pytest.param(_sel({"a": "b"}), {"a": "x"}, False, id="matchLabels mismatch"),
        pytest.param(_sel(None, ("a", "In", ["b", "c"])), {"a": "c"}, True, id="In"),
        pytest.param(_sel(None, ("a", "NotIn", ["b"])), {}, True, id="NotIn on a missing key"),
        pytest.param(_sel(None, ("a", "Exists", [])), {"a": ""}, True, id="Exists"),
        pytest.param(_sel(None, ("a", "DoesNotExist", [])), {"a": ""}, False, id="DoesNotExist"),
        pytest.param(_sel({"x": "y"}, ("a", "Exists", [])), {"a": "1"}, False, id="labels and expressions ANDed"),
        pytest.param(_sel(None, ("a", "In", [])), {"a": "1"}, False, id="invalid selector selects nothing"),
    ],
)
def test_label_selector(selector, labels, want) -> None:
    assert label_selector_matches(selector, labels) is want


def test_invalid_label_selector_raises() -> None:
    with pytest.raises(ValueError, match="values set can't be empty"):
        compile_label_selector(_sel(None, ("a", "NotIn", [])))
    with pytest.raises(ValueError, match="not a valid label selector operator"):
        compile_label_selector(_sel(None, ("a", "Gt", ["1"])))


@pytest.mark.parametrize(
    ("name", "extended", "scalar"),
    [
        ("cpu", False, False),
        ("example.com/aaa", True, True),
        ("kubernetes.io/something", False, True),
        ("subdomain.kubernetes.io/something", False, True),
        ("hugepages-2Mi", False, True),
        ("attachable-volumes-aws-ebs", False, True),
        ("requests.example.com/foo", False, False),
        ("pods", False, False),
    ],
)
def test_resource_names(name, extended, scalar) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar
