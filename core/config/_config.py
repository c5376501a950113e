"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): defaults, merging, validation.

The default profile is upstream's (``pkg/scheduler/apis/config/v1/default_plugins.go``): every
default plugin under ``multiPoint`` with its score weight; a user's ``multiPoint`` set is merged
into it as upstream's ``mergePluginSet`` does (a re-configured default keeps its place, disabled
ones go, new ones are appended), and the per-extension-point sets are expanded against it by the
framework (``expandMultiPointPlugins``).  Validation errors name the field as upstream does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched._errors import ConfigError
from kubesched.config._extender_config import parse_extenders
from kubesched.config._versions import (
    DEFAULT_VERSION,
    Version,
    default_feature_gates,
)
from kubesched.config._versions import parse_feature_gates as _parse_feature_gates
from kubesched.hookspecs import EXTENSION_POINTS

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# upstream's default MultiPoint set, in order, with score weights, as of v1.31
# (v1.31.8 … v1.35.4 pkg/scheduler/apis/config/v1/default_plugins.go getDefaultPlugins)
UPSTREAM_DEFAULT_MULTIPOINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)
# v1.30.6 default_plugins.go has the in-tree volume-limit plugins between VolumeRestrictions and
# NodeVolumeLimits; v1.31 removed them (and refuses them: validation.go invalidPluginsByVersion).
# kubesched does not implement them: with CSI migration GA (locked) for their volume types, their
# Filter passes every pod (v1.30.6 nodevolumelimits/non_csi.go: a migrated plugin is skipped).
V1_30_VOLUME_LIMIT_PLUGINS = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")

# upstream's other in-tree plugins: a pluginConfig entry for one of them is accepted and, as
# upstream does for a plugin no extension point enables, not used
UPSTREAM_OTHER_PLUGINS = frozenset({"DynamicResources"})
# plugins removed from kubescheduler.config.k8s.io/v1 (validation.go invalidPluginsByVersion,
# from v1.31; v1.30.6's list is empty)
INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def invalid_plugins(version: Version) -> tuple[str, ...]:
    """The plugin names ``kubescheduler.config.k8s.io/v1`` refuses at ``version``."""
    return INVALID_PLUGINS if version >= (1, 31) else ()


# ``--feature-gates``: the gates kubesched knows, with their defaults at the default emulated
# version (kubesched.config._versions holds them per version).
DEFAULT_FEATURE_GATES: dict[str, bool] = default_feature_gates(DEFAULT_VERSION)


@dataclass
class ProfileConfig:
    """One resolved profile: the merged multiPoint set and the per-point sets."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    multi_point: list[tuple[str, int]] = field(default_factory=list)
    enabled: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    disabled: dict[str, set[str]] = field(default_factory=dict)
    plugin_args: dict[str, Any] = field(default_factory=dict)
    arg_paths: dict[str, str] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


@dataclass
class SchedulerConfig:
    """A validated KubeSchedulerConfiguration."""

    profiles: list[ProfileConfig] = field(default_factory=lambda: [default_profile()])
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    extenders: list[dict[str, Any]] = field(default_factory=list)
    feature_gates: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_FEATURE_GATES))
    emulated_version: Version = DEFAULT_VERSION
    """The Kubernetes minor emulated (``--emulated-version``); ``feature_gates`` hold its gates."""
    warnings: list[str] = field(default_factory=list)
    """What a user should be told about the configuration (e.g. plugins left out), one line each."""


def default_multi_point(
    registry: Mapping[str, Any] | None = None,
    version: Version = DEFAULT_VERSION,
    feature_gates: Mapping[str, bool] | None = None,
) -> list[tuple[str, int]]:
    """Upstream's default multiPoint set at ``version`` with ``feature_gates`` (default: that
    version's defaults), restricted to the plugins kubesched has.

    ``applyFeatureGates`` (v1.34.7, v1.35.4 default_plugins.go): with DynamicResourceAllocation on,
    DynamicResources comes right before DefaultPreemption (so that its PostFilter runs first),
    with no weight before v1.35 and weight 2 from v1.35 (v1.35.4 ``{Name: DynamicResources,
    Weight: ptr.To[int32](2)}``).  With GangScheduling on (it exists from v1.35), GangScheduling
    comes last (``applyGangScheduling`` appends it to multiPoint).  With
    TopologyAwareWorkloadScheduling on (1.36), TopologyPlacement and PodGroupPodsCount follow (where
    upstream adds them was not read at the tag: their place in multiPoint matters only among the
    placement plugins, where they are the only ones besides NodeResourcesFit).
    """
    if registry is None:
        from kubesched.plugins import IN_TREE

        registry = IN_TREE
    gates = default_feature_gates(version) if feature_gates is None else feature_gates
    out = list(UPSTREAM_DEFAULT_MULTIPOINT)
    if gates.get("DynamicResourceAllocation", False):
        at = next(i for i, (n, _) in enumerate(out) if n == "DefaultPreemption")
        out.insert(at, ("DynamicResources", 2 if version >= (1, 35) else 0))
    if gates.get("NodeDeclaredFeatures", False):
        # applyFeatureGates (1.35 on) appends NodeDeclaredFeatures to the default profile (before
        # GangScheduling, which applyGangScheduling appends last; their relative order was not read at a tag)
        out.append(("NodeDeclaredFeatures", 0))
    if gates.get("GangScheduling", False) and version >= (1, 35):
        out.append(("GangScheduling", 0))
    if gates.get("TopologyAwareWorkloadScheduling", False) and version >= (1, 36):
        # the placement plugins of 1.36 (kubernetes.io "Topology-Aware Workload Scheduling":
        # TopologyPlacement generates, NodeResourcesFit and PodGroupPodsCount score, weights 1);
        # NodeResourcesFit, already in the set, scores placements through the multiPoint expansion
        out += [("TopologyPlacement", 0), ("PodGroupPodsCount", 0)]
    return [(n, w) for n, w in out if n in registry]


def default_profile(
    name: str = DEFAULT_SCHEDULER_NAME,
    version: Version = DEFAULT_VERSION,
    feature_gates: Mapping[str, bool] | None = None,
) -> ProfileConfig:
    """The default profile: upstream's multiPoint set at ``version`` (of the plugins kubesched has)."""
    return ProfileConfig(scheduler_name=name, multi_point=default_multi_point(None, version, feature_gates))


def _err(fld: str, msg: str) -> ConfigError:
    return ConfigError(msg, field=fld)


def _unknown_field(fld: str) -> ConfigError:
    return ConfigError(f'strict decoding error: unknown field "{fld}"')


def _invalid_in_v1(fld: str, name: str) -> ConfigError:
    return _err(
        fld,
        f'Invalid value: "{name}": was invalid in version "{API_VERSION}" '
        f'(KubeSchedulerConfiguration is version "{API_VERSION}")',
    )


def _plugin_list(raw: Any, fld: str) -> list[tuple[str, int]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _err(fld, f"Invalid value: {raw!r}: must be a list of plugins")
    out: list[tuple[str, int]] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
            raise _err(f"{fld}[{i}].name", "Required value: plugin name is required")
        for k in item:
            if k not in ("name", "weight"):
                raise _unknown_field(f"{fld}[{i}].{k}")
        weight = item.get("weight", 0)
        if weight is None:
            weight = 0
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise _err(f"{fld}[{i}].weight", f"Invalid value: {weight!r}: must be an integer")
        if not -(2**31) <= weight < 2**31:  # Plugin.Weight is an *int32: nothing larger decodes
            raise _err(f"{fld}[{i}].weight", f"Invalid value: {weight}: out of the int32 range")
        if weight < 0:
            raise _err(f"{fld}[{i}].weight", f"Invalid value: {weight}: weight must be non-negative")
        out.append((item["name"], weight))
    return out


def merge_plugin_set(
    default: list[tuple[str, int]], enabled: list[tuple[str, int]], disabled: set[str]
) -> list[tuple[str, int]]:
    """``mergePluginSet``: the default set with the user's enabled / disabled plugins merged in."""
    custom = {name: (i, (name, w)) for i, (name, w) in enumerate(enabled)}
    replaced: set[int] = set()
    out: list[tuple[str, int]] = []
    if "*" not in disabled:
        for name, w in default:
            if name in disabled:
                continue
            if name in custom:
                idx, plugin = custom[name]
                replaced.add(idx)
                out.append(plugin)
            else:
                out.append((name, w))
    out.extend(p for i, p in enumerate(enabled) if i not in replaced)
    return out


_TOP_FIELDS = {
    "apiVersion",
    "kind",
    "parallelism",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "leaderElection",
    "clientConnection",
    "healthzBindAddress",
    "metricsBindAddress",
    "enableProfiling",
    "enableContentionProfiling",
    "delayCacheUntilActive",
}
# componentbaseconfig's LeaderElectionConfiguration and ClientConnectionConfiguration fields
# (v1), decoded strictly as kube-scheduler decodes its configuration
_SECTION_FIELDS = {
    "leaderElection": {
        "leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
        "resourceName", "resourceNamespace",
    },
    "clientConnection": {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"},
}
NOT_IMPLEMENTED_PLUGINS = dict.fromkeys(
    V1_30_VOLUME_LIMIT_PLUGINS,
    "a v1.30 in-tree volume-limit plugin; with CSI migration (GA) its Filter passes every pod",
)
"""Upstream plugins a profile may enable (upstream's own configuration dump does) that kubesched
does not implement: each is left out with one warning saying what that means."""
_UPSTREAM_DEFAULT_NAMES = frozenset(n for n, _ in UPSTREAM_DEFAULT_MULTIPOINT)
_PROFILE_FIELDS = {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}
_POINTS = {"multiPoint", "preEnqueue", *EXTENSION_POINTS}


def parse_config(
    data: Any,
    *,
    registry: Mapping[str, Any] | None = None,
    version: Version = DEFAULT_VERSION,
    feature_gates: Mapping[str, bool] | None = None,
) -> SchedulerConfig:
    """Validate a decoded KubeSchedulerConfiguration document as the kube-scheduler of
    ``version`` with ``feature_gates`` (default: that version's) does; raise ConfigError naming
    the field."""
    if not isinstance(data, Mapping):
        raise ConfigError("a KubeSchedulerConfiguration must be a mapping")
    api, kind = data.get("apiVersion"), data.get("kind")
    if not kind:
        raise _err("kind", "Object 'Kind' is missing")
    if not api:
        raise _err("apiVersion", "Object 'apiVersion' is missing")
    if api != API_VERSION:  # as the scheme answers for a version it does not know
        raise _err("apiVersion", f'no kind "{kind}" is registered for version "{api}"')
    if kind != KIND:
        raise _err("kind", f'no kind "{kind}" is registered for version "{api}"')
    for k in data:
        if k not in _TOP_FIELDS:
            raise _unknown_field(str(k))
    for section, known in _SECTION_FIELDS.items():
        value = data.get(section)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise _err(section, "Invalid value: must be a mapping")
        for k in value:
            if k not in known:
                raise _unknown_field(f"{section}.{k}")
    _check_numbers(data)
    _check_client_connection(data.get("clientConnection") or {})
    _check_leader_election(data.get("leaderElection") or {})
    if registry is None:
        from kubesched.runtime._entrypoints import all_plugins

        registry = all_plugins()  # in-tree and entry-point plugins
    gates = default_feature_gates(version) if feature_gates is None else dict(feature_gates)
    cfg = SchedulerConfig(profiles=[], feature_gates=gates, emulated_version=version)
    cfg.parallelism = _int(data, "parallelism", 16)
    if cfg.parallelism <= 0:
        raise _err("parallelism", f"Invalid value: {cfg.parallelism}: should be an integer value greater than zero")
    cfg.percentage_of_nodes_to_score = _int(data, "percentageOfNodesToScore", 0)
    _check_pct("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score)
    init = _int(data, "podInitialBackoffSeconds", 1)
    if init <= 0:
        raise _err("podInitialBackoffSeconds", f"Invalid value: {init}: must be greater than 0")
    mx = _int(data, "podMaxBackoffSeconds", 10)
    if mx < init:
        raise _err("podMaxBackoffSeconds", f"Invalid value: {mx}: must be greater than or equal to PodInitialBackoffSeconds")
    cfg.pod_initial_backoff_seconds = float(init)
    cfg.pod_max_backoff_seconds = float(mx)
    extenders = data.get("extenders") or []
    if not isinstance(extenders, list):
        raise _err("extenders", "Invalid value: must be a list")
    parse_extenders(extenders)  # validateExtenders; the Scheduler builds them from the raw list
    cfg.extenders = list(extenders)
    profiles = data.get("profiles")
    if not profiles:  # v1 defaulting: no profile → one default profile
        profiles = [{}]
    if not isinstance(profiles, list):
        raise _err("profiles", "Invalid value: must be a list")
    names: set[str] = set()
    queue_sorts: list[tuple[Any, Any]] = []
    for i, raw in enumerate(profiles):
        p = _parse_profile(raw, f"profiles[{i}]", registry, cfg.warnings, version, gates)
        if p.scheduler_name in names:
            raise _err(f"profiles[{i}].schedulerName", f'Duplicate value: "{p.scheduler_name}"')
        names.add(p.scheduler_name)
        cfg.profiles.append(p)
        queue_sorts.append((p.enabled.get("queueSort", []), sorted(p.disabled.get("queueSort", set()))))
    _check_common_queue_sort(cfg.profiles, queue_sorts)
    return cfg


def _check_common_queue_sort(profiles: list[ProfileConfig], sets: list[tuple[Any, Any]]) -> None:
    """``validateCommonQueueSort``: one queueSort plugin, the same (with the same args) everywhere."""
    canon = sets[0]
    if len(canon[0]) > 1:
        raise _err(
            "profiles[0].plugins.queueSort.Enabled",
            f"Invalid value: {len(canon[0])}: only one queue sort plugin can be enabled",
        )
    name = canon[0][0][0] if canon[0] else ""
    for i in range(1, len(profiles)):
        if sets[i] != canon:
            raise _err(f"profiles[{i}].plugins.queueSort", "Invalid value: must be the same for all profiles")
        if name and profiles[i].plugin_args.get(name) != profiles[0].plugin_args.get(name):
            raise _err(
                f"profiles[{i}].pluginConfig.args", "Invalid value: queueSort must be the same for all profiles"
            )


# the configuration's integer fields are Go int32 / int64: nothing larger decodes
_INT32_FIELDS = ("parallelism", "percentageOfNodesToScore")


def _check_numbers(data: Any) -> None:
    """No integer beyond int64 and no non-finite float anywhere (upstream's decoder refuses
    them: an int64 field cannot hold 2^70, JSON has no NaN or infinity)."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int) and not -(2**63) <= v < 2**63:
            raise _err(path, f"Invalid value: {v}: out of the int64 range")
        if isinstance(v, float) and not math.isfinite(v):
            raise _err(path, f"Invalid value: {v}: not a finite number")
        if isinstance(v, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), x) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v))


_FLOAT32_MAX = 3.4028234663852886e38
# componentbaseconfig v1alpha1 RecommendedDefaultLeaderElectionConfiguration, as kube-scheduler
# defaults its configuration (leaderElect true, 15s / 10s / 2s, leases in kube-system)
_LEADER_ELECTION_DEFAULTS = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}


def _check_client_connection(cc: Mapping[str, Any]) -> None:
    """``ClientConnectionConfiguration`` as kube-scheduler decodes and validates it
    (component-base ``ValidateClientConnectionConfiguration``).  A negative qps is accepted, as
    upstream: client-go then applies no rate limit."""
    for key in ("kubeconfig", "contentType", "acceptContentTypes"):
        v = cc.get(key)
        if v is not None and not isinstance(v, str):
            raise _err(f"clientConnection.{key}", f"Invalid value: {v!r}: must be a string")
    qps = cc.get("qps")
    if qps is not None:
        if not isinstance(qps, int | float) or isinstance(qps, bool):
            raise _err("clientConnection.qps", f"Invalid value: {qps!r}: must be a number")
        if abs(qps) > _FLOAT32_MAX:  # a float32 field
            raise _err("clientConnection.qps", f"Invalid value: {qps}: out of the float32 range")
    burst = cc.get("burst")
    if burst is not None:
        if not isinstance(burst, int) or isinstance(burst, bool):
            raise _err("clientConnection.burst", f"Invalid value: {burst!r}: must be an integer")
        if not -(2**31) <= burst < 2**31:
            raise _err("clientConnection.burst", f"Invalid value: {burst}: out of the int32 range")
        if burst < 0:
            raise _err("clientConnection.burst", f"Invalid value: {burst}: must be non-negative")


def _check_leader_election(le: Mapping[str, Any]) -> None:
    """``LeaderElectionConfiguration``: each duration a Go duration string (``metav1.Duration``:
    ``time.ParseDuration``, so ``forever``, ``" 15s"`` or a bare ``15`` are refused), then, when
    leaderElect (default true), component-base ``ValidateLeaderElectionConfiguration`` and the
    scheduler's own resourceLock rule."""
    from kubesched.api._durations import format_duration, parse_duration_nanos

    elect = le.get("leaderElect")
    if elect is not None and not isinstance(elect, bool):
        raise _err("leaderElection.leaderElect", f"Invalid value: {elect!r}: must be a boolean")
    nanos: dict[str, int] = {}
    for key, default in _LEADER_ELECTION_DEFAULTS.items():
        v = le.get(key)
        if v is None:
            v = default
        if not isinstance(v, str):
            raise _err(f"leaderElection.{key}", f'Invalid value: {v!r}: must be a duration string (e.g. "{default}")')
        try:
            nanos[key] = parse_duration_nanos(v, bare_seconds=False)
        except ValueError as e:
            raise _err(f"leaderElection.{key}", str(e)) from None
    for key in ("resourceLock", "resourceName", "resourceNamespace"):
        v = le.get(key)
        if v is not None and not isinstance(v, str):
            raise _err(f"leaderElection.{key}", f"Invalid value: {v!r}: must be a string")
    if elect is False:
        return
    for key in _LEADER_ELECTION_DEFAULTS:
        if nanos[key] <= 0:
            raise _err(f"leaderElection.{key}", f"Invalid value: {format_duration(nanos[key])}: must be greater than zero")
    if nanos["leaseDuration"] <= nanos["renewDeadline"]:
        # upstream names leaseDuration and shows the renewDeadline
        raise _err(
            "leaderElection.leaseDuration",
            f"Invalid value: {format_duration(nanos['renewDeadline'])}: must be greater than `RenewDeadline`",
        )
    lock = le.get("resourceLock") or "leases"
    if lock != "leases":
        from kubesched.validation._base import go_quote

        raise _err("leaderElection.resourceLock", f'Invalid value: {go_quote(lock)}: resourceLock value must be "leases"')


def _int(data: Mapping[str, Any], key: str, default: int) -> int:
    v = data.get(key, default)
    if v is None:
        return default
    if not isinstance(v, int) or isinstance(v, bool):
        raise _err(key, f"Invalid value: {v!r}: must be an integer")
    if key in _INT32_FIELDS and not -(2**31) <= v < 2**31:
        raise _err(key, f"Invalid value: {v}: out of the int32 range")
    return v


def _check_pct(fld: str, v: int) -> None:
    if v < 0 or v > 100:
        raise _err(fld, f"Invalid value: {v}: not in valid range [0-100]")


def _why_missing(registry: Mapping[str, Any], name: str) -> str:
    """Why a plugin is not in the registry, when known (an entry point that failed to load)."""
    why = getattr(registry, "unavailable", {}).get(name)
    return f": {why}" if why else ""


# kubescheduler.config.k8s.io/v1 Plugins fields from v0.36.0 (config/v1/types.go): the plugins of
# the PodGroup cycle's placement algorithm (TopologyAwareWorkloadScheduling); before 1.36 they are
# unknown fields
PLACEMENT_POINTS = ("placementGenerate", "placementScore")


def _parse_profile(
    raw: Any,
    path: str,
    registry: Mapping[str, Any],
    warnings: list[str],
    version: Version = DEFAULT_VERSION,
    gates: Mapping[str, bool] | None = None,
) -> ProfileConfig:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise _err(path, "Invalid value: a profile must be a mapping")
    for k in raw:
        if k not in _PROFILE_FIELDS:
            raise ConfigError(f'strict decoding error: unknown field "{path}.{k}"')
    name = raw.get("schedulerName")
    if name is None:
        name = DEFAULT_SCHEDULER_NAME
    if not isinstance(name, str) or not name:
        raise _err(f"{path}.schedulerName", "Required value")
    prof = ProfileConfig(scheduler_name=name)
    pct = raw.get("percentageOfNodesToScore")
    if pct is not None:
        if not isinstance(pct, int) or isinstance(pct, bool):
            raise _err(f"{path}.percentageOfNodesToScore", f"Invalid value: {pct!r}: must be an integer")
        _check_pct(f"{path}.percentageOfNodesToScore", pct)
        prof.percentage_of_nodes_to_score = pct
    plugins = raw.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise _err(f"{path}.plugins", "Invalid value: must be a mapping")
    user_mp_enabled: list[tuple[str, int]] = []
    user_mp_disabled: set[str] = set()
    for point, pset in plugins.items():
        fld = f"{path}.plugins.{point}"
        if point not in _POINTS or (point in PLACEMENT_POINTS and version < (1, 36)):
            raise ConfigError(f'strict decoding error: unknown field "{fld}"')
        if pset is None:
            continue
        if not isinstance(pset, Mapping):
            raise _err(fld, "Invalid value: must be a mapping with enabled / disabled")
        for k in pset:
            if k not in ("enabled", "disabled"):
                raise _unknown_field(f"{fld}.{k}")
        enabled = _plugin_list(pset.get("enabled"), f"{fld}.enabled")
        enabled_here = enabled
        disabled = {n for n, _ in _plugin_list(pset.get("disabled"), f"{fld}.disabled")}
        seen_here: set[str] = set()
        for i, (n, _) in enumerate(enabled):
            if n in invalid_plugins(version):
                raise _invalid_in_v1(f"{fld}.enabled[{i}]", n)
            if n not in registry and n in NOT_IMPLEMENTED_PLUGINS:
                warn = (
                    f'{fld}.enabled[{i}]: plugin "{n}" is not implemented by kubesched and is left '
                    f"out: {NOT_IMPLEMENTED_PLUGINS[n]}"
                )
                if not any(f'plugin "{n}" ' in w for w in warnings):  # one line per plugin
                    warnings.append(warn)
                continue
            if n not in registry:
                raise _err(
                    f"{fld}.enabled[{i}].name",
                    f'Invalid value: "{n}": plugin "{n}" does not exist{_why_missing(registry, n)}',
                )
            if n in seen_here:  # upstream: the framework refuses a double registration
                raise _err(f"{fld}.enabled[{i}].name", f'Duplicate value: "{n}": plugin "{n}" already registered')
            seen_here.add(n)
        enabled = [(n, w) for n, w in enabled_here if n in registry]
        if point == "multiPoint":
            user_mp_enabled, user_mp_disabled = enabled, disabled
        else:
            if enabled:
                prof.enabled[point] = enabled
            if disabled:
                prof.disabled[point] = disabled
    # the default set is upstream's in-tree one: entry-point plugins are enabled only by name
    defaults = [(n, w) for n, w in default_multi_point(None, version, gates) if n in registry]
    prof.multi_point = merge_plugin_set(defaults, user_mp_enabled, user_mp_disabled)
    pc = raw.get("pluginConfig") or []
    seen_config: set[str] = set()
    if not isinstance(pc, list):
        raise _err(f"{path}.pluginConfig", "Invalid value: must be a list")
    for i, item in enumerate(pc):
        fld = f"{path}.pluginConfig[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise _err(f"{fld}.name", "Required value")
        for k in item:
            if k not in ("name", "args"):
                raise _unknown_field(f"{fld}.{k}")
        pname = item["name"]
        if pname in seen_config:
            raise _err(fld, f'Duplicate value: "{pname}"')
        seen_config.add(pname)
        if pname in invalid_plugins(version):
            raise _invalid_in_v1(fld, pname)
        if (
            pname not in registry
            and pname not in UPSTREAM_OTHER_PLUGINS
            and pname not in _UPSTREAM_DEFAULT_NAMES
            and not (version < (1, 31) and pname in V1_30_VOLUME_LIMIT_PLUGINS)
        ):
            raise _err(
                f"{fld}.name",
                f'Invalid value: "{pname}": plugin "{pname}" does not exist{_why_missing(registry, pname)}',
            )
        args = item.get("args")
        if args is not None and not isinstance(args, Mapping):
            raise _err(f"{fld}.args", "Invalid value: must be a mapping")
        if pname not in registry:  # an upstream plugin kubesched does not have: not used
            continue
        prof.plugin_args[pname] = dict(args or {})
        prof.arg_paths[pname] = f"{fld}.args"
    return prof


def parse_feature_gates(
    text: str, base: Mapping[str, bool] | None = None, version: Version = DEFAULT_VERSION
) -> dict[str, bool]:
    """``--feature-gates K=V,K2=V2`` on top of ``base`` (default: ``version``'s defaults), as
    component-base's ``featureGate.Set`` at ``version`` (:func:`kubesched.config._versions.parse_feature_gates`)."""
    return _parse_feature_gates(text, base, version)
