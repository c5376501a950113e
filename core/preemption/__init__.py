"""Preemption: the generic Evaluator behind DefaultPreemption (upstream ``framework/preemption``).

A pod that fit no node reaches PostFilter; ``plugins/defaultpreemption.py`` calls
``Evaluator.preempt``, which runs the stages of this package in order::

    evaluator.py        Preempt: re-read the pod; eligible? (preemptionPolicy, victims already
                        terminating on its nominated node); potential nodes = status exactly
                        Unschedulable
      │
      ├─ dryrun_columns.py   the dry run on the snapshot's columns (priority-only eligibility,
      │   stripped.py        no AddPod/RemovePod extension): batch Filter over stripped rows,
      │                      the reprieve loop in lockstep, no node copied
      └─ dryrun.py           otherwise the reference dry run, node by node on copies
           victims.py        SelectVictimsOnNode on one node: remove lower-priority pods,
                             reprieve them (PDB-violating first) while the pod still fits
      │
    evaluator.py        extenders narrow the candidates (ProcessPreemption)
    candidates.py       pick one node: fewest PDB violations, lowest top victim priority,
                        smallest priority sum, fewest victims, latest start, first
    executor.py         prepare it: delete the victims in the cycle (sync), or in a background
                        task while the preemptor waits in ``preempting`` (async: N-1 victims,
                        then the last)
      │
    PostFilterResult(nominated node)

``types.py`` holds what the stages pass each other (``Candidate``, the fixed-capacity candidate
lists, the hook types, upstream's messages) and ``util.py`` the pod helpers (importance order,
start times, terminating-by-preemption).  Stages import only the modules below them, never this
package or the evaluator, so no module imports one that imports it
(``tests/core/test_import_cycles.py``).
"""

from __future__ import annotations

from .candidates import calculate_num_candidates, pick_one_node_for_preemption
from .dryrun_columns import CandidateList
from .evaluator import Evaluator
from .types import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    MSG_WAITING_FOR_PREEMPTION,
    Candidate,
    IsEligiblePodFunc,
    MoreImportantPodFunc,
    ScoreFunc,
)
from .util import (
    aggregate_message,
    earliest_pod_start_ns,
    more_important_pod,
    pod_priority,
    pod_start_ns,
    pod_terminating_by_preemption,
)
from .victims import filter_pods_with_pdb_violation

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "MSG_WAITING_FOR_PREEMPTION",
    "Candidate",
    "CandidateList",
    "Evaluator",
    "IsEligiblePodFunc",
    "MoreImportantPodFunc",
    "ScoreFunc",
    "aggregate_message",
    "calculate_num_candidates",
    "earliest_pod_start_ns",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "pod_priority",
    "pod_start_ns",
    "pod_terminating_by_preemption",
]
