"""The protobuf messages of core/v1 PersistentVolume and PersistentVolumeClaim, as field tables
for ``_protobuf``'s decoder: what a kube-scheduler's VolumeBinding PreBind PUTs (a claim with
its ``volume.kubernetes.io/selected-node`` annotation, a volume with its ``spec.claimRef``).

The conventions are ``_protomessages``' (see its docstring): field number → (JSON name, type);
``?`` marks a pointer field; a table is a message, ``[...]`` a repeated field, a row named ``""``
an embedded struct (PersistentVolumeSpec's inline PersistentVolumeSource).  Generated from
core/v1 ``types.go`` at k8s.io/api v0.32.9 and checked field by field against its
``generated.proto``: every field of PersistentVolume and PersistentVolumeClaim and of every
message they hold (every volume source, the ``*PersistentVolumeSource`` variants with their
SecretReference, VolumeNodeAffinity, ObjectReference, the claim's status with its conditions
and ModifyVolumeStatus), so that no field a client sends is lost.  The messages a pod's volumes
share with them (GCEPersistentDiskVolumeSource, NFSVolumeSource, ..., PersistentVolumeClaimSpec,
NodeSelector) are ``_protomessages``' own tables.
"""

from __future__ import annotations

from ._protomessages import (
    AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE,
    AZURE_DISK_VOLUME_SOURCE,
    FC_VOLUME_SOURCE,
    FLOCKER_VOLUME_SOURCE,
    GCE_PERSISTENT_DISK_VOLUME_SOURCE,
    HOST_PATH_VOLUME_SOURCE,
    NFS_VOLUME_SOURCE,
    NODE_SELECTOR,
    OBJECT_META,
    PERSISTENT_VOLUME_CLAIM_SPEC,
    PHOTON_PERSISTENT_DISK_VOLUME_SOURCE,
    PORTWORX_VOLUME_SOURCE,
    QUOBYTE_VOLUME_SOURCE,
    TIME,
    VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE,
    Table,
)

__all__ = ["OBJECT_REFERENCE", "PERSISTENT_VOLUME", "PERSISTENT_VOLUME_CLAIM"]

# --- k8s.io/api core/v1 (generated: see the module docstring) ----------------------------------
# fmt: off

SECRET_REFERENCE: Table = {1: ("name", "string"), 2: ("namespace", "string")}
OBJECT_REFERENCE: Table = {
    1: ("kind", "string"), 2: ("namespace", "string"), 3: ("name", "string"), 4: ("uid", "string"),
    5: ("apiVersion", "string"), 6: ("resourceVersion", "string"), 7: ("fieldPath", "string"),
}
GLUSTERFS_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("endpoints", "string"), 2: ("path", "string"), 3: ("readOnly", "bool"),
    4: ("endpointsNamespace", "string?"),
}
RBD_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("monitors", ["string"]), 2: ("image", "string"), 3: ("fsType", "string"),
    4: ("pool", "string"), 5: ("user", "string"), 6: ("keyring", "string"),
    7: ("secretRef", SECRET_REFERENCE), 8: ("readOnly", "bool"),
}
ISCSI_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("targetPortal", "string"), 2: ("iqn", "string"), 3: ("lun", "int"),
    4: ("iscsiInterface", "string"), 5: ("fsType", "string"), 6: ("readOnly", "bool"),
    7: ("portals", ["string"]), 8: ("chapAuthDiscovery", "bool"),
    10: ("secretRef", SECRET_REFERENCE), 11: ("chapAuthSession", "bool"),
    12: ("initiatorName", "string?"),
}
CINDER_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("volumeID", "string"), 2: ("fsType", "string"), 3: ("readOnly", "bool"),
    4: ("secretRef", SECRET_REFERENCE),
}
CEPH_FS_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("monitors", ["string"]), 2: ("path", "string"), 3: ("user", "string"),
    4: ("secretFile", "string"), 5: ("secretRef", SECRET_REFERENCE), 6: ("readOnly", "bool"),
}
FLEX_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("driver", "string"), 2: ("fsType", "string"), 3: ("secretRef", SECRET_REFERENCE),
    4: ("readOnly", "bool"), 5: ("options", "map"),
}
AZURE_FILE_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("secretName", "string"), 2: ("shareName", "string"), 3: ("readOnly", "bool"),
    4: ("secretNamespace", "string?"),
}
SCALE_IO_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("gateway", "string"), 2: ("system", "string"), 3: ("secretRef", SECRET_REFERENCE),
    4: ("sslEnabled", "bool"), 5: ("protectionDomain", "string"), 6: ("storagePool", "string"),
    7: ("storageMode", "string"), 8: ("volumeName", "string"), 9: ("fsType", "string"),
    10: ("readOnly", "bool"),
}
LOCAL_VOLUME_SOURCE: Table = {1: ("path", "string"), 2: ("fsType", "string?")}
STORAGE_OS_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("volumeName", "string"), 2: ("volumeNamespace", "string"), 3: ("fsType", "string"),
    4: ("readOnly", "bool"), 5: ("secretRef", OBJECT_REFERENCE),
}
CSI_PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("driver", "string"), 2: ("volumeHandle", "string"), 3: ("readOnly", "bool"),
    4: ("fsType", "string"), 5: ("volumeAttributes", "map"),
    6: ("controllerPublishSecretRef", SECRET_REFERENCE),
    7: ("nodeStageSecretRef", SECRET_REFERENCE), 8: ("nodePublishSecretRef", SECRET_REFERENCE),
    9: ("controllerExpandSecretRef", SECRET_REFERENCE),
    10: ("nodeExpandSecretRef", SECRET_REFERENCE),
}
PERSISTENT_VOLUME_SOURCE: Table = {
    1: ("gcePersistentDisk", GCE_PERSISTENT_DISK_VOLUME_SOURCE),
    2: ("awsElasticBlockStore", AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE),
    3: ("hostPath", HOST_PATH_VOLUME_SOURCE), 4: ("glusterfs", GLUSTERFS_PERSISTENT_VOLUME_SOURCE),
    5: ("nfs", NFS_VOLUME_SOURCE), 6: ("rbd", RBD_PERSISTENT_VOLUME_SOURCE),
    7: ("iscsi", ISCSI_PERSISTENT_VOLUME_SOURCE), 8: ("cinder", CINDER_PERSISTENT_VOLUME_SOURCE),
    9: ("cephfs", CEPH_FS_PERSISTENT_VOLUME_SOURCE), 10: ("fc", FC_VOLUME_SOURCE),
    11: ("flocker", FLOCKER_VOLUME_SOURCE), 12: ("flexVolume", FLEX_PERSISTENT_VOLUME_SOURCE),
    13: ("azureFile", AZURE_FILE_PERSISTENT_VOLUME_SOURCE),
    14: ("vsphereVolume", VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE),
    15: ("quobyte", QUOBYTE_VOLUME_SOURCE), 16: ("azureDisk", AZURE_DISK_VOLUME_SOURCE),
    17: ("photonPersistentDisk", PHOTON_PERSISTENT_DISK_VOLUME_SOURCE),
    18: ("portworxVolume", PORTWORX_VOLUME_SOURCE),
    19: ("scaleIO", SCALE_IO_PERSISTENT_VOLUME_SOURCE), 20: ("local", LOCAL_VOLUME_SOURCE),
    21: ("storageos", STORAGE_OS_PERSISTENT_VOLUME_SOURCE),
    22: ("csi", CSI_PERSISTENT_VOLUME_SOURCE),
}
VOLUME_NODE_AFFINITY: Table = {1: ("required", NODE_SELECTOR)}
PERSISTENT_VOLUME_SPEC: Table = {
    1: ("capacity", "quantitymap"), 2: ("", PERSISTENT_VOLUME_SOURCE),
    3: ("accessModes", ["string"]), 4: ("claimRef", OBJECT_REFERENCE),
    5: ("persistentVolumeReclaimPolicy", "string"), 6: ("storageClassName", "string"),
    7: ("mountOptions", ["string"]), 8: ("volumeMode", "string?"),
    9: ("nodeAffinity", VOLUME_NODE_AFFINITY), 10: ("volumeAttributesClassName", "string?"),
}
PERSISTENT_VOLUME_STATUS: Table = {
    1: ("phase", "string"), 2: ("message", "string"), 3: ("reason", "string"),
    4: ("lastPhaseTransitionTime", TIME),
}
PERSISTENT_VOLUME: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", PERSISTENT_VOLUME_SPEC),
    3: ("status", PERSISTENT_VOLUME_STATUS),
}
PERSISTENT_VOLUME_CLAIM_CONDITION: Table = {
    1: ("type", "string"), 2: ("status", "string"), 3: ("lastProbeTime", TIME),
    4: ("lastTransitionTime", TIME), 5: ("reason", "string"), 6: ("message", "string"),
}
MODIFY_VOLUME_STATUS: Table = {
    1: ("targetVolumeAttributesClassName", "string"), 2: ("status", "string"),
}
PERSISTENT_VOLUME_CLAIM_STATUS: Table = {
    1: ("phase", "string"), 2: ("accessModes", ["string"]), 3: ("capacity", "quantitymap"),
    4: ("conditions", [PERSISTENT_VOLUME_CLAIM_CONDITION]),
    5: ("allocatedResources", "quantitymap"), 7: ("allocatedResourceStatuses", "map"),
    8: ("currentVolumeAttributesClassName", "string?"),
    9: ("modifyVolumeStatus", MODIFY_VOLUME_STATUS),
}
PERSISTENT_VOLUME_CLAIM: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", PERSISTENT_VOLUME_CLAIM_SPEC),
    3: ("status", PERSISTENT_VOLUME_CLAIM_STATUS),
}

# fmt: on
