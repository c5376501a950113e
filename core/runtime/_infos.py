"""PodInfo and NodeInfo (upstream's ``framework/types.go``): what the scheduler derives once from
a pod, and the per-node aggregate of its pods.

``NodeInfo`` is the per-node aggregate (``framework.NodeInfo``): the node, its pods, their summed
requests (real and non-zero), the host ports in use.  :func:`pod_value` is one pod's share of a
node's column.  The leaf below the cache and the batches: ``_cache`` (the snapshot's rows) and
``_nodeinfo`` (``NodeBatch``, ``RowOverlay``; it re-exports these names) build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api._resources import (
    CPU,
    MEMORY,
    NEWEST_RULES,
    PODS,
    RequestRules,
    Resource,
    pod_requests_and_non_zero,
)

if TYPE_CHECKING:
    from kubesched.api._objects import Node, Pod


def parse_time(ts: str | None) -> float | None:
    """RFC 3339 → seconds since the epoch (None stays None)."""
    if not ts:
        return None
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


_UNPARSED = object()
_NO_PORTS: tuple[tuple[str, str, int], ...] = ()
_new_resource = object.__new__


# one container's resources, encoded -> pod_requests_and_non_zero's answer for a pod of it
_ONE_CONTAINER: dict[bytes, tuple[Resource, int, int]] = {}
_encode = msgspec.msgpack.Encoder().encode


def _requests_of(pod: Pod, rules: RequestRules) -> tuple[Resource, int, int]:
    """``pod_requests_and_non_zero(pod, rules)``, remembered for the common shape: one container,
    and no init containers, overhead, pod-level resources or container statuses.  For such a
    pod it sums that container's requests (its limits standing in for missing ones) whatever the
    rules, so the answer is a function of their content, kept by its msgpack encoding (equal
    bytes: the same names, values and value types in the same order, which is the order of
    the scalar resources); each pod gets its own copy of the Resource."""
    spec, status = pod.spec, pod.status
    if (
        len(spec.containers) != 1
        or spec.init_containers
        or spec.overhead
        or spec.resources is not None
        or status.container_statuses
        or status.init_container_statuses
    ):
        return pod_requests_and_non_zero(pod, rules)
    try:
        key = _encode(spec.containers[0].resources)
    except (TypeError, msgspec.EncodeError):  # a value no decoded pod has: as it is
        return pod_requests_and_non_zero(pod, rules)
    hit = _ONE_CONTAINER.get(key)
    if hit is None:
        if len(_ONE_CONTAINER) >= 1024:
            _ONE_CONTAINER.clear()
        hit = _ONE_CONTAINER[key] = pod_requests_and_non_zero(pod, rules)
    kept, nz_cpu, nz_mem = hit
    # Resource.clone without its calls
    r = _new_resource(Resource)
    r.milli_cpu, r.memory, r.ephemeral_storage = kept.milli_cpu, kept.memory, kept.ephemeral_storage
    r.allowed_pod_number = kept.allowed_pod_number
    r.scalar = dict(kept.scalar) if kept.scalar else {}
    return r, nz_cpu, nz_mem


class PodInfo:
    """A pod with what the scheduler derives from it once: requests, priority, identity."""

    __slots__ = (
        "pod",
        "uid",
        "key",
        "priority",
        "requests",
        "non_zero_cpu",
        "non_zero_mem",
        "host_ports",
        "rules",
        "_non_zero",
        "extra",
        "_start_src",
        "_start_time",
    )

    def __init__(self, pod: Pod, rules: RequestRules = NEWEST_RULES) -> None:
        """``rules``: how the emulated release computes requests (its PodLevelResources and
        InPlacePodVerticalScaling gates: :func:`kubesched.api.request_rules`), as
        ``calculateResource`` reads them."""
        self.pod = pod
        self.uid = pod.metadata.uid
        self.key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        self.priority = pod.spec.priority or 0
        self.rules = rules
        self.requests, self.non_zero_cpu, self.non_zero_mem = _requests_of(pod, rules)
        self._non_zero: Resource | None = None
        # ``util.GetHostPorts``: restartable (sidecar) init containers, then containers; the
        # shared empty tuple for a pod without any (most pods: no list made for them)
        ports: Sequence[tuple[str, str, int]] = _NO_PORTS
        spec = pod.spec
        containers = spec.containers
        if spec.init_containers:
            sidecars = [c for c in spec.init_containers if c.restart_policy == "Always"]
            containers = [*sidecars, *containers]
        for c in containers:
            if c.ports:
                found = [(p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port) for p in c.ports if p.host_port > 0]
                if found:
                    ports = [*ports, *found]
        self.host_ports = ports
        # per-plugin precomputed data (parsed affinity terms, ...), keyed by plugin name
        self.extra: dict[str, Any] = {}
        self._start_src: object = _UNPARSED
        self._start_time: float | None = None

    def update(self, pod: Pod) -> PodInfo:
        """A PodInfo for a newer version of the same pod (recomputed)."""
        return PodInfo(pod, self.rules)

    def with_pod(self, pod: Pod) -> PodInfo:
        """The same derived data for a copy of the pod whose spec differs only in nodeName."""
        pi = PodInfo.__new__(PodInfo)
        pi.pod = pod
        pi.uid = self.uid
        pi.key = self.key
        pi.priority = self.priority
        pi.requests = self.requests
        pi.non_zero_cpu = self.non_zero_cpu
        pi.non_zero_mem = self.non_zero_mem
        pi._non_zero = self._non_zero
        pi.host_ports = self.host_ports
        pi.rules = self.rules
        extra = self.extra
        pi.extra = dict(extra) if extra else {}
        pi._start_src = _UNPARSED
        pi._start_time = None
        return pi

    @property
    def non_zero_requests(self) -> Resource:
        """``pod_requests(pod, non_zero=True)``: :attr:`requests` with the non-zero cpu and
        memory (the other resources have no scoring default)."""
        nz = self._non_zero
        if nz is None:
            nz = self._non_zero = self.requests.clone()
            nz.milli_cpu, nz.memory = self.non_zero_cpu, self.non_zero_mem
        return nz

    @property
    def start_time(self) -> float | None:
        """``status.startTime`` in seconds since the epoch, parsed once per timestamp string."""
        ts = self.pod.status.start_time
        if ts is not self._start_src:
            self._start_time = parse_time(ts)
            self._start_src = ts
        return self._start_time

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


class NodeInfo:
    """``framework.NodeInfo``: a node and the pods on it (assumed ones included)."""

    __slots__ = (
        "node",
        "name",
        "pods",
        "requested",
        "non_zero_cpu",
        "non_zero_mem",
        "allocatable",
        "used_ports",
        "generation",
    )

    def __init__(self, node: Node | None = None, name: str = "") -> None:
        self.node = node
        self.name = node.metadata.name if node is not None else name
        self.pods: list[PodInfo] = []
        self.requested = Resource()
        self.non_zero_cpu = 0
        self.non_zero_mem = 0
        self.allocatable = Resource.from_list(node.status.allocatable) if node else Resource()
        self.used_ports: dict[tuple[str, str, int], int] = {}
        self.generation = 0

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.allocatable = Resource.from_list(node.status.allocatable)

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        # Resource.add, inlined (every assumed pod comes here)
        req, r = self.requested, pi.requests
        req.milli_cpu += r.milli_cpu
        req.memory += r.memory
        req.ephemeral_storage += r.ephemeral_storage
        req.allowed_pod_number += r.allowed_pod_number
        if r.scalar:
            scalar = req.scalar
            for k, v in r.scalar.items():
                scalar[k] = scalar.get(k, 0) + v
        self.non_zero_cpu += pi.non_zero_cpu
        self.non_zero_mem += pi.non_zero_mem
        for port in pi.host_ports:
            self.used_ports[port] = self.used_ports.get(port, 0) + 1

    def remove_pod(self, uid: str) -> PodInfo | None:
        for i, pi in enumerate(self.pods):
            if pi.uid == uid:
                del self.pods[i]
                self.requested.add(pi.requests, -1)
                self.non_zero_cpu -= pi.non_zero_cpu
                self.non_zero_mem -= pi.non_zero_mem
                for port in pi.host_ports:
                    n = self.used_ports.get(port, 0) - 1
                    if n > 0:
                        self.used_ports[port] = n
                    else:
                        self.used_ports.pop(port, None)
                return pi
        return None

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        # Resource.clone without its two calls (the snapshot clones each changed row)
        r = self.requested
        c.requested = req = _new_resource(Resource)
        req.milli_cpu = r.milli_cpu
        req.memory = r.memory
        req.ephemeral_storage = r.ephemeral_storage
        req.allowed_pod_number = r.allowed_pod_number
        req.scalar = dict(r.scalar) if r.scalar else {}
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_mem = self.non_zero_mem
        c.allocatable = self.allocatable
        c.used_ports = dict(self.used_ports) if self.used_ports else {}
        c.generation = self.generation
        return c

    # column values, the same names as the snapshot's arrays
    def requested_of(self, resource: str) -> int:
        if resource == PODS:
            return len(self.pods)
        return self.requested.get(resource)

    def non_zero_of(self, resource: str) -> int:
        if resource == CPU:
            return self.non_zero_cpu
        if resource == MEMORY:
            return self.non_zero_mem
        return self.requested_of(resource)

    @property
    def labels(self) -> dict[str, str]:
        return self.node.metadata.labels if self.node is not None else {}

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


def pod_value(pi: PodInfo, kind: str, resource: str) -> int:
    """What one pod adds to a NodeInfo's column ``(kind, resource)`` (0 for ``allocatable``):
    summed over a node's pods it gives :meth:`NodeInfo.requested_of` / :meth:`NodeInfo.non_zero_of`."""
    if kind == "allocatable":
        return 0
    if resource == PODS:
        return 1
    if kind == "non_zero_requested":
        if resource == CPU:
            return pi.non_zero_cpu
        if resource == MEMORY:
            return pi.non_zero_mem
    return pi.requests.get(resource)


__all__ = ["NodeInfo", "PodInfo", "parse_time", "pod_value"]
