"""What the stages of preemption pass each other (upstream ``types.go``, ``candidate.go``).

A :class:`Candidate` is a node and the victims whose removal lets the preemptor fit there.  The
dry run collects candidates in two fixed-capacity :class:`CandidateBuffer` lists (PDB-violating
or not: upstream's ``candidateList``); the node choice ranks them; the executor deletes the
victims of the one chosen.  The callable types are the Evaluator's replaceable hooks, and the
messages are upstream's text, asserted in tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
MAX_INT32 = 2**31 - 1
MIN_INT64 = -(2**63)

DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPT_NEVER = "Never"

MSG_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"

IsEligiblePodFunc = Callable[["NodeInfo", "PodInfo", "Pod"], bool]
"""Upstream ``IsEligiblePod``: may ``victim`` on ``node_info`` be preempted for ``preemptor``."""
MoreImportantPodFunc = Callable[["Pod", "Pod"], bool]
"""Upstream ``MoreImportantPod``: is the first pod more important (kept first) than the second."""
ScoreFunc = Callable[[str], int]
"""One of ``OrderedScoreFuncs``: a candidate node's score, higher is better."""


@dataclass(slots=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone (``preemption.Candidate``)."""

    name: str
    victims: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


class CandidateBuffer:
    """``candidateList``: a fixed-capacity list; adds beyond the capacity are dropped."""

    def __init__(self, size: int) -> None:
        self.size_cap = size
        self.items: list[Candidate] = []

    def add(self, c: Candidate) -> None:
        if len(self.items) < self.size_cap:
            self.items.append(c)

    def size(self) -> int:
        return len(self.items)


__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DISRUPTION_TARGET",
    "MAX_INT32",
    "MIN_INT64",
    "MSG_NOT_ELIGIBLE_NEVER",
    "MSG_NOT_ELIGIBLE_TERMINATING",
    "MSG_NOT_HELPFUL",
    "MSG_NO_CANDIDATE",
    "MSG_NO_VICTIMS",
    "MSG_WAITING_FOR_PREEMPTION",
    "PREEMPT_NEVER",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "CandidateBuffer",
    "IsEligiblePodFunc",
    "MoreImportantPodFunc",
    "ScoreFunc",
]
