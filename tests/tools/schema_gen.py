"""Generate ``core/api/_schema.json``: the field names of every Kubernetes type kubesched reads.

The official ``kubernetes`` Python client (a test dependency) carries, for each API type, its
fields' JSON names (``attribute_map``) and types (``openapi_types``): that is the schema the API
server's strict decoding checks names against.  This script walks it from the kinds kubesched
takes and writes the part it needs; ``tests/core/test_schema.py`` checks the committed file is
what it generates, so a client upgrade that adds fields shows up as a test failure to re-run::

    .venv/bin/python tests/tools/schema_gen.py > core/api/_schema.json
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

KINDS = {
    "v1/Node": "V1Node",
    "v1/Pod": "V1Pod",
    "scheduling.k8s.io/v1/PriorityClass": "V1PriorityClass",
    "policy/v1/PodDisruptionBudget": "V1PodDisruptionBudget",
    "batch/v1/Job": "V1Job",
    "apps/v1/ReplicaSet": "V1ReplicaSet",
    "apps/v1/Deployment": "V1Deployment",
    "scheduling.x-k8s.io/v1alpha1/PodGroup": "PodGroup",
    # the Workload API of 1.35 (v1alpha1) and 1.36 (v1alpha2): the client (1.37) has neither
    "scheduling.k8s.io/v1alpha1/Workload": "V1alpha1Workload",
    "scheduling.k8s.io/v1alpha2/Workload": "V1alpha2Workload",
    "scheduling.k8s.io/v1alpha2/PodGroup": "V1alpha2PodGroup",
    "apps/v1/StatefulSet": "V1StatefulSet",
    "v1/PersistentVolume": "V1PersistentVolume",
    "v1/PersistentVolumeClaim": "V1PersistentVolumeClaim",
    "storage.k8s.io/v1/StorageClass": "V1StorageClass",
    "storage.k8s.io/v1/CSINode": "V1CSINode",
    "storage.k8s.io/v1/CSIDriver": "V1CSIDriver",
    "storage.k8s.io/v1/CSIStorageCapacity": "V1CSIStorageCapacity",
    # resource.k8s.io (DRA); DeviceTaintRule is v1beta2 at v1.36 (v1 only from v1.37)
    "resource.k8s.io/v1/DeviceClass": "V1DeviceClass",
    "resource.k8s.io/v1/ResourceClaim": "ResourceV1ResourceClaim",
    "resource.k8s.io/v1/ResourceClaimTemplate": "V1ResourceClaimTemplate",
    "resource.k8s.io/v1/ResourceSlice": "V1ResourceSlice",
    "resource.k8s.io/v1beta2/DeviceTaintRule": "V1beta2DeviceTaintRule",
    # ... and v1alpha3, the version of 1.33-1.35 (the 1.35 fields: the client's are 1.37's)
    "resource.k8s.io/v1alpha3/DeviceTaintRule": "V1alpha3DeviceTaintRule",
    # the bodies of subresources: a pod's binding and eviction, a workload's scale
    "v1/Binding": "V1Binding",
    "policy/v1/Eviction": "V1Eviction",
    "autoscaling/v1/Scale": "V1Scale",
}

# scheduler-plugins' PodGroup CRD (apis/scheduling/v1alpha1/types.go), not in the client
EXTRA = {
    "PodGroup": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta", "spec": "PodGroupSpec", "status": "PodGroupStatus"},
    "PodGroupSpec": {"minMember": "int", "minResources": "Dict[str, str]", "scheduleTimeoutSeconds": "int"},
    "PodGroupStatus": {
        "phase": "str", "occupiedBy": "str", "running": "int", "succeeded": "int", "failed": "int",
        "scheduleStartTime": "datetime",
    },
}

# k8s.io/api v0.35.0 scheduling/v1alpha1/types.go and v0.36.0 scheduling/v1alpha2/types.go
_POLICY = {"basic": "V1alpha2BasicSchedulingPolicy", "gang": "V1alpha2GangSchedulingPolicy"}
_CLAIM = {"name": "str", "resourceClaimName": "str", "resourceClaimTemplateName": "str"}
_CONSTRAINTS = {"topology": "List[V1alpha2TopologyConstraint]"}
EXTRA.update({
    "V1alpha1Workload": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta", "spec": "V1alpha1WorkloadSpec"},
    "V1alpha1WorkloadSpec": {"controllerRef": "V1alpha1TypedLocalObjectReference", "podGroups": "List[V1alpha1PodGroup]"},
    "V1alpha1TypedLocalObjectReference": {"apiGroup": "str", "kind": "str", "name": "str"},
    "V1alpha1PodGroup": {"name": "str", "policy": "V1alpha1PodGroupPolicy"},
    "V1alpha1PodGroupPolicy": {"basic": "V1alpha1BasicSchedulingPolicy", "gang": "V1alpha1GangSchedulingPolicy"},
    "V1alpha1BasicSchedulingPolicy": {},
    "V1alpha1GangSchedulingPolicy": {"minCount": "int"},
    "V1alpha2Workload": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta", "spec": "V1alpha2WorkloadSpec"},
    "V1alpha2WorkloadSpec": {"controllerRef": "V1alpha2TypedLocalObjectReference", "podGroupTemplates": "List[V1alpha2PodGroupTemplate]"},
    "V1alpha2TypedLocalObjectReference": {"apiGroup": "str", "kind": "str", "name": "str"},
    "V1alpha2PodGroupTemplate": {
        "name": "str", "schedulingPolicy": "V1alpha2PodGroupSchedulingPolicy",
        "schedulingConstraints": "V1alpha2PodGroupSchedulingConstraints",
        "resourceClaims": "List[V1alpha2PodGroupResourceClaim]", "disruptionMode": "str",
        "priorityClassName": "str", "priority": "int",
    },
    "V1alpha2PodGroupSchedulingPolicy": _POLICY,
    "V1alpha2BasicSchedulingPolicy": {},
    "V1alpha2GangSchedulingPolicy": {"minCount": "int"},
    "V1alpha2PodGroupSchedulingConstraints": _CONSTRAINTS,
    "V1alpha2TopologyConstraint": {"key": "str"},
    "V1alpha2PodGroupResourceClaim": _CLAIM,
    "V1alpha2PodGroup": {"apiVersion": "str", "kind": "str", "metadata": "V1ObjectMeta", "spec": "V1alpha2PodGroupSpec", "status": "V1alpha2PodGroupStatus"},
    "V1alpha2PodGroupSpec": {
        "podGroupTemplateRef": "V1alpha2PodGroupTemplateReference", "schedulingPolicy": "V1alpha2PodGroupSchedulingPolicy",
        "schedulingConstraints": "V1alpha2PodGroupSchedulingConstraints",
        "resourceClaims": "List[V1alpha2PodGroupResourceClaim]", "disruptionMode": "str",
        "priorityClassName": "str", "priority": "int",
    },
    "V1alpha2PodGroupTemplateReference": {"workload": "V1alpha2WorkloadPodGroupTemplateReference"},
    "V1alpha2WorkloadPodGroupTemplateReference": {"workloadName": "str", "podGroupTemplateName": "str"},
    "V1alpha2PodGroupStatus": {"conditions": "List[V1Condition]", "resourceClaimStatuses": "List[V1alpha2PodGroupResourceClaimStatus]"},
    "V1alpha2PodGroupResourceClaimStatus": {"name": "str", "resourceClaimName": "str"},
    # core/v1 WorkloadReference (v0.35.0; replaced by schedulingGroup in v0.36.0)
    "V1WorkloadReference": {"name": "str", "podGroup": "str", "podGroupReplicaKey": "str"},
})
# fields of the client's types that an older release had (k8s.io/api v0.35.0 core/v1 PodSpec.workloadRef)
ADDED_FIELDS = {"V1PodSpec": {"workloadRef": "V1WorkloadReference"}}
# The client's resource.k8s.io models were generated from a tree after v1.36.0: drop the fields
# k8s.io/api resource/v1/types.go at v0.36.0 does not have, add the one it has that they lack.
DROP = {
    "V1Device": {"nodeAllocatableResources"},
    "V1DeviceCounterConsumption": {"compatibilityGroups"},
    "V1DeviceRequestAllocationResult": {"skipNodeOperations"},
    "V1DeviceSubRequest": {"derivedAttributes"},
    "V1ExactDeviceRequest": {"derivedAttributes"},
    "V1ResourceSliceSpec": {"partitionTypeAttribute", "skipNodeOperations"},
}
ADD = {
    "V1Device": {"nodeAllocatableResourceMappings": "Dict[str, V1NodeAllocatableResourceMapping]"},
    # v1alpha3 DeviceTaintSelector's fields of 1.33-1.34 (k8s.io/api v0.34.1), gone in 1.35
    "V1alpha3DeviceTaintSelector": {"deviceClassName": "str", "selectors": "List[V1DeviceSelector]"},
}
EXTRA["V1NodeAllocatableResourceMapping"] = {"capacityKey": "str", "allocationMultiplier": "str"}

_REF = re.compile(r"[A-Z][A-Za-z0-9]+")
_PRIMITIVE = {"str", "int", "float", "bool", "object", "datetime", "date", "bytearray"}


def build() -> dict[str, Any]:
    import kubernetes.client as k

    types: dict[str, dict[str, str]] = {}

    def visit(name: str) -> None:
        if name in types or name in _PRIMITIVE or name in ("List", "Dict"):
            return
        if name in EXTRA:
            fields = EXTRA[name]
        else:
            cls = getattr(k, name)
            fields = {cls.attribute_map[a]: t for a, t in cls.openapi_types.items()}
            fields.update(ADDED_FIELDS.get(name, {}))
            fields = {f: t for f, t in fields.items() if f not in DROP.get(name, ())} | ADD.get(name, {})
        types[name] = dict(sorted(fields.items()))
        for t in fields.values():
            for ref in _REF.findall(t):
                visit(ref)

    for t in KINDS.values():
        if t:
            visit(t)
    return {"kinds": KINDS, "types": dict(sorted(types.items()))}


def main() -> None:
    json.dump(build(), sys.stdout, indent=0, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
