"""NodeAffinity: ``spec.nodeSelector``, required and preferred node affinity (``plugins/nodeaffinity``).

- PreFilter: Skip when the pod has no nodeSelector, no required affinity and the profile adds
  none; when every required term pins ``metadata.name`` (matchFields In), the union of those names
  narrows the nodes (PreFilterResult); an empty union is "pod affinity terms conflict".
- Filter: the profile's ``addedAffinity`` first ("node(s) didn't match scheduler-enforced node
  affinity"), then nodeSelector AND (terms ORed, requirements ANDed) — "node(s) didn't match Pod's
  node affinity/selector"; both UnschedulableAndUnresolvable.
- Score: the summed weights of the matching preferred terms (pod's and added), normalized
  (not reversed).  PreScore skips pods without preferred terms.

Args (``NodeAffinityArgs``): ``addedAffinity`` — a NodeAffinity applied to every pod of the profile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.framework import (
    MAX_NODE_SCORE,
    OBJECT_NAME_FIELD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    EventResource,
    Handle,
    NodeBatch,
    NodeSelectorMatcher,
    PreferredSchedulingTerms,
    PreFilterResult,
    QueueingHint,
    RequiredNodeAffinity,
    Status,
    convert,
    hookimpl,
)
from kubesched.framework import NodeAffinity as NodeAffinityObj

from ._helper import SKIP, default_normalize_score, queueing_hints_enabled

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kubesched.framework import CycleState, Node, NodeInfo, Pod

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_ADDED_REQUIRED = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_ADDED_PREFERRED = "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"


_ENCODE = msgspec.json.Encoder().encode
_COMPILED_LIMIT = 256


class _Compiled:
    """One distinct required node affinity: parsed, whether its PreFilter narrows the nodes by
    name, and its mask over a snapshot's nodes (PreFilter writes it into the cycle state)."""

    __slots__ = ("every", "generation", "mask", "names_free", "required", "snap")

    def __init__(self, required: RequiredNodeAffinity, terms: Any) -> None:
        self.required = required
        # PreFilter answers None (no PreFilterResult) for these terms: none, or a term without
        # a metadata.name In requirement (terms are ORed: that one admits every node)
        self.names_free = terms is None or not terms.node_selector_terms or any(
            not any(r.key == OBJECT_NAME_FIELD and r.operator == "In" for r in term.match_fields)
            for term in terms.node_selector_terms
        )
        self.snap: Any = None  # the snapshot ``mask`` is of, at its tree generation ``generation``
        self.generation = -2
        self.mask: np.ndarray | None = None  # every snapshot row: does it match?
        self.every = False  # whether every row of ``mask`` matches


def pod_preferred_node_affinity(pod: Pod) -> PreferredSchedulingTerms | None:
    """The pod's preferred terms, parsed (None when it has none); raises ConfigError."""
    aff = pod.spec.affinity
    if aff is not None and aff.node_affinity is not None:
        terms = aff.node_affinity.preferred_during_scheduling_ignored_during_execution
        if terms:
            return PreferredSchedulingTerms(terms)
    return None


class NodeAffinity:
    """PreFilter, Filter, PreScore, Score, NormalizeScore and EnqueueExtensions."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        # parsed required affinities by encoded (nodeSelector, required terms)
        self._compiled: dict[bytes, _Compiled] = {}
        self.added_node_selector: NodeSelectorMatcher | None = None
        self.added_pref_sched_terms: PreferredSchedulingTerms | None = None
        for key in args or {}:
            if key not in ("addedAffinity", "apiVersion", "kind"):
                raise ConfigError(f'strict decoding error: unknown field "{key}"')
        raw = (args or {}).get("addedAffinity")
        if raw is None:
            return
        try:
            added = convert(raw, NodeAffinityObj)
        except msgspec.ValidationError as e:
            raise ConfigError(f"Invalid value: {e}", field="addedAffinity") from e
        if added.required_during_scheduling_ignored_during_execution is not None:
            self.added_node_selector = NodeSelectorMatcher.parse(
                added.required_during_scheduling_ignored_during_execution,
                f"{_ADDED_REQUIRED}.nodeSelectorTerms",
            )
        if added.preferred_during_scheduling_ignored_during_execution:
            self.added_pref_sched_terms = PreferredSchedulingTerms(
                added.preferred_during_scheduling_ignored_during_execution, _ADDED_PREFERRED
            )

    @property
    def skips_pre_filter_without(self) -> str | None:
        """What a pod needs for PreFilter to do more than answer the shared Skip (the runtime
        then does not call it: :mod:`kubesched.runtime._filter_runners`): node selection, a
        nodeSelector or required node affinity; with an addedAffinity's required terms, all pods."""
        return "node selection" if self.added_node_selector is None else None

    # --- EnqueueExtensions --------------------------------------------------------------------
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not queueing_hints_enabled(self.handle):
            # hints off: also taint updates (a Node/Add may be filtered out by preCheckForNode, kubernetes#109437)
            node_actions |= ActionType.UPDATE_NODE_TAINT
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        """Queue when an added node matches, or an updated node starts to match."""
        if self.added_node_selector is not None and not self.added_node_selector.match(new):
            return QueueingHint.QUEUE_SKIP
        required = RequiredNodeAffinity(pod)
        if not required.match(new):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        if required.match(old):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    # --- PreFilter / Filter ---------------------------------------------------------------
    @hookimpl
    def kubesched_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> PreFilterResult | Status | None:
        aff = pod.spec.affinity
        required = (
            aff.node_affinity.required_during_scheduling_ignored_during_execution
            if aff is not None and aff.node_affinity is not None
            else None
        )
        if required is None and self.added_node_selector is None and not pod.spec.node_selector:
            return SKIP
        compiled = self._compiled.get(_ENCODE((pod.spec.node_selector, required)))
        if compiled is None:
            compiled = self._compile(pod, required)
        state.write(PRE_FILTER_STATE_KEY, compiled)
        if compiled.names_free:
            return None
        assert required is not None
        node_names: set[str] | None = None
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for r in term.match_fields:
                if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                    s = set(r.values)
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                # a term without a metadata.name requirement admits every node (terms are ORed)
                return None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names)
        return None

    def _compile(self, pod: Pod, required: Any) -> _Compiled:
        """``RequiredNodeAffinity(pod)``, parsed once per distinct nodeSelector and required
        terms (pods of one template share it; it is never changed once made)."""
        if len(self._compiled) >= _COMPILED_LIMIT:
            self._compiled.clear()
        compiled = self._compiled[_ENCODE((pod.spec.node_selector, required))] = _Compiled(RequiredNodeAffinity(pod), required)
        return compiled

    @staticmethod
    def _match(compiled: _Compiled, nodes: NodeBatch) -> np.ndarray | None:
        """``compiled.required.match_batch(nodes)``; for the snapshot's nodes, from a mask over
        the whole snapshot once the same terms come again (labels are the Nodes': the mask holds
        until the node set or a Node changes), or None when every node of it matches."""
        required = compiled.required
        at = nodes.snapshot_rows()
        if at is None:
            plain: np.ndarray = required.match_batch(nodes)
            return plain
        snap, rows = at
        if compiled.snap is not snap or compiled.generation != snap.tree_generation:
            compiled.snap, compiled.generation, compiled.mask, compiled.every = snap, snap.tree_generation, None, False
            first: np.ndarray = required.match_batch(nodes)  # the first time: this batch only
            return first
        if compiled.mask is None:
            compiled.mask = required.match_batch(NodeBatch(snapshot=snap, indices=np.arange(len(snap))))
            compiled.every = bool(compiled.mask.all())
        if compiled.every:
            return None
        mask: np.ndarray = compiled.mask[rows]
        return mask

    @hookimpl
    def kubesched_filter(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status] | None:
        compiled: _Compiled | None = state.get(PRE_FILTER_STATE_KEY)
        if self.added_node_selector is None and compiled is not None and compiled.every:
            snap = nodes.snapshot  # a batch of snapshot rows: every one matches while the mask holds
            if snap is not None and snap is compiled.snap and compiled.generation == snap.tree_generation:
                return None
        n = len(nodes)
        ok: np.ndarray | None = None  # None: every node
        out: dict[int, Status] = {}
        if self.added_node_selector is not None:
            ok = self.added_node_selector.match_batch(nodes)
            passed = np.count_nonzero(ok)
            if passed != n:
                st = Status.unresolvable(ERR_REASON_ENFORCED)
                out.update(dict.fromkeys(np.flatnonzero(~ok).tolist(), st))
            if not passed:
                return out or None
        if compiled is None:  # PreFilter disabled
            match: np.ndarray | None = RequiredNodeAffinity(pod).match_batch(nodes)
        else:
            match = self._match(compiled, nodes)
        if match is None:  # every node matches
            return out or None
        if ok is None:
            if np.count_nonzero(match) == n:
                return out or None
            bad = np.flatnonzero(~match)
        else:
            bad = np.flatnonzero(ok & ~match)
        if len(bad):
            st = Status.unresolvable(ERR_REASON_POD)
            out.update(dict.fromkeys(bad.tolist(), st))
        return out or None

    # --- Score ----------------------------------------------------------------------------
    @hookimpl
    def kubesched_pre_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
        aff = pod.spec.affinity  # pod_preferred_node_affinity(pod), inlined: most pods have no terms
        terms = aff.node_affinity.preferred_during_scheduling_ignored_during_execution if aff is not None and aff.node_affinity is not None else None
        if not terms and self.added_pref_sched_terms is None:
            return SKIP
        try:
            preferred = PreferredSchedulingTerms(terms) if terms else None
        except ConfigError as e:
            return Status.as_error(e)
        state.write(PRE_SCORE_STATE_KEY, preferred)
        return None

    @hookimpl
    def kubesched_score(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray:
        out = np.zeros(len(nodes), dtype=np.int64)
        if self.added_pref_sched_terms is not None:
            out += self.added_pref_sched_terms.score_batch(nodes)
        try:
            preferred = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:  # PreScore disabled
            preferred = pod_preferred_node_affinity(pod)
        if preferred is not None:
            out += preferred.score_batch(nodes)
        return out

    @hookimpl
    def kubesched_normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None


def new(args: dict[str, Any] | None, handle: Handle) -> NodeAffinity:
    return NodeAffinity(args, handle)


__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "NodeAffinity",
    "new",
    "pod_preferred_node_affinity",
]
