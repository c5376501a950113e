"""Open-Gpu-Share: Filter per card, and Reserve picks the card(s) by the configured rule.

Ported as behaviour from the artifact's ``pkg/simulator/plugin/open_gpu_share.go`` and
``pkg/type/open-gpu-share/cache/gpunodeinfo.go`` (``AllocateGpuId``), commit 8f3d641.

Args (pluginConfig), the artifact's ``OpenGpuSharePluginCfg``::

    - name: Open-Gpu-Share
      args:
        gpuSelMethod: best      # best | worst | random | FGDScore | DotProductScore
        dimExtMethod: share     # read by DotProductScore's rule (merge | share | divide | extend)
        normMethod: max         # node | pod | max

Filter passes a pod without GPU; rejects a node without cards, of a model the pod does not
accept, or whose cards cannot hold it (a share: one card with that much free; n cards: n shares
among the cards, a card holding several while it has room, as ``AllocateGpuId``'s greedy pass).
The artifact's reason is ``Node:<name>`` for each; kubesched aggregates reasons by text, so the
three cases read ``node(s) had no GPU card``, ``node(s) didn't have the requested GPU card
model`` and ``node(s) didn't have enough free GPU on its cards``.

Reserve chooses the cards and records them in the profile's card table and on the assumed pod
(annotation ``alibabacloud.com/gpu-index``, the artifact's); PreBind writes that annotation to
the API server (the artifact patches the pod in Reserve, where kubesched's plugins cannot call
the API); Unreserve undoes Reserve.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework import (
    ConfigError,
    CycleState,
    Handle,
    NodeBatch,
    Pod,
    Rejections,
    Status,
    hookimpl,
)
from kubesched_gpushare._model import GPU_INDEX, MILLI, Shape, accessible, format_index, gpu_index
from kubesched_gpushare._state import Cards, CardSelector, cards_for

NAME = "Open-Gpu-Share"
GPU_SEL_METHODS = ("best", "worst", "random")
DIM_EXT_METHODS = ("merge", "share", "divide", "extend")
NORM_METHODS = ("node", "pod", "max")
TIE_BREAKS = ("name", "random")

ERR_NO_GPU = "node(s) had no GPU card"
ERR_MODEL = "node(s) didn't have the requested GPU card model"
ERR_CARDS = "node(s) didn't have enough free GPU on its cards"


def plugin_args(args: Mapping[str, Any] | None, *, gpu_sel: bool) -> dict[str, str]:
    """The artifact's ``GpuPluginCfg`` / ``OpenGpuSharePluginCfg`` fields, checked."""
    args = dict(args or {})
    out = {"dimExtMethod": "share", "normMethod": "max"}
    allowed = {"dimExtMethod": DIM_EXT_METHODS, "normMethod": NORM_METHODS, "tieBreak": TIE_BREAKS}
    if gpu_sel:
        out["gpuSelMethod"] = "best"
    else:
        out["tieBreak"] = "name"
    for key, value in args.items():
        if key not in out:
            raise ConfigError(f'unknown field "{key}"', field=key)
        if not isinstance(value, str):
            raise ConfigError(f"Invalid value: {value!r}: must be a string", field=key)
        if key in allowed and value not in allowed[key]:
            raise ConfigError(
                f'Unsupported value: "{value}": supported values: '
                + ", ".join(f'"{v}"' for v in allowed[key]), field=key)
        out[key] = value
    return out


def exclusive_cards(free: np.ndarray, shape: Shape) -> list[int] | None:
    """``AllocateExclusiveGpuId``: the first fully free cards, by index."""
    whole = np.flatnonzero(free == MILLI)
    need = -(-shape.total_milli // MILLI)
    if len(whole) < need:
        return None
    return [int(c) for c in whole[:need]]


def select_best(cards: Cards, r: int, shape: Shape) -> list[int] | None:
    """``allocateGpuIdBasedOnBestFit``: a share on the fitting card with the least free (the
    first such by index)."""
    free = cards.free[r, : cards.ncards[r]]
    if shape.milli >= MILLI:
        return exclusive_cards(free, shape)
    fit = np.flatnonzero(free >= shape.milli)
    if len(fit) == 0:
        return None
    return [int(fit[np.argmin(free[fit])])]


def select_worst(cards: Cards, r: int, shape: Shape) -> list[int] | None:
    """``allocateGpuIdBasedOnWorstFit``: the fitting card with the most free."""
    free = cards.free[r, : cards.ncards[r]]
    if shape.milli >= MILLI:
        return exclusive_cards(free, shape)
    fit = np.flatnonzero(free >= shape.milli)
    if len(fit) == 0:
        return None
    return [int(fit[np.argmax(free[fit])])]


def select_random(rng: random.Random) -> CardSelector:
    """``allocateGpuIdBasedOnRandomFit``: a fitting card, uniformly (its reservoir sampling)."""

    def select(cards: Cards, r: int, shape: Shape) -> list[int] | None:
        free = cards.free[r, : cards.ncards[r]]
        if shape.milli >= MILLI:
            return exclusive_cards(free, shape)
        fit = np.flatnonzero(free >= shape.milli)
        if len(fit) == 0:
            return None
        return [int(fit[rng.randrange(len(fit))])]

    return select


def fits_cards(free: np.ndarray, shape: Shape) -> np.ndarray:
    """Whether each row of ``free`` (M, 8) holds the task (``AllocateGpuId``'s check)."""
    if shape.num <= 1:
        fit: np.ndarray = np.asarray((free >= shape.milli).any(axis=1))
        return fit
    slots: np.ndarray = np.asarray((free // shape.milli).sum(axis=1) >= shape.num)
    return slots


class OpenGpuShare:
    """Filter + Reserve: the GPU-sharing model of the artifact (``GpuSharePlugin``)."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.args = plugin_args(args, gpu_sel=True)
        self.handle = handle
        self.cards = cards_for(handle)
        self.method = self.args["gpuSelMethod"]
        self.no_gpu = Status.unschedulable(ERR_NO_GPU)
        self.wrong_model = Status.unschedulable(ERR_MODEL)
        self.no_room = Status.unschedulable(ERR_CARDS)

    def _selector(self) -> CardSelector:
        m = self.method
        if m == "best":
            return select_best
        if m == "worst":
            return select_worst
        if m == "random":
            return select_random(self.handle.rng)
        sel = self.cards.selectors.get(m)
        if sel is None:
            raise LookupError(f"undefined allocate gpu id function: gpuSelMethod {m!r} names no "
                              "enabled score plugin with a card-selection rule")
        return sel

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Rejections | None:
        shape = self.cards.shape(pod)
        if shape.milli <= 0:
            return None
        view = self.cards.view(nodes)
        ncards = view.ncards
        which = np.full(len(ncards), -1, dtype=np.int64)
        which[ncards == 0] = 0
        if shape.models:
            bad = np.fromiter((not accessible(m, shape.models) for m in view.models),
                              dtype=bool, count=len(ncards))
            which[(which < 0) & bad] = 1
        named = gpu_index(pod)
        if named is not None:
            free = view.free
            ok = np.ones(len(ncards), dtype=bool)
            for c in named:
                ok &= (c < ncards) & (free[:, min(max(c, 0), free.shape[1] - 1)] >= shape.milli) & (c >= 0)
        else:
            ok = fits_cards(view.free, shape)
        which[(which < 0) & ~ok] = 2
        rejected = np.flatnonzero(which >= 0)
        if len(rejected) == 0:
            return None
        return Rejections(rejected, which[rejected], [self.no_gpu, self.wrong_model, self.no_room])

    @hookimpl
    def kubesched_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        shape = self.cards.shape(pod)
        if shape.milli <= 0:
            return None
        cards = self.cards
        r = cards.row_of(node_name)
        named = gpu_index(pod)
        chosen: list[int] | None
        if named is not None:
            chosen = named
        elif r is None:
            chosen = None
        else:
            if shape.milli < MILLI and shape.num > 1:
                return Status.as_error("the pod requests more than one share gpu, should not happen")
            chosen = self._selector()(cards, r, shape)
        if not chosen:
            key = f"{pod.metadata.namespace}/{pod.metadata.name}"
            return Status.as_error(f"failed to allocate gpu to pod({key}) to node({node_name})")
        cards.take(node_name, pod.metadata.uid, shape, chosen)
        if named is None:
            pod.metadata.annotations = {**(pod.metadata.annotations or {}),
                                        GPU_INDEX: format_index(chosen)}
        return None

    @hookimpl
    async def kubesched_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write the chosen cards onto the pod in the API (the artifact's ``PatchPod`` in Reserve;
        kubesched's Reserve cannot call the API server, its PreBind can, as VolumeBinding's)."""
        ids = (pod.metadata.annotations or {}).get(GPU_INDEX)
        if not ids or self.cards.shape(pod).milli <= 0:
            return None
        try:
            await self.handle.client.patch_pod_annotations(
                pod.metadata.namespace, pod.metadata.name, {GPU_INDEX: ids})
        except NotImplementedError:
            return None  # a transport without annotation patches: the choice stays in memory
        return None

    @hookimpl
    def kubesched_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        got = self.cards.reserved.get(pod.metadata.uid)
        self.cards.release(node_name, pod.metadata.uid)
        ann = pod.metadata.annotations
        if got is not None and ann and GPU_INDEX in ann:
            pod.metadata.annotations = {k: v for k, v in ann.items() if k != GPU_INDEX}
