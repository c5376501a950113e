"""The official Kubernetes Python client against the fake API server: what a client writes comes
back by get, list and watch with every field it sent plus the API server's defaults, for every
served kind; informers (list, then watch from the list's resourceVersion) of every resource a
real kube-scheduler lists sync; and an informer of pods sees a status write change nothing but
the status, whether the pod came from a file, a JSON POST or a protobuf one.

The server runs on its own event loop in a background thread (one per backend), as in
``test_kubectl``; the client is synchronous.  Real time, bounded timeouts.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from typing import Any

import anyio.from_thread
import pytest
from kubernetes import client as k8s
from kubernetes import watch as k8s_watch
from kubernetes.dynamic import DynamicClient

from kubesched.transports.apiserver import APIServer
from kubesched.transports.apiserver._registry import RESOURCES
from kubesched.transports.fake import FakeCluster

NS = "wire"


@asynccontextmanager
async def _server() -> AsyncIterator[APIServer]:
    epoch = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    async with FakeCluster(epoch=epoch) as cluster, APIServer(cluster) as server:
        yield server


@contextmanager
def _serving(backend: str) -> Iterator[APIServer]:
    with (
        anyio.from_thread.start_blocking_portal(backend) as portal,
        portal.wrap_async_context_manager(_server()) as server,
    ):
        yield server


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def api(request: pytest.FixtureRequest) -> Iterator[k8s.ApiClient]:
    with _serving(request.param) as server:
        conf = k8s.Configuration(host=server.url)
        with k8s.ApiClient(conf) as c:
            k8s.CoreV1Api(c).create_namespace({"metadata": {"name": NS}})
            yield c


# --- upstream-shaped objects: many fields, many at their default values -------------------------

_CONTAINER = {
    "name": "app",
    "image": "registry.k8s.io/pause:3.9",
    "command": ["/pause"],
    "args": ["-v"],
    "workingDir": "/",
    "env": [
        {"name": "A", "value": "1"},
        {
            "name": "B",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
        },
    ],
    "ports": [
        {"name": "http", "containerPort": 80, "protocol": "TCP"},  # the default, sent
        {"name": "dns", "containerPort": 53, "protocol": "UDP", "hostPort": 0},
    ],
    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}},
    "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": False}],
    "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 10, "timeoutSeconds": 1},
    "imagePullPolicy": "IfNotPresent",
    "securityContext": {"allowPrivilegeEscalation": False},
    "stdin": False,
    "tty": False,
}
_POD_SPEC = {
    "containers": [_CONTAINER],
    "initContainers": [{"name": "init", "image": "busybox", "ports": [{"containerPort": 8080}]}],
    "volumes": [{"name": "data", "emptyDir": {}}],
    "schedulerName": "default-scheduler",
    "restartPolicy": "Always",
    "hostNetwork": False,
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [
        {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    ],
    "affinity": {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ]
        }
    },
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ],
    "serviceAccountName": "default",
}
# upstream pkg/apis/core/v1/defaults.go: SetDefaults_PodSpec, SetDefaults_Container,
# SetDefaults_ContainerPort, SetDefaults_Probe (a pod template's as a pod's)
_POD_SPEC_DEFAULTED = copy.deepcopy(_POD_SPEC) | {
    "dnsPolicy": "ClusterFirst",
    "terminationGracePeriodSeconds": 30,
    "securityContext": {},
}
_POD_SPEC_DEFAULTED["initContainers"][0] |= {
    "imagePullPolicy": "Always",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
}
_POD_SPEC_DEFAULTED["containers"][0] |= {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    "readinessProbe": {
        "tcpSocket": {"port": 80},
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    },
}
_POD_SPEC_DEFAULTED["initContainers"][0]["resources"] = {}
# a pod's, not a template's: SetDefaults_Pod (enableServiceLinks; requests from limits, which
# this container has), and the DefaultTolerationSeconds admission plugin (the toleration sent
# is for another key)
_POD_DEFAULTED = _POD_SPEC_DEFAULTED | {
    "enableServiceLinks": True,
    "tolerations": [
        *_POD_SPEC["tolerations"],
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ],
}
_TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": _POD_SPEC}
_TEMPLATE_DEFAULTED = {"metadata": {"labels": {"app": "web"}}, "spec": _POD_SPEC_DEFAULTED}
_NOW = "2024-01-01T00:00:00Z"
_NOW_MICRO = "2024-01-01T00:00:00.000000Z"
_REF = {"apiVersion": "v1", "kind": "Pod", "namespace": NS, "name": "web", "uid": "u1"}

# (group/version, plural) → (the object sent, the defaults the server adds)
OBJECTS: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {
    ("v1", "namespaces"): (
        {"metadata": {"name": "team-a", "labels": {"team": "a"}}},
        {
            "metadata": {"labels": {"kubernetes.io/metadata.name": "team-a"}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        },
    ),
    ("v1", "nodes"): (
        {
            "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "spec": {
                "unschedulable": False,
                "podCIDR": "10.0.0.0/24",
                "podCIDRs": ["10.0.0.0/24"],
                "taints": [{"key": "k", "value": "", "effect": "NoSchedule"}],
            },
            "status": {
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "addresses": [{"type": "InternalIP", "address": "10.1.0.1"}],
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": "",
                    "containerRuntimeVersion": "containerd://1.7.0",
                    "kernelVersion": "6.1",
                    "kubeProxyVersion": "v1.30.6",
                    "kubeletVersion": "v1.30.6",
                    "machineID": "",
                    "operatingSystem": "linux",
                    "osImage": "Debian",
                    "systemUUID": "",
                },
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": _NOW,
                        "lastTransitionTime": _NOW,
                    }
                ],
                "images": [{"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 0}],
            },
        },
        {},
    ),
    ("v1", "pods"): (
        {"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": _POD_SPEC},
        # and the Priority admission plugin's: no priorityClassName, no global default
        {"spec": _POD_DEFAULTED | {"priority": 0, "preemptionPolicy": "PreemptLowerPriority"}},
    ),
    ("v1", "events"): (
        {
            "metadata": {"name": "web.1"},
            "involvedObject": _REF | {"fieldPath": "spec.containers{app}"},
            "reason": "Scheduled",
            "message": "Successfully assigned wire/web to n1",
            "source": {"component": "default-scheduler"},
            "firstTimestamp": _NOW,
            "lastTimestamp": _NOW,
            "count": 1,
            "type": "Normal",
            "reportingComponent": "default-scheduler",
            "reportingInstance": "default-scheduler-n0",
        },
        {"eventTime": None},  # a zero metav1.MicroTime: written, as null
    ),
    ("coordination.k8s.io/v1", "leases"): (
        {
            "metadata": {"name": "kube-scheduler"},
            "spec": {
                "holderIdentity": "n0_1",
                "leaseDurationSeconds": 15,
                "acquireTime": _NOW_MICRO,
                "renewTime": _NOW_MICRO,
                "leaseTransitions": 0,
            },
        },
        {},
    ),
    ("events.k8s.io/v1", "events"): (
        {
            "metadata": {"name": "web.2"},
            "eventTime": _NOW_MICRO,
            "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-n0",
            "action": "Binding",
            "reason": "Scheduled",
            "regarding": _REF,
            "note": "Successfully assigned wire/web to n1",
            "type": "Normal",
        },
        # what Go writes of the deprecated fields left unset
        {
            "deprecatedSource": {},
            "deprecatedFirstTimestamp": None,
            "deprecatedLastTimestamp": None,
        },
    ),
    ("policy/v1", "poddisruptionbudgets"): (
        {
            "metadata": {"name": "web"},
            "spec": {
                "minAvailable": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "unhealthyPodEvictionPolicy": "IfHealthyBudget",
            },
        },
        {},
    ),
    ("scheduling.k8s.io/v1", "priorityclasses"): (
        {"metadata": {"name": "high"}, "value": 1000, "globalDefault": False, "description": "x"},
        {"preemptionPolicy": "PreemptLowerPriority"},
    ),
    ("scheduling.x-k8s.io/v1alpha1", "podgroups"): (
        {
            "metadata": {"name": "gang"},
            "spec": {"minMember": 1, "minResources": {"cpu": "1"}, "scheduleTimeoutSeconds": 10},
        },
        {},
    ),
    ("v1", "persistentvolumes"): (
        {
            "metadata": {"name": "pv1"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/data", "type": ""},
                "storageClassName": "standard",
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": ["n1"],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        },
        # the status is the fake cluster's PV controller's (Available at once)
        {"spec": {"persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}},
    ),
    ("v1", "persistentvolumeclaims"): (
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                # no such class and no volume of it: the PV controller leaves the claim alone
                "storageClassName": "other",
            },
        },
        {"spec": {"volumeMode": "Filesystem"}},
    ),
    ("v1", "services"): (
        {
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80}],
                "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"],
            },
        },
        {
            "spec": {
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "internalTrafficPolicy": "Cluster",
                "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}],
            }
        },
    ),
    ("v1", "replicationcontrollers"): (
        {"metadata": {"name": "web"}, "spec": {"replicas": 2, "template": _TEMPLATE}},
        {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"selector": {"app": "web"}, "template": _TEMPLATE_DEFAULTED},
        },
    ),
    # the workload kinds run the fake cluster's controllers: zero replicas (and a Job of
    # parallelism 0) so that no controller writes the object between the create and the reads
    ("apps/v1", "replicasets"): (
        {
            "metadata": {"name": "web"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE},
        },
        {"spec": {"template": _TEMPLATE_DEFAULTED}},
    ),
    ("apps/v1", "deployments"): (
        {
            "metadata": {"name": "web"},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": _TEMPLATE},
        },
        # SetDefaults_Deployment
        {
            "spec": {
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
                "template": _TEMPLATE_DEFAULTED,
            }
        },
    ),
    ("batch/v1", "jobs"): (
        {"metadata": {"name": "once"}, "spec": {"parallelism": 0, "template": _TEMPLATE}},
        # SetDefaults_Job: the template's labels too
        {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "suspend": False,
                "podReplacementPolicy": "TerminatingOrFailed",
                "template": _TEMPLATE_DEFAULTED,
            },
        },
    ),
    ("apps/v1", "statefulsets"): (
        {
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 0,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "web"}},
                "template": _TEMPLATE,
            },
        },
        {
            "spec": {
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "persistentVolumeClaimRetentionPolicy": {
                    "whenDeleted": "Retain",
                    "whenScaled": "Retain",
                },
                "template": _TEMPLATE_DEFAULTED,
            }
        },
    ),
    ("storage.k8s.io/v1", "storageclasses"): (
        {
            "metadata": {"name": "standard"},
            "provisioner": "rancher.io/local-path",
            "allowVolumeExpansion": False,
        },
        {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
    ),
    ("storage.k8s.io/v1", "csinodes"): (
        {
            "metadata": {"name": "n1"},
            "spec": {
                "drivers": [
                    {
                        "name": "csi.example.com",
                        "nodeID": "n1",
                        "topologyKeys": ["topology.kubernetes.io/zone"],
                        "allocatable": {"count": 10},
                    }
                ]
            },
        },
        {},
    ),
    ("storage.k8s.io/v1", "csidrivers"): (
        {"metadata": {"name": "csi.example.com"}, "spec": {"attachRequired": True}},
        {
            "spec": {
                "podInfoOnMount": False,
                "storageCapacity": False,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": False,
                "seLinuxMount": False,
            }
        },
    ),
    ("storage.k8s.io/v1", "csistoragecapacities"): (
        {
            "metadata": {"name": "cap1"},
            "storageClassName": "standard",
            "capacity": "10Gi",
            "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "n1"}},
        },
        {},
    ),
    ("storage.k8s.io/v1", "volumeattachments"): (
        {
            "metadata": {"name": "csi-0123"},
            "spec": {
                "attacher": "csi.example.com",
                "nodeName": "n1",
                "source": {"persistentVolumeName": "pv1"},
            },
        },
        {},
    ),
    ("resource.k8s.io/v1", "deviceclasses"): (
        {
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
        },
        {},
    ),
    ("resource.k8s.io/v1", "resourceclaims"): (
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.example.com",
                                "allocationMode": "ExactCount",
                                "count": 1,
                            },
                        }
                    ]
                }
            },
        },
        {},
    ),
    ("resource.k8s.io/v1", "resourceclaimtemplates"): (
        {
            "metadata": {"name": "gpu"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
                        ]
                    }
                }
            },
        },
        # SetDefaults_ExactDeviceRequest
        {"spec": {"spec": {"devices": {"requests": [{"exactly": {"allocationMode": "ExactCount", "count": 1}}]}}}},
    ),
    ("resource.k8s.io/v1", "resourceslices"): (
        {
            "metadata": {"name": "n1-gpu"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 0, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "x"}}}],
            },
        },
        {},
    ),
    ("resource.k8s.io/v1beta2", "devicetaintrules"): (
        {
            "metadata": {"name": "unhealthy"},
            "spec": {
                "deviceSelector": {"driver": "gpu.example.com", "pool": "n1"},
                "taint": {"key": "example.com/unhealthy", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"},
            },
        },
        {},
    ),
    # the same kind in 1.33-1.35's version (one object, served in both)
    ("resource.k8s.io/v1alpha3", "devicetaintrules"): (
        {
            "metadata": {"name": "hot"},
            "spec": {
                "deviceSelector": {"driver": "gpu.example.com", "device": "gpu-0"},
                "taint": {"key": "example.com/hot", "effect": "NoExecute", "timeAdded": "2024-01-01T00:00:00Z"},
            },
        },
        {},
    ),
}

# the kinds a controller of the fake cluster writes to as soon as they are created
_WRITTEN_AT_ONCE = ("persistentvolumes", "statefulsets", "replicasets", "deployments")

# metadata the server sets on every object
_SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "generation")


def _merge(sent: Any, defaults: Any) -> Any:
    """``sent`` with ``defaults`` added (dicts merged key by key, lists item by item)."""
    if isinstance(sent, dict) and isinstance(defaults, dict):
        out = dict(sent)
        for k, v in defaults.items():
            out[k] = _merge(sent[k], v) if k in sent else v
        return out
    if isinstance(sent, list) and isinstance(defaults, list) and len(sent) == len(defaults):
        return [_merge(a, b) for a, b in zip(sent, defaults, strict=True)]
    return defaults


def _expected(gv: str, kind: str, ns: str, sent: dict[str, Any], defaults: dict[str, Any]) -> Any:
    out = _merge(sent, defaults)
    out["apiVersion"], out["kind"] = gv, kind
    out["metadata"] = dict(out["metadata"]) | ({"namespace": ns} if ns else {})
    return out


def _comparable(obj: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """What the server answered, without what the server or the cluster sets on its own: the
    server's metadata, and the status when the client sent none (the cluster's emulations own
    it)."""
    obj = dict(obj)
    obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in _SERVER_META}
    if "status" not in sent and "status" in obj:
        obj.pop("status")
    return obj


def _rows() -> list[Any]:
    return [
        pytest.param(
            r.group_version, r.plural, r.kind, r.namespaced, id=f"{r.plural}.{r.group_version}"
        )
        for r in RESOURCES
        if "get" in r.verbs
    ]


def test_every_served_kind_has_an_object_here() -> None:
    served = {(r.group_version, r.plural) for r in RESOURCES if "get" in r.verbs}
    assert served == set(OBJECTS)


@pytest.mark.parametrize(("gv", "plural", "kind", "namespaced"), _rows())
def test_objects_round_trip_by_get_list_and_watch(
    api: k8s.ApiClient, gv: str, plural: str, kind: str, namespaced: bool
) -> None:
    dyn = DynamicClient(api)
    resource = dyn.resources.get(api_version=gv, kind=kind, name=plural)
    sent, defaults = OBJECTS[(gv, plural)]
    ns = NS if namespaced else ""
    body = copy.deepcopy(sent) | {"apiVersion": gv, "kind": kind}
    name = sent["metadata"]["name"]
    # defaults added, with the "status" the client sent when its kind keeps one
    status_defaults = defaults.get("status")
    expected = _expected(gv, kind, ns, sent, defaults)
    listed_rv = resource.get(namespace=ns or None).metadata.resourceVersion

    created = resource.create(body=body, namespace=ns or None).to_dict()
    sent_view = sent if status_defaults is None else sent | {"status": {}}
    assert _comparable(created, sent_view) == expected
    # a controller that writes the object at once (the PV controller makes a volume Available,
    # the StatefulSet controller records its observedGeneration) changes its status and version
    same: Callable[[Any], Any] = (
        (lambda o: _comparable(o, sent_view)) if plural in _WRITTEN_AT_ONCE else (lambda o: o)
    )
    got = resource.get(name=name, namespace=ns or None).to_dict()
    assert same(got) == same(created)
    items = resource.get(namespace=ns or None).to_dict()["items"]
    assert [same(i) for i in items if i["metadata"]["name"] == name] == [same(created)]
    seen = None
    for ev in resource.watch(namespace=ns or None, resource_version=listed_rv, timeout=5):
        if ev["raw_object"]["metadata"]["name"] == name:
            seen = ev
            break
    assert seen is not None and seen["type"] == "ADDED"
    assert same(seen["raw_object"]) == same(created)


# --- informers of what a real kube-scheduler lists ---------------------------------------------

Lister = Callable[..., Any]


def _informers(api: k8s.ApiClient) -> list[tuple[str, Lister, Callable[[dict[str, Any]], Any]]]:
    core, apps, storage, resource = (
        k8s.CoreV1Api(api),
        k8s.AppsV1Api(api),
        k8s.StorageV1Api(api),
        k8s.ResourceV1Api(api),
    )

    def namespaced(create: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
        return lambda body: create(NS, body)

    return [
        ("namespaces", core.list_namespace, core.create_namespace),
        ("persistentvolumes", core.list_persistent_volume, core.create_persistent_volume),
        (
            "persistentvolumeclaims",
            core.list_persistent_volume_claim_for_all_namespaces,
            namespaced(core.create_namespaced_persistent_volume_claim),
        ),
        (
            "services",
            core.list_service_for_all_namespaces,
            namespaced(core.create_namespaced_service),
        ),
        (
            "replicationcontrollers",
            core.list_replication_controller_for_all_namespaces,
            namespaced(core.create_namespaced_replication_controller),
        ),
        (
            "replicasets",
            apps.list_replica_set_for_all_namespaces,
            namespaced(apps.create_namespaced_replica_set),
        ),
        (
            "statefulsets",
            apps.list_stateful_set_for_all_namespaces,
            namespaced(apps.create_namespaced_stateful_set),
        ),
        ("storageclasses", storage.list_storage_class, storage.create_storage_class),
        ("csinodes", storage.list_csi_node, storage.create_csi_node),
        ("csidrivers", storage.list_csi_driver, storage.create_csi_driver),
        (
            "csistoragecapacities",
            storage.list_csi_storage_capacity_for_all_namespaces,
            namespaced(storage.create_namespaced_csi_storage_capacity),
        ),
        ("volumeattachments", storage.list_volume_attachment, storage.create_volume_attachment),
        ("resourceslices", resource.list_resource_slice, resource.create_resource_slice),
        (
            "resourceclaims",
            resource.list_resource_claim_for_all_namespaces,
            namespaced(resource.create_namespaced_resource_claim),
        ),
        ("deviceclasses", resource.list_device_class, resource.create_device_class),
    ]


@pytest.fixture(scope="module")
def informer_api() -> Iterator[k8s.ApiClient]:
    """A server of its own, so every list starts empty."""
    with _serving("asyncio") as server, k8s.ApiClient(k8s.Configuration(host=server.url)) as c:
        yield c


def test_informers_of_what_a_scheduler_lists_sync(informer_api: k8s.ApiClient) -> None:
    objects = {plural: sent for (gv, plural), (sent, _) in OBJECTS.items()}
    objects["namespaces"] = {"metadata": {"name": NS}}
    for plural, lister, create in _informers(informer_api):
        listing = lister()
        names = {i.metadata.name for i in listing.items}
        if plural == "namespaces":  # the system namespaces exist from the start
            assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}
        else:
            assert names == set(), plural
        create(copy.deepcopy(objects[plural]))
        # the item type as the list declares it (the client's guess from the list's name misses
        # ResourceV1ResourceClaim)
        item_type = listing.openapi_types["items"].split("[", 1)[1].removesuffix("]")
        w = k8s_watch.Watch(return_type=getattr(k8s.models, item_type))
        events = w.stream(
            lister, resource_version=listing.metadata.resource_version, timeout_seconds=5
        )
        first = next(events)
        w.stop()
        assert first["type"] == "ADDED", plural
        assert first["object"].metadata.name == objects[plural]["metadata"]["name"], plural
