"""PodTopologySpread's PreScore, Score and NormalizeScore (upstream's scoring.go)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    NodeBatch,
    Status,
)

from .._helper import SKIP

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Pod
from .common import (
    LABEL_HOSTNAME,
    PRE_SCORE_STATE_KEY,
    SCHEDULE_ANYWAY,
    Spread,
    SpreadConstraint,
    _codes_in,
    count_pods_match_selector,
)

# --- PreScore state ----------------------------------------------------------------------------


class PreScoreState:
    """``preScoreState``: soft constraints, ignored nodes, per-domain counts and weights."""

    __slots__ = (
        "constraints",
        "ignored",
        "names",
        "domains",
        "tp_counts",
        "present",
        "weights",
        "host_counts",
        "require_all",
    )

    def __init__(self) -> None:
        self.constraints: list[SpreadConstraint] = []
        self.ignored = np.zeros(0, dtype=bool)  # per node of the PreScore batch
        self.names: list[str] = []
        self.domains: list[tuple[list[str], dict[str, int]]] = []
        self.tp_counts: list[np.ndarray] = []
        self.present: list[np.ndarray] = []
        self.weights: list[float] = []
        # hostname constraints: matching pods per node of the batch
        self.host_counts: list[np.ndarray | None] = []
        self.require_all = True

    def clone(self) -> PreScoreState:
        return self

    @property
    def ignored_nodes(self) -> set[str]:
        return {n for n, ig in zip(self.names, self.ignored.tolist(), strict=True) if ig}

    def topology_value_to_pod_counts(self, i: int) -> dict[str, int]:
        values, _ = self.domains[i]
        return {
            values[c]: int(self.tp_counts[i][c]) for c in np.flatnonzero(self.present[i]).tolist()
        }


def topology_normalizing_weight(size: int) -> float:
    """``topologyNormalizingWeight``: ``log(size + 2)``."""
    return math.log(float(size + 2))


def _go_round(x: np.ndarray) -> np.ndarray:
    """``math.Round`` (half away from zero) for non-negative floats."""
    f = np.floor(x)
    rounded: np.ndarray = np.where(x - f >= 0.5, f + 1, f)
    return rounded



class Scoring:
    """PreScore, Score and NormalizeScore, over the plugin's :class:`Spread`."""

    def __init__(self, spread: Spread) -> None:
        self.spread = spread

    # --- Score --------------------------------------------------------------------------------
    def init_pre_score_state(self, pod: Pod, filtered: NodeBatch) -> PreScoreState | None:
        """``PreScore``'s state; None when there is nothing to score (Skip).  Raises ValueError."""
        spread = self.spread
        snap = spread.handle.snapshot  # empty (a handle without a cluster): the filtered nodes
        if not len(snap) and not len(filtered):
            return None  # no node at all
        try:
            if pod.spec.topology_spread_constraints:
                constraints = spread.filter_constraints(pod.spec.topology_spread_constraints, pod, SCHEDULE_ANYWAY)
            else:
                constraints = spread.build_default_constraints(pod, SCHEDULE_ANYWAY)
        except ValueError as e:
            raise ValueError(
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}"
            ) from e
        if not constraints:
            return None
        alln = spread.all_nodes(snap.node_infos if len(snap) else list(filtered.infos))
        s = PreScoreState()
        s.require_all = bool(pod.spec.topology_spread_constraints) or not spread.system_defaulted
        s.constraints = constraints
        n = len(filtered)
        s.names = filtered.names
        bcodes: list[np.ndarray] = []
        ignored = np.zeros(n, dtype=bool)
        for c in s.constraints:
            codes, values, index = alln.codes(c.topology_key)
            bc, _ = _codes_in(filtered, c.topology_key, values, index)
            bcodes.append(bc)
            if s.require_all:
                ignored |= bc == -1
        s.ignored = ignored
        # all nodes: the eligible ones count, for domains of the filtered nodes
        keys_ok = np.ones(alln.n, dtype=bool)
        if s.require_all:
            for c in s.constraints:
                keys_ok &= alln.codes(c.topology_key)[0] >= 0
        inclusion = alln.inclusion(pod, s.constraints)
        positions = alln.positions(filtered)
        ns = pod.metadata.namespace
        for i, c in enumerate(s.constraints):
            codes, values, index = alln.codes(c.topology_key)
            s.domains.append((values, index))
            nd = len(values)
            if c.topology_key == LABEL_HOSTNAME:
                s.tp_counts.append(np.zeros(nd, dtype=np.int64))
                s.present.append(np.zeros(nd, dtype=bool))
                s.weights.append(topology_normalizing_weight(n - int(np.count_nonzero(ignored))))
                if positions is not None:
                    s.host_counts.append(alln.pod_counts(ns, c.selector)[positions])
                else:
                    s.host_counts.append(
                        np.fromiter(
                            (
                                count_pods_match_selector(ni.pods, c.selector, ns)
                                for ni in filtered.infos
                            ),
                            np.int64,
                            n,
                        )
                    )
                continue
            bc = bcodes[i][~ignored]
            present = (
                np.bincount(bc[bc >= 0], minlength=nd) > 0 if len(bc) else np.zeros(nd, dtype=bool)
            )
            s.present.append(present)
            s.weights.append(topology_normalizing_weight(int(np.count_nonzero(present))))
            s.host_counts.append(None)
            elig = keys_ok & inclusion[i] & (codes >= 0)
            elig_codes = codes[elig]
            if len(elig_codes):
                counts = alln.pod_counts(ns, c.selector)[elig]
                tp = np.bincount(elig_codes, weights=counts, minlength=nd).astype(np.int64)
                tp[~present] = 0
            else:
                tp = np.zeros(nd, dtype=np.int64)
            s.tp_counts.append(tp)
        return s

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        """``PreScore``: the state of the pod's soft constraints; Skip when there is none."""
        try:
            s = self.init_pre_score_state(pod, nodes)
        except ValueError as e:
            return Status.as_error(e)
        if s is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        """``Score`` over a batch (raw scores; ignored nodes 0)."""
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            raise ValueError(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        n = len(nodes)
        same_batch = n == len(s.ignored) and nodes.names == s.names
        score = np.zeros(n, dtype=np.float64)
        ignored = s.ignored if same_batch else np.zeros(n, dtype=bool)
        for i, c in enumerate(s.constraints):
            values, index = s.domains[i]
            codes, unknown = _codes_in(nodes, c.topology_key, values, index)
            has = codes != -1
            if not same_batch and s.require_all:
                ignored = ignored | ~has
            host = s.host_counts[i]
            if host is not None:
                if same_batch:
                    cnt = host
                else:
                    ns = pod.metadata.namespace
                    cnt = np.fromiter(
                        (count_pods_match_selector(ni.pods, c.selector, ns) for ni in nodes.infos),
                        np.int64,
                        n,
                    )
            else:
                tp = s.tp_counts[i]
                cnt = tp[np.maximum(codes, 0)] if len(tp) else np.zeros(n, dtype=np.int64)
                cnt = np.where(codes >= 0, cnt, 0)
            part = cnt.astype(np.float64) * s.weights[i] + float(c.max_skew - 1)
            score += np.where(has, part, 0.0)
        score[ignored] = 0.0
        if not same_batch:
            s.ignored, s.names = ignored, nodes.names
        return _go_round(score).astype(np.int64)

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        """``NormalizeScore``: in place, ``100 * (max + min - s) / max`` (see the package)."""
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        ignored = s.ignored if len(s.ignored) == len(scores) else np.zeros(len(scores), dtype=bool)
        valid = ~ignored
        if valid.any():
            vals = scores[valid]
            min_score = int(vals.min())
            max_score = max(0, int(vals.max()))
            if max_score == 0:
                scores[valid] = MAX_NODE_SCORE
            else:
                scores[valid] = MAX_NODE_SCORE * (max_score + min_score - vals) // max_score
        scores[ignored] = 0
        return None


