"""The protobuf messages of the kinds the server decodes, as field tables: field number →
(JSON name, type), for ``_protobuf``'s decoder.

Each row is one field of upstream's Go struct, from its tags: ``protobuf:"<wire>,<number>,..."``
gives the number and ``json:"<name>,..."`` the name.  The types:

- ``"string"``, ``"int"`` (int32 and int64), ``"bool"``, ``"bytes"``: scalars; a trailing ``?``
  marks a pointer field (``*int64``), whose zero value is kept (gogo-protobuf writes every
  non-pointer field, so a non-pointer zero decodes as absent, as ``omitempty`` leaves it out);
- ``"map"`` (``map[string]string``), ``"quantitymap"`` (a ResourceList), ``"timemap"``
  (``map[string]metav1.Time``), ``"quantity"`` (resource.Quantity), ``"intorstr"``
  (intstr.IntOrString), ``TIME`` (metav1.Time, whole seconds), ``MICRO_TIME``
  (metav1.MicroTime);
- a table: a message; ``[...]``: a repeated field;
- a row named ``""``: an embedded struct (``json:",inline"``), whose fields are its parent's.

The k8s.io/apimachinery meta/v1 tables are written by hand; the k8s.io/api ones below them were
generated from core/v1, apps/v1, batch/v1, policy/v1 and scheduling/v1 ``types.go`` at
k8s.io/api v0.32.9 (Kubernetes 1.32, the version the server reports), and checked field by field
against its ``generated.proto``: every field of Pod, Deployment, ReplicaSet, Job, Namespace,
Service, PodDisruptionBudget and PriorityClass and of every message they hold, so that no field
a client sends is lost.  A field added upstream since is one row in its message.  The tables
of PersistentVolume and PersistentVolumeClaim are in ``_protomessages_storage``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEPLOYMENT",
    "JOB",
    "LABEL_SELECTOR",
    "MICRO_TIME",
    "NAMESPACE",
    "OBJECT_META",
    "POD",
    "POD_DISRUPTION_BUDGET",
    "PRIORITY_CLASS",
    "REPLICA_SET",
    "SERVICE",
    "TIME",
    "Table",
]

Table = dict[int, tuple[str, Any]]

TIME = "time"
MICRO_TIME = "microtime"

# --- k8s.io/apimachinery/pkg/apis/meta/v1 ------------------------------------------------------

OWNER_REFERENCE: Table = {
    1: ("kind", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("controller", "bool?"),
    7: ("blockOwnerDeletion", "bool?"),
}
MANAGED_FIELDS_ENTRY: Table = {
    1: ("manager", "string"),
    2: ("operation", "string"),
    3: ("apiVersion", "string"),
    4: ("time", TIME),
    6: ("fieldsType", "string"),
    7: ("fieldsV1", "fieldsv1"),
    8: ("subresource", "string"),
}
OBJECT_META: Table = {
    1: ("name", "string"),
    2: ("generateName", "string"),
    3: ("namespace", "string"),
    4: ("selfLink", "string"),
    5: ("uid", "string"),
    6: ("resourceVersion", "string"),
    7: ("generation", "int"),
    8: ("creationTimestamp", TIME),
    9: ("deletionTimestamp", TIME),
    10: ("deletionGracePeriodSeconds", "int?"),
    11: ("labels", "map"),
    12: ("annotations", "map"),
    13: ("ownerReferences", [OWNER_REFERENCE]),
    14: ("finalizers", ["string"]),
    17: ("managedFields", [MANAGED_FIELDS_ENTRY]),
}
LABEL_SELECTOR_REQUIREMENT: Table = {
    1: ("key", "string"),
    2: ("operator", "string"),
    3: ("values", ["string"]),
}
LABEL_SELECTOR: Table = {
    1: ("matchLabels", "map"),
    2: ("matchExpressions", [LABEL_SELECTOR_REQUIREMENT]),
}
CONDITION: Table = {
    1: ("type", "string"),
    2: ("status", "string"),
    3: ("observedGeneration", "int"),
    4: ("lastTransitionTime", TIME),
    5: ("reason", "string"),
    6: ("message", "string"),
}

# --- k8s.io/api (generated: see the module docstring) ------------------------------------------
# fmt: off

HOST_PATH_VOLUME_SOURCE: Table = {1: ("path", "string"), 2: ("type", "string?")}
EMPTY_DIR_VOLUME_SOURCE: Table = {1: ("medium", "string"), 2: ("sizeLimit", "quantity?")}
GCE_PERSISTENT_DISK_VOLUME_SOURCE: Table = {
    1: ("pdName", "string"), 2: ("fsType", "string"), 3: ("partition", "int"),
    4: ("readOnly", "bool"),
}
AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE: Table = {
    1: ("volumeID", "string"), 2: ("fsType", "string"), 3: ("partition", "int"),
    4: ("readOnly", "bool"),
}
GIT_REPO_VOLUME_SOURCE: Table = {
    1: ("repository", "string"), 2: ("revision", "string"), 3: ("directory", "string"),
}
KEY_TO_PATH: Table = {1: ("key", "string"), 2: ("path", "string"), 3: ("mode", "int?")}
SECRET_VOLUME_SOURCE: Table = {
    1: ("secretName", "string"), 2: ("items", [KEY_TO_PATH]), 3: ("defaultMode", "int?"),
    4: ("optional", "bool?"),
}
NFS_VOLUME_SOURCE: Table = {1: ("server", "string"), 2: ("path", "string"), 3: ("readOnly", "bool")}
LOCAL_OBJECT_REFERENCE: Table = {1: ("name", "string")}
ISCSI_VOLUME_SOURCE: Table = {
    1: ("targetPortal", "string"), 2: ("iqn", "string"), 3: ("lun", "int"),
    4: ("iscsiInterface", "string"), 5: ("fsType", "string"), 6: ("readOnly", "bool"),
    7: ("portals", ["string"]), 8: ("chapAuthDiscovery", "bool"),
    10: ("secretRef", LOCAL_OBJECT_REFERENCE), 11: ("chapAuthSession", "bool"),
    12: ("initiatorName", "string?"),
}
GLUSTERFS_VOLUME_SOURCE: Table = {
    1: ("endpoints", "string"), 2: ("path", "string"), 3: ("readOnly", "bool"),
}
PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE: Table = {1: ("claimName", "string"), 2: ("readOnly", "bool")}
RBD_VOLUME_SOURCE: Table = {
    1: ("monitors", ["string"]), 2: ("image", "string"), 3: ("fsType", "string"),
    4: ("pool", "string"), 5: ("user", "string"), 6: ("keyring", "string"),
    7: ("secretRef", LOCAL_OBJECT_REFERENCE), 8: ("readOnly", "bool"),
}
FLEX_VOLUME_SOURCE: Table = {
    1: ("driver", "string"), 2: ("fsType", "string"), 3: ("secretRef", LOCAL_OBJECT_REFERENCE),
    4: ("readOnly", "bool"), 5: ("options", "map"),
}
CINDER_VOLUME_SOURCE: Table = {
    1: ("volumeID", "string"), 2: ("fsType", "string"), 3: ("readOnly", "bool"),
    4: ("secretRef", LOCAL_OBJECT_REFERENCE),
}
CEPH_FS_VOLUME_SOURCE: Table = {
    1: ("monitors", ["string"]), 2: ("path", "string"), 3: ("user", "string"),
    4: ("secretFile", "string"), 5: ("secretRef", LOCAL_OBJECT_REFERENCE), 6: ("readOnly", "bool"),
}
FLOCKER_VOLUME_SOURCE: Table = {1: ("datasetName", "string"), 2: ("datasetUUID", "string")}
OBJECT_FIELD_SELECTOR: Table = {1: ("apiVersion", "string"), 2: ("fieldPath", "string")}
RESOURCE_FIELD_SELECTOR: Table = {
    1: ("containerName", "string"), 2: ("resource", "string"), 3: ("divisor", "quantity"),
}
DOWNWARD_API_VOLUME_FILE: Table = {
    1: ("path", "string"), 2: ("fieldRef", OBJECT_FIELD_SELECTOR),
    3: ("resourceFieldRef", RESOURCE_FIELD_SELECTOR), 4: ("mode", "int?"),
}
DOWNWARD_API_VOLUME_SOURCE: Table = {
    1: ("items", [DOWNWARD_API_VOLUME_FILE]), 2: ("defaultMode", "int?"),
}
FC_VOLUME_SOURCE: Table = {
    1: ("targetWWNs", ["string"]), 2: ("lun", "int?"), 3: ("fsType", "string"),
    4: ("readOnly", "bool"), 5: ("wwids", ["string"]),
}
AZURE_FILE_VOLUME_SOURCE: Table = {
    1: ("secretName", "string"), 2: ("shareName", "string"), 3: ("readOnly", "bool"),
}
CONFIG_MAP_VOLUME_SOURCE: Table = {
    1: ("", LOCAL_OBJECT_REFERENCE), 2: ("items", [KEY_TO_PATH]), 3: ("defaultMode", "int?"),
    4: ("optional", "bool?"),
}
VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE: Table = {
    1: ("volumePath", "string"), 2: ("fsType", "string"), 3: ("storagePolicyName", "string"),
    4: ("storagePolicyID", "string"),
}
QUOBYTE_VOLUME_SOURCE: Table = {
    1: ("registry", "string"), 2: ("volume", "string"), 3: ("readOnly", "bool"),
    4: ("user", "string"), 5: ("group", "string"), 6: ("tenant", "string"),
}
AZURE_DISK_VOLUME_SOURCE: Table = {
    1: ("diskName", "string"), 2: ("diskURI", "string"), 3: ("cachingMode", "string?"),
    4: ("fsType", "string?"), 5: ("readOnly", "bool?"), 6: ("kind", "string?"),
}
PHOTON_PERSISTENT_DISK_VOLUME_SOURCE: Table = {1: ("pdID", "string"), 2: ("fsType", "string")}
SECRET_PROJECTION: Table = {
    1: ("", LOCAL_OBJECT_REFERENCE), 2: ("items", [KEY_TO_PATH]), 4: ("optional", "bool?"),
}
DOWNWARD_API_PROJECTION: Table = {1: ("items", [DOWNWARD_API_VOLUME_FILE])}
CONFIG_MAP_PROJECTION: Table = {
    1: ("", LOCAL_OBJECT_REFERENCE), 2: ("items", [KEY_TO_PATH]), 4: ("optional", "bool?"),
}
SERVICE_ACCOUNT_TOKEN_PROJECTION: Table = {
    1: ("audience", "string"), 2: ("expirationSeconds", "int?"), 3: ("path", "string"),
}
CLUSTER_TRUST_BUNDLE_PROJECTION: Table = {
    1: ("name", "string?"), 2: ("signerName", "string?"), 3: ("labelSelector", LABEL_SELECTOR),
    4: ("path", "string"), 5: ("optional", "bool?"),
}
VOLUME_PROJECTION: Table = {
    1: ("secret", SECRET_PROJECTION), 2: ("downwardAPI", DOWNWARD_API_PROJECTION),
    3: ("configMap", CONFIG_MAP_PROJECTION),
    4: ("serviceAccountToken", SERVICE_ACCOUNT_TOKEN_PROJECTION),
    5: ("clusterTrustBundle", CLUSTER_TRUST_BUNDLE_PROJECTION),
}
PROJECTED_VOLUME_SOURCE: Table = {1: ("sources", [VOLUME_PROJECTION]), 2: ("defaultMode", "int?")}
PORTWORX_VOLUME_SOURCE: Table = {
    1: ("volumeID", "string"), 2: ("fsType", "string"), 3: ("readOnly", "bool"),
}
SCALE_IO_VOLUME_SOURCE: Table = {
    1: ("gateway", "string"), 2: ("system", "string"), 3: ("secretRef", LOCAL_OBJECT_REFERENCE),
    4: ("sslEnabled", "bool"), 5: ("protectionDomain", "string"), 6: ("storagePool", "string"),
    7: ("storageMode", "string"), 8: ("volumeName", "string"), 9: ("fsType", "string"),
    10: ("readOnly", "bool"),
}
STORAGE_OS_VOLUME_SOURCE: Table = {
    1: ("volumeName", "string"), 2: ("volumeNamespace", "string"), 3: ("fsType", "string"),
    4: ("readOnly", "bool"), 5: ("secretRef", LOCAL_OBJECT_REFERENCE),
}
CSI_VOLUME_SOURCE: Table = {
    1: ("driver", "string"), 2: ("readOnly", "bool?"), 3: ("fsType", "string?"),
    4: ("volumeAttributes", "map"), 5: ("nodePublishSecretRef", LOCAL_OBJECT_REFERENCE),
}
VOLUME_RESOURCE_REQUIREMENTS: Table = {1: ("limits", "quantitymap"), 2: ("requests", "quantitymap")}
TYPED_LOCAL_OBJECT_REFERENCE: Table = {
    1: ("apiGroup", "string?"), 2: ("kind", "string"), 3: ("name", "string"),
}
TYPED_OBJECT_REFERENCE: Table = {
    1: ("apiGroup", "string?"), 2: ("kind", "string"), 3: ("name", "string"),
    4: ("namespace", "string?"),
}
PERSISTENT_VOLUME_CLAIM_SPEC: Table = {
    1: ("accessModes", ["string"]), 2: ("resources", VOLUME_RESOURCE_REQUIREMENTS),
    3: ("volumeName", "string"), 4: ("selector", LABEL_SELECTOR),
    5: ("storageClassName", "string?"), 6: ("volumeMode", "string?"),
    7: ("dataSource", TYPED_LOCAL_OBJECT_REFERENCE), 8: ("dataSourceRef", TYPED_OBJECT_REFERENCE),
    9: ("volumeAttributesClassName", "string?"),
}
PERSISTENT_VOLUME_CLAIM_TEMPLATE: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", PERSISTENT_VOLUME_CLAIM_SPEC),
}
EPHEMERAL_VOLUME_SOURCE: Table = {1: ("volumeClaimTemplate", PERSISTENT_VOLUME_CLAIM_TEMPLATE)}
IMAGE_VOLUME_SOURCE: Table = {1: ("reference", "string"), 2: ("pullPolicy", "string")}
VOLUME_SOURCE: Table = {
    1: ("hostPath", HOST_PATH_VOLUME_SOURCE), 2: ("emptyDir", EMPTY_DIR_VOLUME_SOURCE),
    3: ("gcePersistentDisk", GCE_PERSISTENT_DISK_VOLUME_SOURCE),
    4: ("awsElasticBlockStore", AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE),
    5: ("gitRepo", GIT_REPO_VOLUME_SOURCE), 6: ("secret", SECRET_VOLUME_SOURCE),
    7: ("nfs", NFS_VOLUME_SOURCE), 8: ("iscsi", ISCSI_VOLUME_SOURCE),
    9: ("glusterfs", GLUSTERFS_VOLUME_SOURCE),
    10: ("persistentVolumeClaim", PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE),
    11: ("rbd", RBD_VOLUME_SOURCE), 12: ("flexVolume", FLEX_VOLUME_SOURCE),
    13: ("cinder", CINDER_VOLUME_SOURCE), 14: ("cephfs", CEPH_FS_VOLUME_SOURCE),
    15: ("flocker", FLOCKER_VOLUME_SOURCE), 16: ("downwardAPI", DOWNWARD_API_VOLUME_SOURCE),
    17: ("fc", FC_VOLUME_SOURCE), 18: ("azureFile", AZURE_FILE_VOLUME_SOURCE),
    19: ("configMap", CONFIG_MAP_VOLUME_SOURCE),
    20: ("vsphereVolume", VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE),
    21: ("quobyte", QUOBYTE_VOLUME_SOURCE), 22: ("azureDisk", AZURE_DISK_VOLUME_SOURCE),
    23: ("photonPersistentDisk", PHOTON_PERSISTENT_DISK_VOLUME_SOURCE),
    24: ("portworxVolume", PORTWORX_VOLUME_SOURCE), 25: ("scaleIO", SCALE_IO_VOLUME_SOURCE),
    26: ("projected", PROJECTED_VOLUME_SOURCE), 27: ("storageos", STORAGE_OS_VOLUME_SOURCE),
    28: ("csi", CSI_VOLUME_SOURCE), 29: ("ephemeral", EPHEMERAL_VOLUME_SOURCE),
    30: ("image", IMAGE_VOLUME_SOURCE),
}
VOLUME: Table = {1: ("name", "string"), 2: ("", VOLUME_SOURCE)}
CONTAINER_PORT: Table = {
    1: ("name", "string"), 2: ("hostPort", "int"), 3: ("containerPort", "int"),
    4: ("protocol", "string"), 5: ("hostIP", "string"),
}
CONFIG_MAP_ENV_SOURCE: Table = {1: ("", LOCAL_OBJECT_REFERENCE), 2: ("optional", "bool?")}
SECRET_ENV_SOURCE: Table = {1: ("", LOCAL_OBJECT_REFERENCE), 2: ("optional", "bool?")}
ENV_FROM_SOURCE: Table = {
    1: ("prefix", "string"), 2: ("configMapRef", CONFIG_MAP_ENV_SOURCE),
    3: ("secretRef", SECRET_ENV_SOURCE),
}
CONFIG_MAP_KEY_SELECTOR: Table = {
    1: ("", LOCAL_OBJECT_REFERENCE), 2: ("key", "string"), 3: ("optional", "bool?"),
}
SECRET_KEY_SELECTOR: Table = {
    1: ("", LOCAL_OBJECT_REFERENCE), 2: ("key", "string"), 3: ("optional", "bool?"),
}
ENV_VAR_SOURCE: Table = {
    1: ("fieldRef", OBJECT_FIELD_SELECTOR), 2: ("resourceFieldRef", RESOURCE_FIELD_SELECTOR),
    3: ("configMapKeyRef", CONFIG_MAP_KEY_SELECTOR), 4: ("secretKeyRef", SECRET_KEY_SELECTOR),
}
ENV_VAR: Table = {1: ("name", "string"), 2: ("value", "string"), 3: ("valueFrom", ENV_VAR_SOURCE)}
RESOURCE_CLAIM: Table = {1: ("name", "string"), 2: ("request", "string")}
RESOURCE_REQUIREMENTS: Table = {
    1: ("limits", "quantitymap"), 2: ("requests", "quantitymap"), 3: ("claims", [RESOURCE_CLAIM]),
}
CONTAINER_RESIZE_POLICY: Table = {1: ("resourceName", "string"), 2: ("restartPolicy", "string")}
VOLUME_MOUNT: Table = {
    1: ("name", "string"), 2: ("readOnly", "bool"), 3: ("mountPath", "string"),
    4: ("subPath", "string"), 5: ("mountPropagation", "string?"), 6: ("subPathExpr", "string"),
    7: ("recursiveReadOnly", "string?"),
}
VOLUME_DEVICE: Table = {1: ("name", "string"), 2: ("devicePath", "string")}
EXEC_ACTION: Table = {1: ("command", ["string"])}
HTTP_HEADER: Table = {1: ("name", "string"), 2: ("value", "string")}
HTTP_GET_ACTION: Table = {
    1: ("path", "string"), 2: ("port", "intorstr"), 3: ("host", "string"), 4: ("scheme", "string"),
    5: ("httpHeaders", [HTTP_HEADER]),
}
TCP_SOCKET_ACTION: Table = {1: ("port", "intorstr"), 2: ("host", "string")}
GRPC_ACTION: Table = {1: ("port", "int"), 2: ("service", "string?")}
PROBE_HANDLER: Table = {
    1: ("exec", EXEC_ACTION), 2: ("httpGet", HTTP_GET_ACTION), 3: ("tcpSocket", TCP_SOCKET_ACTION),
    4: ("grpc", GRPC_ACTION),
}
PROBE: Table = {
    1: ("", PROBE_HANDLER), 2: ("initialDelaySeconds", "int"), 3: ("timeoutSeconds", "int"),
    4: ("periodSeconds", "int"), 5: ("successThreshold", "int"), 6: ("failureThreshold", "int"),
    7: ("terminationGracePeriodSeconds", "int?"),
}
SLEEP_ACTION: Table = {1: ("seconds", "int")}
LIFECYCLE_HANDLER: Table = {
    1: ("exec", EXEC_ACTION), 2: ("httpGet", HTTP_GET_ACTION), 3: ("tcpSocket", TCP_SOCKET_ACTION),
    4: ("sleep", SLEEP_ACTION),
}
LIFECYCLE: Table = {1: ("postStart", LIFECYCLE_HANDLER), 2: ("preStop", LIFECYCLE_HANDLER)}
CAPABILITIES: Table = {1: ("add", ["string"]), 2: ("drop", ["string"])}
SE_LINUX_OPTIONS: Table = {
    1: ("user", "string"), 2: ("role", "string"), 3: ("type", "string"), 4: ("level", "string"),
}
WINDOWS_SECURITY_CONTEXT_OPTIONS: Table = {
    1: ("gmsaCredentialSpecName", "string?"), 2: ("gmsaCredentialSpec", "string?"),
    3: ("runAsUserName", "string?"), 4: ("hostProcess", "bool?"),
}
SECCOMP_PROFILE: Table = {1: ("type", "string"), 2: ("localhostProfile", "string?")}
APP_ARMOR_PROFILE: Table = {1: ("type", "string"), 2: ("localhostProfile", "string?")}
SECURITY_CONTEXT: Table = {
    1: ("capabilities", CAPABILITIES), 2: ("privileged", "bool?"),
    3: ("seLinuxOptions", SE_LINUX_OPTIONS), 4: ("runAsUser", "int?"), 5: ("runAsNonRoot", "bool?"),
    6: ("readOnlyRootFilesystem", "bool?"), 7: ("allowPrivilegeEscalation", "bool?"),
    8: ("runAsGroup", "int?"), 9: ("procMount", "string?"),
    10: ("windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    11: ("seccompProfile", SECCOMP_PROFILE), 12: ("appArmorProfile", APP_ARMOR_PROFILE),
}
CONTAINER: Table = {
    1: ("name", "string"), 2: ("image", "string"), 3: ("command", ["string"]),
    4: ("args", ["string"]), 5: ("workingDir", "string"), 6: ("ports", [CONTAINER_PORT]),
    7: ("env", [ENV_VAR]), 8: ("resources", RESOURCE_REQUIREMENTS),
    9: ("volumeMounts", [VOLUME_MOUNT]), 10: ("livenessProbe", PROBE),
    11: ("readinessProbe", PROBE), 12: ("lifecycle", LIFECYCLE),
    13: ("terminationMessagePath", "string"), 14: ("imagePullPolicy", "string"),
    15: ("securityContext", SECURITY_CONTEXT), 16: ("stdin", "bool"), 17: ("stdinOnce", "bool"),
    18: ("tty", "bool"), 19: ("envFrom", [ENV_FROM_SOURCE]),
    20: ("terminationMessagePolicy", "string"), 21: ("volumeDevices", [VOLUME_DEVICE]),
    22: ("startupProbe", PROBE), 23: ("resizePolicy", [CONTAINER_RESIZE_POLICY]),
    24: ("restartPolicy", "string?"),
}
EPHEMERAL_CONTAINER_COMMON: Table = {
    1: ("name", "string"), 2: ("image", "string"), 3: ("command", ["string"]),
    4: ("args", ["string"]), 5: ("workingDir", "string"), 6: ("ports", [CONTAINER_PORT]),
    7: ("env", [ENV_VAR]), 8: ("resources", RESOURCE_REQUIREMENTS),
    9: ("volumeMounts", [VOLUME_MOUNT]), 10: ("livenessProbe", PROBE),
    11: ("readinessProbe", PROBE), 12: ("lifecycle", LIFECYCLE),
    13: ("terminationMessagePath", "string"), 14: ("imagePullPolicy", "string"),
    15: ("securityContext", SECURITY_CONTEXT), 16: ("stdin", "bool"), 17: ("stdinOnce", "bool"),
    18: ("tty", "bool"), 19: ("envFrom", [ENV_FROM_SOURCE]),
    20: ("terminationMessagePolicy", "string"), 21: ("volumeDevices", [VOLUME_DEVICE]),
    22: ("startupProbe", PROBE), 23: ("resizePolicy", [CONTAINER_RESIZE_POLICY]),
    24: ("restartPolicy", "string?"),
}
EPHEMERAL_CONTAINER: Table = {
    1: ("", EPHEMERAL_CONTAINER_COMMON), 2: ("targetContainerName", "string"),
}
SYSCTL: Table = {1: ("name", "string"), 2: ("value", "string")}
POD_SECURITY_CONTEXT: Table = {
    1: ("seLinuxOptions", SE_LINUX_OPTIONS), 2: ("runAsUser", "int?"), 3: ("runAsNonRoot", "bool?"),
    4: ("supplementalGroups", ["int"]), 5: ("fsGroup", "int?"), 6: ("runAsGroup", "int?"),
    7: ("sysctls", [SYSCTL]), 8: ("windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
    9: ("fsGroupChangePolicy", "string?"), 10: ("seccompProfile", SECCOMP_PROFILE),
    11: ("appArmorProfile", APP_ARMOR_PROFILE), 12: ("supplementalGroupsPolicy", "string?"),
    13: ("seLinuxChangePolicy", "string?"),
}
NODE_SELECTOR_REQUIREMENT: Table = {
    1: ("key", "string"), 2: ("operator", "string"), 3: ("values", ["string"]),
}
NODE_SELECTOR_TERM: Table = {
    1: ("matchExpressions", [NODE_SELECTOR_REQUIREMENT]),
    2: ("matchFields", [NODE_SELECTOR_REQUIREMENT]),
}
NODE_SELECTOR: Table = {1: ("nodeSelectorTerms", [NODE_SELECTOR_TERM])}
PREFERRED_SCHEDULING_TERM: Table = {1: ("weight", "int"), 2: ("preference", NODE_SELECTOR_TERM)}
NODE_AFFINITY: Table = {
    1: ("requiredDuringSchedulingIgnoredDuringExecution", NODE_SELECTOR),
    2: ("preferredDuringSchedulingIgnoredDuringExecution", [PREFERRED_SCHEDULING_TERM]),
}
POD_AFFINITY_TERM: Table = {
    1: ("labelSelector", LABEL_SELECTOR), 2: ("namespaces", ["string"]),
    3: ("topologyKey", "string"), 4: ("namespaceSelector", LABEL_SELECTOR),
    5: ("matchLabelKeys", ["string"]), 6: ("mismatchLabelKeys", ["string"]),
}
WEIGHTED_POD_AFFINITY_TERM: Table = {
    1: ("weight", "int"), 2: ("podAffinityTerm", POD_AFFINITY_TERM),
}
POD_AFFINITY: Table = {
    1: ("requiredDuringSchedulingIgnoredDuringExecution", [POD_AFFINITY_TERM]),
    2: ("preferredDuringSchedulingIgnoredDuringExecution", [WEIGHTED_POD_AFFINITY_TERM]),
}
POD_ANTI_AFFINITY: Table = {
    1: ("requiredDuringSchedulingIgnoredDuringExecution", [POD_AFFINITY_TERM]),
    2: ("preferredDuringSchedulingIgnoredDuringExecution", [WEIGHTED_POD_AFFINITY_TERM]),
}
AFFINITY: Table = {
    1: ("nodeAffinity", NODE_AFFINITY), 2: ("podAffinity", POD_AFFINITY),
    3: ("podAntiAffinity", POD_ANTI_AFFINITY),
}
TOLERATION: Table = {
    1: ("key", "string"), 2: ("operator", "string"), 3: ("value", "string"),
    4: ("effect", "string"), 5: ("tolerationSeconds", "int?"),
}
HOST_ALIAS: Table = {1: ("ip", "string"), 2: ("hostnames", ["string"])}
POD_DNS_CONFIG_OPTION: Table = {1: ("name", "string"), 2: ("value", "string?")}
POD_DNS_CONFIG: Table = {
    1: ("nameservers", ["string"]), 2: ("searches", ["string"]),
    3: ("options", [POD_DNS_CONFIG_OPTION]),
}
POD_READINESS_GATE: Table = {1: ("conditionType", "string")}
TOPOLOGY_SPREAD_CONSTRAINT: Table = {
    1: ("maxSkew", "int"), 2: ("topologyKey", "string"), 3: ("whenUnsatisfiable", "string"),
    4: ("labelSelector", LABEL_SELECTOR), 5: ("minDomains", "int?"),
    6: ("nodeAffinityPolicy", "string?"), 7: ("nodeTaintsPolicy", "string?"),
    8: ("matchLabelKeys", ["string"]),
}
POD_OS: Table = {1: ("name", "string")}
POD_SCHEDULING_GATE: Table = {1: ("name", "string")}
WORKLOAD_REFERENCE: Table = {
    1: ("name", "string"), 2: ("podGroup", "string"), 3: ("podGroupReplicaKey", "string"),
}
POD_SCHEDULING_GROUP: Table = {1: ("podGroupName", "string?")}
POD_RESOURCE_CLAIM: Table = {
    1: ("name", "string"), 3: ("resourceClaimName", "string?"),
    4: ("resourceClaimTemplateName", "string?"),
}
POD_SPEC: Table = {
    1: ("volumes", [VOLUME]), 2: ("containers", [CONTAINER]), 3: ("restartPolicy", "string"),
    4: ("terminationGracePeriodSeconds", "int?"), 5: ("activeDeadlineSeconds", "int?"),
    6: ("dnsPolicy", "string"), 7: ("nodeSelector", "map"), 8: ("serviceAccountName", "string"),
    9: ("serviceAccount", "string"), 10: ("nodeName", "string"), 11: ("hostNetwork", "bool"),
    12: ("hostPID", "bool"), 13: ("hostIPC", "bool"), 14: ("securityContext", POD_SECURITY_CONTEXT),
    15: ("imagePullSecrets", [LOCAL_OBJECT_REFERENCE]), 16: ("hostname", "string"),
    17: ("subdomain", "string"), 18: ("affinity", AFFINITY), 19: ("schedulerName", "string"),
    20: ("initContainers", [CONTAINER]), 21: ("automountServiceAccountToken", "bool?"),
    22: ("tolerations", [TOLERATION]), 23: ("hostAliases", [HOST_ALIAS]),
    24: ("priorityClassName", "string"), 25: ("priority", "int?"),
    26: ("dnsConfig", POD_DNS_CONFIG), 27: ("shareProcessNamespace", "bool?"),
    28: ("readinessGates", [POD_READINESS_GATE]), 29: ("runtimeClassName", "string?"),
    30: ("enableServiceLinks", "bool?"), 31: ("preemptionPolicy", "string?"),
    32: ("overhead", "quantitymap"),
    33: ("topologySpreadConstraints", [TOPOLOGY_SPREAD_CONSTRAINT]),
    34: ("ephemeralContainers", [EPHEMERAL_CONTAINER]), 35: ("setHostnameAsFQDN", "bool?"),
    36: ("os", POD_OS), 37: ("hostUsers", "bool?"), 38: ("schedulingGates", [POD_SCHEDULING_GATE]),
    39: ("resourceClaims", [POD_RESOURCE_CLAIM]), 40: ("resources", RESOURCE_REQUIREMENTS),
    # the Workload API's pod fields: workloadRef (k8s.io/api v0.35.0; tag 42 reserved from
    # v0.36.0) and schedulingGroup (v0.36.0)
    42: ("workloadRef", WORKLOAD_REFERENCE), 43: ("schedulingGroup", POD_SCHEDULING_GROUP),
}
POD_CONDITION: Table = {
    1: ("type", "string"), 2: ("status", "string"), 3: ("lastProbeTime", TIME),
    4: ("lastTransitionTime", TIME), 5: ("reason", "string"), 6: ("message", "string"),
}
HOST_IP: Table = {1: ("ip", "string")}
POD_IP: Table = {1: ("ip", "string")}
CONTAINER_STATE_WAITING: Table = {1: ("reason", "string"), 2: ("message", "string")}
CONTAINER_STATE_RUNNING: Table = {1: ("startedAt", TIME)}
CONTAINER_STATE_TERMINATED: Table = {
    1: ("exitCode", "int"), 2: ("signal", "int"), 3: ("reason", "string"), 4: ("message", "string"),
    5: ("startedAt", TIME), 6: ("finishedAt", TIME), 7: ("containerID", "string"),
}
CONTAINER_STATE: Table = {
    1: ("waiting", CONTAINER_STATE_WAITING), 2: ("running", CONTAINER_STATE_RUNNING),
    3: ("terminated", CONTAINER_STATE_TERMINATED),
}
VOLUME_MOUNT_STATUS: Table = {
    1: ("name", "string"), 2: ("mountPath", "string"), 3: ("readOnly", "bool"),
    4: ("recursiveReadOnly", "string?"),
}
LINUX_CONTAINER_USER: Table = {
    1: ("uid", "int"), 2: ("gid", "int"), 3: ("supplementalGroups", ["int"]),
}
CONTAINER_USER: Table = {1: ("linux", LINUX_CONTAINER_USER)}
RESOURCE_HEALTH: Table = {1: ("resourceID", "string"), 2: ("health", "string")}
RESOURCE_STATUS: Table = {1: ("name", "string"), 2: ("resources", [RESOURCE_HEALTH])}
CONTAINER_STATUS: Table = {
    1: ("name", "string"), 2: ("state", CONTAINER_STATE), 3: ("lastState", CONTAINER_STATE),
    4: ("ready", "bool"), 5: ("restartCount", "int"), 6: ("image", "string"),
    7: ("imageID", "string"), 8: ("containerID", "string"), 9: ("started", "bool?"),
    10: ("allocatedResources", "quantitymap"), 11: ("resources", RESOURCE_REQUIREMENTS),
    12: ("volumeMounts", [VOLUME_MOUNT_STATUS]), 13: ("user", CONTAINER_USER),
    14: ("allocatedResourcesStatus", [RESOURCE_STATUS]),
}
POD_RESOURCE_CLAIM_STATUS: Table = {1: ("name", "string"), 2: ("resourceClaimName", "string?")}
POD_STATUS: Table = {
    1: ("phase", "string"), 2: ("conditions", [POD_CONDITION]), 3: ("message", "string"),
    4: ("reason", "string"), 5: ("hostIP", "string"), 6: ("podIP", "string"),
    7: ("startTime", TIME), 8: ("containerStatuses", [CONTAINER_STATUS]), 9: ("qosClass", "string"),
    10: ("initContainerStatuses", [CONTAINER_STATUS]), 11: ("nominatedNodeName", "string"),
    12: ("podIPs", [POD_IP]), 13: ("ephemeralContainerStatuses", [CONTAINER_STATUS]),
    14: ("resize", "string"), 15: ("resourceClaimStatuses", [POD_RESOURCE_CLAIM_STATUS]),
    16: ("hostIPs", [HOST_IP]),
}
POD: Table = {1: ("metadata", OBJECT_META), 2: ("spec", POD_SPEC), 3: ("status", POD_STATUS)}
POD_TEMPLATE_SPEC: Table = {1: ("metadata", OBJECT_META), 2: ("spec", POD_SPEC)}
ROLLING_UPDATE_DEPLOYMENT: Table = {
    1: ("maxUnavailable", "intorstr?"), 2: ("maxSurge", "intorstr?"),
}
DEPLOYMENT_STRATEGY: Table = {
    1: ("type", "string"), 2: ("rollingUpdate", ROLLING_UPDATE_DEPLOYMENT),
}
DEPLOYMENT_SPEC: Table = {
    1: ("replicas", "int?"), 2: ("selector", LABEL_SELECTOR), 3: ("template", POD_TEMPLATE_SPEC),
    4: ("strategy", DEPLOYMENT_STRATEGY), 5: ("minReadySeconds", "int"),
    6: ("revisionHistoryLimit", "int?"), 7: ("paused", "bool"),
    9: ("progressDeadlineSeconds", "int?"),
}
DEPLOYMENT_CONDITION: Table = {
    1: ("type", "string"), 2: ("status", "string"), 4: ("reason", "string"),
    5: ("message", "string"), 6: ("lastUpdateTime", TIME), 7: ("lastTransitionTime", TIME),
}
DEPLOYMENT_STATUS: Table = {
    1: ("observedGeneration", "int"), 2: ("replicas", "int"), 3: ("updatedReplicas", "int"),
    4: ("availableReplicas", "int"), 5: ("unavailableReplicas", "int"),
    6: ("conditions", [DEPLOYMENT_CONDITION]), 7: ("readyReplicas", "int"),
    8: ("collisionCount", "int?"),
}
DEPLOYMENT: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", DEPLOYMENT_SPEC), 3: ("status", DEPLOYMENT_STATUS),
}
REPLICA_SET_SPEC: Table = {
    1: ("replicas", "int?"), 2: ("selector", LABEL_SELECTOR), 3: ("template", POD_TEMPLATE_SPEC),
    4: ("minReadySeconds", "int"),
}
REPLICA_SET_CONDITION: Table = {
    1: ("type", "string"), 2: ("status", "string"), 3: ("lastTransitionTime", TIME),
    4: ("reason", "string"), 5: ("message", "string"),
}
REPLICA_SET_STATUS: Table = {
    1: ("replicas", "int"), 2: ("fullyLabeledReplicas", "int"), 3: ("observedGeneration", "int"),
    4: ("readyReplicas", "int"), 5: ("availableReplicas", "int"),
    6: ("conditions", [REPLICA_SET_CONDITION]),
}
REPLICA_SET: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", REPLICA_SET_SPEC), 3: ("status", REPLICA_SET_STATUS),
}
POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT: Table = {
    1: ("containerName", "string?"), 2: ("operator", "string"), 3: ("values", ["int"]),
}
POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN: Table = {
    1: ("type", "string"), 2: ("status", "string"),
}
POD_FAILURE_POLICY_RULE: Table = {
    1: ("action", "string"), 2: ("onExitCodes", POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT),
    3: ("onPodConditions", [POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN]),
}
POD_FAILURE_POLICY: Table = {1: ("rules", [POD_FAILURE_POLICY_RULE])}
SUCCESS_POLICY_RULE: Table = {1: ("succeededIndexes", "string?"), 2: ("succeededCount", "int?")}
SUCCESS_POLICY: Table = {1: ("rules", [SUCCESS_POLICY_RULE])}
JOB_SPEC: Table = {
    1: ("parallelism", "int?"), 2: ("completions", "int?"), 3: ("activeDeadlineSeconds", "int?"),
    4: ("selector", LABEL_SELECTOR), 5: ("manualSelector", "bool?"),
    6: ("template", POD_TEMPLATE_SPEC), 7: ("backoffLimit", "int?"),
    8: ("ttlSecondsAfterFinished", "int?"), 9: ("completionMode", "string?"),
    10: ("suspend", "bool?"), 11: ("podFailurePolicy", POD_FAILURE_POLICY),
    12: ("backoffLimitPerIndex", "int?"), 13: ("maxFailedIndexes", "int?"),
    14: ("podReplacementPolicy", "string?"), 15: ("managedBy", "string?"),
    16: ("successPolicy", SUCCESS_POLICY),
}
JOB_CONDITION: Table = {
    1: ("type", "string"), 2: ("status", "string"), 3: ("lastProbeTime", TIME),
    4: ("lastTransitionTime", TIME), 5: ("reason", "string"), 6: ("message", "string"),
}
UNCOUNTED_TERMINATED_PODS: Table = {1: ("succeeded", ["string"]), 2: ("failed", ["string"])}
JOB_STATUS: Table = {
    1: ("conditions", [JOB_CONDITION]), 2: ("startTime", TIME), 3: ("completionTime", TIME),
    4: ("active", "int"), 5: ("succeeded", "int"), 6: ("failed", "int"),
    7: ("completedIndexes", "string"), 8: ("uncountedTerminatedPods", UNCOUNTED_TERMINATED_PODS),
    9: ("ready", "int?"), 10: ("failedIndexes", "string?"), 11: ("terminating", "int?"),
}
JOB: Table = {1: ("metadata", OBJECT_META), 2: ("spec", JOB_SPEC), 3: ("status", JOB_STATUS)}
NAMESPACE_SPEC: Table = {1: ("finalizers", ["string"])}
NAMESPACE_CONDITION: Table = {
    1: ("type", "string"), 2: ("status", "string"), 4: ("lastTransitionTime", TIME),
    5: ("reason", "string"), 6: ("message", "string"),
}
NAMESPACE_STATUS: Table = {1: ("phase", "string"), 2: ("conditions", [NAMESPACE_CONDITION])}
NAMESPACE: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", NAMESPACE_SPEC), 3: ("status", NAMESPACE_STATUS),
}
SERVICE_PORT: Table = {
    1: ("name", "string"), 2: ("protocol", "string"), 3: ("port", "int"),
    4: ("targetPort", "intorstr"), 5: ("nodePort", "int"), 6: ("appProtocol", "string?"),
}
CLIENT_IP_CONFIG: Table = {1: ("timeoutSeconds", "int?")}
SESSION_AFFINITY_CONFIG: Table = {1: ("clientIP", CLIENT_IP_CONFIG)}
SERVICE_SPEC: Table = {
    1: ("ports", [SERVICE_PORT]), 2: ("selector", "map"), 3: ("clusterIP", "string"),
    4: ("type", "string"), 5: ("externalIPs", ["string"]), 7: ("sessionAffinity", "string"),
    8: ("loadBalancerIP", "string"), 9: ("loadBalancerSourceRanges", ["string"]),
    10: ("externalName", "string"), 11: ("externalTrafficPolicy", "string"),
    12: ("healthCheckNodePort", "int"), 13: ("publishNotReadyAddresses", "bool"),
    14: ("sessionAffinityConfig", SESSION_AFFINITY_CONFIG), 17: ("ipFamilyPolicy", "string?"),
    18: ("clusterIPs", ["string"]), 19: ("ipFamilies", ["string"]),
    20: ("allocateLoadBalancerNodePorts", "bool?"), 21: ("loadBalancerClass", "string?"),
    22: ("internalTrafficPolicy", "string?"), 23: ("trafficDistribution", "string?"),
}
PORT_STATUS: Table = {1: ("port", "int"), 2: ("protocol", "string"), 3: ("error", "string?")}
LOAD_BALANCER_INGRESS: Table = {
    1: ("ip", "string"), 2: ("hostname", "string"), 3: ("ipMode", "string?"),
    4: ("ports", [PORT_STATUS]),
}
LOAD_BALANCER_STATUS: Table = {1: ("ingress", [LOAD_BALANCER_INGRESS])}
SERVICE_STATUS: Table = {1: ("loadBalancer", LOAD_BALANCER_STATUS), 2: ("conditions", [CONDITION])}
SERVICE: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", SERVICE_SPEC), 3: ("status", SERVICE_STATUS),
}
POD_DISRUPTION_BUDGET_SPEC: Table = {
    1: ("minAvailable", "intorstr?"), 2: ("selector", LABEL_SELECTOR),
    3: ("maxUnavailable", "intorstr?"), 4: ("unhealthyPodEvictionPolicy", "string?"),
}
POD_DISRUPTION_BUDGET_STATUS: Table = {
    1: ("observedGeneration", "int"), 2: ("disruptedPods", "timemap"),
    3: ("disruptionsAllowed", "int"), 4: ("currentHealthy", "int"), 5: ("desiredHealthy", "int"),
    6: ("expectedPods", "int"), 7: ("conditions", [CONDITION]),
}
POD_DISRUPTION_BUDGET: Table = {
    1: ("metadata", OBJECT_META), 2: ("spec", POD_DISRUPTION_BUDGET_SPEC),
    3: ("status", POD_DISRUPTION_BUDGET_STATUS),
}
PRIORITY_CLASS: Table = {
    1: ("metadata", OBJECT_META), 2: ("value", "int"), 3: ("globalDefault", "bool"),
    4: ("description", "string"), 5: ("preemptionPolicy", "string?"),
}

# fmt: on
