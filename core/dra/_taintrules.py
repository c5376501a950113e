"""DeviceTaintRules applied to ResourceSlices: the slices the DRA allocator sees.

k8s.io/dynamic-resource-allocation ``resourceslice/tracker`` (v0.35.4, the same in v0.36.2)
``applyPatches``: each rule whose ``deviceSelector`` matches the slice's driver and pool (a
field left out matches any) appends its taint to each device of the slice it names (or to every
device without ``device``), after the taints the driver published.  The scheduler lists the
slices patched so (``ListWithDeviceTaintRules``) and the allocator's taint check
(``taintPreventsAllocation``, with DRADeviceTaints) then skips a device whose NoSchedule or
NoExecute taint the request does not tolerate.

When rules apply (:func:`taint_rules_apply`): from 1.35 with the DRADeviceTaintRules gate
(v1.35.4 scheduler.go ``EnableDeviceTaintRules``; alpha in 1.35, beta but off in 1.36, its
API ``v1beta2`` being off by default), in 1.33 and 1.34 with DRADeviceTaints (v0.34.x
tracker ``EnableDeviceTaints``).  In 1.33 and 1.34 (v0.34.1 ``applyPatches``) a rule's
selector also has ``deviceClassName`` (the device must match that class's CEL selectors; a class
that does not exist makes the rule apply to nothing) and ``selectors`` of its own; a CEL runtime
error leaves the device untainted (upstream also records a ``CELRuntimeError`` event on the rule
for its own selectors: not modelled).  From 1.35 those fields are gone and ignored.  Where
kubesched chooses: rules are applied in name order (upstream: the informer's list order, which
is not specified); a selector that does not compile (upstream: the slice is not re-patched and
the error is logged) makes the rule apply to nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from kubesched.api._dra import Device, DeviceClass, DeviceTaintRule, ResourceSlice
from kubesched.dra._cel import (
    CelCompileError,
    CelDevice,
    CelFeatures,
    CelRuntimeError,
    compile_selector,
)


def taint_rules_apply(gates: Mapping[str, bool], version: tuple[int, int]) -> bool:
    """Whether the scheduler's slice tracker applies DeviceTaintRules at ``version``."""
    if tuple(version) >= (1, 35):
        return bool(gates.get("DRADeviceTaintRules", False))
    return bool(gates.get("DRADeviceTaints", False))


def legacy_selectors(
    classes: Mapping[str, DeviceClass], gates: Mapping[str, bool], version: tuple[int, int]
) -> ClassSelectors | None:
    """The 1.33-1.34 class and CEL selectors over ``classes`` (a live table), None from 1.35."""
    if tuple(version) >= (1, 35):
        return None
    from kubesched.config._versions import Version

    features = CelFeatures(version=Version(*version), consumable_capacity=bool(gates.get("DRAConsumableCapacity", False)))
    return ClassSelectors(classes, features)


def _selects_slice(rule: DeviceTaintRule, s: ResourceSlice) -> bool:
    sel = rule.spec.device_selector
    if sel is None:
        return True
    if sel.driver is not None and sel.driver != s.spec.driver:
        return False
    return sel.pool is None or sel.pool == s.spec.pool.name


class ClassSelectors:
    """1.33-1.34: a rule's ``deviceClassName`` and ``selectors`` (CEL), over the cluster's
    DeviceClasses, in the CEL environment of the version (the tracker's ``cel.NewCache``)."""

    def __init__(self, classes: Mapping[str, DeviceClass], features: CelFeatures) -> None:
        self.classes = classes
        self.features = features

    def expressions(self, rule: DeviceTaintRule) -> list[str] | None:
        """The CEL expressions a device must match for ``rule`` (class first); None when the
        rule applies to nothing (its class does not exist)."""
        sel = rule.spec.device_selector
        if sel is None:
            return []
        out: list[str] = []
        if sel.device_class_name is not None:
            cls = self.classes.get(sel.device_class_name)
            if cls is None:
                return None  # "DeviceTaintRule does not apply, DeviceClass does not exist"
            out += [x.cel.expression for x in cls.spec.selectors if x.cel is not None]
        out += [x.cel.expression for x in sel.selectors if x.cel is not None]
        return out

    def matches(self, s: ResourceSlice, d: Device, expressions: list[str]) -> bool:
        device = CelDevice(s.spec.driver, d.attributes, d.capacity, self.features, d.allow_multiple_allocations)
        for expression in expressions:
            try:
                if not compile_selector(expression, self.features).matches(device):
                    return False
            except (CelCompileError, CelRuntimeError):
                return False
        return True


def apply_rules(s: ResourceSlice, rules: Sequence[DeviceTaintRule], legacy: ClassSelectors | None = None) -> ResourceSlice:
    """``applyPatches``: ``s`` with the taints of ``rules`` added to the devices they select;
    ``s`` itself when none selects a device (copied only when needed).  ``legacy``: the 1.33-1.34
    class and CEL selectors (None from 1.35, where the selector has no such fields)."""
    devices: list[Any] | None = None
    for rule in rules:
        if not _selects_slice(rule, s):
            continue
        sel = rule.spec.device_selector
        name = sel.device if sel is not None else None
        expressions = legacy.expressions(rule) if legacy is not None else []
        if expressions is None:
            continue
        for i, d in enumerate(s.spec.devices):
            if name is not None and name != d.name:
                continue
            if expressions and legacy is not None and not legacy.matches(s, d, expressions):
                continue
            if devices is None:
                devices = list(s.spec.devices)
            current = devices[i]
            devices[i] = replace(current, taints=[*current.taints, rule.spec.taint])
    if devices is None:
        return s
    return replace(s, spec=replace(s.spec, devices=devices))


class PatchedSlices:
    """The slices with the rules applied, each patched slice kept (the same object) while
    neither it nor the rules change, so that the allocator's per-slice caches keep working."""

    def __init__(self) -> None:
        self._rules_mark: Any = None
        self._rules: list[DeviceTaintRule] = []
        self._by_id: dict[int, tuple[ResourceSlice, ResourceSlice]] = {}

    def of(
        self,
        slices: Sequence[ResourceSlice],
        rules: Mapping[str, DeviceTaintRule],
        rules_mark: Any,
        legacy: ClassSelectors | None = None,
    ) -> tuple[ResourceSlice, ...]:
        """The patched ``slices``; ``rules_mark`` names the rules' (and, with ``legacy``, the
        classes') state: None when unknown (everything is patched again)."""
        if rules_mark is None or rules_mark != self._rules_mark:
            self._rules = [rules[n] for n in sorted(rules)]
            self._rules_mark = rules_mark
            self._by_id = {}
        if not self._rules:
            return tuple(slices)
        out = []
        kept: dict[int, tuple[ResourceSlice, ResourceSlice]] = {}
        for s in slices:
            hit = self._by_id.get(id(s))
            patched = hit[1] if hit is not None and hit[0] is s else apply_rules(s, self._rules, legacy)
            kept[id(s)] = (s, patched)
            out.append(patched)
        self._by_id = kept
        return tuple(out)
