"""The six policies of the FGD paper as Score plugins (the artifact's ``pkg/simulator/plugin``).

Ported as behaviour from hkust-adsl/kubernetes-scheduler-simulator, commit 8f3d641:
``random_score.go``, ``dot_product_score.go``, ``gpu_clustering_score.go``,
``gpu_packing_score.go``, ``best_fit_score.go``, ``fgd_score.go`` and their helpers in
``pkg/type/resource.go`` and ``pkg/utils/utils.go`` (``GenerateSchedulingMatchGroups``).

Every plugin accepts the args the artifact's run scripts give each score plugin
(``dimExtMethod``, ``normMethod``); DotProductScore and FGDScore offer their card-selection rule
to Open-Gpu-Share under their names (``gpuSelMethod: DotProductScore`` / ``FGDScore``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeBatch,
    Pod,
    Status,
    hookimpl,
)
from kubesched_gpushare._frag import FragTable, TypicalPod, node_frag, typical_pods
from kubesched_gpushare._model import (
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    MILLI,
    Shape,
    accessible,
)
from kubesched_gpushare._scoring import NodeRes, Nodes, TieBreak, cached_scores, node_res, per_node
from kubesched_gpushare._state import Cards, cards_for
from kubesched_gpushare.opengpushare import plugin_args

RANDOM = "RandomScore"
DOT_PRODUCT = "DotProductScore"
GPU_CLUSTERING = "GpuClusteringScore"
GPU_PACKING = "GpuPackingScore"
BEST_FIT = "BestFitScore"
FGD = "FGDScore"
_RANDOM_KEY = "PreScore-RandomScorePlugin"


def exclusive_ids(free: list[int], shape: Shape) -> list[int]:
    """``AllocateExclusiveGpuId``: the first fully free cards, by index."""
    out: list[int] = []
    need = shape.total_milli
    for i, f in enumerate(free):
        if need <= 0:
            break
        if f == MILLI:
            out.append(i)
            need -= MILLI
    return out


def sub(node: NodeRes, shape: Shape) -> tuple[NodeRes, bool]:
    """``NodeResource.Sub``: the task placed on the fullest cards that fit (stable by index), and
    whether it fit.  As the artifact's, a failure leaves the copy as far as it got: unchanged when
    the cpu or the card count is short, else with the cpu and the cards that fit taken."""
    if node.cpu_left < shape.cpu or len(node.free) < shape.num:
        return NodeRes(list(node.free), node.cpu_left, node.cpu_capacity, node.model, node.affinity), False
    free = list(node.free)
    need = shape.num
    if need:
        for i in sorted(range(len(free)), key=lambda i: node.free[i]):
            if shape.milli <= free[i]:
                free[i] -= shape.milli
                need -= 1
                if need <= 0:
                    break
    return NodeRes(free, node.cpu_left - shape.cpu, node.cpu_capacity, node.model, node.affinity), need <= 0


# --- Random ------------------------------------------------------------------------------------
class RandomScore:
    """PreScore picks one feasible node at random; Score gives it MaxNodeScore, the rest 0."""

    name = RANDOM

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.tie = TieBreak(plugin_args(args, gpu_sel=False)["tieBreak"], RANDOM, cards_for(handle))
        self.handle = handle

    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        state.write(_RANDOM_KEY, nodes.name_at(self.handle.rng.randrange(len(nodes))))
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        chosen = state.read(_RANDOM_KEY)
        self.tie.remember(state, nodes)
        return np.fromiter((MAX_NODE_SCORE if nodes.name_at(i) == chosen else MIN_NODE_SCORE
                            for i in range(len(nodes))), dtype=np.int64, count=len(nodes))

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        self.tie.apply(state, scores)


# --- DotProd -----------------------------------------------------------------------------------
def _formalized(free: list[int]) -> list[tuple[int, list[int]]]:
    """``ToFormalizedGpuResourceList``: each partly used card, then the fully free ones as one."""
    out = [(f, [i]) for i, f in enumerate(free) if 0 < f < MILLI]
    whole = [i for i, f in enumerate(free) if f == MILLI]
    if whole:
        out.append((MILLI * len(whole), whole))
    return out


def normalize_vector(vec: list[float], norm: list[float]) -> list[float]:
    """``NormalizeVector``: each entry over its norm, 0 where the norm is not positive."""
    return [v / n if n > 0 else 0.0 for v, n in zip(vec, norm, strict=True)]


def vector_dot_product(a: list[float], b: list[float]) -> float:
    """``CalculateVectorDotProduct``: -1 for empty vectors or vectors of unequal size."""
    if not a or not b or len(a) != len(b):
        return -1.0
    return sum(x * y for x, y in zip(a, b, strict=True))


def resource_vec(node: NodeRes) -> list[float]:
    """``NodeResource.ToResourceVec``: (cpu left, GPU milli left)."""
    return [float(node.cpu_left), float(node.gpu_left)]


def dot_product(node: NodeRes, shape: Shape, dim_ext: str, norm: str) -> tuple[int, list[int] | None]:
    """``calculateDotProductScore``: (score, cards).  Tetris' alignment, reversed: the smaller
    the normalised dot product of the node's free vector and the task's request, the higher."""
    if node.cpu_left < shape.cpu:  # ToVirtualNodeResourceList: no vectors
        return MIN_NODE_SCORE, None
    req = shape.total_milli
    total_left = node.gpu_left
    # (node vector, gpu id) candidates
    nvecs: list[tuple[list[float], list[int] | None]] = []
    if dim_ext == "merge":
        nvecs.append(([float(node.cpu_left), float(total_left)], None))
    elif dim_ext in ("share", "divide"):
        if req < MILLI:
            for i, f in enumerate(node.free):
                if f >= MILLI or f < req:
                    continue
                cpu = float(node.cpu_left) if dim_ext == "share" else node.cpu_left * f / total_left
                nvecs.append(([cpu, float(f)], [i]))
        idle = node.fully_free
        if req <= idle * MILLI:
            ids = exclusive_ids(node.free, shape)
            cpu = float(node.cpu_left) if dim_ext == "share" else node.cpu_left * idle * MILLI / total_left
            nvecs.append(([cpu, float(idle * MILLI)], ids))
    else:  # extend
        nvecs.append(([float(node.cpu_left)] + [float(f) for f, _ in _formalized(node.free)], None))
    pvecs: list[tuple[list[float], list[int] | None]] = []
    if dim_ext == "extend":
        groups = _formalized(node.free)
        for k, (f, ids) in enumerate(groups):
            if f < req:
                continue
            vec = [float(shape.cpu)] + [float(req) if j == k else 0.0 for j in range(len(groups))]
            pvecs.append((vec, ids if f < MILLI else exclusive_ids(node.free, shape)))
    else:
        pvecs.append(([float(shape.cpu), float(req)], None))
    best, best_ids = -1.0, None
    for nvec, nids in nvecs:
        for pvec, pids in pvecs:
            if len(nvec) != len(pvec) or not nvec:
                continue  # CalculateVectorDotProduct's -1
            dims = len(pvec)
            if norm == "node":
                cap = [float(node.cpu_capacity)] + [float(len(node.free) * MILLI)] * (dims - 1)
            elif norm == "pod":
                cap = [float(shape.cpu)] + [float(req)] * (dims - 1)
            else:
                cap = [float(MAX_SPEC_CPU)] + [float(MAX_SPEC_GPU)] * (dims - 1)
            cur = vector_dot_product(normalize_vector(nvec, cap), normalize_vector(pvec, cap)) / dims
            if norm == "pod":
                cur = math.tanh(cur / 10)
            cur = 1 - cur
            if best < cur:
                best = cur
                best_ids = nids if dim_ext in ("share", "divide") else pids if dim_ext == "extend" else None
    if best == -1:
        return MIN_NODE_SCORE, None
    return int(MAX_NODE_SCORE * best), best_ids


class DotProductScore:
    """Score: ``DotProductScorePlugin`` (Tetris' packing heuristic), args dimExtMethod and normMethod."""

    name = DOT_PRODUCT

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        cfg = plugin_args(args, gpu_sel=False)
        self.dim_ext, self.norm = cfg["dimExtMethod"], cfg["normMethod"]
        self.cards = cards_for(handle)
        self.tie = TieBreak(cfg["tieBreak"], DOT_PRODUCT, self.cards)
        self.cards.selectors[DOT_PRODUCT] = self.select

    def select(self, cards: Cards, r: int, shape: Shape) -> list[int] | None:
        ni = cards.handle.snapshot.get(cards.names[r])
        cpu_left = cpu_cap = 0
        if ni is not None:
            cpu_cap = ni.allocatable.milli_cpu
            cpu_left = cpu_cap - ni.requested.milli_cpu
        return dot_product(node_res(cards, r, cpu_left, cpu_cap), shape, self.dim_ext, self.norm)[1]

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        shape = self.cards.shape(pod)
        self.tie.remember(state, nodes)
        return cached_scores(self.cards, self, shape, nodes, per_node(
            lambda n: dot_product(n, shape, self.dim_ext, self.norm)[0]))

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        self.tie.apply(state, scores)


# --- GpuClustering -------------------------------------------------------------------------------
def gpu_clustering(node: NodeRes, shape: Shape) -> int:
    """``GpuClusteringScorePlugin.Score``: tasks of one affinity gather on the same nodes."""
    if shape.num == 0:
        return MIN_NODE_SCORE
    slot = 0 if shape.is_share else min(shape.num, len(node.affinity) - 1)
    tags = sum(1 for c in node.affinity if c > 0)
    base = MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - node.gpu_left) // MAX_SPEC_GPU
    if node.affinity[slot] > 0:
        return base + (MAX_NODE_SCORE * 3 // 4 if tags == 1 else MAX_NODE_SCORE * 2 // 4)
    return base + (MAX_NODE_SCORE // 4 if tags == 0 else 0)


class GpuClusteringScore:
    """Score: ``GpuClusteringScorePlugin``."""

    name = GPU_CLUSTERING

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.cards = cards_for(handle)
        self.tie = TieBreak(plugin_args(args, gpu_sel=False)["tieBreak"], GPU_CLUSTERING, self.cards)

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        shape = self.cards.shape(pod)
        self.tie.remember(state, nodes)
        if shape.num == 0:
            return np.zeros(len(nodes), dtype=np.int64)
        return cached_scores(self.cards, self, shape, nodes,
                             per_node(lambda n: gpu_clustering(n, shape)))

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        self.tie.apply(state, scores)


# --- GpuPacking ----------------------------------------------------------------------------------
def gpu_packing(node: NodeRes, shape: Shape) -> int | None:
    """``getPackingScore``; None where the artifact errs (the task does not fit the cards).

    From high to low: shares on used cards (MaxNodeScore less a tenth of their free %, at least
    MaxNodeScore/2); free cards of a used node (MaxNodeScore/2 less the free cards taken, at least
    MaxNodeScore/3); a node all free (MaxNodeScore/3 less its cards, at least its free cards)."""
    fully_free = node.fully_free
    if fully_free == len(node.free):
        return max(MAX_NODE_SCORE // 3 - fully_free, fully_free)
    need = shape.num
    taken_free = 0
    used: list[int] = []
    for i in sorted(range(len(node.free)), key=lambda i: node.free[i]):
        if need == 0:
            break
        if shape.milli <= node.free[i]:
            need -= 1
            used.append(i)
            if node.free[i] == MILLI:
                taken_free += 1
    if need != 0:
        return None
    if taken_free > 0:
        return max(MAX_NODE_SCORE // 2 - taken_free, MAX_NODE_SCORE // 3)
    ratio = sum(node.free[i] * 100 // MILLI for i in used)
    return max(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)


class GpuPackingScore:
    """Score: ``GpuPackingScorePlugin``."""

    name = GPU_PACKING

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.cards = cards_for(handle)
        self.tie = TieBreak(plugin_args(args, gpu_sel=False)["tieBreak"], GPU_PACKING, self.cards)

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        self.tie.apply(state, scores)

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        shape = self.cards.shape(pod)
        self.tie.remember(state, nodes)
        if shape.milli <= 0:
            return np.zeros(len(nodes), dtype=np.int64)

        def score(n: NodeRes) -> int:
            s = gpu_packing(n, shape)
            if s is None:
                raise ValueError(f"failed to allocate gpu resource to pod {shape} on a node with "
                                 f"cards {n.free}")
            return s

        return cached_scores(self.cards, self, shape, nodes, per_node(score))


# --- BestFit -----------------------------------------------------------------------------------
def best_fit(node: NodeRes, shape: Shape) -> int | None:
    """``getBestFitScore``: 1 − ½·cpu left after / MaxSpecCpu − ½·GPU left after / MaxSpecGpu,
    scaled to 0–100; None where a resource would go negative (the artifact's error)."""
    free = (node.cpu_left, node.gpu_left)
    req = (shape.cpu, shape.total_milli)
    spec = (MAX_SPEC_CPU, MAX_SPEC_GPU)
    s = 0.0
    for f, q, m in zip(free, req, spec, strict=True):
        if f < q:
            return None
        s += (f - q) / m * 0.5
    return int((1.0 - s) * MAX_NODE_SCORE)


class BestFitScore:
    """Score + NormalizeScore (min-max to 0–100): ``BestFitScorePlugin``."""

    name = BEST_FIT

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.cards = cards_for(handle)
        self.tie = TieBreak(plugin_args(args, gpu_sel=False)["tieBreak"], BEST_FIT, self.cards)

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        shape = self.cards.shape(pod)
        self.tie.remember(state, nodes)

        def score(n: NodeRes) -> int:
            s = best_fit(n, shape)
            if s is None:
                raise ValueError("the score between node and pod is negative, should not happen")
            return s

        return cached_scores(self.cards, self, shape, nodes, per_node(score))

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        normalize_min_max(scores)
        self.tie.apply(state, scores)


def normalize_min_max(scores: np.ndarray) -> None:
    """``plugin.NormalizeScore``: lowest → 0, highest → 100 (all 0 when they are equal), in place."""
    if len(scores) == 0:
        return
    hi, lo = int(scores.max()), int(scores.min())
    if hi == lo:
        scores[:] = MIN_NODE_SCORE
        return
    scores[:] = (scores - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // (hi - lo) + MIN_NODE_SCORE


# --- FGD -----------------------------------------------------------------------------------------
TYPICAL_REGROW = 1.1
"""The typical types are recomputed when the cluster holds this many times the pods they were
computed from."""
TYPICAL_CHECK_EVERY = 256
"""How often (in Score calls) the cluster's pods are counted for that."""


def sigmoid_score(before: float, after: float) -> int:
    """``int64(sigmoid((before − after)/1000) × MaxNodeScore)``."""
    return int(1.0 / (1.0 + math.exp(-(before - after) / 1000)) * MAX_NODE_SCORE)


def fgd(node: NodeRes, shape: Shape, typical: list[TypicalPod]) -> tuple[int, list[int] | None]:
    """``calculateGpuShareFragExtendScore``: (score, cards).  The placement that lowers the node's
    fragmentation the most scores highest; a share is tried on each card that fits."""
    before = node_frag(node.free, node.cpu_left, node.model, typical)
    if shape.num == 1 and shape.milli < MILLI:
        score, card = 0, None
        for i, f in enumerate(node.free):
            if f >= shape.milli:
                free = list(node.free)
                free[i] -= shape.milli
                s = sigmoid_score(before, node_frag(free, node.cpu_left - shape.cpu, node.model, typical))
                if card is None or s > score:
                    score, card = s, [i]
        return score, card
    after, _ = sub(node, shape)  # an error leaves the copy as far as it got, as the artifact's
    s = sigmoid_score(before, node_frag(after.free, after.cpu_left, node.model, typical))
    return s, exclusive_ids(node.free, shape)


class FGDScore:
    """Score: ``FGDScorePlugin``, fragmentation gradient descent.

    The target workload's typical task types (:func:`typical_pods`, 95 % of the tasks) come from
    the pods the cluster holds, pending and placed, as the artifact takes them from its workload;
    they are computed at the first Score and again whenever the pods have grown by a tenth (counted
    every 256 Score calls)."""

    name = FGD

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle = handle
        self.cards = cards_for(handle)
        self.tie = TieBreak(plugin_args(args, gpu_sel=False)["tieBreak"], FGD, self.cards)
        self.cards.selectors[FGD] = self.select
        self.typical: list[TypicalPod] = []
        self.table = FragTable([])
        self._from = 0
        self._calls = 0

    def _typical(self) -> list[TypicalPod]:
        self._calls += 1
        if self.typical and self._calls % TYPICAL_CHECK_EVERY:
            return self.typical
        pods = self.handle.cluster.list_pods()
        if not self.typical or len(pods) >= self._from * TYPICAL_REGROW:
            self.typical = typical_pods(self.cards.shape(p) for p in pods)
            self.table = FragTable(self.typical)
            self._from = len(pods)
            self.cards.caches.pop(self, None)
        return self.typical

    def select(self, cards: Cards, r: int, shape: Shape) -> list[int] | None:
        ni = self.handle.snapshot.get(cards.names[r])
        cpu_left = 0
        if ni is not None:
            cpu_left = ni.allocatable.milli_cpu - ni.requested.milli_cpu
        return fgd(node_res(cards, r, cpu_left, 0), shape, self._typical())[1]

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        shape = self.cards.shape(pod)
        self.tie.remember(state, nodes)
        if shape.cpu == 0 and shape.num == 0 and not any(
                c.resources.requests for c in pod.spec.containers):
            return np.full(len(nodes), MAX_NODE_SCORE, dtype=np.int64)
        self._typical()
        return cached_scores(self.cards, self, shape, nodes, self._scorer(shape))

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> None:
        self.tie.apply(state, scores)

    def _scorer(self, shape: Shape) -> Any:
        table = self.table

        def compute(nodes: Nodes) -> np.ndarray:
            free, cpu_left = nodes.free, nodes.cpu_left
            codes = np.fromiter((table.code(m) for m in nodes.models), dtype=np.int64,
                                count=len(nodes.models))
            before = table.frag(free, cpu_left, codes)
            k = len(free)
            if shape.num == 1 and shape.milli < MILLI:
                # every card tried at once: (k * 8) states
                ks = free.shape[1]
                fits = free >= shape.milli  # (k, 8); cards past a node's count have 0 free
                trial = np.repeat(free[:, None, :], ks, axis=1)  # (k, 8 tried, 8)
                trial[:, np.arange(ks), np.arange(ks)] -= shape.milli
                after = table.frag(trial.reshape(k * ks, ks), np.repeat(cpu_left - shape.cpu, ks),
                                   np.repeat(codes, ks)).reshape(k, ks)
                s = np.where(fits, _sigmoid_scores(before[:, None] - after), -1)
                best = s.max(axis=1)
                out: np.ndarray = np.where(best < 0, 0, best)
                return out
            new = free.copy()
            # Sub: a node short of cpu or cards stays as it is
            ok = (cpu_left >= shape.cpu) & (nodes.ncards >= shape.num)
            if shape.num:
                if shape.milli >= MILLI:
                    whole = free == MILLI
                    take = whole & (np.cumsum(whole, axis=1) <= shape.num) & ok[:, None]
                    new[take] -= MILLI
                else:  # several shares: the general rule, node by node
                    for j in np.flatnonzero(ok).tolist():
                        n = int(nodes.ncards[j])
                        got, _ = sub(NodeRes(free[j, :n].tolist(), 1 << 62, 0, "", []), shape)
                        new[j, :n] = got.free
            after = table.frag(new, np.where(ok, cpu_left - shape.cpu, cpu_left), codes)
            res: np.ndarray = _sigmoid_scores(before - after)
            return res

        return compute


def _sigmoid_scores(diff: np.ndarray) -> np.ndarray:
    out: np.ndarray = (1.0 / (1.0 + np.exp(-diff / 1000)) * MAX_NODE_SCORE).astype(np.int64)
    return out


__all__ = [
    "BestFitScore",
    "DotProductScore",
    "FGDScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "RandomScore",
    "accessible",
    "best_fit",
    "dot_product",
    "fgd",
    "gpu_clustering",
    "gpu_packing",
    "normalize_min_max",
]
