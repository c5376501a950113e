"""The Deployment controller of the fake cluster (``pkg/controller/deployment``).

Fed every Deployment and ReplicaSet change, after the ReplicaSet controller (``_controllers``)::

    Deployment ADDED ──► its ReplicaSet <deployment>-<pod-template-hash> (ScalingReplicaSet
                         "Scaled up replica set <rs> to <n>"), status Progressing
                         NewReplicaSetCreated; or, when it already controls a ReplicaSet of its
                         template (an exported cluster), that one (FoundNewReplicaSet)
    Deployment changed ─► its ReplicaSets scaled to its replicas ("Scaled up|down replica set
                         <rs> to <n> from <m>"), then its status
    ReplicaSet changed ─► its Deployment's status (the sums, Available, Progressing:
                         ``_workload_status``)

Rolling updates of the template are not emulated (the ReplicaSet keeps the template it was made
with; a Deployment whose template changed has no new ReplicaSet, so ``updatedReplicas`` is 0, as
upstream's ``calculateStatus`` gives it then).  Status is written through the status
subresource (no new generation).  With ``timers`` (outside a deterministic simulation) the
Deployment is synced again when its progress deadline passes, as upstream's
``requeueStuckDeployment``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from msgspec.structs import replace

from kubesched.api import Deployment, ObjectMeta, ReplicaSet, ReplicaSetSpec, to_builtins
from kubesched.api import copy as _copy

from ._controllers import controller_of, owner_reference, pod_template_hash
from ._store import Change, Controller
from ._workload_status import deployment_status, new_replica_set_condition

if TYPE_CHECKING:
    from ._store import Store

__all__ = ["Deployments"]


class ClusterAPI(Protocol):
    """What the Deployment controller needs of the cluster."""

    def create(self, obj: Any) -> Any: ...
    def update(self, obj: Any) -> Any: ...
    def timestamp(self, offset: float | None = None) -> str: ...
    def record(
        self, kind: str, reason: str, obj: Any, message: str, type_: str = "Normal"
    ) -> None: ...
    def delete_now(self, kind: str, namespace: str, name: str, *, graceful: bool) -> None: ...


class Deployments(Controller):
    """The Deployment controller (see the module docstring)."""

    kinds = ("Deployment", "ReplicaSet")

    def __init__(self, store: Store, cluster: ClusterAPI, *, timers: bool = True) -> None:
        super().__init__(store)
        self.cluster = cluster
        self.timers = timers
        self._resyncs: list[tuple[float, int, str, str]] = []  # (when, seq, namespace, name)
        self._scheduled: set[tuple[str, str]] = set()
        # Deployment uid -> (what the answer depends on, its new ReplicaSet's name)
        self._new_rs: dict[str, tuple[tuple[Any, ...], str | None]] = {}
        self._seq = 0
        self._wake: anyio.Event | None = None
        self._scope = anyio.CancelScope()

    # --- fed by the store --------------------------------------------------------------------

    def observe(self, change: Change) -> None:
        obj = change.obj
        ns = obj.metadata.namespace
        if change.kind == "ReplicaSet":
            ref = controller_of(obj)
            if ref is not None and ref.kind == "Deployment":
                d = self.store.get("Deployment", (ns, ref.name))
                if d is not None and d.metadata.uid == ref.uid:
                    self._sync_status(d)
            return
        if change.verb == "status":
            return  # its own status write: nothing to reconcile
        if change.type == "DELETED":
            self._new_rs.pop(obj.metadata.uid, None)
            for rs in self._owned(obj):
                self.cluster.delete_now("ReplicaSet", ns, rs.metadata.name, graceful=False)
            return
        d = self.store.get("Deployment", (ns, obj.metadata.name))
        if d is None or d.metadata.uid != obj.metadata.uid:
            return
        if change.type == "ADDED":
            self._create_replica_set(d)
            return
        want = 1 if d.spec.replicas is None else d.spec.replicas
        for rs in self._owned(d):
            old = 1 if rs.spec.replicas is None else rs.spec.replicas
            if old != want:
                op = "up" if want > old else "down"
                self.cluster.record(
                    "Deployment",
                    "ScalingReplicaSet",
                    d,
                    f"Scaled {op} replica set {rs.metadata.name} to {want} from {old}",
                )
                spec = replace(rs.spec, replicas=want)
                self.cluster.update(
                    replace(rs, metadata=replace(rs.metadata, resource_version=""), spec=spec)
                )
        self._sync_status(d)

    def _create_replica_set(self, d: Deployment) -> None:
        """``getNewReplicaSet``: the new ReplicaSet (or the one found), and the Progressing
        condition saying so."""
        ns, name = d.metadata.namespace, d.metadata.name
        found = self._new(d, self._owned(d))
        if found is not None:
            status = new_replica_set_condition(
                d, found.metadata.name, self.cluster.timestamp(), found=True
            )
        else:
            want = 1 if d.spec.replicas is None else d.spec.replicas
            h = pod_template_hash(d.spec.template)
            tmpl = _copy(d.spec.template)
            tmpl.metadata.labels = {**tmpl.metadata.labels, "pod-template-hash": h}
            selector = _copy(d.spec.selector) if d.spec.selector is not None else None
            if selector is not None:
                selector.match_labels = {**selector.match_labels, "pod-template-hash": h}
            rs = ReplicaSet(
                metadata=ObjectMeta(
                    name=f"{name}-{h}",
                    namespace=ns,
                    labels=dict(tmpl.metadata.labels),
                    owner_references=[owner_reference(d)],
                ),
                spec=ReplicaSetSpec(
                    replicas=want,
                    selector=selector,
                    template=tmpl,
                    min_ready_seconds=d.spec.min_ready_seconds,
                ),
            )
            self.cluster.record(
                "Deployment",
                "ScalingReplicaSet",
                d,
                f"Scaled up replica set {rs.metadata.name} to {want}",
            )
            self.cluster.create(rs)
            status = new_replica_set_condition(
                d, rs.metadata.name, self.cluster.timestamp(), found=False
            )
        self._write_status(d, status)

    def _sync_status(self, d: Deployment) -> None:
        owned = self._owned(d)
        status, deadline_in = deployment_status(
            d, owned, self._new(d, owned), self.cluster.timestamp()
        )
        self._write_status(d, status)
        key = (d.metadata.namespace, d.metadata.name)
        if deadline_in is not None and self.timers and key not in self._scheduled:
            # (a later deadline is found when this one is checked) a little after it:
            # DeploymentTimedOut asks that it be strictly past
            self._scheduled.add(key)
            self._seq += 1
            heapq.heappush(
                self._resyncs, (anyio.current_time() + deadline_in + 0.001, self._seq, *key)
            )
            if self._wake is not None:
                self._wake.set()

    def _write_status(self, d: Deployment, status: Any) -> None:
        if status != d.status:
            new = replace(d, metadata=replace(d.metadata), status=status)
            self.store.put(
                "Deployment", (d.metadata.namespace, d.metadata.name), new, "MODIFIED", "status"
            )

    def _new(self, d: Deployment, owned: list[ReplicaSet]) -> ReplicaSet | None:
        """``FindNewReplicaSet``: the oldest ReplicaSet whose template is the Deployment's (the
        pod-template-hash label aside); kept while no template changes (no new generation)."""
        basis = (d.metadata.generation, *((rs.metadata.uid, rs.metadata.generation) for rs in owned))
        cached = self._new_rs.get(d.metadata.uid)
        if cached is not None and cached[0] == basis:
            return next((rs for rs in owned if rs.metadata.name == cached[1]), None)
        new = self._find_new(d, owned)
        self._new_rs[d.metadata.uid] = (basis, new.metadata.name if new is not None else None)
        return new

    def _find_new(self, d: Deployment, owned: list[ReplicaSet]) -> ReplicaSet | None:
        want = _copy(d.spec.template)
        want.metadata.labels.pop("pod-template-hash", None)
        wanted = to_builtins(want)
        for rs in sorted(
            owned, key=lambda r: (r.metadata.creation_timestamp or "", r.metadata.name)
        ):
            have = _copy(rs.spec.template)
            have.metadata.labels.pop("pod-template-hash", None)
            if to_builtins(have) == wanted:
                return rs
        return None

    def _owned(self, d: Deployment) -> list[ReplicaSet]:
        """The ReplicaSets the Deployment controls, by name."""
        out = []
        for rs in self.store.in_namespace("ReplicaSet", d.metadata.namespace):
            ref = controller_of(rs)
            if ref is not None and ref.kind == "Deployment" and ref.uid == d.metadata.uid:
                out.append(rs)
        return sorted(out, key=lambda r: r.metadata.name)

    # --- the timer task: progress deadlines --------------------------------------------------

    def tasks(self) -> tuple[Callable[[], Any], ...]:
        return (self._run,) if self.timers else ()

    def close(self) -> None:
        self._scope.cancel()

    async def _run(self) -> None:
        heap = self._resyncs
        with self._scope:
            while True:
                now = anyio.current_time()
                while heap and heap[0][0] <= now:
                    _, _, ns, name = heapq.heappop(heap)
                    self._scheduled.discard((ns, name))
                    d = self.store.get("Deployment", (ns, name))
                    if d is not None:
                        self._sync_status(d)
                self._wake = wake = anyio.Event()
                with anyio.CancelScope(deadline=heap[0][0] if heap else math.inf):
                    await wake.wait()
