"""CEL device selectors, evaluated as upstream's DRA evaluates them.

Model (``k8s.io/dynamic-resource-allocation`` v0.36.2 ``cel/compile.go``; v0.34.x/v0.35.x agree
except where noted):

    expression --compile (once per environment, cached)--> CompiledSelector
        |  syntax/type errors: "compilation failed: ERROR: <input>:L:C: ..." (cel-go's text)
        |  result type: bool or the unknown type, else "must evaluate to bool or the unknown
        |  type, not T"; worst-case cost estimated (see _celast)
        v
    CompiledSelector.matches(device) --> bool, or CelRuntimeError (cel-go's text, plus the
        "no such key" hint), cached per (device key, slice generation) by the caller's key

The ``device`` variable: ``driver``; ``attributes`` and ``capacity``, maps from domain to maps
from id (a name without ``/`` takes the driver's name as its domain; an unknown domain reads as
an empty map); ``allowMultipleAllocations`` from 1.34 (in the stored-expressions environment, or
with DRAConsumableCapacity in the new-expressions one).  The Kubernetes base environment:
``cel.bind``, optional types (``.?``, ``orValue``), the strings extension, Quantity, semver
(kubesched emulates 1.30+; DRA selectors run from 1.34, where it is in), lists, sets, regex ``find``; DRA's ``includes`` from 1.36 (stored expressions, or
DRAListTypeAttributes for new ones), when list-valued attributes also become visible.

Engine: cel-expr-python (Google's cel-cpp binding), chosen by measurement; see docs in
``kubesched.dra``.  What it lacks is carried here and in ``_celfuncs``: Quantity and semver
values, the lists/sets libraries, ``includes``, cel-go's error texts and the cost limit.

Where kubesched differs, said once: two-variable comprehensions (k8s 1.32+ ``ext
.TwoVarComprehensions``), the URL/IP/CIDR/format/authz/image libraries are not available; the
runtime cost limit is enforced from the compile-time estimate (an expression whose worst case
exceeds 1,000,000 fails every evaluation with cel-go's "operation cancelled: actual cost limit
exceeded", where cel-go stops such an evaluation once its actual cost crosses the limit).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from kubesched._errors import KubeschedError
from kubesched.api._resources import parse_quantity
from kubesched.config._versions import Version
from kubesched.dra import _celast
from kubesched.dra._celfuncs import MAP, function_decls, quantity_value, semver_value

# k8s.io/api/resource/v1 types.go
CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024

# From kubernetes master after v1.36 (staging/src/k8s.io/dynamic-resource-allocation/cel,
# EnhanceRuntimeError), applied at every version as the issue asks.
NO_SUCH_KEY_HINT = ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields"
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"


class CelRuntimeError(KubeschedError):
    """A selector failed on one device; ``str()`` is cel-go's text (with DRA's hint)."""


class CelCompileError(KubeschedError):
    """A selector does not compile; ``str()`` is upstream's ``CompilationResult.Error`` detail."""


class Attribute(Protocol):
    """A ``resource.k8s.io/v1`` DeviceAttribute: exactly one value field is set."""

    @property
    def int_value(self) -> int | None: ...
    @property
    def bool_value(self) -> bool | None: ...
    @property
    def string_value(self) -> str | None: ...
    @property
    def version_value(self) -> str | None: ...


@dataclass(frozen=True)
class CelFeatures:
    """What of the environment the emulated version and its gates turn on."""

    version: Version = Version(1, 36)
    consumable_capacity: bool = False  # DRAConsumableCapacity
    list_type_attributes: bool = False  # DRAListTypeAttributes
    stored: bool = True  # environment.StoredExpressions (the scheduler); False: NewExpressions

    @property
    def allow_multiple_allocations(self) -> bool:
        return self.version >= (1, 34) and (self.stored or self.consumable_capacity)

    @property
    def includes(self) -> bool:
        return self.version >= (1, 36) and (self.stored or self.list_type_attributes)


_ENVS: dict[CelFeatures, Any] = {}


def _env(features: CelFeatures) -> Any:
    env = _ENVS.get(features)
    if env is None:
        decls = function_decls(includes=features.includes)
        env = cel.NewEnv(
            variables={"device": MAP},
            extensions=[
                ext_bindings.ExtBindings(),
                ext_optional.ExtOptional(),
                ext_strings.ExtStrings(),
            ],
            functions=decls,
        )
        _ENVS[features] = env
    return env


_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_TAIL = re.compile(r" \[[A-Z_]+\]$")


def _engine_text(err: BaseException | str) -> str:
    text = str(err)
    text = _STATUS_TAIL.sub("", _STATUS.sub("", text, count=1))
    return text


_KEY = re.compile(r'^Key not found in map : "?(.*?)"?$')
_INDEX = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")


def runtime_text(engine_message: str) -> str:
    """cel-cpp's runtime error in cel-go's words, with DRA's hint for a missing key."""
    text = _engine_text(engine_message)
    m = _KEY.match(text)
    if m:
        return f"no such key: {m[1]}{NO_SUCH_KEY_HINT}"
    m = _INDEX.match(text)
    if m:
        return f"index out of range: {m[1]}"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    if text == "divide by zero":
        return "division by zero"
    if text == "modulus by zero":
        return "modulus by zero"
    return text


def _type_name(t: Any) -> str:
    name = str(t.name())
    return {
        "BOOL": "bool",
        "INT": "int",
        "UINT": "uint",
        "DOUBLE": "double",
        "STRING": "string",
        "BYTES": "bytes",
        "NULL": "null_type",
        "DURATION": "google.protobuf.Duration",
        "TIMESTAMP": "google.protobuf.Timestamp",
        "map": "map(string, dyn)",
        "list": "list(dyn)",
    }.get(name, name.lower() if name.isupper() else name)


def _caret(expression: str, line: int, column: int) -> str:
    src = expression.split("\n")[line - 1] if expression else ""
    return f"\n | {src}\n | {'.' * (column - 1)}^"


@dataclass
class CompiledSelector:
    """One compiled expression in one environment (upstream's ``CompilationResult``)."""

    expression: str
    features: CelFeatures
    max_cost: int
    program: Any = None
    attr_domains: frozenset[str] = frozenset()
    cap_domains: frozenset[str] = frozenset()
    results: dict[Any, bool | CelRuntimeError] = field(default_factory=dict)

    def matches(self, device: CelDevice, cache_key: Any = None) -> bool:
        """Whether the device matches; raises :class:`CelRuntimeError` (upstream's
        ``DeviceMatches``).  ``cache_key`` (e.g. (pool, slice name, generation, device)) keeps
        the verdict for the next call with the same key."""
        if cache_key is not None:
            hit = self.results.get(cache_key)
            if hit is not None:
                if isinstance(hit, CelRuntimeError):
                    raise hit
                return hit
        try:
            verdict = self._evaluate(device)
        except CelRuntimeError as err:
            if cache_key is not None:
                self._remember(cache_key, err)
            raise
        if cache_key is not None:
            self._remember(cache_key, verdict)
        return verdict

    def _remember(self, key: Any, value: bool | CelRuntimeError) -> None:
        if len(self.results) >= 200_000:
            self.results.clear()
        self.results[key] = value

    def _evaluate(self, device: CelDevice) -> bool:
        if self.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
            raise CelRuntimeError(COST_LIMIT_EXCEEDED)
        activation = device.activation(self)
        try:
            value = self.program.eval(activation)
        except RuntimeError as err:  # the engine's own failures
            raise CelRuntimeError(runtime_text(str(err))) from None
        result = value.value()
        if isinstance(result, bool):
            return result
        tname = _type_name(value.type())
        if tname in ("ERROR", "error"):
            raise CelRuntimeError(runtime_text(str(result)))
        raise CelRuntimeError(
            f"CEL result of type {tname} could not be converted to bool: type conversion error"
        )


class CelDevice:
    """One device as the ``device`` variable, built once (per slice generation) and shared by
    every selector evaluated on it.  An attribute the environment cannot represent (a list
    without DRAListTypeAttributes, a bad version) fails each evaluation as upstream's does."""

    __slots__ = ("_activations", "_error", "_value")

    def __init__(
        self,
        driver: str,
        attributes: Mapping[str, Any],
        capacity: Mapping[str, Any],
        features: CelFeatures,
        allow_multiple_allocations: bool | None = None,
    ) -> None:
        self._activations: dict[tuple[frozenset[str], frozenset[str]], Any] = {}
        self._error: CelRuntimeError | None = None
        self._value: dict[str, Any] = {}
        try:
            self._value = device_value(driver, attributes, capacity, features)
        except CelRuntimeError as err:
            self._error = err
        if features.allow_multiple_allocations:
            self._value["allowMultipleAllocations"] = bool(allow_multiple_allocations)

    def activation(self, selector: CompiledSelector) -> Any:
        if self._error is not None:
            raise self._error
        key = (selector.attr_domains, selector.cap_domains)
        act = self._activations.get(key)
        if act is None:
            value = self._value
            missing_a = [d for d in selector.attr_domains if d not in value["attributes"]]
            missing_c = [d for d in selector.cap_domains if d not in value["capacity"]]
            if missing_a or missing_c:
                value = dict(value)
                value["attributes"] = {**value["attributes"], **{d: {} for d in missing_a}}
                value["capacity"] = {**value["capacity"], **{d: {} for d in missing_c}}
            act = _env(selector.features).Activation({"device": value})
            self._activations[key] = act
        return act


def _attribute_value(name: str, attr: Any, features: CelFeatures) -> Any:
    if features.list_type_attributes:
        for field_name in ("int_values", "bool_values", "string_values"):
            values = getattr(attr, field_name, None)
            if values is not None:
                return list(values)
        versions = getattr(attr, "version_values", None)
        if versions is not None:
            try:
                return [semver_value(v) for v in versions]
            except ValueError as err:
                raise CelRuntimeError(f"attribute {name}: parse semantic version: {err}") from None
    if attr.int_value is not None:
        return attr.int_value
    if attr.bool_value is not None:
        return attr.bool_value
    if attr.string_value is not None:
        return attr.string_value
    if attr.version_value is not None:
        try:
            return semver_value(attr.version_value)
        except ValueError as err:
            raise CelRuntimeError(f"attribute {name}: parse semantic version: {err}") from None
    raise CelRuntimeError(f"attribute {name}: unsupported attribute value")


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """compile.go ``parseQualifiedName``: ``domain/id``, or the default domain and ``name``."""
    sep = name.find("/")
    if sep == -1:
        return default_domain, name
    return name[:sep], name[sep + 1 :]


def _capacity_value(cap: Any) -> Any:
    value = getattr(cap, "value", cap)
    if isinstance(value, Fraction):
        return quantity_value(value)
    return quantity_value(parse_quantity(value))


def device_value(
    driver: str,
    attributes: Mapping[str, Any],
    capacity: Mapping[str, Any],
    features: CelFeatures,
) -> dict[str, Any]:
    """The ``device`` variable's value (compile.go ``DeviceMatches``)."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in attributes.items():
        domain, ident = split_qualified_name(name, driver)
        attrs.setdefault(domain, {})[ident] = _attribute_value(name, attr, features)
    caps: dict[str, dict[str, Any]] = {}
    for name, cap in capacity.items():
        domain, ident = split_qualified_name(name, driver)
        caps.setdefault(domain, {})[ident] = _capacity_value(cap)
    return {"driver": driver, "attributes": attrs, "capacity": caps}


_COMPILED: dict[tuple[CelFeatures, str], CompiledSelector | CelCompileError] = {}


def compile_selector(expression: str, features: CelFeatures = CelFeatures()) -> CompiledSelector:
    """Compile once per (environment, expression); raises :class:`CelCompileError` with
    upstream's detail ("compilation failed: ERROR: <input>:1:2: Syntax error: ...")."""
    key = (features, expression)
    hit = _COMPILED.get(key)
    if hit is None:
        hit = _compile(expression, features)
        if len(_COMPILED) >= 50_000:
            _COMPILED.clear()
        _COMPILED[key] = hit
    if isinstance(hit, CelCompileError):
        raise hit
    return hit


def _compile(expression: str, features: CelFeatures) -> CompiledSelector | CelCompileError:
    env = _env(features)
    try:
        program = env.compile(expression)
    except RuntimeError as err:
        return CelCompileError("compilation failed: " + _engine_text(err))
    checked = _celast.read_checked(program.serialize())
    allowed = {"driver", "attributes", "capacity"}
    if features.allow_multiple_allocations:
        allowed.add("allowMultipleAllocations")
    bad = [(nid, name) for nid, name in _celast.device_fields(checked.root) if name not in allowed]
    if bad:
        issues = []
        for nid, name in bad:
            line, col = checked.location(nid)
            issues.append(
                f"ERROR: <input>:{line}:{col}: undefined field '{name}'"
                + _caret(expression, line, col)
            )
        return CelCompileError("compilation failed: " + "\n".join(issues))
    rtype = _type_name(program.return_type())
    if rtype not in ("bool", "DYN", "dyn"):
        return CelCompileError(f"must evaluate to bool or the unknown type, not {rtype}")
    attr_domains, cap_domains = _celast.looked_up_domains(checked.root)
    cost = _celast.estimate_cost(checked.root, list_type_attributes=features.list_type_attributes)
    return CompiledSelector(expression, features, cost, program, attr_domains, cap_domains)


def validate_selector(expression: str, path: str, features: CelFeatures) -> list[str]:
    """The API server's errors for a ``cel.expression`` (k8s v1.36 pkg/apis/resource/validation
    ``validateCELSelector``), each as ``field.Error`` prints: the length limit, the compile
    error, the cost limit.  New objects are checked in the new-expressions environment."""
    if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [
            f"{path}: Too long: may not be more than {CEL_SELECTOR_EXPRESSION_MAX_LENGTH} bytes"
        ]
    try:
        compiled = compile_selector(expression, features)
    except CelCompileError as err:
        quoted = expression.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return [f'{path}: Invalid value: "{quoted}": {err}']
    if compiled.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
        return [f"{path}: Forbidden: too complex, exceeds cost limit"]
    return []


# The API server's check of a new object's selector (k8s v1.36 pkg/apis/resource/validation
# validateCELExpression: the new-expressions environment of the server's version, its gates'
# defaults: DRAConsumableCapacity on, DRAListTypeAttributes off at 1.36).
_VALIDATION_FEATURES = CelFeatures(version=Version(1, 36), consumable_capacity=True, stored=False)


def validation_check(expression: str) -> tuple[str, str] | None:
    """For ``kubesched.validation``: None when the expression is valid, else (error type,
    detail): ("Invalid", "compilation failed: ...") or ("Forbidden", "too complex, exceeds cost
    limit")."""
    try:
        compiled = compile_selector(expression, _VALIDATION_FEATURES)
    except CelCompileError as err:
        return ("Invalid", str(err))
    if compiled.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST:
        return ("Forbidden", "too complex, exceeds cost limit")
    return None
