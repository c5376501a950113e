"""A snapshot: a live cluster (or the fake API server) as a scenario ``simulate`` takes
(``kubesched snapshot``).

Model::

    kind by kind, in the file's order —
        PriorityClasses, Nodes, StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities,
        PersistentVolumes, PersistentVolumeClaims, DeviceClasses, ResourceSlices, DeviceTaintRules,
        ResourceClaimTemplates, ResourceClaims, ReplicaSets, Deployments, StatefulSets, Jobs,
        PodDisruptionBudgets, PodGroups, Pods
    GET <collection>?limit=500[&labelSelector=…]  ─► one page ─► each item decoded into kubesched's
        own struct (every field the scheduler does not read is dropped on decode) ─► reduced
        (metadata, status, times) ─► one YAML document, written at once
    GET <collection>?limit=500&continue=<token> … until the list ends
    Pods: a bound pod is written as it comes; a pending one is spooled to a temporary file with its
        creation time, and the spool is written at the end, oldest first — the order in which
        simulate queues pods of equal priority, as a running scheduler met them

Memory is one page plus a sort key per pending pod, whatever the cluster's size.  Secrets and
ConfigMaps are never requested: only the collections above are.

What is kept (the rest is what simulate neither reads nor needs):

- metadata: name, namespace, labels, annotations (not ``last-applied-configuration``, not
  kube-scheduler-simulator's result annotations, not ``kubesched.io/arrival|deletion|drain``, which
  described the source's own past), ownerReferences; ``uid`` of pods and workloads (owner
  references name them); ``creationTimestamp`` of pods and PodGroups.
- Times are shifted so that the moment of the snapshot is simulate's start (its fake cluster's
  epoch, :data:`SIMULATE_EPOCH`), to the second as the API server keeps them: a pod started an
  hour before the snapshot started an hour before the run, and what the run creates is newer.
- Nodes: spec.unschedulable, taints; status capacity, allocatable, images (ImageLocality).
- Pods: the spec; a bound pod's ``status.startTime``; a running pod's ``kubesched.io/duration``
  becomes what is left of it.  Left out: finished pods (Succeeded, Failed) and pending pods being
  deleted.  A bound pod being deleted keeps its node until its grace period is over
  (``kubesched.io/deletion``), owned by nobody, as its controller has replaced it already.
- Workloads: a ReplicaSet scaled to 0 (a Deployment's history) is left out; a Deployment in the
  middle of a rollout (two ReplicaSets with replicas) is written as its ReplicaSets only; a Job
  that finished or is suspended is left out, and a running one is written with the work left to
  start (parallelism less its active pods; completions less its active and succeeded ones), or
  left out when nothing is left to start: the fake cluster's Job controller does not adopt a
  Job's pods as its ReplicaSet controller does, so the pods are written and the Job is not
  told about them.
- PDB and PodGroup status is dropped: the fake cluster computes it from the pods.
- Storage (what the volume plugins and the fake cluster's PV controller read): StorageClasses
  (provisioner, reclaim policy, binding mode, allowed topologies), CSIDrivers and CSINodes
  (their specs), CSIStorageCapacities; PersistentVolumes and claims with their ``uid`` (a
  volume's ``claimRef`` names its claim's), spec and phase (a bound pair stays bound); a
  claim's annotations (``volume.kubernetes.io/selected-node``).  StatefulSets are written as
  ReplicaSets are (spec, ``uid``; no status).
- DRA (what the DynamicResources plugin and the resourceclaim controller read): DeviceClasses,
  ResourceSlices and ResourceClaimTemplates as they are, DeviceTaintRules without status (device
  taints' ``timeAdded`` shifted as every time); ResourceClaims with their ``uid``, finalizers and
  owner (a claim generated for a pod names it), spec, and the allocation of their status (not
  ``reservedFor``: the claims come before the pods, and the fake cluster's resourceclaim
  controller reserves an allocated claim again for each bound pod that uses it; not the
  devices' driver-written status), a claim being deleted left out;
  a pod keeps its ``status.resourceClaimStatuses`` (the names of its generated claims).

``--namespace`` (repeatable) narrows the namespaced kinds and ``--selector`` the pods and workloads,
as ``kubectl get -n NS -l SEL`` would (each object by its own labels); the PDBs and PodGroups of
those namespaces, the Nodes and the PriorityClasses are always all there (what is left out of a
snapshot holds nothing in the simulation: a bound pod left out frees its share of its node).
The cluster-scoped storage and DRA kinds are always all there; claims (volume and resource),
claim templates and capacities are narrowed by ``--namespace`` only.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import IO, Any, Protocol

import msgspec
from msgspec.structs import replace

from kubesched._errors import ConfigError, NotFoundError, TransportError
from kubesched.api._dra import (
    DeviceClass,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintRuleStatus,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kubesched.api._durations import format_duration, parse_duration
from kubesched.api._objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    Deployment,
    DeploymentStatus,
    Job,
    Node,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimStatus,
    PersistentVolumeStatus,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PodGroupStatus,
    PodStatus,
    PriorityClass,
    ReplicaSet,
    ReplicaSetStatus,
    StatefulSet,
    StatefulSetStatus,
    StorageClass,
    Taint,
)
from kubesched.api._objects import JobStatus as _JobStatus
from kubesched.api._workload import SchedulingPodGroup, SchedulingPodGroupStatus, Workload
from kubesched.scenario._manifests import DRAIN_ANNOTATION
from kubesched.scenario._writing import document, dump
from kubesched.validation._validation import SYSTEM_PRIORITY_CLASSES

SIMULATE_EPOCH = "2024-01-01T00:00:00Z"
"""The wall-clock time of a simulation's start (``FakeCluster``'s default epoch): the moment of a
snapshot becomes this one."""
DEFAULT_CHUNK_SIZE = 500
_DROPPED_ANNOTATIONS = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "kubesched.io/arrival",
    "kubesched.io/deletion",
    DRAIN_ANNOTATION,
)
_DROPPED_PREFIXES = ("kube-scheduler-simulator.sigs.k8s.io/",)
_DURATION = "kubesched.io/duration"

__all__ = ["DEFAULT_CHUNK_SIZE", "KINDS", "SIMULATE_EPOCH", "Options", "Progress", "Reducer", "snapshot", "summary"]


@dataclass(frozen=True, slots=True)
class _Kind:
    """One listed collection."""

    kind: str
    api_version: str
    plural: str
    type: type[Any]
    namespaced: bool = True
    optional: bool = False
    """A custom resource that may not be installed (404: none)."""
    multi_version: bool = False
    """One Struct for several versions (the Workload API's Workload): its listed items get the
    version they were listed at."""
    fallback: str = ""
    """The version listed instead when ``api_version`` is not served (404): DeviceTaintRule's
    v1alpha3 on a 1.33-1.35 cluster."""

    def path(self, namespace: str | None) -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        return f"{base}/namespaces/{namespace}/{self.plural}" if namespace else f"{base}/{self.plural}"


KINDS: tuple[_Kind, ...] = (
    _Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", PriorityClass, namespaced=False),
    _Kind("Node", "v1", "nodes", Node, namespaced=False),
    _Kind("StorageClass", "storage.k8s.io/v1", "storageclasses", StorageClass, namespaced=False),
    _Kind("CSIDriver", "storage.k8s.io/v1", "csidrivers", CSIDriver, namespaced=False),
    _Kind("CSINode", "storage.k8s.io/v1", "csinodes", CSINode, namespaced=False),
    _Kind("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities", CSIStorageCapacity),
    _Kind("PersistentVolume", "v1", "persistentvolumes", PersistentVolume, namespaced=False),
    _Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims", PersistentVolumeClaim),
    # DRA (resource.k8s.io): what the DynamicResources plugin and the resourceclaim controller read
    _Kind("DeviceClass", "resource.k8s.io/v1", "deviceclasses", DeviceClass, namespaced=False, optional=True),
    _Kind("ResourceSlice", "resource.k8s.io/v1", "resourceslices", ResourceSlice, namespaced=False, optional=True),
    _Kind("DeviceTaintRule", "resource.k8s.io/v1beta2", "devicetaintrules", DeviceTaintRule, namespaced=False, optional=True,
          fallback="resource.k8s.io/v1alpha3"),
    _Kind("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", ResourceClaimTemplate, optional=True),
    _Kind("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", ResourceClaim, optional=True),
    _Kind("ReplicaSet", "apps/v1", "replicasets", ReplicaSet),
    _Kind("Deployment", "apps/v1", "deployments", Deployment),
    _Kind("StatefulSet", "apps/v1", "statefulsets", StatefulSet),
    _Kind("Job", "batch/v1", "jobs", Job),
    _Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", PodDisruptionBudget),
    _Kind("PodGroup", "scheduling.x-k8s.io/v1alpha1", "podgroups", PodGroup, optional=True),
    # the Workload API (alpha, GenericWorkload): simulate takes them with its gates on
    _Kind("Workload", "scheduling.k8s.io/v1alpha1", "workloads", Workload, optional=True, multi_version=True),
    _Kind("Workload", "scheduling.k8s.io/v1alpha2", "workloads", Workload, optional=True, multi_version=True),
    _Kind("SchedulingPodGroup", "scheduling.k8s.io/v1alpha2", "podgroups", SchedulingPodGroup, optional=True),
    _Kind("Pod", "v1", "pods", Pod),
)
"""What a snapshot reads, in the order it writes them: every kind simulate takes, and no other."""


# --- the list envelope and the few fields kubesched's structs do not declare -----------------


class _ListMeta(msgspec.Struct):
    continue_: str = msgspec.field(default="", name="continue")


class _Page(msgspec.Struct):
    items: list[msgspec.Raw] | None = None
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)


class _JobSpecExtra(msgspec.Struct):
    suspend: bool | None = None


class _JobExtra(msgspec.Struct):
    spec: _JobSpecExtra = msgspec.field(default_factory=_JobSpecExtra)


_page_decoder = msgspec.json.Decoder(_Page)
_job_extra_decoder = msgspec.json.Decoder(_JobExtra)


# --- reducing one object ----------------------------------------------------------------------


def _parse_time(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass
class Reducer:
    """Turns objects read from the cluster into the documents of the scenario (see the module
    docstring), and keeps the counts the closing line reports."""

    now: float
    """The moment of the snapshot (Unix seconds): it becomes :data:`SIMULATE_EPOCH`."""
    written: Counter[str] = field(default_factory=Counter)
    left_out: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    classes: set[str] = field(default_factory=set)
    rollouts: Counter[str] = field(default_factory=Counter)
    """Deployment uid → how many of its ReplicaSets (with replicas) were written."""
    _epoch: datetime = field(default_factory=lambda: datetime.fromisoformat(SIMULATE_EPOCH.replace("Z", "+00:00")))

    def time(self, ts: str | None) -> str | None:
        """``ts`` shifted so that :attr:`now` is the epoch, in whole seconds (never later)."""
        t = _parse_time(ts)
        if t is None:
            return None
        age = max(0.0, self.now - t)
        return (self._epoch - timedelta(seconds=math.ceil(age - 1e-6))).strftime("%Y-%m-%dT%H:%M:%SZ")

    def meta(self, md: ObjectMeta, *, uid: bool = False, created: bool = False, owners: bool = True) -> ObjectMeta:
        annotations = {
            k: v for k, v in md.annotations.items()
            if k not in _DROPPED_ANNOTATIONS and not k.startswith(_DROPPED_PREFIXES)
        }  # fmt: skip
        return ObjectMeta(
            name=md.name,
            namespace=md.namespace,
            uid=md.uid if uid else "",
            creation_timestamp=self.time(md.creation_timestamp) if created else None,
            labels=md.labels,
            annotations=annotations,
            owner_references=md.owner_references if owners else [],
        )

    # each returns the reduced object, or None to leave it out

    def priority_class(self, pc: PriorityClass) -> PriorityClass | None:
        self.classes.add(pc.metadata.name)
        if pc.metadata.name in SYSTEM_PRIORITY_CLASSES:
            return None  # simulate has the built-in classes already
        return replace(pc, metadata=self.meta(pc.metadata))

    def node(self, node: Node) -> Node:
        taints = [Taint(key=t.key, value=t.value, effect=t.effect) for t in node.spec.taints]
        st = node.status
        return Node(
            metadata=self.meta(node.metadata),
            spec=NodeSpec(unschedulable=node.spec.unschedulable, taints=taints),
            status=NodeStatus(capacity=st.capacity, allocatable=st.allocatable, images=st.images),
        )

    def replica_set(self, rs: ReplicaSet) -> ReplicaSet | None:
        if rs.spec.replicas == 0:
            self.left_out["ReplicaSet(s) scaled to 0"] += 1
            return None
        for ref in rs.metadata.owner_references:
            if ref.controller and ref.kind == "Deployment":
                self.rollouts[ref.uid] += 1
        return replace(rs, metadata=self.meta(rs.metadata, uid=True), status=ReplicaSetStatus())

    def deployment(self, d: Deployment) -> Deployment | None:
        if self.rollouts[d.metadata.uid] > 1:
            self.left_out["Deployment(s) in a rollout (written as their ReplicaSets)"] += 1
            return None
        return replace(d, metadata=self.meta(d.metadata, uid=True), status=DeploymentStatus())

    def job(self, job: Job, raw: bytes) -> Job | None:
        done = any(c.type in ("Complete", "Failed") and c.status == "True" for c in job.status.conditions)
        if done or _job_extra_decoder.decode(raw).spec.suspend:
            self.left_out["finished or suspended Job(s)"] += 1
            return None
        spec = job.spec
        active, succeeded = job.status.active, job.status.succeeded
        if active or succeeded:
            parallelism = 1 if spec.parallelism is None else spec.parallelism
            completions = None if spec.completions is None else max(0, spec.completions - succeeded - active)
            spec = replace(spec, parallelism=max(0, parallelism - active), completions=completions)
            if spec.parallelism == 0 or completions == 0:
                self.left_out["Job(s) with nothing left to start (written as their pods)"] += 1
                return None
            self.notes.append(
                f"Job {job.metadata.namespace}/{job.metadata.name} is written with the work left to start "
                f"(parallelism {spec.parallelism}, completions {spec.completions}): the fake cluster's Job "
                f"controller does not adopt its {active} active pod(s)"
            )
        return replace(job, metadata=self.meta(job.metadata, uid=True), spec=spec, status=_JobStatus())

    def stateful_set(self, sts: StatefulSet) -> StatefulSet:
        return replace(sts, metadata=self.meta(sts.metadata, uid=True), status=StatefulSetStatus())

    def storage_class(self, sc: StorageClass) -> StorageClass:
        return StorageClass(
            metadata=self.meta(sc.metadata),
            provisioner=sc.provisioner,
            reclaim_policy=sc.reclaim_policy,
            volume_binding_mode=sc.volume_binding_mode,
            allowed_topologies=sc.allowed_topologies,
        )

    def csi_object(self, obj: Any) -> Any:
        """A CSIDriver, CSINode or CSIStorageCapacity: all it holds is read."""
        return replace(obj, metadata=self.meta(obj.metadata))

    def persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        return replace(
            pv,
            metadata=self.meta(pv.metadata, uid=True),
            spec=replace(pv.spec, mount_options=[]),
            status=PersistentVolumeStatus(phase=pv.status.phase),
        )

    def persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        st = pvc.status
        status = PersistentVolumeClaimStatus(phase=st.phase, access_modes=st.access_modes, capacity=st.capacity)
        return replace(pvc, metadata=self.meta(pvc.metadata, uid=True), status=status)

    def _taints(self, taints: list[DeviceTaint]) -> list[DeviceTaint]:
        return [replace(t, time_added=self.time(t.time_added)) for t in taints]

    def dra_object(self, obj: Any) -> Any:
        """A DeviceClass or ResourceClaimTemplate: all it holds is read."""
        return replace(obj, metadata=self.meta(obj.metadata))

    def resource_slice(self, sl: ResourceSlice) -> ResourceSlice:
        devices = [replace(d, taints=self._taints(d.taints)) if d.taints else d for d in sl.spec.devices]
        return replace(sl, metadata=self.meta(sl.metadata), spec=replace(sl.spec, devices=devices))

    def device_taint_rule(self, rule: DeviceTaintRule) -> DeviceTaintRule:
        [taint] = self._taints([rule.spec.taint])
        spec = replace(rule.spec, taint=taint)
        return replace(rule, metadata=self.meta(rule.metadata), spec=spec, status=DeviceTaintRuleStatus())

    def resource_claim(self, claim: ResourceClaim) -> ResourceClaim | None:
        if claim.metadata.deletion_timestamp is not None:
            self.left_out["ResourceClaim(s) being deleted"] += 1
            return None
        st = claim.status
        allocation = st.allocation
        if allocation is not None:
            allocation = replace(allocation, allocation_timestamp=self.time(allocation.allocation_timestamp))
        meta = replace(self.meta(claim.metadata, uid=True), finalizers=list(claim.metadata.finalizers))
        # reservedFor dropped: the claims come before the pods they name, and the fake cluster's
        # resourceclaim controller reserves an allocated claim again for each bound pod using it
        return replace(claim, metadata=meta, status=replace(st, allocation=allocation, reserved_for=[], devices=[]))

    def pdb(self, pdb: PodDisruptionBudget) -> PodDisruptionBudget:
        return replace(pdb, metadata=self.meta(pdb.metadata), status=None)

    def pod_group(self, pg: PodGroup) -> PodGroup:
        return replace(pg, metadata=self.meta(pg.metadata, created=True), status=PodGroupStatus())

    def workload(self, w: Workload) -> Workload:
        return replace(w, metadata=self.meta(w.metadata, created=True))

    def scheduling_pod_group(self, pg: SchedulingPodGroup) -> SchedulingPodGroup:
        """Its status is the scheduler's to write again."""
        return replace(pg, metadata=self.meta(pg.metadata, created=True), status=SchedulingPodGroupStatus())

    def pod(self, pod: Pod) -> Pod | None:
        md, spec = pod.metadata, pod.spec
        if pod.status.phase in ("Succeeded", "Failed"):
            self.left_out["finished pod(s)"] += 1
            return None
        terminating = md.deletion_timestamp is not None
        if terminating and not spec.node_name:
            self.left_out["pending pod(s) being deleted"] += 1
            return None
        meta = self.meta(md, uid=True, created=True, owners=not terminating)
        status = PodStatus(resource_claim_statuses=pod.status.resource_claim_statuses)
        if spec.node_name:
            status = replace(status, start_time=self.time(pod.status.start_time))
            started = _parse_time(pod.status.start_time)
            left = _time_left(meta.annotations.get(_DURATION), started, self.now)
            if left is not None:
                meta.annotations = {**meta.annotations, _DURATION: left}
        if terminating:
            # it holds its node until its grace period ends; its controller replaced it already
            gone = _parse_time(md.deletion_timestamp) or self.now
            meta.annotations = {**meta.annotations, "kubesched.io/deletion": _go_duration(max(gone - self.now, 0.001))}
            spec = replace(spec, termination_grace_period_seconds=0)
        name = spec.priority_class_name
        if name and name not in self.classes and name not in SYSTEM_PRIORITY_CLASSES:
            # its class was deleted since: the priority admission gave it stays
            spec = replace(spec, priority_class_name="")
        return replace(pod, metadata=meta, spec=spec, status=status)


def _go_duration(seconds: float) -> str:
    return format_duration(round(seconds * 1000) * 1_000_000)


def _time_left(duration: str | None, started: float | None, now: float) -> str | None:
    """A running pod's ``kubesched.io/duration`` less the time it has run already."""
    if duration is None or started is None:
        return None
    try:
        d = parse_duration(duration)
    except ValueError:
        return None
    return _go_duration(max(0.0, d - max(0.0, now - started)))


# --- reading ----------------------------------------------------------------------------------


class Progress(Protocol):
    """What a snapshot tells of its progress as it reads: the kind being read, the objects read
    and written so far (``kubesched snapshot`` draws its progress line from them)."""

    kind: str
    read: int
    written: int


@dataclass
class Counts:
    """:class:`Progress` kept as plain counts (the default)."""

    kind: str = ""
    read: int = 0
    written: int = 0


async def _pages(api: Any, path: str, params: dict[str, Any], progress: Progress) -> Any:
    """The raw items of one collection, page by page (``limit`` / ``continue``).  A ``continue``
    token that expired (410 Gone) starts the list again after the last item seen (lists come in
    (namespace, name) order), at most three times."""
    from kubesched.transports.kube import GoneError

    cont = ""
    last: bytes | None = None  # the last item yielded, its key decoded only on a restart
    after: tuple[str, str] | None = None
    restarts = 0
    while True:
        query = dict(params, **({"continue": cont} if cont else {}))
        try:
            body = await api.request("GET", path, params=query)
        except GoneError:
            if not cont or restarts >= 3:
                raise
            restarts, cont = restarts + 1, ""
            after = _key(last) if last is not None else None
            continue
        try:
            page = _page_decoder.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as e:
            # not a list the API server would send (an HTML page, a proxy's error, JSON nested
            # past any object's depth): one line, as a failed request is
            why = "nested too deep" if isinstance(e, RecursionError) else str(e)
            raise TransportError(f"GET {path}: the answer is not a Kubernetes list: {why}") from None
        for raw in page.items or ():
            if after is not None:
                if _key(raw) <= after:
                    continue
                after = None
            progress.read += 1
            last = raw
            yield raw
        cont = page.metadata.continue_
        if not cont:
            return


class _Key(msgspec.Struct):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


def _key(raw: bytes) -> tuple[str, str]:
    md = msgspec.json.decode(raw, type=_Key).metadata
    return md.namespace, md.name


@dataclass
class Options:
    """What ``kubesched snapshot`` reads and where it writes."""

    kubeconfig: str | None = None
    server: str | None = None
    context: str | None = None
    namespaces: list[str] = field(default_factory=list)
    selector: str = ""
    chunk_size: int = DEFAULT_CHUNK_SIZE
    qps: float = 50.0
    burst: int = 100


async def snapshot(
    opts: Options,
    out: IO[str],
    *,
    progress: Progress | None = None,
    now: float | None = None,
    http_transport: Any = None,
    warn: Callable[[str], object] | None = None,
) -> Reducer:
    """Read the cluster ``opts`` names and write the scenario to ``out``; the counts.  ``now``
    (Unix seconds) is the moment of the snapshot; by default the transport's wall clock.
    ``warn`` is told of each object that does not decode (it is left out)."""
    from kubesched.transports.kube import KubeTransport, load_config

    cluster = load_config(kubeconfig=opts.kubeconfig, server=opts.server, context=opts.context)
    progress = progress or Counts()
    # the connection ``kubesched run`` makes (and the one wall clock), not entered: no watch
    transport = KubeTransport(cluster, qps=opts.qps, burst=opts.burst, max_retries=3, http_transport=http_transport)
    try:
        red = Reducer(now=transport.wall_clock() if now is None else now)
        when = datetime.fromtimestamp(red.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.write(f"# kubesched snapshot of {cluster.server} at {when}, shifted to {SIMULATE_EPOCH} (simulate's start)\n")
        with tempfile.TemporaryFile() as spool:
            pending: list[tuple[float, str, str, int, int]] = []
            for kind in KINDS:
                progress.kind = kind.kind
                await _read(transport.api, kind, opts, red, out, spool, pending, progress, warn)
            pending.sort()
            for _, _, _, offset, length in pending:
                spool.seek(offset)
                out.write(spool.read(length).decode())
    finally:
        await transport.aclose()
    return red


async def _read(
    api: Any,
    kind: _Kind,
    opts: Options,
    red: Reducer,
    out: IO[str],
    spool: IO[bytes],
    pending: list[tuple[float, str, str, int, int]],
    progress: Progress,
    warn: Callable[[str], object] | None,
) -> None:
    """One kind: each object written out, a pending pod spooled with its creation time."""
    reducers: dict[str, Callable[[Any], Any]] = {
        "PriorityClass": red.priority_class, "Node": red.node, "ReplicaSet": red.replica_set,
        "Deployment": red.deployment, "PodDisruptionBudget": red.pdb, "PodGroup": red.pod_group,
        "Workload": red.workload, "SchedulingPodGroup": red.scheduling_pod_group,
        "Pod": red.pod, "StatefulSet": red.stateful_set, "StorageClass": red.storage_class,
        "CSIDriver": red.csi_object, "CSINode": red.csi_object, "CSIStorageCapacity": red.csi_object,
        "PersistentVolume": red.persistent_volume, "PersistentVolumeClaim": red.persistent_volume_claim,
        "DeviceClass": red.dra_object, "ResourceClaimTemplate": red.dra_object, "ResourceSlice": red.resource_slice,
        "DeviceTaintRule": red.device_taint_rule, "ResourceClaim": red.resource_claim,
    }  # fmt: skip
    reduce = reducers.get(kind.kind, red.pod)
    decoder = msgspec.json.Decoder(kind.type)
    params: dict[str, Any] = {"limit": opts.chunk_size}
    if opts.selector and kind.kind in ("ReplicaSet", "Deployment", "StatefulSet", "Job", "Pod"):
        params["labelSelector"] = opts.selector
    namespaces: list[str | None] = [*opts.namespaces] if kind.namespaced and opts.namespaces else [None]
    for ns in namespaces:
        try:
            async for raw in _pages(api, kind.path(ns), params, progress):
                obj = _decode(decoder, raw, kind, warn)
                if obj is not None and kind.multi_version:
                    # a list's items carry no apiVersion: the version listed (a v1alpha1 Workload
                    # would otherwise read as the Struct's default, v1alpha2)
                    obj = replace(obj, api_version=kind.api_version)
                doc: Any = None if obj is None else red.job(obj, raw) if kind.kind == "Job" else reduce(obj)
                if doc is None:
                    continue
                text = dump(document(doc))
                red.written[kind.kind] += 1
                progress.written += 1
                if kind.kind == "Pod" and not doc.spec.node_name:
                    red.written["pending pods"] += 1
                    data = text.encode()
                    created = _parse_time(obj.metadata.creation_timestamp) or 0.0
                    pending.append((created, doc.metadata.namespace, doc.metadata.name, spool.tell(), len(data)))
                    spool.write(data)
                else:
                    out.write(text)
        except NotFoundError:
            if kind.fallback and ns is None and not red.written[kind.kind]:
                older = dataclasses.replace(kind, api_version=kind.fallback, fallback="")
                await _read(api, older, opts, red, out, spool, pending, progress, warn)
                return
            if not kind.optional:
                raise
        except TransportError as e:
            if "labelSelector" in params and ": 400 " in str(e):
                raise ConfigError(str(e).split(": 400 ", 1)[1], field="--selector") from None
            raise


def _decode(decoder: msgspec.json.Decoder[Any], raw: bytes, kind: _Kind, warn: Callable[[str], object] | None) -> Any:
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as e:
        if warn is not None:
            warn(f"snapshot: a {kind.kind} that does not decode is left out: {e}")
        return None


def summary(red: Reducer, target: str) -> str:
    """The closing line: what was written, and what was left out and why."""
    w = red.written

    def n(kind: str) -> str:
        if w[kind] == 1:
            return f"1 {kind}"
        plural = f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}es" if kind.endswith("s") else f"{kind}s"
        return f"{w[kind]} {plural}"

    parts = [n("Node"), n("Pod") + f" ({w['pending pods']} pending)"]
    parts += [n(k) for k in dict.fromkeys(k.kind for k in KINDS) if k not in ("Node", "Pod") and w[k]]
    line = "snapshot: wrote " + ", ".join(parts) + (f" to {target}" if target else "")
    if red.left_out:
        line += "; left out " + ", ".join(f"{n} {what}" for what, n in sorted(red.left_out.items()))
    return line
