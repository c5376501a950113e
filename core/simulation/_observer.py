"""What a simulation sees of its cluster through one watch, as it happens.

Every event of the watch goes to :meth:`Observer.see`, in the order the cluster made them:

- a Pod: its :class:`PodRecord` (created, scheduled, finished, deleted and when its deletion
  began, owner), opened when a pod
  (or a new pod of the same name) appears; the timeline's pending and running counts;
- a Node: the timeline's capacity;
- a Job, ReplicaSet, Deployment or StatefulSet: its row of ``workloads`` (created, completed);
- any change that matters to whether the run is still going (a pod created, bound, finished or
  deleted, a node changed): :attr:`Observer.last_change`, which ends a run that only retries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio

from kubesched.api._objects import Node, Pod
from kubesched.api._resources import NEWEST_RULES, RequestRules
from kubesched.simulation._result import PodRecord
from kubesched.simulation._timeline import Timeline
from kubesched.transports.fake._controllers import controller_of

WORKLOAD_KINDS = ("Job", "ReplicaSet", "Deployment", "StatefulSet")

PodKey = tuple[str, str]
WorkloadKey = tuple[str, str, str]


class Observer:
    """The records of one run, kept from its watch events (see the module docstring)."""

    def __init__(
        self, start: float, progress: Callable[[float, int], None] | None = None, rules: RequestRules = NEWEST_RULES
    ) -> None:
        self.start = start
        """The anyio time of the run's start: event times are virtual seconds since then."""
        self.progress = progress
        self.records: dict[PodKey, PodRecord] = {}
        self.timeline = Timeline(rules)
        self.workloads: dict[WorkloadKey, dict[str, Any]] = {}
        self.last_change = 0.0
        """Virtual seconds of the last change in the cluster that the run's end waits on."""
        self._deployment_of: dict[PodKey, WorkloadKey] = {}  # ReplicaSet -> its Deployment
        self._owned: Counter[WorkloadKey] = Counter()  # pods created per owner
        self._bound: set[PodKey] = set()  # for ``progress`` only

    def see(self, event: Any) -> None:
        """One watch event."""
        obj = event.obj
        now = round(anyio.current_time() - self.start, 6)
        deleted = event.type == "DELETED"
        if isinstance(obj, Pod):
            self._pod(obj, deleted, now)
        elif isinstance(obj, Node):
            self.last_change = now
            self.timeline.node(obj, deleted, now)
        elif type(obj).__name__ in WORKLOAD_KINDS:
            self._workload(obj, deleted, now)
        if self.progress is not None and isinstance(obj, Pod):
            if obj.spec.node_name:
                self._bound.add((obj.metadata.namespace, obj.metadata.name))
            self.progress(anyio.current_time() - self.start, len(self._bound))

    def _pod(self, pod: Pod, deleted: bool, now: float) -> None:
        key = (pod.metadata.namespace, pod.metadata.name)
        rec = self.records.get(key)
        old = rec.pod if rec is not None else None
        if (
            old is None
            or deleted
            or old.spec.node_name != pod.spec.node_name
            or old.status.phase != pod.status.phase
            or bool(old.metadata.deletion_timestamp) != bool(pod.metadata.deletion_timestamp)
        ):
            self.last_change = now
        if rec is None or rec.pod.metadata.uid != pod.metadata.uid:
            rec = self.records[key] = PodRecord(pod, created_at=now)
            ref = controller_of(pod)
            if ref is not None:
                rec.owner = f"{ref.kind}/{pod.metadata.namespace}/{ref.name}"
                self._owned[(ref.kind, pod.metadata.namespace, ref.name)] += 1
        rec.pod = pod
        if pod.spec.node_name and rec.scheduled_at is None:
            rec.scheduled_at = now
        if pod.status.phase == "Succeeded" and rec.finished_at is None:
            rec.finished_at = now
        if rec.deleted_at is None and (deleted or pod.metadata.deletion_timestamp):
            rec.deleted_at = now
        if deleted:
            rec.deleted = True
        self.timeline.pod(key, pod, deleted, now)

    def _workload(self, obj: Any, deleted: bool, now: float) -> None:
        md = obj.metadata
        key = (obj.kind, md.namespace, md.name)
        if key not in self.workloads and not deleted:
            self.workloads[key] = {
                "kind": obj.kind, "namespace": md.namespace, "name": md.name,
                "createdAt": now, "completedAt": None, "pods": 0,
            }  # fmt: skip
            ref = controller_of(obj)
            if obj.kind == "ReplicaSet" and ref is not None and ref.kind == "Deployment":
                self._deployment_of[(md.namespace, md.name)] = ("Deployment", md.namespace, ref.name)
        row = self.workloads.get(key)
        conditions = obj.status.conditions if obj.kind == "Job" else []
        if row is not None and row["completedAt"] is None and any(
            c.type == "Complete" and c.status == "True" for c in conditions
        ):
            row["completedAt"] = now

    def workload_rows(self) -> list[dict[str, Any]]:
        """The ``workloads`` section: each workload with the pods it (or, for a Deployment, its
        ReplicaSets) created."""
        rows = {key: dict(row) for key, row in self.workloads.items()}
        for (kind, ns, name), n in self._owned.items():
            if (kind, ns, name) in rows:
                rows[(kind, ns, name)]["pods"] += n
            deployment = self._deployment_of.get((ns, name)) if kind == "ReplicaSet" else None
            if deployment is not None and deployment in rows:
                rows[deployment]["pods"] += n
        return list(rows.values())
