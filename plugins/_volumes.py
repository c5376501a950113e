"""What the volume plugins share (upstream's ``component-helpers/storage``, client-go listers).

- :func:`pvc_storage_class` — ``storagehelpers.GetPersistentVolumeClaimClass``: the beta
  annotation ``volume.beta.kubernetes.io/storage-class`` first, then ``spec.storageClassName``.
- :func:`ephemeral_claim_name` / :func:`is_controlled_by` — ``ephemeral.VolumeClaimName`` (the
  claim of a generic ephemeral volume is ``<pod>-<volume>``) and ``metav1.IsControlledBy``.
- :func:`not_found` — the message of the NotFound error an informer lister returns
  (``persistentvolumeclaim "x" not found``, ``storageclass.storage.k8s.io "x" not found``): the
  plugins read the informers' tables (``handle.cluster``), as upstream reads its listers.
"""

from __future__ import annotations

from typing import Any

BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

# the resources as the listers name them in their NotFound errors (v1.Resource("...") etc.)
PVC_RESOURCE = "persistentvolumeclaim"
PV_RESOURCE = "persistentvolume"
STORAGE_CLASS_RESOURCE = "storageclass.storage.k8s.io"


def not_found(resource: str, name: str) -> str:
    """``apierrors.NewNotFound(resource, name).Error()``."""
    return f'{resource} "{name}" not found'


def pvc_storage_class(pvc: Any) -> str:
    """``GetPersistentVolumeClaimClass``: the claim's class name, "" for none."""
    cls = pvc.metadata.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if cls is not None:
        return str(cls)
    name = pvc.spec.storage_class_name
    return name if name is not None else ""


def ephemeral_claim_name(pod: Any, volume: Any) -> str:
    """``ephemeral.VolumeClaimName``: the PVC a generic ephemeral volume uses."""
    return f"{pod.metadata.name}-{volume.name}"


def is_controlled_by(obj: Any, uid: str) -> bool:
    """``metav1.IsControlledBy``: ``obj``'s controller owner reference has ``uid``."""
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return bool(ref.uid == uid)
    return False


__all__ = [
    "BETA_STORAGE_CLASS_ANNOTATION",
    "PVC_RESOURCE",
    "PV_RESOURCE",
    "READ_WRITE_ONCE_POD",
    "STORAGE_CLASS_RESOURCE",
    "WAIT_FOR_FIRST_CONSUMER",
    "ephemeral_claim_name",
    "is_controlled_by",
    "not_found",
    "pvc_storage_class",
]
