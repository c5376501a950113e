"""The workload controllers of the fake cluster: pods that finish, Jobs, ReplicaSets.

Each is a small reconciler fed the store's writes (``observe``) through a narrow interface to the
cluster (create / update / get objects, delete a pod with its grace period, record an event).
A write made by a controller is fed back in turn, breadth first, so every effect happens at a
fixed point: inside the write that caused it, in the order the writes were made.  Timed work
(a pod's ``kubesched.io/duration``) is a heap the deterministic loop drains at its deadlines
(``next_due`` / ``run_due``), like the kubelet's terminations.

Upstream behaviour followed (kube-controller-manager, 1.30):

- kubelet: a running pod with ``kubesched.io/duration: D`` becomes ``Succeeded`` D after it
  started (its containers exited 0).
- Job: ``parallelism`` (default 1) pods at a time until ``completions`` (default: parallelism)
  have succeeded; ``completionMode: Indexed`` gives each pod an index (annotation and label
  ``batch.kubernetes.io/job-completion-index``, hostname ``<job>-<index>``, name
  ``<job>-<index>-<random>``); a pod that fails or is deleted before succeeding (e.g. preempted)
  counts as failed and is replaced (podReplacementPolicy TerminatingOrFailed: at once) until
  more than ``backoffLimit`` (default 6) have failed.  Events ``SuccessfulCreate`` "Created pod:
  <name>", ``Completed`` "Job completed", ``BackoffLimitExceeded`` "Job has reached the
  specified backoff limit".  The backoff delay between replacements is not emulated.  Status:
  ``active``, ``ready`` (active pods Ready), ``succeeded``, ``failed``, ``startTime``; when it
  ends, ``completionTime`` and the conditions upstream's ``job_controller.go`` (v1.35) writes:
  ``SuccessCriteriaMet`` then ``Complete`` (reason ``CompletionsReached``, "Reached expected
  number of succeeded pods"), or ``FailureTarget`` then ``Failed`` (``BackoffLimitExceeded``,
  "Job has reached the specified backoff limit").
- ReplicaSet: ``replicas`` (default 1) pods not terminating and not terminal, names
  ``<rs>-<5 random chars>``; ``SuccessfulCreate`` / ``SuccessfulDelete`` "Deleted pod: <name>".
  Status (``_workload_status``): replicas, fullyLabeledReplicas, readyReplicas,
  availableReplicas (Ready for more than ``minReadySeconds``: with ``timers``, the ReplicaSet is
  synced again when a pod's time comes), observedGeneration.
- Deployment: ``_deployments.py``.
- Deleting an owner deletes what it owns (the garbage collector, foreground).
- Status is written through the status subresource: a new resourceVersion, never a new
  generation.

Random names come from one ``random.Random(seed)``: the same seed gives the same names.
"""

from __future__ import annotations

import heapq
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from msgspec.structs import replace

from kubesched.api import (
    Job,
    JobCondition,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    ReplicaSet,
    parse_duration,
    to_builtins,
)
from kubesched.api import copy as _copy

from ._kubelet import is_ready
from ._store import Change, Controller
from ._workload_status import parse_time, replica_set_status

MAX_PODS = 1_000_000
"""The most pods the controllers keep in one cluster: a create beyond it is a FailedCreate event."""

if TYPE_CHECKING:
    from ._store import Store

DURATION_ANNOTATION = "kubesched.io/duration"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
TERMINAL = ("Succeeded", "Failed")
# utilrand.String's alphabet (no vowels, no confusable characters)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

__all__ = [
    "DURATION_ANNOTATION",
    "INDEX_ANNOTATION",
    "Controllers",
    "controller_of",
    "owner_reference",
    "pod_template_hash",
    "put_status",
]


class ClusterAPI(Protocol):
    """What the controllers need of the cluster."""

    def create(self, obj: Any) -> Any: ...
    def update(self, obj: Any) -> Any: ...
    def get(self, kind: str | type[Any], namespace: str, name: str) -> Any | None: ...
    def timestamp(self, offset: float | None = None) -> str: ...
    def record(self, kind: str, reason: str, obj: Any, message: str, type_: str = "Normal") -> None: ...
    def delete_now(self, kind: str, namespace: str, name: str, *, graceful: bool) -> None: ...
    def set_pod_phase(self, pod: Pod, phase: str) -> None: ...


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: each character mapped into the no-vowel alphabet."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in s)


def pod_template_hash(template: PodTemplateSpec) -> str:
    """controller.ComputeHash's shape: FNV-32a of the template, SafeEncodeString of the number."""
    data = json.dumps(to_builtins(template), sort_keys=True, separators=(",", ":")).encode()
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


class APIObject(Protocol):
    """Any API object: what the controllers read of every kind (``controller_of``)."""

    @property
    def metadata(self) -> ObjectMeta: ...


def controller_of(obj: APIObject) -> OwnerReference | None:
    """The owner reference marked ``controller`` (``metav1.GetControllerOf``), if any."""
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return ref
    return None


@dataclass
class _JobState:
    active: dict[str, int] = field(default_factory=dict)  # pod name -> index (-1: NonIndexed)
    succeeded: int = 0
    failed: int = 0
    done_indexes: set[int] = field(default_factory=set)
    finished: bool = False


class Controllers(Controller):
    """Pods' durations and the Job and ReplicaSet controllers of one cluster (the Deployment
    controller is ``_deployments``)."""

    kinds = ("Pod", "Node", "Job", "ReplicaSet")
    # a plain pod has no duration annotation and no owner (Job, ReplicaSet): _on_pod does nothing
    # until it goes, and then only forgets a timed uid, which a plain pod never had
    follows_plain_pods = False

    def __init__(
        self, store: Store, cluster: ClusterAPI, *, seed: int = 0, timers: bool = True, max_pods: int = MAX_PODS
    ) -> None:
        super().__init__(store)
        self.cluster = cluster
        self.max_pods = max_pods
        self.refused_creates = 0  # pods not created because the cluster held max_pods
        self.rng = random.Random(seed)
        self.timers = timers
        self.deleted_nodes: set[str] = set()
        self._wake: anyio.Event | None = None
        self._scope = anyio.CancelScope()
        self._finish_heap: list[tuple[float, int, str, str, str]] = []
        self._seq = 0
        self._timed: set[str] = set()  # uids whose finish is scheduled
        self._jobs: dict[tuple[str, str], _JobState] = {}
        # ReplicaSet key -> names of its pods that count (not terminating, not terminal)
        self._rs_active: dict[tuple[str, str], set[str]] = {}
        # ReplicaSet key -> its active pods that are Ready (name -> the Ready condition's
        # lastTransitionTime), and those that carry every label of its template
        self._rs_ready: dict[tuple[str, str], dict[str, str]] = {}
        self._rs_labeled: dict[tuple[str, str], set[str]] = {}
        self._resyncs: list[tuple[float, int, str, str]] = []  # ReplicaSets' availability
        self._counted: set[str] = set()  # uids of Job pods already counted as failed/succeeded

    # --- fed by the store -------------------------------------------------------------------

    def observe(self, change: Change) -> None:
        type_, obj = change.type, change.obj
        if change.kind == "Node":
            if type_ == "DELETED":
                self.deleted_nodes.add(obj.metadata.name)
            return
        if isinstance(obj, Pod):
            self._on_pod(type_, obj)
        elif isinstance(obj, Job):
            self._on_job(type_, obj)
        elif isinstance(obj, ReplicaSet) and change.verb != "status":  # (its own status write)
            self._on_rs(type_, obj)

    # --- timed work: pods that finish --------------------------------------------------------

    def tasks(self) -> tuple[Callable[[], Any], ...]:
        return (self._run,) if self.timers else ()

    def close(self) -> None:
        self._scope.cancel()

    async def _run(self) -> None:
        """Outside a simulation: end each pod at its duration (the kubelet's timer), and sync a
        ReplicaSet again when one of its pods has been Ready for ``minReadySeconds``."""
        resyncs = self._resyncs
        with self._scope:
            while True:
                self.run_due()
                now = anyio.current_time()
                while resyncs and resyncs[0][0] <= now:
                    _, _, ns, name = heapq.heappop(resyncs)
                    if (ns, name) in self._rs_active:
                        self._rs_status((ns, name))
                self._wake = wake = anyio.Event()
                due = min(self.next_due() or math.inf, resyncs[0][0] if resyncs else math.inf)
                with anyio.CancelScope(deadline=due):
                    await wake.wait()

    def next_due(self) -> float | None:
        heap = self._finish_heap
        return heap[0][0] if heap else None

    def pending_completions(self) -> int:
        """How many running pods are still to finish at their ``kubesched.io/duration``."""
        n = 0
        for _, _, uid, ns, name in self._finish_heap:
            pod = self.cluster.get("Pod", ns, name)
            if (
                pod is not None
                and pod.metadata.uid == uid
                and pod.status.phase not in TERMINAL
                and pod.metadata.deletion_timestamp is None
            ):
                n += 1
        return n

    def run_due(self) -> None:
        """Every pod whose duration is over becomes Succeeded, in deadline order."""
        heap = self._finish_heap
        now = anyio.current_time()
        while heap and heap[0][0] <= now + 1e-6:
            _, _, uid, ns, name = heapq.heappop(heap)
            self._timed.discard(uid)
            pod = self.cluster.get("Pod", ns, name)
            if pod is None or pod.metadata.uid != uid or pod.status.phase in TERMINAL:
                continue
            if pod.metadata.deletion_timestamp is not None:
                continue
            self.cluster.set_pod_phase(pod, "Succeeded")

    def _on_pod(self, type_: str, pod: Pod) -> None:
        md = pod.metadata
        if (
            type_ != "DELETED"
            and pod.spec.node_name
            and pod.status.phase == "Running"
            and md.deletion_timestamp is None
            and md.uid not in self._timed
            and DURATION_ANNOTATION in md.annotations
        ):
            try:
                d = parse_duration(md.annotations[DURATION_ANNOTATION])
            except ValueError:
                d = -1.0
            if d >= 0:
                self._timed.add(md.uid)
                self._seq += 1
                heapq.heappush(self._finish_heap, (anyio.current_time() + d, self._seq, md.uid, md.namespace, md.name))
                if self._wake is not None:
                    self._wake.set()
        if type_ == "DELETED":
            self._timed.discard(md.uid)
        ref = controller_of(pod)
        if ref is None:
            return
        key = (md.namespace, ref.name)
        if ref.kind == "Job":
            self._job_pod(key, type_, pod)
        elif ref.kind == "ReplicaSet":
            self._rs_pod(key, type_, pod)

    # --- Job -----------------------------------------------------------------------------

    def _on_job(self, type_: str, job: Job) -> None:
        key = (job.metadata.namespace, job.metadata.name)
        if type_ == "DELETED":
            state = self._jobs.pop(key, None)
            if state is not None:
                for name in sorted(state.active):
                    self.cluster.delete_now("Pod", key[0], name, graceful=True)
            return
        if type_ == "ADDED":
            self._jobs[key] = _JobState()
        if key in self._jobs:
            self._sync_job(key)  # created, or its spec changed (parallelism)

    def _job_pod(self, key: tuple[str, str], type_: str, pod: Pod) -> None:
        state = self._jobs.get(key)
        if state is None:
            return
        name, uid = pod.metadata.name, pod.metadata.uid
        if uid in self._counted:
            if type_ == "DELETED":
                self._counted.discard(uid)
            return
        if pod.status.phase == "Succeeded":
            idx = state.active.pop(name, -1)
            self._counted.add(uid)
            if idx >= 0:
                if idx not in state.done_indexes:
                    state.done_indexes.add(idx)
                    state.succeeded += 1
            else:
                state.succeeded += 1
        elif type_ == "DELETED" or pod.status.phase == "Failed" or pod.metadata.deletion_timestamp:
            if name not in state.active:
                return
            del state.active[name]
            self._counted.add(uid)
            state.failed += 1
        else:
            job: Job | None = self.cluster.get("Job", *key)
            if name in state.active and job is not None and not state.finished:
                self._job_status(job, state)  # (its readiness)
            return
        if type_ == "DELETED":
            self._counted.discard(uid)
        self._sync_job(key)

    def _sync_job(self, key: tuple[str, str]) -> None:
        state = self._jobs[key]
        job: Job | None = self.cluster.get("Job", *key)
        if job is None or state.finished:
            return
        spec = job.spec
        parallelism = 1 if spec.parallelism is None else spec.parallelism
        completions = spec.completions if spec.completions is not None else max(parallelism, 1)
        backoff = 6 if spec.backoff_limit is None else spec.backoff_limit
        if state.failed > backoff:
            state.finished = True
            for name in sorted(state.active):
                self.cluster.delete_now("Pod", key[0], name, graceful=True)
            state.active.clear()
            self._finish_job(job, state, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
            return
        if state.succeeded >= completions:
            state.finished = True
            self._finish_job(job, state, "Complete", "CompletionsReached", "Reached expected number of succeeded pods")
            return
        want = min(parallelism, completions - state.succeeded)
        indexed = spec.completion_mode == "Indexed"
        busy = set(state.active.values())
        next_index = 0
        while len(state.active) < want:
            idx = -1
            if indexed:
                while next_index in state.done_indexes or next_index in busy:
                    next_index += 1
                if next_index >= completions:
                    break
                idx = next_index
                busy.add(idx)
            created = self._create_pod(job, "Job", job.spec.template, idx)
            if created is None:
                break
            state.active[created] = idx
        self._job_status(job, state)

    def _finish_job(self, job: Job, state: _JobState, cond: str, reason: str, message: str) -> None:
        """The Job's terminal conditions, after the interim one (SuccessCriteriaMet before
        Complete, FailureTarget before Failed), and its event (``Completed`` "Job completed", or
        a Warning with the condition's reason and message)."""
        now = self.cluster.timestamp()
        complete = cond == "Complete"
        interim = "SuccessCriteriaMet" if complete else "FailureTarget"
        status = replace(
            job.status,
            active=0,
            ready=0,
            succeeded=state.succeeded,
            failed=state.failed,
            completion_time=now if complete else None,
            conditions=[
                *job.status.conditions,
                *(JobCondition(type=t, status="True", reason=reason, message=message, last_probe_time=now,
                               last_transition_time=now) for t in (interim, cond)),
            ],
        )  # fmt: skip
        put_status(self.store, "Job", job, status)
        if complete:
            self.cluster.record("Job", "Completed", job, "Job completed")
        else:
            self.cluster.record("Job", reason, job, message, "Warning")

    def _job_status(self, job: Job, state: _JobState) -> None:
        if not (state.active or state.succeeded or state.failed):
            return  # nothing started yet (parallelism 0): no status write
        ready = 0
        for name in state.active:
            pod = self.cluster.get("Pod", job.metadata.namespace, name)
            ready += pod is not None and pod.status.phase == "Running" and is_ready(pod.status)
        status = replace(
            job.status,
            active=len(state.active),
            ready=ready,
            succeeded=state.succeeded,
            failed=state.failed,
            start_time=job.status.start_time or self.cluster.timestamp(),
        )
        if status != job.status:
            put_status(self.store, "Job", job, status)

    # --- ReplicaSet ----------------------------------------------------------------------

    def _on_rs(self, type_: str, rs: ReplicaSet) -> None:
        key = (rs.metadata.namespace, rs.metadata.name)
        if type_ == "DELETED":
            self._rs_ready.pop(key, None)
            self._rs_labeled.pop(key, None)
            for name in sorted(self._rs_active.pop(key, set())):
                self.cluster.delete_now("Pod", key[0], name, graceful=True)
            return
        if key not in self._rs_active:
            # claim the live pods that already name it their controller (an exported cluster
            # loads pods before their owners): upstream's ControllerRefManager adopts by uid
            self._rs_active[key] = set()
            self._rs_ready[key], self._rs_labeled[key] = {}, set()
            for p in self.store.in_namespace("Pod", key[0]):
                ref = controller_of(p)
                if (
                    ref is not None and ref.kind == "ReplicaSet" and ref.uid == rs.metadata.uid
                    and p.status.phase not in TERMINAL and not p.metadata.deletion_timestamp
                ):  # fmt: skip
                    self._rs_active[key].add(p.metadata.name)
                    self._rs_track(key, rs, p)
        self._sync_rs(key)

    def _rs_pod(self, key: tuple[str, str], type_: str, pod: Pod) -> None:
        active = self._rs_active.get(key)
        name = pod.metadata.name
        if active is None or name not in active:
            return
        if type_ == "DELETED" or pod.status.phase in TERMINAL or pod.metadata.deletion_timestamp:
            self._rs_forget(key, name)
            self._sync_rs(key)
            return
        rs: ReplicaSet | None = self.cluster.get("ReplicaSet", *key)
        if rs is not None:
            self._rs_track(key, rs, pod)
            self._rs_status(key)

    def _rs_forget(self, key: tuple[str, str], name: str) -> None:
        self._rs_active[key].discard(name)
        self._rs_ready[key].pop(name, None)
        self._rs_labeled[key].discard(name)

    def _rs_track(self, key: tuple[str, str], rs: ReplicaSet, pod: Pod) -> None:
        """Note whether an active pod of the ReplicaSet is Ready (since when) and fully labelled."""
        _track(self._rs_ready[key], self._rs_labeled[key], rs, pod, self.cluster.timestamp)

    def _sync_rs(self, key: tuple[str, str]) -> None:
        rs: ReplicaSet | None = self.cluster.get("ReplicaSet", *key)
        if rs is None:
            return
        active = self._rs_active[key]
        want = 1 if rs.spec.replicas is None else rs.spec.replicas
        while len(active) < want:
            name = self._create_pod(rs, "ReplicaSet", rs.spec.template, -1)
            if name is None:
                break
            active.add(name)
            self._rs_labeled[key].add(name)  # made from its template: fully labelled
        if len(active) > want:
            # getPodsToDelete ranks unscheduled pods first, then newer ones
            pods = [p for n in active if (p := self.cluster.get("Pod", key[0], n)) is not None]
            pods.sort(key=lambda p: (bool(p.spec.node_name), p.metadata.creation_timestamp or "", p.metadata.name), reverse=False)
            pods.sort(key=lambda p: bool(p.spec.node_name))
            for p in pods[: len(active) - want]:
                self._rs_forget(key, p.metadata.name)
                self.cluster.delete_now("Pod", key[0], p.metadata.name, graceful=True)
                self.cluster.record("ReplicaSet", "SuccessfulDelete", rs, f"Deleted pod: {p.metadata.name}")
        self._rs_status(key)

    def _rs_status(self, key: tuple[str, str]) -> None:
        """Write the ReplicaSet's status when it changed (``calculateStatus``); with ``timers``,
        sync it again when its next pod becomes available."""
        rs: ReplicaSet | None = self.cluster.get("ReplicaSet", *key)
        if rs is None:
            return
        now = parse_time(self.cluster.timestamp()) if rs.spec.min_ready_seconds > 0 else None
        counts = len(self._rs_active[key]), len(self._rs_labeled[key])
        status, soonest = replica_set_status(rs, *counts, self._rs_ready[key].values(), now)
        if status != rs.status:
            put_status(self.store, "ReplicaSet", rs, status)
        if soonest is not None and self.timers:
            self._seq += 1
            heapq.heappush(self._resyncs, (anyio.current_time() + soonest + 0.001, self._seq, *key))
            if self._wake is not None:
                self._wake.set()

    # --- pods ----------------------------------------------------------------------------

    def _random(self) -> str:
        return "".join(self.rng.choice(_ALPHANUMS) for _ in range(5))

    def _create_pod(self, owner: Any, kind: str, template: PodTemplateSpec, index: int) -> str | None:
        """The new pod's name; None (and a FailedCreate event) once the cluster holds ``max_pods``."""
        ns, oname = owner.metadata.namespace, owner.metadata.name
        if len(self.store.objects("Pod")) >= self.max_pods:
            self.refused_creates += 1
            # upstream's controllers report a refused create the same way (replica_set.go,
            # job_controller.go): a Warning "FailedCreate" event "Error creating: <the error>"
            self.cluster.record(
                kind, "FailedCreate", owner,
                f'Error creating: pods "{oname}-" is forbidden: the cluster already holds the most pods it may '
                f"({self.max_pods}; --max-pods sets it)",
                "Warning",
            )
            return None
        prefix, labels, annotations, spec = _pod_fields(owner, kind, template, index)
        for _ in range(100):
            name = prefix + self._random()
            if self.cluster.get("Pod", ns, name) is None:
                break
        pod = Pod(
            metadata=ObjectMeta(
                name=name,
                generate_name=prefix,
                namespace=ns,
                labels=labels,
                annotations=annotations,
                owner_references=[owner_reference(owner)],
            ),
            spec=spec,
            status=PodStatus(),
        )
        self.cluster.create(pod)
        self.cluster.record(kind, "SuccessfulCreate", owner, f"Created pod: {name}")
        return name


def _pod_fields(
    owner: Any, kind: str, template: PodTemplateSpec, index: int
) -> tuple[str, dict[str, str], dict[str, str], PodSpec]:
    """A new pod's name prefix, labels, annotations and spec, from its owner's ``template``: a
    Job's pods carry its labels and, when Indexed (``index`` >= 0), their completion index."""
    oname = owner.metadata.name
    labels = dict(template.metadata.labels)
    annotations = dict(template.metadata.annotations)
    spec: PodSpec = _copy(template.spec)
    prefix = f"{oname}-"
    if kind == "Job":
        labels.update(
            {
                "batch.kubernetes.io/controller-uid": owner.metadata.uid,
                "batch.kubernetes.io/job-name": oname,
                "controller-uid": owner.metadata.uid,
                "job-name": oname,
            }
        )
        if index >= 0:
            labels[INDEX_ANNOTATION] = str(index)
            annotations[INDEX_ANNOTATION] = str(index)
            prefix = f"{oname}-{index}-"
            spec.hostname = spec.hostname or f"{oname}-{index}"
    return prefix, labels, annotations, spec


def _track(ready: dict[str, str], labeled: set[str], rs: ReplicaSet, pod: Pod, now: Callable[[], str]) -> None:
    """``pod`` (active, of ``rs``) in ``ready`` (name → Ready since) when Ready, in ``labeled``
    when it carries every label of the template."""
    name, status = pod.metadata.name, pod.status
    if status.phase == "Running" and is_ready(status):
        cond = next((c for c in status.conditions if c.type == "Ready"), None)
        ready[name] = (cond.last_transition_time if cond is not None else status.start_time) or now()
    else:
        ready.pop(name, None)
    labels = pod.metadata.labels
    if all(labels.get(k) == v for k, v in rs.spec.template.metadata.labels.items()):
        labeled.add(name)
    else:
        labeled.discard(name)


def put_status(store: Store, kind: str, obj: Any, status: Any) -> None:
    """A write of the object's status subresource: a new resourceVersion, the same generation."""
    new = replace(obj, metadata=replace(obj.metadata), status=status)
    store.put(kind, (obj.metadata.namespace, obj.metadata.name), new, "MODIFIED", "status")


def owner_reference(obj: Any) -> OwnerReference:
    """A controller's owner reference to ``obj``."""
    return OwnerReference(
        api_version=obj.api_version, kind=obj.kind, name=obj.metadata.name, uid=obj.metadata.uid, controller=True
    )
