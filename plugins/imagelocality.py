"""ImageLocality: prefer nodes that already hold the pod's images (``plugins/imagelocality``).

Score only.  For each of the pod's init containers and containers whose image (normalized:
``:latest`` appended when the name has no tag) a node reports in ``status.images``, the node earns
``int(size * nodes_having_the_image / total_nodes)`` — the spread factor damps images present on
few nodes, against "node heating".  The sum is clamped to ``[23 MiB, 1000 MiB × containers]`` and
scaled to ``100 * (sum - 23 MiB) / (max - 23 MiB)``.  No normalization.

Image sizes and node counts come from the snapshot (``Snapshot.image_states``: built once per
node set, as upstream's cache keeps ``imageStates``); presence per node is an array lookup, so a
5000-node batch costs one ``np.isin`` per container.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import MAX_NODE_SCORE, Handle, hookimpl

from ._helper import go_div

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeBatch, Pod

NAME = "ImageLocality"

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: append ``:latest`` when the reference has no tag (nor digest)."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def calculate_priority(sum_scores: Any, num_containers: int) -> Any:
    """``calculatePriority`` for an int or an int64 array of summed image scores."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if num_containers == 0:  # the clamp makes every sum the minimum: score 0
        return np.zeros_like(sum_scores) if isinstance(sum_scores, np.ndarray) else 0
    clipped = np.clip(sum_scores, MIN_THRESHOLD, max_threshold)
    return go_div(MAX_NODE_SCORE * (clipped - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """``scaledImageScore``: the image size scaled by the share of nodes that have it."""
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def _image_states_of(infos: Any) -> dict[str, tuple[int, list[int]]]:
    """``Snapshot.image_states`` for a plain list of NodeInfos."""
    images: dict[str, tuple[int, list[int]]] = {}
    for i, ni in enumerate(infos):
        if ni.node is None:
            continue
        for img in ni.node.status.images:
            for name in img.names:
                st = images.get(name)
                if st is None:
                    images[name] = (img.size_bytes, [i])
                elif st[1][-1] != i:
                    st[1].append(i)
    return images


class ImageLocality:
    """Score."""

    name = NAME

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle: Handle = handle

    def _image_scores(self, pod: Pod, nodes: NodeBatch) -> tuple[list[tuple[int, list[int]]], Any, np.ndarray | None]:
        """The pod's containers' non-zero scaled image scores with the rows of the nodes that
        have each image, the snapshot those rows are of, and the batch's positions in it (None:
        to be found by name)."""
        snap = nodes.snapshot
        positions: np.ndarray | None
        if snap is None:
            snap = self.handle.snapshot
            positions = None  # by name, when needed
        else:
            positions = nodes.indices
        if len(snap):
            states = snap.image_states()
            total = len(snap)
        else:  # no snapshot: the batch is the whole cluster
            states = _image_states_of(nodes.infos)
            total = len(nodes)
            positions = np.arange(total, dtype=np.int64)
        if total == 0 or not states:  # no node reports an image: every score 0
            return [], snap, positions
        scored = []
        for c in (*pod.spec.init_containers, *pod.spec.containers):
            st = states.get(normalized_image_name(c.image))
            if st is None:
                continue
            size, rows = st
            score = scaled_image_score(size, len(rows), total)
            if score:
                scored.append((score, rows))
        return scored, snap, positions

    def uniform_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> int | None:
        """0 when no node of the cluster holds an image of the pod worth a score (every sum 0,
        which the clamp scores 0), else None (see :mod:`kubesched.runtime._score_runners`)."""
        snap = nodes.snapshot
        if snap is not None and not snap.image_states():
            return 0  # no node reports an image (the usual cluster): nothing to look up
        return None if self._image_scores(pod, nodes)[0] else 0

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        n = len(nodes)
        sums = np.zeros(n, dtype=np.int64)
        scored, snap, positions = self._image_scores(pod, nodes)
        if not scored:  # every sum 0: clamped to the minimum, which scores 0
            return sums
        for score, rows in scored:
            if positions is None:
                positions = self._positions(snap, nodes)
            sums[np.isin(positions, rows)] += score
        num_containers = len(pod.spec.init_containers) + len(pod.spec.containers)
        return np.asarray(calculate_priority(sums, num_containers), dtype=np.int64)

    @staticmethod
    def _positions(snap: Any, nodes: NodeBatch) -> np.ndarray:
        """Rows of the batch's nodes in ``snap`` by name (-1 when absent)."""
        if snap is None:
            return np.full(len(nodes), -1, dtype=np.int64)
        index = snap.index
        return np.fromiter((index.get(name, -1) for name in nodes.names), np.int64, len(nodes))


def new(args: Any, handle: Handle) -> ImageLocality:
    return ImageLocality(args, handle)


__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "calculate_priority",
    "normalized_image_name",
    "new",
    "scaled_image_score",
]
