"""Fields once never validated: the rules the API server and kube-scheduler apply
that kubesched did not, in the one validation code path (``kubesched.validation._validation``, used by
manifest loading and by the fake API server; ``kubesched.config._config`` for the configuration).

One row per upstream rule, the upstream function named in the id; messages asserted exactly.
Upstream: pkg/apis/core/validation/validation.go (``ValidatePodSpec``, ``validateContainers``,
``validateContainerPorts``, ``AccumulateUniqueHostPorts``, ``ValidateContainerResourceRequirements``,
``ValidateResourceQuantityValue``, ``ValidateNodeSelector``, ``ValidateNodeFieldSelectorRequirement``,
``ValidateTolerations``, ``validateSchedulingGates``, ``validateTopologySpreadConstraints``,
``validateMatchLabelKeysAndMismatchLabelKeys``, ``validateNodeTaints``, ``ValidatePodCreate``),
apimachinery ``ValidateAnnotations``, plugin/pkg/admission/priority, component-base
``ValidateLeaderElectionConfiguration`` / ``ValidateClientConnectionConfiguration``, Go's
``time.ParseDuration`` and ``time.Duration.String``.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from kubesched._errors import ConfigError
from kubesched.api._durations import format_duration, parse_duration, parse_duration_nanos
from kubesched.api._objects import KINDS, Pod, PriorityClass, convert
from kubesched.config._config import parse_config
from kubesched.validation._validation import check_priority_admission, validate_object

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NA = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
PA = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
TSC = "spec.topologySpreadConstraints"


# --- small builders of manifests (plain dicts, as a user writes them) ---------------------------


def pod(spec: dict[str, Any] | None = None, meta: dict[str, Any] | None = None, **container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", **(meta or {})},
        "spec": {"containers": [{"name": "c", "image": "x", **container}], **(spec or {})},
    }


def node(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": spec or {}, "status": status or {}}


def pod_group(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": spec}


def priority_class(value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"},
            "value": value, **fields}


def res(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return {"resources": out}


def required_terms(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}


def spread(**fields: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}}, **fields}


def error_of(doc: dict[str, Any]) -> str:
    """The one line validation gives ``doc`` ("" when valid): decode, then validate_object."""
    try:
        obj = convert(copy.deepcopy(doc), KINDS[(doc["apiVersion"], doc["kind"])])
    except msgspec.ValidationError as e:
        return str(e)
    try:
        validate_object(obj, doc["kind"])
    except ConfigError as e:
        return str(e)
    return ""


# --- what upstream refuses -----------------------------------------------------------------------

REFUSED = [
    # ValidatePodSpec: activeDeadlineSeconds is an int64 in 1..MaxInt32
    pytest.param(pod({"activeDeadlineSeconds": 1.5}), "Expected `int | null`, got `float` - at `$.spec.activeDeadlineSeconds`",
                 id="ValidatePodSpec activeDeadlineSeconds 1.5 (an int64 field)"),
    pytest.param(pod({"activeDeadlineSeconds": float("nan")}), "Expected `int | null`, got `float` - at `$.spec.activeDeadlineSeconds`",
                 id="ValidatePodSpec activeDeadlineSeconds NaN"),
    pytest.param(pod({"activeDeadlineSeconds": float("-inf")}), "Expected `int | null`, got `float` - at `$.spec.activeDeadlineSeconds`",
                 id="ValidatePodSpec activeDeadlineSeconds -inf"),
    pytest.param(pod({"activeDeadlineSeconds": 2**63}), "Expected `int` <= 9223372036854775807 - at `$.spec.activeDeadlineSeconds`",
                 id="ValidatePodSpec activeDeadlineSeconds beyond int64"),
    pytest.param(pod({"activeDeadlineSeconds": 0}),
                 "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
                 id="ValidatePodSpec activeDeadlineSeconds 0"),
    pytest.param(pod({"activeDeadlineSeconds": 2**31}),
                 "spec.activeDeadlineSeconds: Invalid value: 2147483648: must be between 1 and 2147483647, inclusive",
                 id="ValidatePodSpec activeDeadlineSeconds beyond MaxInt32"),
    # PodGroup: a negative scheduleTimeoutSeconds times every Permit wait out at once
    pytest.param(pod_group(minMember=2, scheduleTimeoutSeconds=-5),
                 "spec.scheduleTimeoutSeconds: Invalid value: -5: must be greater than or equal to 0",
                 id="PodGroup scheduleTimeoutSeconds -5 (a livelock at t=0)"),
    # validateContainerResourceRequirements: extended resources cannot be overcommitted
    pytest.param(pod(**res({"example.com/gpu": "1"})),
                 "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
                 id="validateResourceRequirements extended resource without a limit"),
    pytest.param(pod(**res({"example.com/gpu": "1"}, {"example.com/gpu": "2"})),
                 'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "1": must be equal to '
                 "example.com/gpu limit of 2", id="validateResourceRequirements extended request below its limit"),
    pytest.param(pod(**res({"example.com/gpu": "500m"}, {"example.com/gpu": "500m"})),
                 "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 500m: must be an integer",
                 id="ValidateResourceQuantityValue fractional extended resource"),
    pytest.param(pod(**res({"example.com/gpu": "5e-1"}, {"example.com/gpu": "5e-1"})),
                 "spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 500e-3: must be an integer",
                 id="ValidateResourceQuantityValue fractional extended resource, exponent form"),
    pytest.param(pod(**res({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi"})),
                 "spec.containers[0].resources: Forbidden: HugePages require cpu or memory",
                 id="validateResourceRequirements hugepages without cpu or memory"),
    pytest.param(pod(**res({"cpu": "1", "hugepages-2Mi": "3Mi"}, {"hugepages-2Mi": "3Mi"})),
                 'spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive '
                 "integer multiple of hugepages-2Mi", id="validateResourceQuantityHugePageValue 3Mi of 2Mi pages"),
    # validateContainerResourceName
    pytest.param(pod(**res({"cpus": "1"})),
                 'spec.containers[0].resources.requests[cpus]: Invalid value: "cpus": must be a standard resource type '
                 "or fully qualified", id="validateResourceName cpus"),
    pytest.param(pod(**res({"pods": "1"})),
                 'spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for '
                 "containers", id="validateContainerResourceName pods"),
    pytest.param(pod(**res(limits={"requests.example.com/x": "1"})),
                 'spec.containers[0].resources.limits[requests.example.com/x]: Invalid value: "requests.example.com/x": '
                 "doesn't follow extended resource name standard", id="validateContainerResourceName requests. prefix"),
    # names over 253, label values over 63
    pytest.param(pod({"priorityClassName": "a" * 254}),
                 f'spec.priorityClassName: Invalid value: "{"a" * 254}": must be no more than 253 characters',
                 id="ValidatePodSpec priorityClassName over 253"),
    pytest.param(pod({"tolerations": [{"key": "k", "value": "v" * 64}]}),
                 f'spec.tolerations[0].operator: Invalid value: "{"v" * 64}": must be no more than 63 characters',
                 id="ValidateTolerations value over 63"),
    pytest.param(pod(required_terms({"matchExpressions": [{"key": "k", "operator": "In", "values": ["v" * 64]}]})),
                 f'{NA}.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "{"v" * 64}": must be no '
                 "more than 63 characters", id="ValidateNodeSelectorRequirement value over 63"),
    pytest.param(node({"taints": [{"key": "k", "value": "v" * 64, "effect": "NoSchedule"}]}),
                 f'spec.taints[0].value: Invalid value: "{"v" * 64}": must be no more than 63 characters',
                 id="validateNodeTaints value over 63"),
    pytest.param(pod({"hostname": "Host_1"}),
                 'spec.hostname: Invalid value: "Host_1": a lowercase RFC 1123 label must consist of lower case '
                 "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
                 "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                 id="ValidatePodSpec hostname"),
    # ValidateAnnotations: 256 KiB of keys and values
    pytest.param(pod(meta={"annotations": {"a": "x" * 262144}}),
                 "metadata.annotations: Too long: must have at most 262144 bytes", id="ValidateAnnotations over 256 KiB"),
    # selector operators with the wrong number of values
    pytest.param(pod(required_terms({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]})),
                 f"{NA}.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when "
                 "`operator` is 'In' or 'NotIn' for node field selector", id="ValidateNodeFieldSelectorRequirement two values"),
    pytest.param(pod(required_terms({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]})),
                 f'{NA}.nodeSelectorTerms[0].matchFields[0].operator: Invalid value: "Exists": not a valid selector operator',
                 id="ValidateNodeFieldSelectorRequirement Exists"),
    pytest.param(pod(required_terms({"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["a"]}]})),
                 f'{NA}.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key',
                 id="ValidateNodeFieldSelectorRequirement key"),
    pytest.param(pod(required_terms({"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1", "2"]}]})),
                 f"{NA}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value "
                 "when `operator` is 'Lt' or 'Gt'", id="ValidateNodeSelectorRequirement Gt with two values"),
    # ValidateNodeSelector: an empty term list
    pytest.param(pod(required_terms()),
                 f"{NA}.nodeSelectorTerms: Required value: must have at least one node selector term",
                 id="ValidateNodeSelector empty nodeSelectorTerms"),
    # duplicates
    pytest.param(node({"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}]}),
                 'spec.taints[1]: Duplicate value: core.Taint{Key:"k", Value:"v", Effect:"NoSchedule", '
                 "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
                 id="validateNodeTaints duplicate key and effect"),
    pytest.param(pod({"topologySpreadConstraints": [spread(), spread(maxSkew=2)]}),
                 f'{TSC}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{zone, DoNotSchedule}}"',
                 id="ValidateSpreadConstraintNotRepeat"),
    pytest.param(pod({"schedulingGates": [{"name": "a"}, {"name": "a"}]}),
                 'spec.schedulingGates[1]: Duplicate value: "a"', id="validateSchedulingGates duplicate"),
    pytest.param(pod({"schedulingGates": [{"name": "a b"}]}),
                 f'spec.schedulingGates[0]: Invalid value: "a b": {NAME_PART}', id="validateSchedulingGates name"),
    pytest.param(pod({"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]},
                                     {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": 80}]}]}),
                 'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//80"', id="AccumulateUniqueHostPorts"),
    pytest.param(pod(ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 81, "name": "http"}]),
                 'spec.containers[0].ports[1].name: Duplicate value: "http"', id="validateContainerPorts duplicate name"),
    # matchLabelKeys overlapping the selector
    pytest.param(pod({"topologySpreadConstraints": [spread(matchLabelKeys=["app"])]}),
                 f'{TSC}[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
                 id="validateMatchLabelKeysInTopologySpread overlap"),
    pytest.param(pod({"topologySpreadConstraints": [{**spread(matchLabelKeys=["app"]), "labelSelector": None}]}),
                 f"{TSC}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
                 id="validateMatchLabelKeysInTopologySpread without a selector"),
    pytest.param(pod({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "a"}}, "matchLabelKeys": ["app"]}]}}},
                     meta={"labels": {"app": "a"}}),
                 f'{PA}[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
                 id="validateMatchLabelKeysAndMismatchLabelKeys overlap (upstream's path)"),
    pytest.param(pod({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"topologyKey": "zone", "labelSelector": {}, "matchLabelKeys": ["app"], "mismatchLabelKeys": ["app"]}]}}}),
                 f'{PA}[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and mismatchLabelKeys',
                 id="validateMatchLabelKeysAndMismatchLabelKeys in both lists"),
    # invalid enums
    pytest.param(pod(ports=[{"containerPort": 80, "protocol": "ICMP"}]),
                 'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
                 id="validateContainerPorts protocol ICMP"),
    pytest.param(pod({"restartPolicy": "Sometimes"}),
                 'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
                 id="validateRestartPolicy Sometimes"),
    pytest.param(pod(restartPolicy="Always"),
                 "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
                 id="validateContainers restartPolicy on a regular container"),
    pytest.param(pod({"initContainers": [{"name": "i", "image": "x", "restartPolicy": "OnFailure"}]}),
                 'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
                 id="validateInitContainerRestartPolicy"),
    pytest.param(pod({"preemptionPolicy": "Sometimes"}),
                 'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
                 id="ValidatePreemptionPolicy"),
    pytest.param(priority_class(5, preemptionPolicy="Sometimes"),
                 'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
                 id="ValidatePriorityClass preemptionPolicy"),
    # ValidateTolerations
    pytest.param(pod({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]}),
                 "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
                 "`tolerationSeconds` is set", id="ValidateTolerations tolerationSeconds without NoExecute"),
    pytest.param(pod({"tolerations": [{"key": "a b", "operator": "Exists"}]}),
                 f'spec.tolerations[0].key: Invalid value: "a b": {NAME_PART}', id="ValidateTolerations key"),
    # validateContainerPorts
    pytest.param(pod(ports=[{"hostPort": 80}]), "spec.containers[0].ports[0].containerPort: Required value",
                 id="validateContainerPorts containerPort missing"),
    pytest.param(pod(ports=[{"containerPort": 80, "name": "HTTP"}]),
                 'spec.containers[0].ports[0].name: Invalid value: "HTTP": must contain only alpha-numeric characters '
                 "(a-z, 0-9), and hyphens (-)", id="IsValidPortName"),
    # ValidatePodCreate
    pytest.param(pod({"nodeName": "n1", "schedulingGates": [{"name": "g"}]}),
                 "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
                 id="ValidatePodCreate nodeName with scheduling gates"),
    # ValidateNodeResources: integer resources are whole
    pytest.param(node(status={"allocatable": {"cpu": "4", "example.com/gpu": "1.5"}}),
                 "status.allocatable.example.com/gpu: Invalid value: 1500m: must be an integer",
                 id="ValidateNodeResources fractional extended resource"),
    pytest.param(node(status={"capacity": {"pods": "10.5"}}),
                 "status.capacity.pods: Invalid value: 10500m: must be an integer", id="ValidateNodeResources fractional pods"),
    pytest.param(pod({"topologySpreadConstraints": [spread(minDomains=0)]}),
                 f"{TSC}[0].minDomains: Invalid value: 0: must be greater than zero", id="validateMinDomains 0"),
]


@pytest.mark.parametrize(("doc", "message"), REFUSED)
def test_refused_as_upstream(doc: dict[str, Any], message: str) -> None:
    assert error_of(doc) == message


ACCEPTED = [
    pytest.param(priority_class(-5), id="ValidatePriorityClass negative value (no lower bound upstream)"),
    pytest.param(priority_class(-(2**31)), id="ValidatePriorityClass the smallest int32"),
    pytest.param(pod({"activeDeadlineSeconds": 2**31 - 1}), id="activeDeadlineSeconds MaxInt32"),
    pytest.param(pod({"restartPolicy": ""}), id="empty restartPolicy (defaulted to Always)"),
    pytest.param(pod(ports=[{"containerPort": 80, "hostPort": 80, "protocol": ""}]), id="empty protocol (defaulted to TCP)"),
    pytest.param(pod({"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]},
                                     {"name": "b", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80,
                                                                           "protocol": "UDP"}]}]}),
                 id="one host port, two protocols"),
    pytest.param(pod({"initContainers": [{"name": "i", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]}]},
                     ports=[{"containerPort": 80, "hostPort": 80}]),
                 id="an init container's host port may repeat a container's (they run one by one)"),
    pytest.param(pod(**res({"example.com/gpu": "2", "cpu": "500m"}, {"example.com/gpu": "2"})), id="extended request equal to its limit"),
    pytest.param(pod(**res(limits={"example.com/gpu": "2"})), id="extended limit alone"),
    pytest.param(pod(**res({"cpu": "1", "hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"})), id="hugepages with cpu"),
    pytest.param(pod(**res({"kubernetes.io/whatever": "1"})), id="a kubernetes.io/ name is native"),
    pytest.param(pod(meta={"annotations": {"a": "x" * (262144 - 1)}}), id="annotations of exactly 256 KiB"),
    pytest.param(pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                     {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]}}]}}}),
                 id="a preferred term may hold an invalid label value"),
    pytest.param(pod(required_terms({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]})),
                 id="matchFields NotIn one node name"),
    pytest.param(pod({"topologySpreadConstraints": [spread(), spread(whenUnsatisfiable="ScheduleAnyway")]}),
                 id="one topology key, both whenUnsatisfiable"),
    pytest.param(pod({"topologySpreadConstraints": [spread(matchLabelKeys=["pod-template-hash"])]}),
                 id="matchLabelKeys disjoint from the selector"),
    pytest.param(pod({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "a"}}, "matchLabelKeys": ["app"]}]}}}),
                 id="pod affinity matchLabelKeys on a label the pod lacks (nothing merged)"),
    pytest.param(pod({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]}),
                 id="tolerationSeconds with NoExecute"),
    pytest.param(node({"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}]}),
                 id="one taint key, two effects"),
    pytest.param(pod_group(minMember=2, scheduleTimeoutSeconds=0), id="scheduleTimeoutSeconds 0 (the args' timeout applies)"),
]


@pytest.mark.parametrize("doc", ACCEPTED)
def test_accepted_as_upstream(doc: dict[str, Any]) -> None:
    assert error_of(doc) == ""


# --- the Priority admission plugin (plugin/pkg/admission/priority/admission.go) -------------------


def _pod_and_class(priority: int | None, policy: str | None, pc_policy: str | None = None) -> tuple[Pod, PriorityClass]:
    p = convert(pod({"priorityClassName": "gold", "priority": priority, "preemptionPolicy": policy}), Pod)
    pc = convert(priority_class(1000, preemptionPolicy=pc_policy), PriorityClass)
    return p, pc


@pytest.mark.parametrize(
    ("priority", "policy", "pc_policy", "message"),
    [
        pytest.param(5, None, None, "x.yaml: document 2 (Pod p), spec.priority: the integer value of priority (5) must "
                     "not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
                     id="spec.priority disagreeing with its class"),
        pytest.param(1000, "Never", None, "x.yaml: document 2 (Pod p), spec.preemptionPolicy: the string value of "
                     "PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed "
                     "PreemptLowerPriority from the given PriorityClass name", id="preemptionPolicy disagreeing with its class"),
        pytest.param(1000, "Never", "Never", "", id="both as the class gives them"),
        pytest.param(None, None, None, "", id="neither given"),
    ],
)
def test_priority_admission(priority: int | None, policy: str | None, pc_policy: str | None, message: str) -> None:
    p, pc = _pod_and_class(priority, policy, pc_policy)
    try:
        check_priority_admission(p, pc, source="x.yaml: document 2 (Pod p)")
    except ConfigError as e:
        assert str(e) == message
    else:
        assert message == ""


def test_priority_admission_resolves_the_system_classes() -> None:
    p = convert(pod({"priorityClassName": "system-node-critical", "priority": 7}), Pod)
    with pytest.raises(ConfigError, match=r"priority \(7\) must not be provided .* computed 2000001000"):
        check_priority_admission(p, None)
    p.spec.priority = None
    check_priority_admission(p, None)


def test_a_pod_without_a_class_keeps_its_priority() -> None:
    """kubesched's input contract: ``spec.priority``, else the class; no class named,
    nothing to disagree with."""
    check_priority_admission(convert(pod({"priority": 5}), Pod), None)


# --- Go durations (time.ParseDuration, time.Duration.String) -------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(" 5s", 'time: invalid duration " 5s"', id="leading space"),
        pytest.param("5s ", 'time: invalid duration "5s "', id="trailing space"),
        pytest.param("5s\n", 'time: invalid duration "5s\\x0a"', id="trailing newline, escaped as Go quotes it"),
        pytest.param("\t90", 'time: invalid duration "\\x0990"', id="a tab before a bare number"),
        pytest.param("5s\u2028", 'time: invalid duration "5s\\xe2\\x80\\xa8"', id="a line separator, as Go's bytes"),
        pytest.param("forever", 'time: invalid duration "forever"', id="forever"),
    ],
)
def test_durations_refused_as_go(text: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_duration(text)
    assert str(e.value) == message


def test_a_bare_number_is_seconds_only_where_kubesched_takes_it() -> None:
    assert parse_duration("90") == 90.0
    assert parse_duration_nanos("0", bare_seconds=False) == 0
    with pytest.raises(ValueError, match='^time: missing unit in duration "15"$'):
        parse_duration_nanos("15", bare_seconds=False)


@pytest.mark.parametrize(
    ("nanos", "text"),
    [(0, "0s"), (1, "1ns"), (1500, "1.5µs"), (2_500_000, "2.5ms"), (10**9, "1s"), (1_500_000_000, "1.5s"),
     (90 * 10**9, "1m30s"), (3600 * 10**9, "1h0m0s"), (-5 * 10**9, "-5s"), (2**63 - 1, "2562047h47m16.854775807s")],
)  # fmt: skip
def test_format_duration_as_go(nanos: int, text: str) -> None:
    assert format_duration(nanos) == text


# --- the configuration -----------------------------------------------------------------------------

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def config_error(**fields: Any) -> str:
    try:
        parse_config({**API, **fields})
    except ConfigError as e:
        return str(e)
    return ""


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31}]}}}]},
                     "profiles[0].plugins.score.enabled[0].weight: Invalid value: 2147483648: out of the int32 range",
                     id="score plugin weight 2^31 (Plugin.Weight is an int32)"),
        pytest.param({"leaderElection": {"leaseDuration": "forever"}},
                     'leaderElection.leaseDuration: time: invalid duration "forever"', id="leaseDuration forever"),
        pytest.param({"leaderElection": {"renewDeadline": " 10s"}},
                     'leaderElection.renewDeadline: time: invalid duration " 10s"', id="renewDeadline with a space"),
        pytest.param({"leaderElection": {"retryPeriod": "2"}},
                     'leaderElection.retryPeriod: time: missing unit in duration "2"', id="retryPeriod without a unit"),
        pytest.param({"leaderElection": {"leaseDuration": 15}},
                     'leaderElection.leaseDuration: Invalid value: 15: must be a duration string (e.g. "15s")',
                     id="leaseDuration a number (metav1.Duration is a string)"),
        pytest.param({"leaderElection": {"leaseDuration": "10s", "renewDeadline": "20s"}},
                     "leaderElection.leaseDuration: Invalid value: 20s: must be greater than `RenewDeadline`",
                     id="ValidateLeaderElectionConfiguration renewDeadline beyond leaseDuration"),
        pytest.param({"leaderElection": {"renewDeadline": "15s"}},
                     "leaderElection.leaseDuration: Invalid value: 15s: must be greater than `RenewDeadline`",
                     id="renewDeadline equal to the default leaseDuration"),
        pytest.param({"leaderElection": {"retryPeriod": "0s"}},
                     "leaderElection.retryPeriod: Invalid value: 0s: must be greater than zero", id="retryPeriod 0s"),
        pytest.param({"leaderElection": {"leaseDuration": "-1m30s"}},
                     "leaderElection.leaseDuration: Invalid value: -1m30s: must be greater than zero", id="negative leaseDuration"),
        pytest.param({"leaderElection": {"resourceLock": "endpoints"}},
                     'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
                     id="ValidateKubeSchedulerConfiguration resourceLock"),
        pytest.param({"leaderElection": {"leaderElect": "yes"}},
                     "leaderElection.leaderElect: Invalid value: 'yes': must be a boolean", id="leaderElect a string"),
        pytest.param({"clientConnection": {"burst": -1}},
                     "clientConnection.burst: Invalid value: -1: must be non-negative",
                     id="ValidateClientConnectionConfiguration negative burst"),
        pytest.param({"clientConnection": {"qps": "fast"}},
                     "clientConnection.qps: Invalid value: 'fast': must be a number", id="qps a string"),
        pytest.param({"clientConnection": {"qps": 1e39}},
                     "clientConnection.qps: Invalid value: 1e+39: out of the float32 range", id="qps beyond float32"),
    ],
)
def test_config_refused_as_upstream(fields: dict[str, Any], message: str) -> None:
    assert config_error(**fields) == message


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"clientConnection": {"qps": -1}}, id="negative qps (client-go: no rate limit)"),
        pytest.param({"leaderElection": {"leaderElect": False, "leaseDuration": "1s", "renewDeadline": "5s"}},
                     id="relations unchecked when not electing"),
        pytest.param({"leaderElection": {"leaseDuration": "1m", "renewDeadline": "59.5s", "retryPeriod": "500ms"}},
                     id="valid durations"),
        pytest.param({"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31 - 1}]}}}]},
                     id="the largest int32 weight"),
    ],
)
def test_config_accepted_as_upstream(fields: dict[str, Any]) -> None:
    assert config_error(**fields) == ""


@pytest.mark.anyio
async def test_fake_cluster_admission_applies_the_priority_rule() -> None:
    """plugin/pkg/admission/priority Admit: the fake cluster (behind the fake API server) refuses
    a pod whose spec.priority disagrees with the class it names; a pod without a class keeps its
    own priority (kubesched's documented input), even beside a globalDefault class."""
    from kubesched.transports.fake import FakeCluster

    async with FakeCluster() as cluster:
        cluster.create(convert({"metadata": {"name": "high"}, "value": 1000}, PriorityClass))
        cluster.create(convert({"metadata": {"name": "low"}, "value": 1, "globalDefault": True}, PriorityClass))
        spec = {"containers": [{"name": "c", "image": "x"}]}
        with pytest.raises(ConfigError) as e:
            cluster.create(convert({"metadata": {"name": "p"}, "spec": {**spec, "priorityClassName": "high", "priority": 5}}, Pod))
        assert e.value.message == (
            "the integer value of priority (5) must not be provided in pod spec; priority admission controller "
            "computed 1000 from the given PriorityClass name"
        )
        ok = cluster.create(convert({"metadata": {"name": "q"}, "spec": {**spec, "priorityClassName": "high", "priority": 1000}}, Pod))
        own = cluster.create(convert({"metadata": {"name": "r"}, "spec": {**spec, "priority": 7}}, Pod))
        assert (ok.spec.priority, own.spec.priority, own.spec.priority_class_name) == (1000, 7, "low")
