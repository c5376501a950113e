"""Which devices a node can see: ResourceSlices gathered into pools.

k8s.io/dynamic-resource-allocation v0.36.2 ``structured/internal/{stable,incubating}/pools_*.go``
``GatherPools``: a slice is relevant to the node by its ``nodeName``, ``allNodes``,
``nodeSelector`` or, with ``perDeviceNodeSelection``, any device's; slices holding
``sharedCounters`` always are.  Per pool only the newest generation counts; a pool with fewer
slices of that generation than ``resourceSliceCount`` is incomplete (unless a newer generation
exists elsewhere: then obsolete and dropped); duplicate device names or an unknown counter set
make a pool invalid.

Order: the incubating variant (1.36) sorts pools by driver then pool name, slices by name, and
puts pools with binding conditions last.  The stable variant (1.34–1.35) walks Go's map of pools,
whose order is random; kubesched makes that order a shuffle drawn from the run's seeded random
generator, so a run is repeatable under ``--seed`` and varies across seeds as upstream's does.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import msgspec

from kubesched.api._dra import CounterSet, ResourceSlice
from kubesched.api._helpers import NodeSelectorMatcher
from kubesched.api._objects import Node, NodeSelector
from kubesched.api._resources import parse_quantity

PoolID = tuple[str, str]  # (driver, pool)


@dataclass
class Pool:
    """One pool as the allocator sees it on one node."""

    id: PoolID
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[ResourceSlice] = field(default_factory=list)  # DeviceSlicesTargetingNode
    other_slices: list[ResourceSlice] = field(default_factory=list)  # DeviceSlicesNotTargetingNode
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    def name(self) -> str:
        return f"{self.id[0]}/{self.id[1]}"


_MATCHERS: dict[int, tuple[NodeSelector, NodeSelectorMatcher]] = {}


def node_matches(
    node: Node | None, node_name: str, all_nodes: bool, selector: NodeSelector | None
) -> bool:
    """``NodeMatches``."""
    if node_name:
        return node is not None and node.metadata.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        hit = _MATCHERS.get(id(selector))
        if hit is None or hit[0] is not selector:
            if len(_MATCHERS) > 10_000:
                _MATCHERS.clear()
            hit = (selector, NodeSelectorMatcher(selector))
            _MATCHERS[id(selector)] = hit
        return bool(hit[1].match(node))
    return False


def _relevant(s: ResourceSlice, node: Node | None, partitionable: bool) -> bool:
    spec = s.spec
    if not partitionable and (spec.per_device_node_selection is not None or spec.shared_counters):
        return False
    if spec.shared_counters:
        return True
    if spec.node_name or spec.all_nodes or spec.node_selector is not None:
        return node_matches(node, spec.node_name or "", bool(spec.all_nodes), spec.node_selector)
    if spec.per_device_node_selection:
        return any(
            node_matches(node, d.node_name or "", bool(d.all_nodes), d.node_selector)
            for d in spec.devices
        )
    return False


def _counter_sets(slices: Sequence[ResourceSlice]) -> dict[str, dict[str, Fraction]]:
    out: dict[str, dict[str, Fraction]] = {}
    for s in slices:
        for cs in s.spec.shared_counters:
            if cs.name in out:
                raise ValueError(f"duplicate counter set name {cs.name}")
            out[cs.name] = _counters(cs)
    return out


def _counters(cs: CounterSet) -> dict[str, Fraction]:
    return {name: parse_quantity(c.value) for name, c in cs.counters.items()}


def _check_consumption(
    counter_sets: dict[str, dict[str, Fraction]], slices: Sequence[ResourceSlice]
) -> None:
    for s in slices:
        for d in s.spec.devices:
            for use in d.consumes_counters:
                have = counter_sets.get(use.counter_set)
                if have is None:
                    raise ValueError(f"counter set {use.counter_set} not found")
                for name in use.counters:
                    if name not in have:
                        raise ValueError(
                            f"counter {name} not found in counter set {use.counter_set}"
                        )


def _check_device_names(slices: Sequence[ResourceSlice]) -> None:
    seen: set[str] = set()
    for s in slices:
        for d in s.spec.devices:
            if d.name in seen:
                raise ValueError(f"duplicate device name {d.name}")
            seen.add(d.name)


def _build(
    pid: PoolID,
    slices: list[ResourceSlice],
    partitionable: bool,
    sort: bool,
    all_for_pool: list[ResourceSlice] | None,
) -> Pool:
    if sort:
        slices = sorted(slices, key=lambda s: s.metadata.name)
    if partitionable:
        device_slices = [s for s in slices if not s.spec.shared_counters]
        counter_slices = [s for s in slices if s.spec.shared_counters]
    else:
        device_slices, counter_slices = slices, []
    try:
        _check_device_names(device_slices)
    except ValueError as err:
        return Pool(pid, invalid=True, invalid_reason=str(err))
    if not partitionable:
        return Pool(pid, slices=device_slices)
    try:
        counter_sets = _counter_sets(counter_slices)
        _check_consumption(counter_sets, slices)
        others: list[ResourceSlice] = []
        if all_for_pool is not None and len(all_for_pool) != len(slices):
            names = {s.metadata.name for s in slices}
            others = [s for s in all_for_pool if s.metadata.name not in names]
            _check_consumption(counter_sets, others)
    except ValueError as err:
        return Pool(pid, invalid=True, invalid_reason=str(err))
    return Pool(pid, slices=device_slices, other_slices=others, counter_sets=counter_sets)


_GATHERED: dict[tuple[Any, ...], list[Pool]] = {}


def gather_pools(
    slices_for_node: Sequence[ResourceSlice],
    node: Node | None,
    all_slices: Sequence[ResourceSlice],
    *,
    partitionable: bool,
    incubating: bool,
    rng: random.Random | None = None,
    token: Any = None,
) -> list[Pool]:
    """``GatherPools`` in the variant's order (see the module docstring).  ``token`` names the
    content of ``all_slices`` (every slice stored: their uids and resourceVersions); with it,
    the pools of a node are gathered once and reused while no slice changes."""
    if token is None or node is None:
        return _gather(slices_for_node, node, all_slices, partitionable, incubating, rng)
    key = (token, node_key(node), partitionable, incubating)
    pools = _GATHERED.get(key)
    if pools is None:
        if len(_GATHERED) > 50_000:
            _GATHERED.clear()
        pools = _GATHERED[key] = _gather(
            slices_for_node, node, all_slices, partitionable, incubating, None
        )
    if incubating:
        return pools
    shuffled = sorted(pools, key=lambda p: p.id)
    (rng if rng is not None else random.Random(0)).shuffle(shuffled)
    return shuffled


def _gather(
    slices_for_node: Sequence[ResourceSlice],
    node: Node | None,
    all_slices: Sequence[ResourceSlice],
    partitionable: bool,
    incubating: bool,
    rng: random.Random | None,
) -> list[Pool]:
    pools: dict[PoolID, list[ResourceSlice]] = {}
    for s in slices_for_node:
        if not _relevant(s, node, partitionable):
            continue
        pid = (s.spec.driver, s.spec.pool.name)
        have = pools.get(pid)
        if have is None or s.spec.pool.generation > have[0].spec.pool.generation:
            pools[pid] = [s]
        elif s.spec.pool.generation == have[0].spec.pool.generation:
            have.append(s)
    result: list[Pool] = []
    with_binding: list[Pool] = []
    for pid, in_pool in pools.items():
        generation = in_pool[0].spec.pool.generation
        want = in_pool[0].spec.pool.resource_slice_count
        all_for_pool: list[ResourceSlice] | None = None
        if len(in_pool) != want:
            obsolete = False
            all_for_pool = []
            for s in all_slices:
                if (s.spec.driver, s.spec.pool.name) != pid:
                    continue
                if s.spec.pool.generation > generation:
                    obsolete = True
                    break
                if s.spec.pool.generation == generation:
                    all_for_pool.append(s)
            if obsolete:
                continue
            if len(all_for_pool) != want:
                result.append(Pool(pid, incomplete=True))
                continue
        pool = _build(pid, in_pool, partitionable, incubating, all_for_pool)
        if incubating and any(d.binding_conditions for s in pool.slices for d in s.spec.devices):
            with_binding.append(pool)
        else:
            result.append(pool)
    if incubating:
        result.sort(key=lambda p: p.id)
        with_binding.sort(key=lambda p: p.id)
        return result + with_binding
    ordered = sorted(result, key=lambda p: p.id)
    (rng if rng is not None else random.Random(0)).shuffle(ordered)
    return ordered


_NODE_KEYS: dict[int, tuple[Node, tuple[str, frozenset[tuple[str, str]]]]] = {}


def node_key(node: Node) -> tuple[str, frozenset[tuple[str, str]]]:
    """What of a node slices select by: its name and labels (kept per Node object: an update
    brings a new one)."""
    hit = _NODE_KEYS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    key = (node.metadata.name, frozenset(node.metadata.labels.items()))
    if len(_NODE_KEYS) > 100_000:
        _NODE_KEYS.clear()
    _NODE_KEYS[id(node)] = (node, key)
    return key


_SLICE_KEYS: dict[int, tuple[ResourceSlice, tuple[Any, ...]]] = {}
_ENCODE_SPEC = msgspec.json.Encoder().encode


def slice_key(s: ResourceSlice) -> tuple[Any, ...]:
    """What identifies one version of a slice (for caches of per-device work, kept across
    scheduling cycles and across clusters in one process): its name, uid, resourceVersion and
    generations, and a hash of its spec, since two clusters (two simulations, a test after
    another) give a slice of the same name the same uid and resourceVersion whatever it holds.
    Worked out once per slice object (by identity, checked)."""
    hit = _SLICE_KEYS.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    md = s.metadata
    key = (md.name, md.uid, md.resource_version, md.generation, s.spec.pool.generation, hash(_ENCODE_SPEC(s.spec)))
    if len(_SLICE_KEYS) > 100_000:
        _SLICE_KEYS.clear()
    _SLICE_KEYS[id(s)] = (s, key)
    return key
