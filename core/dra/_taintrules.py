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
tracker ``EnableDeviceTaints``).  Where kubesched chooses: rules are applied in name order
(upstream: the informer's list order, which is not specified); the 1.33/1.34 selector fields
``deviceClassName`` and ``selectors`` (CEL) are not modelled (kubesched's DeviceTaintRule has
the 1.35 fields), so a rule there selects by driver, pool and device only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from kubesched.api._dra import DeviceTaintRule, ResourceSlice


def taint_rules_apply(gates: Mapping[str, bool], version: tuple[int, int]) -> bool:
    """Whether the scheduler's slice tracker applies DeviceTaintRules at ``version``."""
    if tuple(version) >= (1, 35):
        return bool(gates.get("DRADeviceTaintRules", False))
    return bool(gates.get("DRADeviceTaints", False))


def _selects_slice(rule: DeviceTaintRule, s: ResourceSlice) -> bool:
    sel = rule.spec.device_selector
    if sel is None:
        return True
    if sel.driver is not None and sel.driver != s.spec.driver:
        return False
    return sel.pool is None or sel.pool == s.spec.pool.name


def apply_rules(s: ResourceSlice, rules: Sequence[DeviceTaintRule]) -> ResourceSlice:
    """``applyPatches``: ``s`` with the taints of ``rules`` added to the devices they select;
    ``s`` itself when none selects a device (copied only when needed)."""
    devices: list[Any] | None = None
    for rule in rules:
        if not _selects_slice(rule, s):
            continue
        sel = rule.spec.device_selector
        name = sel.device if sel is not None else None
        for i, d in enumerate(s.spec.devices):
            if name is not None and name != d.name:
                continue
            if devices is None:
                devices = list(s.spec.devices)
            current = devices[i]
            devices[i] = replace(current, taints=[*current.taints, rule.spec.taint])
    if devices is None:
        return s
    return replace(s, spec=replace(s.spec, devices=devices))


def touches(rule: DeviceTaintRule, slices: Iterable[ResourceSlice]) -> bool:
    """Whether ``rule`` selects a device of one of ``slices`` (its change then changes what the
    tracker reports: upstream emits a ResourceSlice update for each such slice)."""
    sel = rule.spec.device_selector
    name = sel.device if sel is not None else None
    for s in slices:
        if _selects_slice(rule, s) and (name is None or any(d.name == name for d in s.spec.devices)):
            return True
    return False


class PatchedSlices:
    """The slices with the rules applied, each patched slice kept (the same object) while
    neither it nor the rules change, so that the allocator's per-slice caches keep working."""

    def __init__(self) -> None:
        self._rules_mark: Any = None
        self._rules: list[DeviceTaintRule] = []
        self._by_id: dict[int, tuple[ResourceSlice, ResourceSlice]] = {}

    def of(self, slices: Sequence[ResourceSlice], rules: Mapping[str, DeviceTaintRule], rules_mark: Any) -> tuple[ResourceSlice, ...]:
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
            patched = hit[1] if hit is not None and hit[0] is s else apply_rules(s, self._rules)
            kept[id(s)] = (s, patched)
            out.append(patched)
        self._by_id = kept
        return tuple(out)
