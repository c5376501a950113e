"""OpportunisticBatching (KEP-5598; beta, on from 1.35): a pod whose scheduling signature equals
the previous pod's reuses that pod's sorted feasible nodes instead of a full Filter/Score pass.

Ported from v1.35 ``pkg/scheduler/framework/runtime/batch.go`` (``OpportunisticBatch``:
``GetNodeHint``, ``StoreScheduleResults``, ``batchStateCompatible``, ``maxBatchAge`` 500 ms) and
``framework.go`` (``computeBatchablePlugins``, ``SignPod``); the callers are
``schedule_one.go`` ``findNodesThatFitPod`` / ``evaluateNominatedNode`` / ``schedulePod``:

- after PreFilter, ask for a hint; a pod without a nominated node evaluates the hinted node
  alone (as a nominated node), and when it passes Filter it is the pod's node: no Filter pass
  over the cluster, no Score;
- after a pod is placed, store the signature and the other feasible nodes sorted by score (ties
  in random order: v1.35 ``sortedNodeScores``' heap keyed on ``Randomizer``); a hint that was used
  keeps the list for the next pod;
- the list serves the next pod only if it comes in the very next scheduling cycle, its
  signature is equal, the list is younger than 500 ms, and the node the previous pod took now
  rejects it in Filter ("1 pod per node": otherwise the used node's new score is unknown).

The signature (``SignPod``): a profile signs pods only when it has no extenders and every
PreFilter, Filter, PreScore and Score plugin implements ``SignPlugin``; a plugin may refuse a
pod.  In-tree refusals (v1.35 plugins' ``SignPod``, and the documented limits in
kubernetes/website#52899 ``scheduler-perf-tuning.md``): PodTopologySpread for a pod with
constraints, or for any pod while the profile has default constraints (``defaultingType:
System``, the default: so the default profile never batches); InterPodAffinity for a pod with
pod (anti-)affinity; DynamicResources for a pod with resource claims; NodeResourcesFit and
NodeResourcesBalancedAllocation while DRAExtendedResource is on.  kubesched's signature holds the
pod fields those plugins sign (its encoding is its own: only equality matters).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.runtime._nodeinfo import NodeBatch

if TYPE_CHECKING:
    import random

    from kubesched.api._objects import Pod
    from kubesched.cache._cache import Snapshot
    from kubesched.runtime._cyclestate import CycleState
    from kubesched.runtime._framework import Framework

MAX_BATCH_AGE = 0.5  # v1.35 batch.go maxBatchAge (500 ms), on the injected clock

# scheduler_batch_attempts_total{result} (v1.35 pkg/scheduler/metrics/metrics.go)
ATTEMPT_NO_HINT = "no_hint"
ATTEMPT_HINT_USED = "hint_used"
ATTEMPT_HINT_NOT_USED = "hint_not_used"
# scheduler_batch_cache_flushed_total{reason}
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_EXPIRED = "expired"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"
FLUSH_EMPTY_LIST = "empty_list"
SIGN, SUCCESS = "Sign", "Success"  # framework_extension_point_duration_seconds{extension_point,status}
BATCH_ATTEMPTS = (ATTEMPT_NO_HINT, ATTEMPT_HINT_USED, ATTEMPT_HINT_NOT_USED)
BATCH_FLUSHES = (FLUSH_POD_SKIPPED, FLUSH_POD_FAILED, FLUSH_POD_INCOMPATIBLE, FLUSH_EXPIRED, FLUSH_NODE_MISSING,
                 FLUSH_NODE_NOT_FULL, FLUSH_POD_NOT_BATCHABLE, FLUSH_EMPTY_LIST)  # fmt: skip

UNSIGNABLE: Any = object()  # a plugin's refusal (its SignPod status not Success)


def _volumes(pod: Pod) -> Any:
    # AddSignatureVolumes: the pod's volumes (ConfigMap and Secret ones are not modelled)
    return pod.spec.volumes


def _resources(pod: Pod) -> Any:
    s = pod.spec
    return (
        [(c.name, c.resources, c.restart_policy) for c in s.init_containers],
        [c.resources for c in s.containers],
        s.overhead,
        s.resources,
    )


def _host_ports(pod: Pod) -> Any:
    return [[p for p in (c.ports or ()) if getattr(p, "host_port", 0)] for c in _all_containers(pod)]


def _all_containers(pod: Pod) -> list[Any]:
    return [*pod.spec.init_containers, *pod.spec.containers]


def _node_affinity(pod: Pod) -> Any:
    a = pod.spec.affinity
    return (pod.spec.node_selector, a.node_affinity if a is not None else None)


def _images(pod: Pod) -> Any:
    return [c.image for c in pod.spec.containers]


def _inter_pod_affinity(pod: Pod) -> Any:
    a = pod.spec.affinity
    if a is not None and (a.pod_affinity is not None or a.pod_anti_affinity is not None):
        return UNSIGNABLE  # "Pods cannot use inter pod affinity/anti-affinity"
    # existing pods' required anti-affinity and preferred terms match the incoming pod's labels
    return (pod.metadata.namespace, pod.metadata.labels)


def _dynamic_resources(pod: Pod) -> Any:
    # v1.35 dynamicresources.go SignPod: "pods with dra resource claims are not signable"
    return UNSIGNABLE if pod.spec.resource_claims else ()


def _node_declared_features(pod: Pod) -> Any:
    s = pod.spec
    return ([(c.restart_policy, c.restart_policy_rules) for c in _all_containers(pod)], s.host_network, s.host_users)


# the in-tree plugins that implement SignPlugin (v1.35 / v1.36), and what each signs
_SIGNERS: dict[str, Callable[[Pod], Any]] = {
    "NodeUnschedulable": lambda p: p.spec.tolerations,
    "NodeName": lambda p: p.spec.node_name,
    "TaintToleration": lambda p: p.spec.tolerations,
    "NodeAffinity": _node_affinity,
    "NodePorts": _host_ports,
    "NodeResourcesFit": _resources,
    "NodeResourcesBalancedAllocation": _resources,
    "VolumeRestrictions": _volumes,
    "NodeVolumeLimits": _volumes,
    "VolumeBinding": _volumes,
    "VolumeZone": _volumes,
    "InterPodAffinity": _inter_pod_affinity,
    "ImageLocality": _images,
    "DynamicResources": _dynamic_resources,
    "NodeDeclaredFeatures": _node_declared_features,
}
_CANDIDATE_POINTS = ("preFilter", "filter", "preScore", "score")


def profile_signers(
    points: Mapping[str, list[Any]], plugins: Mapping[str, Any], has_extenders: bool, gates: Mapping[str, bool]
) -> list[tuple[str, Callable[[Pod], Any]]] | None:
    """``computeBatchablePlugins``: the signers of a profile, or None when it signs no pod
    (extenders, a plugin without SignPod, or a plugin that refuses every pod)."""
    if has_extenders:
        return None
    names: list[str] = []
    for point in _CANDIDATE_POINTS:
        for e in points.get(point, ()):
            if e.name not in names:
                names.append(e.name)
    out: list[tuple[str, Callable[[Pod], Any]]] = []
    for name in names:
        if name == "PodTopologySpread":
            spread = getattr(plugins.get(name), "spread", None)
            if spread is None or spread.default_constraints:
                return None  # "pods with default topology constraints are not signable"
            out.append((name, lambda p: UNSIGNABLE if p.spec.topology_spread_constraints else ()))
            continue
        if name in ("NodeResourcesFit", "NodeResourcesBalancedAllocation") and gates.get("DRAExtendedResource"):
            return None  # "signature disabled when dra extended resources enabled"
        signer = _SIGNERS.get(name)
        if signer is None:
            return None  # a plugin that does not implement SignPlugin
        out.append((name, signer))
    return out


def sign_pod(pod: Pod, signers: list[tuple[str, Callable[[Pod], Any]]]) -> bytes | None:
    """``SignPod``: the pod's signature, or None when a plugin refuses it."""
    parts: list[Any] = [pod.spec.scheduler_name]
    for name, signer in signers:
        frag = signer(pod)
        if frag is UNSIGNABLE:
            return None
        parts.append((name, frag))
    return msgspec.json.encode(parts)


class SortedNodes:
    """``sortedNodeScores``: the feasible nodes by total score, highest first, ties in random
    order (each node's ``Randomizer``); ``pop`` takes the next.  Built from the Score pass's
    names and totals without the chosen node (``skip``); the lists are made, and the order among
    equal scores drawn, only when a pop needs them (a pod that signs nothing never pops)."""

    __slots__ = ("_n", "_names", "_rng", "_scores", "_skip", "_src")

    def __init__(
        self, names: Sequence[str] | NodeBatch, scores: np.ndarray, rng: random.Random, skip: int = -1
    ) -> None:
        self._src: tuple[Sequence[str] | NodeBatch, np.ndarray] | None = (names, scores)
        self._skip = skip
        self._n = len(names) - (skip >= 0)
        self._names: list[str] = []
        self._scores: list[int] = []
        self._rng = rng

    def __len__(self) -> int:
        return self._n

    def pop(self) -> str:
        if self._src is not None:
            src, scores = self._src
            self._src = None
            names = src.names if isinstance(src, NodeBatch) else src
            skip = self._skip
            self._names = [n for j, n in enumerate(names) if j != skip]
            self._scores = [int(x) for j, x in enumerate(scores) if j != skip]
        top = max(self._scores)
        ties = [i for i, x in enumerate(self._scores) if x == top]
        i = ties[self._rng.randrange(len(ties))] if len(ties) > 1 else ties[0]
        self._scores.pop(i)
        self._n -= 1
        return self._names.pop(i)


@dataclass
class _BatchState:
    signature: bytes
    sorted_nodes: SortedNodes
    creation_time: float


@dataclass
class _Cycle:
    cycle_count: int = -1
    chosen_node: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """One profile's batch (``OpportunisticBatch``); counts are its metric series."""

    def __init__(self, profile_name: str) -> None:
        self.profile_name = profile_name
        self.state: _BatchState | None = None
        self.last_cycle = _Cycle()
        self.batched_pods = 0
        self.attempts: dict[str, int] = {}
        self.flushes: dict[str, int] = {}

    def _flush(self, reason: str) -> None:
        self.flushes[reason] = self.flushes.get(reason, 0) + 1

    def _attempt(self, result: str) -> None:
        self.attempts[result] = self.attempts.get(result, 0) + 1

    def state_empty(self) -> bool:
        return self.state is None or len(self.state.sorted_nodes) == 0

    def get_node_hint(
        self, signature: bytes | None, cycle_count: int, now: float, rejected_by_last_node: Callable[[str], bool | None]
    ) -> str:
        """``GetNodeHint``: the next node of the stored list, or "".  ``rejected_by_last_node``
        runs Filter for the pod on the named node: True rejected, False not, None no such node."""
        if not self._compatible(signature, cycle_count, now, rejected_by_last_node):
            self._attempt(ATTEMPT_NO_HINT)
            return ""
        assert self.state is not None
        return self.state.sorted_nodes.pop()

    def _compatible(
        self, signature: bytes | None, cycle_count: int, now: float, rejected_by_last_node: Callable[[str], bool | None]
    ) -> bool:
        """``batchStateCompatible``."""
        if self.state_empty():
            return False
        assert self.state is not None
        if cycle_count != self.last_cycle.cycle_count + 1:
            self._flush(FLUSH_POD_SKIPPED)
            return False
        if not self.last_cycle.succeeded:
            self._flush(FLUSH_POD_FAILED)
            return False
        if signature is None or signature != self.state.signature:
            self._flush(FLUSH_POD_INCOMPATIBLE)
            return False
        if now > self.state.creation_time + MAX_BATCH_AGE:
            self._flush(FLUSH_EXPIRED)
            return False
        rejected = rejected_by_last_node(self.last_cycle.chosen_node)
        if rejected is None:
            self._flush(FLUSH_NODE_MISSING)
            return False
        if not rejected:
            self._flush(FLUSH_NODE_NOT_FULL)
            return False
        return True

    def store_schedule_results(
        self, signature: bytes | None, hinted: str, chosen: str, others: SortedNodes | None, cycle_count: int, now: float
    ) -> None:
        """``StoreScheduleResults``."""
        self.last_cycle = _Cycle(cycle_count, chosen, True)
        if hinted == chosen:
            self._attempt(ATTEMPT_HINT_USED)
            self.batched_pods += 1
            return
        if hinted:
            self._attempt(ATTEMPT_HINT_NOT_USED)
        if signature is not None and others is not None and len(others) > 0:
            self.state = _BatchState(signature, others, now)
        else:
            self._flush(FLUSH_EMPTY_LIST if others is None or len(others) == 0 else FLUSH_POD_NOT_BATCHABLE)
            self.state = None


class Batching:
    """The scheduler's batches, one per profile, with each profile's signers (built only when
    OpportunisticBatching is on); the scheduling cycle asks :meth:`hint` after PreFilter and
    :meth:`store` once the pod has a node."""

    def __init__(self, profiles: Mapping[str, Framework], has_extenders: bool, gates: Mapping[str, bool]) -> None:
        self.signers = {
            name: profile_signers(fw.points, fw.plugins, has_extenders, gates) for name, fw in profiles.items()
        }
        self.batches = {name: OpportunisticBatch(name) for name in profiles}
        # the cycle in progress: (profile, signature, hint)
        self.current: tuple[str, bytes | None, str] | None = None

    def hint(
        self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot, cycle: int, now: Callable[[], float]
    ) -> str:
        """``GetNodeHint`` for ``pod`` in ``fw``'s batch (``now``: the clock, read only when
        the pod signs); remembers the signature for :meth:`store`."""
        name = pod.spec.scheduler_name
        signers = self.signers.get(name)
        batch = self.batches[name]
        # v1.35 framework.go SignPod: a sampled cycle observes the Sign extension point, its
        # status always Success (the deferred observation reads an outer status that the loop's
        # ``:=`` shadows), a profile that signs nothing included
        rec = fw.calls.recorder if state.record_plugin_metrics else None
        if signers is None:
            if rec is not None:
                rec.sampled_extension_point(SIGN, SUCCESS, name, 0.0)
            # a profile that signs no pod never holds a list: no hint (the default profile's case)
            batch.attempts[ATTEMPT_NO_HINT] = batch.attempts.get(ATTEMPT_NO_HINT, 0) + 1
            self.current = (name, None, "")
            return ""
        t0 = rec.now() if rec is not None else 0.0
        signature = sign_pod(pod, signers)
        if rec is not None:
            rec.sampled_extension_point(SIGN, SUCCESS, name, rec.now() - t0)

        def rejected_by(node: str) -> bool | None:
            ni = snapshot.get(node)
            if ni is None:
                return None
            return any(st.is_rejected() for st in fw.run_filter_plugins(state, pod, NodeBatch([ni])).values())

        hint = batch.get_node_hint(signature, cycle, now(), rejected_by)
        self.current = (name, signature, hint)
        return hint

    def store(
        self, chosen: str, cycle: int, now: Callable[[], float], feasible: NodeBatch | None = None,
        scores: np.ndarray | None = None, skip: int = -1, rng: random.Random | None = None,
    ) -> None:  # fmt: skip
        """``StoreScheduleResults`` for the cycle in progress (nothing when it asked no hint):
        ``now`` the clock (read only when a list is kept), ``feasible`` and ``scores`` the Score
        pass's nodes and totals, ``skip`` the chosen one's position (none: the only feasible
        node)."""
        if self.current is None:
            return
        name, signature, hint = self.current
        batch = self.batches[name]
        if signature is None or feasible is None or scores is None or rng is None:
            # (``scores`` holds a total per feasible node: its length is the batch's, without a call)
            n_others = 0 if feasible is None else (len(feasible) if scores is None else len(scores)) - 1
            last = batch.last_cycle  # changed in place: the usual case (a pod that signs nothing)
            last.cycle_count, last.chosen_node, last.succeeded = cycle, chosen, True
            if hint:
                batch._attempt(ATTEMPT_HINT_NOT_USED if hint != chosen else ATTEMPT_HINT_USED)
                if hint == chosen:
                    batch.batched_pods += 1
                    return
            reason = FLUSH_POD_NOT_BATCHABLE if n_others > 0 and signature is None else FLUSH_EMPTY_LIST
            flushes = batch.flushes  # (``_flush``, inline)
            flushes[reason] = flushes.get(reason, 0) + 1
            batch.state = None
            return
        batch.store_schedule_results(signature, hint, chosen, SortedNodes(feasible, scores, rng, skip), cycle, now())
