"""Claim constraints and device taints, as the allocator checks them per device.

k8s.io/dynamic-resource-allocation v0.36.2 structured/internal/incubating/
allocator_incubating.go (``matchAttributeConstraint``, ``lookupAttribute``,
``taintPreventsAllocation``), constraint.go (``distinctAttributeConstraint``, which keeps one
attribute per request name, as upstream's map does), and
k8s.io/dynamic-resource-allocation/resourceclaim ``ToleratesTaint``.
"""

from __future__ import annotations

from typing import Any

from kubesched.api._dra import Device, DeviceAttribute, DeviceTaint, DeviceToleration

_KINDS = ("string_value", "int_value", "bool_value", "version_value")


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """``lookupAttribute``: the fully qualified name, or the bare id in the driver's domain."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


def scalar(attr: DeviceAttribute) -> tuple[str, Any] | None:
    """The attribute's single value as (kind, value); None for a list or no value."""
    for kind in _KINDS:
        v = getattr(attr, kind)
        if v is not None:
            return (kind, v)
    return None


class Constraint:
    """A ``matchAttribute`` (``distinct=False``) or ``distinctAttribute`` constraint of one claim."""

    def __init__(self, requests: list[str], attribute: str, distinct: bool) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.distinct = distinct
        self.num_devices = 0
        self.first: DeviceAttribute | None = None  # matchAttribute
        self.by_request: dict[str, DeviceAttribute] = {}  # distinctAttribute

    def _applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        if not sub_request:
            return request in self.requests
        return request in self.requests or f"{request}/{sub_request}" in self.requests

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        """Whether the device may join; when it does, it is counted."""
        if not self._applies(request, sub_request):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.num_devices == 0:
            if self.distinct:
                self.by_request[request] = attr
            else:
                self.first = attr
            self.num_devices = 1
            return True
        if self.distinct:
            if not self._distinct_from_all(attr):
                return False
            self.by_request[request] = attr
        else:
            value = scalar(attr)
            if value is None or self.first is None or scalar(self.first) != value:
                return False
        self.num_devices += 1
        return True

    def _distinct_from_all(self, attr: DeviceAttribute) -> bool:
        value = scalar(attr)
        for other in self.by_request.values():
            if value is None:
                return False
            if scalar(other) == value:
                return False
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if not self._applies(request, sub_request):
            return
        if self.distinct:
            self.by_request.pop(request, None)
        self.num_devices -= 1


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """``resourceclaim.ToleratesTaint``."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and toleration.value == taint.value


def taint_prevents_allocation(device: Device, tolerations: list[DeviceToleration]) -> bool:
    """``taintPreventsAllocation``: a NoSchedule or NoExecute taint no toleration tolerates."""
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(
            tolerates(t, taint) for t in tolerations
        ):
            return True
    return False
