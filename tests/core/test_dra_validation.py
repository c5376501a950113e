"""The DRA kinds and a pod's claims validated as the API server does (kubernetes
pkg/apis/resource/validation/validation.go and pkg/apis/core/validation/validation.go, v1.36):
each row one upstream rule, named after the upstream test (``TestValidateClaim``,
``TestValidateResourceSlice``, ``TestValidateDeviceClass``, ``TestValidateClaimTemplate``,
``TestValidateDeviceTaintRule``, ``TestValidatePodSpec``) and its case where it has one; the
message asserted exactly.  Manifest loading gives it as one line naming file, document and field,
and ``kubesched simulate`` exits 2."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from kubesched import cli
from kubesched._errors import ConfigError
from kubesched.scenario._manifests import load_manifests
from kubesched.validation import _dra as dra_validation

CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "claim", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "class"}}]}},
}
SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "slice"},
    "spec": {"driver": "driver.example.com", "nodeName": "worker", "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "device-0"}]},
}
CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "class"}, "spec": {}}
TEMPLATE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "tmpl"},
    "spec": {"spec": copy.deepcopy(CLAIM["spec"])},
}
RULE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "rule"},
    "spec": {"deviceSelector": {"driver": "driver.example.com"}, "taint": {"key": "example.com/k", "effect": "NoExecute"}},
}
POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod"},
    "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "tmpl"}],
             "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}]},
}


CLASSES = "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: class}\n"
"""The class the claims name, after them: simulate refuses a claim naming a class its input lacks."""


def load(doc: dict[str, Any]) -> list[Any]:
    """The manifests of ``doc`` (document 1), loaded beside :data:`CLASSES`."""
    extra = CLASSES if doc["kind"] != "DeviceClass" else ""
    return [m for m in load_manifests(["in.yaml"], {"in.yaml": yaml.safe_dump(doc) + extra}) if m.doc == 1]


def error(doc: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as e:
        load(doc)
    return str(e.value)


def edit(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``value`` at ``path`` (dots; ``[i]`` list items)."""
    doc = copy.deepcopy(doc)
    parts = path.replace("[", ".[").split(".")
    at: Any = doc
    for p in parts[:-1]:
        at = at[int(p[1:-1])] if p.startswith("[") else at.setdefault(p, {})
    last = parts[-1]
    if last.startswith("["):
        at[int(last[1:-1])] = value
    else:
        at[last] = value
    return doc


def requests(n: int) -> list[dict[str, Any]]:
    return [{"name": f"req-{i}", "exactly": {"deviceClassName": "class"}} for i in range(n)]


def results(n: int) -> list[dict[str, Any]]:
    return [{"request": "req-0", "driver": "driver.example.com", "pool": "pool", "device": f"device-{i}"} for i in range(n)]


def reserved(n: int) -> list[dict[str, Any]]:
    return [{"resource": "pods", "name": f"p{i}", "uid": f"uid-{i}"} for i in range(n)]


def devices(n: int) -> list[dict[str, Any]]:
    return [{"name": f"device-{i}"} for i in range(n)]


def attributes(n: int) -> dict[str, Any]:
    return {f"attr_{i}": {"int": i} for i in range(n)}


TRUE = "device.driver == 'driver.example.com'"
WHERE = "in.yaml: document 1 "

VALID = [CLAIM, SLICE, CLASS, TEMPLATE, RULE, POD,
         edit(CLAIM, "spec.devices.requests", requests(32)),
         edit(SLICE, "spec.devices", devices(128)),
         edit(SLICE, "spec.devices[0].attributes", attributes(32)),
         edit(CLASS, "spec.selectors", [{"cel": {"expression": 'device.driver == ""'.ljust(10 * 1024)}}]),
         edit(edit(CLAIM, "status.allocation.devices.results", results(32)), "status.reservedFor", reserved(256))]


@pytest.mark.parametrize("doc", VALID, ids=lambda d: f"{d['kind']}")
def test_valid(doc: dict[str, Any]) -> None:
    assert len(load(doc)) == 1


CASES = [
    pytest.param(edit(CLAIM, "spec.devices.requests", requests(33)), "(ResourceClaim default/claim), spec.devices.requests: Too many: 33: must have at most 32 items", id="TestValidateClaim/too-many-requests"),
    pytest.param(edit(edit(CLAIM, "status.allocation.devices.results", results(33)), "status.reservedFor", reserved(1)),
                 "(ResourceClaim default/claim), status.allocation.devices.results: Too many: 33: must have at most 32 items", id="TestValidateClaimStatusUpdate/too-many-allocation-results"),
    pytest.param(edit(edit(CLAIM, "status.allocation.devices.results", results(1)), "status.reservedFor", reserved(257)),
                 "(ResourceClaim default/claim), status.reservedFor: Too many: 257: must have at most 256 items", id="TestValidateClaimStatusUpdate/too-many-reservedFor"),
    pytest.param(edit(CLAIM, "status.reservedFor", reserved(1)),
                 "(ResourceClaim default/claim), status.reservedFor: Forbidden: may not be specified when `allocated` is not set", id="TestValidateClaimStatusUpdate/invalid-reserved-for-not-allocated"),
    pytest.param(edit(edit(CLAIM, "status.allocation.devices.results", results(1)), "status.reservedFor", reserved(1) * 2),
                 '(ResourceClaim default/claim), status.reservedFor[1]: Duplicate value: "uid-0"', id="TestValidateClaimStatusUpdate/invalid-reserved-for-duplicate"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].exactly.selectors", [{"cel": {"expression": "x" * (10 * 1024 + 1)}}]),
                 "(ResourceClaim default/claim), spec.devices.requests[0].exactly.selectors[0].cel.expression: Too long: may not be more than 10240 bytes", id="TestValidateClaim/CEL-length"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].exactly.selectors", [{}]),
                 "(ResourceClaim default/claim), spec.devices.requests[0].exactly.selectors[0].cel: Required value", id="TestValidateClaim/missing-cel"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0]", {"name": "req-0"}),
                 "(ResourceClaim default/claim), spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required", id="TestValidateClaim/missing-exactly-and-firstAvailable"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].firstAvailable", [{"name": "sub", "deviceClassName": "class"}]),
                 '(ResourceClaim default/claim), spec.devices.requests[0]: Invalid value: "null": exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set', id="TestValidateClaim/prioritized-list-and-exactly"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].exactly.deviceClassName", ""),
                 "(ResourceClaim default/claim), spec.devices.requests[0].exactly.deviceClassName: Required value", id="TestValidateClaim/missing-classname"),
    pytest.param(edit(CLAIM, "spec.devices.requests", requests(1) * 2),
                 '(ResourceClaim default/claim), spec.devices.requests[1]: Duplicate value: "req-0"', id="TestValidateClaim/duplicate-request-name"),
    pytest.param(edit(edit(CLAIM, "spec.devices.requests[0].exactly.allocationMode", "All"), "spec.devices.requests[0].exactly.count", 2),
                 "(ResourceClaim default/claim), spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'", id="TestValidateClaim/invalid-count-with-all"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].exactly.count", -1),
                 "(ResourceClaim default/claim), spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero", id="TestValidateClaim/invalid-count"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].exactly.allocationMode", "Some"),
                 '(ResourceClaim default/claim), spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"', id="TestValidateClaim/invalid-mode"),
    pytest.param(edit(CLAIM, "spec.devices.constraints", [{"requests": ["no-such-request"], "matchAttribute": "dra.example.com/model"}]),
                 "(ResourceClaim default/claim), spec.devices.constraints[0].requests[0]: Invalid value: \"no-such-request\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'", id="TestValidateClaim/invalid-constraint-requests"),
    pytest.param(edit(CLAIM, "spec.devices.constraints", [{"matchAttribute": "model"}]),
                 '(ResourceClaim default/claim), spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified name must be a domain and a name separated by a slash', id="TestValidateClaim/invalid-match-attribute"),
    pytest.param(edit(CLAIM, "spec.devices.config", [{"opaque": {"driver": "driver.example.com", "parameters": [1]}}]),
                 '(ResourceClaim default/claim), spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object', id="TestValidateClaim/invalid-config-json"),
    pytest.param(edit(CLAIM, "spec.devices.requests[0].exactly.tolerations", [{"key": "k", "operator": "Exists", "value": "v"}]),
                 '(ResourceClaim default/claim), spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "v": must be empty for operator `Exists`', id="TestValidateClaim/tolerations"),
    pytest.param(edit(TEMPLATE, "spec.spec.devices.requests[0].exactly.deviceClassName", "Bad_Class"),
                 '(ResourceClaimTemplate tmpl), spec.spec.devices.requests[0].exactly.deviceClassName: Invalid value: "Bad_Class": a lowercase RFC 1123 subdomain', id="TestValidateClaimTemplate/bad-classname"),
    pytest.param(edit(SLICE, "spec.devices", devices(129)),
                 "(ResourceSlice slice), spec.devices: Too many: 129: must have at most 128 items", id="TestValidateResourceSlice/too-large"),
    pytest.param(edit(edit(SLICE, "spec.devices", devices(65)), "spec.devices[0].taints", [{"key": "k", "effect": "NoSchedule"}]),
                 "(ResourceSlice slice), spec.devices: Too many: 65: must have at most 64 items", id="TestValidateResourceSlice/too-many-devices-with-taints"),
    pytest.param(edit(SLICE, "spec.devices", devices(1) * 2),
                 '(ResourceSlice slice), spec.devices[1]: Duplicate value: "device-0"', id="TestValidateResourceSlice/duplicate-devices"),
    pytest.param(edit(SLICE, "spec.devices[0].attributes", attributes(33)),
                 "(ResourceSlice slice), spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32", id="TestValidateResourceSlice/too-many-attributes"),
    pytest.param(edit(edit(SLICE, "spec.devices[0].attributes", attributes(16)), "spec.devices[0].capacity", {f"cap_{i}": {"value": 1} for i in range(17)}),
                 "(ResourceSlice slice), spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32", id="TestValidateResourceSlice/too-many-attributes-and-capacities"),
    pytest.param(edit(SLICE, "spec.devices[0].attributes", {"a": {"int": 1, "bool": True}}),
                 '(ResourceSlice slice), spec.devices[0].attributes[a]: Invalid value: "": exactly one value must be specified', id="TestValidateResourceSlice/invalid-attribute-multiple-values"),
    pytest.param(edit(SLICE, "spec.devices[0].attributes", {"v": {"version": "1.0"}}),
                 '(ResourceSlice slice), spec.devices[0].attributes[v].version: Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0', id="TestValidateResourceSlice/invalid-version"),
    pytest.param(edit(SLICE, "spec.devices[0].attributes", {"a/b/c": {"int": 1}}),
                 '(ResourceSlice slice), spec.devices[0].attributes: Invalid value: "a/b/c": must not contain more than one slash', id="TestValidateResourceSlice/bad-attribute-name"),
    pytest.param(edit(SLICE, "spec.allNodes", True),
                 '(ResourceSlice slice), spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set', id="TestValidateResourceSlice/multiple-node-selection"),
    pytest.param(edit(SLICE, "spec.pool.resourceSliceCount", 0),
                 "(ResourceSlice slice), spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero", id="TestValidateResourceSlice/bad-pool-count"),
    pytest.param(edit(SLICE, "spec.devices[0].capacity", {"memory": {"value": "1Gi", "requestPolicy": {"default": "1Gi"}}}),
                 "(ResourceSlice slice), spec.devices[0].capacity[memory].requestPolicy: Forbidden: allowMultipleAllocations must be true", id="TestValidateResourceSlice/request-policy-without-multiple-allocations"),
    pytest.param(edit(CLASS, "spec.selectors", [{"cel": {"expression": "x" * (10 * 1024 + 1)}}]),
                 "(DeviceClass class), spec.selectors[0].cel.expression: Too long: may not be more than 10240 bytes", id="TestValidateDeviceClass/CEL-length"),
    pytest.param(edit(CLASS, "spec.config", [{}]),
                 "(DeviceClass class), spec.config[0].opaque: Required value", id="TestValidateDeviceClass/configuration-invalid-missing-opaque"),
    pytest.param(edit(RULE, "spec.taint.effect", "Sometimes"),
                 '(DeviceTaintRule rule), spec.taint.effect: Unsupported value: "Sometimes": supported values: "NoExecute", "NoSchedule", "None"', id="TestValidateDeviceTaintRule/bad-effect"),
    pytest.param(edit(POD, "spec.containers[0].resources.claims[0].name", "nic"),
                 '(Pod pod), spec.containers[0].resources.claims[0]: Not found: "nic": must be one of the names in pod.spec.resourceClaims: gpu', id="TestValidatePodSpec/claim-not-found"),
    pytest.param(edit(POD, "spec.resourceClaims[0]", {"name": "gpu"}),
                 '(Pod pod), spec.resourceClaims[0]: Invalid value: core.PodResourceClaim{Name:"gpu", ResourceClaimName:(*string)(nil), ResourceClaimTemplateName:(*string)(nil)}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`', id="TestValidatePodSpec/claim-source-missing"),
    pytest.param(edit(POD, "spec.resourceClaims", [{"name": "gpu", "resourceClaimName": "c"}] * 2),
                 '(Pod pod), spec.resourceClaims[1].name: Duplicate value: "gpu"', id="TestValidatePodSpec/duplicate-claim"),
]


@pytest.mark.parametrize(("doc", "want"), CASES)
def test_invalid(doc: dict[str, Any], want: str) -> None:
    assert error(doc).startswith(WHERE + want)


def test_an_unknown_class_is_valid_upstream_but_not_in_a_scenario() -> None:
    """validation.go (v1.35.4) looks no DeviceClass up, so the object validates (the API server
    and the fake one accept it; the scheduler reports the class); a scenario file naming a class
    it has nowhere is refused by kubesched's own input check."""
    from kubesched.validation._validation import validate_object

    doc = edit(TEMPLATE, "spec.spec.devices.requests[0].exactly.deviceClassName", "no-such-class")
    from kubesched.api._objects import KINDS, convert

    validate_object(convert(doc, KINDS[("resource.k8s.io/v1", "ResourceClaimTemplate")]), "ResourceClaimTemplate")
    with pytest.raises(ConfigError) as e:
        load_manifests(["in.yaml"], {"in.yaml": yaml.safe_dump(doc)})
    assert str(e.value) == (WHERE + "(ResourceClaimTemplate tmpl), spec.spec.devices.requests[0].exactly.deviceClassName: "
                            'Not found: "no-such-class": no DeviceClass of this name in the input')


def test_cel_compile_hook() -> None:
    """The CEL engine's compile check plugs in; its errors read as upstream's field errors."""
    def check(expr: str) -> tuple[str, str] | None:
        if expr == "costly":
            return ("Forbidden", "too complex, exceeds cost limit")
        return ("Invalid", "compilation failed: ERROR: <input>:1:1: undeclared reference") if expr != TRUE else None

    previous = dra_validation._cel_check
    dra_validation.set_cel_check(check)
    try:
        assert len(load(edit(CLASS, "spec.selectors", [{"cel": {"expression": TRUE}}]))) == 1
        assert error(edit(CLASS, "spec.selectors", [{"cel": {"expression": "costly"}}])) == (
            WHERE + "(DeviceClass class), spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit")
        assert error(edit(CLASS, "spec.selectors", [{"cel": {"expression": "nope"}}])) == (
            WHERE + '(DeviceClass class), spec.selectors[0].cel.expression: Invalid value: "nope": compilation failed: '
            "ERROR: <input>:1:1: undeclared reference")
    finally:
        dra_validation.set_cel_check(previous)


def test_strict_decoding_of_a_claim() -> None:
    assert error(edit(CLAIM, "spec.devices.requests[0].exactly.deviceClass", "x")) == (
        WHERE + '(ResourceClaim default/claim): strict decoding error: unknown field "spec.devices.requests[0].exactly.deviceClass"')


def test_simulate_badinput_exits_2(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A slice with duplicate device names: one line, exit 2 (as the fuzz tests run the CLI)."""
    path = tmp_path / "slice.yaml"
    path.write_text(yaml.safe_dump(edit(SLICE, "spec.devices", devices(1) * 2)))
    try:
        code = cli.main(["simulate", str(path)])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        f'kubesched: error: {path}: document 1 (ResourceSlice slice), spec.devices[1]: Duplicate value: "device-0"']


@pytest.mark.parametrize(
    ("doc", "path", "value", "field"),
    [
        pytest.param(CLAIM, "spec.devices.requests[0].exactly.count", 2, "spec", id="TestValidateClaimUpdate/invalid-update-class"),
        pytest.param(TEMPLATE, "spec.spec.devices.requests[0].exactly.count", 2, "spec", id="TestValidateClaimTemplateUpdate/invalid-update"),
        pytest.param(SLICE, "spec.pool.name", "other", "spec.pool.name", id="TestValidateResourceSliceUpdate/invalid-update-pool-name"),
        pytest.param(SLICE, "spec.driver", "other.example.com", "spec.driver", id="TestValidateResourceSliceUpdate/invalid-update-driver"),
    ],
)
def test_an_update_of_an_immutable_field(doc: dict[str, Any], path: str, value: Any, field: str) -> None:
    """A later document (``kubesched.io/arrival``) may not change what the API server keeps
    immutable."""
    later = edit(edit(doc, path, value), "metadata.annotations", {"kubesched.io/arrival": "1m"})
    text = yaml.safe_dump(doc) + "---\n" + yaml.safe_dump(later) + CLASSES
    with pytest.raises(ConfigError) as e:
        load_manifests(["in.yaml"], {"in.yaml": text})
    assert str(e.value).endswith(f", {field}: Invalid value: field is immutable")
    ok = edit(edit(doc, "metadata.labels", {"a": "b"}), "metadata.annotations", {"kubesched.io/arrival": "1m"})
    assert len(load_manifests(["in.yaml"], {"in.yaml": yaml.safe_dump(doc) + "---\n" + yaml.safe_dump(ok) + CLASSES})) == 3
