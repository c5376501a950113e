"""Extended resources backed by DRA: the class resolver and the special claim's requests.

Ported: k8s.io/dynamic-resource-allocation v0.35.4 ``extendedresourcecache_test.go``
(``TestNil``, ``TestExtendedResourceCache``) and kubernetes v1.35.4
``extendeddynamicresources_test.go`` (``Test_createRequestsAndMappings_requests``,
``Test_createRequestsAndMappings_mappings``).  ``extendedResourceName`` there is a constant of
the package's tests; ``example.com/gpu`` here (only its order against the other names matters:
after ``deviceclass.resource.kubernetes.io/...``).
"""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from kubesched.api._dra import DeviceClass, DeviceClassSpec
from kubesched.api._objects import Container, ObjectMeta, Pod, PodSpec, ResourceRequirements
from kubesched.dra._extended import (
    RESOURCE_DEVICE_CLASS_PREFIX,
    ExtendedResourceClasses,
    create_requests_and_mappings,
)

ER = "example.com/gpu"


def _class(name: str, resource: str | None = None, created: str = "2026-01-02T00:00:00Z") -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=name, creation_timestamp=created), spec=DeviceClassSpec(extended_resource_name=resource))


def test_extendedresourcecache__TestNil() -> None:
    assert ExtendedResourceClasses().get_device_class("example.com/gpu") is None


def test_extendedresourcecache__TestExtendedResourceCache() -> None:
    cache = ExtendedResourceClasses()
    c1 = _class("gpu-class", ER, "2026-01-02T00:00:00Z")
    c2 = _class("fpga-class")
    c3 = _class("gpu-class-3", ER, "2026-01-01T00:00:00Z")  # a day older
    c4 = _class("gpu-class-4", ER, "2026-01-02T01:00:00Z")  # an hour newer
    c0 = _class("gpu-class-0", ER, "2026-01-02T01:00:00Z")  # as new as c4, a smaller name

    def name(resource: str) -> str | None:
        cls = cache.get_device_class(resource)
        return cls.metadata.name if cls is not None else None

    cache.on_add(c1)
    cache.on_add(c2)
    assert name(ER) == "gpu-class"
    assert name(RESOURCE_DEVICE_CLASS_PREFIX + "fpga-class") == "fpga-class"
    assert name(RESOURCE_DEVICE_CLASS_PREFIX + "gpu-class") == "gpu-class"
    cache.on_add(c3)
    assert name(ER) == "gpu-class"  # older: the mapping stays
    cache.on_add(c4)
    assert name(ER) == "gpu-class-4"
    cache.on_add(c0)
    assert name(ER) == "gpu-class-0"
    c0_modified = replace(c0, spec=DeviceClassSpec(extended_resource_name="test.com/gpu"))
    cache.on_update(c0, c0_modified)
    assert name("test.com/gpu") == "gpu-class-0"
    assert name(ER) is None  # upstream's history: no older class takes it back
    cache.on_delete(c0_modified)
    assert name("test.com/gpu") is None
    assert name(RESOURCE_DEVICE_CLASS_PREFIX + "gpu-class-0") is None
    assert cache.get_extended_resource("gpu-class") == ER and cache.get_extended_resource("fpga-class") == ""


# --- createRequestsAndMappings -----------------------------------------------------------------


class _Pod:
    """st.MakePod's Res / InitReq / SidecarReq: containers con<i>, init-con<i>, sidecar-con<i>."""

    def __init__(self) -> None:
        self.containers: list[Container] = []
        self.init: list[Container] = []

    def res(self, **requests: str) -> _Pod:
        self.containers.append(Container(name=f"con{len(self.containers)}", resources=ResourceRequirements(requests=_names(requests))))
        return self

    def init_req(self, **requests: str) -> _Pod:
        self.init.append(Container(name=f"init-con{len(self.init)}", resources=ResourceRequirements(requests=_names(requests))))
        return self

    def sidecar_req(self, **requests: str) -> _Pod:
        self.init.append(Container(name=f"sidecar-con{len(self.init)}", restart_policy="Always",
                                   resources=ResourceRequirements(requests=_names(requests))))  # fmt: skip
        return self

    def obj(self) -> Pod:
        return Pod(metadata=ObjectMeta(name="pod", namespace="default"), spec=PodSpec(containers=self.containers, init_containers=self.init))


def _names(requests: dict[str, str]) -> dict[str, Any]:
    """Keyword names to resource names: ``er`` is example.com/gpu, ``er1`` example.com/gpu1,
    ``erinit`` example.com/gpuinit, ``implicit`` deviceclass.resource.kubernetes.io/classInit."""
    table = {"er": ER, "er1": ER + "1", "erinit": ER + "init", "implicit": RESOURCE_DEVICE_CLASS_PREFIX + "classInit"}
    return {table[k]: v for k, v in requests.items()}


class _Resolver:
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def get_device_class(self, resource: str) -> DeviceClass | None:
        name = self.mapping.get(resource)
        return _class(name) if name is not None else None


POD1 = _Pod().res(er="1", er1="2").obj()
POD2 = _Pod().res(er="1").res(er1="2").obj()
POD_INIT = _Pod().res(er="1").init_req(erinit="2").obj()
POD_INIT2 = _Pod().res(er="1").init_req(erinit="1").init_req(erinit="2").obj()
POD_INIT3 = _Pod().res(er="1").init_req(erinit="1").sidecar_req(erinit="1").init_req(erinit="2").obj()
POD1_INIT_IMPLICIT = _Pod().init_req(erinit="1", implicit="2").obj()
POD_INIT_IMPLICIT = _Pod().res(er="1").init_req(erinit="1").init_req(implicit="2").obj()
RES = {ER: 1}
RES2 = {ER: 1, ER + "1": 2}
RES_INIT = {ER: 1, ER + "init": 2}
RES_INIT_IMPLICIT = {ER: 1, ER + "init": 2, RESOURCE_DEVICE_CLASS_PREFIX + "classInit": 2}
DEV_MAP = {ER: "class"}
DEV_MAP2 = {ER: "class", ER + "1": "class1"}
DEV_MAP_INIT = {ER: "class", ER + "init": "classInit"}
DEV_MAP_INIT_IMPLICIT = {**DEV_MAP_INIT, RESOURCE_DEVICE_CLASS_PREFIX + "classInit": "classInit"}


@pytest.mark.parametrize(
    ("pod", "resources", "mapping", "want"),
    [
        pytest.param(POD1, {}, None, [], id="nil"),
        pytest.param(POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)], id="one resource match"),
        pytest.param(POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)], id="one resource match, one resource not match"),
        pytest.param(POD1, RES2, DEV_MAP2, [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)],
                     id="two resources match"),
        pytest.param(POD2, RES2, DEV_MAP2, [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)],
                     id="two containers match"),
        pytest.param(POD_INIT, RES_INIT, DEV_MAP_INIT, [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)],
                     id="one init container, one regular container"),
        pytest.param(POD_INIT2, RES_INIT, DEV_MAP_INIT, [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)],
                     id="two init containers, one regular container"),
        pytest.param(POD_INIT3, RES_INIT, DEV_MAP_INIT,
                     [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2), ("container-3-request-0", "class", 1)],
                     id="three init containers, one sidecar, one regular container"),
    ],
)  # fmt: skip
def test_extendeddynamicresources__Test_createRequestsAndMappings_requests(
    pod: Pod, resources: dict[str, int], mapping: dict[str, str] | None, want: list[tuple[str, str, int]]
) -> None:
    requests, _ = create_requests_and_mappings(pod, resources, _Resolver(mapping) if mapping is not None else None)
    got = [(r.name, r.exactly.device_class_name, r.exactly.count) for r in requests if r.exactly is not None]
    assert got == want
    assert all(r.exactly is not None and r.exactly.allocation_mode == "ExactCount" for r in requests)


def _m(container: str, resource: str, request: str) -> tuple[str, str, str]:
    return (container, resource, request)


IMPLICIT = RESOURCE_DEVICE_CLASS_PREFIX + "classInit"


@pytest.mark.parametrize(
    ("pod", "resources", "mapping", "want"),
    [
        pytest.param(POD1, RES2, DEV_MAP2, [_m("con0", ER, "container-0-request-0"), _m("con0", ER + "1", "container-0-request-1")],
                     id="one container, two requests"),
        pytest.param(POD1_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT_IMPLICIT,
                     [_m("init-con0", IMPLICIT, "container-0-request-0"), _m("init-con0", ER + "init", "container-0-request-1")],
                     id="one container, one explicit and one implicit request"),
        pytest.param(POD2, RES2, DEV_MAP2, [_m("con0", ER, "container-0-request-0"), _m("con1", ER + "1", "container-1-request-0")],
                     id="two containers, two requests"),
        pytest.param(POD_INIT, RES_INIT, DEV_MAP_INIT_IMPLICIT,
                     [_m("init-con0", ER + "init", "container-0-request-0"), _m("con0", ER, "container-1-request-0")],
                     id="one init container, one regular container, one request"),
        pytest.param(POD_INIT2, RES_INIT, DEV_MAP_INIT_IMPLICIT,
                     [_m("init-con0", ER + "init", "container-1-request-0"), _m("init-con1", ER + "init", "container-1-request-0"),
                      _m("con0", ER, "container-2-request-0")],
                     id="three containers (two are init container), two requests"),
        pytest.param(POD_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT_IMPLICIT,
                     [_m("init-con0", ER + "init", "container-0-request-0"), _m("init-con1", IMPLICIT, "container-1-request-0"),
                      _m("con0", ER, "container-2-request-0")],
                     id="three containers (two are init container), both explicit and implicit resources"),
        pytest.param(POD_INIT3, RES_INIT, DEV_MAP_INIT_IMPLICIT,
                     [_m("init-con0", ER + "init", "container-1-request-0"), _m("sidecar-con1", ER + "init", "container-1-request-0"),
                      _m("init-con2", ER + "init", "container-2-request-0"), _m("con0", ER, "container-3-request-0")],
                     id="four containers (two are init container, one sidecar), three requests"),
    ],
)  # fmt: skip
def test_extendeddynamicresources__Test_createRequestsAndMappings_mappings(
    pod: Pod, resources: dict[str, int], mapping: dict[str, str], want: list[tuple[str, str, str]]
) -> None:
    _, mappings = create_requests_and_mappings(pod, resources, _Resolver(mapping))
    got = sorted(((m.container_name, m.resource_name, m.request_name) for m in mappings), key=lambda t: (t[2], t[0]))
    assert got == want
