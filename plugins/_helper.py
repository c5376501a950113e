"""Helpers shared by the in-tree plugins only (upstream ``framework/plugins/helper``).

- :func:`default_normalize_score` — ``helper.DefaultNormalizeScore``.
- :func:`build_broken_linear_function` — ``helper.BuildBrokenLinearFunction`` (Go integer division).
- :func:`go_div` (Go's integer division), :func:`go_slice` (Go's ``%v`` of a slice).
- :func:`queueing_hints_enabled` — ``fts.EnableSchedulingQueueHint``.
- :data:`SKIP` — ``Status.skip()``'s shared object; :data:`PRE_FLIGHT_SKIP`, a pre-flight's Skip.

The general-purpose helpers (label selectors, node affinity, taints and tolerations, resource and
qualified names, :func:`~kubesched.framework.go_value`) live in the engine and are public in
:mod:`kubesched.framework`; plugins import them from there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import PreBindPreFlightResult, Status

if TYPE_CHECKING:
    from kubesched.framework import Handle

SKIP = Status.skip()
"""The shared Skip (:meth:`Status.skip` returns this one object): a plugin's usual PreFilter /
PreScore answer, returned without a call."""

PRE_FLIGHT_SKIP = (PreBindPreFlightResult(allow_parallel=True), SKIP)
"""A PreBind plugin's usual ``pre_bind_pre_flight`` answer (Skip; its PreBind may run in parallel,
v1.36), one shared tuple never changed: a plugin that returns it names it as its
``pre_bind_pre_flight_skip``, and the runner takes it by identity."""

# --- scores ------------------------------------------------------------------------------------


def default_normalize_score(max_priority: int, reverse: bool, scores: np.ndarray) -> None:
    """``DefaultNormalizeScore``: scale ``scores`` (int64, in place) to [0, max_priority].

    ``s = max_priority * s // max(scores)``; with ``reverse``, ``s = max_priority - s``.  When
    every score is 0, reverse sets them all to ``max_priority`` and otherwise leaves them.
    """
    if len(scores) == 0:
        return
    max_count = int(scores.max())
    if max_count == 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = go_div(max_priority * scores, max_count)
    if reverse:
        scaled = max_priority - scaled
    scores[:] = scaled


def go_div(a: Any, b: Any) -> Any:
    """Go's integer division (truncates toward zero), for ints or int64 arrays."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q)
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def build_broken_linear_function(
    shape: Sequence[tuple[int, int]],
) -> Callable[[Any], Any]:
    """``BuildBrokenLinearFunction`` over ``(utilization, score)`` points, sorted by utilization.

    ``f(p)`` is ``shape[0].score`` for ``p <= shape[0].utilization``, ``shape[-1].score`` above the
    last point, and linear between points with Go's integer division.  Works on ints and on int64
    arrays.
    """
    xs = [int(u) for u, _ in shape]
    ys = [int(s) for _, s in shape]

    def scalar(p: int) -> int:
        for i, x in enumerate(xs):
            if p <= x:
                if i == 0:
                    return ys[0]
                step: int = go_div((ys[i] - ys[i - 1]) * (p - xs[i - 1]), xs[i] - xs[i - 1])
                return ys[i - 1] + step
        return ys[-1]

    def f(p: Any) -> Any:
        if not isinstance(p, np.ndarray):
            return scalar(int(p))
        out = np.full(p.shape, ys[-1], dtype=np.int64)
        done = np.zeros(p.shape, dtype=bool)
        for i, x in enumerate(xs):
            hit = (~done) & (p <= x)
            if i == 0:
                out[hit] = ys[0]
            else:
                seg = ys[i - 1] + go_div((ys[i] - ys[i - 1]) * (p[hit] - xs[i - 1]), np.int64(xs[i] - xs[i - 1]))
                out[hit] = seg
            done |= hit
        return out

    return f


def go_slice(items: Iterable[Any]) -> str:
    """Go's ``%v`` of a slice: ``[a b c]``."""
    return "[" + " ".join(str(i) for i in items) + "]"


def queueing_hints_enabled(handle: Handle) -> bool:
    """``fts.EnableSchedulingQueueHint``: the ``SchedulerQueueingHints`` gate as the handle
    carries it (on unless the gates turn it off).  Off, upstream plugins register extra node
    update events because a Node/Add may be filtered out by ``preCheckForNode``
    (kubernetes#109437)."""
    return bool(handle.feature_gates.get("SchedulerQueueingHints", True))


__all__ = [
    "build_broken_linear_function",
    "default_normalize_score",
    "go_div",
    "go_slice",
    "queueing_hints_enabled",
]
