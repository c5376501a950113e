"""What the volume plugins share beyond :mod:`kubesched.framework` (client-go listers' errors).

The storage helpers themselves (``GetPersistentVolumeClaimClass``, ``ephemeral.VolumeClaimName``,
``metav1.IsControlledBy``, ...) are :mod:`kubesched.framework`'s
(:func:`~kubesched.framework.get_persistent_volume_claim_class`, ...), one copy with
VolumeBinding and the fake cluster's PV controller.

- :func:`not_found` — the message of the NotFound error an informer lister returns
  (``persistentvolumeclaim "x" not found``, ``storageclass.storage.k8s.io "x" not found``): the
  plugins read the informers' tables (``handle.cluster``), as upstream reads its listers.
"""

from __future__ import annotations

READ_WRITE_ONCE_POD = "ReadWriteOncePod"

# the resources as the listers name them in their NotFound errors (v1.Resource("...") etc.)
PVC_RESOURCE = "persistentvolumeclaim"
PV_RESOURCE = "persistentvolume"
STORAGE_CLASS_RESOURCE = "storageclass.storage.k8s.io"


def not_found(resource: str, name: str) -> str:
    """``apierrors.NewNotFound(resource, name).Error()``."""
    return f'{resource} "{name}" not found'


__all__ = [
    "PVC_RESOURCE",
    "PV_RESOURCE",
    "READ_WRITE_ONCE_POD",
    "STORAGE_CLASS_RESOURCE",
    "not_found",
]
