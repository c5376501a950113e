"""PodTopologySpread: spread matching pods evenly over topology domains (``plugins/podtopologyspread``).

Modules as upstream's files: ``common`` (constraints, selectors, args, and ``Spread``: what the
stages share), ``filtering`` (PreFilter, Filter), ``scoring`` (PreScore, Score), ``plugin`` (the
plugin and its EnqueueExtensions).  The plugin holds its parts as objects, not base classes: one
``Spread`` (the args, the handle, the default constraints, the matching-pod counts) as
``spread``, and the stages built over it, ``filtering`` (``Filtering``) and ``scoring``
(``Scoring``); its ``@hookimpl`` methods call them.

Model.  A constraint ``(maxSkew, topologyKey, whenUnsatisfiable, labelSelector)`` of the incoming
pod counts, per *domain* (a value of ``topologyKey`` on the nodes), the pods in the pod's namespace
that match the selector (terminating pods excluded).  Only *eligible* nodes count: nodes carrying
every topology key of the pod's constraints and, per constraint, matching the pod's required node
affinity / nodeSelector (``nodeAffinityPolicy``, default Honor) and tolerating the node's
NoSchedule/NoExecute taints (``nodeTaintsPolicy``, default Ignore).  ``matchLabelKeys`` add the
pod's own values of those labels to the selector.  Constraints are kept per constraint (as newest
upstream's ``TpValueToMatchNum`` slice), so two constraints on one key never mix their counts.

- PreFilter (DoNotSchedule constraints): per constraint the matching count per domain and the two
  *critical paths* (the domain with the fewest matches, and one more).  Skip when the pod has no
  hard constraint.  AddPod / RemovePod keep the counts and paths up to date (nominated pods,
  preemption's dry runs) with upstream's update rule.
- Filter: a node without a topology key is UnschedulableAndUnresolvable "node(s) didn't match pod
  topology spread constraints (missing required label)"; otherwise, per constraint in order,
  ``matches(domain) + selfMatch - globalMin > maxSkew`` is Unschedulable "node(s) didn't match pod
  topology spread constraints".  ``globalMin`` is 0 while fewer than ``minDomains`` domains exist.
- PreScore / Score / NormalizeScore (ScheduleAnyway constraints): a node scores
  ``round(Σ count * log(domains + 2) + (maxSkew - 1))`` where ``count`` is the node's own matching
  pods for ``kubernetes.io/hostname`` and its domain's count otherwise (counted over all eligible
  nodes, for domains of the filtered nodes); nodes missing a key are ignored and get 0.  Normalize:
  ``100 * (max + min - s) / max`` (100 for all when ``max == 0``).

Default constraints (``PodTopologySpreadArgs``): ``defaultingType: System`` (the default) uses
hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway; ``List`` uses ``defaultConstraints``.
They apply only to pods without constraints of their own, with a selector built from the Services,
ReplicationControllers, ReplicaSets and StatefulSets selecting the pod.  kubesched simulates none
of those objects, so that selector is always empty and default constraints select nothing: such a
pod is skipped at PreFilter and PreScore, exactly as upstream does for a bare pod.

Vectorization.  Domains are integer codes of the snapshot's label columns
(``Snapshot.label_codes``); per-node matching-pod counts are cached per (namespace, selector) and
refreshed only for nodes whose ``NodeInfo.generation`` changed (``Snapshot.generations``); domain
counts are ``np.bincount`` over eligible nodes; Filter and Score are array lookups.  Only batches of
explicit NodeInfos (a node with nominated pods added, preemption's dry runs) take a per-node path.
"""

from __future__ import annotations

from .common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    CriticalPaths,
    Selector,
    SpreadConstraint,
    filter_topology_spread_constraints,
    parse_args,
)
from .filtering import PreFilterState
from .plugin import PodTopologySpread, new
from .scoring import PreScoreState

__all__ = ["ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "NAME", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY", "SYSTEM_DEFAULT_CONSTRAINTS", "CriticalPaths", "PodTopologySpread", "PreFilterState", "PreScoreState", "Selector", "SpreadConstraint", "filter_topology_spread_constraints", "new", "parse_args"]
