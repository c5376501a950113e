"""The ``extenders`` section of a KubeSchedulerConfiguration: one :class:`ExtenderConfig` per
entry, decoded strictly and checked as upstream's ``validateExtenders``.

The leaf below the configuration (``_config`` validates the section with it) and the HTTP
extenders (``_extender`` builds one per entry, and re-exports these names).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._helpers import is_extended_resource_name, qualified_name_errors

DEFAULT_EXTENDER_TIMEOUT = 5.0  # seconds: upstream's DefaultExtenderTimeout

_FIELDS = {
    "urlPrefix",
    "filterVerb",
    "preemptVerb",
    "prioritizeVerb",
    "weight",
    "bindVerb",
    "enableHTTPS",
    "tlsConfig",
    "httpTimeout",
    "nodeCacheCapable",
    "managedResources",
    "ignorable",
}
_TLS_FIELDS = {
    "insecure",
    "serverName",
    "certFile",
    "keyFile",
    "caFile",
    "certData",
    "keyData",
    "caData",
}
_STRINGS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb")
_BOOLS = ("enableHTTPS", "nodeCacheCapable", "ignorable")


@dataclass(frozen=True)
class ExtenderConfig:
    """One validated ``extenders[i]`` entry of a KubeSchedulerConfiguration."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: Mapping[str, Any] = field(default_factory=dict)
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[str, ...] = ()
    ignored_by_scheduler: tuple[str, ...] = ()
    ignorable: bool = False


def _invalid(fld: str, value: Any, msg: str) -> ConfigError:
    shown = (
        f'"{value}"'
        if isinstance(value, str)
        else str(value).lower()
        if isinstance(value, bool)
        else value
    )
    return ConfigError(f"Invalid value: {shown}: {msg}", field=fld)


def _check_type(raw: Mapping[str, Any], key: str, path: str, kind: type, what: str) -> None:
    v = raw.get(key)
    if v is None:
        return
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise _invalid(
            f"{path}.{key}",
            v if isinstance(v, (str, int, float, bool)) else repr(v),
            f"must be {what}",
        )


def parse_extender_config(raw: Any, path: str) -> ExtenderConfig:
    """Decode and check the types of one entry (the cross-entry rules are in
    :func:`parse_extenders`)."""
    from kubesched.api._durations import parse_duration

    if not isinstance(raw, Mapping):
        raise ConfigError("Invalid value: an extender must be a mapping", field=path)
    for k in raw:
        if k not in _FIELDS:
            raise ConfigError(f'strict decoding error: unknown field "{path}.{k}"')
    for key in _STRINGS:
        _check_type(raw, key, path, str, "a string")
    for key in _BOOLS:
        _check_type(raw, key, path, bool, "a boolean")
    _check_type(raw, "weight", path, int, "an integer")
    url = raw.get("urlPrefix") or ""
    if not url:
        raise ConfigError(
            "Required value: the extender's URL prefix is required", field=f"{path}.urlPrefix"
        )
    if raw.get("nodeCacheCapable"):
        raise ConfigError(
            "Unsupported value: true: kubesched keeps no node cache for extenders; "
            "only nodeCacheCapable: false is supported (full Node objects are sent)",
            field=f"{path}.nodeCacheCapable",
        )
    tls = raw.get("tlsConfig") or {}
    if not isinstance(tls, Mapping):
        raise ConfigError("Invalid value: must be a mapping", field=f"{path}.tlsConfig")
    for k in tls:
        if k not in _TLS_FIELDS:
            raise ConfigError(f'strict decoding error: unknown field "{path}.tlsConfig.{k}"')
    timeout = DEFAULT_EXTENDER_TIMEOUT
    rt = raw.get("httpTimeout")
    if rt is not None and rt != "":
        try:
            timeout = parse_duration(str(rt))
        except ValueError as e:
            raise _invalid(f"{path}.httpTimeout", str(rt), str(e)) from None
        if timeout == 0:  # NewHTTPExtender: a zero timeout means the default
            timeout = DEFAULT_EXTENDER_TIMEOUT
        elif timeout < 0:
            raise _invalid(f"{path}.httpTimeout", str(rt), "must be greater than or equal to 0")
    managed: list[str] = []
    ignored: list[str] = []
    mr = raw.get("managedResources") or []
    if not isinstance(mr, list):
        raise ConfigError("Invalid value: must be a list", field=f"{path}.managedResources")
    for j, item in enumerate(mr):
        mpath = f"{path}.managedResources[{j}]"
        if not isinstance(item, Mapping):
            raise ConfigError("Invalid value: must be a mapping", field=mpath)
        for k in item:
            if k not in ("name", "ignoredByScheduler"):
                raise ConfigError(f'strict decoding error: unknown field "{mpath}.{k}"')
        _check_type(item, "name", mpath, str, "a string")
        _check_type(item, "ignoredByScheduler", mpath, bool, "a boolean")
        name = item.get("name") or ""
        managed.append(name)
        if item.get("ignoredByScheduler"):
            ignored.append(name)
    return ExtenderConfig(
        url_prefix=url,
        filter_verb=raw.get("filterVerb") or "",
        preempt_verb=raw.get("preemptVerb") or "",
        prioritize_verb=raw.get("prioritizeVerb") or "",
        bind_verb=raw.get("bindVerb") or "",
        weight=raw.get("weight") or 0,
        enable_https=bool(raw.get("enableHTTPS")),
        tls_config=dict(tls),
        http_timeout=timeout,
        node_cache_capable=False,
        managed_resources=tuple(managed),
        ignored_by_scheduler=tuple(ignored),
        ignorable=bool(raw.get("ignorable")),
    )


def parse_extenders(raw: Any, path: str = "extenders") -> list[ExtenderConfig]:
    """``validateExtenders`` over the decoded ``extenders`` list; ConfigError names the field."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConfigError("Invalid value: must be a list", field=path)
    out: list[ExtenderConfig] = []
    binders = 0
    seen_resources: set[str] = set()
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        cfg = parse_extender_config(item, p)
        if cfg.prioritize_verb and cfg.weight <= 0:
            raise _invalid(f"{p}.weight", cfg.weight, "must have a positive weight applied to it")
        if cfg.bind_verb:
            binders += 1
        for j, name in enumerate(cfg.managed_resources):
            fld = f"{p}.managedResources[{j}].name"
            errs = qualified_name_errors(name)
            if errs:
                raise _invalid(fld, name, errs[0])
            if not is_extended_resource_name(name):
                raise _invalid(fld, name, "is an invalid extended resource name")
            if name in seen_resources:
                raise _invalid(fld, name, "duplicate extender managed resource name")
            seen_resources.add(name)
        out.append(cfg)
    if binders > 1:
        raise _invalid(
            path,
            f"found {binders} extenders implementing bind",
            "only one extender can implement bind",
        )
    return out


def ignored_extended_resources(configs: Sequence[ExtenderConfig]) -> list[str]:
    """The managed resources marked ``ignoredByScheduler``, in config order (``buildExtenders``)."""
    return [r for c in configs for r in c.ignored_by_scheduler]


__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "ExtenderConfig",
    "ignored_extended_resources",
    "parse_extender_config",
    "parse_extenders",
]
