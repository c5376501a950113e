"""NodeResourcesFitArgs / NodeResourcesBalancedAllocationArgs: defaulting and validation.

Args arrive as the raw ``pluginConfig`` mapping (camelCase, v1 schema).  ``v1`` defaulting is
applied first (no strategy → LeastAllocated on cpu:1, memory:1; no resources → cpu:1, memory:1; a
weight of 0 or unset → 1), then upstream's validation, whose errors are raised as
:class:`~kubesched.ConfigError` with upstream's field path and message (the first error wins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework import ConfigError, go_value, qualified_name_errors

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SUPPORTED_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass
class ResourceSpec:
    name: str
    weight: int = 1


@dataclass
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = field(default_factory=list)
    shape: list[tuple[int, int]] | None = None  # (utilization, score) of requestedToCapacityRatio


@dataclass
class FitArgs:
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"Invalid value: {go_value(str(value))}: must be a mapping", field=path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"Invalid value: {go_value(str(value))}: must be a list", field=path)
    return list(value)


def _int(value: Any, path: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"Invalid value: {go_value(str(value))}: must be an integer", field=path)
    return value


def _resources(raw: Any, path: str) -> list[ResourceSpec]:
    out: list[ResourceSpec] = []
    for i, item in enumerate(_list(raw, path)):
        m = _mapping(item, f"{path}[{i}]")
        out.append(ResourceSpec(str(m.get("name", "")), _int(m.get("weight"), f"{path}[{i}].weight")))
    return out


def _apply_weight_defaults(resources: list[ResourceSpec]) -> None:
    for r in resources:
        if r.weight == 0:
            r.weight = 1


def parse_fit_args(args: Mapping[str, Any] | None) -> FitArgs:
    """Decode, default (v1) and validate NodeResourcesFitArgs."""
    raw = _mapping(args, "")
    for key in raw:
        if key not in ("ignoredResources", "ignoredResourceGroups", "scoringStrategy") + ("apiVersion", "kind"):
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
    out = FitArgs(
        ignored_resources=[str(x) for x in _list(raw.get("ignoredResources"), "ignoredResources")],
        ignored_resource_groups=[
            str(x) for x in _list(raw.get("ignoredResourceGroups"), "ignoredResourceGroups")
        ],
    )
    ss_raw = raw.get("scoringStrategy")
    if ss_raw is None:
        out.scoring_strategy = ScoringStrategy(LEAST_ALLOCATED, default_resources())
    else:
        ss = _mapping(ss_raw, "scoringStrategy")
        for key in ss:
            if key not in ("type", "resources", "requestedToCapacityRatio"):
                raise ConfigError(f'strict decoding error: unknown field "scoringStrategy.{key}"')
        strategy = ScoringStrategy(
            type=str(ss.get("type", "") or ""),
            resources=_resources(ss.get("resources"), "scoringStrategy.resources"),
        )
        rtcr = ss.get("requestedToCapacityRatio")
        if rtcr is not None:
            points = _list(_mapping(rtcr, "scoringStrategy.requestedToCapacityRatio").get("shape"), "scoringStrategy.shape")
            strategy.shape = []
            for i, pt in enumerate(points):
                m = _mapping(pt, f"scoringStrategy.shape[{i}]")
                strategy.shape.append(
                    (
                        _int(m.get("utilization"), f"scoringStrategy.shape[{i}].utilization"),
                        _int(m.get("score"), f"scoringStrategy.shape[{i}].score"),
                    )
                )
        if not strategy.resources:
            strategy.resources = default_resources()
        out.scoring_strategy = strategy
    _apply_weight_defaults(out.scoring_strategy.resources)
    validate_fit_args(out)
    return out


def validate_fit_args(args: FitArgs) -> None:
    """``ValidateNodeResourcesFitArgs`` on already-defaulted args; raises the first error."""
    for i, res in enumerate(args.ignored_resources):
        errs = qualified_name_errors(res)
        if errs:
            raise ConfigError(f"Invalid value: {go_value(res)}: {errs[0]}", field=f"ignoredResources[{i}]")
    for i, group in enumerate(args.ignored_resource_groups):
        if "/" in group:
            raise ConfigError(
                f"Invalid value: {go_value(group)}: resource group name can't contain '/'",
                field=f"ignoredResourceGroups[{i}]",
            )
        errs = qualified_name_errors(group)
        if errs:
            raise ConfigError(f"Invalid value: {go_value(group)}: {errs[0]}", field=f"ignoredResourceGroups[{i}]")
    ss = args.scoring_strategy
    if ss.type not in SUPPORTED_STRATEGIES:
        supported = ", ".join(go_value(s) for s in sorted(SUPPORTED_STRATEGIES))
        raise ConfigError(
            f"Unsupported value: {go_value(ss.type)}: supported values: {supported}",
            field="scoringStrategy.type",
        )
    validate_resources(ss.resources, "scoringStrategy.resources")
    if ss.shape is not None:
        validate_function_shape(ss.shape, "scoringStrategy.shape")
    elif ss.type == REQUESTED_TO_CAPACITY_RATIO:
        validate_function_shape([], "scoringStrategy.shape")


def validate_resources(resources: Sequence[ResourceSpec], path: str) -> None:
    """``validateResources``: every weight in (0, 100]."""
    for i, r in enumerate(resources):
        if r.weight <= 0 or r.weight > 100:
            raise ConfigError(
                f"Invalid value: {r.weight}: resource weight of {r.name} not in valid range (0, 100]",
                field=f"{path}[{i}].weight",
            )


def validate_function_shape(shape: Sequence[tuple[int, int]], path: str) -> None:
    """``validateFunctionShape``: sorted utilizations in [0, 100], scores in [0, 10]."""
    if not shape:
        raise ConfigError("Required value: at least one point must be specified", field=path)
    for i in range(1, len(shape)):
        if shape[i - 1][0] >= shape[i][0]:
            raise ConfigError(
                f"Invalid value: {shape[i][0]}: values must be sorted in increasing order",
                field=f"{path}[{i}].utilization",
            )
    for i, (u, s) in enumerate(shape):
        if u < 0 or u > 100:
            raise ConfigError(f"Invalid value: {u}: not in valid range [0, 100]", field=f"{path}[{i}].utilization")
        if s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE:
            raise ConfigError(
                f"Invalid value: {s}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                field=f"{path}[{i}].score",
            )


def parse_balanced_allocation_args(args: Mapping[str, Any] | None) -> list[ResourceSpec]:
    """Decode, default (v1) and validate NodeResourcesBalancedAllocationArgs → its resources."""
    raw = _mapping(args, "")
    for key in raw:
        if key not in ("resources",) + ("apiVersion", "kind"):
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
    resources = _resources(raw.get("resources"), "resources")
    if not resources:
        resources = default_resources()
    _apply_weight_defaults(resources)
    validate_balanced_allocation_resources(resources)
    return resources


def validate_balanced_allocation_resources(resources: Sequence[ResourceSpec]) -> None:
    """``ValidateNodeResourcesBalancedAllocationArgs``: unique names, every weight exactly 1."""
    seen: set[str] = set()
    for i, r in enumerate(resources):
        if r.name in seen:
            raise ConfigError(f"Duplicate value: {go_value(r.name)}", field=f"resources[{i}].name")
        seen.add(r.name)
        if r.weight != 1:
            raise ConfigError(f"Invalid value: {r.weight}: must be 1", field=f"resources[{i}].weight")


__all__ = [
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "FitArgs",
    "ResourceSpec",
    "ScoringStrategy",
    "parse_balanced_allocation_args",
    "parse_fit_args",
    "validate_balanced_allocation_resources",
    "validate_fit_args",
    "validate_function_shape",
    "validate_resources",
]
