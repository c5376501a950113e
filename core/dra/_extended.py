"""Extended resources backed by DRA (DRAExtendedResource): which DeviceClass serves an extended
resource, and the device requests of the claim the scheduler makes for a pod's such resources.

- :class:`ExtendedResourceClasses`: k8s.io/dynamic-resource-allocation v0.35.4
  ``deviceclass/extendedresourcecache`` ``ExtendedResourceCache``, kept from DeviceClass events
  as upstream's (so it has upstream's history: a class that stops naming a resource leaves it
  unmapped even when an older class still names it).  A class maps its ``extendedResourceName``
  (when several name one, the newest by creation time, then the smallest name, as the events
  came) and always the implicit ``deviceclass.resource.kubernetes.io/<class>``.
- :func:`create_requests_and_mappings`: kubernetes v1.35.4 ``extendeddynamicresources.go``
  ``createRequestsAndMappings``: per resource (sorted), one ExactCount request per long-lived
  container (regular and sidecar) named ``container-<index>-request-<index of the resource
  among the container's sorted requests>``, and for the short-lived init containers the
  largest request not covered by the long-lived requests after them; the container →
  request mappings the pod's ``status.extendedResourceClaimStatus`` records.

- :class:`ClassTableResolver`: an :class:`ExtendedResourceClasses` fed from the scheduler's
  DeviceClass table as the informer's events would (the table's change log replayed as
  add / update / delete), so NodeResourcesFit and DynamicResources see the same mapping.
- :func:`is_dra_extended_resource_name`: ``schedutil.IsDRAExtendedResourceName``.

Who uses them: ``plugins/noderesources/fit.py`` (a mapped resource the node does not advertise
is left to DRA) and ``plugins/_dra_extended.py`` (the special claim).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kubesched.api._dra import (
    ALLOCATION_MODE_EXACT_COUNT,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
)
from kubesched.api._helpers import is_extended_resource_name
from kubesched.api._objects import ContainerExtendedResourceRequest, Pod, parse_time_ns
from kubesched.api._resources import parse_quantity

RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
"""``resourceapi.ResourceDeviceClassPrefix``: the implicit extended resource of every class."""


def is_dra_extended_resource_name(name: str) -> bool:
    """``schedutil.IsDRAExtendedResourceName`` (kubernetes after v1.36.0
    ``pkg/scheduler/util/utils.go``): an extended resource name (``v1helper.IsExtendedResourceName``)
    or the implicit ``deviceclass.resource.kubernetes.io/<class>``."""
    return name.startswith(RESOURCE_DEVICE_CLASS_PREFIX) or is_extended_resource_name(name)


class DeviceClassResolver(Protocol):
    def get_device_class(self, resource_name: str) -> DeviceClass | None: ...


class ExtendedResourceClasses:
    """``ExtendedResourceCache``: extended resource name → DeviceClass, class → its explicit
    extended resource name, kept from the class informer's events."""

    def __init__(self) -> None:
        self._by_resource: dict[str, DeviceClass] = {}
        self._by_class: dict[str, str] = {}

    def get_device_class(self, resource_name: str) -> DeviceClass | None:
        return self._by_resource.get(resource_name)

    def get_extended_resource(self, class_name: str) -> str:
        return self._by_class.get(class_name, "")

    def on_add(self, cls: DeviceClass) -> None:
        self._update(cls, None)

    def on_update(self, old: DeviceClass, new: DeviceClass) -> None:
        self._update(new, old)

    def on_delete(self, cls: DeviceClass) -> None:
        name = cls.spec.extended_resource_name
        if name is not None:
            current = self._by_resource.get(name)
            if current is not None and current.metadata.name == cls.metadata.name:
                del self._by_resource[name]
        self._by_resource.pop(RESOURCE_DEVICE_CLASS_PREFIX + cls.metadata.name, None)
        self._by_class.pop(cls.metadata.name, None)

    def _update(self, new: DeviceClass, old: DeviceClass | None) -> None:
        # updateResourceName2class: an older class (or, created at once, a larger name) than the
        # one mapped for the same resource leaves every mapping as it is
        name = new.spec.extended_resource_name
        same = self._by_resource.get(name) if name is not None else None
        if same is not None:
            t_new = parse_time_ns(new.metadata.creation_timestamp) or 0
            t_same = parse_time_ns(same.metadata.creation_timestamp) or 0
            if t_new < t_same or (t_new == t_same and new.metadata.name >= same.metadata.name):
                self._update_class(new)
                return
        if old is not None:
            self._by_resource.pop(RESOURCE_DEVICE_CLASS_PREFIX + old.metadata.name, None)
            if old.spec.extended_resource_name is not None:
                self._by_resource.pop(old.spec.extended_resource_name, None)
        if name is not None:
            self._by_resource[name] = new
        self._by_resource[RESOURCE_DEVICE_CLASS_PREFIX + new.metadata.name] = new
        self._update_class(new)

    def _update_class(self, cls: DeviceClass) -> None:
        # updateClass2ResourceName
        if cls.spec.extended_resource_name is None:
            self._by_class.pop(cls.metadata.name, None)
        else:
            self._by_class[cls.metadata.name] = cls.spec.extended_resource_name


class ClassTableResolver:
    """``DeviceClassResolver()`` over a DeviceClass table (the cluster state's ``device_classes``):
    its changes since the last look are replayed into an :class:`ExtendedResourceClasses` in the
    order they were made (a ``ChangeLog``'s ``log``); a plain dict, or a log cut short, is read
    again from the start."""

    def __init__(self, table: Mapping[str, DeviceClass]) -> None:
        self.table = table
        self.classes = ExtendedResourceClasses()
        self._seen: dict[str, DeviceClass] = {}
        self._mark: tuple[int, int] | None = None

    def _sync(self) -> None:
        log = getattr(self.table, "log", None)
        epoch = getattr(self.table, "epoch", 0)
        if log is None or self._mark is None or self._mark[0] != epoch or self._mark[1] > len(log):
            self.classes = ExtendedResourceClasses()
            self._seen = {}
            for name, cls in self.table.items():
                self.classes.on_add(cls)
                self._seen[name] = cls
            self._mark = (epoch, len(log)) if log is not None else None
            return
        if self._mark[1] == len(log):
            return
        for name in log[self._mark[1] :]:
            old, new = self._seen.get(name), self.table.get(name)
            if old is new:
                continue
            if new is None:
                assert old is not None
                self.classes.on_delete(old)
                del self._seen[name]
            elif old is None:
                self.classes.on_add(new)
                self._seen[name] = new
            else:
                self.classes.on_update(old, new)
                self._seen[name] = new
        self._mark = (epoch, len(log))

    def get_device_class(self, resource_name: str) -> DeviceClass | None:
        self._sync()
        return self.classes.get_device_class(resource_name)

    def has_mapped(self, names: Sequence[str]) -> bool:
        """Whether one of ``names`` is a DRA extended resource a class maps."""
        if not self.table:
            return False
        return any(is_dra_extended_resource_name(n) and self.get_device_class(n) is not None for n in names)


def _partition(containers: Sequence[Any], num_init: int) -> tuple[list[int], list[int]]:
    """``partitionContainerIndices``: (long-lived: sidecars and regular containers, short-lived
    init containers), as indices into init containers + containers."""
    long_lived: list[int] = []
    short_lived: list[int] = []
    for i, c in enumerate(containers):
        if i < num_init and c.restart_policy != "Always":
            short_lived.append(i)
        else:
            long_lived.append(i)
    return long_lived, short_lived


def _request_and_mappings(
    index: int, container: Any, resource: str, class_name: str, reusable: Sequence[DeviceRequest | None]
) -> tuple[DeviceRequest | None, list[ContainerExtendedResourceRequest]]:
    """``createResourceRequestAndMappings``."""
    requests = container.resources.requests or {}
    if resource not in requests:
        return None, []
    try:
        quantity = parse_quantity(requests[resource])
    except ValueError:
        return None, []
    if quantity != int(quantity) or quantity == 0:  # AsInt64 fails on a fraction
        return None, []
    wanted = int(quantity)
    mappings: list[ContainerExtendedResourceRequest] = []
    total = 0
    for r in reusable:
        if r is not None and r.exactly is not None:
            total += r.exactly.count
            mappings.append(ContainerExtendedResourceRequest(container_name=container.name, resource_name=resource, request_name=r.name))
            if total >= wanted:
                return None, mappings
    ridx = sorted(requests).index(resource)
    name = f"container-{index}-request-{ridx}"
    request = DeviceRequest(
        name=name,
        exactly=ExactDeviceRequest(device_class_name=class_name, allocation_mode=ALLOCATION_MODE_EXACT_COUNT, count=wanted - total),
    )
    mappings.append(ContainerExtendedResourceRequest(container_name=container.name, resource_name=resource, request_name=name))
    return request, mappings


def create_requests_and_mappings(
    pod: Pod, extended_resources: Mapping[str, int], classes: DeviceClassResolver | None
) -> tuple[list[DeviceRequest], list[ContainerExtendedResourceRequest]]:
    """``createRequestsAndMappings``: the special claim's requests (sorted by name) and the
    container → request mappings for the pod's ``extended_resources`` (name → quantity)."""
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    long_lived, short_lived = _partition(containers, len(pod.spec.init_containers))
    requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(extended_resources):
        cls = classes.get_device_class(resource) if classes is not None else None
        if cls is None:
            continue
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[ContainerExtendedResourceRequest] = []
        for i in long_lived:
            req, maps = _request_and_mappings(i, containers[i], resource, cls.metadata.name, ())
            long_requests[i] = req
            long_mappings += maps
        biggest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[ContainerExtendedResourceRequest] = []
        for i in short_lived:
            req, maps = _request_and_mappings(i, containers[i], resource, cls.metadata.name, long_requests[i:])
            if req is not None:
                short_names.add(req.name)
                assert req.exactly is not None
                if biggest is None or (biggest.exactly is not None and biggest.exactly.count < req.exactly.count):
                    biggest = req
            short_mappings += maps
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest.name)
            short_mappings = [
                ContainerExtendedResourceRequest(container_name=m.container_name, resource_name=m.resource_name, request_name=biggest.name)
                if m.request_name in short_names else m
                for m in short_mappings
            ]  # fmt: skip
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: r.name)
    return requests, mappings
