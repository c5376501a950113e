"""PodTopologySpread's shared parts: constraints, selectors, eligible-node masks, args, and
:class:`Spread`, what the plugin's stages share (upstream's common.go and plugin.go)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.framework import (
    ConfigError,
    Handle,
    LabelRequirement,
    NodeBatch,
    RequiredNodeAffinity,
    TopologySpreadConstraint,
    convert,
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    go_value,
    qualified_name_errors,
    requirements_match,
    selector_requirements,
)

if TYPE_CHECKING:
    from kubesched.framework import LabelSelector, Node, NodeInfo, Pod, Snapshot

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
    constraints: Iterable[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
    *,
    match_label_keys: bool = True,
    node_inclusion_policy: bool = True,
) -> list[SpreadConstraint]:
    """``filterTopologySpreadConstraints``: the constraints for ``action``, parsed.

    ``matchLabelKeys`` present in the pod's labels join the selector (with
    MatchLabelKeysInPodTopologySpread: ``match_label_keys``); minDomains defaults to 1,
    nodeAffinityPolicy to Honor, nodeTaintsPolicy to Ignore, and the two policies are read only
    with NodeInclusionPolicyInPodTopologySpread (``node_inclusion_policy``; v1.30.6
    ``podtopologyspread/common.go``).  Raises ValueError.
    """
    out: list[SpreadConstraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = Selector.from_label_selector(c.label_selector)
        if c.match_label_keys and match_label_keys:
            match = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            if match:
                selector = selector.merged_with(match)
        out.append(
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=(c.node_affinity_policy if node_inclusion_policy else None) or HONOR,
                node_taints_policy=(c.node_taints_policy if node_inclusion_policy else None) or IGNORE,
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
        self.paths: list[list[Any]] = paths if paths is not None else [["", MAX_INT32], ["", MAX_INT32]]

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
    codes come from ``Snapshot.label_codes`` and counts from the plugin's incremental cache
    (:meth:`Spread.cached_pod_counts`).
    """

    def __init__(
        self, spread: Spread, infos: Sequence[NodeInfo], snapshot: Snapshot | None
    ) -> None:
        self.spread = spread
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
            return self.spread.cached_pod_counts(self.snapshot, namespace, selector)
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
        assert node is not None  # a node flagged as tainted has its Node
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




def default_selector(pod: Pod, cluster: Any) -> Selector | None:
    """``helper.DefaultSelector``: the selector of the workload controlling ``pod``; None when
    it is empty (then upstream adds no default constraints).

    Upstream merges the selectors of the Services selecting the pod with its controller's: a
    ReplicationController's label set, or a ReplicaSet's or StatefulSet's requirements (looked up
    by the controller reference's name in the pod's namespace).  The scheduler's cluster state
    holds ReplicaSets and StatefulSets (the kinds the fake cluster runs, and a live cluster's);
    Services and ReplicationControllers are not listed, so they add nothing.
    """
    owner = None
    for ref in pod.metadata.owner_references:
        if ref.controller:
            owner = ref
            break
    if owner is None:
        return None
    if owner.api_version == "apps/v1" and owner.kind == "ReplicaSet":
        table = cluster.replica_sets
    elif owner.api_version == "apps/v1" and owner.kind == "StatefulSet":
        table = cluster.stateful_sets
    else:
        return None
    workload = table.get((pod.metadata.namespace, owner.name))
    if workload is None or workload.spec.selector is None:
        return None
    try:
        selector = Selector.from_label_selector(workload.spec.selector)
    except ValueError:
        return None
    return selector if selector.reqs else None


class Spread:
    """What PodTopologySpread's stages share (upstream's plugin struct and common.go): the args
    (the default constraints, ``system_defaulted``), the handle, and the matching-pod counts
    per snapshot node, cached per (namespace, selector).

    The plugin builds one and hands it to its :class:`~.filtering.Filtering` and
    :class:`~.scoring.Scoring`.
    """

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        defaulting, self.default_constraints = parse_args(args)
        self.hard_defaults = any(c.when_unsatisfiable == DO_NOT_SCHEDULE for c in self.default_constraints)
        """Whether a default constraint is DoNotSchedule (System's are both ScheduleAnyway)."""
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        gates = handle.feature_gates  # beta on from 1.27 / 1.26 (GA locked from 1.33)
        self.match_label_keys = bool(gates.get("MatchLabelKeysInPodTopologySpread", True))
        self.node_inclusion_policy = bool(gates.get("NodeInclusionPolicyInPodTopologySpread", True))
        self._counts: OrderedDict[tuple[str, Selector], tuple[Any, int, np.ndarray, np.ndarray]] = (
            OrderedDict()
        )

    # --- constraints ------------------------------------------------------------------------
    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """``buildDefaultConstraints``: the default constraints with the pod's owners' selector
        (:func:`default_selector`); none when that selector is empty."""
        if not self.default_constraints:
            return []
        selector = default_selector(pod, self.handle.cluster)
        if selector is None:
            return []
        constraints = self.filter_constraints(self.default_constraints, pod, action)
        return [replace(c, selector=selector) for c in constraints]

    def filter_constraints(
        self, constraints: Iterable[TopologySpreadConstraint], pod: Pod, action: str
    ) -> list[SpreadConstraint]:
        """:func:`filter_topology_spread_constraints` with the plugin's gates."""
        return filter_topology_spread_constraints(
            constraints, pod.metadata.labels, action,
            match_label_keys=self.match_label_keys, node_inclusion_policy=self.node_inclusion_policy,
        )  # fmt: skip

    def get_constraints(self, pod: Pod, action: str = DO_NOT_SCHEDULE) -> list[SpreadConstraint]:
        """``getConstraints`` (hard) / ``initPreScoreState``'s choice (soft).  Raises ValueError."""
        if pod.spec.topology_spread_constraints:
            return self.filter_constraints(pod.spec.topology_spread_constraints, pod, action)
        return self.build_default_constraints(pod, action)

    def all_nodes(self, nodes: Sequence[NodeInfo] | None) -> _AllNodes:
        """Every node of the cycle: ``nodes`` (None: the snapshot's), backed by the snapshot
        when they are its node list."""
        snap = self.handle.snapshot
        if nodes is None:
            nodes = snap.node_infos
        if nodes is snap.node_infos:
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

