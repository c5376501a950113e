"""The fragmentation measure of the FGD paper, over the target workload's task types.

Ported as behaviour from the artifact's ``pkg/utils/frag.go`` (commit 8f3d641): ``GetTypicalPods``,
``GetNodePodFrag``, ``NodeGpuShareFragAmount`` and ``FragAmountSumExceptQ3``.

For a node and one task type, the node's idle GPU milli falls into one quadrant:

- the task needs no GPU: ``xl_satisfied`` (enough cpu) or ``xr_lack_cpu`` — all idle GPU is a
  fragment to it;
- the node's card model is not one the task accepts: ``no_access``;
- the task fits the cards (``CanNodeHostPodOnGpuMemory``) and the cpu: ``q3_satisfied``, except
  the cards with less free than the task's per-card share, which are ``q2_lack_gpu``;
- it fits the cards but not the cpu: ``q4_lack_cpu``; the cpu but not the cards: ``q2_lack_gpu``;
  neither: ``q1_lack_both``.

The node's fragmentation is the frequency-weighted sum over the typical task types of every
quadrant but q3; FGD scores a placement by how much it lowers that sum.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched_gpushare._model import MILLI, Shape, accessible

QUADRANTS = ("q1_lack_both", "q2_lack_gpu", "q3_satisfied", "q4_lack_cpu", "xl_satisfied",
             "xr_lack_cpu", "no_access")
Q1, Q2, Q3, Q4, XL, XR, NA = range(7)
POPULARITY_THRESHOLD = 95
"""The share of all tasks the typical types cover (the artifact's runs: ``podPopularityThreshold: 95``)."""


@dataclass(frozen=True, slots=True)
class TypicalPod:
    shape: Shape
    freq: float
    """0-1; the typical types' frequencies sum to 1."""


def typical_pods(shapes: Iterable[Shape], *, involve_cpu_pods: bool = True,
                 popularity: int = POPULARITY_THRESHOLD, step: int = 1,
                 gpu_res_weight: float = 0.0) -> list[TypicalPod]:
    """``GetTypicalPods``: the most frequent task types covering ``popularity`` % of the tasks,
    their frequencies renormalised to sum to 1.  Ties in count are ordered by
    ``PodResource.Less``, descending (``sort.Reverse``)."""
    counts: dict[Shape, float] = {}
    total = 0.0
    for s in shapes:
        if not involve_cpu_pods and s.num == 0:
            continue
        w = 1.0
        if gpu_res_weight > 0 and s.milli == MILLI:
            w = 1 + s.num * gpu_res_weight
        counts[s] = counts.get(s, 0.0) + w
        total += w
    if total == 0:
        return []
    ordered = sorted(counts.items(), key=lambda kv: (kv[1], kv[0].sort_key()), reverse=True)
    expected = (popularity if popularity > 0 else 60) * total / 100.0
    step = step if step > 0 else 10
    i = n = 0
    cum = 0.0
    while cum < expected:
        n += step
        while i < n and i < len(ordered):
            cum += ordered[i][1]
            i += 1
        if i >= len(ordered):
            break
    if i >= len(ordered):
        return [TypicalPod(s, c / total) for s, c in ordered]
    return [TypicalPod(s, c / cum) for s, c in ordered[:i]]


def node_pod_quadrant(free: Sequence[int], cpu_left: int, model: str, shape: Shape) -> int:
    """``GetNodePodFrag``."""
    if shape.milli == 0:
        return XL if cpu_left >= shape.cpu else XR
    if not accessible(model, shape.models):
        return NA
    fits = sum(1 for f in free if f >= shape.milli) >= shape.num
    if fits:
        return Q3 if cpu_left >= shape.cpu else Q4
    return Q2 if cpu_left >= shape.cpu else Q1


def gpu_frag_milli(free: Sequence[int], shape: Shape) -> int:
    """``GetGpuFragMilliByNodeResAndPodRes``: the free milli on cards too small for one share."""
    return sum(f for f in free if f < shape.milli)


def node_frag_amount(free: Sequence[int], cpu_left: int, model: str,
                     typical: Sequence[TypicalPod]) -> list[float]:
    """``NodeGpuShareFragAmount``: the node's idle GPU milli per quadrant (7 entries)."""
    out = [0.0] * 7
    idle = sum(free)
    for t in typical:
        q = node_pod_quadrant(free, cpu_left, model, t.shape)
        if q == Q3:
            frag = gpu_frag_milli(free, t.shape)
            out[Q2] += t.freq * frag
            out[Q3] += t.freq * (idle - frag)
        else:
            out[q] += t.freq * idle
    return out


def node_frag(free: Sequence[int], cpu_left: int, model: str, typical: Sequence[TypicalPod]) -> float:
    """``NodeGpuShareFragAmountScore``: every quadrant but q3 (``FragAmountSumExceptQ3``)."""
    a = node_frag_amount(free, cpu_left, model, typical)
    return a[Q1] + a[Q2] + a[Q4] + a[XL] + a[XR] + a[NA]


class FragTable:
    """:func:`node_frag` over many node states at once (numpy), for one set of typical types.

    ``frag(free, cpu_left, model_codes)``: ``free`` (M, 8) milli free per card (0 past a node's
    cards), ``cpu_left`` (M,), ``model_codes`` (M,) indices into :attr:`models` (grown by
    :meth:`code`)."""

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = list(typical)
        self.models: list[str] = []
        self._codes: dict[str, int] = {}
        self._access: list[list[bool]] = [[] for _ in self.typical]
        self._groups: dict[int, list[int]] | None = None

    def code(self, model: str) -> int:
        c = self._codes.get(model)
        if c is None:
            c = self._codes[model] = len(self.models)
            self.models.append(model)
            for row, t in zip(self._access, self.typical, strict=True):
                row.append(accessible(model, t.shape.models))
        return c

    def frag(self, free: np.ndarray, cpu_left: np.ndarray, model_codes: np.ndarray) -> np.ndarray:
        idle = free.sum(axis=1).astype(np.float64)
        cpu_weight = sum(t.freq for t in self.typical if t.shape.milli == 0)
        out: np.ndarray = cpu_weight * idle  # xl / xr: all idle GPU, whatever the cpu
        for milli, members in self._by_milli().items():
            fit = free >= milli
            nfit = fit.sum(axis=1)
            part = np.where(fit, 0, free).sum(axis=1)
            lost = idle - part  # what q3 leaves out of the fragment
            for k in members:
                t = self.typical[k]
                ok = (cpu_left >= t.shape.cpu) & (nfit >= t.shape.num)
                access = self._access[k]
                if not all(access):
                    ok &= np.asarray(access, dtype=bool)[model_codes]
                out += t.freq * (idle - np.where(ok, lost, 0))
        return out

    def _by_milli(self) -> dict[int, list[int]]:
        groups = self._groups
        if groups is None:
            groups = self._groups = {}
            for k, t in enumerate(self.typical):
                if t.shape.milli:
                    groups.setdefault(t.shape.milli, []).append(k)
        return groups
