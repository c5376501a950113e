"""The dry run, node by node: the reference form (upstream ``DryRunPreemption`` with parallelism 1).

::

    for each potential node, from ``offset`` round the list:
        SelectVictimsOnNode on a copy of the node and of the cycle state
        victims, status Success ─► a candidate: non-violating list if no victim violates a
                                   PDB, else violating list (each holds at most N)
        otherwise              ─► the node's status (no victim with Success is an Error);
                                   an Error's message is also collected
        stop once there is a non-violating candidate and both lists hold N together

The result is (non-violating then violating candidates, node statuses, error messages).  Being
sequential, it is deterministic: the candidates and the early stop depend only on the offset.
The dry run on columns (``dryrun_columns.py``) gives the same result without copying nodes;
``tests/core/preemption/test_dryrun_equivalence.py`` checks the two agree on random clusters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kubesched.runtime._status import Code, Status

from .types import Candidate, CandidateBuffer

if TYPE_CHECKING:
    from kubesched.api._objects import Pod, PodDisruptionBudget
    from kubesched.runtime._framework import CycleState
    from kubesched.runtime._nodeinfo import NodeInfo

SelectVictims = Callable[
    ["CycleState", "Pod", "NodeInfo", "Sequence[PodDisruptionBudget]"],
    "tuple[list[Pod], int, Status | None]",
]
"""The Evaluator's ``select_victims_on_node``: (victims, number violating PDBs, status)."""


class DryRunResult:
    """The dry run's result so far: the two candidate lists, node statuses and errors."""

    def __init__(self, num_candidates: int) -> None:
        self.num_candidates = num_candidates
        self.non_violating = CandidateBuffer(num_candidates)
        self.violating = CandidateBuffer(num_candidates)
        self.statuses: dict[str, Status] = {}
        self.errs: list[str] = []

    def offer(self, name: str, victims: list[Pod], num_pdb: int, st: Status | None) -> bool:
        """Record one node's outcome; True when the search can stop (G12–G15)."""
        if (st is None or st.is_success()) and victims:
            c = Candidate(name, victims, num_pdb)
            (self.non_violating if num_pdb == 0 else self.violating).add(c)
            nv = self.non_violating.size()
            return nv > 0 and nv + self.violating.size() >= self.num_candidates
        if st is None or st.is_success():
            st = Status(Code.ERROR, f'expected at least one victim pod on node "{name}"')
        if st.code == Code.ERROR:
            self.errs.append(st.message)
        self.statuses[name] = st
        return False

    def result(self) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        return self.non_violating.items + self.violating.items, self.statuses, self.errs


def dry_run_per_node(
    select_victims: SelectVictims,
    state: CycleState,
    pod: Pod,
    potential_nodes: Sequence[NodeInfo],
    pdbs: Sequence[PodDisruptionBudget],
    offset: int,
    num_candidates: int,
) -> tuple[list[Candidate], dict[str, Status], list[str]]:
    """The dry run one node at a time: ``select_victims`` on copies of each node and of
    ``state``, nodes visited from ``offset`` round ``potential_nodes``."""
    acc = DryRunResult(num_candidates)
    n = len(potential_nodes)
    for i in range(n):
        node_copy = potential_nodes[(offset + i) % n].clone()
        state_copy = state.clone()
        victims, num_pdb, st = select_victims(state_copy, pod, node_copy, pdbs)
        if acc.offer(node_copy.name, victims, num_pdb, st):
            break
    return acc.result()


__all__ = ["DryRunResult", "SelectVictims", "dry_run_per_node"]
