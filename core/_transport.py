"""The transport interface: how the scheduler sees and changes a cluster.

Shaped like ``httpx.AsyncBaseTransport``: one small abstract class with a few async verbs and
``aclose()`` / ``async with``.  The scheduler receives a transport and never knows which one it
has: the in-memory fake cluster (``kubesched.transports.fake``) or a live API server
(``kubesched.transports.kube``).  Wrapping transports add logging or fault injection.

Failures are typed (:mod:`kubesched._errors`): ``ConflictError`` (409), ``NotFoundError`` (404),
``UnavailableError`` (retryable).
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from kubesched.api._dra import ResourceClaim
from kubesched.api._objects import (
    Binding,
    Event,
    PersistentVolume,
    PersistentVolumeClaim,
    PodCondition,
    PodExtendedResourceClaimStatus,
)
from kubesched.api._workload import Condition

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "SYNCED"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change of one object.  ``SYNCED`` (obj None) marks the end of the initial listing."""

    type: WatchEventType
    obj: Any = None


class Transport(abc.ABC):
    """A cluster, as the scheduler uses it."""

    @abc.abstractmethod
    def watch(self) -> AsyncIterator[WatchEvent]:
        """Every PriorityClass, Node, PodDisruptionBudget, PodGroup, the storage kinds
        (StorageClass, CSIDriver, CSINode, CSIStorageCapacity, PersistentVolume,
        PersistentVolumeClaim), the DRA kinds (DeviceClass, ResourceSlice, DeviceTaintRule,
        ResourceClaim), ReplicaSet, StatefulSet and Pod as ADDED, then SYNCED, then each change
        as it happens.  Ends when the transport is closed."""

    @abc.abstractmethod
    async def bind(self, binding: Binding) -> None:
        """POST the binding subresource.  ConflictError if the pod is already bound."""

    @abc.abstractmethod
    async def patch_pod_status(
        self,
        namespace: str,
        name: str,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        """Strategic-merge the pod's status: a condition (merged by type) and/or the
        nominated node name ("" clears it)."""

    @abc.abstractmethod
    async def delete_pod(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        """DELETE the pod, with a UID precondition when ``uid`` is given."""

    @abc.abstractmethod
    async def record_event(self, event: Event) -> None:
        """Create an events.k8s.io/v1 Event."""

    async def patch_pod_annotations(
        self, namespace: str, name: str, annotations: Mapping[str, str]
    ) -> None:
        """Merge ``annotations`` into the pod's (the recorded plugin results, see
        :mod:`kubesched.scheduler._results`).  Optional: only a scheduler that writes them calls it."""
        raise NotImplementedError(f"{type(self).__name__} cannot patch pod annotations")

    async def patch_pod_group_status(self, namespace: str, name: str, condition: Condition) -> None:
        """Set ``condition`` on the Workload API PodGroup's (``scheduling.k8s.io/v1alpha2``)
        status, as ``apimeta.SetStatusCondition`` (the PodGroup scheduling cycle of 1.36 writes
        PodGroupScheduled).  Optional: only a scheduler with GenericWorkload on calls it."""
        raise NotImplementedError(f"{type(self).__name__} cannot patch PodGroup status")

    async def update_persistent_volume(self, pv: PersistentVolume) -> PersistentVolume:
        """PUT the PersistentVolume (VolumeBinding's PreBind binds a volume to its claim by
        setting ``spec.claimRef``); returns the stored object.  ConflictError when its
        ``resourceVersion`` is stale."""
        raise NotImplementedError(f"{type(self).__name__} cannot update PersistentVolumes")

    async def update_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
        """PUT the PersistentVolumeClaim (VolumeBinding's PreBind annotates a claim to provision
        with ``volume.kubernetes.io/selected-node``); returns the stored object.  ConflictError
        when its ``resourceVersion`` is stale."""
        raise NotImplementedError(f"{type(self).__name__} cannot update PersistentVolumeClaims")

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the ResourceClaim, its status left as stored (DynamicResources' PreBind adds the
        ``resource.kubernetes.io/delete-protection`` finalizer, its Unreserve and PostFilter
        remove it); returns the stored object.  ConflictError when its ``resourceVersion`` is
        stale, NotFoundError when it is gone."""
        raise NotImplementedError(f"{type(self).__name__} cannot update ResourceClaims")

    async def update_resource_claim_status(self, claim: ResourceClaim) -> ResourceClaim:
        """PUT the ResourceClaim's status subresource (the allocation and ``reservedFor`` that
        PreBind writes, that Unreserve and PostFilter clear); returns the stored object, as
        :meth:`update_resource_claim`."""
        raise NotImplementedError(f"{type(self).__name__} cannot update ResourceClaim statuses")

    async def delete_resource_claim(self, namespace: str, name: str, *, uid: str | None = None) -> None:
        """DELETE the ResourceClaim, with a UID precondition when ``uid`` is given (a claim with
        finalizers is only marked with a ``deletionTimestamp`` until they are removed)."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete ResourceClaims")

    async def create_resource_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """POST the ResourceClaim (named from its ``generateName`` when it has no name); returns
        the stored object.  DynamicResources' PreBind creates the claim of a pod's extended
        resources backed by DRA with it (DRAExtendedResource)."""
        raise NotImplementedError(f"{type(self).__name__} cannot create ResourceClaims")

    async def patch_pod_extended_resource_claim_status(
        self, namespace: str, name: str, status: PodExtendedResourceClaimStatus
    ) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus`` (``util.PatchPodStatus``, a
        strategic merge): the claim DynamicResources made for its extended resources and the
        request serving each container's resource."""
        raise NotImplementedError(f"{type(self).__name__} cannot patch a pod's extendedResourceClaimStatus")

    async def aclose(self) -> None:  # noqa: B027 - optional: not every transport holds resources
        """Release connections and end every watch."""

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
