"""How many candidates the dry run looks for, and which one wins.

Upstream ``calculateNumCandidates`` and ``pickOneNodeForPreemption``.  The dry run stops once it has ``clamp(max(N * pct / 100, abs), <= N)`` candidates (and a
non-violating one).  The winner is chosen by score functions applied in turn, each keeping only
the best-scoring nodes; the default ones, in order:

1. fewest PDB violations;
2. lowest priority of the most important victim;
3. smallest sum of (victim priority + 2^31);
4. fewest victims;
5. latest start among the highest-priority victims;

then the first remaining node in candidate order.  The dry run on columns scores its candidates
by the same rules in arrays (``CandidateList.best_by_default_rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .types import MAX_INT32, MIN_INT64, Candidate, ScoreFunc
from .util import earliest_pod_start_ns, pod_priority


def calculate_num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """``calculateNumCandidates``: ``clamp(max(N * pct / 100, abs), <= N)``."""
    n = num_nodes * percentage // 100
    if n < absolute:
        n = absolute
    if n > num_nodes:
        n = num_nodes
    return n


def _earliest_start_of(c: Candidate) -> int:
    """``latest_start_time``'s score: the earliest start among the highest-priority victims."""
    earliest = earliest_pod_start_ns(c.victims)
    return MIN_INT64 if earliest is None else earliest


# the default rules of pick_one_node_for_preemption, as scores of a candidate (higher wins)
_DEFAULT_RULES: tuple[Callable[[Candidate], int], ...] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -(c.victims[0].spec.priority or 0),
    lambda c: -sum((v.spec.priority or 0) + MAX_INT32 + 1 for v in c.victims),
    lambda c: -len(c.victims),
    _earliest_start_of,
)


def pick_by_default_rules(candidates: Sequence[Candidate]) -> Candidate:
    """:func:`pick_one_node_for_preemption` with the default rules, on the candidates (distinct
    nodes) themselves: each rule keeps the best-scoring ones, the first of the rest wins."""
    remaining = list(candidates)
    for rule in _DEFAULT_RULES:
        scores = [rule(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, score in zip(remaining, scores, strict=True) if score == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Candidate], score_funcs: Sequence[ScoreFunc] | None = None
) -> str:
    """``pickOneNodeForPreemption``: apply the score functions in turn, keeping the top nodes.

    Default order: fewest PDB violations; lowest highest-priority victim; smallest sum of
    (priority + 2^31); fewest victims; latest earliest-start among the highest-priority victims;
    then the first remaining node (in candidate order).
    """
    if not nodes_to_victims:
        return ""
    all_candidates = list(nodes_to_victims)
    if not score_funcs:

        def min_pdb(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].victims[0])

        def min_sum_priorities(node: str) -> int:
            return -sum(pod_priority(p) + MAX_INT32 + 1 for p in nodes_to_victims[node].victims)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].victims)

        def latest_start_time(node: str) -> int:
            earliest = earliest_pod_start_ns(nodes_to_victims[node].victims)
            return MIN_INT64 if earliest is None else earliest

        score_funcs = [
            min_pdb,
            min_highest_priority,
            min_sum_priorities,
            min_num_pods,
            latest_start_time,
        ]
    for f in score_funcs:
        selected: list[str] = []
        max_score = MIN_INT64
        for node in all_candidates:
            score = f(node)
            if score > max_score:
                max_score = score
                selected = []
            if score == max_score:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        all_candidates = selected
    return all_candidates[0]


__all__ = ["calculate_num_candidates", "pick_by_default_rules", "pick_one_node_for_preemption"]
