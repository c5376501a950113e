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


_LIST_KINDS = (
    ("int_values", "int"),
    ("bool_values", "bool"),
    ("string_values", "string"),
    ("version_values", "version"),
)
_SCALAR_KINDS = (
    ("int_value", "int"),
    ("bool_value", "bool"),
    ("string_value", "string"),
    ("version_value", "version"),
)

AttributeSet = tuple[str, frozenset[Any]]


def attribute_as_set(attr: DeviceAttribute | None) -> AttributeSet | None:
    """experimental ``attributeAsSet``: a list's values (a non-empty list first), or the one
    value, as a set of one kind."""
    if attr is None:
        return None
    for fld, kind in _LIST_KINDS:
        values = getattr(attr, fld)
        if values:
            return (kind, frozenset(values))
    for fld, kind in _SCALAR_KINDS:
        v = getattr(attr, fld)
        if v is not None:
            return (kind, frozenset((v,)))
    return None


def _intersects(a: AttributeSet, b: AttributeSet) -> bool:
    return a[0] == b[0] and not a[1].isdisjoint(b[1])


class Constraint:
    """A ``matchAttribute`` (``distinct=False``) or ``distinctAttribute`` constraint of one claim.
    With ``lists`` (DRAListTypeAttributes: the experimental variant's constraint.go and
    ``matchAttributeConstraint``), values compare as sets: a match keeps the intersection of
    every device's values (narrowing only, as upstream's), a distinct attribute shares no value
    with another request's."""

    def __init__(
        self, requests: list[str], attribute: str, distinct: bool, lists: bool = False
    ) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.distinct = distinct
        self.lists = lists
        self.num_devices = 0
        self.first: DeviceAttribute | None = None  # matchAttribute
        self.intersection: AttributeSet | None = None  # matchAttribute with lists
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
            elif self.lists:
                self.intersection = attribute_as_set(attr)
                if self.intersection is None:
                    return False
            else:
                self.first = attr
            self.num_devices = 1
            return True
        if self.distinct:
            if not self._distinct_from_all(attr):
                return False
            self.by_request[request] = attr
        elif self.lists:
            new = attribute_as_set(attr)
            if new is None or self.intersection is None or not _intersects(self.intersection, new):
                return False
            self.intersection = (new[0], self.intersection[1] & new[1])
        else:
            value = scalar(attr)
            if value is None or self.first is None or scalar(self.first) != value:
                return False
        self.num_devices += 1
        return True

    def _distinct_from_all(self, attr: DeviceAttribute) -> bool:
        if self.lists:
            new = attribute_as_set(attr)
            if new is None:
                return False
            for other in self.by_request.values():
                have = attribute_as_set(other)
                if have is not None and _intersects(new, have):
                    return False
            return True
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
