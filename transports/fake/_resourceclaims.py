"""The resourceclaim controller of the fake cluster (kube-controller-manager's
``resource-claim-controller``, kubernetes ``pkg/controller/resourceclaim/controller.go``, v1.36).

Fed the store's writes of Pods, ResourceClaims and ResourceClaimTemplates::

    pod (not done) with spec.resourceClaims[i].resourceClaimTemplateName
        ──► a claim it owns already (annotation resource.kubernetes.io/pod-claim-name = the
            entry's name)?  else one created from the template: generateName <pod>-<claim>-
            (both parts cut in proportion past 57 characters), owner the pod (controller,
            blockOwnerDeletion), the template's labels and annotations plus the pod-claim-name
            annotation, the template's spec
        ──► pod.status.resourceClaimStatuses[] {name, resourceClaimName} (a status write)
    claim ──► reservedFor without the pods that are gone, replaced (another uid) or done
              (Succeeded/Failed, or being deleted while never bound); when the last consumer
              goes and the claim carries resource.kubernetes.io/delete-protection (the
              scheduler's allocation), the allocation is dropped and the finalizer removed
          ──► a generated claim no longer reserved whose pod is done: deleted
    pod deleted ──► its generated claims deleted (the garbage collector)
    pod with status.extendedResourceClaimStatus (the scheduler's claim of its extended
    resources, DRAExtendedResource) ──► that claim synced as the pod's other claims: unreserved
              when the pod is done, then deleted (the pod controls it); deleted with the pod

A device taint (of a ResourceSlice's device, of a DeviceTaintRule) written without
``timeAdded`` gets the time of the write (``SetDefaults_DeviceTaint``, an in-write step); a
DeviceTaintRule written as ``resource.k8s.io/v1alpha3`` is stored as ``v1beta2``.

A claim being deleted while it carries the finalizer keeps a ``deletionTimestamp`` until the
controller has dropped its allocation and the finalizer, then goes, as the API server removes an
object whose last finalizer is removed.  A template that does not exist (yet) leaves the pod
without its claim: upstream retries with backoff; here the pod is synced again when a template
of that name is created.  A pod created already on a node (``spec.nodeName``) gets its allocated
claims reserved for it, as upstream's controller does for pods the scheduler did not place.  Names come from the cluster's seeded random source (``rng``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from kubesched import ConflictError, NotFoundError
from kubesched.api import (
    FINALIZER,
    POD_RESOURCE_CLAIM_ANNOTATION,
    RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
    RESOURCE_V1BETA2,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodExtendedResourceClaimStatus,
    PodResourceClaimStatus,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
)
from kubesched.api import copy as _copy

from ._store import Change, Controller

if TYPE_CHECKING:
    from ._store import Clock, Store

_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # the API server's generateName alphabet
_MAX_BASE_LEN = 57  # leaves a hyphen and 5 random characters in 63


def is_pod_done(pod: Pod) -> bool:
    """``isPodDone``: it will not run (again): terminal, or being deleted before it was bound."""
    return pod.status.phase in ("Succeeded", "Failed") or (
        pod.metadata.deletion_timestamp is not None and not pod.spec.node_name
    )


def generate_name(pod_name: str, claim_name: str) -> str:
    """The claim's ``generateName``: ``<pod>-<claim>-``, both parts cut in proportion to their
    length when longer than 57 characters (the cut form has no trailing hyphen)."""
    name = f"{pod_name}-{claim_name}-"
    if len(name) > _MAX_BASE_LEN:
        n = len(name)
        name = pod_name[: len(pod_name) * _MAX_BASE_LEN // n] + "-" + claim_name[: len(claim_name) * _MAX_BASE_LEN // n]
    return name


def owning_pod(claim: ResourceClaim) -> tuple[str, str]:
    """``owningPod``: the (name, uid) of the pod that controls ``claim``; ("", "") if none."""
    for ref in claim.metadata.owner_references:
        if ref.controller and ref.api_version == "v1" and ref.kind == "Pod":
            return ref.name, ref.uid
    return "", ""


class ResourceClaims(Controller):
    """The resourceclaim controller (see the module docstring)."""

    kinds = ("Pod", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceTaintRule")
    follows_plain_pods = False  # a plain pod has no claim: observe returns at once until it goes
    admits = ("ResourceSlice", "DeviceTaintRule")

    def __init__(self, store: Store, clock: Clock, rng: random.Random) -> None:
        super().__init__(store)
        self.clock = clock
        self.rng = rng
        self._deleted: set[str] = set()  # uids of deleted pods with claims (upstream's deletedObjects)
        # indexes, so that a pod or claim costs no scan: the claims a pod controls (pod uid →
        # pod-claim-name annotation → claim name), and the pods naming a claim by
        # resourceClaimName ((namespace, claim) → pod names)
        self._owned: dict[str, dict[str, str]] = {}
        self._dependents: dict[str, set[str]] = {}  # pod uid → every claim it controls (the GC's)
        self._users: dict[tuple[str, str], set[str]] = {}

    def admit(self, change: Change) -> None:
        """``SetDefaults_DeviceTaint``: a device taint without ``timeAdded`` gets the write's
        time, in whole seconds (a ResourceSlice's devices' taints, a DeviceTaintRule's taint)."""
        if change.type == "DELETED" or change.kind not in ("ResourceSlice", "DeviceTaintRule"):
            return
        obj = change.obj
        if change.kind == "DeviceTaintRule":
            obj.api_version = RESOURCE_V1BETA2  # stored in v1beta2 (written as v1alpha3 too)
        taints = [obj.spec.taint] if change.kind == "DeviceTaintRule" else [t for d in obj.spec.devices for t in d.taints]
        if any(t.time_added is None for t in taints):
            now = self.clock.timestamp()[:19] + "Z"
            for t in taints:
                if t.time_added is None:
                    t.time_added = now

    def observe(self, change: Change) -> None:
        obj = change.obj
        if change.kind == "Pod":
            if not obj.spec.resource_claims and obj.status.extended_resource_claim_status is not None:
                # only the scheduler's claim for its extended resources (enqueuePod, v1.36)
                if change.type == "DELETED":
                    self._deleted.add(obj.metadata.uid)
                    self._pod_gone(obj)
                elif is_pod_done(obj):
                    self._claims_of(obj)
                return
            if not obj.spec.resource_claims:  # the common case: one test (and a lookup on delete)
                if change.type == "DELETED" and obj.metadata.uid in self._dependents:
                    self._pod_gone(obj)
                return
            self._index_pod(change.type, obj)
            if change.type == "DELETED":
                self._deleted.add(obj.metadata.uid)
                self._pod_gone(obj)
            elif not is_pod_done(obj):
                self._sync_pod(obj)
            else:
                self._claims_of(obj)
        elif change.kind == "ResourceClaim":
            self._index_claim(change.type, obj)
            if change.type != "DELETED":
                self._sync_claim(obj)
                if change.type == "ADDED" and obj.status.allocation is not None:
                    # a claim created after the bound pods that name it: reserve it for them
                    ns = obj.metadata.namespace
                    for name in sorted(self._users.get((ns, obj.metadata.name), ())):
                        pod = self.store.get("Pod", (ns, name))
                        if pod is not None and pod.spec.node_name and not is_pod_done(pod):
                            self._reserve_for_bound_pod(pod)
        elif change.kind == "ResourceClaimTemplate" and change.type == "ADDED":
            ns, name = obj.metadata.namespace, obj.metadata.name
            for pod in list(self.store.in_namespace("Pod", ns)):
                if not is_pod_done(pod) and any(c.resource_claim_template_name == name for c in pod.spec.resource_claims):
                    self._sync_pod(pod)

    # --- indexes -------------------------------------------------------------------------------

    def _index_pod(self, type_: str, pod: Pod) -> None:
        ns, name = pod.metadata.namespace, pod.metadata.name
        for pc in pod.spec.resource_claims:
            if pc.resource_claim_name is None:
                continue
            key = (ns, pc.resource_claim_name)
            if type_ == "DELETED":
                users = self._users.get(key)
                if users is not None:
                    users.discard(name)
                    if not users:
                        del self._users[key]
            else:
                self._users.setdefault(key, set()).add(name)

    def _index_claim(self, type_: str, claim: ResourceClaim) -> None:
        owner_uid = owning_pod(claim)[1]
        if not owner_uid:
            return
        if type_ == "DELETED":
            deps = self._dependents.get(owner_uid)
            if deps is not None:
                deps.discard(claim.metadata.name)
                if not deps:
                    del self._dependents[owner_uid]
        else:
            self._dependents.setdefault(owner_uid, set()).add(claim.metadata.name)
        pod_claim = claim.metadata.annotations.get(POD_RESOURCE_CLAIM_ANNOTATION)
        if pod_claim is None:
            return
        owned = self._owned.setdefault(owner_uid, {})
        if type_ == "DELETED":
            if owned.get(pod_claim) == claim.metadata.name:
                del owned[pod_claim]
            if not owned:
                del self._owned[owner_uid]
        else:
            owned[pod_claim] = claim.metadata.name

    # --- pods -----------------------------------------------------------------------------------

    def _sync_pod(self, pod: Pod) -> None:
        """``syncPod``: a claim for every template entry, recorded in the pod's status; then, for
        a pod already on a node, its allocated claims reserved for it."""
        if not pod.spec.resource_claims:
            return
        ns = pod.metadata.namespace
        statuses = {s.name: s for s in pod.status.resource_claim_statuses}
        changed: dict[str, PodResourceClaimStatus] = {}
        for pc in pod.spec.resource_claims:
            if pc.resource_claim_template_name is None:
                continue
            recorded = statuses.get(pc.name)
            if (
                recorded is not None
                and recorded.resource_claim_name is not None
                and self.store.get("ResourceClaim", (ns, recorded.resource_claim_name)) is not None
            ):
                continue  # "nop"; a recorded claim that is gone is made again ("recreate")
            claim = self._find_claim(pod, pc.name)
            if claim is None:
                claim = self._create_claim(pod, pc.name, pc.resource_claim_template_name)
                if claim is None:
                    continue  # no template (yet): "missing-template"
            changed[pc.name] = PodResourceClaimStatus(name=pc.name, resource_claim_name=claim.metadata.name)
        if changed:
            current = self.store.get("Pod", (ns, pod.metadata.name))
            if current is None or current.metadata.uid != pod.metadata.uid:
                return
            kept = [s for s in current.status.resource_claim_statuses if s.name not in changed]
            status = replace(current.status, resource_claim_statuses=[*kept, *changed.values()])
            pod = replace(current, metadata=replace(current.metadata), status=status)
            self.store.put("Pod", (ns, pod.metadata.name), pod, "MODIFIED", "status")
        if pod.spec.node_name:
            self._reserve_for_bound_pod(pod)
        self._claims_of(pod)

    def _reserve_for_bound_pod(self, pod: Pod) -> None:
        """A pod that is on a node without the scheduler (created bound): each allocated claim it
        uses is reserved for it, while there is room (``reserveForPod``, "add-reserved")."""
        ns = pod.metadata.namespace
        for name in claim_names(pod):
            claim = self.store.get("ResourceClaim", (ns, name))
            if claim is None or claim.status.allocation is None:
                continue
            refs = claim.status.reserved_for
            if any(r.uid == pod.metadata.uid for r in refs) or len(refs) >= RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE:
                continue
            ref = ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name, uid=pod.metadata.uid)
            status = replace(claim.status, reserved_for=[*refs, ref])
            self.store.put("ResourceClaim", (ns, name), replace(claim, metadata=replace(claim.metadata), status=status), "MODIFIED", "status")

    def _find_claim(self, pod: Pod, pod_claim_name: str) -> ResourceClaim | None:
        """``findPodResourceClaim``: a claim the pod owns, made for this entry."""
        name = self._owned.get(pod.metadata.uid, {}).get(pod_claim_name)
        if name is None:
            return None
        claim: ResourceClaim | None = self.store.get("ResourceClaim", (pod.metadata.namespace, name))
        return claim

    def _create_claim(self, pod: Pod, pod_claim_name: str, template_name: str) -> ResourceClaim | None:
        ns = pod.metadata.namespace
        template: ResourceClaimTemplate | None = self.store.get("ResourceClaimTemplate", (ns, template_name))
        if template is None:
            return None
        base = generate_name(pod.metadata.name, pod_claim_name)
        name = name_for(self.store, ns, base, self.rng)
        tmeta = template.spec.metadata
        claim = ResourceClaim(
            metadata=ObjectMeta(
                name=name,
                generate_name=base,
                namespace=ns,
                labels=dict(tmeta.labels),
                annotations={**tmeta.annotations, POD_RESOURCE_CLAIM_ANNOTATION: pod_claim_name},
                # handlePodClaim (v1.35.4): Controller and BlockOwnerDeletion both true
                owner_references=[
                    OwnerReference(
                        api_version="v1", kind="Pod", name=pod.metadata.name, uid=pod.metadata.uid, controller=True, block_owner_deletion=True
                    )
                ],
            ),
            spec=_copy(template.spec.spec),
        )
        return self.store.create(claim)  # type: ignore[no-any-return]

    def _claims_of(self, pod: Pod) -> None:
        """Sync the claims a pod uses (``enqueuePod``: its claims may have a consumer less)."""
        ns = pod.metadata.namespace
        for name in claim_names(pod):
            claim = self.store.get("ResourceClaim", (ns, name))
            if claim is not None:
                self._sync_claim(claim)

    def _pod_gone(self, pod: Pod) -> None:
        self._claims_of(pod)
        # the garbage collector: what the pod controlled goes with it
        ns = pod.metadata.namespace
        for name in sorted(self._dependents.get(pod.metadata.uid, ())):
            claim = self.store.get("ResourceClaim", (ns, name))
            if claim is not None:
                self._delete(claim)

    # --- claims ---------------------------------------------------------------------------------

    def _sync_claim(self, claim: ResourceClaim) -> None:
        """``syncClaim`` (of the stored claim: a change may be fed after later writes)."""
        ns = claim.metadata.namespace
        current = self.store.get("ResourceClaim", (ns, claim.metadata.name))
        if current is None or current.metadata.uid != claim.metadata.uid:
            return
        claim = current
        valid = []
        for ref in claim.status.reserved_for:
            if ref.api_group == "" and ref.resource == "pods":
                keep = ref.uid not in self._deleted
                if keep:
                    pod = self.store.get("Pod", (ns, ref.name))
                    keep = pod is not None and pod.metadata.uid == ref.uid and not is_pod_done(pod)
                if keep:
                    valid.append(ref)
            else:
                valid.append(ref)  # upstream: an error (unsupported ReservedFor entry); kept
        key = (ns, claim.metadata.name)
        has_finalizer = FINALIZER in claim.metadata.finalizers
        if len(valid) < len(claim.status.reserved_for):
            status = replace(claim.status, reserved_for=valid)
            if not valid and has_finalizer:
                status = replace(status, allocation=None)
            claim = replace(claim, metadata=replace(claim.metadata), status=status)
            self.store.put("ResourceClaim", key, claim, "MODIFIED", "status")
            if has_finalizer and claim.status.allocation is None:
                kept = self._drop_finalizer(claim)
                if kept is None:
                    return
                claim = kept
        elif has_finalizer and claim.metadata.deletion_timestamp is not None and not valid:
            if claim.status.allocation is not None:
                claim = replace(claim, metadata=replace(claim.metadata), status=replace(claim.status, allocation=None))
                self.store.put("ResourceClaim", key, claim, "MODIFIED", "status")
            if self._drop_finalizer(claim) is None:
                return
        if valid:
            return
        pod_name, pod_uid = owning_pod(claim)
        if not pod_name:
            return
        pod = self.store.get("Pod", (ns, pod_name))
        if pod is None or pod.metadata.uid != pod_uid or not is_pod_done(pod):
            return  # not known (the garbage collector handles a pod that is gone), or still needs it
        self._delete(claim)

    def _drop_finalizer(self, claim: ResourceClaim) -> ResourceClaim | None:
        """The claim without the builtin finalizer; None when that let a pending deletion finish."""
        key = (claim.metadata.namespace, claim.metadata.name)
        finalizers = [f for f in claim.metadata.finalizers if f != FINALIZER]
        new = replace(claim, metadata=replace(claim.metadata, finalizers=finalizers))
        if new.metadata.deletion_timestamp is not None and not finalizers:
            self.store.remove("ResourceClaim", key)
            return None
        self.store.put("ResourceClaim", key, new, "MODIFIED", "update")
        return new

    def _delete(self, claim: ResourceClaim) -> None:
        """Delete a claim as the API server does: at once, or, while it has finalizers, by
        setting its ``deletionTimestamp`` (the finalizers' owners then finish it)."""
        key = (claim.metadata.namespace, claim.metadata.name)
        current = self.store.get("ResourceClaim", key)
        if current is None or current.metadata.uid != claim.metadata.uid:
            return
        if not current.metadata.finalizers:
            self.store.remove("ResourceClaim", key)
        elif current.metadata.deletion_timestamp is None:
            meta = replace(current.metadata, deletion_timestamp=self.clock.timestamp(), deletion_grace_period_seconds=0)
            self.store.put("ResourceClaim", key, replace(current, metadata=meta), "MODIFIED", "delete")


class ClaimWrites:
    """The resource claim verbs over the cluster's store: ``update_resource_claim``,
    ``update_resource_claim_status``, ``delete_resource_claim``, and the writes of
    DynamicResources' claim for a pod's extended resources (DRAExtendedResource):
    ``create_resource_claim`` and ``patch_pod_extended_resource_claim_status``."""

    _store: Store
    faults: Any
    controllers: Any

    def _check_open(self) -> None:  # pragma: no cover - FakeCluster's own is used
        raise NotImplementedError

    def _pod_or_404(self, namespace: str, name: str) -> Pod:  # pragma: no cover - FakeCluster's
        raise NotImplementedError

    def timestamp(self, offset: float | None = None) -> str:  # pragma: no cover - FakeCluster's
        raise NotImplementedError

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the claim, its status kept (:func:`put_claim`)."""
        await self.faults._enter("update_resource_claim")
        self._check_open()
        return put_claim(self._store, claim)

    async def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the claim's status subresource (:func:`put_claim_status`)."""
        await self.faults._enter("update_resource_claim_status")
        self._check_open()
        return put_claim_status(self._store, claim)

    async def delete_resource_claim(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        """DELETE the claim, finalizers honoured (:func:`delete_claim`)."""
        await self.faults._enter("delete_resource_claim")
        self._check_open()
        delete_claim(self._store, self.timestamp(), namespace, name, uid)

    async def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """POST the claim, a name drawn for its ``generateName`` (:func:`create_claim`)."""
        await self.faults._enter("create_resource_claim")
        self._check_open()
        return create_claim(self._store, claim, self.controllers.rng)

    async def patch_pod_extended_resource_claim_status(
        self, namespace: str, name: str, status: PodExtendedResourceClaimStatus
    ) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus`` (one MODIFIED; none if unchanged)."""
        await self.faults._enter("patch_pod_status")
        self._check_open()
        pod = self._pod_or_404(namespace, name)
        if pod.status.extended_resource_claim_status == status:
            return
        new = replace(pod, metadata=replace(pod.metadata), status=replace(pod.status, extended_resource_claim_status=status))
        self._store.put("Pod", (namespace, name), new, "MODIFIED", "status")


def claim_names(pod: Pod) -> list[str]:
    """The names of the claims ``pod`` uses (``resourceclaim.Name``): a named claim, or the one
    its status records as generated for a template entry; then the scheduler's claim for its
    extended resources (``status.extendedResourceClaimStatus``, DRAExtendedResource)."""
    generated = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    out = []
    for pc in pod.spec.resource_claims:
        name: Any = pc.resource_claim_name if pc.resource_claim_name is not None else generated.get(pc.name)
        if name:
            out.append(name)
    extended = pod.status.extended_resource_claim_status
    if extended is not None and extended.resource_claim_name:
        out.append(extended.resource_claim_name)
    return out


# --- the API verbs on claims (FakeCluster's update_resource_claim_status, delete_resource_claim)


def _conflict(name: str) -> ConflictError:
    return ConflictError(
        f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )


def put_claim(store: Store, claim: ResourceClaim) -> ResourceClaim:
    """A PUT of the claim, its stored status kept (NotFoundError, ConflictError as the store's
    update); a claim being deleted whose last finalizer this removes is gone."""
    md = claim.metadata
    key = (md.namespace or "default", md.name)
    old: ResourceClaim | None = store.get("ResourceClaim", key)
    stored: ResourceClaim = store.update(replace(claim, status=old.status) if old is not None else claim)
    if stored.metadata.deletion_timestamp is not None and not stored.metadata.finalizers:
        store.remove("ResourceClaim", key)
    return stored


def put_claim_status(store: Store, claim: ResourceClaim) -> ResourceClaim:
    """A write of the claim's status subresource: the stored claim with ``claim``'s status
    (NotFoundError when it is gone, ConflictError when ``claim``'s resourceVersion is stale);
    the claim as stored after the write (its controller may have acted on it)."""
    md = claim.metadata
    key = (md.namespace or "default", md.name)
    old: ResourceClaim | None = store.get("ResourceClaim", key)
    if old is None:
        raise NotFoundError(f'resourceclaims.resource.k8s.io "{md.name}" not found')
    if md.resource_version and md.resource_version != old.metadata.resource_version:
        raise _conflict(md.name)
    new = replace(old, metadata=replace(old.metadata), status=_copy(claim.status))
    store.put("ResourceClaim", key, new, "MODIFIED", "status")
    stored: ResourceClaim = store.get("ResourceClaim", key) or new
    return stored


def name_for(store: Store, namespace: str, base: str, rng: random.Random) -> str:
    """The API server's name for ``generateName`` ``base``: its first 58 characters and 5
    random ones (another draw while the name is taken)."""
    name = base[:58]
    for _ in range(100):
        name = base[:58] + "".join(rng.choice(_ALPHANUMS) for _ in range(5))
        if store.get("ResourceClaim", (namespace, name)) is None:
            break
    return name


def create_claim(store: Store, claim: ResourceClaim, rng: random.Random) -> ResourceClaim:
    """POST a claim: named from its ``generateName`` when it has no name (ConflictError when the
    name is taken)."""
    md = claim.metadata
    ns = md.namespace or "default"
    if not md.name and md.generate_name:
        claim = replace(claim, metadata=replace(md, namespace=ns, name=name_for(store, ns, md.generate_name, rng)))
    return store.create(claim)  # type: ignore[no-any-return]


def delete_claim(store: Store, now: str, namespace: str, name: str, uid: str | None) -> None:
    """DELETE a claim (UID precondition): removed, or while it has finalizers marked with a
    ``deletionTimestamp`` of ``now``."""
    key = (namespace or "default", name)
    claim: ResourceClaim | None = store.get("ResourceClaim", key)
    if claim is None:
        raise NotFoundError(f'resourceclaims.resource.k8s.io "{name}" not found')
    if uid is not None and claim.metadata.uid != uid:
        raise ConflictError(f"Precondition failed: UID in precondition: {uid}, UID in object meta: {claim.metadata.uid}")
    if not claim.metadata.finalizers:
        store.remove("ResourceClaim", key)
    elif claim.metadata.deletion_timestamp is None:
        meta = replace(claim.metadata, deletion_timestamp=now, deletion_grace_period_seconds=0)
        store.put("ResourceClaim", key, replace(claim, metadata=meta), "MODIFIED", "delete")
