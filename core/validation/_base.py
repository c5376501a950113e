"""The field checks every kind shares, in upstream's words.

Names (``IsDNS1123Label``, ``IsDNS1123Subdomain``, ``IsQualifiedName``, ``IsValidLabelValue``:
k8s.io/apimachinery/pkg/util/validation), labels and label selectors (apimachinery
``ValidateLabels``, ``ValidateLabelSelectorRequirement``), node selectors
(pkg/apis/core/validation ``ValidateNodeSelector``), resource names and quantities
(``validateContainerResourceName``, ``ValidateResourceQuantityValue`` and the helpers of
pkg/apis/core/helper), and the shapes of upstream's field errors.

The leaf of the validation modules: ``_validation_pod`` (a pod's spec) and ``_validation`` (every
kind; the one entry point, ``validate_object``) build on it.  Each check raises the first error
as one :class:`ConfigError` naming the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._helpers import qualified_name_errors
from kubesched.api._resources import QuantityError, parse_quantity

# --- names (k8s.io/apimachinery/pkg/util/validation) ------------------------------------------

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
DNS1123_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_VALUE_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _DNS1123_LABEL.fullmatch(value):
        errs.append(DNS1123_LABEL_ERROR)
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(DNS1123_SUBDOMAIN_ERROR)
    return errs


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``."""
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(LABEL_VALUE_ERROR)
    return errs


def qualified_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (``ValidateLabelName``)."""
    # the shared helper matches with ``$`` (which takes a trailing newline): refuse one here
    errs = qualified_name_errors(value)
    if not errs and ("\n" in value or "\r" in value):
        errs = qualified_name_errors(value.strip() + " ")
    return errs


_PORT_NAME_CHARSET = re.compile(r"[-a-z0-9]+")


def port_name_errors(port: str) -> list[str]:
    """``IsValidPortName`` (an IANA_SVC_NAME)."""
    errs = ["must be no more than 15 characters"] if len(port) > 15 else []
    if not _PORT_NAME_CHARSET.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


# --- upstream's field errors (k8s.io/apimachinery/pkg/util/validation/field) -------------------


def field_key(key: str) -> str:
    """A map key as a field path holds it (``requests[example.com/gpu]``), control characters
    escaped so that an error stays one line."""
    return key if key.isprintable() else "".join(c if c.isprintable() else _escape(c) for c in key)


def _escape(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x80 else f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"


def go_quote(value: Any) -> str:
    """A value as Go's field errors print it (strings quoted with double quotes, what is not
    printable escaped, as ``strconv.Quote``: one line whatever the value)."""
    if not isinstance(value, str):
        return str(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if text.isprintable() else "".join(c if c.isprintable() else _escape(c) for c in text)


def invalid(fld: str, value: Any, msg: str) -> ConfigError:
    """``field.Invalid``."""
    return ConfigError(f"Invalid value: {go_quote(value)}: {msg}", field=fld)


def supported(values: Iterable[str]) -> str:
    """The supported values, sorted (``sets.List``)."""
    return ", ".join(go_quote(v) for v in sorted(values))


def not_supported(fld: str, value: str, values: Iterable[str]) -> ConfigError:
    """``field.NotSupported`` with the values in upstream's order."""
    return ConfigError(
        f"Unsupported value: {go_quote(value)}: supported values: {', '.join(go_quote(v) for v in values)}", field=fld
    )


def validate_name(kind: str, name: Any, fld: str = "metadata.name") -> None:
    """The object name rule upstream applies to ``kind`` (all kubesched reads: DNS-1123 subdomains)."""
    if not name:
        raise ConfigError("Required value: name or generateName is required", field=fld)
    errs = dns1123_subdomain_errors(name)
    if errs:
        raise invalid(fld, name, errs[0])


def validate_namespace_name(namespace: str, fld: str = "metadata.namespace") -> None:
    """``ValidateNamespaceName``: a DNS-1123 label."""
    errs = dns1123_label_errors(namespace)
    if errs:
        raise invalid(fld, namespace, errs[0])


def validate_labels(labels: Any, fld: str) -> None:
    """``ValidateLabels``: qualified-name keys, label values."""
    for k, v in labels.items():
        errs = qualified_errors(k)
        if errs:
            raise invalid(fld, k, errs[0])
        errs = label_value_errors(v)
        if errs:
            raise invalid(fld, v, errs[0])


# --- selectors ---------------------------------------------------------------------------------

_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def check_label_selector(sel: Any, path: str) -> None:
    """``ValidateLabelSelector`` / ``ValidateLabelSelectorRequirement``."""
    if sel is None:
        return
    validate_labels(sel.match_labels, f"{path}.matchLabels")
    for i, r in enumerate(sel.match_expressions):
        p = f"{path}.matchExpressions[{i}]"
        errs = qualified_errors(r.key)
        if errs:
            raise invalid(f"{p}.key", r.key, errs[0])
        for v in r.values:
            verrs = label_value_errors(v)
            if verrs:
                raise invalid(f"{p}.values", v, verrs[0])
        if r.operator in ("In", "NotIn"):
            if not r.values:
                raise ConfigError(
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'", field=f"{p}.values"
                )
        elif r.operator in ("Exists", "DoesNotExist"):
            if r.values:
                raise ConfigError(
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    field=f"{p}.values",
                )
        else:
            raise invalid(f"{p}.operator", r.operator, "not a valid selector operator")


def _check_node_selector_requirement(r: Any, p: str, allow_invalid_values: bool) -> None:
    """``ValidateNodeSelectorRequirement``: the number of values the operator takes, a label key,
    label values (not checked for a preferred term)."""
    if r.operator in ("In", "NotIn") and not r.values:
        raise ConfigError("Required value: must be specified when `operator` is 'In' or 'NotIn'", field=f"{p}.values")
    if r.operator in ("Exists", "DoesNotExist") and r.values:
        raise ConfigError(
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'", field=f"{p}.values"
        )
    if r.operator in ("Gt", "Lt") and len(r.values) != 1:
        raise ConfigError(
            "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'", field=f"{p}.values"
        )
    if r.operator not in _NODE_SELECTOR_OPS:
        raise ConfigError(
            f"Unsupported value: {go_quote(r.operator)}: supported values: {supported(_NODE_SELECTOR_OPS)}",
            field=f"{p}.operator",
        )
    errs = qualified_errors(r.key)
    if errs:
        raise invalid(f"{p}.key", r.key, errs[0])
    if not allow_invalid_values:
        for j, v in enumerate(r.values):
            verrs = label_value_errors(v)
            if verrs:
                raise invalid(f"{p}.values[{j}]", v, verrs[0])


def _check_node_field_requirement(r: Any, p: str) -> None:
    """``ValidateNodeFieldSelectorRequirement``: In / NotIn with exactly one value, on
    ``metadata.name`` (a node name)."""
    if r.operator in ("In", "NotIn"):
        if len(r.values) != 1:
            raise ConfigError(
                "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                field=f"{p}.values",
            )
    else:
        raise invalid(f"{p}.operator", r.operator, "not a valid selector operator")
    if r.key != "metadata.name":
        raise invalid(f"{p}.key", r.key, "not a valid field selector key")
    for j, v in enumerate(r.values):
        errs = dns1123_subdomain_errors(v)
        if errs:
            raise invalid(f"{p}.values[{j}]", v, errs[0])


def check_node_selector_term(term: Any, path: str, *, allow_invalid_values: bool = False) -> None:
    """``ValidateNodeSelectorTerm``."""
    for j, r in enumerate(term.match_expressions):
        _check_node_selector_requirement(r, f"{path}.matchExpressions[{j}]", allow_invalid_values)
    for j, r in enumerate(term.match_fields):
        _check_node_field_requirement(r, f"{path}.matchFields[{j}]")


def check_node_selector(selector: Any, path: str) -> None:
    """``ValidateNodeSelector``: at least one term."""
    terms = f"{path}.nodeSelectorTerms"
    if not selector.node_selector_terms:
        raise ConfigError("Required value: must have at least one node selector term", field=terms)
    for i, term in enumerate(selector.node_selector_terms):
        check_node_selector_term(term, f"{terms}[{i}]")


# --- resources (pkg/apis/core/helper, pkg/apis/core/validation) --------------------------------

# IsStandardResourceName (the quota hugepages prefixes aside)
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
    "requests.storage", "services.nodeports", "services.loadbalancers",
})  # fmt: skip
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_INTEGER_RESOURCES = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})  # fmt: skip
HUGEPAGES_PREFIX = "hugepages-"


def is_native_resource(name: str) -> bool:
    """``IsNativeResource``: unprefixed, or in the ``kubernetes.io/`` namespace."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not qualified_errors("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native and not hugepages (an extended resource's request must
    equal its limit)."""
    return is_native_resource(name) and not name.startswith(HUGEPAGES_PREFIX)


def container_resource_name_error(name: str) -> str | None:
    """``validateContainerResourceName``: the first message, or None for a valid name."""
    errs = qualified_errors(name)
    if errs:
        return errs[0]
    if "/" not in name:
        hugepages = name.startswith((HUGEPAGES_PREFIX, "requests." + HUGEPAGES_PREFIX))
        if name not in _STANDARD_RESOURCES and not hugepages:
            return "must be a standard resource type or fully qualified"
        if name not in _STANDARD_CONTAINER_RESOURCES and not name.startswith(HUGEPAGES_PREFIX):
            return "must be a standard resource for containers"
    elif not is_native_resource(name) and not is_extended_resource(name):
        return "doesn't follow extended resource name standard"
    return None


_EXPONENT = re.compile(r".*[0-9.][eE][-+]?[0-9]+")


def quantity_string(raw: Any, q: Fraction) -> str:
    """``Quantity.String()`` of a value that is not whole (a milli, micro or nano mantissa:
    ``0.5`` is ``500m``; ``5e-1`` keeps its exponent form, ``500e-3``)."""
    digits, suffix = next((k, s) for k, s in ((3, "m"), (6, "u"), (9, "n")) if (q * 10**k).denominator == 1)
    if isinstance(raw, str) and _EXPONENT.fullmatch(raw):
        suffix = f"e-{digits}"
    return f"{int(q * 10**digits)}{suffix}"


def is_integer_resource(name: str) -> bool:
    """``IsIntegerResourceName``: the object counts and every extended resource."""
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def parse_checked(value: Any, fld: str) -> Fraction:
    """A quantity as ``resource.ParseQuantity`` reads it, not negative
    (``ValidateNonnegativeQuantity``)."""
    try:
        q = parse_quantity(value)
    except QuantityError as e:
        raise ConfigError(str(e), field=fld) from None
    if q < 0:
        raise ConfigError(f"Invalid value: {go_quote(value)}: must be greater than or equal to 0", field=fld)
    return q


def check_quantities(rl: Any, path: str, *, integers: bool = False) -> None:
    """A ResourceList: each quantity parses and is not negative; with ``integers``, each one of an
    integer resource is whole (``ValidateResourceQuantityValue``, as ``ValidateNodeResources``)."""
    if not rl:
        return
    if not isinstance(rl, dict):
        raise ConfigError("must be a map of resource quantities", field=path)
    for name, value in rl.items():
        fld = f"{path}.{field_key(name)}"
        q = parse_checked(value, fld)
        if integers and q.denominator != 1 and is_integer_resource(name):
            raise ConfigError(f"Invalid value: {quantity_string(value, q)}: must be an integer", field=fld)


__all__ = [
    "check_label_selector",
    "check_node_selector",
    "check_node_selector_term",
    "check_quantities",
    "container_resource_name_error",
    "field_key",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "go_quote",
    "invalid",
    "is_integer_resource",
    "is_overcommit_allowed",
    "label_value_errors",
    "not_supported",
    "parse_checked",
    "port_name_errors",
    "qualified_errors",
    "quantity_string",
    "supported",
    "validate_labels",
    "validate_name",
    "validate_namespace_name",
]
