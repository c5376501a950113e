"""Whether a device is selected by a class's or a request's CEL selectors.

k8s.io/dynamic-resource-allocation v0.36.2 structured/internal/incubating/allocator_incubating.go
``selectorsMatch``, with its error texts ("class X: selector #i: CEL runtime error: ...").  The
``device`` value of each device is built once and every verdict kept: for a stored slice
(with uid and resourceVersion) across cycles under the slice's version, for one never stored
under the object itself for as long as its :class:`Selection` lives.
"""

from __future__ import annotations

from typing import Any

from kubesched.api._dra import Device, DeviceClass, DeviceSelector, ResourceSlice
from kubesched.dra._cel import (
    CelCompileError,
    CelDevice,
    CelFeatures,
    CelRuntimeError,
    CompiledSelector,
    compile_selector,
)
from kubesched.dra._pools import slice_key
from kubesched.dra._results import AllocationError

_STORED_DEVICES: dict[tuple[Any, ...], CelDevice] = {}
_FEATURE_IDS: dict[CelFeatures, int] = {}
_LIMIT = 200_000


class Selection:
    """CEL selection for one allocator (one scheduling cycle)."""

    def __init__(self, features: CelFeatures) -> None:
        self.features = features
        self._fkey = _FEATURE_IDS.setdefault(features, len(_FEATURE_IDS))
        self._devices: dict[tuple[Any, ...], CelDevice] = {}
        self._verdicts: dict[tuple[Any, ...], bool] = {}
        self._compiled: dict[str, CompiledSelector | CelCompileError] = {}

    def matches(
        self,
        where: str,
        s: ResourceSlice,
        d: Device,
        selectors: list[DeviceSelector],
    ) -> bool:
        """All ``selectors`` select ``d``; ``where`` names the class or claim in errors."""
        if not selectors:
            return True
        stored = bool(s.metadata.uid and s.metadata.resource_version)
        if stored:
            key: tuple[Any, ...] = (*slice_key(s), d.name, self._fkey)
            devices = _STORED_DEVICES
            if len(devices) > _LIMIT:
                devices.clear()
        else:
            key = (id(s), d.name)
            devices = self._devices
        device = devices.get(key)
        if device is None:
            device = devices[key] = CelDevice(
                s.spec.driver, d.attributes, d.capacity, self.features, d.allow_multiple_allocations
            )
        for i, sel in enumerate(selectors):
            if sel.cel is None:
                continue  # refused before the search (validateDeviceRequest)
            compiled = self._compiled.get(sel.cel.expression)
            if compiled is None:
                try:
                    compiled = compile_selector(sel.cel.expression, self.features)
                except CelCompileError as err:
                    compiled = err
                self._compiled[sel.cel.expression] = compiled
            if isinstance(compiled, CelCompileError):
                raise AllocationError(
                    f"{where}: selector #{i}: CEL compile error: {compiled}"
                ) from None
            try:
                if stored:
                    ok = compiled.matches(device, cache_key=key)
                else:
                    vkey = (id(s), d.name, sel.cel.expression)
                    hit = self._verdicts.get(vkey)
                    if hit is None:
                        hit = self._verdicts[vkey] = compiled.matches(device)
                    ok = hit
            except CelRuntimeError as err:
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {err}") from None
            if not ok:
                return False
        return True


def class_where(cls: DeviceClass) -> str:
    return f"class {cls.metadata.name}"
