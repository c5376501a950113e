"""``resourceAllocationScorer``: the per-resource (allocatable, requested) columns and the strategies.

For each configured resource the scorer builds two int64 columns over the batch:

- allocatable: the node's allocatable; 0 marks "skip this resource on this node" (a scalar the
  node does not have, or one the pod does not request);
- requested: the node's requests plus the pod's.  cpu/memory use the node's *non-zero* requests
  and the pod's non-zero request (100m / 200Mi per container missing one) unless ``use_requested``
  (BalancedAllocation); ephemeral-storage and scalars always use real requests.

Every strategy is integer arithmetic exactly as upstream, vectorized over the nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import add, sub
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    CPU,
    DEFAULT_VERSION,
    EPHEMERAL_STORAGE,
    MAX_NODE_SCORE,
    MEMORY,
    PODS,
    RequestRules,
    is_scalar_resource_name,
    pod_requests,
    request_rules,
)

from .._helper import build_broken_linear_function, go_div
from ._args import MAX_CUSTOM_PRIORITY_SCORE, ResourceSpec

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeBatch, Pod

Scorer = Callable[[list[np.ndarray], list[np.ndarray]], np.ndarray]
"""(requested columns, allocatable columns) -> int64 score per node."""

MAX_UTILIZATION = 100
NEWEST_RULES = request_rules(DEFAULT_VERSION, {})
"""The newest release's request rules (its gates at their defaults), the helpers' default."""


def pod_resource_request_list(
    pod: Pod,
    resources: Sequence[ResourceSpec],
    use_requested: bool,
    rules: RequestRules = NEWEST_RULES,
    state: CycleState | None = None,
    *,
    cpu_memory: bool = False,
) -> list[int]:
    """``calculatePodResourceRequestList``: the pod's request of each configured resource
    (``rules``: ``SkipPodLevelResources: !enablePodLevelResources``, ``UseStatusResources:
    enableInPlacePodVerticalScaling``, v1.32 resource_allocation.go); ``state``: the cycle's,
    whose PodInfo has them computed already.  ``cpu_memory``: ``resources`` are cpu and memory,
    in this order (the default), read off the PodInfo's fields without a loop."""
    pi = state.pod_info if state is not None else None
    if pi is not None and pi.pod is pod and pi.rules == rules:  # pod_requests(state=state)'s
        req = pi.requests
        if cpu_memory:  # req.get(CPU), req.get(MEMORY); else the non-zero ones
            return [req.milli_cpu, req.memory] if use_requested else [pi.non_zero_cpu, pi.non_zero_mem]
        if use_requested:
            return [req.get(r.name) for r in resources]
        # pod_requests(non_zero=True) read off the PodInfo without making it: its requests
        # with the non-zero cpu and memory (no other resource has a scoring default)
        return [
            pi.non_zero_cpu if r.name == CPU else pi.non_zero_mem if r.name == MEMORY else req.get(r.name)
            for r in resources
        ]
    req = pod_requests(pod, non_zero=not use_requested, rules=rules, state=state)
    return [req.get(r.name) for r in resources]


def allocatable_requested(
    nodes: NodeBatch,
    resources: Sequence[ResourceSpec],
    pod_requests_list: Sequence[int],
    use_requested: bool,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``calculateResourceAllocatableRequest`` for every resource, as columns over ``nodes``."""
    n = len(nodes)
    zeros = np.zeros(n, dtype=np.int64)
    allocs: list[np.ndarray] = []
    reqs: list[np.ndarray] = []
    for spec, pod_req in zip(resources, pod_requests_list, strict=True):
        name = spec.name
        scalar = is_scalar_resource_name(name)
        if pod_req == 0 and scalar:
            allocs.append(zeros)
            reqs.append(zeros)
            continue
        if name in (CPU, MEMORY):
            node_req = nodes.requested(name) if use_requested else nodes.non_zero_requested(name)
        elif name == EPHEMERAL_STORAGE or scalar:
            node_req = nodes.requested(name)
        else:  # not a resource the scorer knows: bypassed
            allocs.append(zeros)
            reqs.append(zeros)
            continue
        allocs.append(nodes.allocatable(name))
        reqs.append(node_req + pod_req)
    return reqs, allocs


def cpu_memory_columns(
    nodes: NodeBatch,
    names: tuple[str, ...],
    pod_requests_list: Sequence[int],
    use_requested: bool,
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`allocatable_requested` as two ``(len(names), len(nodes))`` arrays (requested,
    allocatable) when every resource is cpu or memory and every node has some of each, less
    than :data:`EXACT_LIMIT`: the strategies' fast path, with no per-resource masks.  None
    otherwise."""
    if not names or not all(name in _CPU_MEMORY for name in names) or not len(nodes):
        return None
    least, most = nodes.allocatable_bounds(names)
    if least <= 0 or most >= EXACT_LIMIT:
        return None
    alloc = nodes.columns("allocatable", names)
    kind = "requested" if use_requested else "non_zero_requested"
    pod = np.array(pod_requests_list, dtype=np.int64)
    req = nodes.columns(kind, names) + pod[:, None]
    return req, alloc


_CPU_MEMORY = (CPU, MEMORY)
EXACT_LIMIT = 2**53 // (MAX_NODE_SCORE * 128)
"""Allocatable below this (~700 TB of memory), ``x * 100 / c`` and the weighted sums of such
scores stay exact in float64 (integers below 2**53), so ``floor`` of the float quotient is Go's
integer division of non-negative integers, much cheaper than numpy's integer division."""


def least_requested_fast(
    resources: Sequence[ResourceSpec], requested: np.ndarray, allocatable: np.ndarray
) -> np.ndarray:
    """LeastAllocated over :func:`cpu_memory_columns`: the weighted average of
    ``(c - r) * 100 / c`` (0 when r > c), in floats that are exact (see :data:`EXACT_LIMIT`)."""
    free = np.maximum(allocatable - requested, 0).astype(np.float64)
    free *= MAX_NODE_SCORE
    free /= allocatable
    s = np.floor(free, out=free)  # each resource's score
    weights = [spec.weight for spec in resources]  # each in (0, 100] (validated)
    weight_sum = sum(weights)
    if any(w != 1 for w in weights):
        s *= np.array(weights, dtype=np.float64)[:, None]
    total = s[0] if len(s) == 1 else s[0] + s[1] if len(s) == 2 else s.sum(axis=0)
    if weight_sum != 1:
        total = np.floor(total / weight_sum)
    out: np.ndarray = total.astype(np.int64)
    return out


def least_requested_one(resources: Sequence[ResourceSpec], requested: list[int], allocatable: list[int]) -> int:
    """:func:`least_requested_fast` of one node, in integers: ``floor`` of the exact float
    quotients there is Go's integer division (see :data:`EXACT_LIMIT`)."""
    total = 0
    weight_sum = 0
    for spec, r, c in zip(resources, requested, allocatable, strict=True):
        total += (max(c - r, 0) * MAX_NODE_SCORE // c) * spec.weight
        weight_sum += spec.weight
    return total // weight_sum


def least_requested_one_of(resources: Sequence[ResourceSpec]) -> Callable[[list[int], list[int]], int]:
    """:func:`least_requested_one` for ``resources``, their weights read once."""
    weights = tuple(spec.weight for spec in resources)
    weight_sum = sum(weights)

    def one(requested: list[int], allocatable: list[int]) -> int:
        total = 0
        for w, r, c in zip(weights, requested, allocatable, strict=True):
            free = c - r
            if free > 0:  # max(c - r, 0): a node short of room scores 0 for the resource
                total += free * MAX_NODE_SCORE // c * w
        return total // weight_sum

    return one


def least_requested_two_of(resources: Sequence[ResourceSpec]) -> Callable[..., int] | None:
    """:func:`least_requested_one` of two resources (None for another count), as
    :class:`RowScores`' ``compute_two``: ``two(r0, r1, c0, c1, pod)``, the pod's requests unused."""
    if len(resources) != 2:
        return None
    w0, w1 = resources[0].weight, resources[1].weight
    weight_sum = w0 + w1

    def two(r0: int, r1: int, c0: int, c1: int, pod: tuple[int, ...]) -> int:
        total = 0
        free = c0 - r0
        if free > 0:  # max(c - r, 0): a node short of room scores 0 for the resource
            total += free * MAX_NODE_SCORE // c0 * w0
        free = c1 - r1
        if free > 0:
            total += free * MAX_NODE_SCORE // c1 * w1
        return total // weight_sum

    return two


def balanced_two(r0: int, r1: int, c0: int, c1: int, pod: tuple[int, ...]) -> int:
    """:func:`balanced_one` of two resources, as :class:`RowScores`' ``compute_two`` (the pod's
    requests unused)."""
    f0 = r0 / c0
    if f0 > 1.0:  # min(f, 1.0), without the call
        f0 = 1.0
    f1 = r1 / c1
    if f1 > 1.0:
        f1 = 1.0
    return int((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)


def balanced_one(requested: list[int], allocatable: list[int]) -> int:
    """:func:`balanced_fast` of one node of one or two resources: the same float operations."""
    if len(requested) == 1:
        return MAX_NODE_SCORE
    f0 = requested[0] / allocatable[0]
    if f0 > 1.0:  # min(f, 1.0), without the call
        f0 = 1.0
    f1 = requested[1] / allocatable[1]
    if f1 > 1.0:
        f1 = 1.0
    return int((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)


def balanced_change_fast(requested: np.ndarray, allocatable: np.ndarray, pod: np.ndarray) -> np.ndarray | None:
    """1.36's BalancedAllocation score (kubernetes#135573) over :func:`cpu_memory_columns`:
    the change in balance the pod makes, ``50 + (50 + with - without) // 2``."""
    with_pod = balanced_fast(requested, allocatable)
    without = balanced_fast(requested - pod, allocatable)
    if with_pod is None or without is None:
        return None
    half = MAX_NODE_SCORE // 2
    with_pod += half
    with_pod -= without  # >= 0: each score is in [0, 100]
    with_pod >>= 1
    with_pod += half
    return with_pod


def balanced_change_one(requested: list[int], allocatable: list[int], pod: tuple[int, ...]) -> int:
    """:func:`balanced_change_fast` of one node."""
    if len(requested) == 2:  # cpu and memory (the usual case)
        return balanced_change_two(requested[0], requested[1], allocatable[0], allocatable[1], pod)
    half = MAX_NODE_SCORE // 2
    without = balanced_one(list(map(sub, requested, pod)), allocatable)
    return half + (half + balanced_one(requested, allocatable) - without) // 2


def balanced_change_two(r0: int, r1: int, c0: int, c1: int, pod: tuple[int, ...]) -> int:
    """:func:`balanced_change_one` of two resources (``balanced_one`` twice, inlined), as
    :class:`RowScores`' ``compute_two``."""
    half = MAX_NODE_SCORE // 2
    f0 = r0 / c0
    if f0 > 1.0:
        f0 = 1.0
    f1 = r1 / c1
    if f1 > 1.0:
        f1 = 1.0
    g0 = (r0 - pod[0]) / c0
    if g0 > 1.0:
        g0 = 1.0
    g1 = (r1 - pod[1]) / c1
    if g1 > 1.0:
        g1 = 1.0
    with_pod = int((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)
    return half + (half + with_pod - int((1 - abs((g0 - g1) / 2)) * MAX_NODE_SCORE)) // 2


def balanced_fast(requested: np.ndarray, allocatable: np.ndarray) -> np.ndarray | None:
    """:func:`balanced_resource_scorer` over :func:`cpu_memory_columns` for one or two
    resources (None for more): the same float operations."""
    n = requested.shape[1]
    if len(requested) == 1:
        return np.full(n, MAX_NODE_SCORE, dtype=np.int64)  # one fraction: std 0
    if len(requested) != 2:
        return None
    f = requested.astype(np.float64)
    f /= allocatable
    np.minimum(f, 1.0, out=f)
    std = f[0] - f[1]
    std /= 2
    np.abs(std, out=std)
    score = 1 - std
    score *= MAX_NODE_SCORE
    out: np.ndarray = np.trunc(score, out=score).astype(np.int64)
    return out


class RowScores:
    """A fast strategy's score of every snapshot row, for the pod requests seen lately.

    A node's score depends on its allocatable and requests (its snapshot row, whose
    ``Snapshot.generations`` entry changes whenever they do) and on the pod's request: for the
    pods of one template, a batch's scores are a gather from the snapshot-wide array, after a
    recount of the rows changed since the last pod (the node the last pod went to: the
    snapshot's change log says which, and a few rows are recounted in plain integers or floats
    by ``compute_one``, the same operations as ``compute``'s).  An array is made the second time
    a request is seen in a node set, so that a node set changing all the time costs nothing more
    than the batch itself.
    """

    _LIMIT = 32
    _FEW = 8  # up to this many changed rows are recounted one by one

    def __init__(
        self,
        names: tuple[str, ...],
        use_requested: bool,
        compute: Callable[[np.ndarray, np.ndarray], np.ndarray | None],
        compute_one: Callable[[list[int], list[int]], int] | None = None,
        *,
        with_pod: bool = False,
        compute_two: Callable[[int, int, int, int, tuple[int, ...]], int] | None = None,
    ) -> None:
        self.names = names
        self.kind = "requested" if use_requested else "non_zero_requested"
        # (requested with the pod's, allocatable) of some rows -> their scores; with
        # ``with_pod``, the pod's requests (a column, or the tuple) come third
        self.compute = compute
        self.compute_one = compute_one  # the same of one row -> its score
        # the same of one row of two resources, its ints one by one, the pod's requests last
        # (whether the score uses them or not): (r0, r1, c0, c1, pod) -> its score
        self.compute_two = compute_two
        self.with_pod = with_pod
        self._entries: dict[tuple[int, ...], _RowEntry] = {}
        self._fast = bool(names) and all(n in _CPU_MEMORY for n in names)  # cpu and memory only
        # a changed row of cpu and memory (either order) is read off its NodeInfo's fields
        # and scored by ``compute_two``
        self._order = 0 if compute_two is None else 1 if names == (CPU, MEMORY) else -1 if names == (MEMORY, CPU) else 0
        self._non_zero = not use_requested

    def scores(self, nodes: NodeBatch, pod_requests_list: Sequence[int], view: bool = False) -> np.ndarray | None:
        """The scores of the snapshot batch ``nodes``, or None (not a snapshot batch, the
        first sight of this request in this node set, or no fast path for these nodes).
        ``view``: they may be a view of the kept array (for a reader that neither writes to it
        nor keeps it past the cycle: the Score runner's ``score_view``), else a fresh array."""
        snap = nodes.snapshot
        rows = nodes.indices
        names = self.names
        if snap is None or rows is None or not self._fast:
            return None
        key = tuple(pod_requests_list)
        entry = self._entries.get(key)
        if entry is None or entry.snapshot is not snap or entry.generation != snap.tree_generation:
            if entry is None and len(self._entries) >= self._LIMIT:
                self._entries.clear()
            self._entries[key] = _RowEntry(snap, snap.tree_generation)
            return None
        scores = entry.scores
        if scores is None:
            if entry.failed:
                return None
            least, most = snap.allocatable_bounds(names)
            full = self._compute(snap, key, None) if least > 0 and most < EXACT_LIMIT else None
            if full is None:
                entry.failed = True
                return None
            entry.scores = scores = full
            entry.generations = snap.generations.copy()
            entry.mark = snap.change_mark()
        else:
            gens = entry.generations
            assert gens is not None
            mark = entry.mark
            changed = snap.rows_changed_since(mark)
            if changed is None or len(changed) > self._FEW or self.compute_one is None:
                stale = (snap.generations != gens).nonzero()[0]
                if len(stale):
                    part = self._compute(snap, key, stale)
                    assert part is not None
                    scores[stale] = part
                    gens[stale] = snap.generations[stale]
                entry.mark = snap.change_mark()
            elif changed and self._order:
                # cpu and memory: each changed row read off the snapshot's NodeInfo of the row,
                # whose fields are the values of its columns (and its generation the row's in
                # Snapshot.generations): plain ints, no numpy scalar read
                infos = snap.node_infos
                score_two = self.compute_two
                assert score_two is not None  # (else no _order)
                non_zero = self._non_zero
                first = self._order > 0
                k0, k1 = key
                for row in changed:
                    ni = infos[row]
                    g = ni.generation
                    if gens.item(row) != g:
                        a = ni.allocatable
                        if non_zero:
                            cpu, mem = ni.non_zero_cpu, ni.non_zero_mem
                        else:
                            rq = ni.requested
                            cpu, mem = rq.milli_cpu, rq.memory
                        if first:
                            scores[row] = score_two(cpu + k0, mem + k1, a.milli_cpu, a.memory, key)
                        else:
                            scores[row] = score_two(mem + k0, cpu + k1, a.memory, a.milli_cpu, key)
                        gens[row] = g
                entry.mark = mark + len(changed)  # change_mark(): the log's rows past ``mark`` are these
            elif changed:
                now = snap.generations
                alloc = snap.columns("allocatable", names)
                req = snap.columns(self.kind, names)
                one = self.compute_one
                two = len(key) == 2
                for row in changed:  # .item: plain Python scalars, no numpy scalar arithmetic
                    g = now.item(row)
                    if gens.item(row) != g:
                        if two:  # cpu and memory: scalars read without a column view
                            r = [req.item(0, row) + key[0], req.item(1, row) + key[1]]
                            c = [alloc.item(0, row), alloc.item(1, row)]
                        else:
                            r, c = list(map(add, req[:, row].tolist(), key)), alloc[:, row].tolist()
                        scores[row] = one(r, c, key) if self.with_pod else one(r, c)  # type: ignore[call-arg]
                        gens[row] = g
                entry.mark = mark + len(changed)  # change_mark(): the log's rows past ``mark`` are these
        span = nodes.row_span()
        if span is not None:  # consecutive rows: a slice (its copy), cheaper than the gather
            return scores[span[0] : span[1]] if view else scores[span[0] : span[1]].copy()
        out: np.ndarray = scores[rows]
        return out

    def _compute(self, snap: Any, pod: tuple[int, ...], rows: np.ndarray | None) -> np.ndarray | None:
        alloc = snap.columns("allocatable", self.names)
        req = snap.columns(self.kind, self.names)
        if rows is not None:
            alloc, req = alloc.take(rows, axis=1), req.take(rows, axis=1)
        column = np.array(pod, dtype=np.int64)[:, None]
        if self.with_pod:
            return self.compute(req + column, alloc, column)  # type: ignore[call-arg]
        return self.compute(req + column, alloc)


class _RowEntry:
    __slots__ = ("failed", "generation", "generations", "mark", "scores", "snapshot")

    def __init__(self, snapshot: Any, generation: int) -> None:
        self.snapshot = snapshot
        self.generation = generation  # the snapshot's node set (tree generation)
        self.scores: np.ndarray | None = None  # per snapshot row
        self.generations: np.ndarray | None = None  # the rows' generations they were made at
        self.mark = 0  # the snapshot's change mark when they were last brought up to date
        self.failed = False  # no fast path for this node set


class RowFits:
    """Whether each snapshot row has room for one request: NodeResourcesFit's batch Filter,
    answered by a gather when every node of the batch has room (the usual case).

    One is kept per Filter plan (a request's resources, pods first, and amounts), so the pods of
    one template share it.  As :class:`RowScores`' scores, the array is made the second time the
    request is filtered in a node set, then brought up to date from the snapshot's change log
    (the few rows changed since the last pod, in plain integers: ``need <= allocatable -
    requested`` per resource), or by comparing ``Snapshot.generations`` when many changed.
    """

    __slots__ = ("generation", "generations", "mark", "names", "need", "ok", "short", "snapshot", "_pcm")
    _FEW = 8  # up to this many changed rows are checked one by one

    def __init__(self, names: tuple[str, ...], need: list[int]) -> None:
        self.names = names
        self.need = need  # the amount per resource of ``names``
        self._pcm = names == (PODS, CPU, MEMORY)  # the usual plan: a changed row read off its NodeInfo
        self.snapshot: Any = None
        self.generation = -1  # the snapshot's node set (tree generation) when last seen
        self.ok: np.ndarray | None = None  # room on each snapshot row
        self.short = 0  # how many rows have no room (none: every batch fits, no gather needed)
        self.generations: np.ndarray | None = None  # the rows' generations ``ok`` was made at
        self.mark = 0  # the snapshot's change mark when ``ok`` was last brought up to date

    def all_fit(self, nodes: NodeBatch) -> bool:
        """True when every node of the snapshot batch ``nodes`` has room; False when some node
        has none, or it is not known without the batch's columns (not a snapshot batch, or the
        first sight of this request in this node set)."""
        snap = nodes.snapshot
        rows = nodes.indices
        if snap is None or rows is None:
            return False
        if self.snapshot is not snap or self.generation != snap.tree_generation:
            self.snapshot, self.generation, self.ok = snap, snap.tree_generation, None
            return False
        ok = self.ok
        names = self.names
        if ok is None:
            need = np.array(self.need, dtype=np.int64)[:, None]
            free = snap.columns("allocatable", names) - snap.columns("requested", names)
            self.ok = ok = ~(need > free).any(axis=0)
            self.short = len(ok) - int(np.count_nonzero(ok))
            self.generations = snap.generations.copy()
        else:
            gens = self.generations
            assert gens is not None
            mark = self.mark
            changed = snap.rows_changed_since(mark)
            if changed is None or len(changed) > self._FEW:
                stale = (snap.generations != gens).nonzero()[0]
                if len(stale):
                    need = np.array(self.need, dtype=np.int64)[:, None]
                    alloc = snap.columns("allocatable", names).take(stale, axis=1)
                    req = snap.columns("requested", names).take(stale, axis=1)
                    ok[stale] = ~(need > alloc - req).any(axis=0)
                    gens[stale] = snap.generations[stale]
                    self.short = len(ok) - int(np.count_nonzero(ok))
            elif changed and self._pcm:
                # pods, cpu and memory: each changed row read off the snapshot's NodeInfo of the
                # row, whose fields are the values of its columns (allocatable: the pod count,
                # cpu and memory; requested: len(pods) and the requests) and whose generation is
                # the row's in Snapshot.generations: plain ints, no numpy scalar read
                infos = snap.node_infos
                n_pods, n_cpu, n_mem = self.need
                for row in changed:
                    ni = infos[row]
                    g = ni.generation
                    if gens.item(row) != g:
                        a = ni.allocatable
                        rq = ni.requested
                        room = not (
                            n_pods > a.allowed_pod_number - len(ni.pods)
                            or n_cpu > a.milli_cpu - rq.milli_cpu
                            or n_mem > a.memory - rq.memory
                        )
                        if room is not ok.item(row):
                            ok[row] = room
                            self.short += -1 if room else 1
                        gens[row] = g
                self.mark = mark + len(changed)  # change_mark(): the log's rows past ``mark`` are these
                return not self.short or bool(ok[rows].all())
            elif changed:
                now = snap.generations
                alloc = snap.columns("allocatable", names)
                req = snap.columns("requested", names)
                need_list = self.need
                for row in changed:  # .item: plain Python scalars, no numpy scalar arithmetic
                    g = now.item(row)
                    if gens.item(row) != g:
                        room = True  # need <= allocatable - requested for every resource
                        for j, amount in enumerate(need_list):  # .item: no column view
                            if amount > alloc.item(j, row) - req.item(j, row):
                                room = False
                                break
                        if room is not ok.item(row):
                            ok[row] = room
                            self.short += -1 if room else 1
                        gens[row] = g
                self.mark = mark + len(changed)  # change_mark(): the log's rows past ``mark`` are these
                return not self.short or bool(ok[rows].all())
        self.mark = snap.change_mark()
        return not self.short or bool(ok[rows].all())


def _weighted_average(
    per_resource: Callable[[np.ndarray, np.ndarray], np.ndarray], resources: Sequence[ResourceSpec]
) -> Scorer:
    def score(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
        n = len(requested[0]) if requested else 0
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for spec, r, c in zip(resources, requested, allocatable, strict=True):
            valid = c != 0
            if not valid.any():
                continue
            safe_c = np.where(valid, c, 1)
            s = per_resource(r, safe_c)
            node_score += np.where(valid, s * spec.weight, 0)
            weight_sum += np.where(valid, spec.weight, 0)
        out = np.zeros(n, dtype=np.int64)
        nz = weight_sum != 0
        out[nz] = node_score[nz] // weight_sum[nz]
        return out

    return score


def _least_requested(r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``leastRequestedScore``: (c - r) * 100 / c, 0 when r > c."""
    return np.where(r > c, 0, go_div((c - r) * MAX_NODE_SCORE, c))


def _most_requested(r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``mostRequestedScore``: min(r, c) * 100 / c."""
    score: np.ndarray = go_div(np.minimum(r, c) * MAX_NODE_SCORE, c)
    return score


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """LeastAllocated: favour nodes with the most free capacity."""
    return _weighted_average(_least_requested, resources)


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """MostAllocated: favour the fullest nodes (bin packing)."""
    return _weighted_average(_most_requested, resources)


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[tuple[int, int]]
) -> Scorer:
    """RequestedToCapacityRatio: a broken-linear function of utilization (scores ×10).

    Per resource ``s = f(r * 100 / c)`` (``f(100)`` when ``c == 0`` or ``r > c``); only resources with
    ``s > 0`` enter the weighted average, which is rounded half away from zero.
    """
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    f = build_broken_linear_function([(u, s * scale) for u, s in shape])

    def score(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
        n = len(requested[0]) if requested else 0
        node_score = np.zeros(n, dtype=np.int64)
        weight_sum = np.zeros(n, dtype=np.int64)
        for spec, r, c in zip(resources, requested, allocatable, strict=True):
            valid = c != 0
            if not valid.any():
                continue
            safe_c = np.where(valid, c, 1)
            util = np.where(
                r >= safe_c, MAX_UTILIZATION, np.where(r <= 0, 0, go_div(np.maximum(r, 0) * MAX_UTILIZATION, safe_c))
            )
            s = f(util.astype(np.int64))
            use = valid & (s > 0)
            node_score += np.where(use, s * spec.weight, 0)
            weight_sum += np.where(use, spec.weight, 0)
        out = np.zeros(n, dtype=np.int64)
        nz = weight_sum != 0
        q = node_score[nz].astype(np.float64) / weight_sum[nz].astype(np.float64)
        fl = np.floor(q)
        out[nz] = (fl + (q - fl >= 0.5)).astype(np.int64)  # math.Round (q >= 0)
        return out

    return score


def balanced_resource_scorer(requested: list[np.ndarray], allocatable: list[np.ndarray]) -> np.ndarray:
    """``balancedResourceScorer``: (1 - std of min(r/c, 1)) * 100, truncated.

    With two fractions std is ``|f1 - f2| / 2``; with more, the population std; otherwise 0.
    Accumulated in resource order, as upstream, for bit-identical floats.
    """
    n = len(requested[0]) if requested else 0
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.float64)
    fracs: list[tuple[np.ndarray, np.ndarray]] = []
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    for r, c in zip(requested, allocatable, strict=True):
        valid = c != 0
        if not valid.any():
            continue
        safe_c = np.where(valid, c, 1).astype(np.float64)
        f = np.minimum(r.astype(np.float64) / safe_c, 1.0)
        f = np.where(valid, f, 0.0)
        first = np.where(valid & (count == 0), f, first)
        second = np.where(valid & (count == 1), f, second)
        total = total + f
        count = count + valid
        fracs.append((valid, f))
    std = np.zeros(n, dtype=np.float64)
    two = count == 2
    std[two] = np.abs((first[two] - second[two]) / 2)
    many = count > 2
    if many.any():
        mean = np.zeros(n, dtype=np.float64)
        mean[many] = total[many] / count[many]
        acc = np.zeros(n, dtype=np.float64)
        for valid, f in fracs:
            d = f - mean
            acc = np.where(valid, acc + d * d, acc)
        std[many] = np.sqrt(acc[many] / count[many])
    return np.trunc((1 - std) * MAX_NODE_SCORE).astype(np.int64)


__all__ = [
    "RowFits",
    "RowScores",
    "allocatable_requested",
    "balanced_change_fast",
    "balanced_change_one",
    "balanced_fast",
    "balanced_one",
    "balanced_resource_scorer",
    "cpu_memory_columns",
    "least_requested_fast",
    "least_requested_one",
    "least_requested_one_of",
    "least_resource_scorer",
    "most_resource_scorer",
    "pod_resource_request_list",
    "requested_to_capacity_ratio_scorer",
]
