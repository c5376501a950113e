"""Write what ``kubectl get nodes,pods -A -o yaml`` (or ``-o json``) prints for a big cluster.

The nodes and pods are as a real cluster's API server returns them: every defaulted field,
``managedFields`` (kubelet's, the controller manager's, the scheduler's), status with
conditions and container statuses, a node's image list; pods of Deployments with an app
container (env, ports, liveness/readiness/startup probes, volume mounts) and, for most, a
sidecar, plus the service-account token volume the admission adds.  Deterministic for a seed.

At the default scale (500 nodes, 13,700 pods) the YAML is about 54 MB: the size of the export
whose load time ``kubesched simulate`` is held to (issue 38 item 4)::

    .venv/bin/python tests/tools/kubectl_export.py /tmp/big.yaml            # 54 MB
    .venv/bin/python tests/tools/kubectl_export.py /tmp/big.json --json     # the same as JSON
    .venv/bin/python tests/tools/kubectl_export.py /tmp/big-docs.yaml --documents  # one document each
    /usr/bin/time -v .venv/bin/kubesched simulate /tmp/big.yaml --output json > /dev/null

Tests load it by path (``tests`` is not a package) and write a small one.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import yaml

_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
T0 = "2025-03-01T08:00:00Z"
NAMESPACES = ("payments", "search", "checkout", "catalog", "identity", "ml-serving", "default")
APPS = ("api", "worker", "frontend", "indexer", "gateway", "cache", "scorer", "auth")


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _ts(minute: int) -> str:
    return f"2025-03-01T{8 + minute // 60 % 16:02d}:{minute % 60:02d}:{minute * 7 % 60:02d}Z"


def node(i: int, rng: random.Random) -> dict[str, Any]:
    """One worker node as ``kubectl get node -o yaml`` prints it."""
    name = f"ip-10-{i // 250}-{i % 250}-{rng.randrange(10, 250)}.ec2.internal"
    zone = f"us-east-1{'abc'[i % 3]}"
    itype = ("m5.4xlarge", "m5.8xlarge", "c5.9xlarge")[i % 3]
    cpu, mem = ((16, 64), (32, 128), (36, 72))[i % 3]
    ip = f"10.{i // 250}.{i % 250}.{rng.randrange(10, 250)}"
    images = [
        {"names": [f"registry.example.com/{a}@sha256:{rng.getrandbits(256):064x}", f"registry.example.com/{a}:v1.{k}.{rng.randrange(30)}"],
         "sizeBytes": rng.randrange(20_000_000, 900_000_000)}
        for k, a in enumerate(APPS)
    ]
    labels = {
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": itype, "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND", "eks.amazonaws.com/nodegroup": f"workers-{i % 4}",
        "failure-domain.beta.kubernetes.io/region": "us-east-1", "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": itype, "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": zone,
    }
    conditions = [
        {"lastHeartbeatTime": _ts(i), "lastTransitionTime": T0, "message": msg, "reason": reason, "status": status, "type": kind}
        for kind, reason, msg, status in (
            ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available", "False"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", "False"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available", "False"),
            ("Ready", "KubeletReady", "kubelet is posting ready status", "True"),
        )
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": T0,
            "labels": labels,
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {
                    "f:annotations": {".": {}, "f:alpha.kubernetes.io/provided-node-ip": {}, "f:volumes.kubernetes.io/controller-managed-attach-detach": {}},
                    "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}}},
                    "f:spec": {"f:providerID": {}}}, "manager": "kubelet", "operation": "Update", "time": T0},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {"f:node.alpha.kubernetes.io/ttl": {}}},
                    "f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, f'v:"10.{100 + i // 250}.{i % 250}.0/24"': {}}}},
                 "manager": "kube-controller-manager", "operation": "Update", "time": T0},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:allocatable": {"f:cpu": {}, "f:memory": {}},
                    "f:conditions": {f'k:{{"type":"{c["type"]}"}}': {"f:lastHeartbeatTime": {}} for c in conditions},
                    "f:images": {}, "f:nodeInfo": {"f:bootID": {}}}},
                 "manager": "kubelet", "operation": "Update", "subresource": "status", "time": _ts(i)},
            ],
            "name": name,
            "resourceVersion": str(1_000_000 + i),
            "uid": _uid(rng),
        },
        "spec": {
            "podCIDR": f"10.{100 + i // 250}.{i % 250}.0/24",
            "podCIDRs": [f"10.{100 + i // 250}.{i % 250}.0/24"],
            "providerID": f"aws:///{zone}/i-0{rng.getrandbits(64):016x}",
        },
        "status": {
            "addresses": [
                {"address": ip, "type": "InternalIP"},
                {"address": name, "type": "InternalDNS"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": {"cpu": f"{cpu * 1000 - 90}m", "ephemeral-storage": "95491281146", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": f"{mem * 1024 * 1024 - 1_500_000}Ki", "pods": "110"},
            "capacity": {"cpu": str(cpu), "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                         "memory": f"{mem * 1024 * 1024 - 500_000}Ki", "pods": "110"},
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64", "bootID": _uid(rng), "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "5.10.227-219.884.amzn2.x86_64", "kubeProxyVersion": "v1.30.4-eks-a737599",
                "kubeletVersion": "v1.30.4-eks-a737599", "machineID": f"{rng.getrandbits(128):032x}",
                "operatingSystem": "linux", "osImage": "Amazon Linux 2", "systemUUID": f"ec2{rng.getrandbits(116):029x}",
            },
        },
    }


def _env(app: str, ns: str) -> list[dict[str, Any]]:
    return [
        {"name": "APP_NAME", "value": app},
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
    ]


def _sa_mount(volume: str) -> dict[str, Any]:
    return {"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": volume, "readOnly": True}


def _probe(path: str, port: int, delay: int) -> dict[str, Any]:
    return {"failureThreshold": 3, "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
            "initialDelaySeconds": delay, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1}


def _fields_v1(names: list[str], owner: str) -> dict[str, Any]:
    """The controller manager's managedFields entry for a pod it created."""
    return {
        "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:team": {}},
                       "f:ownerReferences": {".": {}, f'k:{{"uid":"{owner}"}}': {}}},
        "f:spec": {
            "f:containers": {f'k:{{"name":"{n}"}}': {
                ".": {}, "f:image": {}, "f:name": {}, "f:resources": {".": {}, "f:requests": {".": {}, "f:cpu": {}}}} for n in names},
            "f:restartPolicy": {}, "f:schedulerName": {},
        },
    }


def pod(i: int, nodes: list[str], rng: random.Random, rich_fifths: int = 1, sidecar_share: float = 0.5) -> dict[str, Any]:
    """One Running pod of a Deployment as ``kubectl get pod -o yaml`` prints it."""
    ns = NAMESPACES[i % len(NAMESPACES)]
    app = f"{APPS[i % len(APPS)]}-{i % 97}"
    rs_hash = f"{rng.getrandbits(40):010x}"[:10]
    suffix = "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    name = f"{app}-{rs_hash}-{suffix}"
    owner = _uid(rng)
    node_name = nodes[i % len(nodes)]
    cpu = rng.choice(("50m", "100m", "250m", "500m"))
    mem = rng.choice(("64Mi", "128Mi", "256Mi", "512Mi"))
    sa_volume = f"kube-api-access-{''.join(rng.choice('bcdfghjklmnpqrstvwxz') for _ in range(5))}"
    rich = i % 5 < rich_fifths  # a Deployment's pod (probes, env, a sidecar for some), else a Job's
    containers: list[dict[str, Any]] = [{
        "env": _env(app, ns),
        "image": f"registry.example.com/{APPS[i % len(APPS)]}:v1.{i % 24}.{i % 30}",
        "imagePullPolicy": "IfNotPresent",
        "livenessProbe": _probe("/healthz", 8080, 10),
        "name": "app",
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "readinessProbe": _probe("/ready", 8080, 5),
        "resources": {"limits": {"memory": mem}, "requests": {"cpu": cpu, "memory": mem}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [{"mountPath": "/etc/app", "name": "config"}, _sa_mount(sa_volume)],
    }]
    if not rich:
        c = containers[0]
        for k in ("livenessProbe", "readinessProbe", "ports"):
            del c[k]
        c["command"] = ["/bin/batch", "--shard", str(i % 64)]
        c["env"] = c["env"][:1]
        c["volumeMounts"] = c["volumeMounts"][1:]
    elif rng.random() < sidecar_share:
        containers.append({
            "args": ["--config=/etc/fluent-bit/fluent-bit.conf", "--quiet"],
            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
            "image": "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.2",
            "imagePullPolicy": "IfNotPresent",
            "livenessProbe": {"exec": {"command": ["/bin/sh", "-c", "pgrep fluent-bit"]}, "failureThreshold": 3, "periodSeconds": 30,
                              "successThreshold": 1, "timeoutSeconds": 5},
            "name": "log-shipper",
            "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "10m", "memory": "32Mi"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/log/app", "name": "logs"}, _sa_mount(sa_volume)],
        })
    started = i % 900
    statuses = [
        {"containerID": f"containerd://{rng.getrandbits(256):064x}", "image": c["image"],
         "imageID": f"{c['image'].split(':')[0]}@sha256:{rng.getrandbits(256):064x}", "lastState": {}, "name": c["name"],
         "ready": True, "restartCount": 0, "started": True, "state": {"running": {"startedAt": _ts(started + 1)}}}
        for c in containers
    ]
    names = [c["name"] for c in containers]
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/restartedAt": T0, "prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
            "creationTimestamp": _ts(started),
            "generateName": f"{app}-{rs_hash}-",
            "labels": {"app": app, "pod-template-hash": rs_hash, "team": ns},
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": _fields_v1(names, owner),
                 "manager": "kube-controller-manager", "operation": "Update", "time": _ts(started)},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {
                    "f:conditions": {f'k:{{"type":"{t}"}}': {"f:status": {}} for t in ("ContainersReady", "Ready")},
                    "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {},
                    "f:podIPs": {".": {}, f'k:{{"ip":"10.{100 + i % 250}.{i % 200}.{i % 250}"}}': {".": {}, "f:ip": {}}}, "f:startTime": {}}},
                 "manager": "kubelet", "operation": "Update", "subresource": "status", "time": _ts(started + 1)},
            ],
            "name": name,
            "namespace": ns,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True, "kind": "ReplicaSet",
                                 "name": f"{app}-{rs_hash}", "uid": owner}],
            "resourceVersion": str(2_000_000 + i),
            "uid": _uid(rng),
        },
        "spec": {
            "containers": containers,
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "nodeName": node_name,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {"fsGroup": 2000, "runAsNonRoot": True},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            ],
            "volumes": [
                {"configMap": {"defaultMode": 420, "name": f"{app}-config"}, "name": "config"},
                {"emptyDir": {}, "name": "logs"},
                {"name": sa_volume, "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                ]}},
            ],
        },
        "status": {
            "conditions": [
                {"lastProbeTime": None, "lastTransitionTime": _ts(started + (t != "PodScheduled")), "status": "True", "type": t}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "containerStatuses": statuses,
            "hostIP": f"10.{i % 2}.{i % 250}.{i % 240 + 10}",
            "hostIPs": [{"ip": f"10.{i % 2}.{i % 250}.{i % 240 + 10}"}],
            "phase": "Running",
            "podIP": f"10.{100 + i % 250}.{i % 200}.{i % 250}",
            "podIPs": [{"ip": f"10.{100 + i % 250}.{i % 200}.{i % 250}"}],
            "qosClass": "Burstable",
            "startTime": _ts(started),
        },
    }
    if not rich:  # a Job's pod: the kubelet's managedFields entry only, its own volume only
        md, spec = obj["metadata"], obj["spec"]
        md["managedFields"] = md["managedFields"][1:]
        md["ownerReferences"][0].update(apiVersion="batch/v1", kind="Job", name=app)
        del md["annotations"], md["generateName"]
        spec["restartPolicy"] = "Never"
        spec["volumes"] = spec["volumes"][2:]
    return obj


def objects(nodes: int, pods: int, seed: int = 1) -> Iterator[dict[str, Any]]:
    """The nodes, then the pods (spread over the nodes), as the API server lists them."""
    rng = random.Random(seed)
    names = []
    for i in range(nodes):
        n = node(i, rng)
        names.append(n["metadata"]["name"])
        yield n
    for i in range(pods):
        yield pod(i, names, rng)


def write(out: TextIO, nodes: int = 500, pods: int = 13_700, *, form: str = "list", seed: int = 1) -> None:
    """Write the export: ``list`` (``kubectl get -o yaml``: one ``v1 List``), ``documents``
    (one YAML document per object) or ``json`` (``kubectl get -o json``)."""
    if form == "json":
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for k, obj in enumerate(objects(nodes, pods, seed)):
            text = json.dumps(obj, indent=4, sort_keys=True)
            out.write((",\n" if k else "") + "\n".join("        " + line for line in text.split("\n")))
        out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
        return
    if form == "list":
        out.write("apiVersion: v1\nitems:\n")
    for k, obj in enumerate(objects(nodes, pods, seed)):
        if form == "list":
            out.write(yaml.dump([obj], Dumper=_DUMPER, default_flow_style=False, sort_keys=True, width=1 << 20))
        else:
            out.write(("---\n" if k else "") + yaml.dump(obj, Dumper=_DUMPER, default_flow_style=False, sort_keys=True, width=1 << 20))
    if form == "list":
        out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("out", type=Path)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=13_700)
    ap.add_argument("--seed", type=int, default=1)
    form = ap.add_mutually_exclusive_group()
    form.add_argument("--json", dest="form", action="store_const", const="json", default="list")
    form.add_argument("--documents", dest="form", action="store_const", const="documents")
    args = ap.parse_args(argv)
    with args.out.open("w", encoding="utf-8") as f:
        write(f, args.nodes, args.pods, form=args.form, seed=args.seed)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
