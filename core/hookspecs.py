# mypy: disable-error-code="empty-body"
"""Every extension point of the scheduling framework, in cycle order.

A plugin is an object with a ``name`` attribute and methods marked ``@kubesched.hookimpl`` whose
names are the hook names below.  pluggy validates the signatures; the runtime
(:class:`kubesched.Framework`) calls each *enabled* plugin's implementation in the order the
profile gives (KubeSchedulerConfiguration), never in pluggy's registration order, and stamps the
plugin's name on every :class:`~kubesched.Status` it returns.  A plugin that raises is turned into
an ``Error`` status for that pod ("running 'X' filter plugin: ...").

Results: returning ``None`` means Success everywhere.  Hooks marked *may be async* (the
:data:`MAY_BE_ASYNC` set) may be ``async def``; the runtime awaits them.  All others must be
plain functions: they run on the hot path of the scheduling cycle, and a profile whose plugin
declares one of them ``async def`` is a :class:`~kubesched.ConfigError` naming the plugin and the
hook.  A result of the wrong type (a list where a Status is expected, say) is an Error status for
that pod naming the plugin and the extension point, as a raise is.

Filter and Score work on a *batch* of nodes (:class:`~kubesched.NodeBatch`): one call per pod per
stage, over the columnar arrays of the snapshot.  A plugin that prefers a per-node function
decorates it with :func:`kubesched.per_node_filter` / :func:`kubesched.per_node_score`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np

    from kubesched.api._objects import Pod
    from kubesched.queue._scheduling_queue import QueuedPodInfo
    from kubesched.runtime._cyclestate import CycleState, PostFilterResult, PreFilterResult
    from kubesched.runtime._events import ClusterEventWithHint
    from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, PodInfo
    from kubesched.runtime._placement import (
        Placement,
        PlacementScore,
        PodGroupAssignments,
        PodGroupInfo,
    )
    from kubesched.runtime._status import Status

PROJECT = "kubesched"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def kubesched_events_to_register() -> Sequence[ClusterEventWithHint]:
    """EnqueueExtensions: the cluster events that may make a pod this plugin rejected schedulable.

    Called once when the profile is built.  Each entry pairs a :class:`~kubesched.ClusterEvent`
    with an optional queueing hint ``(pod, old, new) -> QueueingHint``.  A rejecting plugin that
    does not implement this hook is interested in every event.
    """


@hookspec
def kubesched_pre_enqueue(pod: Pod) -> Status | None:
    """PreEnqueue: runs before a pod enters the active queue.

    Success lets the pod in; any other code keeps it in the unschedulable pods, gated by this
    plugin, until one of the plugin's registered events arrives.  Must be cheap and side-effect
    free.
    """


@hookspec
def kubesched_queue_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """QueueSort: True when ``a`` must be popped before ``b``.  Exactly one per profile.

    Must be a strict weak order and side-effect free.
    """


@hookspec
def kubesched_pre_filter(
    state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
) -> PreFilterResult | Status | None:
    """PreFilter: once per scheduling cycle, before Filter.

    Compute per-cycle state and store it in ``state`` for the other hooks.  Return Skip to have
    this plugin's Filter skipped for the cycle; Unschedulable / UnschedulableAndUnresolvable to
    reject the pod on every node (the message goes first in the FitError); a
    :class:`~kubesched.PreFilterResult` to narrow the candidate node names.
    """


@hookspec
def kubesched_pre_filter_add_pod(
    state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
) -> Status | None:
    """PreFilterExtensions.AddPod: ``pod_to_add`` is now assumed on ``node_info``.

    Update the PreFilter state in ``state`` (already a clone) accordingly.  Used by the nominated
    pods pass and by preemption's dry runs.
    """


@hookspec
def kubesched_pre_filter_remove_pod(
    state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
) -> Status | None:
    """PreFilterExtensions.RemovePod: the inverse of :func:`kubesched_pre_filter_add_pod`."""


@hookspec
def kubesched_filter(
    state: CycleState, pod: Pod, nodes: NodeBatch
) -> Mapping[int, Status] | None:
    """Filter: can ``pod`` run on each node of the batch?

    Return the failing nodes as ``{index in batch: Status}`` (Unschedulable,
    UnschedulableAndUnresolvable, or Error); ``None`` or an empty mapping means every node
    passes.  A node rejected by an earlier plugin is not in the batch.  Must be side-effect free:
    the same batch may be filtered again in preemption's dry runs.
    """


@hookspec
def kubesched_post_filter(
    state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
) -> tuple[PostFilterResult | None, Status | None] | Status | None:
    """PostFilter (may be async): the pod fit no node; try to make it fit (e.g. preemption).

    ``node_statuses`` holds each node's Filter status.  Return ``(result, Success)`` with a
    nominated node name to nominate the pod (and, for the recorded results, the ``victims``);
    Unschedulable when this plugin cannot help; Error on failure.  Plugins run in order until
    one succeeds.
    """


@hookspec
def kubesched_pre_score(state: CycleState, pod: Pod, nodes: NodeBatch) -> Status | None:
    """PreScore: once per cycle over the feasible nodes.  Skip removes the plugin's Score."""


@hookspec
def kubesched_score(state: CycleState, pod: Pod, nodes: NodeBatch) -> np.ndarray | Sequence[int]:
    """Score: one integer score per node of the batch (feasible nodes only).

    Scores are normalized by :func:`kubesched_normalize_score` if the plugin implements it, and
    must then lie within [0, 100]; the runtime multiplies them by the plugin's weight.
    """


@hookspec
def kubesched_normalize_score(state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
    """ScoreExtensions.NormalizeScore: rewrite ``scores`` (int64, one per node) in place."""


@hookspec
def kubesched_reserve(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Reserve: the pod is assumed on ``node_name``; claim what the plugin tracks.

    A non-Success status fails the cycle; Unreserve then runs for every Reserve plugin.
    """


@hookspec
def kubesched_unreserve(state: CycleState, pod: Pod, node_name: str) -> None:
    """Unreserve (may be async): undo Reserve.  Must be idempotent and must not fail."""


@hookspec
def kubesched_permit(
    state: CycleState, pod: Pod, node_name: str
) -> Status | tuple[Status | None, float] | None:
    """Permit: the last step of the scheduling cycle.

    Success lets the binding proceed; Unschedulable rejects; ``(Status.wait(), timeout_s)`` makes
    the pod a waiting pod until every waiting plugin allows it (through the handle's waiting
    pods) or one rejects it or the timeout (capped at 15 minutes) expires.
    """


@hookspec
def kubesched_pre_bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """PreBind (may be async): in the binding cycle, before Bind.  Failure unreserves the pod."""


@hookspec
def kubesched_bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Bind (may be async): bind the pod.  Return Skip to let the next bind plugin do it."""


@hookspec
def kubesched_post_bind(state: CycleState, pod: Pod, node_name: str) -> None:
    """PostBind (may be async): informational, after a successful bind."""


@hookspec
def kubesched_placement_generate(
    state: CycleState, pod_group: PodGroupInfo, parent: Placement
) -> Sequence[Placement] | Status:
    """PlacementGenerate (1.36, TopologyAwareWorkloadScheduling): the PodGroup cycle's candidate
    placements for ``pod_group`` within ``parent`` (a placement of every node, or one a plugin
    before this one made).

    Return the placements (each a named set of nodes; they may overlap, an empty sequence is
    none), ``[parent]`` when the plugin has no constraint for the group, or a non-Success Status
    (Unschedulable, Error) to end the cycle with it.  ``state`` is the group's cycle state.
    """


@hookspec
def kubesched_placement_score(state: CycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
    """PlacementScore (1.36, TopologyAwareWorkloadScheduling): an integer score of one placement
    the group fits, from ``assignments`` (the placement and the node proposed for each member
    placed on it).  Higher is better; scores are normalized by
    :func:`kubesched_normalize_placement_score` if the plugin implements it (then within
    [0, 100]), and multiplied by the plugin's weight.  Return a non-Success Status to fail the
    group's cycle.
    """


@hookspec
def kubesched_normalize_placement_score(
    state: CycleState, pod_group: PodGroupInfo, scores: list[PlacementScore]
) -> Status | None:
    """PlacementScoreExtensions.NormalizePlacementScore: rewrite the ``score`` of each of this
    plugin's ``scores`` (one per placement) in place."""


EXTENSION_POINTS: dict[str, str] = {
    "preEnqueue": "kubesched_pre_enqueue",
    "queueSort": "kubesched_queue_sort_less",
    "preFilter": "kubesched_pre_filter",
    "filter": "kubesched_filter",
    "postFilter": "kubesched_post_filter",
    "preScore": "kubesched_pre_score",
    "score": "kubesched_score",
    "reserve": "kubesched_reserve",
    "permit": "kubesched_permit",
    "preBind": "kubesched_pre_bind",
    "bind": "kubesched_bind",
    "postBind": "kubesched_post_bind",
    "placementGenerate": "kubesched_placement_generate",
    "placementScore": "kubesched_placement_score",
}
"""KubeSchedulerConfiguration extension point name → the hook a plugin implements for it
(``placementGenerate`` / ``placementScore``: from Kubernetes 1.36 only, :data:`POINTS_SINCE`)."""

POINTS_SINCE: dict[str, tuple[int, int]] = {"placementGenerate": (1, 36), "placementScore": (1, 36)}
"""The extension points that exist only from a Kubernetes minor on (kubescheduler.config.k8s.io/v1
``Plugins`` of k8s.io/kube-scheduler v0.36.0)."""

MAY_BE_ASYNC: frozenset[str] = frozenset(
    {
        "kubesched_post_filter",
        "kubesched_unreserve",
        "kubesched_pre_bind",
        "kubesched_bind",
        "kubesched_post_bind",
    }
)
"""The hooks that may be ``async def`` (the runtime awaits them); every other hook must be a
plain function."""


def implements(plugin: Any, hook: str) -> bool:
    """Does ``plugin`` carry a ``@hookimpl`` implementation of ``hook``?"""
    fn = getattr(plugin, hook, None)
    return fn is not None and hasattr(fn, PROJECT + "_impl")
