"""The status the workload controllers write: ReplicaSets' and Deployments', as upstream computes it.

- ReplicaSet (``pkg/controller/replicaset/replica_set_utils.go`` ``calculateStatus``, v1.35):
  ``replicas`` its active pods (not terminal, not terminating), ``fullyLabeledReplicas`` those
  carrying every label of its template, ``readyReplicas`` those Ready, ``availableReplicas``
  those Ready for longer than ``minReadySeconds`` (``podutil.IsPodAvailable``: strictly),
  ``observedGeneration`` its generation.
- Deployment (``pkg/controller/deployment``: ``sync.go`` ``calculateStatus``, ``progress.go``
  ``syncRolloutStatus``, ``util/deployment_util.go``, v1.35): the sums over its ReplicaSets
  (``updatedReplicas``: the new one's, the one whose template is the Deployment's), the
  ``Available`` condition (``MinimumReplicasAvailable`` "Deployment has minimum availability."
  once ``availableReplicas`` >= replicas - maxUnavailable, else ``MinimumReplicasUnavailable``
  "Deployment does not have minimum availability."), and ``Progressing``: ``NewReplicaSetCreated``
  "Created new replica set \\"x\\"" when it makes its ReplicaSet (``FoundNewReplicaSet`` "Found new
  replica set \\"x\\"" for one it adopts), ``ReplicaSetUpdated`` "ReplicaSet \\"x\\" is progressing."
  while more pods are updated, ready or available, ``NewReplicaSetAvailable`` "ReplicaSet \\"x\\" has
  successfully progressed." once complete, ``ProgressDeadlineExceeded`` "ReplicaSet \\"x\\" has
  timed out progressing." when no progress was made for ``progressDeadlineSeconds``, and
  ``DeploymentPaused`` "Deployment is paused" / ``DeploymentResumed`` "Deployment is resumed".

Times are the cluster's RFC 3339 timestamps; ``now`` is the instant they are taken at.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from datetime import datetime

from msgspec.structs import replace

from kubesched.api import (
    Deployment,
    DeploymentCondition,
    DeploymentStatus,
    ReplicaSet,
    ReplicaSetStatus,
)

__all__ = [
    "NEW_RS_AVAILABLE",
    "available_after",
    "deployment_status",
    "new_replica_set_condition",
    "parse_time",
    "progress_deadline",
    "replica_set_status",
]

# pkg/controller/deployment/util/deployment_util.go (unchanged v1.30 … v1.35)
REPLICA_SET_UPDATED = "ReplicaSetUpdated"
NEW_REPLICA_SET = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MINIMUM_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_UNAVAILABLE = "MinimumReplicasUnavailable"
_NO_DEADLINE = 2**31 - 1  # progressDeadlineSeconds: math.MaxInt32 means none


def parse_time(ts: str) -> datetime:
    """An RFC 3339 timestamp of the cluster."""
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def available_after(ready_since: str, min_ready: int, now: datetime | None) -> float | None:
    """Seconds until a pod Ready since ``ready_since`` is available (``IsPodAvailable``: Ready
    for strictly more than ``min_ready`` seconds); None when it already is (``now`` is needed
    only when ``min_ready`` is positive)."""
    if min_ready <= 0 or now is None:
        return None
    left = (parse_time(ready_since) - now).total_seconds() + min_ready
    return left if left >= 0 else None


def replica_set_status(
    rs: ReplicaSet, active: int, labeled: int, ready: Collection[str], now: datetime | None
) -> tuple[ReplicaSetStatus, float | None]:
    """The status of ``rs`` with ``active`` pods, ``labeled`` of them fully labelled, the Ready
    ones Ready since the times ``ready``; and the seconds until one more becomes available (None:
    none will without a change)."""
    min_ready = rs.spec.min_ready_seconds
    n_ready = available = 0
    soonest: float | None = None
    if min_ready <= 0 or now is None:  # available as soon as Ready
        n_ready = available = len(ready)
        ready = ()
    for since in ready:
        n_ready += 1
        left = available_after(since, min_ready, now)
        if left is None:
            available += 1
        elif soonest is None or left < soonest:
            soonest = left
    status = replace(
        rs.status,
        replicas=active,
        fully_labeled_replicas=labeled,
        ready_replicas=n_ready,
        available_replicas=available,
        observed_generation=rs.metadata.generation,
    )
    return status, soonest


# --- Deployment --------------------------------------------------------------------------------


def _scaled(value: int | str | None, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` (validation refused anything else)."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    try:
        pct = int(value.removesuffix("%"))
    except ValueError:
        return 0
    return math.ceil(pct * total / 100) if round_up else math.floor(pct * total / 100)


def max_unavailable(d: Deployment, replicas: int) -> int:
    """``deploymentutil.MaxUnavailable``: 0 for Recreate; RollingUpdate's (25% by default),
    with ``ResolveFenceposts`` making it 1 when both it and maxSurge are 0."""
    strategy = d.spec.strategy
    if strategy is not None and strategy.type not in ("", "RollingUpdate"):
        return 0
    rolling = strategy.rolling_update if strategy is not None else None
    surge_v = rolling.max_surge if rolling is not None else "25%"
    unavail_v = rolling.max_unavailable if rolling is not None else "25%"
    surge = _scaled(surge_v, replicas, round_up=True)
    unavailable = _scaled(unavail_v, replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return min(unavailable, replicas)


def progress_deadline(d: Deployment) -> int | None:
    """``progressDeadlineSeconds`` (600 by default); None when it has none (``HasProgressDeadline``)."""
    seconds = d.spec.progress_deadline_seconds
    seconds = 600 if seconds is None else seconds
    return None if seconds == _NO_DEADLINE else seconds


def _condition(
    status: str, reason: str, message: str, now: str, type_: str = "Progressing"
) -> DeploymentCondition:
    return DeploymentCondition(
        type=type_,
        status=status,
        reason=reason,
        message=message,
        last_update_time=now,
        last_transition_time=now,
    )


def _get(conditions: list[DeploymentCondition], type_: str) -> DeploymentCondition | None:
    return next((c for c in conditions if c.type == type_), None)


def _set(
    conditions: list[DeploymentCondition], cond: DeploymentCondition
) -> list[DeploymentCondition]:
    """``SetDeploymentCondition``: unchanged when its status and reason are; else appended after
    the others (lastTransitionTime kept when its status is)."""
    current = _get(conditions, cond.type)
    if current is not None and (current.status, current.reason) == (cond.status, cond.reason):
        return conditions
    if current is not None and current.status == cond.status:
        cond = replace(cond, last_transition_time=current.last_transition_time)
    return [*(c for c in conditions if c.type != cond.type), cond]


def new_replica_set_condition(
    d: Deployment, rs_name: str, now: str, *, found: bool
) -> DeploymentStatus:
    """The Deployment's status once its new ReplicaSet is made (``getNewReplicaSet``), or found
    when it had no Progressing condition yet."""
    if progress_deadline(d) is None:
        return d.status
    conditions = d.status.conditions
    if found:
        if _get(conditions, "Progressing") is not None:
            return d.status
        cond = _condition("True", FOUND_NEW_RS, f'Found new replica set "{rs_name}"', now)
    else:
        cond = _condition("True", NEW_REPLICA_SET, f'Created new replica set "{rs_name}"', now)
    return replace(d.status, conditions=_set(conditions, cond))


def deployment_status(
    d: Deployment, all_rs: list[ReplicaSet], new_rs: ReplicaSet | None, now: str
) -> tuple[DeploymentStatus, float | None]:
    """The Deployment's status after a sync (``syncRolloutStatus``, or ``syncDeploymentStatus``
    when paused); and the seconds until its progress deadline passes (None: not pending)."""
    replicas = 1 if d.spec.replicas is None else d.spec.replicas
    deadline = progress_deadline(d)
    conditions = list(d.status.conditions)
    progressing = _get(conditions, "Progressing")
    # checkPausedConditions
    if deadline is not None and (progressing is None or progressing.reason != TIMED_OUT):
        paused_cond = progressing is not None and progressing.reason == PAUSED
        if d.spec.paused and not paused_cond:
            conditions = _set(
                conditions, _condition("Unknown", PAUSED, "Deployment is paused", now)
            )
        elif not d.spec.paused and paused_cond:
            conditions = _set(
                conditions, _condition("Unknown", RESUMED, "Deployment is resumed", now)
            )
    available = sum(rs.status.available_replicas for rs in all_rs)
    total = sum(1 if rs.spec.replicas is None else rs.spec.replicas for rs in all_rs)
    status = DeploymentStatus(
        observed_generation=d.metadata.generation,
        replicas=sum(rs.status.replicas for rs in all_rs),
        updated_replicas=new_rs.status.replicas if new_rs is not None else 0,
        ready_replicas=sum(rs.status.ready_replicas for rs in all_rs),
        available_replicas=available,
        unavailable_replicas=max(0, total - available),
    )
    if available >= replicas - max_unavailable(d, replicas):
        avail = _condition(
            "True", MINIMUM_AVAILABLE, "Deployment has minimum availability.", now, "Available"
        )
    else:
        avail = _condition(
            "False",
            MINIMUM_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
            "Available",
        )
    conditions = _set(conditions, avail)
    if d.spec.paused:
        return replace(status, conditions=conditions), None
    return _progress(d, status, conditions, new_rs, replicas, deadline, now)


def _progress(
    d: Deployment,
    status: DeploymentStatus,
    conditions: list[DeploymentCondition],
    new_rs: ReplicaSet | None,
    replicas: int,
    deadline: int | None,
    now: str,
) -> tuple[DeploymentStatus, float | None]:
    """``syncRolloutStatus``'s Progressing condition."""
    if deadline is None:
        return replace(status, conditions=[c for c in conditions if c.type != "Progressing"]), None
    current = _get(conditions, "Progressing")
    complete_before = (
        status.replicas == status.updated_replicas
        and current is not None
        and current.reason == NEW_RS_AVAILABLE
    )
    if complete_before:
        return replace(status, conditions=conditions), None
    old = d.status
    who = (
        f'ReplicaSet "{new_rs.metadata.name}"'
        if new_rs is not None
        else f'Deployment "{d.metadata.name}"'
    )
    if (status.updated_replicas, status.replicas, status.available_replicas) == (
        replicas,
    ) * 3 and (status.observed_generation >= d.metadata.generation):  # DeploymentComplete
        conditions = _set(
            conditions,
            _condition("True", NEW_RS_AVAILABLE, f"{who} has successfully progressed.", now),
        )
        return replace(status, conditions=conditions), None
    if (
        status.updated_replicas > old.updated_replicas
        or status.replicas - status.updated_replicas < old.replicas - old.updated_replicas
        or status.ready_replicas > old.ready_replicas
        or status.available_replicas > old.available_replicas
    ):  # DeploymentProgressing: lastUpdateTime moves, lastTransitionTime kept while True
        cond = _condition("True", REPLICA_SET_UPDATED, f"{who} is progressing.", now)
        if current is not None and current.status == "True":
            cond = replace(cond, last_transition_time=current.last_transition_time)
        conditions = [*(c for c in conditions if c.type != "Progressing"), cond]
        return replace(status, conditions=conditions), float(deadline)
    if current is None or current.reason == NEW_RS_AVAILABLE:
        return replace(status, conditions=conditions), None
    if current.reason != TIMED_OUT:  # DeploymentTimedOut: lastUpdateTime + deadline before now
        since = current.last_update_time or now
        left = (parse_time(since) - parse_time(now)).total_seconds() + deadline
        if left >= 0:
            return replace(status, conditions=conditions), left
    conditions = _set(
        conditions, _condition("False", TIMED_OUT, f"{who} has timed out progressing.", now)
    )
    return replace(status, conditions=conditions), None
