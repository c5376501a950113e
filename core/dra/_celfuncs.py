"""The Kubernetes CEL libraries DRA selectors use, for cel-expr-python: Quantity, semver, the
lists and sets extensions, regex ``find``/``findAll`` and DRA's ``includes``.

cel-expr-python cannot carry Python objects through an evaluation, so a Quantity is the map
``{"kubernetes.Quantity": [numerator, denominator]}`` (the exact value, reduced) and a semver the
map ``{"kubernetes.Semver": [major, minor, patch, "prerelease"]}`` (build metadata dropped, as
blang/semver's Compare ignores it).  Both are canonical, so CEL's ``==`` on two of them is
upstream's ``Equal``.  Function names, overloads and error texts follow
``k8s.io/apiserver/pkg/cel/library`` (quantity.go, semverlib.go, lists.go, regex.go; v1.36.0),
``cel-go/ext/sets.go`` and ``k8s.io/dynamic-resource-allocation`` v0.36.2 ``cel/compile.go``
(``includes``).  The engine dispatches a member function on concrete argument types only, so a
function over "any value" is declared once per CEL type.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from cel_expr_python import cel

from kubesched.api._resources import QuantityError, parse_quantity

QUANTITY = "kubernetes.Quantity"
SEMVER = "kubernetes.Semver"
MAX_INCLUDES_VALUES = 48  # resourceapi.ResourceSliceMaxAttributeValuesPerDevice

_T = cel.Type
MAP = _T.Map(_T.STRING, _T.DYN)
LIST = _T.List(_T.DYN)
SCALARS = (_T.INT, _T.UINT, _T.DOUBLE, _T.STRING, _T.BOOL, _T.BYTES, MAP, LIST)

_QUANTITY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class CelFunctionError(Exception):
    """An error a library function returns to the evaluation (cel-go's ``types.NewErr``)."""


def quantity_value(q: Fraction) -> dict[str, list[int]]:
    """The CEL value of a Quantity."""
    return {QUANTITY: [q.numerator, q.denominator]}


def _q(v: Any) -> Fraction:
    if isinstance(v, dict) and QUANTITY in v:
        n, d = v[QUANTITY]
        return Fraction(n, d)
    raise CelFunctionError("no such overload")


def _quantity(s: str) -> dict[str, list[int]]:
    num, den = _parsed_quantity(s)
    return {QUANTITY: [num, den]}


@functools.lru_cache(maxsize=4096)
def _parsed_quantity(s: str) -> tuple[int, int]:
    try:
        q = parse_quantity(s)
    except (QuantityError, ValueError) as err:
        raise CelFunctionError(_QUANTITY_FORMAT) from err
    return q.numerator, q.denominator


def _is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
    except (QuantityError, ValueError):
        return False
    return True


# ---- semver (blang/semver v4, as k8s.io/apiserver/pkg/cel/library/semverlib.go uses it) ----

_NUM = r"0|[1-9][0-9]*"
_IDENT = r"[0-9A-Za-z-]+"
_STRICT = re.compile(
    rf"({_NUM})\.({_NUM})\.({_NUM})(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?"
)
_RELAXED = re.compile(r"v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(.*)")


def parse_semver(text: str, normalize: bool = False) -> list[Any]:
    """``[major, minor, patch, prerelease]``; ValueError when ``text`` is no semver.  With
    ``normalize`` (semver library version 1), a leading ``v``, missing minor/patch and leading
    zeros are accepted."""
    if normalize:
        m = _RELAXED.fullmatch(text)
        if m is None:
            raise ValueError(f"No Major.Minor.Patch elements found: {text}")
        parts = [str(int(m[1])), str(int(m[2] or "0")), str(int(m[3] or "0"))]
        text = ".".join(parts) + m[4]
    m = _STRICT.fullmatch(text)
    if m is None:
        raise ValueError(f"Invalid semver: {text}")
    pre = m[4] or ""
    for part in pre.split(".") if pre else ():
        if part.isdigit() and len(part) > 1 and part[0] == "0":
            raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {part!r}")
    return [int(m[1]), int(m[2]), int(m[3]), pre]


def semver_value(text: str, normalize: bool = False) -> dict[str, list[Any]]:
    """The CEL value of a semver."""
    return {SEMVER: parse_semver(text, normalize)}


def _semver(s: str, normalize: bool = False) -> dict[str, list[Any]]:
    try:
        return semver_value(s, normalize)
    except ValueError as err:
        raise CelFunctionError(f"could not parse {s!r} as semver: {err}") from None


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        parse_semver(s, normalize)
    except ValueError:
        return False
    return True


def _sv(v: Any) -> list[Any]:
    if isinstance(v, dict) and SEMVER in v:
        return list(v[SEMVER])
    raise CelFunctionError("no such overload")


def _pre_key(pre: str) -> tuple[Any, ...]:
    if not pre:
        return ((2,),)  # a release sorts after its prereleases
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))


def _cmp_semver(a: list[Any], b: list[Any]) -> int:
    ka = (a[0], a[1], a[2], _pre_key(a[3]))
    kb = (b[0], b[1], b[2], _pre_key(b[3]))
    return (ka > kb) - (ka < kb)


def _compare(a: Any, b: Any) -> int:
    qa_ = a.get(QUANTITY) if isinstance(a, dict) else None
    qb_ = b.get(QUANTITY) if isinstance(b, dict) else None
    if qa_ is not None and qb_ is not None:
        left: int = qa_[0] * qb_[1]  # denominators are positive
        right: int = qb_[0] * qa_[1]
        return (left > right) - (left < right)
    if qa_ is not None or qb_ is not None:
        raise CelFunctionError("no such overload")
    return _cmp_semver(_sv(a), _sv(b))


# ---- lists (library/lists.go), sets (cel-go ext/sets.go), includes (DRA) ----------------


def _includes(target: Any, arg: Any) -> bool:
    if isinstance(target, list):
        for i, item in enumerate(target):
            if i >= MAX_INCLUDES_VALUES:
                raise CelFunctionError(
                    f"'includes' function cannot be applied to lists longer than {MAX_INCLUDES_VALUES} values"
                )
            if _equal(item, arg):
                return True
        return False
    return _equal(target, arg)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _is_sorted(xs: list[Any]) -> bool:
    return all(_lt_eq(xs[i], xs[i + 1]) for i in range(len(xs) - 1))


def _lt_eq(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return _compare(a, b) <= 0
    return bool(a <= b)


def _sum(xs: list[Any]) -> Any:
    if xs and isinstance(xs[0], dict) and QUANTITY in xs[0]:
        return quantity_value(sum((_q(x) for x in xs), Fraction(0)))
    return sum(xs) if xs else 0


def _min(xs: list[Any]) -> Any:
    if not xs:
        raise CelFunctionError("min called on empty list")
    best = xs[0]
    for x in xs[1:]:
        if not _lt_eq(best, x):
            best = x
    return best


def _max(xs: list[Any]) -> Any:
    if not xs:
        raise CelFunctionError("max called on empty list")
    best = xs[0]
    for x in xs[1:]:
        if _lt_eq(best, x):
            best = x
    return best


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CelFunctionError(f"regex compilation failed: {err}") from None


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    out = [m.group(0) for m in _regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


def _as_integer(v: Any) -> int:
    q = _q(v)
    if q.denominator != 1 or not -(1 << 63) <= q.numerator < 1 << 63:
        raise CelFunctionError("cannot convert value to integer")
    return q.numerator


def _q_add(a: Any, b: Any) -> dict[str, list[int]]:
    return quantity_value(_q(a) + (b if isinstance(b, int) else _q(b)))


def _q_sub(a: Any, b: Any) -> dict[str, list[int]]:
    return quantity_value(_q(a) - (b if isinstance(b, int) else _q(b)))


def _sign(v: Any) -> int:
    q = _q(v)
    return (q > 0) - (q < 0)


def _decl(
    name: str, ret: Any, params: Sequence[Any], impl: Callable[..., Any], member: bool = False
) -> cel.Overload:
    oid = (
        name
        + "_"
        + "_".join(
            p.name().lower().replace("(", "").replace(")", "").replace(", ", "") for p in params
        )
    )
    return cel.Overload(oid, ret, list(params), is_member=member, impl=impl)


def function_decls(*, includes: bool) -> list[cel.FunctionDecl]:
    """Every function this module adds to the environment."""
    b, i, s, d = _T.BOOL, _T.INT, _T.STRING, _T.DOUBLE
    fns: dict[str, list[cel.Overload]] = {
        "quantity": [_decl("quantity", MAP, [s], _quantity)],
        "isQuantity": [_decl("isQuantity", b, [s], _is_quantity)],
        "semver": [_decl("semver", MAP, [s], _semver), _decl("semver", MAP, [s, b], _semver)],
        "isSemver": [
            _decl("isSemver", b, [s], _is_semver),
            _decl("isSemver", b, [s, b], _is_semver),
        ],
        "isGreaterThan": [
            _decl("isGreaterThan", b, [MAP, MAP], lambda a, c: _compare(a, c) > 0, True)
        ],
        "isLessThan": [_decl("isLessThan", b, [MAP, MAP], lambda a, c: _compare(a, c) < 0, True)],
        "compareTo": [_decl("compareTo", i, [MAP, MAP], _compare, True)],
        "major": [_decl("major", i, [MAP], lambda v: _sv(v)[0], True)],
        "minor": [_decl("minor", i, [MAP], lambda v: _sv(v)[1], True)],
        "patch": [_decl("patch", i, [MAP], lambda v: _sv(v)[2], True)],
        "sign": [_decl("sign", i, [MAP], _sign, True)],
        "add": [
            _decl("add", MAP, [MAP, MAP], _q_add, True),
            _decl("add", MAP, [MAP, i], _q_add, True),
        ],
        "sub": [
            _decl("sub", MAP, [MAP, MAP], _q_sub, True),
            _decl("sub", MAP, [MAP, i], _q_sub, True),
        ],
        "asInteger": [_decl("asInteger", i, [MAP], _as_integer, True)],
        "isInteger": [_decl("isInteger", b, [MAP], lambda v: _q(v).denominator == 1, True)],
        "asApproximateFloat": [_decl("asApproximateFloat", d, [MAP], lambda v: float(_q(v)), True)],
        "isSorted": [_decl("isSorted", b, [LIST], _is_sorted, True)],
        "sum": [_decl("sum", _T.DYN, [LIST], _sum, True)],
        "min": [_decl("min", _T.DYN, [LIST], _min, True)],
        "max": [_decl("max", _T.DYN, [LIST], _max, True)],
        "find": [_decl("find", s, [s, s], _find, True)],
        "findAll": [
            _decl("findAll", _T.List(s), [s, s], _find_all, True),
            _decl("findAll", _T.List(s), [s, s, i], _find_all, True),
        ],
        "sets.contains": [
            _decl(
                "sets.contains",
                b,
                [LIST, LIST],
                lambda a, c: all(any(_equal(x, y) for x in a) for y in c),
            )
        ],
        "sets.equivalent": [
            _decl(
                "sets.equivalent",
                b,
                [LIST, LIST],
                lambda a, c: (
                    all(any(_equal(x, y) for x in a) for y in c)
                    and all(any(_equal(x, y) for x in c) for y in a)
                ),
            )
        ],
        "sets.intersects": [
            _decl(
                "sets.intersects",
                b,
                [LIST, LIST],
                lambda a, c: any(_equal(x, y) for x in a for y in c),
            )
        ],
    }
    if includes:
        fns["includes"] = [
            _decl("dra_includes", b, [t, a], _includes, True) for t in SCALARS for a in SCALARS
        ]
    return [cel.FunctionDecl(name, overloads) for name, overloads in fns.items()]
