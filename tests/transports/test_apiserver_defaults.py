"""The fake API server's defaults (``_defaults``), function by function, against upstream's:
pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_PodSpec, SetDefaults_Container,
SetDefaults_Probe, SetDefaults_Volume and the volume sources'), apps/v1 and batch/v1 defaults,
and the DefaultTolerationSeconds admission plugin (its admission_test.go cases).

Every function is applied twice in each case: the server applies them again to every object
the cluster changes, so a second pass must change nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.transports.apiserver import _defaults as defaults

NOT_READY = {
    "key": "node.kubernetes.io/not-ready",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}
UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "operator": "Exists",
    "effect": "NoExecute",
    "tolerationSeconds": 300,
}


def _applied(fn: Callable[[dict[str, Any]], None], obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    fn(out)
    again = copy.deepcopy(out)
    fn(again)
    assert again == out, "not idempotent"
    return out


def _pod(**spec: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "image": "pause:3.9"}], **spec}}


# --- DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds/admission_test.go) --


@pytest.mark.parametrize(
    ("tolerations", "expected"),
    [
        pytest.param(None, [NOT_READY, UNREACHABLE], id="pod has no tolerations: both added"),
        pytest.param(
            [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}],
            [
                {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
                NOT_READY,
                UNREACHABLE,
            ],
            id="pod has tolerations for other taints: both added after them",
        ),
        pytest.param(
            [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 60,
                }
            ],
            [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 60,
                },
                UNREACHABLE,
            ],
            id="pod tolerates not-ready:NoExecute: unreachable added",
        ),  # fmt: skip
        pytest.param(
            [
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 60,
                }
            ],
            [
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 60,
                },
                NOT_READY,
            ],
            id="pod tolerates unreachable:NoExecute: not-ready added",
        ),  # fmt: skip
        pytest.param(
            [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],
            [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}, NOT_READY],
            id="pod tolerates unreachable with any effect: not-ready added",
        ),
        pytest.param(
            [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
            [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoSchedule",
                },
                NOT_READY,
                UNREACHABLE,
            ],
            id="pod tolerates not-ready:NoSchedule only: both added",
        ),
        pytest.param(
            [{"operator": "Exists"}],
            [{"operator": "Exists"}],
            id="pod has a wildcard toleration: no change",
        ),
        pytest.param(
            [{"operator": "Exists", "effect": "NoExecute"}],
            [{"operator": "Exists", "effect": "NoExecute"}],
            id="pod tolerates every NoExecute taint: no change",
        ),
    ],
)
def test_default_toleration_seconds(
    tolerations: list[dict[str, Any]] | None, expected: list[dict[str, Any]]
) -> None:
    pod = _pod() if tolerations is None else _pod(tolerations=tolerations)
    assert _applied(defaults.pod, pod)["spec"]["tolerations"] == expected


# --- SetDefaults_Pod, SetDefaults_PodSpec, SetDefaults_Container --------------------------------


def test_a_bare_pod_gets_every_default() -> None:
    assert _applied(defaults.pod, {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}) == {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx",
                    "imagePullPolicy": "Always",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "resources": {},
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "enableServiceLinks": True,
            "tolerations": [NOT_READY, UNREACHABLE],
        }
    }


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        pytest.param("nginx", "Always", id="no tag: latest"),
        pytest.param("nginx:latest", "Always", id="latest tag"),
        pytest.param("nginx:1.25", "IfNotPresent", id="a tag"),
        pytest.param("registry:5000/nginx", "Always", id="a registry port is no tag"),
        pytest.param("registry:5000/nginx:1.25", "IfNotPresent", id="registry port and tag"),
        pytest.param("nginx@sha256:" + "0" * 64, "IfNotPresent", id="a digest"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    pod = _applied(defaults.pod, {"spec": {"containers": [{"name": "c", "image": image}]}})
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_what_the_client_set_is_kept() -> None:
    sent = {
        "dnsPolicy": "None",
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "securityContext": {"runAsUser": 1000},
        "schedulerName": "other",
        "enableServiceLinks": False,
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "imagePullPolicy": "Never",
                "terminationMessagePath": "/tmp/t",
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "resources": {"requests": {"cpu": "1"}},
            }
        ],
    }
    pod = _applied(defaults.pod, {"spec": copy.deepcopy(sent)})
    assert {k: v for k, v in pod["spec"].items() if k != "tolerations"} == sent


def test_requests_from_limits_and_service_links_are_a_pods_not_a_templates() -> None:
    # SetDefaults_Pod: "we only want this defaulting semantic to take place on a v1.Pod and not
    # a v1.PodTemplate"
    container = {"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                                           "requests": {"cpu": "500m"}}}  # fmt: skip
    pod = _applied(defaults.pod, {"spec": {"containers": [copy.deepcopy(container)]}})
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert pod["spec"]["enableServiceLinks"] is True
    rs = {"spec": {"template": {"spec": {"containers": [copy.deepcopy(container)]}}}}
    template = _applied(defaults.pod_template_owner, rs)["spec"]["template"]["spec"]
    assert template["containers"][0]["resources"]["requests"] == {"cpu": "500m"}
    assert "enableServiceLinks" not in template and "tolerations" not in template
    assert template["dnsPolicy"] == "ClusterFirst"


def test_host_network_pods_get_host_ports() -> None:
    ports = [{"containerPort": 80}, {"containerPort": 53, "hostPort": 5353, "protocol": "UDP"}]
    pod = _applied(
        defaults.pod,
        {
            "spec": {
                "hostNetwork": True,
                "containers": [{"name": "c", "image": "x:1", "ports": ports}],
            }
        },
    )
    assert pod["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
        {"containerPort": 53, "hostPort": 5353, "protocol": "UDP"},
    ]


def test_probes_handlers_and_env_sources() -> None:
    container = {
        "name": "c",
        "image": "x:1",
        "livenessProbe": {"httpGet": {"port": 8080}},
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 5},
        "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
        "lifecycle": {"preStop": {"httpGet": {"port": "http", "path": "/stop"}}},
        "env": [
            {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "M", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}},
            {"name": "V", "value": "1"},
        ],
    }
    got = _applied(defaults.pod, {"spec": {"containers": [container]}})["spec"]["containers"][0]
    probe = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert (
        got["livenessProbe"] == {"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}} | probe
    )
    assert got["readinessProbe"] == {"tcpSocket": {"port": 80}} | probe | {"periodSeconds": 5}
    assert got["startupProbe"] == {"exec": {"command": ["true"]}} | probe | {"failureThreshold": 30}
    assert got["lifecycle"] == {
        "preStop": {"httpGet": {"port": "http", "path": "/stop", "scheme": "HTTP"}}
    }
    assert got["env"] == [
        {
            "name": "N",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}},
        },
        {
            "name": "M",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "0"}},
        },
        {"name": "V", "value": "1"},
    ]


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param({"name": "v"}, {"name": "v", "emptyDir": {}}, id="no source: emptyDir"),
        pytest.param(
            {"name": "v", "secret": {"secretName": "s"}},
            {"name": "v", "secret": {"secretName": "s", "defaultMode": 420}},
            id="secret defaultMode 0644",
        ),
        pytest.param(
            {"name": "v", "configMap": {"name": "c", "defaultMode": 256}},
            {"name": "v", "configMap": {"name": "c", "defaultMode": 256}},
            id="configMap defaultMode kept",
        ),
        pytest.param(
            {"name": "v", "hostPath": {"path": "/data"}},
            {"name": "v", "hostPath": {"path": "/data", "type": ""}},
            id="hostPath type unset",
        ),
        pytest.param(
            {
                "name": "v",
                "downwardAPI": {
                    "items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]
                },
            },
            {
                "name": "v",
                "downwardAPI": {
                    "defaultMode": 420,
                    "items": [
                        {
                            "path": "l",
                            "fieldRef": {"fieldPath": "metadata.labels", "apiVersion": "v1"},
                        }
                    ],
                },
            },
            id="downwardAPI defaultMode and fieldRef apiVersion",
        ),  # fmt: skip
        pytest.param(
            {"name": "v", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {
                "name": "v",
                "projected": {
                    "defaultMode": 420,
                    "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}],
                },
            },
            id="projected token expires in an hour",
        ),  # fmt: skip
        pytest.param(
            {
                "name": "v",
                "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
            },
            {
                "name": "v",
                "ephemeral": {
                    "volumeClaimTemplate": {
                        "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"}
                    }
                },
            },
            id="ephemeral claim Filesystem",
        ),  # fmt: skip
    ],
)
def test_volumes(volume: dict[str, Any], expected: dict[str, Any]) -> None:
    assert _applied(defaults.pod, _pod(volumes=[volume]))["spec"]["volumes"] == [expected]


# --- apps/v1, batch/v1 ---------------------------------------------------------------------------


def test_deployment() -> None:
    got = _applied(defaults.deployment, {"spec": {"template": {"spec": {"containers": []}}}})
    assert {k: v for k, v in got["spec"].items() if k != "template"} == {
        "replicas": 1,
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
        },
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }
    recreate = _applied(defaults.deployment, {"spec": {"strategy": {"type": "Recreate"}}})
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, {"completions": 1, "parallelism": 1, "backoffLimit": 6}, id="neither"),
        pytest.param({"parallelism": 3}, {"parallelism": 3, "backoffLimit": 6}, id="parallelism"),
        pytest.param(
            {"completions": 5},
            {"completions": 5, "parallelism": 1, "backoffLimit": 6},
            id="completions",
        ),
        pytest.param(
            {"backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 2},
            {
                "backoffLimitPerIndex": 1,
                "completionMode": "Indexed",
                "completions": 2,
                "parallelism": 1,
                "backoffLimit": 2**31 - 1,
            },
            id="a per-index limit: no overall one",
        ),  # fmt: skip
    ],
)
def test_job(spec: dict[str, Any], expected: dict[str, Any]) -> None:
    got = _applied(defaults.job, {"spec": spec})["spec"]
    assert (
        got
        == {
            "completionMode": "NonIndexed",
            "suspend": False,
            "podReplacementPolicy": "TerminatingOrFailed",
        }
        | expected
    )


def test_job_labels_come_from_its_template_when_it_has_none() -> None:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}
    got = _applied(defaults.job, {"spec": {"template": copy.deepcopy(template)}})
    assert got["metadata"] == {"labels": {"app": "a"}}
    own = _applied(
        defaults.job, {"metadata": {"labels": {"x": "y"}}, "spec": {"template": template}}
    )
    assert own["metadata"] == {"labels": {"x": "y"}}
    failure_policy = {
        "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]
    }
    with_policy = _applied(defaults.job, {"spec": {"podFailurePolicy": failure_policy}})
    assert with_policy["spec"]["podReplacementPolicy"] == "Failed"
