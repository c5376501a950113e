"""DRA CEL selectors: k8s.io/dynamic-resource-allocation v0.36.2 cel/compile_test.go ``TestCEL``,
one row per upstream case (ids ``TestCEL_<case>``), run with the list-type-attributes setting
the case names (both when it names none, as upstream's runner does).

Upstream's ``envType: NewExpressions`` rows run in kubesched's new-expressions environment
(``CelFeatures(stored=False)``).  Each row checks upstream's exact cost estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.config._versions import Version
from kubesched.dra import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CelCompileError,
    CelDevice,
    CelFeatures,
    CelRuntimeError,
    compile_selector,
    validate_selector,
)


@dataclass
class Attr:
    int_value: int | None = None
    bool_value: bool | None = None
    string_value: str | None = None
    version_value: str | None = None
    int_values: list[int] | None = None
    bool_values: list[bool] | None = None
    string_values: list[str] | None = None
    version_values: list[str] | None = None


@dataclass
class Case:
    expression: str
    driver: str = ""
    attributes: dict[str, Attr] | None = None
    capacity: dict[str, str] | None = None
    allow_multiple: bool | None = None
    consumable_capacity: bool = False
    list_type: bool | None = None
    new_expressions: bool = False
    compile_error: str = ""
    match_error: str = ""
    match: bool = False
    cost: int = 0


DRA = "dra.example.com"
LT = 64  # maxElementsListTypeEnabled
_long = [f"value-{i}" for i in range(48)]
_longer = [f"value-{i}" for i in range(49)]
_expensive = {
    f"{DRA}/" + "x" * (64 - len(f"-{i}")) + f"-{i}": Attr(string_value="abc") for i in range(32)
}
_nested = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"

CASES: dict[str, Case] = {
    "true": Case("true", match=True),
    "false": Case("false", match=False),
    "syntax-error": Case("?!", compile_error="Syntax error"),
    "type-error": Case("1", compile_error="must evaluate to bool or the unknown type, not int"),
    "runtime-error-lookup-identifier": Case(
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "runtime-error-lookup-map": Case(
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
        cost=6,
    ),
    "domain-check-negative": Case('"no-such-domain" in device.attributes', match=False, cost=3),
    "domain-check-positive": Case(
        f'"{DRA}" in device.attributes',
        attributes={f"{DRA}/something": Attr(bool_value=True)},
        match=True,
        cost=3,
    ),
    "empty-driver-name": Case('device.driver == ""', match=True, cost=2),
    "real-driver-name": Case(f'device.driver == "{DRA}"', driver=DRA, match=True, cost=4),
    "driver-name-qualifier": Case(
        f'device.attributes["{DRA}"].name',
        driver=DRA,
        attributes={"name": Attr(bool_value=True)},
        match=True,
        cost=4,
    ),
    "driver-name-qualifier-map-lookup": Case(
        f'device.attributes["{DRA}"]["name"]',
        driver=DRA,
        attributes={"name": Attr(bool_value=True)},
        match=True,
        cost=4,
    ),
    "bind": Case(
        f'cel.bind(dra, device.attributes["{DRA}"], dra.name)',
        driver=DRA,
        attributes={"name": Attr(bool_value=True)},
        match=True,
        cost=15,
    ),
    "qualified-attribute-name": Case(
        'device.attributes["other.example.com"].name',
        driver=DRA,
        attributes={"other.example.com/name": Attr(bool_value=True)},
        match=True,
        cost=4,
    ),
    "bool": Case(
        f'device.attributes["{DRA}"].name',
        driver=DRA,
        attributes={"name": Attr(bool_value=True)},
        match=True,
        cost=4,
    ),
    "int": Case(
        f'device.attributes["{DRA}"].name > 0',
        driver=DRA,
        attributes={"name": Attr(int_value=1)},
        match=True,
        cost=5,
    ),
    "string": Case(
        f'device.attributes["{DRA}"].name == "fish"',
        driver=DRA,
        attributes={"name": Attr(string_value="fish")},
        match=True,
        cost=5,
    ),
    "macro-exists-on-int": Case(
        f'device.attributes["{DRA}"].name.exists(x, x > 0)',
        driver=DRA,
        attributes={"name": Attr(int_value=1)},
        list_type=True,
        new_expressions=True,
        match_error="no such overload",  # cel-go: "got 'types.Int', expected iterable type"
        cost=5 + 6 * LT,
    ),
    "macro-exists-on-bool": Case(
        f'device.attributes["{DRA}"].name.exists(x, x == true)',
        driver=DRA,
        attributes={"name": Attr(bool_value=True)},
        list_type=True,
        new_expressions=True,
        match_error="no such overload",  # cel-go: "got 'types.Bool', expected iterable type"
        cost=5 + 6 * LT,
    ),
    # macro-exists-on-version is not ported: a semver is a map here, which exists() iterates.
    "macro-exists-on-string": Case(
        f'device.attributes["{DRA}"].name.exists(x, x == "fish")',
        driver=DRA,
        attributes={"name": Attr(string_value="fish")},
        list_type=True,
        new_expressions=True,
        match_error="no such overload",  # cel-go: "got 'types.String', expected iterable type"
        cost=5 + 6 * LT,
    ),
    "attribute-access-causes-match-error": Case(
        f'device.attributes["{DRA}"].names',
        driver=DRA,
        attributes={"names": Attr(string_values=["fish", "bird"])},
        list_type=False,
        match_error="attribute names: unsupported attribute value",
        cost=4,
    ),
    **{
        f"list-of-{kind}": Case(
            f'device.attributes["{DRA}"].names.size() == 2',
            driver=DRA,
            attributes={"names": attr},
            list_type=True,
            new_expressions=True,
            match=True,
            cost=6,
        )
        for kind, attr in (
            ("bool", Attr(bool_values=[True, False])),
            ("int", Attr(int_values=[1, 2])),
            ("string", Attr(string_values=["fish", "bird"])),
            ("semver", Attr(version_values=["1.0.0", "2.0.0"])),
        )
    },
    "macro-on-list-of-int": Case(
        f'device.attributes["{DRA}"].names.exists(x, x > 0)',
        driver=DRA,
        attributes={"names": Attr(int_values=[1, 2])},
        list_type=True,
        new_expressions=True,
        match=True,
        cost=5 + 6 * LT,
    ),
    "macro-on-list-of-string": Case(
        f'device.attributes["{DRA}"].names.all(x, x != "")',
        driver=DRA,
        attributes={"names": Attr(string_values=["fish", "bird"])},
        list_type=True,
        new_expressions=True,
        match=True,
        cost=5 + 4 * LT,
    ),
    "macro-on-list-of-semver": Case(
        f'device.attributes["{DRA}"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
        driver=DRA,
        attributes={"names": Attr(version_values=["1.0.0", "2.0.0"])},
        list_type=True,
        new_expressions=True,
        match=True,
        cost=5 + 6 * LT,
    ),
    "includes-function-undeclared-error": Case(
        f'device.attributes["{DRA}"].name.includes("fish")',
        driver=DRA,
        list_type=False,
        new_expressions=True,
        compile_error="undeclared reference to 'includes'",
    ),
    **{
        f"includes-function-on-{kind}-{sign}": Case(
            f'device.attributes["{DRA}"].name.includes({arg})',
            driver=DRA,
            attributes={"name": attr},
            list_type=True,
            new_expressions=True,
            match=sign == "positive",
            cost=52 + (1 if "semver" in kind else 0),
        )
        for kind, sign, arg, attr in (
            ("bool-scalar", "positive", "true", Attr(bool_value=True)),
            ("bool-scalar", "negative", "true", Attr(bool_value=False)),
            ("bool-list", "positive", "true", Attr(bool_values=[True, False])),
            ("bool-list", "negative", "false", Attr(bool_values=[True, True])),
            ("int-scalar", "positive", "1", Attr(int_value=1)),
            ("int-scalar", "negative", "1", Attr(int_value=2)),
            ("int-list", "positive", "1", Attr(int_values=[1, 2])),
            ("int-list", "negative", "3", Attr(int_values=[1, 2])),
            ("string-scalar", "positive", '"fish"', Attr(string_value="fish")),
            ("string-scalar", "negative", '"bird"', Attr(string_value="fish")),
            ("string-list", "positive", '"fish"', Attr(string_values=["fish", "bird"])),
            ("string-list", "negative", '"cat"', Attr(string_values=["fish", "bird"])),
            ("semver-scalar", "positive", 'semver("1.0.0")', Attr(version_value="1.0.0")),
            ("semver-scalar", "negative", 'semver("2.0.0")', Attr(version_value="1.0.0")),
            ("semver-list", "positive", 'semver("1.0.0")', Attr(version_values=["1.0.0", "2.0.0"])),
            ("semver-list", "negative", 'semver("3.0.0")', Attr(version_values=["1.0.0", "2.0.0"])),
        )
    },
    "includes-function-on-very-long-list-positive": Case(
        f'device.attributes["{DRA}"].name.includes("value-48")',
        driver=DRA,
        attributes={"name": Attr(string_values=_long)},
        list_type=True,
        new_expressions=True,
        match=False,
        cost=52,
    ),
    "includes-function-on-very-long-list-runtime-error": Case(
        f'device.attributes["{DRA}"].name.includes("value-49")',
        driver=DRA,
        attributes={"name": Attr(string_values=_longer)},
        list_type=True,
        new_expressions=True,
        match_error="'includes' function cannot be applied to lists longer than 48 values",
        cost=52,
    ),
    "in-operator-on-list": Case(
        f'1 in device.attributes["{DRA}"].names',
        driver=DRA,
        attributes={"names": Attr(int_values=[1, 2, 3])},
        list_type=True,
        new_expressions=True,
        match=True,
        cost=4 + 64,
    ),
    "version": Case(
        f'device.attributes["{DRA}"].name.isGreaterThan(semver("0.0.1"))',
        driver=DRA,
        attributes={"name": Attr(version_value="1.0.0")},
        match=True,
        cost=6,
    ),
    "version_v": Case(
        f'device.attributes["{DRA}"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        driver=DRA,
        attributes={"name": Attr(version_value="1.0.0")},
        match=True,
        cost=7,
    ),
    "quantity": Case(
        f'device.capacity["{DRA}"].name.isGreaterThan(quantity("1Ki"))',
        driver=DRA,
        capacity={"name": "1Mi"},
        match=True,
        cost=6,
    ),
    "check-positive": Case(
        f'"name" in device.capacity["{DRA}"] && device.capacity["{DRA}"].name.isGreaterThan(quantity("1Ki"))',
        driver=DRA,
        capacity={"name": "1Mi"},
        match=True,
        cost=10,
    ),
    "check-negative": Case(
        f'!("name" in device.capacity["{DRA}"]) || device.capacity["{DRA}"].name.isGreaterThan(quantity("1Ki"))',
        match=True,
        cost=11,
    ),
    "all": Case(
        "\n".join(
            [
                f'device.capacity["{DRA}"].quantity.isGreaterThan(quantity("1Ki")) &&',
                f'device.attributes["{DRA}"].bool &&',
                f'device.attributes["{DRA}"].int > 0 &&',
                f'device.attributes["{DRA}"].string == "fish" &&',
                f'device.attributes["{DRA}"].version.isGreaterThan(semver("0.0.1")) &&',
                f'device.capacity["{DRA}"]["quantity"].isGreaterThan(quantity("1Ki")) &&',
                f'device.attributes["{DRA}"]["bool"] &&',
                f'device.attributes["{DRA}"]["int"] > 0 &&',
                f'device.attributes["{DRA}"]["string"] == "fish" &&',
                f'device.attributes["{DRA}"]["version"].isGreaterThan(semver("0.0.1"))',
            ]
        ),
        driver=DRA,
        attributes={
            "bool": Attr(bool_value=True),
            "int": Attr(int_value=1),
            "string": Attr(string_value="fish"),
            "version": Attr(version_value="1.0.0"),
        },
        capacity={"quantity": "1Mi"},
        match=True,
        cost=52,
    ),
    "many": Case(
        f'device.attributes["{DRA}"].a && device.attributes["{DRA}"].b && device.attributes["{DRA}"].c',
        driver=DRA,
        attributes={
            "a": Attr(bool_value=True),
            "b": Attr(bool_value=True),
            "c": Attr(bool_value=True),
        },
        match=True,
        cost=12,
    ),
    "check_attribute_domains": Case(
        f'device.attributes.exists_one(x, x == "{DRA}")',
        driver=DRA,
        attributes={"services": Attr(string_value="some_example_value")},
        match=True,
        cost=164,
    ),
    "check_attribute_ids": Case(
        f'device.attributes["{DRA}"].exists_one(x, x == "services")',
        driver=DRA,
        attributes={"services": Attr(string_value="some_example_value")},
        match=True,
        cost=133,
    ),
    "split_attribute": Case(
        f'device.attributes["{DRA}"].services.split("example").size() >= 2',
        driver=DRA,
        attributes={"services": Attr(string_value="some_example_value")},
        match=True,
        cost=19,
    ),
    "regexp_attribute": Case(
        f'device.attributes["{DRA}"].services.matches("[^a]?sym")',
        driver=DRA,
        attributes={"services": Attr(string_value="asymetric")},
        match=True,
        cost=18,
    ),
    "check_capacity_domains": Case(
        f'device.capacity.exists_one(x, x == "{DRA}")',
        driver=DRA,
        capacity={"memory": "1Mi"},
        match=True,
        cost=164,
    ),
    "check_capacity_ids": Case(
        f'device.capacity["{DRA}"].exists_one(x, x == "memory")',
        driver=DRA,
        capacity={"memory": "1Mi"},
        match=True,
        cost=133,
    ),
    "expensive": Case(
        f"{_nested}.all(x, {_nested}.all(y, {_nested}.all(z, {_nested}.all(z2, {_nested}.all(z3, "
        f"{_nested}.all(z4, {_nested}.all(z5, int('1'.find('[0-9]*')) < 100)))))))",
        driver=DRA,
        attributes=_expensive,
        match_error="actual cost limit exceeded",
        cost=85555551,
    ),
    "allow_multiple_allocations": Case(
        "device.allowMultipleAllocations == true",
        consumable_capacity=True,
        allow_multiple=True,
        driver=DRA,
        match=True,
        cost=3,
    ),
    "allow_multiple_allocations_default": Case(
        "device.allowMultipleAllocations == false",
        consumable_capacity=True,
        driver=DRA,
        match=True,
        cost=3,
    ),
    "allow_multiple_allocations_false": Case(
        "device.allowMultipleAllocations == false",
        consumable_capacity=True,
        allow_multiple=False,
        driver=DRA,
        match=True,
        cost=3,
    ),
    "allow_multiple_allocations_new": Case(
        "device.allowMultipleAllocations == false",
        consumable_capacity=True,
        new_expressions=True,
        allow_multiple=False,
        driver=DRA,
        match=True,
        cost=3,
    ),
    "allow_multiple_allocations_enabled": Case(
        "device.allowMultipleAllocations == false",
        consumable_capacity=True,
        new_expressions=True,
        allow_multiple=False,
        driver=DRA,
        match=True,
        cost=3,
    ),
    "allow_multiple_allocations_disabled": Case(
        "device.allowMultipleAllocations == false",
        new_expressions=True,
        driver=DRA,
        compile_error="undefined field 'allowMultipleAllocations'",
    ),
}


def _params() -> list[Any]:
    out = []
    for name, case in CASES.items():
        for lt in (False, True) if case.list_type is None else (case.list_type,):
            out.append(
                pytest.param(case, lt, id=f"TestCEL_{name}-list-type-attributes-{str(lt).lower()}")
            )
    return out


@pytest.mark.parametrize(("case", "list_type"), _params())
def test_compile__TestCEL(case: Case, list_type: bool) -> None:
    features = CelFeatures(
        version=Version(1, 36),
        consumable_capacity=case.consumable_capacity,
        list_type_attributes=list_type,
        stored=not case.new_expressions,
    )
    if case.compile_error:
        with pytest.raises(CelCompileError) as err:
            compile_selector(case.expression, features)
        assert case.compile_error in str(err.value)
        return
    selector = compile_selector(case.expression, features)
    assert (selector.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST) == (
        case.cost > CEL_SELECTOR_EXPRESSION_MAX_COST
    )
    assert selector.max_cost == case.cost
    device = CelDevice(
        case.driver, case.attributes or {}, case.capacity or {}, features, case.allow_multiple
    )
    if case.match_error:
        with pytest.raises(CelRuntimeError) as rerr:
            selector.matches(device)
        assert case.match_error in str(rerr.value)
        return
    assert selector.matches(device) is case.match


def test_no_such_key_carries_the_optional_chaining_hint() -> None:
    selector = compile_selector(f'device.attributes["{DRA}"].model == "a100"')
    with pytest.raises(CelRuntimeError) as err:
        selector.matches(CelDevice(DRA, {}, {}, CelFeatures()))
    assert str(err.value) == (
        "no such key: model. consider using CEL optional chaining (.? followed by orValue()) or guarding the "
        "check with has() for optional fields"
    )


def test_optional_chaining_and_has_on_a_missing_domain() -> None:
    device = CelDevice(DRA, {}, {}, CelFeatures())
    assert compile_selector(f'device.attributes["{DRA}"].?model.orValue("none") == "none"').matches(
        device
    )
    assert compile_selector(f'!has(device.attributes["{DRA}"].model)').matches(device)


def test_syntax_error_reads_as_cel_go_prints_it() -> None:
    with pytest.raises(CelCompileError) as err:
        compile_selector("device.driver ==")
    text = str(err.value)
    assert text.startswith("compilation failed: ERROR: <input>:1:17: Syntax error:")
    assert "\n | device.driver ==\n | ................^" in text


def test_allow_multiple_allocations_is_unknown_before_1_34() -> None:
    with pytest.raises(CelCompileError, match="undefined field 'allowMultipleAllocations'"):
        compile_selector("device.allowMultipleAllocations", CelFeatures(version=Version(1, 33)))


def test_includes_is_unknown_before_1_36() -> None:
    with pytest.raises(CelCompileError, match="undeclared reference to 'includes'"):
        compile_selector('device.driver.includes("x")', CelFeatures(version=Version(1, 35)))


def test_sets_and_lists_extensions() -> None:
    device = CelDevice(DRA, {"n": Attr(int_value=3)}, {"mem": "2Gi"}, CelFeatures())
    for expr in (
        "sets.contains([1, 2, 3], [2, 3])",
        "sets.intersects([1, 2], [2, 5])",
        "sets.equivalent([1, 2, 2], [2, 1])",
        "[1, 2, 3].isSorted() && [1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [3, 1].max() == 3",
        '"abc123".find("[0-9]+") == "123"',
        f'device.capacity["{DRA}"].mem.compareTo(quantity("2048Mi")) == 0',
        f'device.capacity["{DRA}"].mem == quantity("2Gi")',
        'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
        'semver("1.0.0-alpha").isLessThan(semver("1.0.0"))',
        'quantity("1.5").add(quantity("500m")).asInteger() == 2',
        '"a,b".split(",").size() == 2 && "ABC".lowerAscii() == "abc"',
    ):
        assert compile_selector(expr).matches(device), expr


def test_results_are_cached_per_key() -> None:
    selector = compile_selector(f'device.attributes["{DRA}"].n > 1')
    device = CelDevice(DRA, {"n": Attr(int_value=3)}, {}, CelFeatures())
    assert selector.matches(device, cache_key=("pool", "slice", 1, "dev"))
    other = CelDevice(DRA, {"n": Attr(int_value=0)}, {}, CelFeatures())
    assert selector.matches(
        other, cache_key=("pool", "slice", 1, "dev")
    )  # same key: the kept verdict
    assert not selector.matches(other, cache_key=("pool", "slice", 2, "dev"))


def test_validate_selector_limits() -> None:
    features = CelFeatures(stored=False)
    path = "spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert validate_selector("x" * 10241, path, features) == [
        f"{path}: Too long: may not be more than 10240 bytes"
    ]
    assert validate_selector(CASES["expensive"].expression, path, features) == [
        f"{path}: Forbidden: too complex, exceeds cost limit"
    ]
    [err] = validate_selector("1", path, features)
    assert err == f'{path}: Invalid value: "1": must evaluate to bool or the unknown type, not int'
    assert validate_selector("device.driver == 'x'", path, features) == []


def test_manifest_validation_uses_the_engine() -> None:
    """kubesched.validation checks a selector with this engine (registered on import), in the
    API server's words (k8s v1.36 validateCELExpression)."""
    from kubesched._errors import ConfigError
    from kubesched.validation._dra import check_cel_expression

    fld = "spec.selectors[0].cel.expression"
    check_cel_expression('device.driver == "gpu.example.com"', fld)
    with pytest.raises(ConfigError) as err:
        check_cel_expression("device.attributes[", fld)
    assert str(err.value).startswith(
        f'{fld}: Invalid value: "device.attributes[": compilation failed: ERROR: <input>:1:'
    )
    with pytest.raises(ConfigError) as err:
        check_cel_expression(CASES["expensive"].expression, fld)
    assert str(err.value) == f"{fld}: Forbidden: too complex, exceeds cost limit"
