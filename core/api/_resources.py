"""Kubernetes quantities and pod resource requests, computed exactly as upstream.

A quantity is parsed to an exact :class:`fractions.Fraction`; CPU is then held in millicores
(``MilliValue``, rounded up) and everything else in whole units (``Value``, rounded up), as
kube-scheduler's ``framework.Resource`` does.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_UP, Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from kubesched._errors import KubeschedError

if TYPE_CHECKING:
    from kubesched.api._objects import Container, Pod, ResourceList

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# The non-zero defaults used for scoring a container that requests no cpu / memory
# (pkg/scheduler/util: DefaultMilliCPURequest, DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# ASCII digits only (``\\d`` would also take "١٢"), as upstream's parser
_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$"
)
# upstream's bounds: the value is capped at the largest int64 and rounded up to a nano unit
# (``maxAllowed``, ``amount.Round(amount, Nano, inf.RoundUp)`` in resource.ParseQuantity)
MAX_QUANTITY = Fraction(2**63 - 1)
_NANO = Fraction(1, 10**9)
_INT32_MAX = 2**31 - 1


class QuantityError(KubeschedError, ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a Kubernetes quantity (``"500m"``, ``"1Gi"``, ``"1e3"``, ``2``) exactly."""
    if isinstance(value, bool):
        raise QuantityError(f"quantities must match the regular expression: {value!r}")
    if isinstance(value, int):
        return _bounded(Fraction(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"invalid quantity {value!r}")
        return _bounded(Fraction(value))
    text = str(value).strip()
    m = _QUANTITY.match(text)
    if not m:
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}"
        )
    d = Decimal(m["num"])  # linear in the digits, as upstream's parser
    if m["exp"]:
        exp = int(m["exp"][1:]) if len(m["exp"]) < 20 else _INT32_MAX + 1
        if abs(exp) > _INT32_MAX:  # upstream parses the exponent as an int32
            raise QuantityError(f"unable to parse quantity's suffix: {value!r}")
        if d == 0:
            return Fraction(0)
        # the decimal magnitude first, so that 1e999999999 costs nothing
        magnitude = d.adjusted() + exp
        if magnitude > 19:
            return MAX_QUANTITY if d > 0 else -MAX_QUANTITY
        if magnitude < -10:
            return _NANO if d > 0 else -_NANO
        with localcontext(prec=_KEPT_DIGITS, rounding=ROUND_UP):
            d = d.scaleb(exp)
        return _bounded(_kept(d))
    if d.adjusted() > _KEPT_DIGITS // 2:  # beyond every quantity, whatever the suffix
        return MAX_QUANTITY if d > 0 else -MAX_QUANTITY
    num = _kept(d)
    if m["bin"]:
        return _bounded(num * _BINARY[m["bin"]])
    return _bounded(num * _DECIMAL[m["dec"] or ""])


_KEPT_DIGITS = 100
"""Significant digits a mantissa keeps: exact up to 50 digits after the point, far finer than
a nano unit of any suffix; beyond, rounded away from zero (so a nano rounding stays exact)."""


def _kept(d: Decimal) -> Fraction:
    """``d`` exactly to 50 places after the point, rounded away from zero beyond: the work is
    bounded however many digits the text had (a Fraction of a million digits is quadratic)."""
    if d.is_finite() and d.adjusted() >= _KEPT_DIGITS // 2 - 10:
        # far beyond the int64 cap (and any suffix's nano scale): _bounded caps it anyway, and
        # quantizing would need more digits than the context has
        return Fraction(-(10**40) if d.is_signed() else 10**40)
    with localcontext(prec=_KEPT_DIGITS, rounding=ROUND_UP):
        return Fraction(d.quantize(_KEPT_QUANTUM))


_KEPT_QUANTUM = Decimal(1).scaleb(-(_KEPT_DIGITS // 2))


def _bounded(q: Fraction) -> Fraction:
    """``q`` rounded away from zero to a nano unit and capped at the largest int64, as upstream."""
    if q.denominator != 1 and (q * 10**9).denominator != 1:
        nanos = math.ceil(abs(q) * 10**9)
        q = Fraction(nanos, 10**9) if q > 0 else Fraction(-nanos, 10**9)
    if q > MAX_QUANTITY:
        return MAX_QUANTITY
    if q < -MAX_QUANTITY:
        return -MAX_QUANTITY
    return q


def milli_value(q: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return math.ceil(q * 1000)


def whole_value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return math.ceil(q)


@functools.lru_cache(maxsize=4096)
def quantity_value(name: str, value: str | int | float) -> int:
    """The scheduler's integer for one resource: millicores for cpu, whole units otherwise."""
    q = parse_quantity(value)
    return milli_value(q) if name == CPU else whole_value(q)


@dataclass(slots=True)
class Resource:
    """``framework.Resource``: cpu in millicores, the rest in whole units."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, rl: ResourceList | None) -> Resource:
        r = cls()
        if rl:
            for name, value in rl.items():
                r.set(name, quantity_value(name, value))
        return r

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def set(self, name: str, value: int) -> None:
        if name == CPU:
            self.milli_cpu = value
        elif name == MEMORY:
            self.memory = value
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = value
        elif name == PODS:
            self.allowed_pod_number = value
        else:
            self.scalar[name] = value

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + sign * v

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar),
        )

    def names(self) -> list[str]:
        return [CPU, MEMORY, EPHEMERAL_STORAGE, PODS, *self.scalar]

    def is_zero(self) -> bool:
        return not (
            self.milli_cpu
            or self.memory
            or self.ephemeral_storage
            or any(self.scalar.values())
        )


def _container_requests(c: Container) -> dict[str, int]:
    """A container's requests; a resource with only a limit requests its limit (API defaulting)."""
    out: dict[str, int] = {}
    limits = c.resources.limits or {}
    requests = c.resources.requests or {}
    for name, value in limits.items():
        if name not in requests:
            out[name] = quantity_value(name, value)
    for name, value in requests.items():
        out[name] = quantity_value(name, value)
    return out


def _non_missing(reqs: dict[str, int]) -> dict[str, int]:
    out = dict(reqs)
    out.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    out.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return out


def _add(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


# PodLevelResources (KEP-2837): how a pod's ``spec.resources`` enters its requests, per release.
POD_LEVEL_OFF = 0
"""The gate off, or a release without it (1.30, 1.31): ``SkipPodLevelResources``."""
POD_LEVEL_V1_32 = 1
"""1.32 (alpha, kubernetes#128407): cpu and memory; a pod-level request left out while pod-level
limits are set defaults to the containers' aggregate request, else to the pod-level limit."""
POD_LEVEL = 2
"""1.33 on (kubernetes#130577; beta, on by default from 1.34): cpu, memory and ``hugepages-*``;
a left-out cpu / memory request defaults to the pod-level limit, a hugepages one to the
containers' aggregate first."""
HUGEPAGES_PREFIX = "hugepages-"

# InPlacePodVerticalScaling (KEP-1287): how a resized pod's status enters its requests, per release.
IN_PLACE_OFF = 0
"""The gate off (alpha, off by default, 1.30-1.32): the spec's requests only."""
IN_PLACE_V1_30 = 1
"""1.30, 1.31 (``InPlacePodVerticalScalingEnabled``): a container with a status counts the max of
its spec and its ``allocatedResources``; with ``status.resize: Infeasible``, its
``allocatedResources`` alone."""
IN_PLACE_V1_32 = 2
"""1.32 (``UseStatusResources``): a container whose status has ``resources`` counts the max of
its spec and ``status.resources.requests`` (with ``status.resize: Infeasible``, the latter alone)."""
IN_PLACE_V1_33 = 3
"""1.33, 1.34 (beta, on; ``determineContainerReqs``): a regular container whose status has
``resources`` counts the max of its spec, its actuated (``resources.requests``) and its
allocated (``allocatedResources``) requests; a resize the kubelet found infeasible (condition
``PodResizePending``, reason ``Infeasible``) leaves the spec out."""
IN_PLACE = 4
"""1.35 on (GA, locked): the max of the spec's, the allocated and the actuated *aggregates*
(max of sums, not sum of maxes), init containers too, a container without a status counting
its spec (where the resize is infeasible: nothing)."""


class RequestRules(NamedTuple):
    """How a release computes a pod's requests (``resourcehelper.PodResourcesOptions``):
    ``pod_level`` (``POD_LEVEL_*``), ``in_place`` (``IN_PLACE_*``) and ``pod_level_in_place``
    (InPlacePodLevelResourcesVerticalScaling: alpha 1.35, beta on 1.36; a pod-level request
    counts the pod's resized status, :func:`effective_pod_level_requests`)."""

    pod_level: int = POD_LEVEL
    in_place: int = IN_PLACE
    pod_level_in_place: bool = True


NEWEST_RULES = RequestRules()
"""The newest release's rules with its gates at their defaults (both on)."""


def request_rules(version: tuple[int, int], gates: Mapping[str, bool]) -> RequestRules:
    """The rules of ``version`` with ``gates`` (a gate not listed: at its default there, from
    upstream's VersionedSpecs: PodLevelResources on from 1.34, InPlacePodVerticalScaling from
    1.33, InPlacePodLevelResourcesVerticalScaling from 1.36; off where the release has no gate)."""
    pod_level = POD_LEVEL_OFF
    if gates.get("PodLevelResources", version >= (1, 34)):
        pod_level = POD_LEVEL_V1_32 if version < (1, 33) else POD_LEVEL
    in_place = IN_PLACE_OFF
    if gates.get("InPlacePodVerticalScaling", version >= (1, 33)):
        in_place = (
            IN_PLACE_V1_30 if version < (1, 32)
            else IN_PLACE_V1_32 if version < (1, 33)
            else IN_PLACE_V1_33 if version < (1, 35)
            else IN_PLACE
        )  # fmt: skip
    # PodResourcesOptions.InPlacePodLevelResourcesVerticalScalingEnabled counts only with
    # UseStatusResources (InPlacePodVerticalScaling) and pod-level resources
    pod_level_in_place = bool(
        pod_level and in_place and gates.get("InPlacePodLevelResourcesVerticalScaling", version >= (1, 36))
    )
    return RequestRules(pod_level, in_place, pod_level_in_place)


def _pod_level_supported(name: str, mode: int) -> bool:
    """``IsSupportedPodLevelResource``: cpu and memory; hugepages too from 1.33."""
    return name in (CPU, MEMORY) or (mode >= POD_LEVEL and name.startswith(HUGEPAGES_PREFIX))


def pod_level_requests(pod: Pod, mode: int = POD_LEVEL) -> dict[str, int] | None:
    """The pod-level requests that replace the containers' aggregate (None: the pod sets none,
    or ``mode`` is off), after the API server's defaulting of the release.

    ``defaultPodRequests`` (pkg/apis/core/v1/defaults.go; kubernetes#128407 in 1.32, restricted
    to hugepages by kubernetes#130577 in 1.33) fills requests the pod left out only when it sets
    pod-level limits; ``IsPodLevelRequestsSet`` then asks for a supported resource among them.
    """
    res = pod.spec.resources
    if mode == POD_LEVEL_OFF or res is None or not (res.requests or res.limits):
        return None
    out = {n: quantity_value(n, v) for n, v in (res.requests or {}).items() if _pod_level_supported(n, mode)}
    if res.limits:
        given = set(res.requests or ())
        aggregate = _aggregate(pod, False)
        for name, value in aggregate.items():
            from_aggregate = mode == POD_LEVEL_V1_32 or name.startswith(HUGEPAGES_PREFIX)
            if from_aggregate and name not in given and _pod_level_supported(name, mode):
                out.setdefault(name, value)
        for name, q in res.limits.items():
            if name not in given and _pod_level_supported(name, mode):
                out.setdefault(name, quantity_value(name, q))
    return out or None


def pod_requests_and_non_zero(pod: Pod, rules: RequestRules = NEWEST_RULES) -> tuple[Resource, int, int]:
    """``pod_requests(pod)`` and the cpu and memory of ``pod_requests(pod, non_zero=True)``, in
    one pass over the containers for a pod of containers only (no init containers, overhead,
    pod-level resources or container statuses the rules read), else as the two calls."""
    spec = pod.spec
    status = pod.status
    if (
        spec.init_containers
        or spec.overhead
        or (rules.pod_level and spec.resources is not None)
        or (rules.in_place and (status.container_statuses or status.init_container_statuses))
    ):
        nz = pod_requests(pod, non_zero=True, rules=rules)
        return pod_requests(pod, rules=rules), nz.milli_cpu, nz.memory
    containers = spec.containers
    if len(containers) == 1:  # the sum of one container's requests is its requests
        reqs = _container_requests(containers[0])
        nz_cpu = reqs.get(CPU, DEFAULT_MILLI_CPU_REQUEST)
        nz_mem = reqs.get(MEMORY, DEFAULT_MEMORY_REQUEST)
    else:
        reqs = {}
        nz_cpu = nz_mem = 0
        for c in containers:
            cr = _container_requests(c)
            for k, v in cr.items():
                reqs[k] = reqs.get(k, 0) + v
            nz_cpu += cr.get(CPU, DEFAULT_MILLI_CPU_REQUEST)
            nz_mem += cr.get(MEMORY, DEFAULT_MEMORY_REQUEST)
    r = Resource()
    for name, value in reqs.items():
        if name == CPU:  # Resource.set, its two common cases inlined
            r.milli_cpu = value
        elif name == MEMORY:
            r.memory = value
        else:
            r.set(name, value)
    return r, nz_cpu, nz_mem


class _Derived(Protocol):
    """What :func:`pod_requests` may reuse from a scheduling cycle's state: the PodInfo of the
    pod being scheduled (``CycleState.pod_info``), computed once when it was queued."""

    @property
    def pod_info(self) -> Any: ...


def pod_requests(
    pod: Pod, *, non_zero: bool = False, rules: RequestRules = NEWEST_RULES, state: _Derived | None = None
) -> Resource:
    """``resourcehelper.PodRequests``: the pod's effective requests by a release's ``rules``.

    With ``state`` (a plugin's CycleState), the requests the scheduler computed for the pod
    being scheduled are reused when ``pod`` is that pod and the rules are its: the result is
    shared then, and must not be changed.

    Containers are summed; restartable (sidecar) init containers add to the sum and to every
    later init container's peak; the peak of the init phase is taken against the sum (for a
    resized pod, from its container statuses as well: :data:`IN_PLACE`); then the pod-level
    requests of a supported resource replace that aggregate (:func:`pod_level_requests`); the
    pod overhead is added.  With ``non_zero``, a container missing a cpu / memory request counts
    100m / 200Mi (the scoring defaults); an explicit zero stays zero.
    """
    if state is not None:
        pi = state.pod_info
        if pi is not None and pi.pod is pod and pi.rules == rules:
            kept: Resource = pi.non_zero_requests if non_zero else pi.requests
            return kept
    status = pod.status
    if rules.in_place and (status.container_statuses or status.init_container_statuses):
        reqs = _resized_aggregate(pod, non_zero, rules.in_place)
    else:
        reqs = _aggregate(pod, non_zero)
    if rules.pod_level and pod.spec.resources is not None:
        pod_reqs = pod_level_requests(pod, rules.pod_level)
        if pod_reqs:
            if rules.pod_level_in_place and status.resources is not None:
                pod_reqs = effective_pod_level_requests(pod, pod_reqs)
            reqs.update(pod_reqs)
    if pod.spec.overhead:
        for name, value in pod.spec.overhead.items():
            reqs[name] = reqs.get(name, 0) + quantity_value(name, value)
    r = Resource()
    for name, value in reqs.items():
        r.set(name, value)
    return r


def _values(rl: ResourceList | None) -> dict[str, int]:
    return {name: quantity_value(name, v) for name, v in (rl or {}).items()}


def effective_pod_level_requests(pod: Pod, spec: dict[str, int]) -> dict[str, int]:
    """component-helpers v0.35.4 / v0.36.0 ``PodRequests`` with
    InPlacePodLevelResourcesVerticalScalingEnabled, for a pod whose ``status.resources`` is set:
    each pod-level request of the spec becomes ``determineEffectiveRequests``' value, the max of
    the spec's, the actuated (``status.resources.requests``) and the allocated
    (``status.allocatedResources``) requests; of the last two alone where the kubelet found the
    resize infeasible (a resource neither has then counts 0)."""
    st = pod.status
    assert st.resources is not None
    effective = {} if resize_infeasible(pod) else dict(spec)
    _max(effective, _values(st.resources.requests))
    _max(effective, _values(st.allocated_resources))
    return {name: effective.get(name, 0) for name in spec}


def resize_infeasible(pod: Pod) -> bool:
    """``IsPodResizeInfeasible`` (1.33 on): the first ``PodResizePending`` condition's reason is
    ``Infeasible``."""
    for cond in pod.status.conditions:
        if cond.type == "PodResizePending":
            return cond.reason == "Infeasible"
    return False


def _resized_aggregate(pod: Pod, non_zero: bool, mode: int) -> dict[str, int]:
    """The aggregate of a pod with container statuses, by the release's ``mode``
    (``AggregateContainerRequests`` with ``UseStatusResources``)."""
    status = pod.status
    if mode != IN_PLACE:
        # v1.30/v1.31, v1.32 component-helpers resource/helpers.go and 1.33's
        # determineContainerReqs: regular containers only (in-place resize is not allowed for
        # init containers), each against its own status
        infeasible = resize_infeasible(pod) if mode == IN_PLACE_V1_33 else status.resize == "Infeasible"
        found = {cs.name: cs for cs in status.container_statuses}

        def per_container(c: Container, init: bool) -> dict[str, int]:
            spec = _container_requests(c)
            cs = None if init else found.get(c.name)
            if cs is None or (mode != IN_PLACE_V1_30 and cs.resources is None):
                return spec
            if mode == IN_PLACE_V1_30:
                current = _values(cs.allocated_resources)
            else:
                assert cs.resources is not None
                current = _values(cs.resources.requests)
                if mode == IN_PLACE_V1_33:
                    _max(current, _values(cs.allocated_resources))
            if infeasible:
                return current
            _max(spec, current)
            return spec

        return _aggregate(pod, non_zero, per_container)
    infeasible = resize_infeasible(pod)
    statuses = {cs.name: cs for cs in (*status.init_container_statuses, *status.container_statuses)}

    def allocated(c: Container, init: bool) -> dict[str, int]:  # containerAllocatedRequests
        cs = statuses.get(c.name)
        if cs is not None and cs.allocated_resources is not None:
            return _values(cs.allocated_resources)
        return {} if infeasible else _container_requests(c)

    def actuated(c: Container, init: bool) -> dict[str, int]:  # containerActuatedRequests
        cs = statuses.get(c.name)
        if cs is not None and cs.resources is not None and cs.resources.requests is not None:
            return _values(cs.resources.requests)
        if cs is not None and cs.allocated_resources is not None:
            return _values(cs.allocated_resources)
        return {} if infeasible else _container_requests(c)

    out = _aggregate(pod, non_zero, actuated)
    _max(out, _aggregate(pod, non_zero, allocated))
    if not infeasible:
        _max(out, _aggregate(pod, non_zero))
    return out


def _aggregate(
    pod: Pod, non_zero: bool, per_container: Callable[[Container, bool], dict[str, int]] | None = None
) -> dict[str, int]:
    """``AggregateContainerRequests``: the containers' requests, the init phase's peak against
    them (with ``non_zero``: 100m / 200Mi for a container missing a cpu / memory request);
    ``per_container(container, is_init)``: a container's requests (default: its spec's)."""
    reqs: dict[str, int] = {}
    for c in pod.spec.containers:
        cr = _container_requests(c) if per_container is None else per_container(c, False)
        _add(reqs, _non_missing(cr) if non_zero else cr)
    restartable: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in pod.spec.init_containers:
        cr = _container_requests(c) if per_container is None else per_container(c, True)
        if non_zero:
            cr = _non_missing(cr)
        if c.restart_policy == "Always":
            _add(reqs, cr)
            _add(restartable, cr)
            cr = dict(restartable)
        else:
            tmp = dict(cr)
            _add(tmp, restartable)
            cr = tmp
        _max(init_peak, cr)
    _max(reqs, init_peak)
    return reqs
