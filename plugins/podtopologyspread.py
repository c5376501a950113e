"""PodTopologySpread: spread matching pods evenly over topology domains (``plugins/podtopologyspread``).

Why one file: one module per plugin (so "why did this plugin reject the node" opens one file);
upstream's filtering.go and scoring.go share the PreFilter/PreScore state kept here.

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

import math
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    LabelRequirement,
    NodeBatch,
    QueueingHint,
    RequiredNodeAffinity,
    Status,
    TopologySpreadConstraint,
    convert,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    go_value,
    hookimpl,
    qualified_name_errors,
    requirements_match,
    selector_requirements,
)

from ._helper import queueing_hints_enabled

if TYPE_CHECKING:
    from kubesched.framework import CycleState, LabelSelector, Node, NodeInfo, Pod, Snapshot

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
MAX_INT32 = 2**31 - 1

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)
"""``systemDefaultConstraints``."""

_COUNT_CACHE_SIZE = 256


# --- selectors ---------------------------------------------------------------------------------



class Selector:
    """A parsed ``labels.Selector``: requirements ANDed, sorted by key; ``reqs is None`` selects nothing.

    Hashable by its requirements, so per-node counts can be cached per selector.
    """

    __slots__ = ("reqs",)

    def __init__(self, reqs: tuple[LabelRequirement, ...] | None) -> None:
        self.reqs = reqs

    @classmethod
    def from_label_selector(cls, sel: LabelSelector | None) -> Selector:
        """``metav1.LabelSelectorAsSelector``; raises ValueError for an invalid requirement."""
        if sel is None:
            return cls(None)
        reqs = selector_requirements(sel)
        return cls(tuple(sorted(reqs, key=lambda r: (r[0], r[1], sorted(r[2])))))

    def merged_with(self, match_labels: Mapping[str, str]) -> Selector:
        """``mergeLabelSetWithSelector``: ``match_labels`` ANDed with this selector's requirements.

        A nothing-selector has no requirements to add, so the result is the label set alone.
        """
        reqs: list[LabelRequirement] = [(k, "In", frozenset((v,))) for k, v in match_labels.items()]
        reqs.extend(self.reqs or ())
        return Selector(tuple(sorted(reqs, key=lambda r: (r[0], r[1], sorted(r[2])))))

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.reqs is not None and requirements_match(self.reqs, labels)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and self.reqs == other.reqs

    def __hash__(self) -> int:
        return hash(self.reqs)

    def __repr__(self) -> str:
        if self.reqs is None:
            return "Selector(<nothing>)"
        return f"Selector({', '.join(f'{k} {op} {sorted(v)}' for k, op, v in self.reqs)})"


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """``topologySpreadConstraint``: a constraint with its selector parsed and defaults applied."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def filter_topology_spread_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> list[SpreadConstraint]:
    """``filterTopologySpreadConstraints``: the constraints for ``action``, parsed.

    ``matchLabelKeys`` present in the pod's labels join the selector; minDomains defaults to 1,
    nodeAffinityPolicy to Honor, nodeTaintsPolicy to Ignore.  Raises ValueError.
    """
    out: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = Selector.from_label_selector(c.label_selector)
        if c.match_label_keys:
            match = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if match:
                selector = selector.merged_with(match)
        out.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=c.node_affinity_policy or HONOR,
                node_taints_policy=c.node_taints_policy or IGNORE,
            )
        )
    return out


def node_labels_match_spread_constraints(
    labels: Mapping[str, str], constraints: Sequence[SpreadConstraint]
) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: the node carries every topology key."""
    return all(c.topology_key in labels for c in constraints)


def match_node_inclusion_policies(
    c: SpreadConstraint, pod: Pod, node: Node, required: RequiredNodeAffinity
) -> bool:
    """``matchNodeInclusionPolicies``: does ``node`` count for constraint ``c``?"""
    if c.node_affinity_policy == HONOR and not required.match(node):
        return False
    return not (
        c.node_taints_policy == HONOR
        and find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        )
        is not None
    )


def count_pods_match_selector(pods: Iterable[Any], selector: Selector, namespace: str) -> int:
    """``countPodsMatchSelector`` over PodInfos: same namespace, not terminating, selected."""
    n = 0
    for pi in pods:
        meta = pi.pod.metadata
        if (
            meta.deletion_timestamp is None
            and meta.namespace == namespace
            and selector.matches(meta.labels)
        ):
            n += 1
    return n


# --- critical paths ----------------------------------------------------------------------------


class CriticalPaths:
    """``criticalPaths``: two (domain, matchNum) entries; ``paths[0]`` holds the minimum.

    ``paths[1]`` is greater or equal but not necessarily the second minimum once AddPod/RemovePod
    ran (upstream's caveat: preemption only removes pods of one node per state copy).
    """

    __slots__ = ("paths",)

    def __init__(self, paths: list[list[Any]] | None = None) -> None:
        self.paths = paths if paths is not None else [["", MAX_INT32], ["", MAX_INT32]]

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    def clone(self) -> CriticalPaths:
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def as_tuples(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (tuple(self.paths[0]), tuple(self.paths[1]))  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths[0]}, {self.paths[1]})"


# --- all nodes of the cycle --------------------------------------------------------------------


class _AllNodes:
    """Every node of the cycle with label codes and matching-pod counts.

    Backed by the snapshot when the caller's node list is the snapshot's (the scheduler's case):
    codes come from ``Snapshot.label_codes`` and counts from the plugin's incremental cache.
    """

    def __init__(
        self, plugin: PodTopologySpread, infos: Sequence[NodeInfo], snapshot: Snapshot | None
    ) -> None:
        self.plugin = plugin
        self.infos = infos
        self.snapshot = snapshot
        self.n = len(infos)
        self._codes: dict[str, tuple[np.ndarray, list[str], dict[str, int]]] = {}
        self._batch: NodeBatch | None = None

    def codes(self, key: str) -> tuple[np.ndarray, list[str], dict[str, int]]:
        out = self._codes.get(key)
        if out is None:
            if self.snapshot is not None:
                out = self.snapshot.label_codes(key)
            else:
                out = NodeBatch(list(self.infos)).label_codes(key)
            self._codes[key] = out
        return out

    def batch(self) -> NodeBatch:
        if self._batch is None:
            if self.snapshot is not None:
                self._batch = NodeBatch(
                    snapshot=self.snapshot, indices=np.arange(self.n, dtype=np.int64)
                )
            else:
                self._batch = NodeBatch(list(self.infos))
        return self._batch

    def pod_counts(self, namespace: str, selector: Selector) -> np.ndarray:
        if self.snapshot is not None:
            return self.plugin.cached_pod_counts(self.snapshot, namespace, selector)
        return np.fromiter(
            (count_pods_match_selector(ni.pods, selector, namespace) for ni in self.infos),
            np.int64,
            self.n,
        )

    def positions(self, batch: NodeBatch) -> np.ndarray | None:
        """Rows of ``batch``'s nodes here, or None when the batch is not a view of our snapshot."""
        if self.snapshot is not None and batch.snapshot is self.snapshot:
            return batch.indices
        return None

    def inclusion(self, pod: Pod, constraints: Sequence[SpreadConstraint]) -> list[np.ndarray]:
        """Per constraint, the nodes its node inclusion policies admit."""
        n = self.n
        everything = np.ones(n, dtype=bool)
        aff: np.ndarray | None = None
        taints: np.ndarray | None = None
        out: list[np.ndarray] = []
        for c in constraints:
            ok = everything
            if c.node_affinity_policy == HONOR:
                if aff is None:
                    aff = _affinity_mask(pod, self.batch())
                ok = aff
            if c.node_taints_policy == HONOR:
                if taints is None:
                    taints = _taints_mask(pod, self.batch())
                ok = ok & taints
            out.append(ok)
        return out


def _affinity_mask(pod: Pod, nodes: NodeBatch) -> np.ndarray:
    """Nodes matching the pod's nodeSelector and required node affinity."""
    aff = pod.spec.affinity
    if not pod.spec.node_selector and (
        aff is None
        or aff.node_affinity is None
        or aff.node_affinity.required_during_scheduling_ignored_during_execution is None
    ):
        return np.ones(len(nodes), dtype=bool)
    return RequiredNodeAffinity(pod).match_batch(nodes)


def _has_do_not_schedule_taint(ni: NodeInfo) -> bool:
    return ni.node is not None and any(
        do_not_schedule_taints_filter(t) for t in ni.node.spec.taints
    )


def _taints_mask(pod: Pod, nodes: NodeBatch) -> np.ndarray:
    """Nodes whose NoSchedule/NoExecute taints the pod all tolerates."""
    ok = np.ones(len(nodes), dtype=bool)
    tainted = np.flatnonzero(
        nodes.node_flag(NAME + "/do-not-schedule-taint", _has_do_not_schedule_taint)
    )
    infos = nodes.infos if len(tainted) else ()
    for i in tainted.tolist():
        node = infos[i].node
        if find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        ):
            ok[i] = False
    return ok


def _codes_in(
    nodes: NodeBatch, key: str, values: list[str], index: dict[str, int]
) -> tuple[np.ndarray, list[Any]]:
    """Batch codes of label ``key`` in the code space ``(values, index)``.

    Returns ``(codes, unknown)``: -1 where the node lacks the label, -2 where its value is not in
    ``index`` (``unknown`` then holds ``(position, value)``).
    """
    codes, bvalues, _ = nodes.label_codes(key)
    if bvalues is values:
        return codes, []
    out = np.full(len(codes), -1, dtype=np.int64)
    unknown: list[Any] = []
    for j in np.flatnonzero(codes >= 0).tolist():
        v = bvalues[codes[j]]
        c = index.get(v)
        if c is None:
            out[j] = -2
            unknown.append((j, v))
        else:
            out[j] = c
    return out, unknown


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
    return np.where(x - f >= 0.5, f + 1, f)


# --- args --------------------------------------------------------------------------------------


def parse_args(args: Mapping[str, Any] | None) -> tuple[str, list[TopologySpreadConstraint]]:
    """``PodTopologySpreadArgs`` defaulted (v1: defaultingType System) and validated.

    Raises :class:`ConfigError` with upstream's ``ValidatePodTopologySpreadArgs`` messages.
    """
    args = dict(args or {})
    for key in args:
        if key not in ("defaultConstraints", "defaultingType", "apiVersion", "kind"):
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
    defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
    raw = args.get("defaultConstraints") or []
    try:
        constraints: list[TopologySpreadConstraint] = convert(raw, list[TopologySpreadConstraint])
    except msgspec.ValidationError as e:
        raise ConfigError(f"Invalid value: {e}", field="defaultConstraints") from e
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise ConfigError(
            f'Unsupported value: {go_value(defaulting)}: supported values: "System", "List"',
            field="defaultingType",
        )
    if defaulting == SYSTEM_DEFAULTING and constraints:
        raise ConfigError(
            f"Invalid value: {go_value(defaulting)}: when .defaultConstraints are not empty",
            field="defaultingType",
        )
    raw_list = raw if isinstance(raw, list) else []
    for i, c in enumerate(constraints):
        p = f"defaultConstraints[{i}]"
        if c.max_skew <= 0:
            raise ConfigError(
                f"Invalid value: {c.max_skew}: not in valid range (0, inf)", field=f"{p}.maxSkew"
            )
        if not c.topology_key:
            raise ConfigError("Required value: can not be empty", field=f"{p}.topologyKey")
        errs = qualified_name_errors(c.topology_key)
        if errs:
            raise ConfigError(
                f"Invalid value: {go_value(c.topology_key)}: {errs[0]}", field=f"{p}.topologyKey"
            )
        raw_c = raw_list[i] if i < len(raw_list) and isinstance(raw_list[i], Mapping) else {}
        when = raw_c.get("whenUnsatisfiable", "")
        if not when:
            raise ConfigError("Required value: can not be empty", field=f"{p}.whenUnsatisfiable")
        if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ConfigError(
                f'Unsupported value: {go_value(when)}: supported values: "DoNotSchedule", "ScheduleAnyway"',
                field=f"{p}.whenUnsatisfiable",
            )
        if c.label_selector is not None:
            raise ConfigError(
                "Forbidden: constraint must not define a selector, as they deduced for each pod",
                field=f"{p}.labelSelector",
            )
        for other in constraints[:i]:
            if (
                other.topology_key == c.topology_key
                and other.when_unsatisfiable == c.when_unsatisfiable
            ):
                raise ConfigError(
                    f'Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"', field=p
                )
    if defaulting == SYSTEM_DEFAULTING:
        return defaulting, list(SYSTEM_DEFAULT_CONSTRAINTS)
    return defaulting, constraints


# --- the plugin --------------------------------------------------------------------------------


class PodTopologySpread:
    """PreFilter (+AddPod/RemovePod), Filter, PreScore, Score, NormalizeScore, EnqueueExtensions."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None = None, handle: Any = None) -> None:
        self.handle = handle
        defaulting, self.default_constraints = parse_args(args)
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        self._counts: OrderedDict[tuple[str, Selector], tuple[Any, int, np.ndarray, np.ndarray]] = (
            OrderedDict()
        )

    # --- constraints ------------------------------------------------------------------------
    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """``buildDefaultConstraints``: the default constraints with the pod's owners' selector.

        That selector is built from the Services / ReplicationControllers / ReplicaSets /
        StatefulSets selecting the pod; kubesched has none of those objects, so it is always
        empty and, as upstream for an empty selector, there are no default constraints.
        """
        return []

    def get_constraints(self, pod: Pod, action: str = DO_NOT_SCHEDULE) -> list[SpreadConstraint]:
        """``getConstraints`` (hard) / ``initPreScoreState``'s choice (soft).  Raises ValueError."""
        if pod.spec.topology_spread_constraints:
            return filter_topology_spread_constraints(
                pod.spec.topology_spread_constraints, pod.metadata.labels, action
            )
        return self.build_default_constraints(pod, action)

    def _all_nodes(self, nodes: Sequence[NodeInfo] | None) -> _AllNodes:
        snap = getattr(self.handle, "snapshot", None)
        if nodes is None:
            nodes = snap.node_infos if snap is not None else []
        if snap is not None and nodes is snap.node_infos:
            return _AllNodes(self, nodes, snap)
        return _AllNodes(self, nodes, None)

    def cached_pod_counts(self, snap: Snapshot, namespace: str, selector: Selector) -> np.ndarray:
        """Matching pods per snapshot node, refreshed only where ``NodeInfo.generation`` moved."""
        key = (namespace, selector)
        gens = snap.generations
        entry = self._counts.get(key)
        if (
            entry is not None
            and entry[0] is snap
            and entry[1] == snap.tree_generation
            and len(entry[2]) == len(gens)
        ):
            _, _, old_gens, counts = entry
            changed = np.flatnonzero(old_gens != gens)
            if len(changed):
                counts = counts.copy()
                infos = snap.node_infos
                for i in changed.tolist():
                    counts[i] = count_pods_match_selector(infos[i].pods, selector, namespace)
                self._counts[key] = (snap, snap.tree_generation, gens.copy(), counts)
            self._counts.move_to_end(key)
            return counts
        counts = np.zeros(len(snap.node_infos), dtype=np.int64)
        for i, ni in enumerate(snap.node_infos):
            if ni.pods:
                counts[i] = count_pods_match_selector(ni.pods, selector, namespace)
        self._counts[key] = (snap, snap.tree_generation, gens.copy(), counts)
        self._counts.move_to_end(key)
        while len(self._counts) > _COUNT_CACHE_SIZE:
            self._counts.popitem(last=False)
        return counts

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        if queueing_hints_enabled(self.handle):
            # a new toleration matters with nodeTaintsPolicy Honor; without hints an update of an
            # unschedulable pod retries it anyway, so upstream adds it only with hints
            pod_actions |= ActionType.UPDATE_POD_TOLERATION
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions), self.is_schedulable_after_node_change
            ),
        ]

    def is_schedulable_after_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        def involved(incoming: Pod) -> bool:
            return incoming.metadata.uid == pod.metadata.uid or (
                bool(incoming.spec.node_name)
                and incoming.metadata.namespace == pod.metadata.namespace
            )

        if (new is not None and not involved(new)) or (old is not None and not involved(old)):
            return QueueingHint.QUEUE_SKIP
        try:
            constraints = self.get_constraints(pod)
        except ValueError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            if (
                pod.metadata.uid == new.metadata.uid
                and new.spec.tolerations != old.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            if new.metadata.labels == old.metadata.labels:
                return QueueingHint.QUEUE_SKIP
            for c in constraints:
                if c.selector.matches(old.metadata.labels) != c.selector.matches(
                    new.metadata.labels
                ):
                    return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        obj = new if new is not None else old
        if obj is not None and any(c.selector.matches(obj.metadata.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        try:
            constraints = self.get_constraints(pod)
        except ValueError:
            return QueueingHint.QUEUE
        old_match = old is not None and node_labels_match_spread_constraints(
            old.metadata.labels, constraints
        )
        new_match = new is not None and node_labels_match_spread_constraints(
            new.metadata.labels, constraints
        )
        if old is not None and new is not None:
            if old_match != new_match:
                return QueueingHint.QUEUE
            if new_match and (
                any(
                    old.metadata.labels.get(c.topology_key)
                    != new.metadata.labels.get(c.topology_key)
                    for c in constraints
                )
                or old.spec.taints != new.spec.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_match else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_match else QueueingHint.QUEUE_SKIP

    # --- PreFilter ----------------------------------------------------------------------------
    def cal_pre_filter_state(
        self, pod: Pod, nodes: Sequence[NodeInfo] | None = None
    ) -> PreFilterState:
        """``calPreFilterState`` over all nodes.  Raises ValueError for an invalid selector."""
        try:
            constraints = self.get_constraints(pod)
        except ValueError as e:
            raise ValueError(
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {e}"
            ) from e
        s = PreFilterState()
        if not constraints:
            return s
        alln = self._all_nodes(nodes)
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

    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        try:
            s = self.cal_pre_filter_state(pod, nodes)
        except ValueError as e:
            return Status.as_error(e)
        if not s.constraints:
            return Status.skip()
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

    @hookimpl
    def kubesched_pre_filter_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Any, node_info: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_add.pod, pod, node_info, 1)

    @hookimpl
    def kubesched_pre_filter_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Any, node_info: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_remove.pod, pod, node_info, -1)

    # --- Filter -------------------------------------------------------------------------------
    @hookimpl
    def kubesched_filter(
        self, state: CycleState, pod: Pod, nodes: NodeBatch
    ) -> dict[int, Status] | None:
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

    # --- Score --------------------------------------------------------------------------------
    def init_pre_score_state(self, pod: Pod, filtered: NodeBatch) -> PreScoreState | None:
        """``PreScore``'s state; None when there is nothing to score (Skip).  Raises ValueError."""
        snap = getattr(self.handle, "snapshot", None)
        alln = self._all_nodes(snap.node_infos if snap is not None else list(filtered.infos))
        if alln.n == 0:
            return None
        s = PreScoreState()
        s.require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        try:
            if pod.spec.topology_spread_constraints:
                s.constraints = filter_topology_spread_constraints(
                    pod.spec.topology_spread_constraints, pod.metadata.labels, SCHEDULE_ANYWAY
                )
            else:
                s.constraints = self.build_default_constraints(pod, SCHEDULE_ANYWAY)
        except ValueError as e:
            raise ValueError(
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {e}"
            ) from e
        if not s.constraints:
            return None
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

    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        try:
            s = self.init_pre_score_state(pod, nodes)
        except ValueError as e:
            return Status.as_error(e)
        if s is None:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
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

    @hookimpl
    def kubesched_normalize_score(
        self, state: CycleState, pod: Pod, scores: np.ndarray
    ) -> Status | None:
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


def new(args: Mapping[str, Any] | None, handle: Any) -> PodTopologySpread:
    return PodTopologySpread(args, handle)


__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "CriticalPaths",
    "PodTopologySpread",
    "PreFilterState",
    "PreScoreState",
    "Selector",
    "SpreadConstraint",
    "filter_topology_spread_constraints",
    "new",
    "parse_args",
]
