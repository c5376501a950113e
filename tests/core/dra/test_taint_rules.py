"""DeviceTaintRules applied to ResourceSlices (the scheduler's slice tracker) and, through the
DynamicResources plugin, to what the allocator may take, per emulated version.

The patched slices: k8s.io/dynamic-resource-allocation v0.35.4
``resourceslice/tracker/tracker_test.go`` ``TestListPatchedResourceSlices``, each case's
``expectedPatchedSlices`` after its events (the handler events are the queue's here, below).
"""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from kubesched.api._dra import (
    Device,
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintRuleSpec,
    DeviceTaintSelector,
    DeviceToleration,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from kubesched.api._objects import ObjectMeta
from kubesched.config._versions import Version, default_feature_gates
from kubesched.dra import PatchedSlices, apply_rules, taint_rules_apply
from kubesched.testing import make_node, make_pod, scheduler_for
from kubesched.testing_dra import make_claim, make_device_class, make_slice

# --- TestListPatchedResourceSlices (tracker_test.go, v0.35.4) ------------------------------------

DRIVER1, DRIVER2, POOL1, POOL2 = "driver1.example.com", "driver2.example.com", "pool-1", "pool-2"
TAINT1 = DeviceTaint(key="example.com/taint", value="tainted", effect="NoExecute", time_added="2006-01-02T15:04:05Z")
TAINT2 = DeviceTaint(key="example.com/taint2", value="tainted2", effect="NoExecute", time_added="2006-01-02T15:04:05Z")


def _slice(name: str, driver: str, pool: str, *devices: Device) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=name),
        spec=ResourceSliceSpec(driver=driver, pool=ResourcePool(name=pool), devices=list(devices)),
    )


def _dev(name: str, *taints: DeviceTaint) -> Device:
    return Device(name=name, taints=list(taints))


def slice1(*devices: Device) -> ResourceSlice:
    return _slice("s1", DRIVER1, POOL1, *(devices or (_dev("device-1"),)))


def slice2(*devices: Device) -> ResourceSlice:
    return _slice("s2", DRIVER2, POOL2, *(devices or (_dev("device-2"),)))


def rule(driver: str | None = None, pool: str | None = None, device: str | None = None, name: str = "rule") -> DeviceTaintRule:
    sel = DeviceTaintSelector(driver=driver, pool=pool, device=device) if (driver or pool or device) else None
    return DeviceTaintRule(metadata=ObjectMeta(name=name), spec=DeviceTaintRuleSpec(device_selector=sel, taint=TAINT1))


def patched(slices: list[ResourceSlice], rules: list[DeviceTaintRule]) -> list[ResourceSlice]:
    return list(PatchedSlices().of(slices, {r.metadata.name: r for r in rules}, None))


THREE = (_dev("device-0"), _dev("device-1"), _dev("device-2"))
CASES: dict[str, tuple[list[ResourceSlice], list[DeviceTaintRule], list[ResourceSlice]]] = {
    "add-slices-no-patches": ([slice1(), slice2()], [], [slice1(), slice2()]),
    "delete-slices": ([_slice("no-change", "", "")], [], [_slice("no-change", "", "")]),
    "patch-all-slices": ([slice1()], [rule()], [slice1(_dev("device-1", TAINT1))]),
    # the rule updated from pool-1 to pool-2 before the slices came
    "update-patch": ([slice1(), slice2()], [rule(pool=POOL2)], [slice1(), slice2(_dev("device-2", TAINT1))]),
    # the driver's own taint first, then the rule's
    "merge-taints": ([slice1(_dev("device-1", TAINT2))], [rule()], [slice1(_dev("device-1", TAINT2, TAINT1))]),
    "add-taint-for-driver": ([slice1(), slice2()], [rule(driver=DRIVER1)], [slice1(_dev("device-1", TAINT1)), slice2()]),
    "add-taint-for-pool": ([slice1(), slice2()], [rule(pool=POOL1)], [slice1(_dev("device-1", TAINT1)), slice2()]),
    "add-taint-for-device": ([slice1(), slice2()], [rule(device="device-1")], [slice1(_dev("device-1", TAINT1)), slice2()]),
    "filter-all-criteria": (
        [slice1(), slice2()], [rule(DRIVER1, POOL1, "device-1")], [slice1(_dev("device-1", TAINT1)), slice2()],
    ),
    # slice1 updated to three devices, slice2 from three devices to one
    "update-patched-slice": (
        [slice1(*THREE), slice2(_dev("device-1"))],
        [rule(device="device-1")],
        [slice1(THREE[0], _dev("device-1", TAINT1), THREE[2]), slice2(_dev("device-1", TAINT1))],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_tracker__TestListPatchedResourceSlices(case: str) -> None:
    slices, rules, want = CASES[case]
    before = [replace(s) for s in slices]
    assert patched(slices, rules) == want
    assert slices == before  # the informer's slices are never changed (DeepCopy before a patch)


def test_an_unselected_slice_is_the_same_object() -> None:
    """``applyPatches`` copies only when a rule applies; the tracker keeps a patched slice while
    neither it nor the rules change (the allocator's caches key on the object)."""
    s1, s2 = slice1(), slice2()
    assert apply_rules(s2, [rule(driver=DRIVER1)]) is s2
    tracker = PatchedSlices()
    rules = {"rule": rule(driver=DRIVER1)}
    first = tracker.of([s1, s2], rules, 1)
    again = tracker.of([s1, s2], rules, 1)
    assert first[0] is again[0] and first[1] is s2
    assert tracker.of([s1, s2], {}, 2) == (s1, s2)


def test_rules_are_applied_in_name_order() -> None:
    r_b = replace(rule(name="b"), spec=replace(rule().spec, taint=TAINT2))
    assert patched([slice1()], [r_b, rule(name="a")]) == [slice1(_dev("device-1", TAINT1, TAINT2))]


# --- which gate applies them, per version ----------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "gates", "want"),
    [
        pytest.param("1.33", {}, False, id="1.33 defaults"),
        pytest.param("1.34", {"DRADeviceTaints": True}, True, id="1.34 DRADeviceTaints (v0.34 tracker EnableDeviceTaints)"),
        pytest.param("1.35", {"DRADeviceTaints": True}, False, id="1.35 DRADeviceTaints alone"),
        pytest.param("1.35", {"DRADeviceTaints": True, "DRADeviceTaintRules": True}, True, id="1.35 DRADeviceTaintRules"),
        pytest.param("1.36", {}, False, id="1.36 defaults (DRADeviceTaintRules beta, off)"),
        pytest.param("1.36", {"DRADeviceTaintRules": True}, True, id="1.36 DRADeviceTaintRules"),
    ],
)
def test_taint_rules_apply_per_version(version: str, gates: dict[str, bool], want: bool) -> None:
    v = Version(*map(int, version.split(".")))
    assert taint_rules_apply({**default_feature_gates(v), **gates}, v) is want


# --- through the scheduler -----------------------------------------------------------------------

DRIVER = "gpu.example.com"


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _cluster(*rules: DeviceTaintRule) -> list[Any]:
    return [
        make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj(),
        make_device_class(DRIVER),
        make_slice("n1", DRIVER).devices("gpu-0").obj(),
        *rules,
    ]


def _gpu_rule(effect: str, name: str = "hot") -> DeviceTaintRule:
    return DeviceTaintRule(
        metadata=ObjectMeta(name=name),
        spec=DeviceTaintRuleSpec(
            device_selector=DeviceTaintSelector(driver=DRIVER, device="gpu-0"),
            taint=DeviceTaint(key="example.com/hot", value="yes", effect=effect),
        ),
    )


async def _placed(objs: list[Any], version: str, gates: dict[str, bool], tolerate: bool = False) -> str | None:
    tolerations = [DeviceToleration(key="example.com/hot", operator="Exists")] if tolerate else None
    async with scheduler_for(objs, emulated_version=version, feature_gates=gates) as sim:
        sim.create(make_claim("c").request(DRIVER, name="gpu", tolerations=tolerations).obj())
        sim.create(make_pod("p").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None
        return pod.spec.node_name or None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("version", "gates", "effect", "tolerate", "node"),
    [
        pytest.param("1.36", {"DRADeviceTaintRules": True}, "NoSchedule", False, None, id="1.36 NoSchedule"),
        pytest.param("1.36", {"DRADeviceTaintRules": True}, "NoExecute", False, None, id="1.36 NoExecute"),
        pytest.param("1.36", {"DRADeviceTaintRules": True}, "None", False, "n1", id="1.36 effect None"),
        pytest.param("1.36", {"DRADeviceTaintRules": True}, "NoSchedule", True, "n1", id="1.36 tolerated"),
        pytest.param("1.36", {}, "NoSchedule", False, "n1", id="1.36 gate off (default)"),
        pytest.param("1.35", {"DRADeviceTaints": True}, "NoSchedule", False, "n1", id="1.35 without DRADeviceTaintRules"),
        pytest.param("1.35", {"DRADeviceTaints": True, "DRADeviceTaintRules": True}, "NoSchedule", False, None, id="1.35 both gates"),
        pytest.param("1.35", {"DRADeviceTaintRules": True}, "NoSchedule", False, "n1", id="1.35 rules but no taint check"),
        pytest.param("1.34", {"DRADeviceTaints": True}, "NoSchedule", False, None, id="1.34 DRADeviceTaints"),
        pytest.param("1.34", {}, "NoSchedule", False, "n1", id="1.34 defaults"),
    ],
)
async def test_a_rule_taints_the_device_the_allocator_sees(
    version: str, gates: dict[str, bool], effect: str, tolerate: bool, node: str | None
) -> None:
    assert await _placed(_cluster(_gpu_rule(effect)), version, gates, tolerate) == node


@pytest.mark.anyio
async def test_deleting_the_rule_requeues_the_pod() -> None:
    """The slice tracker reports the untainted slice as a ResourceSlice update, which the
    DynamicResources plugin registered for: the pending pod is tried again and placed."""
    async with scheduler_for(_cluster(_gpu_rule("NoSchedule")), emulated_version="1.36", feature_gates={"DRADeviceTaintRules": True}) as sim:
        sim.create(make_claim("c").request(DRIVER, name="gpu").obj())
        sim.create(make_pod("p").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None and not pod.spec.node_name
        [cond] = [c for c in pod.status.conditions if c.type == "PodScheduled"]
        assert "cannot allocate all claims" in cond.message
        sim.cluster.delete_object("DeviceTaintRule", "", "hot")
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None and pod.spec.node_name == "n1"


@pytest.mark.anyio
async def test_a_rule_added_later_keeps_the_next_pod_off_the_device() -> None:
    async with scheduler_for(_cluster(), emulated_version="1.36", feature_gates={"DRADeviceTaintRules": True}) as sim:
        sim.create(_gpu_rule("NoSchedule"))
        await sim.settle()
        sim.create(make_claim("c").request(DRIVER, name="gpu").obj())
        sim.create(make_pod("p").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        pod = sim.pod("p")
        assert pod is not None and not pod.spec.node_name


# --- 1.33-1.34: deviceClassName and CEL selectors (v0.34.1 applyPatches) --------------------------


def _attr_slice() -> ResourceSlice:
    return make_slice("n1", DRIVER).device("gpu-0", {"big": True}).device("gpu-1", {"big": False}).device("gpu-2").obj()


def _legacy(*classes: Any, version: tuple[int, int] = (1, 34)) -> Any:
    from kubesched.dra import legacy_selectors

    return legacy_selectors({c.metadata.name: c for c in classes}, {}, version)


def _tainted(s: ResourceSlice) -> list[str]:
    return [d.name for d in s.spec.devices if d.taints]


def _class_rule(class_name: str | None = None, *selectors: str) -> DeviceTaintRule:
    from kubesched.api._dra import CELDeviceSelector, DeviceSelector

    sel = DeviceTaintSelector(
        driver=DRIVER, device_class_name=class_name,
        selectors=[DeviceSelector(cel=CELDeviceSelector(expression=e)) for e in selectors],
    )  # fmt: skip
    return DeviceTaintRule(metadata=ObjectMeta(name="r"), spec=DeviceTaintRuleSpec(device_selector=sel, taint=TAINT1))


@pytest.mark.parametrize(
    ("rule_", "classes", "want"),
    [
        pytest.param(lambda: _class_rule("big"), ("big",), ["gpu-0"], id="the class's selectors"),
        pytest.param(lambda: _class_rule("missing"), (), [], id="a class that does not exist: no device"),
        pytest.param(lambda: _class_rule(None, f'device.attributes["{DRIVER}"].big == false'), (), ["gpu-1"], id="the rule's selectors"),
        # gpu-2 has no "big": a runtime error, the device is left alone
        pytest.param(lambda: _class_rule(None, f'!device.attributes["{DRIVER}"].big'), (), ["gpu-1"], id="a CEL runtime error"),
        pytest.param(lambda: _class_rule("big", f'device.attributes["{DRIVER}"].big == false'), ("big",), [], id="class and selectors both"),
    ],
)
def test_tracker_1_34_class_and_selectors(rule_: Any, classes: tuple[str, ...], want: list[str]) -> None:
    cls = [make_device_class(n, f'device.attributes["{DRIVER}"].big') for n in classes]
    assert _tainted(apply_rules(_attr_slice(), [rule_()], _legacy(*cls))) == want


def test_from_1_35_the_class_and_selectors_are_gone() -> None:
    """v1alpha3 of 1.35 has no deviceClassName or selectors: a rule selects by driver, pool,
    device, so this one taints every device of the driver."""
    assert _legacy(version=(1, 35)) is None
    assert _tainted(apply_rules(_attr_slice(), [_class_rule("missing")], None)) == ["gpu-0", "gpu-1", "gpu-2"]


@pytest.mark.anyio
async def test_a_class_selecting_rule_at_1_34() -> None:
    """Through the scheduler at 1.34 with DRADeviceTaints: the rule names class "big"; the big
    device is tainted, the other one is allocated."""
    objs = [
        make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj(),
        make_device_class(DRIVER),
        make_device_class("big", f'device.attributes["{DRIVER}"].big'),
        make_slice("n1", DRIVER).device("gpu-0", {"big": True}).device("gpu-1", {"big": False}).obj(),
        replace(_class_rule("big"), spec=replace(_class_rule("big").spec, taint=DeviceTaint(key="k", effect="NoSchedule"))),
    ]
    async with scheduler_for(objs, emulated_version="1.34", feature_gates={"DRADeviceTaints": True}) as sim:
        sim.create(make_claim("c").request(DRIVER, name="gpu").obj())
        sim.create(make_pod("p").resource_claim("gpu", claim="c").obj())
        await sim.settle()
        claim = sim.cluster.get("ResourceClaim", "default", "c")
        assert [r.device for r in claim.status.allocation.devices.results] == ["gpu-1"]


def test_validation_of_the_1_34_fields() -> None:
    """v1.34 validateDeviceTaintSelector: deviceClassName a DNS subdomain, selectors as a
    class's (at most 32, each CEL)."""
    import yaml

    from kubesched import ConfigError
    from kubesched.scenario._manifests import load_manifests

    def load(sel: dict[str, Any]) -> str:
        doc = {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
               "spec": {"deviceSelector": sel, "taint": {"key": "k", "effect": "NoSchedule"}}}  # fmt: skip
        try:
            load_manifests(["in.yaml"], {"in.yaml": yaml.safe_dump(doc)})
        except ConfigError as e:
            return str(e)
        return ""

    assert load({"deviceClassName": "big", "selectors": [{"cel": {"expression": "true"}}]}) == ""
    assert load({"deviceClassName": "Big_Class"}).startswith(
        'in.yaml: document 1 (DeviceTaintRule r), spec.deviceSelector.deviceClassName: Invalid value: "Big_Class"')
    assert load({"selectors": [{}]}) == "in.yaml: document 1 (DeviceTaintRule r), spec.deviceSelector.selectors[0].cel: Required value"
