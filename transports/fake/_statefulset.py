"""The StatefulSet controller of the fake cluster (``pkg/controller/statefulset``).

One sync per change of a set or of a pod it owns, as upstream's ``updateStatefulSet``::

    replicas [start, start+n):  in ordinal order
        Failed/Succeeded ──► deleted (SuccessfulDelete), then created again
        missing ──► its claims (<template>-<set>-<ordinal>, each SuccessfulCreate "create Claim …")
                    then the pod <set>-<ordinal> (SuccessfulCreate "create Pod …")
                    OrderedReady: one creation per sync, and only once every lower ordinal is
                    Running and Ready (not terminating); Parallel: all at once
    condemned (ordinals outside the range), highest first, once every replica is healthy
    (OrderedReady; Parallel: all at once) ──► deleted gracefully (SuccessfulDelete)
    status: replicas, readyReplicas, currentReplicas, updatedReplicas, availableReplicas,
            currentRevision, updateRevision, observedGeneration

A pod is Running and Ready when the fake kubelet has it Running (it starts at its binding) and it
is not terminating.  The pod gets the template's labels plus ``statefulset.kubernetes.io/pod-name``,
``apps.kubernetes.io/pod-index`` and ``controller-revision-hash``, ``hostname`` = its name, and one
``persistentVolumeClaim`` volume per claim template (named as the template); a claim carries the
template's labels and the set's ``matchLabels``.

``persistentVolumeClaimRetentionPolicy`` (StatefulSetAutoDeletePVC, GA): claims get owner
references as upstream's ``updateClaimOwnerRefForSetAndPod`` (whenDeleted Delete: the set;
whenScaled Delete: the pod, once scaled down), so the garbage collector deletes them with their
owner; by default (Retain, Retain) claims have no owner and outlive the set.  Deleting the set
deletes its pods (the garbage collector: graceful, no events).  A claim is deleted once no pod
that still exists uses it (``kubernetes.io/pvc-protection``).  Rolling updates of the template
are not emulated (every pod is at the current revision); a pod created again under a name it had
before gets a new uid.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from msgspec.structs import replace

from kubesched.api import (
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodSpec,
    PodStatus,
    StatefulSet,
    Volume,
    uid_for,
)
from kubesched.api import copy as _copy

from ._controllers import MAX_PODS, controller_of, pod_template_hash
from ._kubelet import is_ready
from ._store import Change, Controller

if TYPE_CHECKING:
    from ._store import Store

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")
_TERMINAL = ("Succeeded", "Failed")

__all__ = ["POD_INDEX_LABEL", "POD_NAME_LABEL", "REVISION_LABEL", "StatefulSets"]

SetKey = tuple[str, str]


class ClusterAPI(Protocol):
    """What the StatefulSet controller needs of the cluster."""

    def create(self, obj: Any) -> Any: ...
    def update(self, obj: Any) -> Any: ...
    def record(self, kind: str, reason: str, obj: Any, message: str, type_: str = "Normal") -> None: ...
    def delete_now(self, kind: str, namespace: str, name: str, *, graceful: bool) -> None: ...


class PodLimit(Protocol):
    """Where the cap on the cluster's pods lives (the workload controllers')."""

    max_pods: int
    refused_creates: int


def ordinal_of(set_name: str, pod_name: str) -> int:
    """``getParentNameAndOrdinal``: the pod's ordinal in the set, or -1."""
    m = _ORDINAL.match(pod_name)
    if m is None or m[1] != set_name:
        return -1
    return int(m[2]) if len(m[2]) < 10 else -1


def _ready(pod: Pod | None) -> bool:
    """Running and Ready, not terminating (what OrderedReady waits for)."""
    return pod is not None and _running_and_ready(pod) and not pod.metadata.deletion_timestamp


def _running_and_ready(pod: Pod) -> bool:
    """``isRunningAndReady``."""
    return pod.status.phase == "Running" and is_ready(pod.status)


def _owner_ref(obj: Any) -> OwnerReference:
    return OwnerReference(
        api_version=obj.api_version, kind=obj.kind, name=obj.metadata.name, uid=obj.metadata.uid, controller=True
    )


class StatefulSets(Controller):
    """The StatefulSet controller (see the module docstring)."""

    kinds = ("StatefulSet", "Pod")
    follows_plain_pods = False  # a plain pod has no owner: not a set's pod

    def __init__(self, store: Store, cluster: ClusterAPI, limits: PodLimit | None = None) -> None:
        super().__init__(store)
        self.cluster = cluster
        self.limits = limits
        self._pods: dict[SetKey, dict[int, str]] = {}  # set -> ordinal -> name of its live pod
        self._made: Counter[tuple[str, str, str]] = Counter()  # (kind, ns, name) -> times created
        self._conflicts: set[tuple[str, str]] = set()  # pods another object's name kept from being made

    # --- fed by the store --------------------------------------------------------------------

    def observe(self, change: Change) -> None:
        obj = change.obj
        if change.kind == "StatefulSet":
            key = (obj.metadata.namespace, obj.metadata.name)
            if change.type == "DELETED":
                for name in [n for _, n in sorted(self._pods.pop(key, {}).items())]:
                    self.cluster.delete_now("Pod", key[0], name, graceful=True)
                self._collect_claims(key[0])
                return
            if key not in self._pods:
                self._adopt(obj)
            self._sync(key)
            return
        ref = controller_of(obj)
        if ref is None or ref.kind != "StatefulSet":
            return
        ns, name = obj.metadata.namespace, obj.metadata.name
        if change.type == "DELETED":
            self._collect_claims(ns)  # its set may be gone already
        key = (ns, ref.name)
        index = self._pods.get(key)
        ss = self.store.get("StatefulSet", key)
        ordinal = ordinal_of(ref.name, name)
        if index is None or ss is None or ss.metadata.uid != ref.uid or ordinal < 0:
            return
        if change.type == "ADDED":
            index[ordinal] = name
        elif change.type == "DELETED" and index.get(ordinal) == name and self.store.get("Pod", (ns, name)) is None:
            del index[ordinal]  # (not when it was made again under its name meanwhile)
        self._sync(key)

    def _adopt(self, ss: StatefulSet) -> None:
        """A new set claims the live pods that name it their controller (an exported cluster)."""
        md = ss.metadata
        index = self._pods[(md.namespace, md.name)] = {}
        for p in self.store.in_namespace("Pod", md.namespace):
            ref = controller_of(p)
            if ref is not None and ref.kind == "StatefulSet" and ref.uid == md.uid:
                ordinal = ordinal_of(md.name, p.metadata.name)
                if ordinal >= 0:
                    index[ordinal] = p.metadata.name

    # --- the sync ----------------------------------------------------------------------------

    def _sync(self, key: SetKey) -> None:
        ss: StatefulSet | None = self.store.get("StatefulSet", key)
        if ss is None:
            return
        if not ss.metadata.deletion_timestamp:
            self._reconcile(ss)
        self._status(ss)

    def _reconcile(self, ss: StatefulSet) -> None:
        ns = ss.metadata.namespace
        spec = ss.spec
        start = spec.ordinals.start if spec.ordinals is not None else 0
        end = start + (1 if spec.replicas is None else spec.replicas)
        monotonic = spec.pod_management_policy != "Parallel"
        pods = self._live((ns, ss.metadata.name))
        condemned = sorted(o for o in pods if not start <= o < end)
        unhealthy = [o for o in range(start, end) if not _ready(pods.get(o))] + [o for o in condemned if not _ready(pods[o])]
        first_unhealthy = min(unhealthy, default=None)
        for o in range(start, end):
            pod = pods.get(o)
            if pod is not None and pod.status.phase in _TERMINAL and not pod.metadata.deletion_timestamp:
                self._delete(ss, pod)  # a finished pod is deleted and made again
                pod = self.store.get("Pod", (ns, pod.metadata.name))
            if pod is None:
                if not self._create(ss, o) or monotonic:
                    return
                continue
            if pod.status.phase == "Pending":
                self._create_claims(ss, o, pod.metadata.name)
            if monotonic and not _ready(pod):
                return
            self._retention(ss, pod, scaled_down=False)
        for o in reversed(condemned):
            pod = pods[o]
            if pod.metadata.deletion_timestamp:
                if monotonic:
                    return
                continue
            if monotonic and not _ready(pod) and o != first_unhealthy:
                return
            self._retention(ss, pod, scaled_down=True)
            self._delete(ss, pod)
            if monotonic:
                return

    def _live(self, key: SetKey) -> dict[int, Pod]:
        out: dict[int, Pod] = {}
        for o, name in list(self._pods.get(key, {}).items()):
            pod = self.store.get("Pod", (key[0], name))
            if pod is not None:
                out[o] = pod
        return out

    def _status(self, ss: StatefulSet) -> None:
        """``computeReplicaStatus`` (v1.35): created pods (a phase), Running and Ready ones
        (available too: ``minReadySeconds`` is not modelled), and those at the current and the
        update revision (one, ``<set>-<template hash>``: updates are not emulated)."""
        pods = self._live((ss.metadata.namespace, ss.metadata.name)).values()
        ready = sum(1 for p in pods if _running_and_ready(p))
        revision = f"{ss.metadata.name}-{pod_template_hash(ss.spec.template)}"
        current = sum(
            1 for p in pods
            if p.status.phase and not p.metadata.deletion_timestamp and p.metadata.labels.get(REVISION_LABEL) == revision
        )  # fmt: skip
        status = replace(
            ss.status,
            observed_generation=ss.metadata.generation,
            replicas=sum(1 for p in pods if p.status.phase),
            ready_replicas=ready,
            current_replicas=current,
            updated_replicas=current,
            current_revision=revision,
            update_revision=revision,
            available_replicas=ready,
        )
        if status != ss.status:
            new = replace(ss, metadata=replace(ss.metadata), status=status)
            self.store.put("StatefulSet", (ss.metadata.namespace, ss.metadata.name), new, "MODIFIED", "status")

    # --- pods and claims -----------------------------------------------------------------------

    def _create(self, ss: StatefulSet, ordinal: int) -> bool:
        """``CreateStatefulPod``: the pod's missing claims, then the pod; False when it could not
        be created (the cluster holds ``max_pods``, or another pod has the name)."""
        ns, set_name = ss.metadata.namespace, ss.metadata.name
        name = f"{set_name}-{ordinal}"
        existing = self.store.get("Pod", (ns, name))
        if existing is not None:
            if (ns, name) not in self._conflicts and not any(r.uid == ss.metadata.uid for r in existing.metadata.owner_references):
                # another pod has the name (one of the input): the create fails as the API server
                # refuses it (stateful_pod_control.go recordPodEvent), the set waits for it
                self._conflicts.add((ns, name))
                msg = f'create Pod {name} in StatefulSet {set_name} failed error: pods "{name}" already exists'
                self.cluster.record("StatefulSet", "FailedCreate", ss, msg, "Warning")
            return False
        limit = self.limits.max_pods if self.limits is not None else MAX_PODS
        if len(self.store.objects("Pod")) >= limit:
            if self.limits is not None:
                self.limits.refused_creates += 1
            msg = (
                f'create Pod {name} in StatefulSet {set_name} failed error: pods "{name}" is forbidden: the '
                f"cluster already holds the most pods it may ({limit}; --max-pods sets it)"
            )
            self.cluster.record("StatefulSet", "FailedCreate", ss, msg, "Warning")
            return False
        self._create_claims(ss, ordinal, name)
        template = ss.spec.template
        labels = {
            **template.metadata.labels,
            POD_NAME_LABEL: name,
            POD_INDEX_LABEL: str(ordinal),
            REVISION_LABEL: f"{set_name}-{pod_template_hash(template)}",
        }
        spec: PodSpec = _copy(template.spec)
        claims = {t.metadata.name: f"{t.metadata.name}-{set_name}-{ordinal}" for t in ss.spec.volume_claim_templates}
        spec.hostname = name
        spec.volumes = [
            *(Volume(name=t, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=c)) for t, c in claims.items()),
            *(v for v in spec.volumes if v.name not in claims),
        ]
        pod = Pod(
            metadata=ObjectMeta(
                name=name, generate_name=f"{set_name}-", namespace=ns, uid=self._uid("Pod", ns, name), labels=labels,
                annotations=dict(template.metadata.annotations), owner_references=[_owner_ref(ss)],
            ),
            spec=spec,
            status=PodStatus(),
        )  # fmt: skip
        self.cluster.create(pod)
        self._pods.setdefault((ns, set_name), {})[ordinal] = name
        created = self.store.get("Pod", (ns, name))
        if created is not None:
            self._retention(ss, created, scaled_down=False)
        self.cluster.record("StatefulSet", "SuccessfulCreate", ss, f"create Pod {name} in StatefulSet {set_name} successful")
        return True

    def _create_claims(self, ss: StatefulSet, ordinal: int, pod_name: str) -> None:
        """``createPersistentVolumeClaims``: each template's claim that does not exist yet."""
        ns, set_name = ss.metadata.namespace, ss.metadata.name
        match = ss.spec.selector.match_labels if ss.spec.selector is not None else {}
        for t in ss.spec.volume_claim_templates:
            name = f"{t.metadata.name}-{set_name}-{ordinal}"
            if self.store.get("PersistentVolumeClaim", (ns, name)) is not None:
                continue
            claim = PersistentVolumeClaim(
                metadata=ObjectMeta(
                    name=name, namespace=ns, uid=self._uid("PersistentVolumeClaim", ns, name),
                    labels={**t.metadata.labels, **match}, annotations=dict(t.metadata.annotations),
                ),
                spec=_copy(t.spec),
            )  # fmt: skip
            self.cluster.create(claim)
            msg = f"create Claim {name} Pod {pod_name} in StatefulSet {set_name} success"
            self.cluster.record("StatefulSet", "SuccessfulCreate", ss, msg)

    def _delete(self, ss: StatefulSet, pod: Pod) -> None:
        """``DeleteStatefulPod``: a graceful deletion."""
        self.cluster.delete_now("Pod", pod.metadata.namespace, pod.metadata.name, graceful=True)
        msg = f"delete Pod {pod.metadata.name} in StatefulSet {ss.metadata.name} successful"
        self.cluster.record("StatefulSet", "SuccessfulDelete", ss, msg)

    def _uid(self, kind: str, ns: str, name: str) -> str:
        """"" (the store's own uid) the first time an object has this name, a new one after."""
        n = self._made[(kind, ns, name)]
        self._made[(kind, ns, name)] = n + 1
        return uid_for(ns, f"{kind}/{name}#{n}") if n else ""

    # --- persistentVolumeClaimRetentionPolicy -------------------------------------------------

    def _retention(self, ss: StatefulSet, pod: Pod, *, scaled_down: bool) -> None:
        """``UpdatePodClaimForRetentionPolicy``: the owner references of the pod's claims."""
        policy = ss.spec.persistent_volume_claim_retention_policy
        if policy is None or (policy.when_deleted, policy.when_scaled) == ("Retain", "Retain"):
            return
        ns = ss.metadata.namespace
        ordinal = ordinal_of(ss.metadata.name, pod.metadata.name)
        for t in ss.spec.volume_claim_templates:
            claim = self.store.get("PersistentVolumeClaim", (ns, f"{t.metadata.name}-{ss.metadata.name}-{ordinal}"))
            if claim is None:
                continue
            refs = claim.metadata.owner_references
            ours = [r for r in refs if (r.kind, r.name) in (("StatefulSet", ss.metadata.name), ("Pod", pod.metadata.name))]
            if any(r.controller and r not in ours for r in refs):
                continue  # another controller manages it
            keep = [r for r in refs if r not in ours]
            if scaled_down and policy.when_scaled == "Delete":
                keep.append(_owner_ref(pod))
            elif policy.when_deleted == "Delete" and (not scaled_down or policy.when_scaled == "Retain"):
                keep.append(_owner_ref(ss))
            if keep != refs:
                self.cluster.update(replace(claim, metadata=replace(claim.metadata, owner_references=keep, resource_version="")))

    def _collect_claims(self, ns: str) -> None:
        """The garbage collector: a claim whose owners are all gone is deleted, once no pod that
        still exists uses it."""
        for claim in list(self.store.in_namespace("PersistentVolumeClaim", ns)):
            refs = claim.metadata.owner_references
            if not refs or any(self._alive(ns, r) for r in refs):
                continue
            name = claim.metadata.name
            if any(
                v.persistent_volume_claim is not None and v.persistent_volume_claim.claim_name == name
                for p in self.store.in_namespace("Pod", ns)
                for v in p.spec.volumes
            ):
                continue
            self.cluster.delete_now("PersistentVolumeClaim", ns, name, graceful=False)

    def _alive(self, ns: str, ref: OwnerReference) -> bool:
        if ref.kind not in ("StatefulSet", "Pod"):
            return True  # not ours to judge
        owner = self.store.get(ref.kind, (ns, ref.name))
        return owner is not None and owner.metadata.uid == ref.uid
