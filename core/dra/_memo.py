"""What ``Allocator.allocate`` decided for a node, kept for the next call that would decide the
same.

The search's outcome on a node depends only on: the slices (their versions), the classes, the
gates and variant, the claims' specs (not their names, which only appear in error messages),
and which of the node's pools' devices are in use and how much of their capacity is consumed.
Consecutive scheduling cycles ask every node again for claims of the same shape while one node
at a time changes, so most calls repeat an earlier one exactly; the kept outcome (the chosen
requests and devices, or "no allocation") is turned into fresh ``AllocationResult``s each
time.  Errors are not kept (they name the claim).  Only used when every slice is stored (has a
uid and resourceVersion), so a version names its content.

Per Node object (:class:`NodeEntry`, the incubating variant, whose pool order is fixed) the
allocator also keeps the node's pools and the outcome it last got there: a node asked again
for the same claims while its pools' use is the same answers without a lookup.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Set
from typing import Any

import msgspec

from kubesched.api._dra import AllocationResult, DeviceClass, ResourceClaim
from kubesched.api._objects import Node
from kubesched.dra._pools import Pool, node_key
from kubesched.dra._results import DeviceID, Request, Result, build_result

Outcome = list[tuple[list[Request], list[Result]]] | None

_ENCODE = msgspec.json.Encoder().encode
_MEMO: dict[tuple[Any, ...], Outcome] = {}
_LIMIT = 100_000


_CLASS_SIGNATURES: dict[tuple[int, ...], tuple[tuple[DeviceClass, ...], bytes]] = {}


def classes_signature(classes: Iterable[DeviceClass]) -> bytes:
    """The classes' names and specs as one value; worked out once for the same class objects
    (each cycle's allocator is given the informer's, unchanged while no class changes)."""
    objs = tuple(classes)
    key = tuple(map(id, objs))
    hit = _CLASS_SIGNATURES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], objs, strict=True)):
        return hit[1]
    sig = b"\0".join(sorted(_ENCODE(c.spec) + c.metadata.name.encode() for c in objs))
    if len(_CLASS_SIGNATURES) > 1_000:
        _CLASS_SIGNATURES.clear()
    _CLASS_SIGNATURES[key] = (objs, sig)
    return sig


class ClaimSignatures:
    """Each claim's spec, encoded once (by identity, checked)."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[ResourceClaim, bytes]] = {}

    def of(self, claim: ResourceClaim) -> bytes:
        hit = self._by_id.get(id(claim))
        if hit is not None and hit[0] is claim:
            return hit[1]
        sig = _ENCODE(claim.spec)
        self._by_id[id(claim)] = (claim, sig)
        return sig


class PoolUse:
    """Per pool, what of it is in use: allocated devices, shares, consumed capacity."""

    def __init__(
        self,
        devices: Iterable[DeviceID],
        shared: Iterable[tuple[DeviceID, str]],
        capacity: dict[DeviceID, dict[str, Any]],
    ) -> None:
        index: dict[tuple[str, str], list[Any]] = {}
        for d in devices:
            index.setdefault((d[0], d[1]), []).append(d[2])
        for d, share in shared:
            index.setdefault((d[0], d[1]), []).append((d[2], share))
        for d, consumed in capacity.items():
            index.setdefault((d[0], d[1]), []).append(
                (d[2], tuple(sorted((k, str(v)) for k, v in consumed.items())))
            )
        self._use = {pid: frozenset(items) for pid, items in index.items()}
        self._none: frozenset[Any] = frozenset()

    def of(self, pool_id: tuple[str, str]) -> frozenset[Any]:
        return self._use.get(pool_id, self._none)

    @property
    def get(self) -> Callable[[tuple[str, str], frozenset[Any]], frozenset[Any]]:
        """``get(pool_id, none)``: :meth:`of` without a call of its own (``none`` being
        :attr:`none`), for loops over many nodes."""
        return self._use.get

    @property
    def none(self) -> frozenset[Any]:
        """What :meth:`of` says of a pool nothing of which is in use."""
        return self._none

    def dedicated(self) -> Set[DeviceID]:
        """The devices in use as a set (no copy), when every item is a device name (no
        shares, no consumed capacity: what :meth:`of_pools` is given)."""
        return _Dedicated(self._use)

    @classmethod
    def of_pools(cls, use: dict[tuple[str, str], frozenset[Any]]) -> PoolUse:
        """A PoolUse over per-pool sets kept by the caller (the same items as ``__init__``
        makes: device names, (name, share ID), (name, consumed capacity))."""
        self = cls.__new__(cls)
        self._use = use
        self._none = frozenset()
        return self


class _Dedicated(Set[DeviceID]):
    """(driver, pool, device) in use, read from per-pool sets of device names."""

    __slots__ = ("_use",)

    def __init__(self, use: dict[tuple[str, str], frozenset[Any]]) -> None:
        self._use = use

    def __contains__(self, did: object) -> bool:
        if type(did) is not tuple or len(did) != 3:
            return False
        names = self._use.get((did[0], did[1]))
        return names is not None and did[2] in names

    def __iter__(self) -> Iterator[DeviceID]:
        for (driver, pool), names in self._use.items():
            for name in names:
                yield (driver, pool, name)

    def __len__(self) -> int:
        return sum(len(names) for names in self._use.values())


_MISSING: Any = object()
_BASES: dict[tuple[Any, ...], int] = {}


_NUMBERS = itertools.count()


def base_id(parts: tuple[Any, ...]) -> int:
    """A number naming an allocator's fixed inputs (slices, classes, gates, variant); never
    reused, so an outcome kept under an old number cannot answer for new inputs."""
    number = _BASES.get(parts)
    if number is None:
        if len(_BASES) >= 10_000:
            _BASES.clear()
        number = _BASES[parts] = next(_NUMBERS)
    return number


def lookup(key: tuple[Any, ...]) -> tuple[bool, Outcome]:
    hit = _MEMO.get(key, _MISSING)
    if hit is _MISSING:
        return False, None
    return True, hit


def remember(key: tuple[Any, ...], outcome: Outcome) -> None:
    if len(_MEMO) >= _LIMIT:
        _MEMO.clear()
    _MEMO[key] = outcome


class NodeEntry:
    """A node's pools as an allocator sees them, and the outcome it last got there (for which
    claims, ``prefix``, and which use of its pools)."""

    __slots__ = ("node", "node_key", "outcome", "pool_ids", "pools", "pools_key", "prefix", "uses")

    def __init__(self, node: Node, pools_key: tuple[Any, ...], pools: list[Pool]) -> None:
        self.node, self.pools_key, self.pools = node, pools_key, pools
        self.node_key = node_key(node)
        self.pool_ids = [p.id for p in pools]
        self.prefix: int = -1
        self.uses: Any = None  # the pool's use (one pool) or the tuple of its pools' uses
        self.outcome: Outcome = None


# id(Node) -> its entry, in the incubating variant (whose pools keep their order)
NODE_ENTRIES: dict[int, NodeEntry] = {}
NO_ENTRY: dict[int, NodeEntry] = {}
# the allocators' pools_key, one object per value (compared by identity)
POOLS_KEYS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


Found = list[tuple[list[Request], list[Result]]]
"""What the search found on a node: per claim, the (sub)requests taken and the devices."""


class Build:
    """The ``AllocationResult``s of a kept outcome, built when called (one object per node, not
    a closure's several)."""

    __slots__ = ("claims", "conditions", "found", "node_name")

    def __init__(
        self,
        claims: list[ResourceClaim],
        found: Found,
        node_name: str,
        conditions: bool,
    ) -> None:
        self.claims, self.found = claims, found
        self.node_name, self.conditions = node_name, conditions

    def __call__(self) -> list[AllocationResult]:
        name, conditions = self.node_name, self.conditions
        return [
            build_result(claim, chosen, devices, name, binding_conditions=conditions)
            for claim, (chosen, devices) in zip(self.claims, self.found, strict=True)
        ]
