"""Consumable capacity: how much of a shareable device's capacity a request takes.

k8s.io/dynamic-resource-allocation v0.36.2 structured/internal/incubating/consumable_capacity.go
(``CmpRequestOverCapacity``, ``calculateConsumedCapacity``, ``violatesPolicy``,
``GetConsumedCapacityFromRequest``).  Quantities are exact fractions here; a value the
allocator computes (a range's step rounding) is written back as ``resource.NewQuantity(v,
BinarySI)`` prints it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from fractions import Fraction

from kubesched.api._dra import CapacityRequestPolicy, CapacityRequirements, DeviceCapacity
from kubesched.api._resources import parse_quantity

ConsumedCapacity = dict[str, Fraction]


class UndefinedCapacity(Exception):
    """A request names a capacity the device does not have."""


def _q(v: object) -> Fraction:
    return v if isinstance(v, Fraction) else _parsed(v)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=65_536)
def _parsed(v: str | int | float) -> Fraction:
    return parse_quantity(v)


def binary_si(value: int) -> str:
    """``resource.NewQuantity(value, resource.BinarySI).String()`` for a whole number."""
    for exp, suffix in ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki")):
        if value != 0 and value % (1 << exp) == 0:
            return f"{value >> exp}{suffix}"
    return str(value)


def _value(q: Fraction) -> int:
    """``Quantity.Value()``: rounded up to a whole number."""
    return -((-q.numerator) // q.denominator)


def consumed_for(requested: str | int | float | None, cap: DeviceCapacity) -> tuple[Fraction, str]:
    """``calculateConsumedCapacity``: (value, how it prints)."""
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return _q(policy.default), str(policy.default)
        return _q(cap.value), str(cap.value)
    req = _q(requested)
    if policy is None:
        return req, str(requested)
    rng = policy.valid_range
    if rng is not None and rng.min is not None:
        low = _q(rng.min)
        if req < low:
            return low, str(rng.min)
        if rng.step is None:
            return req, str(requested)
        step, lo = _value(_q(rng.step)), _value(low)
        added = _value(req) - lo
        n = added // step + (1 if added % step else 0)
        val = lo + step * n
        return Fraction(val), binary_si(val)
    if policy.valid_values:
        for v in policy.valid_values:
            if req <= _q(v):
                return _q(v), str(v)
    return req, str(requested)


def violates_policy(value: Fraction, policy: CapacityRequestPolicy | None) -> bool:
    """``violatesPolicy``."""
    if policy is None:
        return False
    if policy.default is not None and value == _q(policy.default):
        return False
    rng = policy.valid_range
    if rng is not None:
        if rng.max is not None and value > _q(rng.max):
            return True
        if rng.step is not None:
            low = _value(_q(rng.min)) if rng.min is not None else 0
            if (_value(value) - low) % _value(_q(rng.step)):
                return True
        return False
    if policy.valid_values:
        return all(value != _q(v) for v in policy.valid_values)
    return False


def request_fits(
    consumed: Mapping[str, Fraction],
    request: CapacityRequirements | None,
    capacity: Mapping[str, DeviceCapacity],
    allocating: Mapping[str, Fraction],
) -> bool:
    """``CmpRequestOverCapacity``; raises :class:`UndefinedCapacity` for an unknown name."""
    requests = request.requests if request is not None else {}
    if (
        not requests
        and not consumed
        and not allocating
        and all(cap.request_policy is None for cap in capacity.values())
    ):
        # each share is the capacity's whole value, which fits over nothing else (the common
        # case: no capacity request, a device nobody shares yet)
        return True
    for name in requests:
        if name not in capacity:
            raise UndefinedCapacity("some requested capacity has not been defined")
    for name, cap in capacity.items():
        value, _ = consumed_for(requests.get(name), cap)
        if violates_policy(value, cap.request_policy):
            return False
        total = consumed.get(name, Fraction(0)) + value + allocating.get(name, Fraction(0))
        if total > _q(cap.value):
            return False
    return True


def consumed_from_request(
    request: CapacityRequirements | None, capacity: Mapping[str, DeviceCapacity]
) -> dict[str, tuple[Fraction, str]]:
    """``GetConsumedCapacityFromRequest``: per capacity, (value, how it prints)."""
    requests = request.requests if request is not None else {}
    return {name: consumed_for(requests.get(name), cap) for name, cap in capacity.items()}
