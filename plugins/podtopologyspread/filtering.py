"""PodTopologySpread's PreFilter (with AddPod/RemovePod) and Filter (upstream's filtering.go)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework import (
    Code,
    NodeBatch,
    RequiredNodeAffinity,
    Status,
)

from .._helper import SKIP

if TYPE_CHECKING:
    from kubesched.framework import CycleState, NodeInfo, Pod
from .common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    CriticalPaths,
    Spread,
    SpreadConstraint,
    _codes_in,
    match_node_inclusion_policies,
    node_labels_match_spread_constraints,
)

# --- PreFilter state ---------------------------------------------------------------------------


class PreFilterState:
    """``preFilterState``: per hard constraint, the matches per domain and the critical paths.

    Domains are codes into ``domains[i]`` (the values of the constraint's key, shared and never
    mutated); ``match_num[i]`` / ``present[i]`` are arrays over those codes and ``extra[i]`` holds
    values not among them (a node outside the snapshot seen by AddPod).  ``present`` is upstream's
    "the value is a key of TpValueToMatchNum".
    """

    __slots__ = (
        "constraints",
        "domains",
        "match_num",
        "present",
        "extra",
        "critical_paths",
        "required",
    )

    def __init__(self) -> None:
        self.constraints: list[SpreadConstraint] = []
        self.domains: list[tuple[list[str], dict[str, int]]] = []
        self.match_num: list[np.ndarray] = []
        self.present: list[np.ndarray] = []
        self.extra: list[dict[str, int]] = []
        self.critical_paths: list[CriticalPaths] = []
        self.required: RequiredNodeAffinity | None = None

    def clone(self) -> PreFilterState:
        c = PreFilterState()
        c.constraints = self.constraints
        c.domains = self.domains
        c.match_num = [a.copy() for a in self.match_num]
        c.present = [a.copy() for a in self.present]
        c.extra = [dict(d) for d in self.extra]
        c.critical_paths = [p.clone() for p in self.critical_paths]
        c.required = self.required
        return c

    def domains_num(self, i: int) -> int:
        return int(np.count_nonzero(self.present[i])) + len(self.extra[i])

    def min_match_num(self, i: int) -> int:
        """``minMatchNum``: the global minimum, 0 while there are fewer than minDomains domains."""
        if self.domains_num(i) < self.constraints[i].min_domains:
            return 0
        return int(self.critical_paths[i].paths[0][1])

    def tp_value_to_match_num(self, i: int) -> dict[str, int]:
        """Upstream's ``TpValueToMatchNum[i]`` as a dict (for tests and debugging)."""
        values, _ = self.domains[i]
        out = {
            values[c]: int(self.match_num[i][c]) for c in np.flatnonzero(self.present[i]).tolist()
        }
        out.update(self.extra[i])
        return out

    def update(self, i: int, value: str, delta: int) -> None:
        """``TpValueToMatchNum[i][value] += delta`` and the critical paths follow."""
        _, index = self.domains[i]
        c = index.get(value)
        if c is None:
            num = self.extra[i][value] = self.extra[i].get(value, 0) + delta
        else:
            self.match_num[i][c] += delta
            self.present[i][c] = True
            num = int(self.match_num[i][c])
        self.critical_paths[i].update(value, num)


def _initial_paths(values: list[str], match: np.ndarray, present: np.ndarray) -> CriticalPaths:
    """The two smallest (domain, matchNum) pairs, ties broken by first appearance."""
    ids = np.flatnonzero(present)
    paths = CriticalPaths()
    if len(ids) == 0:
        return paths
    nums = match[ids]
    k0 = int(np.argmin(nums))
    paths.paths[0] = [values[int(ids[k0])], int(nums[k0])]
    if len(ids) > 1:
        rest = nums.copy()
        rest[k0] = np.iinfo(np.int64).max
        k1 = int(np.argmin(rest))
        paths.paths[1] = [values[int(ids[k1])], int(nums[k1])]
    return paths



class Filtering:
    """PreFilter, its AddPod/RemovePod extensions and Filter, over the plugin's :class:`Spread`."""

    def __init__(self, spread: Spread) -> None:
        self.spread = spread

    # --- PreFilter ----------------------------------------------------------------------------
    def cal_pre_filter_state(
        self, pod: Pod, nodes: Sequence[NodeInfo] | None = None
    ) -> PreFilterState:
        """``calPreFilterState`` over all nodes.  Raises ValueError for an invalid selector."""
        try:
            constraints = self.spread.get_constraints(pod)
        except ValueError as e:
            raise ValueError(
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}"
            ) from e
        s = PreFilterState()
        if not constraints:
            return s
        alln = self.spread.all_nodes(nodes)
        s.constraints = constraints
        s.required = RequiredNodeAffinity(pod)
        codes = [alln.codes(c.topology_key) for c in constraints]
        keys_ok = np.ones(alln.n, dtype=bool)
        for cd, _, _ in codes:
            keys_ok &= cd >= 0
        inclusion = alln.inclusion(pod, constraints)
        ns = pod.metadata.namespace
        for i, c in enumerate(constraints):
            cd, values, index = codes[i]
            elig = keys_ok & inclusion[i]
            sel_codes = cd[elig]
            nd = len(values)
            if len(sel_codes):
                counts = alln.pod_counts(ns, c.selector)[elig]
                match = np.bincount(sel_codes, weights=counts, minlength=nd).astype(np.int64)
                present = np.bincount(sel_codes, minlength=nd) > 0
            else:
                match = np.zeros(nd, dtype=np.int64)
                present = np.zeros(nd, dtype=bool)
            s.domains.append((values, index))
            s.match_num.append(match)
            s.present.append(present)
            s.extra.append({})
            s.critical_paths.append(_initial_paths(values, match, present))
        return s

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """``PreFilter``: the state of the pod's hard constraints; Skip when it has none."""
        if not pod.spec.topology_spread_constraints and not self.spread.hard_defaults:
            return SKIP  # no constraint of its own, and no DoNotSchedule default
        try:
            s = self.cal_pre_filter_state(pod, nodes)
        except ValueError as e:
            return Status.as_error(e)
        if not s.constraints:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    def _update_with_pod(
        self, state: CycleState, updated: Pod, preemptor: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        if updated.metadata.namespace != preemptor.metadata.namespace or node is None:
            return None
        labels = node.metadata.labels
        if not node_labels_match_spread_constraints(labels, s.constraints):
            return None
        required = s.required if s.required is not None else RequiredNodeAffinity(preemptor)
        pod_labels = updated.metadata.labels
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(pod_labels):
                continue
            if not match_node_inclusion_policies(c, preemptor, node, required):
                continue
            s.update(i, labels[c.topology_key], delta)
        return None

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Any, node_info: NodeInfo
    ) -> Status | None:
        """``AddPod``: ``pod_to_add`` (a PodInfo) now counts on ``node_info``."""
        return self._update_with_pod(state, pod_to_add.pod, pod, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Any, node_info: NodeInfo
    ) -> Status | None:
        """``RemovePod``: ``pod_to_remove`` (a PodInfo) no longer counts on ``node_info``."""
        return self._update_with_pod(state, pod_to_remove.pod, pod, node_info, -1)

    # --- Filter -------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        """``Filter`` over a batch: {index: status} of the nodes that fail, None when all pass."""
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            st = Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
            return dict.fromkeys(range(len(nodes)), st)
        if not s.constraints or len(nodes) == 0:
            return None
        pod_labels = pod.metadata.labels
        undecided = np.ones(len(nodes), dtype=bool)
        missing_all = np.zeros(len(nodes), dtype=bool)
        skewed_all = np.zeros(len(nodes), dtype=bool)
        for i, c in enumerate(s.constraints):
            values, index = s.domains[i]
            codes, unknown = _codes_in(nodes, c.topology_key, values, index)
            match = s.match_num[i]
            if len(match):
                mn = match[np.maximum(codes, 0)]
                mn[codes < 0] = 0
            else:
                mn = np.zeros(len(codes), dtype=np.int64)
            for j, v in unknown:
                mn[j] = s.extra[i].get(v, 0)
            missing = undecided & (codes == -1)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            skew = mn + self_match - s.min_match_num(i)
            skewed = undecided & ~missing & (skew > c.max_skew)
            missing_all |= missing
            skewed_all |= skewed
            undecided &= ~(missing | skewed)
            if not undecided.any():
                break
        if not (missing_all.any() or skewed_all.any()):
            return None
        out: dict[int, Status] = {}
        if missing_all.any():
            out.update(
                dict.fromkeys(
                    np.flatnonzero(missing_all).tolist(),
                    Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH),
                )
            )
        if skewed_all.any():
            out.update(
                dict.fromkeys(
                    np.flatnonzero(skewed_all).tolist(),
                    Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH),
                )
            )
        return out

