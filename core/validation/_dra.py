"""The DRA kinds (``resource.k8s.io``) and a pod's claims, as the API server validates them.

Ported from kubernetes ``pkg/apis/resource/validation/validation.go`` (``ValidateResourceClaim``,
``ValidateResourceClaimTemplate``, ``ValidateDeviceClass``, ``ValidateResourceSlice``,
``ValidateDeviceTaintRule``, and for a claim's status ``validateResourceClaimStatusUpdate``)
and ``pkg/apis/core/validation/validation.go`` (``validatePodResourceClaims``,
``validateResourceClaimNames``), as of v1.36 (the fields v1.36 does not have are left out).
Each check raises the first error in upstream's order as one :class:`ConfigError` naming the
field.  Upstream walks a map in Go's random order; kubesched walks it in the manifest's order.

Why one file: upstream's ``validation.go`` checks the five kinds with one set of helpers (names,
request references, tolerations, taints, binding conditions, opaque configurations), ported here
in its order; split, each half would import the other's.

Where kubesched chooses otherwise:

- A claim's ``status`` is kept as given (a snapshot of a running cluster has allocated claims),
  so it is validated as a status update is (``reservedFor`` at most 256 entries and only with an
  allocation, at most 32 results, each result's names), where the API server would drop it on
  create.
- A device class a claim or template names need not exist: upstream does not check it either
  (the scheduler reports it when a pod needs the claim).
- CEL: the length limit (10 Ki) is checked here; compiling the expression and its cost limit
  (1,000,000) are the CEL engine's, plugged in with :func:`set_cel_check`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sized
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._dra import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    BINDING_CONDITIONS_MAX_SIZE,
    BINDING_FAILURE_CONDITIONS_MAX_SIZE,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CONFIG_SOURCE_CLAIM,
    CONFIG_SOURCE_CLASS,
    DEVICE_CONFIG_MAX_SIZE,
    DEVICE_CONSTRAINTS_MAX_SIZE,
    DEVICE_MAX_DOMAIN_LENGTH,
    DEVICE_MAX_ID_LENGTH,
    DEVICE_REQUESTS_MAX_SIZE,
    DEVICE_SELECTORS_MAX_SIZE,
    DEVICE_TAINTS_MAX_LENGTH,
    FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
    OPAQUE_PARAMETERS_MAX_LENGTH,
    POOL_NAME_MAX_LENGTH,
    RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
    RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE,
    RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE,
    RESOURCE_SLICE_MAX_COUNTER_SETS,
    RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET,
    RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION,
    RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
    RESOURCE_SLICE_MAX_DEVICES,
    RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES,
    DeviceClaim,
    DeviceTaint,
    DeviceToleration,
)
from kubesched.api._helpers import is_extended_resource_name
from kubesched.api._resources import QuantityError, parse_quantity
from kubesched.validation._base import (
    check_node_selector,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    invalid,
    label_value_errors,
    not_supported,
    qualified_errors,
    validate_labels,
)

CLUSTER_SCOPED = ("DeviceClass", "ResourceSlice", "DeviceTaintRule")
KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule")

_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sets.List: sorted
_TOLERATION_OPS = ("Equal", "Exists")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_C_IDENTIFIER_ERROR = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
    "validation is '[A-Za-z_][A-Za-z0-9_]*')"
)
_NUM = r"(0|[1-9]\d*)"
_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")
_ATTRIBUTE_KEY_MAX = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH

CelCheck = Callable[[str], "tuple[str, str] | None"]
"""Compiles a CEL selector: None when it is valid, else (error type, detail) as upstream's
``validateCELExpression`` reports it: ``("Invalid", "compilation failed: ...")`` for an
expression that does not compile, ``("Forbidden", "too complex, exceeds cost limit")`` for one
over the cost limit."""

_cel_check: CelCheck | None = None


def set_cel_check(check: CelCheck | None) -> None:
    """Plug in the CEL engine's compile check (the DRA CEL helper does, when it is imported)."""
    global _cel_check
    _cel_check = check


# --- field errors --------------------------------------------------------------------------------


def _required(fld: str, detail: str = "") -> ConfigError:
    return ConfigError(f"Required value: {detail}" if detail else "Required value", field=fld)


def _forbidden(fld: str, detail: str) -> ConfigError:
    return ConfigError(f"Forbidden: {detail}", field=fld)


def _too_many(fld: str, n: int, limit: int) -> ConfigError:
    """``field.TooMany``."""
    return ConfigError(f"Too many: {n}: must have at most {limit} items", field=fld)


def _too_long(fld: str, limit: int) -> ConfigError:
    return ConfigError(f"Too long: may not be more than {limit} bytes", field=fld)


def _invalid_raw(fld: str, shown: str, msg: str) -> ConfigError:
    """``field.Invalid`` of a value printed as is (a Go struct, a bool)."""
    return ConfigError(f"Invalid value: {shown}: {msg}", field=fld)


def _duplicate(fld: str, value: Any) -> ConfigError:
    return ConfigError(f"Duplicate value: {go_quote(value)}", field=fld)


def _max(items: Sized, limit: int, fld: str) -> None:
    """``validateSlice`` / ``validateSet``'s size check (it short-circuits the items)."""
    if len(items) > limit:
        raise _too_many(fld, len(items), limit)


def _unique(keys: Iterable[Any], fld: str) -> None:
    """``validateSet``'s duplicate check, after the items."""
    seen: set[Any] = set()
    for i, key in enumerate(keys):
        if key in seen:
            raise _duplicate(f"{fld}[{i}]", key)
        seen.add(key)


# --- names ---------------------------------------------------------------------------------------


def _dns_label(value: str, fld: str) -> None:
    errs = dns1123_label_errors(value)
    if errs:
        raise invalid(fld, value, errs[0])


def _dns_subdomain(value: str, fld: str) -> None:
    errs = dns1123_subdomain_errors(value)
    if errs:
        raise invalid(fld, value, errs[0])


def _driver_name(name: str, fld: str) -> None:
    """``ValidateCSIDriverName``."""
    if not name:
        raise _required(fld)
    if len(name) > 63:
        raise _too_long(fld, 63)
    errs = dns1123_subdomain_errors(name.lower())
    if errs:
        raise invalid(fld, name, errs[0])


def _pool_name(name: str, fld: str) -> None:
    if not name:
        raise _required(fld)
    if len(name) > POOL_NAME_MAX_LENGTH:
        raise _too_long(fld, POOL_NAME_MAX_LENGTH)
    for part in name.split("/"):
        _dns_subdomain(part, fld)


def _class_name(name: str, fld: str) -> None:
    if not name:
        raise _required(fld)
    _dns_subdomain(name, fld)


def _label_name(name: str, fld: str) -> None:
    """``metav1validation.ValidateLabelName``."""
    errs = qualified_errors(name)
    if errs:
        raise invalid(fld, name, errs[0])


def _label_value(value: str, fld: str) -> None:
    errs = label_value_errors(value)
    if errs:
        raise invalid(fld, value, errs[0])


def _c_identifier(ident: str, fld: str) -> None:
    if len(ident) > DEVICE_MAX_ID_LENGTH:
        raise _too_long(fld, DEVICE_MAX_ID_LENGTH)
    if not _C_IDENTIFIER.fullmatch(ident):
        raise invalid(fld, ident, _C_IDENTIFIER_ERROR)


def check_qualified_name(name: str, fld: str) -> None:
    """``validateQualifiedName``: a C identifier, or ``domain/identifier``."""
    parts = name.split("/")
    if len(parts) == 1:
        _c_identifier(parts[0], fld)
    elif len(parts) == 2:
        if not parts[0]:
            raise invalid(fld, "", "the domain must not be empty")
        _driver_name(parts[0], fld)
        if not parts[1]:
            raise invalid(fld, "", "the name must not be empty")
        _c_identifier(parts[1], fld)
    else:
        raise invalid(fld, name, "must not contain more than one slash")


def check_fully_qualified_name(name: str, fld: str) -> None:
    """``validateFullyQualifiedName``: a qualified name with a domain."""
    check_qualified_name(name, fld)
    if "/" not in name:
        raise invalid(fld, name, "a fully qualified name must be a domain and a name separated by a slash")


def _map_key(key: str, max_len: int) -> str:
    """``truncateIfTooLong``: a long key shortened in the middle for the field path."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[: (remaining + 1) // 2] + "..." + key[len(key) - remaining // 2 :]


def _quantity(value: Any, fld: str) -> Any:
    try:
        return parse_quantity(value)
    except QuantityError as e:
        raise ConfigError(str(e), field=fld) from None


def _qstr(value: Any) -> str:
    return str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))


# --- ResourceClaim -------------------------------------------------------------------------------


def _request_names(claim: DeviceClaim) -> dict[str, set[str] | None]:
    """``gatherRequestNames``: request → its subrequests (None for an ``exactly`` request)."""
    out: dict[str, set[str] | None] = {}
    for r in claim.requests:
        out[r.name] = {s.name for s in r.first_available} if r.first_available else None
    return out


def _has_request(names: dict[str, set[str] | None], ref: str) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    if len(segments) == 1:
        return True
    subs = names[segments[0]]
    return subs is not None and segments[1] in subs


_REQUEST_REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _request_ref(ref: str, fld: str, names: dict[str, set[str] | None]) -> None:
    """``validateRequestNameRef``."""
    segments = ref.split("/")
    if len(segments) > 2:
        raise invalid(fld, ref, _REQUEST_REF)
    for s in segments:
        _dns_label(s, fld)
    if not _has_request(names, ref):
        raise invalid(fld, ref, _REQUEST_REF)


def _request_refs(refs: list[str], fld: str, names: dict[str, set[str] | None]) -> None:
    _max(refs, DEVICE_REQUESTS_MAX_SIZE, fld)
    for i, ref in enumerate(refs):
        _request_ref(ref, f"{fld}[{i}]", names)
    _unique(refs, fld)


def check_cel_expression(expression: str, fld: str) -> None:
    """``validateCELExpression``: the length, then the engine's compile and cost check."""
    if len(expression.encode("utf-8", "surrogatepass")) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        raise _too_long(fld, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)
    if _cel_check is None:
        return
    err = _cel_check(expression)
    if err is None:
        return
    kind, detail = err
    if kind == "Required":
        raise _required(fld, detail)
    if kind == "Forbidden":
        raise _forbidden(fld, detail)
    if kind == "Invalid":
        raise invalid(fld, expression, detail)
    raise ConfigError(f"Internal error: {detail}", field=fld)


def _selectors(selectors: list[Any], fld: str) -> None:
    _max(selectors, DEVICE_SELECTORS_MAX_SIZE, fld)
    for i, s in enumerate(selectors):
        if s.cel is None:
            raise _required(f"{fld}[{i}].cel")
        check_cel_expression(s.cel.expression, f"{fld}[{i}].cel.expression")


def _allocation_mode(mode: str, count: int, fld: str) -> None:
    """``validateDeviceAllocationMode``."""
    if mode == ALLOCATION_MODE_ALL:
        if count != 0:
            raise invalid(f"{fld}.count", count, f"must not be specified when allocationMode is '{mode}'")
    elif mode == ALLOCATION_MODE_EXACT_COUNT:
        if count <= 0:
            raise invalid(f"{fld}.count", count, "must be greater than zero")
    else:
        raise not_supported(f"{fld}.allocationMode", mode, (ALLOCATION_MODE_ALL, ALLOCATION_MODE_EXACT_COUNT))


def check_device_toleration(t: DeviceToleration, fld: str) -> None:
    """``validateDeviceToleration``."""
    if t.key:
        _label_name(t.key, f"{fld}.key")
    if t.operator == "Exists":
        if t.value:
            raise invalid(f"{fld}.value", t.value, "must be empty for operator `Exists`")
    elif t.operator == "Equal":
        _label_value(t.value, f"{fld}.value")
    elif not t.operator:
        raise _required(f"{fld}.operator")
    else:
        raise not_supported(f"{fld}.operator", t.operator, _TOLERATION_OPS)
    if t.effect and t.effect not in _TAINT_EFFECTS:
        raise not_supported(f"{fld}.effect", t.effect, _TAINT_EFFECTS)


def _exact_or_sub(req: Any, fld: str) -> None:
    """``validateExactDeviceRequest`` / the shared part of ``validateDeviceSubRequest``."""
    _class_name(req.device_class_name, f"{fld}.deviceClassName")
    _selectors(req.selectors, f"{fld}.selectors")
    _allocation_mode(req.allocation_mode, req.count, fld)
    for i, t in enumerate(req.tolerations):
        check_device_toleration(t, f"{fld}.tolerations[{i}]")
    if req.capacity is not None:
        for k, v in req.capacity.requests.items():
            _quantity(v, f"{fld}.capacity.requests[{k}]")


def _device_request(req: Any, fld: str) -> None:
    """``validateDeviceRequest``."""
    _dns_label(req.name, f"{fld}.name")
    has_first, has_exactly = bool(req.first_available), req.exactly is not None
    if not has_first and not has_exactly:
        raise _required(fld, "exactly one of `exactly` or `firstAvailable` is required")
    if has_first and has_exactly:
        raise invalid(fld, "null", "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
    if has_first:
        sub_fld = f"{fld}.firstAvailable"
        _max(req.first_available, FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE, sub_fld)
        for i, sub in enumerate(req.first_available):
            _dns_label(sub.name, f"{sub_fld}[{i}].name")
            _exact_or_sub(sub, f"{sub_fld}[{i}]")
        _unique((s.name for s in req.first_available), sub_fld)
    else:
        _exact_or_sub(req.exactly, f"{fld}.exactly")


def _opaque(config: Any, fld: str) -> None:
    """``validateDeviceConfiguration``: an ``opaque`` config with a driver and a JSON object."""
    if config.opaque is None:
        raise _required(f"{fld}.opaque")
    _driver_name(config.opaque.driver, f"{fld}.opaque.driver")
    params = config.opaque.parameters
    p = f"{fld}.opaque.parameters"
    if params is None:
        raise _required(p)
    if len(json.dumps(params, separators=(",", ":"))) > OPAQUE_PARAMETERS_MAX_LENGTH:
        raise _too_long(p, OPAQUE_PARAMETERS_MAX_LENGTH)
    if not isinstance(params, dict):
        raise invalid(p, "<value omitted>", "must be a valid JSON object")


def check_device_claim(claim: DeviceClaim, fld: str) -> None:
    """``validateDeviceClaim``: requests (unique names, at most 32), constraints, config."""
    names = _request_names(claim)
    rf = f"{fld}.requests"
    _max(claim.requests, DEVICE_REQUESTS_MAX_SIZE, rf)
    for i, r in enumerate(claim.requests):
        _device_request(r, f"{rf}[{i}]")
    _unique((r.name for r in claim.requests), rf)
    cf = f"{fld}.constraints"
    _max(claim.constraints, DEVICE_CONSTRAINTS_MAX_SIZE, cf)
    for i, c in enumerate(claim.constraints):
        p = f"{cf}[{i}]"
        _request_refs(c.requests, f"{p}.requests", names)
        if c.match_attribute is not None:
            check_fully_qualified_name(c.match_attribute, f"{p}.matchAttribute")
        elif c.distinct_attribute is not None:
            check_fully_qualified_name(c.distinct_attribute, f"{p}.distinctAttribute")
        else:
            raise _required(p, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set')
    gf = f"{fld}.config"
    _max(claim.config, DEVICE_CONFIG_MAX_SIZE, gf)
    for i, g in enumerate(claim.config):
        _request_refs(g.requests, f"{gf}[{i}].requests", names)
        _opaque(g, f"{gf}[{i}]")


def _check_uid(uid: str, fld: str) -> None:
    if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", uid):
        raise invalid(
            fld, uid,
            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters",
        )


def _binding_parameters(conds: list[str], failures: list[str], fld: str) -> None:
    """``validateDeviceBindingParameters``."""
    bf, ff = f"{fld}.bindingConditions", f"{fld}.bindingFailureConditions"
    _max(conds, BINDING_CONDITIONS_MAX_SIZE, bf)
    for i, c in enumerate(conds):
        _label_name(c, f"{bf}[{i}]")
    _max(failures, BINDING_FAILURE_CONDITIONS_MAX_SIZE, ff)
    for i, c in enumerate(failures):
        _label_name(c, f"{ff}[{i}]")
    _unique(conds, bf)
    seen: set[str] = set()
    for i, c in enumerate(failures):
        if c in seen:
            raise _duplicate(f"{ff}[{i}]", c)
        seen.add(c)
        if c in conds:
            raise invalid(f"{ff}[{i}]", c, "bindingFailureConditions must not overlap with bindingConditions")
    if not conds and failures:
        raise invalid(bf, "null", "bindingConditions are required to use bindingFailureConditions")
    if not failures and conds:
        raise invalid(ff, "null", "bindingFailureConditions are required to use bindingConditions")


def _claim_status(claim: Any) -> None:
    """``validateResourceClaimStatusUpdate`` of a claim given with its status."""
    status, fld = claim.status, "status"
    names = _request_names(claim.spec.devices)
    rf = f"{fld}.reservedFor"
    _max(status.reserved_for, RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE, rf)
    for i, ref in enumerate(status.reserved_for):
        for attr, json_name in (("resource", "resource"), ("name", "name"), ("uid", "uid")):
            if not getattr(ref, attr):
                raise _required(f"{rf}[{i}].{json_name}")
    _unique((ref.uid for ref in status.reserved_for), rf)
    allocated: set[tuple[str, str, str, str | None]] = set()
    if status.allocation is not None:
        allocated = {(r.driver, r.pool, r.device, r.share_id) for r in status.allocation.devices.results}
    for i, d in enumerate(status.devices):
        p = f"{fld}.devices[{i}]"
        _driver_name(d.driver, f"{p}.driver")
        _pool_name(d.pool, f"{p}.pool")
        _dns_label(d.device, f"{p}.device")
        if (d.driver, d.pool, d.device, d.share_id) not in allocated:
            device_id = f"{d.driver}/{d.pool}/{d.device}" + (f"/{d.share_id}" if d.share_id else "")
            raise invalid(p, device_id, "must be an allocated device in the claim")
    if status.reserved_for and status.allocation is None:
        raise _forbidden(rf, "may not be specified when `allocated` is not set")
    if status.allocation is None:
        return
    af = f"{fld}.allocation.devices"
    results = status.allocation.devices.results
    _max(results, ALLOCATION_RESULTS_MAX_SIZE, f"{af}.results")
    for i, r in enumerate(results):
        p = f"{af}.results[{i}]"
        _request_ref(r.request, f"{p}.request", names)
        _driver_name(r.driver, f"{p}.driver")
        _pool_name(r.pool, f"{p}.pool")
        _dns_label(r.device, f"{p}.device")
        _binding_parameters(r.binding_conditions, r.binding_failure_conditions, p)
        for j, t in enumerate(r.tolerations):
            check_device_toleration(t, f"{p}.tolerations[{j}]")
        if r.share_id is not None:
            _check_uid(r.share_id, f"{p}.shareID")
    configs = status.allocation.devices.config
    _max(configs, 2 * DEVICE_CONFIG_MAX_SIZE, f"{af}.config")
    for i, c in enumerate(configs):
        p = f"{af}.config[{i}]"
        if not c.source:
            raise _required(f"{p}.source")
        if c.source not in (CONFIG_SOURCE_CLAIM, CONFIG_SOURCE_CLASS):
            raise not_supported(f"{p}.source", c.source, (CONFIG_SOURCE_CLAIM, CONFIG_SOURCE_CLASS))
        _request_refs(c.requests, f"{p}.requests", names)
        _opaque(c, p)
    if status.allocation.node_selector is not None:
        check_node_selector(status.allocation.node_selector, "status.allocation.nodeSelector")


# --- DeviceClass ---------------------------------------------------------------------------------


def _device_class(cls: Any) -> None:
    spec = cls.spec
    _selectors(spec.selectors, "spec.selectors")
    _max(spec.config, DEVICE_CONFIG_MAX_SIZE, "spec.config")
    for i, c in enumerate(spec.config):
        _opaque(c, f"spec.config[{i}]")
    ern = spec.extended_resource_name
    if ern is not None and not is_extended_resource_name(ern):
        raise invalid("spec.extendedResourceName", ern, "must be a valid extended resource name")


# --- ResourceSlice -------------------------------------------------------------------------------


def check_device_taint(taint: DeviceTaint, fld: str) -> None:
    """``validateDeviceTaint`` (of a new taint)."""
    _label_name(taint.key, f"{fld}.key")
    if taint.value:
        _label_value(taint.value, f"{fld}.value")
    if not taint.effect:
        raise _required(f"{fld}.effect")
    if taint.effect not in _TAINT_EFFECTS:
        raise not_supported(f"{fld}.effect", taint.effect, _TAINT_EFFECTS)


def _attribute(a: Any, fld: str) -> None:
    """``validateDeviceAttribute``: exactly one typed value."""
    n = 0
    if a.bool_value is not None:
        n += 1
    if a.int_value is not None:
        n += 1
    if a.string_value is not None:
        n += 1
        if len(a.string_value) > 64:
            raise _too_long(f"{fld}.string", 64)
    if a.version_value is not None:
        n += 1
        _version(a.version_value, f"{fld}.version")
    for attr, json_name in (("bool_values", "bools"), ("int_values", "ints"), ("string_values", "strings"), ("version_values", "versions")):
        values = getattr(a, attr)
        if values is None:
            continue
        n += 1
        if not values:
            raise invalid(f"{fld}.{json_name}", "null", "must not be empty if specified")
        for i, v in enumerate(values):
            if json_name == "strings" and len(v) > 64:
                raise _too_long(f"{fld}.strings[{i}]", 64)
            if json_name == "versions":
                _version(v, f"{fld}.versions[{i}]")
    if n != 1:
        raise invalid(fld, "", "exactly one value must be specified")


def _version(v: str, fld: str) -> None:
    if not _SEMVER.fullmatch(v):
        raise invalid(fld, v, "must be a string compatible with semver.org spec 2.0.0")
    if len(v) > 64:
        raise _too_long(fld, 64)


def _request_policy(value: Any, policy: Any, fld: str) -> None:
    """``validateRequestPolicy`` (integer quantities: DRAFractionalCapacityRange is off in v1.36)."""
    cap = _quantity(value, fld)
    if policy.valid_values and policy.valid_range is not None:
        raise _forbidden(fld, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time')
    if policy.valid_values:
        if policy.default is None:
            raise _required(f"{fld}.default", "required when validValues is defined")
        default = _quantity(policy.default, f"{fld}.default")
        vf = f"{fld}.validValues"
        values = [_quantity(v, f"{vf}[{i}]") for i, v in enumerate(policy.valid_values)]
        for i in range(len(values) - 1):
            if values[i] > values[i + 1]:
                raise invalid(f"{vf}[{i + 1}]", _qstr(policy.valid_values[i + 1]), "values must be sorted in ascending order")
        _max(values, 10, vf)  # CapacityRequestPolicyDiscreteMaxOptions
        for i, v in enumerate(values):
            if v > cap:
                raise invalid(f"{vf}[{i}]", _qstr(policy.valid_values[i]), f"option is larger than capacity value: {_qstr(value)}")
        _unique((int(v) for v in values), vf)
        if default not in values:
            raise invalid(vf, _qstr(policy.default), "default value is not valid according to the requestPolicy")
    elif policy.valid_range is not None:
        r, rf = policy.valid_range, f"{fld}.validRange"
        if policy.default is None:
            raise _required(f"{fld}.default", "required when validRange is defined")
        default = _quantity(policy.default, f"{fld}.default")
        if r.min is None:
            raise _required(f"{rf}.min", "required when validRange is defined")
        lo = _quantity(r.min, f"{rf}.min")
        if lo > cap:
            raise invalid(f"{rf}.min", _qstr(r.min), f"min is larger than capacity value: {_qstr(value)}")
        if default < lo:
            raise invalid(f"{rf}.default", _qstr(policy.default), f"default is less than min: {_qstr(r.min)}")
        hi = None
        if r.max is not None:
            hi = _quantity(r.max, f"{rf}.max")
            if lo > hi:
                raise invalid(f"{rf}.max", _qstr(r.min), f"min is larger than max: {_qstr(r.max)}")
            if hi > cap:
                raise invalid(f"{rf}.max", _qstr(r.max), f"max is larger than capacity value: {_qstr(value)}")
            if default > hi:
                raise invalid(f"{rf}.default", _qstr(policy.default), f"default is more than max: {_qstr(r.max)}")
        if r.step is not None:
            step = _quantity(r.step, f"{rf}.step")
            if step <= 0:
                raise invalid(f"{rf}.step", _qstr(r.step), "must be greater than zero")
            if lo + step > cap:
                raise invalid(f"{rf}.step", _qstr(r.step), f"one step {_qstr(lo + step)} is larger than capacity value: {_qstr(value)}")
            for v, raw in ((default, policy.default), (hi, r.max)):
                if v is not None and (int(v) - int(lo)) % int(step):
                    raise invalid(f"{rf}.step", _qstr(raw), f"value is not a multiple of a given step ({_qstr(r.step)}) from ({_qstr(r.min)})")


def _counters(counters: dict[str, Any], limit: int, fld: str) -> None:
    if not counters:
        raise _required(fld)
    if len(counters) > limit:
        raise _too_many(fld, len(counters), limit)
    for k, c in counters.items():
        _dns_label(k, fld)
        _quantity(c.value, f"{fld}[{_map_key(k, 63)}].value")


def _device(d: Any, fld: str, per_device_node_selection: bool | None) -> None:
    """``validateDevice``."""
    _dns_label(d.name, f"{fld}.name")
    n = len(d.attributes) + len(d.capacity)
    if n > RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        raise invalid(fld, n, f"the total number of attributes and capacities must not exceed {RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}")
    values = 0
    for a in d.attributes.values():
        lists = [x for x in (a.bool_values, a.int_values, a.string_values, a.version_values) if x]
        values += sum(len(x) for x in lists) if lists else 1
    if values > RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        raise invalid(fld, values, f"the total number of attribute values must not exceed {RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE}")
    for k, a in d.attributes.items():
        check_qualified_name(k, f"{fld}.attributes")
        _attribute(a, f"{fld}.attributes[{_map_key(k, _ATTRIBUTE_KEY_MAX)}]")
    multi = bool(d.allow_multiple_allocations)
    for k, c in d.capacity.items():
        check_qualified_name(k, f"{fld}.capacity")
        p = f"{fld}.capacity[{_map_key(k, _ATTRIBUTE_KEY_MAX)}]"
        _quantity(c.value, f"{p}.value")
        if c.request_policy is not None:
            if not multi:
                raise _forbidden(f"{p}.requestPolicy", "allowMultipleAllocations must be true")
            _request_policy(c.value, c.request_policy, f"{p}.requestPolicy")
    _max(d.taints, DEVICE_TAINTS_MAX_LENGTH, f"{fld}.taints")
    for i, t in enumerate(d.taints):
        check_device_taint(t, f"{fld}.taints[{i}]")
    cf = f"{fld}.consumesCounters"
    _max(d.consumes_counters, RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE, cf)
    for i, c in enumerate(d.consumes_counters):
        if not c.counter_set:
            raise _required(f"{cf}[{i}].counterSet")
        _dns_label(c.counter_set, f"{cf}[{i}].counterSet")
        _counters(c.counters, RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION, f"{cf}[{i}].counters")
    _unique((c.counter_set for c in d.consumes_counters), cf)
    if per_device_node_selection:
        set_fields = []
        if d.node_name is not None:
            if d.node_name:
                set_fields.append("`nodeName`")
                _dns_subdomain(d.node_name, f"{fld}.nodeName")
            else:
                raise invalid(f"{fld}.nodeName", "", "must not be empty")
        if d.node_selector is not None:
            set_fields.append("`nodeSelector`")
            check_node_selector(d.node_selector, f"{fld}.nodeSelector")
        if d.all_nodes is not None:
            if d.all_nodes:
                set_fields.append("`allNodes`")
            else:
                raise _invalid_raw(f"{fld}.allNodes", "false", "must be either unset or set to true")
        detail = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                  "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
        if not set_fields:
            raise _required(fld, detail)
        if len(set_fields) > 1:
            raise invalid(fld, "{" + ", ".join(set_fields) + "}", detail)
    elif d.node_name is not None or d.node_selector is not None or d.all_nodes is not None:
        raise invalid(fld, "null", "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    _binding_parameters(d.binding_conditions, d.binding_failure_conditions, fld)


def _resource_slice(sl: Any) -> None:
    """``validateResourceSliceSpec`` (of a new slice)."""
    spec = sl.spec
    _driver_name(spec.driver, "spec.driver")
    _pool_name(spec.pool.name, "spec.pool.name")
    if spec.pool.resource_slice_count <= 0:
        raise invalid("spec.pool.resourceSliceCount", spec.pool.resource_slice_count, "must be greater than zero")
    if spec.pool.generation < 0:
        raise invalid("spec.pool.generation", spec.pool.generation, "must be greater than or equal to zero")
    set_fields = []
    if spec.node_name is not None:
        if spec.node_name:
            set_fields.append("`nodeName`")
            _dns_subdomain(spec.node_name, "spec.nodeName")
        else:
            raise invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")
    if spec.node_selector is not None:
        set_fields.append("`nodeSelector`")
        check_node_selector(spec.node_selector, "spec.nodeSelector")
        if len(spec.node_selector.node_selector_terms) != 1:
            raise invalid("spec.nodeSelector.nodeSelectorTerms", "null", "must have exactly one node selector term")
    if spec.all_nodes is not None:
        if spec.all_nodes:
            set_fields.append("`allNodes`")
        else:
            raise _invalid_raw("spec.allNodes", "false", "must be either unset or set to true")
    if spec.per_device_node_selection is not None:
        if spec.per_device_node_selection:
            set_fields.append("`perDeviceNodeSelection`")
        else:
            raise _invalid_raw("spec.perDeviceNodeSelection", "false", "must be either unset or set to true")
    one_of = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not set_fields:
        raise _required("spec", one_of)
    if len(set_fields) > 1:
        raise invalid("spec", "{" + ", ".join(set_fields) + "}", one_of + ", but multiple fields are set")
    if spec.shared_counters and spec.devices:
        raise invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    advanced = any(d.taints or d.consumes_counters or any(
        a.bool_values is not None or a.int_values is not None or a.string_values is not None or a.version_values is not None
        for a in d.attributes.values()) for d in spec.devices)
    limit = RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else RESOURCE_SLICE_MAX_DEVICES
    _max(spec.devices, limit, "spec.devices")
    for i, d in enumerate(spec.devices):
        _device(d, f"spec.devices[{i}]", spec.per_device_node_selection)
    _unique((d.name for d in spec.devices), "spec.devices")
    sf = "spec.sharedCounters"
    _max(spec.shared_counters, RESOURCE_SLICE_MAX_COUNTER_SETS, sf)
    for i, cs in enumerate(spec.shared_counters):
        if not cs.name:
            raise _required(f"{sf}[{i}].name")
        _dns_label(cs.name, f"{sf}[{i}].name")
        _counters(cs.counters, RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET, f"{sf}[{i}].counters")
    _unique((cs.name for cs in spec.shared_counters), sf)


# --- DeviceTaintRule -----------------------------------------------------------------------------


def _device_taint_rule(rule: Any) -> None:
    sel = rule.spec.device_selector
    if sel is not None:
        if sel.device_class_name is not None:  # 1.33-1.34 (v1.34 validateDeviceTaintSelector)
            _class_name(sel.device_class_name, "spec.deviceSelector.deviceClassName")
        if sel.driver is not None:
            _driver_name(sel.driver, "spec.deviceSelector.driver")
        if sel.pool is not None:
            _pool_name(sel.pool, "spec.deviceSelector.pool")
        if sel.device is not None:
            _dns_label(sel.device, "spec.deviceSelector.device")
        if sel.selectors:
            _selectors(sel.selectors, "spec.deviceSelector.selectors")
    check_device_taint(rule.spec.taint, "spec.taint")
    if len(rule.status.conditions) > 8:
        raise _too_many("status.conditions", len(rule.status.conditions), 8)


# --- the entry points ------------------------------------------------------------------------------


def check_dra_object(obj: Any, kind: str) -> None:
    """Check one of the DRA kinds (its metadata is checked by the caller)."""
    if kind == "ResourceClaim":
        check_device_claim(obj.spec.devices, "spec.devices")
        _claim_status(obj)
    elif kind == "ResourceClaimTemplate":
        validate_labels(obj.spec.metadata.labels, "spec.metadata.labels")
        check_device_claim(obj.spec.spec.devices, "spec.spec.devices")
    elif kind == "DeviceClass":
        _device_class(obj)
    elif kind == "ResourceSlice":
        _resource_slice(obj)
    elif kind == "DeviceTaintRule":
        _device_taint_rule(obj)


def check_pod_resource_claims(pod: Any) -> None:
    """``validatePodResourceClaims`` and each container's ``validateResourceClaimNames``."""
    names: set[str] = set()
    for i, c in enumerate(pod.spec.resource_claims):
        p = f"spec.resourceClaims[{i}]"
        if not c.name:
            raise _required(f"{p}.name")
        if c.name in names:
            raise _duplicate(f"{p}.name", c.name)
        _dns_label(c.name, f"{p}.name")
        if c.resource_claim_template_name is not None and pod.metadata.name:
            final = f"{pod.metadata.name}-{c.name}"
            errs = dns1123_subdomain_errors(final)
            if errs:
                raise invalid(f"{p}.name", final, "final ResourceClaim name: " + errs[0])
        names.add(c.name)
        if c.resource_claim_name is not None and c.resource_claim_template_name is not None:
            raise _invalid_raw(p, _go_pod_claim(c), "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")
        if c.resource_claim_name is None and c.resource_claim_template_name is None:
            raise _invalid_raw(p, _go_pod_claim(c), "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        if c.resource_claim_name is not None:
            _dns_subdomain(c.resource_claim_name, f"{p}.resourceClaimName")
        if c.resource_claim_template_name is not None:
            _dns_subdomain(c.resource_claim_template_name, f"{p}.resourceClaimTemplateName")
    for group, containers in (("initContainers", pod.spec.init_containers), ("containers", pod.spec.containers)):
        for j, container in enumerate(containers):
            _container_claims(container.resources.claims, names, f"spec.{group}[{j}].resources.claims")


def _container_claims(claims: list[Any], pod_names: set[str], fld: str) -> None:
    seen: set[str] = set()
    for i, c in enumerate(claims):
        key = c.name
        if c.request:
            _dns_label(c.request, f"{fld}[{i}].request")
            key += "/" + c.request
        if not c.name:
            raise _required(f"{fld}[{i}]")
        if key in seen:
            raise _duplicate(f"{fld}[{i}]", c.name)
        seen.add(key)
        if c.name not in pod_names:
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += " which is empty" if not pod_names else ": " + ", ".join(sorted(pod_names))
            raise ConfigError(f"Not found: {go_quote(c.name)}: {detail}", field=f"{fld}[{i}]")


def _go_pod_claim(c: Any) -> str:
    """A PodResourceClaim as Go's ``%#v`` prints it (a set pointer as its value: Go prints its
    address, which no two runs share)."""
    def ptr(v: str | None) -> str:
        return "(*string)(nil)" if v is None else f"(*string)({go_quote(v)})"

    return (f"core.PodResourceClaim{{Name:{go_quote(c.name)}, ResourceClaimName:{ptr(c.resource_claim_name)}, "
            f"ResourceClaimTemplateName:{ptr(c.resource_claim_template_name)}}}")
