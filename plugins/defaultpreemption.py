"""DefaultPreemption: PostFilter preemption and the async-preemption PreEnqueue gate.

Upstream ``plugins/defaultpreemption``, on top of the preemption package ``core/preemption/``
(upstream ``framework/preemption``: the Evaluator's flow, the dry run, victim selection, the
candidate rules, sync and async preparation), which it reaches through
:class:`kubesched.framework.Evaluator`.  This module holds the plugin, its args
(``DefaultPreemptionArgs``) and their validation.

- PostFilter: ``Evaluator.preempt``; a non-empty message is prefixed with ``"preemption: "``.
- PreEnqueue (gate ``SchedulerAsyncPreemption``): a pod whose victims are still being deleted in
  the background is held with UnschedulableAndUnresolvable("waiting for the preemption for this
  pod to be finished").
- EventsToRegister (async only): AssignedPod/Delete with a hint that is always QueueSkip: the
  registration only lets victim deletions reach a gated preemptor; the plugins that rejected the
  pod decide whether it is requeued.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    MSG_WAITING_FOR_PREEMPTION,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    ConfigError,
    Evaluator,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    go_value,
    hookimpl,
)

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Pod, PostFilterResult

NAME = "DefaultPreemption"
ASYNC_PREEMPTION_GATE = "SchedulerAsyncPreemption"


def parse_args(args: Mapping[str, Any] | None) -> tuple[int, int]:
    """Default and validate ``DefaultPreemptionArgs``: (minCandidateNodesPercentage, absolute).

    Raises :class:`~kubesched.ConfigError` with upstream's field and message.
    """
    args = args or {}
    if not isinstance(args, Mapping):
        raise ConfigError("Invalid value: must be a mapping")
    for key in args:
        if key not in ("minCandidateNodesPercentage", "minCandidateNodesAbsolute", "apiVersion", "kind"):
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
    values: dict[str, int] = {}
    for key, default in (
        ("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE),
        ("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE),
    ):
        v = args.get(key)
        if v is None:
            v = default
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"Invalid value: {go_value(v)}: must be an integer", field=key)
        values[key] = v
    pct = values["minCandidateNodesPercentage"]
    absolute = values["minCandidateNodesAbsolute"]
    if pct < 0 or pct > 100:
        raise ConfigError(
            f"Invalid value: {pct}: not in valid range [0, 100]",
            field="minCandidateNodesPercentage",
        )
    if absolute < 0:
        raise ConfigError(
            f"Invalid value: {absolute}: not in valid range [0, inf)",
            field="minCandidateNodesAbsolute",
        )
    if pct == 0 and absolute == 0:
        raise ConfigError(
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
            field="minCandidateNodesPercentage",
        )
    return pct, absolute


class DefaultPreemption:
    """PostFilter: preempt lower-priority pods so that the pod fits (see the module docstring).

    ``evaluator`` is the :class:`~kubesched.framework.Evaluator`; its ``is_eligible_pod`` and
    ``more_important_pod`` are upstream's ``IsEligiblePod`` / ``MoreImportantPod`` hooks.
    """

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        pct, absolute = parse_args(args)
        self.min_candidate_nodes_percentage = pct
        self.min_candidate_nodes_absolute = absolute
        self.evaluator = Evaluator(
            NAME,
            handle,
            min_candidate_nodes_percentage=pct,
            min_candidate_nodes_absolute=absolute,
            enable_async_preemption=self.async_enabled,
        )

    def async_enabled(self) -> bool:
        """The ``SchedulerAsyncPreemption`` gate, as the handle has it now."""
        return bool(self.handle.feature_gates.get(ASYNC_PREEMPTION_GATE, False))

    @hookimpl
    async def kubesched_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        try:
            result, status = await self.evaluator.preempt(state, pod, node_statuses)
        finally:
            self.handle.metrics.preemption_attempts += 1
        msg = status.message
        if msg:
            return result, Status(status.code, "preemption: " + msg, error=status.error)
        return result, status

    @hookimpl
    def kubesched_pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.handle.feature_gates.get(ASYNC_PREEMPTION_GATE, False):  # async_enabled(), inlined: every pod asks
            return None
        if self.evaluator.is_pod_running_preemption(pod.metadata.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_WAITING_FOR_PREEMPTION)
        return None

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.async_enabled():
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_pod_schedulable_after_assigned_pod_deletion,
            )
        ]

    def is_pod_schedulable_after_assigned_pod_deletion(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """Always QueueSkip: the plugins whose failures the preemption resolves decide."""
        return QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any] | None, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args, handle)


__all__ = ["ASYNC_PREEMPTION_GATE", "NAME", "DefaultPreemption", "new", "parse_args"]
