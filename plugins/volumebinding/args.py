"""VolumeBindingArgs: decoding, v1 defaulting and validation.

- ``bindTimeoutSeconds`` (int64, default 600 when absent; 0 stays 0): must not be negative —
  "Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value".
- ``shape`` (a list of ``{utilization, score}``): only with the ``StorageCapacityScoring`` gate
  (alpha, off in v1.33/v1.34).  On, an empty shape defaults to ``[{0, 10}, {100, 0}]`` (prefer
  the node with the most free capacity) and is validated like RequestedToCapacityRatio's
  (``validateFunctionShape``); off, any shape is an error ("unexpected field `shape`, remove it
  or turn on the feature gate StorageCapacityScoring").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework import ConfigError, go_value

from ..noderesources._args import MAX_CUSTOM_PRIORITY_SCORE, validate_function_shape

STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
DEFAULT_SHAPE: tuple[tuple[int, int], ...] = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))
"""``SetDefaults_VolumeBindingArgs`` with StorageCapacityScoring on."""

_FIELDS = ("bindTimeoutSeconds", "shape", "apiVersion", "kind")


@dataclass
class VolumeBindingArgs:
    """The decoded args; ``shape`` None when the config has none."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: list[tuple[int, int]] | None = None


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"Invalid value: {go_value(str(value))}: must be an integer", field=path)
    return value


def parse_args(args: Mapping[str, Any] | None) -> VolumeBindingArgs:
    """Decode and default the raw ``pluginConfig`` args and validate ``bindTimeoutSeconds``
    (the shape's validation depends on the gate: :func:`validate_shape`)."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ConfigError(f"Invalid value: {go_value(str(args))}: must be a mapping")
    for key in args:
        if key not in _FIELDS:
            raise ConfigError(f'strict decoding error: unknown field "{key}"')
    out = VolumeBindingArgs()
    raw_timeout = args.get("bindTimeoutSeconds")
    if raw_timeout is not None:
        out.bind_timeout_seconds = _int(raw_timeout, "bindTimeoutSeconds")
    if out.bind_timeout_seconds < 0:
        raise ConfigError(
            f"Invalid value: {out.bind_timeout_seconds}: invalid BindTimeoutSeconds, should not be a negative value",
            field="bindTimeoutSeconds",
        )
    raw_shape = args.get("shape")
    if raw_shape is not None:
        if not isinstance(raw_shape, (list, tuple)):
            raise ConfigError(
                f"Invalid value: {go_value(str(raw_shape))}: must be a list", field="shape"
            )
        shape: list[tuple[int, int]] = []
        for i, point in enumerate(raw_shape):
            if not isinstance(point, Mapping):
                raise ConfigError(
                    f"Invalid value: {go_value(str(point))}: must be a mapping", field=f"shape[{i}]"
                )
            for key in point:
                if key not in ("utilization", "score"):
                    raise ConfigError(f'strict decoding error: unknown field "shape[{i}].{key}"')
            shape.append(
                (
                    _int(point.get("utilization", 0), f"shape[{i}].utilization"),
                    _int(point.get("score", 0), f"shape[{i}].score"),
                )
            )
        out.shape = shape
    return out


def go_shape(shape: Sequence[tuple[int, int]]) -> str:
    """``%#v`` of a ``[]config.UtilizationShapePoint``."""
    points = ", ".join(
        f"config.UtilizationShapePoint{{Utilization:{u}, Score:{s}}}" for u, s in shape
    )
    return f"[]config.UtilizationShapePoint{{{points}}}"


def validate_shape(
    args: VolumeBindingArgs, storage_capacity_scoring: bool
) -> list[tuple[int, int]] | None:
    """``ValidateVolumeBindingArgsWithOptions``' shape part, after v1 defaulting: the shape the
    scorer uses (None with the gate off); raises ConfigError."""
    if not storage_capacity_scoring:
        if args.shape is not None:
            raise ConfigError(
                f"Invalid value: {go_shape(args.shape)}: unexpected field `shape`, "
                "remove it or turn on the feature gate StorageCapacityScoring",
                field="shape",
            )
        return None
    shape = list(args.shape) if args.shape else list(DEFAULT_SHAPE)
    validate_function_shape(shape, "shape")
    return shape


__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "DEFAULT_SHAPE",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "STORAGE_CAPACITY_SCORING",
    "VolumeBindingArgs",
    "go_shape",
    "parse_args",
    "validate_shape",
]
