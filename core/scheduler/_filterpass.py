"""The sampled Filter pass: the loop of upstream's ``findNodesThatPassFilters``.

Upstream evaluates the nodes one by one from the round-robin start until
``numFeasibleNodesToFind`` have passed.  Here the same nodes are filtered a segment at a time
(one batch Filter call per segment), and the result is exactly the sequential one::

    order = candidates rotated left by ``start``     (taken a segment at a time, no copy)
    segment 1 ──► Filter ──► passing positions, rejections
    segment 2 (twice as long) ──► ...               until enough have passed
    nodes past the to_find-th feasible one: filtered but left out (upstream never reached
    them), their rejections too; an Error counts only where upstream would have got to

The first segment is sized by the share of nodes the last attempts found feasible (all of the
needed ones at once when every node passes, the usual case).  :class:`CycleError` ends a
scheduling cycle with a status (an Error from a plugin, no nodes...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from kubesched.runtime._nodeinfo import rows_span
from kubesched.runtime._status import (
    Code,
    Diagnosis,
    FitError,
    Rejections,
    Status,
    merge_rejections,
)

if TYPE_CHECKING:
    from kubesched.cache._cache import Snapshot
    from kubesched.runtime._cyclestate import CycleState
    from kubesched.runtime._framework import Framework
    from kubesched.runtime._infos import PodInfo


class CycleError(Exception):
    """The scheduling cycle ends with ``status`` (not a FitError: no PostFilter)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def fit_status(fe: FitError) -> Status:
    """The Unschedulable status of a cycle that found no node: the FitError's message, the
    FitError kept on it (its diagnosis makes the pod's event and PostFilter's input)."""
    st = Status(Code.UNSCHEDULABLE, str(fe))
    st.error = fe
    return st


def rotated(candidates: np.ndarray, start: int, lo: int, hi: int) -> np.ndarray:
    """``order[lo:hi]`` of ``order = candidates`` rotated left by ``start`` (a view when it
    does not wrap around)."""
    n = len(candidates)
    a, b = start + lo, start + hi
    if b <= n:
        return candidates[a:b]
    if a >= n:
        return candidates[a - n : b - n]
    return np.concatenate((candidates[a:], candidates[: b - n]))


def filter_segment(
    fw: Framework, state: CycleState, pi: PodInfo, seg: np.ndarray
) -> tuple[np.ndarray | None, Rejections | None]:
    """Filter one segment of snapshot rows: (passing positions, the rejected ones), None for
    all and none; the two-pass Filter for the nodes with nominated pods, a plain one for the
    rest."""
    # Framework.run_filter_plugins_with_nominated_pods_rows, without its forwarding call
    return _split(fw.nominated_filter.run_rows(state, pi.pod, seg, pi.priority), seg)


def _split(out: Mapping[int, Status], seg: np.ndarray) -> tuple[np.ndarray | None, Rejections | None]:
    """:func:`filter_segment`'s answer from the Filter's failures ``out`` over ``seg``."""
    if not out:
        return None, None
    rej = Rejections.of(out)
    keep = np.ones(len(seg), dtype=bool)
    keep[rej.positions] = False
    return keep.nonzero()[0], rej


def sampled_filter(
    fw: Framework,
    state: CycleState,
    pi: PodInfo,
    diagnosis: Diagnosis,
    snap: Snapshot,
    candidates: np.ndarray,
    start: int,
    to_find: int,
    rate: float,
) -> tuple[np.ndarray, int, float | None]:
    """Filter ``candidates`` (snapshot rows) from ``start`` until ``to_find`` pass: (the
    feasible rows in order, how many nodes the sequential evaluation processed, the share of
    the filtered nodes that passed or None when none was filtered).  The rejections go into
    ``diagnosis`` (and the recording); ``rate`` is the last share, sizing the first segment."""
    n = len(candidates)
    if not fw.filters.filter:  # Framework.has_filter_plugins(), without its call
        chosen = rotated(candidates, start, 0, min(to_find, n))
        return chosen, len(chosen), None
    seg: np.ndarray
    out: Mapping[int, Status]
    chunk: int
    if n and to_find > 0:  # (else the loop below does not start)
        # the first segment, sized by ``rate`` (rotated(candidates, start, 0, ...) and
        # filter_segment inlined: the usual pass ends with it)
        chunk = max(to_find, 1) if rate >= 1 else max(to_find, int(to_find / max(rate, 1 / 64) * 1.1) + 1)
        end = start + chunk
        seg = candidates[start:end] if end <= n else rotated(candidates, start, 0, min(chunk, n))
        out = fw.nominated_filter.run_rows(state, pi.pod, seg, pi.priority)
        if not out and len(seg) >= to_find and state.recording is None:
            # the usual pass: the first segment passed whole and holds the to_find feasible
            # nodes; the sequential evaluation stopped at its to_find-th node (what the
            # bookkeeping below finds, in one step)
            return (seg if len(seg) == to_find else seg[:to_find]), to_find, 1.0
    # (position of the segment in the order, its rows, the passing positions in it or None
    # when all passed), for the segments where some passed
    passing: list[tuple[int, np.ndarray, np.ndarray | None]] = []
    found = 0
    # the rejected positions in the order and their statuses, as arrays (Rejections); plugins
    # share one Status among the nodes rejected for one reason, so the checks below look at
    # each distinct status once
    failed_parts: list[tuple[np.ndarray | None, Mapping[int, Status]]] = []
    pos = 0
    while pos < n and found < to_find:
        if pos:  # the first segment was filtered above (``out``); each next one is twice as long
            chunk = max(to_find - found, chunk * 2, 1)
            seg = rotated(candidates, start, pos, min(pos + chunk, n))
            out = fw.nominated_filter.run_rows(state, pi.pod, seg, pi.priority)
        ok, rejected = _split(out, seg)
        if rejected is not None:
            assert ok is not None
            if any(st.code == Code.ERROR for st in rejected.statuses):
                errs = [(int(p), st) for p, st in zip(rejected.positions.tolist(), rejected.status_list(), strict=True) if st.code == Code.ERROR]
                at, err = min(errs, key=lambda e: e[0])
                # an error counts only where the sequential evaluation would have got to
                if found + int(np.count_nonzero(ok < at)) < to_find:
                    raise CycleError(err)
            failed_parts.append((np.arange(pos, pos + len(seg)), rejected))
        passed = len(seg) if ok is None else len(ok)
        if passed:
            passing.append((pos, seg, ok))
            found += passed
        pos += len(seg)
    processed = n
    if found >= to_find:  # the last segment holds the to_find-th feasible node
        at, seg, ok = passing[-1]
        k = to_find - (found - (len(seg) if ok is None else len(ok))) - 1
        processed = at + (k if ok is None else int(ok[k])) + 1
        passing[-1] = (at, seg[: k + 1], None) if ok is None else (at, seg, ok[: k + 1])
    failed_names: list[str] = []
    failed_sts: list[Status] = []
    if failed_parts:
        failed = merge_rejections(failed_parts)
        all_pos, which = failed.positions, failed.which
        if processed < n:
            evaluated = all_pos < processed
            all_pos, which = all_pos[evaluated], which[evaluated]
        failed = Rejections(all_pos, which, failed.statuses)
        failed_rows = candidates[(all_pos + start) % n]
        diagnosis.add_filtered(snap.names, failed_rows, failed)
        if state.recording is not None:
            names = snap.names
            failed_names = [names[i] for i in failed_rows.tolist()]
            failed_sts = failed.status_list()
        for st in {id(st): st for st in failed.statuses}.values():
            if st.plugin and st.is_rejected():
                diagnosis.unschedulable_plugins.add(st.plugin)
            if st.code == Code.PENDING and st.plugin:
                diagnosis.pending_plugins.add(st.plugin)
    if len(passing) == 1:  # one segment held them all (the usual pass)
        _, seg, ok = passing[0]
        chosen = seg if ok is None else seg[ok]
    elif passing:
        chosen = np.concatenate([seg if ok is None else seg[ok] for _, seg, ok in passing])
    else:
        chosen = np.array([], dtype=np.int64)
    if state.recording is not None:
        names = snap.names
        span = rows_span(snap, chosen)  # consecutive rows (every node of the segment passed): a slice
        passed_names = names[span[0] : span[1]] if span is not None else [names[i] for i in chosen.tolist()]
        state.recording.filtered(fw.filter_plugin_names(state), passed_names, failed_names, failed_sts)
    return chosen, processed, (found / pos if pos else None)


__all__ = ["CycleError", "filter_segment", "fit_status", "rotated", "sampled_filter"]
