"""The PreScore and Score runners of a :class:`~kubesched.runtime._framework.Framework` (upstream
``RunPreScorePlugins``, ``RunScorePlugins`` with NormalizeScore and the weights): an object
holding the profile's PreScore and Score plugins, which the Framework holds.  Score is a batch
call over a :class:`NodeBatch` returning one integer per node, checked once per call.

An in-tree Score plugin may also have ``uniform_score(state, pod, nodes) -> int | None``: the
score every node of the batch gets after NormalizeScore, when the plugin can tell that without
scoring them (a pod tolerating every PreferNoSchedule taint of the batch, a pod without claims...),
else None.  In a cycle that records nothing per plugin (no ``--explain``, no plugin metrics) the
runner asks it first and, on an answer, adds that score to every node's total instead of calling
Score and NormalizeScore: the same totals, a few array operations fewer.  It is no hook: a
third-party plugin's method of that name is never called.

Likewise ``score_view(state, pod, nodes)``: the plugin's Score, which may answer with a read-only
view of scores it keeps per snapshot row (a slice, no copy).  The runner asks it instead of Score
when it wants the total only and records nothing per plugin; it reads the view at once and never
writes to it nor keeps it (the total is the runner's own array).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched import hookspecs
from kubesched._logs import PluginFailure
from kubesched.api._objects import Pod
from kubesched.runtime._cyclestate import CycleState
from kubesched.runtime._nodeinfo import NodeBatch
from kubesched.runtime._plugins import (
    _SCORE_RESULT,
    PluginCalls,
    PluginEntry,
    _as_status,
    _raised,
    _wrong,
)
from kubesched.runtime._status import SKIP, Code, Status
from kubesched.scheduler._results import verdict as _verdict

# (position, name, Score hook, NormalizeScore hook, weight, range-checked, uniform_score, score_view)
_ScoreEntry = tuple[int, str, Any, Any, int, bool, Any, Any]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
_INT64 = np.dtype(np.int64)  # the dtype of an int64 array is this one object (cheaper than ==)
# 0-d int64 arrays of the uniform scores' sums: adding one to an int64 array gives what adding the
# Python int gives (an int64 array), at about half the cost (no scalar conversion)
_OFFSETS: dict[int, np.ndarray] = {}


def _offset_array(offset: int) -> np.ndarray:
    arr = _OFFSETS.get(offset)
    if arr is None:
        if len(_OFFSETS) >= 64:
            _OFFSETS.clear()
        arr = _OFFSETS[offset] = np.array(offset, dtype=np.int64)
        arr.flags.writeable = False
    return arr


def _score_array(raw: Any) -> np.ndarray | str:
    """A Score hook's result as a fresh int64 array, or why it is not one scores per node."""
    if type(raw) is np.ndarray and raw.dtype is _INT64 and raw.ndim == 1:  # the usual result
        return raw.copy()
    if isinstance(raw, np.ndarray):
        arr = raw
    elif isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
        try:
            arr = np.asarray(raw)
        except (TypeError, ValueError):
            return _wrong(raw, _SCORE_RESULT)
    else:
        return _wrong(raw, _SCORE_RESULT)
    if arr.ndim != 1:
        return f"returned {type(raw).__name__} of shape {arr.shape}, expected {_SCORE_RESULT}"
    if arr.dtype.kind not in "iu" and arr.size:
        return f"returned {type(raw).__name__} of {arr.dtype}, expected {_SCORE_RESULT}"
    return np.array(arr, dtype=np.int64, copy=True)


def _invalid_score(scores: np.ndarray) -> int | None:
    """A score of the int64 ``scores`` out of [MIN_NODE_SCORE, MAX_NODE_SCORE] (the greatest
    above, else the least below), or None.  One argmax over them as unsigned, where a negative
    score is above every valid one: cheaper than max() and min()."""
    if not len(scores):
        return None
    unsigned = scores.view(np.uint64)
    if unsigned[unsigned.argmax()] <= MAX_NODE_SCORE:
        return None
    return int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())


def _total(total: np.ndarray | None, owned: bool, offset: int, n: int) -> np.ndarray:
    """The total of :meth:`ScoreRunners.run_score_plugins` as its own array: the sum of the
    plugins' weighted score arrays (``owned``: made by the runner, else a plugin's array or one
    in the per-plugin map, not to be changed) plus ``offset``, the uniform scores' sum."""
    if total is None:
        return np.full(n, offset, dtype=np.int64) if offset else np.zeros(n, dtype=np.int64)
    if offset:
        if owned:
            total += _offset_array(offset)
            return total
        out: np.ndarray = total + _offset_array(offset)
        return out
    return total if owned else total.copy()


class ScoreRunners:
    """A profile's PreScore and Score plugins (each Score plugin's weight and NormalizeScore),
    in profile order, and the runners that call them (the Framework holds one)."""

    def __init__(self, points: Mapping[str, list[PluginEntry]], calls: PluginCalls) -> None:
        self.calls = calls
        self.pre_score: list[PluginEntry] = points.get("preScore", [])
        # what a PreScore call needs of each plugin, looked up once: (position, entry, name, hook)
        self._pre_score_table = [(i, e, e.name, e.plugin.kubesched_pre_score) for i, e in enumerate(self.pre_score)]
        self.score: list[PluginEntry] = points.get("score", [])
        self.normalize: dict[str, Any] = {
            e.name: e.plugin.kubesched_normalize_score
            for e in self.score
            if hookspecs.implements(e.plugin, "kubesched_normalize_score")
        }
        # the in-tree plugins' scores are in range by construction (their tests check it), so
        # the range check, which upstream applies to every plugin, runs for the others only
        self._checked = {
            e.name for e in self.score if not type(e.plugin).__module__.startswith("kubesched.plugins.")
        }
        # plugin_evaluation_total (instrumented_plugins.go): every PreScore call that is not a
        # Skip, every Score call (one per node), by position (Score's: see score_evaluations)
        self.pre_score_evaluations = [0] * len(self.pre_score)
        self._score_evaluations = [0] * len(self.score)
        # what a Score call needs of each plugin, looked up once: (position, name, Score hook,
        # NormalizeScore hook or None, weight, whether its scores are range-checked, the
        # plugin's uniform_score or None, its score_view or None)
        self._score_table: list[_ScoreEntry] = [
            (
                i, e.name, e.plugin.kubesched_score, self.normalize.get(e.name), e.weight, e.name in self._checked,
                None if e.name in self._checked else getattr(e.plugin, "uniform_score", None),
                None if e.name in self._checked else getattr(e.plugin, "score_view", None),
            )
            for i, e in enumerate(self.score)
        ]
        # the Score plugins a cycle runs, by its set of skipped plugins: their entries in
        # profile order (the pods of one shape skip the same ones: one look-up instead of a test
        # per plugin), and the nodes they were called for since last folded into the counts
        # (each running plugin counts every node of every call: one addition per cycle)
        self._running: dict[frozenset[str], tuple[list[_ScoreEntry], list[int]]] = {}

    @property
    def score_evaluations(self) -> list[int]:
        """plugin_evaluation_total of each Score plugin, by position (the running lists'
        tallies folded in first; the list may be written to)."""
        self._fold_tallies()
        return self._score_evaluations

    def _fold_tallies(self) -> None:
        counts = self._score_evaluations
        for running, tally in self._running.values():
            if tally[0]:
                for entry in running:
                    counts[entry[0]] += tally[0]
                tally[0] = 0

    def _running_for(self, skip: set[str]) -> tuple[list[_ScoreEntry], list[int]]:
        """The Score plugins not in ``skip`` (see ``_running``)."""
        skipped = frozenset(skip)
        got = self._running.get(skipped)
        if got is None:
            if len(self._running) >= 64:
                self._fold_tallies()
                self._running.clear()
            got = self._running[skipped] = ([t for t in self._score_table if t[1] not in skipped], [0])
        return got

    # --- Score ----------------------------------------------------------------------------
    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        rec = state.recording
        timed = self.calls.timed if state.record_plugin_metrics else None
        evaluations = self.pre_score_evaluations
        skip = state.skip_score_plugins
        for i, e, name, hook in self._pre_score_table:
            if timed is not None:
                out = timed(e, "prescore", hook, state, pod, nodes)
            else:  # PluginCalls.call, inlined: a raise is this plugin's Error, its name on the status
                try:
                    out = hook(state, pod, nodes)
                except Exception as err:
                    out = _raised(name, "prescore", err)
                else:
                    if out is None and rec is None:  # the other usual answer: Success
                        evaluations[i] += 1
                        continue
                    if out is SKIP and rec is None:  # the usual answer
                        skip.add(name)
                        continue
                    if isinstance(out, Status):
                        out.plugin = name
            st = out if out is None or type(out) is Status else _as_status(out, name)
            if rec is not None:
                rec.prescore[name] = _verdict(st)
            if st is None or st.code == Code.SUCCESS:
                evaluations[i] += 1
                continue
            if st.code == Code.SKIP:
                skip.add(name)
                continue
            evaluations[i] += 1
            return Status(Code.ERROR, f'running PreScore plugin "{name}": {st.message}', plugin=name)
        return None

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: NodeBatch, *, each: bool = True
    ) -> tuple[np.ndarray, dict[str, np.ndarray], Status | None]:
        """``RunScorePlugins``: (total per node, weighted score per plugin, error).  With
        ``each`` False the per-plugin map is left empty (the scheduling cycle wants the total
        only, and a uniform score then costs no array)."""
        total, owned, offset, per_plugin, st = self.score_parts(state, pod, nodes, each=each)
        return _total(total, owned, offset, len(nodes)), per_plugin, st

    def score_parts(
        self, state: CycleState, pod: Pod, nodes: NodeBatch, *, each: bool = True
    ) -> tuple[np.ndarray | None, bool, int, dict[str, np.ndarray], Status | None]:
        """:meth:`run_score_plugins` before its total is made: (the weighted scores summed, or
        None when every plugin gave a uniform score or was skipped; whether that array is the
        runner's own, else a plugin's or a read-only view of kept scores; the uniform scores'
        sum, which every node's total has on top; the per-plugin map; error).  The total is
        ``_total`` of the first three.  The scheduling cycle picks its host from the sum alone:
        a constant added to every node changes no comparison among them."""
        n = len(nodes)
        total: np.ndarray | None = None  # the weighted scores summed (``owned``: the runner's own array)
        owned = False
        offset = 0  # the sum of the weighted uniform scores, added to every node at the end
        per_plugin: dict[str, np.ndarray] = {}
        rec = state.recording
        each = each or rec is not None  # a recording shows each plugin's scores
        raws: dict[str, np.ndarray] = {}
        timed = state.record_plugin_metrics
        # a cycle that records nothing per plugin may take a plugin's uniform score: the same
        # final score, after NormalizeScore, for every node of the batch
        may_be_uniform = rec is None and not timed
        # ... and, wanting the total only, a view of a plugin's kept scores (see the module)
        may_view = may_be_uniform and not each
        skip = state.skip_score_plugins
        got = self._running.get(frozenset(skip))
        running, tally = got if got is not None else self._running_for(skip)
        tally[0] += n  # each running plugin is called for the n nodes (taken back past an error)
        err: Status | None = None
        for _, name, score, norm, weight, checked, uniform, view in running:
            try:
                if may_be_uniform and uniform is not None:
                    same = uniform(state, pod, nodes)  # a raise: this plugin's Score error
                    if same is not None:
                        offset += same * weight
                        if each:
                            per_plugin[name] = np.full(n, same * weight, dtype=np.int64)
                        continue
                if timed:
                    raw = self.calls.timed_batch(name, "Score", score, state, pod, nodes)
                elif may_view and view is not None:
                    raw = view(state, pod, nodes)  # read below, never written (norm: copied first)
                else:
                    raw = score(state, pod, nodes)
                scores: np.ndarray | str
                if type(raw) is np.ndarray and raw.dtype is _INT64 and raw.ndim == 1 and norm is None and rec is None:
                    scores = raw  # never changed here: no copy needed
                else:
                    scores = _score_array(raw)  # a fresh int64 copy, for NormalizeScore to rewrite
                if isinstance(scores, str):  # the wrong type: as if the plugin had raised
                    err = Status(Code.ERROR, f'running Score plugins: running "{name}" score plugin: {scores}', plugin=name)
                    break
                if rec is not None:
                    raws[name] = scores.copy()
                if norm is not None:
                    if timed:
                        out = self.calls.timed_batch(name, "ScoreExtensionNormalize", norm, state, pod, scores)
                    else:
                        out = norm(state, pod, scores)
                    st = _as_status(out, name)
                    if st is not None and not st.is_success():
                        err = Status(Code.ERROR, f'running Normalize on Score plugin "{name}": {st.message}', plugin=name)
                        break
            except Exception as e:
                err = Status(Code.ERROR, f'running Score plugins: running "{name}" score plugin: {e}', plugin=name, error=PluginFailure(name, "Score", e))
                break
            if len(scores) != n:
                err = Status(Code.ERROR, f'plugin "{name}" returned {len(scores)} scores for {n} nodes', plugin=name)
                break
            bad = _invalid_score(scores) if checked else None
            if bad is not None:
                err = Status(Code.ERROR, f'plugin "{name}" returns an invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing', plugin=name)
                break
            weighted = scores * weight if weight != 1 else scores  # kept unchanged below
            if each:
                per_plugin[name] = weighted
            if total is None:
                total = weighted
                owned = weight != 1 and not each  # a product nobody else holds
            elif owned:
                total += weighted
            else:
                total = total + weighted  # a new array: the first plugin's stays as it is
                owned = True
        if err is not None:
            counts = self._score_evaluations  # the plugins after the failing one were not called
            after = False
            for entry in running:
                if after:
                    counts[entry[0]] -= n
                after = after or entry[1] == name
            return total, owned, offset, per_plugin, err
        if rec is not None:
            rec.scored(nodes.names, raws, per_plugin)
        return total, owned, offset, per_plugin, None
