"""A pod's ``spec.resources`` (PodLevelResources, KEP-2837) as the API server validates it.

pkg/apis/core/validation ``validatePodResources`` (kubernetes#128407 in 1.32; hugepages from 1.33,
kubernetes#130577), in its order: the pod-level requirements (``validatePodResourceRequirements``:
each name a supported pod-level resource, each quantity not negative, a request within its limit,
a hugepages request equal to its limit, which is required), then their consistency with the
containers (``validatePodResourceConsistency``: a pod-level request covers the containers'
aggregate request, a pod-level hugepages limit their aggregate limit, and no container's limit
exceeds the pod's).  The texts are those of 1.33 and later (the supported values name
``hugepages-``); validation does not depend on the emulated version.  The first error is raised,
one :class:`ConfigError`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._objects import Container, PodSpec
from kubesched.api._resources import parse_quantity
from kubesched.validation._base import _STANDARD_RESOURCES as _STANDARD
from kubesched.validation._base import (
    HUGEPAGES_PREFIX,
    field_key,
    go_quote,
    invalid,
    parse_checked,
    qualified_errors,
)

SUPPORTED = ("cpu", "hugepages-", "memory")  # sets.List(SupportedPodLevelResources())
_DECIMAL = ((-9, "n"), (-6, "u"), (-3, "m"), (0, ""), (3, "k"), (6, "M"), (9, "G"), (12, "T"), (15, "P"), (18, "E"))
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _supported(name: str) -> bool:
    return name in ("cpu", "memory") or name.startswith(HUGEPAGES_PREFIX)


def _name_error(name: str, fld: str) -> ConfigError | None:
    """``validatePodResourceName``: a qualified, standard name, and one pod-level resources support."""
    errs = qualified_errors(name)
    if errs:
        return invalid(fld, name, errs[0])
    if "/" not in name and name not in _STANDARD and not name.startswith((HUGEPAGES_PREFIX, "requests.hugepages-")):
        return invalid(fld, name, "must be a standard resource type or fully qualified")
    if not _supported(name):
        return ConfigError(
            f"Unsupported value: {go_quote(name)}: supported values: {', '.join(go_quote(v) for v in SUPPORTED)}",
            field=fld,
        )
    return None


def _binary(raw: Any) -> bool:
    """Whether a quantity is written in BinarySI (a ``Ki`` ... ``Ei`` suffix)."""
    return isinstance(raw, str) and raw.strip().endswith(_BINARY)


def canonical(q: Fraction, binary: bool) -> str:
    """``Quantity.String()`` of ``q`` in its format: BinarySI the largest power of 1024 that
    divides it (below 1024 or not whole: DecimalSI), DecimalSI the largest multiple-of-3
    exponent that leaves a whole mantissa."""
    if binary and q.denominator == 1 and abs(q) >= 1024:
        n, suffix = int(q), ""
        for s in _BINARY:
            if n % 1024:
                break
            n, suffix = n // 1024, s
        return f"{n}{suffix}"
    if q == 0:
        return "0"
    best = None
    for exp, suffix in _DECIMAL:
        mantissa = q / Fraction(10) ** exp
        if mantissa.denominator == 1:
            best = f"{int(mantissa)}{suffix}"
    return best if best is not None else f"{int(q * 10**9)}n"


def _aggregate(containers: list[Container], kind: str) -> dict[str, tuple[Fraction, bool]]:
    """The containers' summed requests (``kind`` "requests", a missing one its limit) or limits,
    each with the format of the first quantity added (``addResourceList``)."""
    out: dict[str, tuple[Fraction, bool]] = {}
    for c in containers:
        values = dict(c.resources.limits or {}) if kind == "requests" else {}
        values.update((c.resources.requests if kind == "requests" else c.resources.limits) or {})
        for name, raw in values.items():
            q = parse_quantity(raw)
            if name in out:
                out[name] = (out[name][0] + q, out[name][1])
            else:
                out[name] = (q, _binary(raw))
    return out


def _aggregate_requests(spec: PodSpec) -> dict[str, tuple[Fraction, bool]]:
    """``AggregateContainerRequests``: the containers' sum, restartable init containers added,
    the init phase's peak taken against it."""
    total = _aggregate(spec.containers, "requests")
    sidecars: dict[str, tuple[Fraction, bool]] = {}
    peak: dict[str, tuple[Fraction, bool]] = {}
    for c in spec.init_containers:
        own = _aggregate([c], "requests")
        if c.restart_policy == "Always":
            for name, (q, b) in own.items():
                total[name] = (total[name][0] + q, total[name][1]) if name in total else (q, b)
                sidecars[name] = (sidecars[name][0] + q, sidecars[name][1]) if name in sidecars else (q, b)
            use = dict(sidecars)
        else:
            use = dict(own)
            for name, (q, b) in sidecars.items():
                use[name] = (use[name][0] + q, use[name][1]) if name in use else (q, b)
        for name, (q, b) in use.items():
            if name not in peak or q > peak[name][0]:
                peak[name] = (q, b)
    for name, (q, b) in peak.items():
        if name not in total or q > total[name][0]:
            total[name] = (q, b)
    return total


def check_pod_resources(spec: PodSpec) -> None:
    """``validatePodResources`` of ``spec.resources`` (nothing when the pod sets none)."""
    res = spec.resources
    if res is None:
        return
    path = "spec.resources"
    for rl, kind in ((res.limits, "limits"), (res.requests, "requests")):
        if rl is not None and not isinstance(rl, dict):
            raise ConfigError("must be a map of resource quantities", field=f"{path}.{kind}")
    limits, requests = res.limits or {}, res.requests or {}
    parsed_limits: dict[str, Fraction] = {}
    for name, raw in limits.items():
        fld = f"{path}.limits[{field_key(name)}]"
        err = _name_error(name, fld)
        if err is not None:
            raise err
        parsed_limits[name] = parse_checked(raw, fld)
    for name, raw in requests.items():
        fld = f"{path}.requests[{field_key(name)}]"
        err = _name_error(name, fld)
        if err is not None:
            raise err
        q = parse_checked(raw, fld)
        limit = parsed_limits.get(name)
        if limit is None:
            if name.startswith(HUGEPAGES_PREFIX):
                raise ConfigError("Required value: Limit must be set for non overcommitable resources",
                                  field=f"{path}.limits")  # fmt: skip
            continue
        shown, limit_shown = canonical(q, _binary(raw)), canonical(limit, _binary(limits[name]))
        if name.startswith(HUGEPAGES_PREFIX) and q != limit:
            raise invalid(f"{path}.requests", shown, f"must be equal to {name} limit of {limit_shown}")
        if q > limit:
            raise invalid(f"{path}.requests", shown, f"must be less than or equal to {name} limit of {limit_shown}")
    _check_consistency(spec, path, requests, limits)


def _check_consistency(spec: PodSpec, path: str, requests: dict[str, Any], limits: dict[str, Any]) -> None:
    """``validatePodResourceConsistency``."""
    for name, (aggregate, binary) in sorted(_aggregate_requests(spec).items()):
        raw = requests.get(name)
        if raw is None:
            continue
        q = parse_quantity(raw)
        if q < aggregate:
            raise invalid(f"{path}.requests[{field_key(name)}]", canonical(q, _binary(raw)),
                          f"must be greater than or equal to aggregate container requests of "
                          f"{canonical(aggregate, binary)}")  # fmt: skip
    for name, (aggregate, binary) in sorted(_aggregate(spec.containers, "limits").items()):
        raw = limits.get(name)
        if raw is None or not name.startswith(HUGEPAGES_PREFIX):
            continue
        q = parse_quantity(raw)
        if q < aggregate:
            raise invalid(f"{path}.limits[{field_key(name)}]", canonical(q, _binary(raw)),
                          f"must be greater than or equal to aggregate container limits of "
                          f"{canonical(aggregate, binary)}")  # fmt: skip
    for i, c in enumerate(spec.containers):
        for name, raw in sorted((c.resources.limits or {}).items()):
            pod_raw = limits.get(name)
            if pod_raw is None:
                continue
            q, pod_limit = parse_quantity(raw), parse_quantity(pod_raw)
            if q > pod_limit:
                # upstream builds this path from the pod-level one: spec.resources.containers[i][name].limits
                raise invalid(f"{path}.containers[{i}][{field_key(name)}].limits", canonical(q, _binary(raw)),
                              f"must be less than or equal to pod limits of {canonical(pod_limit, _binary(pod_raw))}")


__all__ = ["check_pod_resources"]
