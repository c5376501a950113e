"""``simulate``'s storage inputs: v1 PersistentVolume and PersistentVolumeClaim, storage.k8s.io/v1
StorageClass, CSINode, CSIDriver and CSIStorageCapacity, apps/v1 StatefulSet, and a pod's
volumes, taken as the API server takes them — defaulted, strictly decoded, validated with
upstream's messages, refused in one line (exit 2).

The bad inputs are upstream's validation test cases (pkg/apis/core/validation
``TestValidatePersistentVolumes``, ``TestValidatePersistentVolumeClaim``, ``TestValidateVolumes``;
pkg/apis/storage/validation ``TestValidateStorageClass``, ``TestValidateAllowedTopologies``,
``TestValidateCSINode``, ``TestValidateCSIStorageCapacity``; pkg/apis/apps/validation
``TestValidateStatefulSet``), each named in its id, with the first error upstream lists.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_simulate_cli import docs, node, simulate_cli, workdir

from kubesched._errors import ConfigError
from kubesched.api._objects import (
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
    StorageClass,
)
from kubesched.scenario import load_manifests

__all__ = ["workdir"]  # the fixture, shared with test_simulate_cli

DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
ACCESS = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'

# --- objects, as manifests ------------------------------------------------------------------------


def pv(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": "/foo", "type": "Directory"}}  # fmt: skip
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "foo"}, "spec": _set(base, spec)}


def pvc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10G"}}}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "foo"}, "spec": _set(base, spec)}


def sc(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"provisioner": "kubernetes.io/foo-provisioner"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "foo"}, **_set(base, fields)}


def csi_node(*drivers: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "foo"},
            "spec": {"drivers": list(drivers)}}  # fmt: skip


def driver(name: str = "io.kubernetes.storage.csi.driver", node_id: str = "node", **more: Any) -> dict[str, Any]:
    return {"name": name, "nodeID": node_id, **more}


def capacity(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "foo"},
            **_set({"storageClassName": "bar", "capacity": "1Gi"}, fields)}  # fmt: skip


def pod_with(*volumes: dict[str, Any], name: str = "foo") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x"}], "volumes": list(volumes)}}  # fmt: skip


def sts(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "serviceName": "foo",
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
    }  # fmt: skip
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "foo"}, "spec": _set(base, spec)}


_DROP = object()


def _set(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in changes.items():
        if v is _DROP:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def load(*objs: dict[str, Any]) -> list[Any]:
    text = "\n---\n".join(json.dumps(o) for o in objs)
    return [m.obj for m in load_manifests(["in.yaml"], {"in.yaml": text})]


def error(obj: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as e:
        load(obj)
    text = str(e.value)
    assert "\n" not in text
    return text


def _where(obj: dict[str, Any]) -> str:
    """The object as the error names it: kind, and the namespace and name as written."""
    ns = obj["metadata"].get("namespace")
    return f"in.yaml: document 1 ({obj['kind']} {ns + '/' if ns else ''}{obj['metadata']['name']})"


# --- accepted, defaulted ---------------------------------------------------------------------------


def test_every_storage_kind_is_taken_and_defaulted() -> None:
    objs = load(
        sc(volumeBindingMode="WaitForFirstConsumer"), pv(), pvc(), capacity(),
        csi_node(driver(allocatable={"count": 4}, topologyKeys=["topology.kubernetes.io/zone"])),
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d.example.com"}, "spec": {}},
        sts(volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": pvc()["spec"]}]),
        pod_with({"name": "scratch"}, {"name": "data", "persistentVolumeClaim": {"claimName": "foo"}}, name="p"),
    )  # fmt: skip
    by_kind = {type(o).__name__: o for o in objs}
    assert [type(o).__name__ for o in objs] == [
        "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CSIStorageCapacity", "CSINode", "CSIDriver",
        "StatefulSet", "Pod",
    ]  # fmt: skip
    # namespaced kinds land in "default"; the API server's defaults are applied
    assert by_kind["PersistentVolumeClaim"].metadata.namespace == "default"
    assert by_kind["CSIStorageCapacity"].metadata.namespace == "default"
    assert by_kind["StatefulSet"].metadata.namespace == "default"
    assert by_kind["PersistentVolume"].metadata.namespace == ""
    sc_obj: StorageClass = by_kind["StorageClass"]
    assert (sc_obj.reclaim_policy, sc_obj.volume_binding_mode) == ("Delete", "WaitForFirstConsumer")
    pv_obj: PersistentVolume = by_kind["PersistentVolume"]
    assert (pv_obj.spec.persistent_volume_reclaim_policy, pv_obj.spec.volume_mode) == ("Retain", "Filesystem")
    claim: PersistentVolumeClaim = by_kind["PersistentVolumeClaim"]
    assert claim.spec.volume_mode == "Filesystem"
    stateful: StatefulSet = by_kind["StatefulSet"]
    assert stateful.spec.volume_claim_templates[0].spec.volume_mode == "Filesystem"
    assert stateful.spec.pod_management_policy == "OrderedReady"
    assert by_kind["CSIDriver"].spec.attach_required is True
    p: Pod = by_kind["Pod"]
    assert p.spec.volumes[0].empty_dir == {}  # SetDefaults_Volume: no source is an emptyDir
    assert p.spec.volumes[1].empty_dir is None


def test_a_source_kubesched_does_not_model_counts_as_the_source() -> None:
    """An NFS volume (kept as a mapping) is the volume's one source, not "no source"."""
    obj = pv(nfs={"server": "nfs.example.com", "path": "/exports"})
    obj["spec"].pop("hostPath")
    assert load(obj)[0].spec.nfs == {"server": "nfs.example.com", "path": "/exports"}
    assert error(pod_with({"name": "n", "nfs": {"server": "s", "path": "exports"}})).endswith(
        'spec.volumes[0].nfs.path: Invalid value: "exports": must be an absolute path'
    )


# --- refused: one line, upstream's first error ------------------------------------------------

_AFFINITY_BAD_KEY = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "", "operator": "In", "values": ["v"]}]}]}}
_TWO_SOURCES = {"path": "/foo"}

BAD = [
    # TestValidatePersistentVolumes
    pytest.param(pv(accessModes=["fakemode"]), f'spec.accessModes: Unsupported value: "fakemode": supported values: {ACCESS}',
                 id="TestValidatePersistentVolumes/invalid-accessmode"),
    pytest.param(pv(persistentVolumeReclaimPolicy="fakeReclaimPolicy"),
                 'spec.persistentVolumeReclaimPolicy: Unsupported value: "fakeReclaimPolicy": supported values: '
                 '"Delete", "Recycle", "Retain"', id="TestValidatePersistentVolumes/invalid-reclaimpolicy"),
    pytest.param(pv(volumeMode="fakeVolumeMode"),
                 'spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", "Filesystem"',
                 id="TestValidatePersistentVolumes/invalid-volume-mode"),
    pytest.param(pv(accessModes=["ReadWriteOncePod", "ReadWriteMany"]),
                 "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
                 id="TestValidatePersistentVolumes/with-read-write-once-pod-and-others"),
    pytest.param(pv(hostPath=_DROP), "spec: Required value: must specify a volume type",
                 id="TestValidatePersistentVolumes/missing-volume-source"),
    pytest.param(pv(capacity=_DROP), "spec.capacity: Required value", id="TestValidatePersistentVolumes/missing-capacity"),
    pytest.param(pv(capacity={"storage": "0"}), 'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
                 id="TestValidatePersistentVolumes/bad-volume-zero-capacity"),
    pytest.param(pv(accessModes=_DROP), "spec.accessModes: Required value",
                 id="TestValidatePersistentVolumes/missing-accessmodes"),
    pytest.param(pv(gcePersistentDisk={"pdName": "foo", "fsType": "ext4"}),
                 "spec.gcePersistentDisk: Forbidden: may not specify more than 1 volume type",
                 id="TestValidatePersistentVolumes/too-many-sources"),
    pytest.param(pv(hostPath={"path": "/", "type": "Directory"}, persistentVolumeReclaimPolicy="Recycle"),
                 "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
                 id="TestValidatePersistentVolumes/host mount of / with recycle reclaim policy"),
    pytest.param(pv(storageClassName="-invalid-"), f'spec.storageClassName: Invalid value: "-invalid-": {DNS_SUBDOMAIN}',
                 id="TestValidatePersistentVolumes/invalid-storage-class-name"),
    pytest.param(pv(hostPath={"path": "/foo/..", "type": "Directory"}),
                 "spec.hostPath.path: Invalid value: \"/foo/..\": must not contain '..'",
                 id="TestValidatePersistentVolumes/bad-hostpath-volume-backsteps"),
    pytest.param(pv(nodeAffinity={}), "spec.nodeAffinity.required: Required value: must specify required node constraints",
                 id="TestValidatePersistentVolumes/volume-empty-node-affinity"),
    pytest.param(pv(nodeAffinity=_AFFINITY_BAD_KEY),
                 'spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "": '
                 "name part must be non-empty", id="TestValidatePersistentVolumes/volume-bad-node-affinity"),
    pytest.param(pv(capacity={"storage": "10G", "cpu": "1"}),
                 'spec.capacity: Unsupported value: core.ResourceList{"cpu":"1", "storage":"10G"}: supported values: '
                 '"storage"', id="ValidatePersistentVolumeSpec/capacity other than storage"),
    pytest.param(pv(hostPath=_DROP, local={"path": "/mnt/disk"}),
                 "spec.nodeAffinity: Required value: Local volume requires node affinity",
                 id="TestValidateLocalVolumes/local volume without node affinity"),
    pytest.param(pv(hostPath=_DROP, csi={"driver": "d.example.com"}), "spec.csi.volumeHandle: Required value",
                 id="TestValidateCSIVolumeSource/missing volumeHandle"),
    # TestValidatePersistentVolumeClaim (ValidatePersistentVolumeClaimSpec)
    pytest.param(pvc(accessModes=_DROP), "spec.accessModes: Required value: at least 1 access mode is required",
                 id="TestValidatePersistentVolumeClaim/no-access-modes"),
    pytest.param(pvc(accessModes=["fakemode"]), f'spec.accessModes: Unsupported value: "fakemode": supported values: {ACCESS}',
                 id="TestValidatePersistentVolumeClaim/invalid-accessmode"),
    pytest.param(pvc(resources={"requests": {"cpu": "10"}}), "spec.resources[storage]: Required value",
                 id="TestValidatePersistentVolumeClaim/no-resource-requests"),
    pytest.param(pvc(resources={"requests": {"storage": "0"}}),
                 'spec.resources[storage]: Invalid value: "0": must be greater than zero',
                 id="TestValidatePersistentVolumeClaim/invalid-claim-zero-capacity"),
    pytest.param(pvc(resources={"requests": {"storage": "-10G"}}),
                 "spec.resources[storage]: Invalid value: -10000000000: must be a valid resource quantity",
                 id="TestValidatePersistentVolumeClaim/negative-storage-request"),
    pytest.param(pvc(selector={"matchExpressions": [{"key": "key2", "operator": "InvalidOp", "values": ["value1"]}]}),
                 'spec.selector.matchExpressions[0].operator: Invalid value: "InvalidOp": not a valid selector operator',
                 id="TestValidatePersistentVolumeClaim/invalid-label-selector"),
    pytest.param(pvc(storageClassName="-invalid-"), f'spec.storageClassName: Invalid value: "-invalid-": {DNS_SUBDOMAIN}',
                 id="TestValidatePersistentVolumeClaim/invalid-storage-class-name"),
    pytest.param(pvc(volumeMode="fakeVolumeMode"),
                 'spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", "Filesystem"',
                 id="TestValidatePersistentVolumeClaim/invalid-volume-mode"),
    pytest.param(pvc(accessModes=["ReadWriteOncePod", "ReadWriteOnce"]),
                 "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
                 id="TestValidatePersistentVolumeClaim/invalid-read-write-once-pod-with-other-modes"),
    pytest.param(pvc(dataSource={"kind": "Foo", "name": "x"}),
                 "spec.dataSource: Invalid value: \"Foo\": must be 'PersistentVolumeClaim' when referencing the default "
                 "apiGroup", id="TestValidatePersistentVolumeClaim/invalid-data-source-kind"),
    # TestValidateVolumes (a pod's)
    pytest.param(pod_with({"name": "", "emptyDir": {}}), "spec.volumes[0].name: Required value",
                 id="TestValidateVolumes/name required"),
    pytest.param(pod_with({"name": "-", "emptyDir": {}}), f'spec.volumes[0].name: Invalid value: "-": {DNS_LABEL}',
                 id="TestValidateVolumes/name not a DNS label"),
    pytest.param(pod_with({"name": "abc", "emptyDir": {}}, {"name": "abc", "emptyDir": {}}),
                 'spec.volumes[1].name: Duplicate value: "abc"', id="TestValidateVolumes/name not unique"),
    pytest.param(pod_with({"name": "dup", "hostPath": _TWO_SOURCES, "emptyDir": {}}),
                 "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type",
                 id="TestValidateVolumes/multiple volume types"),
    pytest.param(pod_with({"name": "c", "persistentVolumeClaim": {"claimName": ""}}),
                 "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
                 id="TestValidateVolumes/PersistentVolumeClaim empty claimName"),
    pytest.param(pod_with({"name": "e", "ephemeral": {}}), "spec.volumes[0].ephemeral.volumeClaimTemplate: Required value",
                 id="TestValidateVolumes/ephemeral missing volumeClaimTemplate"),
    pytest.param(pod_with({"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": pvc(accessModes=_DROP)["spec"]}}}),
                 "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access "
                 "mode is required", id="TestValidateVolumes/ephemeral invalid claim template"),
    pytest.param(pod_with({"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": pvc()["spec"]}}},
                          {"name": "c", "persistentVolumeClaim": {"claimName": "foo-e"}}),
                 'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "foo-e": must not reference a PVC '
                 "that gets created for an ephemeral volume",
                 id="TestEphemeralVolumes/claim of an ephemeral volume referenced"),
    pytest.param(pod_with({"name": "h", "hostPath": {"path": ""}}), "spec.volumes[0].hostPath.path: Required value",
                 id="TestValidateVolumes/empty hostPath path"),
    pytest.param(pod_with({"name": "g", "gcePersistentDisk": {"pdName": "x", "partition": 256}}),
                 "spec.volumes[0].persistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive",
                 id="TestValidateVolumes/GCEPersistentDisk bad partition"),
    # TestValidateStorageClass, TestValidateAllowedTopologies
    pytest.param(sc(provisioner=""), "provisioner: Required value", id="TestValidateStorageClass/missing provisioner"),
    pytest.param(sc(provisioner="kubernetes.io/invalid/provisioner"),
                 'provisioner: Invalid value: "kubernetes.io/invalid/provisioner": a qualified name must consist of '
                 "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                 "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
                 "'example.com/MyName')", id="TestValidateStorageClass/invalid provisioner"),
    pytest.param(sc(parameters={"": "value"}), 'parameters: Invalid value: "": field can not be empty.',
                 id="TestValidateStorageClass/invalid empty parameter name"),
    pytest.param(sc(reclaimPolicy="invalid"), 'reclaimPolicy: Unsupported value: "invalid": supported values: "Delete", "Retain"',
                 id="TestValidateStorageClass/invalid reclaimpolicy"),
    pytest.param(sc(volumeBindingMode="invalid"),
                 'volumeBindingMode: Unsupported value: "invalid": supported values: "Immediate", "WaitForFirstConsumer"',
                 id="TestValidateVolumeBindingMode/invalid mode"),
    pytest.param(sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "", "values": ["z"]}]}]),
                 'allowedTopologies[0].matchLabelExpressions[0].key: Invalid value: "": name part must be non-empty',
                 id="TestValidateAllowedTopologies/empty key"),
    pytest.param(sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": []}]}]),
                 "allowedTopologies[0].matchLabelExpressions[0].values: Required value",
                 id="TestValidateAllowedTopologies/empty values"),
    pytest.param(sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a", "a"]}]}]),
                 'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
                 id="TestValidateAllowedTopologies/duplicate values"),
    pytest.param(sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a"]},
                                                                   {"key": "zone", "values": ["b"]}]}]),
                 'allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: "zone"',
                 id="TestValidateAllowedTopologies/duplicate key"),
    pytest.param(sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}] * 2),
                 'allowedTopologies[1].matchLabelExpressions: Duplicate value: ""',
                 id="TestValidateAllowedTopologies/duplicate term"),
    # TestValidateCSINode
    pytest.param(csi_node(driver(), driver(node_id="node2")),
                 'spec.drivers[1].name: Duplicate value: "io.kubernetes.storage.csi.driver"',
                 id="TestValidateCSINode/duplicate drivers"),
    pytest.param(csi_node(driver(allocatable={"count": -1})),
                 "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
                 id="TestValidateCSINode/negative allocatable count"),
    pytest.param(csi_node(driver(node_id="")), "spec.drivers[0].nodeID: Required value",
                 id="TestValidateCSINode/empty nodeID"),
    pytest.param(csi_node(driver(name="")), "spec.drivers[0].name: Required value", id="TestValidateCSINode/empty driver name"),
    pytest.param(csi_node(driver(name="a" * 64)), "spec.drivers[0].name: Too long: may not be more than 63 bytes",
                 id="TestValidateCSINode/driver name too long"),
    pytest.param(csi_node(driver(topologyKeys=["company.com/zone1", "company.com/zone1"])),
                 'spec.drivers[0]: Duplicate value: "company.com/zone1"', id="TestValidateCSINode/duplicate topology keys"),
    pytest.param(csi_node(driver(topologyKeys=[""])), "spec.drivers[0]: Required value", id="TestValidateCSINode/empty topology key"),
    # TestValidateCSIStorageCapacity
    pytest.param(capacity(capacity="-1"), 'capacity: Invalid value: "-1": must be greater than or equal to 0',
                 id="TestValidateCSIStorageCapacity/negative capacity"),
    pytest.param(capacity(storageClassName=""), f'storageClassName: Invalid value: "": {DNS_SUBDOMAIN}',
                 id="TestValidateCSIStorageCapacity/empty storage class name"),
    # TestValidateStatefulSet
    pytest.param(sts(replicas=-1), "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                 id="TestValidateStatefulSet/negative_replicas"),
    pytest.param(sts(selector={}),
                 "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
                 "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset",
                 id="TestValidateStatefulSet/empty selector"),
    pytest.param(sts(selector=_DROP), "spec.selector: Required value", id="TestValidateStatefulSet/missing selector"),
    pytest.param(sts(selector={"matchLabels": {"a": "c"}}),
                 'spec.template.metadata.labels: Invalid value: map[string]string{"a":"b"}: `selector` does not match '
                 "template `labels`", id="TestValidateStatefulSet/selector_doesnt_match"),
    pytest.param(sts(podManagementPolicy="foo"),
                 "spec.podManagementPolicy: Invalid value: \"foo\": must be 'OrderedReady' or 'Parallel'",
                 id="TestValidateStatefulSet/invalid podManagementPolicy"),
    pytest.param(sts(template={"metadata": {"labels": {"a": "b"}},
                               "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x"}]}}),
                 'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
                 id="TestValidateStatefulSet/invalid restart policy 1"),
    pytest.param(sts(template={"metadata": {"labels": {"a": "b"}},
                               "spec": {"activeDeadlineSeconds": 1, "containers": [{"name": "c", "image": "x"}]}}),
                 "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not "
                 "Supported", id="TestValidateStatefulSet/invalid activeDeadlineSeconds"),
    pytest.param(sts(template={"metadata": {"labels": {"a": "b"}}, "spec": {}}),
                 "spec.template.spec.containers: Required value", id="TestValidateStatefulSet/invalid manifest"),
    pytest.param(sts(ordinals={"start": -2}), "spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0",
                 id="TestValidateStatefulSet/invalid ordinals.start"),
    pytest.param(sts(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Invalid"}),
                 'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Invalid": supported values: '
                 '"Retain", "Delete"', id="TestValidateStatefulSet/invalid PersistentVolumeClaimRetentionPolicy"),
    pytest.param(sts(volumeClaimTemplates=[{"spec": pvc()["spec"]}]), "spec.volumeClaimTemplates[0].metadata.name: Required value",
                 id="kubesched/volumeClaimTemplates unnamed (the claims made of it would be refused)"),
    pytest.param(sts(volumeClaimTemplates=[{"metadata": {"name": "d"}, "spec": pvc(resources={})["spec"]}]),
                 "spec.volumeClaimTemplates[0].spec.resources[storage]: Required value",
                 id="kubesched/volumeClaimTemplates without a storage request"),
]  # fmt: skip


@pytest.mark.parametrize(("obj", "message"), BAD)
def test_bad_storage_inputs_are_one_line(obj: dict[str, Any], message: str) -> None:
    assert error(obj) == f"{_where(obj)}, {message}"


def test_cluster_scoped_storage_kinds_take_no_namespace() -> None:
    """``TestValidatePersistentVolumes/unexpected-namespace``; ``TestValidateStorageClass``'s
    "namespace is present"."""
    for obj in (pv(), sc(), csi_node(driver())):
        obj["metadata"]["namespace"] = "bar"
        assert error(obj).endswith(", metadata.namespace: Forbidden: not allowed on this type")


def test_unknown_fields_of_storage_kinds_are_refused() -> None:
    obj = pvc()
    obj["spec"]["storageClass"] = "fast"
    assert error(obj) == 'in.yaml: document 1 (PersistentVolumeClaim foo): strict decoding error: unknown field "spec.storageClass"'


def test_a_storage_class_update_may_not_change_its_provisioner() -> None:
    """``ValidateStorageClassUpdate``: a later document replacing the class."""
    late = sc(provisioner="other.example.com")
    late["metadata"]["annotations"] = {"kubesched.io/arrival": "1m"}
    with pytest.raises(ConfigError) as e:
        load(sc(), late)
    assert str(e.value) == "in.yaml: document 2 (StorageClass foo), provisioner: Forbidden: updates to provisioner are forbidden."


def test_simulate_refuses_bad_storage_input_in_one_line(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), json.dumps(pvc(resources={"requests": {}}))))
    code, out, err = simulate_cli(capsys, "in.yaml")
    assert (code, out) == (2, "")
    assert err == "kubesched: error: in.yaml: document 2 (PersistentVolumeClaim foo), spec.resources[storage]: Required value\n"


def test_simulate_runs_a_scenario_with_storage_objects(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every storage kind and a pod naming a claim: the run goes through (exit 0)."""
    objs = [
        sc(volumeBindingMode="WaitForFirstConsumer"), pv(storageClassName="foo"), pvc(storageClassName="foo"),
        csi_node(driver()), capacity(), pod_with({"name": "data", "persistentVolumeClaim": {"claimName": "foo"}}, name="p"),
    ]  # fmt: skip
    (workdir / "in.yaml").write_text(docs(node("n1"), *(json.dumps(o) for o in objs)))
    code, out, err = simulate_cli(capsys, "in.yaml", "--until", "10m")
    assert code == 0, err
    assert [p["name"] for p in json.loads(out)["pods"]] == ["p"]


STS_COLLIDING = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-web-0}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: x}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_a_statefulset_whose_names_are_taken(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38 item 12: a pod of the file named as the set's first pod is a failed create (the
    controller's Warning FailedCreate, once), the claim of the file is the one the set uses; the
    set, OrderedReady, waits; no traceback."""
    (workdir / "in.yaml").write_text(STS_COLLIDING)
    code, out, err = simulate_cli(capsys, "in.yaml")
    assert (code, err) == (0, "")
    result = json.loads(out)
    failed = [e for e in result["events"] if e["reason"] == "FailedCreate"]
    assert [(e["object"], e["message"]) for e in failed] == [
        ("default/web", 'create Pod web-0 in StatefulSet web failed error: pods "web-0" already exists')
    ]
    assert [p["name"] for p in result["pods"]] == ["web-0"]
    assert not [e for e in result["events"] if "create Claim" in e["message"]]
