"""A pod's spec as the API server validates it (pkg/apis/core/validation ``ValidatePodSpec``).

In upstream's order: the volumes (``ValidateVolumes``, in ``_validation_storage``), the containers
(``validateContainers``: names, ports, resources, host port conflicts), the init containers, ``restartPolicy``, ``nodeSelector``, affinity, scheduling gates,
topology spread constraints, ``nodeName``, ``activeDeadlineSeconds``, ``hostname``, tolerations,
``priorityClassName``, ``preemptionPolicy`` and the overhead.  A pod template (a Job's, a
Deployment's) is checked the same way.  The first error is raised, one :class:`ConfigError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._objects import Pod
from kubesched.validation._base import (
    HUGEPAGES_PREFIX,
    check_label_selector,
    check_node_selector,
    check_node_selector_term,
    check_quantities,
    container_resource_name_error,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    field_key,
    go_quote,
    invalid,
    is_integer_resource,
    is_overcommit_allowed,
    label_value_errors,
    not_supported,
    parse_checked,
    port_name_errors,
    qualified_errors,
    quantity_string,
    supported,
    validate_labels,
    validate_namespace_name,
)
from kubesched.validation._dra import check_pod_resource_claims
from kubesched.validation._podlevel import check_pod_resources
from kubesched.validation._storage import check_volumes

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sets.List(supportedPortProtocols)
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
MAX_INT32 = 2**31 - 1


# --- containers --------------------------------------------------------------------------------


def _check_ports(c: Any, p: str) -> None:
    """``validateContainerPorts``."""
    names: set[str] = set()
    for j, port in enumerate(c.ports):
        pp = f"{p}.ports[{j}]"
        if port.name:
            errs = port_name_errors(port.name)
            if errs:
                raise invalid(f"{pp}.name", port.name, errs[0])
            if port.name in names:
                raise ConfigError(f"Duplicate value: {go_quote(port.name)}", field=f"{pp}.name")
            names.add(port.name)
        if port.container_port == 0:
            raise ConfigError("Required value", field=f"{pp}.containerPort")
        if not 1 <= port.container_port <= 65535:
            raise invalid(f"{pp}.containerPort", port.container_port, "must be between 1 and 65535, inclusive")
        if port.host_port and not 1 <= port.host_port <= 65535:
            raise invalid(f"{pp}.hostPort", port.host_port, "must be between 1 and 65535, inclusive")
        # an empty protocol is defaulted to TCP (SetDefaults_ContainerPort)
        if port.protocol and port.protocol not in _PROTOCOLS:
            raise not_supported(f"{pp}.protocol", port.protocol, _PROTOCOLS)


def _check_resources(c: Any, p: str) -> None:
    """``ValidateContainerResourceRequirements``: container resource names, quantities (whole for
    an integer resource), requests within limits, and equal to them for a resource that cannot
    be overcommitted (extended resources, hugepages), whose limit is required."""
    path = f"{p}.resources"
    requests, limits = c.resources.requests or {}, c.resources.limits or {}
    for rl, kind in ((c.resources.limits, "limits"), (c.resources.requests, "requests")):
        if rl is not None and not isinstance(rl, dict):
            raise ConfigError("must be a map of resource quantities", field=f"{path}.{kind}")
    parsed: dict[str, dict[str, Any]] = {"limits": {}, "requests": {}}
    cpu_or_memory = hugepages = False
    for kind, rl in (("limits", limits), ("requests", requests)):
        for name, value in rl.items():
            fld = f"{path}.{kind}[{field_key(name)}]"
            msg = container_resource_name_error(name)
            if msg is not None:
                raise invalid(fld, name, msg)
            q = parse_checked(value, f"{path}.{kind}.{field_key(name)}")
            if q.denominator != 1 and is_integer_resource(name):
                raise ConfigError(f"Invalid value: {quantity_string(value, q)}: must be an integer", field=fld)
            if name.startswith(HUGEPAGES_PREFIX):
                hugepages = True
                size = _hugepage_size(name)
                if size is None or q % size != 0:
                    raise invalid(fld, str(value), f"{value} is not positive integer multiple of {name}")
            cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
            parsed[kind][name] = q
            if kind == "requests":
                limit = parsed["limits"].get(name)
                if limit is None:
                    if not is_overcommit_allowed(name):
                        raise ConfigError(
                            "Required value: Limit must be set for non overcommitable resources", field=f"{path}.limits"
                        )
                elif q != limit and not is_overcommit_allowed(name):
                    raise invalid(fld, str(value), f"must be equal to {name} limit of {limits[name]}")
                elif q > limit:
                    raise invalid(fld, str(value), f"must be less than or equal to {name} limit of {limits[name]}")
    if hugepages and not cpu_or_memory:
        raise ConfigError("Forbidden: HugePages require cpu or memory", field=path)


def _hugepage_size(name: str) -> Any:
    from kubesched.api._resources import QuantityError, parse_quantity

    try:
        size = parse_quantity(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        return None
    return size if size > 0 and size.denominator == 1 else None


def _check_container(c: Any, p: str, volumes: set[str]) -> None:
    """``validateContainerCommon``: name, ports, volume mounts, resources."""
    if not c.name:
        raise ConfigError("Required value", field=f"{p}.name")
    errs = dns1123_label_errors(c.name)
    if errs:
        raise invalid(f"{p}.name", c.name, errs[0])
    _check_ports(c, p)
    _check_volume_mounts(c.volume_mounts, volumes, f"{p}.volumeMounts")
    _check_resources(c, p)


def _check_volume_mounts(mounts: list[Any], volumes: set[str], path: str) -> None:
    """``ValidateVolumeMounts`` (pkg/apis/core/validation, v1.35.4): a mount names one of the
    pod's volumes and a path, each path once."""
    paths: set[str] = set()
    for i, m in enumerate(mounts):
        p = f"{path}[{i}]"
        if not m.name:
            raise ConfigError("Required value", field=f"{p}.name")
        if m.name not in volumes:
            raise ConfigError(f"Not found: {go_quote(m.name)}", field=f"{p}.name")
        if not m.mount_path:
            raise ConfigError("Required value", field=f"{p}.mountPath")
        if m.mount_path in paths:
            raise invalid(f"{p}.mountPath", m.mount_path, "must be unique")
        paths.add(m.mount_path)


def _check_host_ports(containers: Any, path: str) -> None:
    """``AccumulateUniqueHostPorts``: no two ports with one protocol / hostIP / hostPort."""
    seen: set[str] = set()
    for i, c in enumerate(containers):
        for j, port in enumerate(c.ports):
            if not port.host_port:
                continue
            key = f"{port.protocol or 'TCP'}/{port.host_ip}/{port.host_port}"
            if key in seen:
                raise ConfigError(f"Duplicate value: {go_quote(key)}", field=f"{path}[{i}].ports[{j}].hostPort")
            seen.add(key)


def _check_containers(spec: Any) -> None:
    """``validateContainers`` then ``validateInitContainers``."""
    if not spec.containers:
        raise ConfigError("Required value", field="spec.containers")
    names: set[str] = set()
    volumes = {v.name for v in spec.volumes}
    for i, c in enumerate(spec.containers):
        p = f"spec.containers[{i}]"
        _check_container(c, p, volumes)
        if c.name in names:
            raise ConfigError(f"Duplicate value: {go_quote(c.name)}", field=f"{p}.name")
        names.add(c.name)
        if c.restart_policy is not None:
            raise ConfigError("Forbidden: may not be set for non-init containers", field=f"{p}.restartPolicy")
    _check_host_ports(spec.containers, "spec.containers")
    for i, c in enumerate(spec.init_containers):
        p = f"spec.initContainers[{i}]"
        _check_container(c, p, volumes)
        if c.restart_policy is not None and c.restart_policy != "Always":
            raise not_supported(f"{p}.restartPolicy", c.restart_policy, ("Always",))
        if c.name in names:
            raise ConfigError(f"Duplicate value: {go_quote(c.name)}", field=f"{p}.name")
        names.add(c.name)
        # init containers run one by one: conflicts only within one
        _check_host_ports([c], "spec.initContainers")


# --- affinity ----------------------------------------------------------------------------------


def _check_weight(weight: int, fld: str) -> None:
    if not 1 <= weight <= 100:
        raise invalid(fld, weight, "must be in the range 1-100")


def _check_label_keys(keys: list[str], sel: Any, path: str) -> None:
    """``validateLabelKeys`` (matchLabelKeys / mismatchLabelKeys)."""
    if keys and sel is None:
        raise ConfigError("Forbidden: must not be specified when labelSelector is not set", field=path)
    for j, key in enumerate(keys):
        errs = qualified_errors(key)
        if errs:
            raise invalid(f"{path}[{j}]", key, errs[0])


def _check_match_label_keys(term: Any, path: str, labels: dict[str, str]) -> None:
    """``validateMatchLabelKeysAndMismatchLabelKeys``, on the selector as the API server has
    merged it on create (an ``In`` expression per matchLabelKeys key the pod has, a ``NotIn`` per
    mismatchLabelKeys key): a key both in matchLabelKeys and already in the selector is refused
    (at the term's path indexed by the key's position, as upstream reports it)."""
    _check_label_keys(term.match_label_keys, term.label_selector, f"{path}.matchLabelKeys")
    _check_label_keys(term.mismatch_label_keys, term.label_selector, f"{path}.mismatchLabelKeys")
    sel = term.label_selector
    if sel is not None:
        positions = {key: i for i, key in enumerate(term.match_label_keys)}
        keys = [r.key for r in sel.match_expressions]
        keys += [k for k in (*term.match_label_keys, *term.mismatch_label_keys) if k in labels]
        in_selector = set(sel.match_labels)
        for key in keys:
            if key in positions and key in in_selector:
                raise invalid(f"{path}[{positions[key]}]", key, "exists in both matchLabelKeys and labelSelector")
            in_selector.add(key)
    mismatch = set(term.mismatch_label_keys)
    for i, key in enumerate(term.match_label_keys):
        if key in mismatch:
            raise invalid(f"{path}.matchLabelKeys[{i}]", key, "exists in both matchLabelKeys and mismatchLabelKeys")


def _check_pod_affinity_term(term: Any, path: str, labels: dict[str, str] | None) -> None:
    """``validatePodAffinityTerm``; ``labels`` None leaves out matchLabelKeys and
    mismatchLabelKeys (:func:`check_pod_affinity_label_keys` checks them once the
    MatchLabelKeysInPodAffinity gate is known)."""
    check_label_selector(term.label_selector, f"{path}.labelSelector")
    check_label_selector(term.namespace_selector, f"{path}.namespaceSelector")
    for name in term.namespaces:
        validate_namespace_name(name, f"{path}.namespace")
    if labels is not None:
        _check_match_label_keys(term, path, labels)
    if not term.topology_key:
        raise ConfigError("Required value: can not be empty", field=f"{path}.topologyKey")
    errs = qualified_errors(term.topology_key)
    if errs:
        raise invalid(f"{path}.topologyKey", term.topology_key, errs[0])


_REQ = "requiredDuringSchedulingIgnoredDuringExecution"
_PREF = "preferredDuringSchedulingIgnoredDuringExecution"
_POD_AFFINITIES = (("pod_affinity", "spec.affinity.podAffinity"), ("pod_anti_affinity", "spec.affinity.podAntiAffinity"))


def _pod_affinity_terms(pod: Pod) -> Iterator[tuple[Any, str, Any]]:
    """Every pod (anti-)affinity term of the pod in validation order: (term, its field path, the
    weighted term holding it or None)."""
    aff = pod.spec.affinity
    for attr, path in _POD_AFFINITIES if aff is not None else ():
        pa = getattr(aff, attr)
        if pa is None:
            continue
        for i, term in enumerate(pa.required_during_scheduling_ignored_during_execution):
            yield term, f"{path}.{_REQ}[{i}]", None
        for i, wt in enumerate(pa.preferred_during_scheduling_ignored_during_execution):
            yield wt.pod_affinity_term, f"{path}.{_PREF}[{i}].podAffinityTerm", wt


def check_pod_affinity_label_keys(pod: Pod) -> None:
    """The matchLabelKeys / mismatchLabelKeys checks of ``validatePodAffinityTerm``, for a pod
    validated with ``label_keys=False`` once the MatchLabelKeysInPodAffinity gate is known."""
    for term, path, _ in _pod_affinity_terms(pod):
        _check_match_label_keys(term, path, pod.metadata.labels)


def drop_pod_affinity_label_keys(pod: Pod) -> None:
    """The pod strategy's ``dropDisabledMatchLabelKeysFieldInPodAffinity`` (v1.30.6
    ``pkg/api/pod/util.go``): with MatchLabelKeysInPodAffinity off, a new pod (or pod template)
    loses matchLabelKeys and mismatchLabelKeys before it is validated, and its selectors are not
    merged with them."""
    for term, _, _ in _pod_affinity_terms(pod):
        term.match_label_keys = []
        term.mismatch_label_keys = []


def _check_affinity(pod: Pod, label_keys: bool = True) -> None:
    """``validateAffinity``."""
    aff = pod.spec.affinity
    if aff is None:
        return
    if aff.node_affinity is not None:
        na, p = aff.node_affinity, "spec.affinity.nodeAffinity"
        if na.required_during_scheduling_ignored_during_execution is not None:
            check_node_selector(
                na.required_during_scheduling_ignored_during_execution,
                f"{p}.requiredDuringSchedulingIgnoredDuringExecution",
            )
        for i, pt in enumerate(na.preferred_during_scheduling_ignored_during_execution):
            pp = f"{p}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            _check_weight(pt.weight, f"{pp}.weight")
            # "we always allow invalid label-value for preferred affinity"
            check_node_selector_term(pt.preference, f"{pp}.preference", allow_invalid_values=True)
    labels = pod.metadata.labels if label_keys else None
    for term, path, weighted in _pod_affinity_terms(pod):
        if weighted is not None:
            _check_weight(weighted.weight, f"{path.removesuffix('.podAffinityTerm')}.weight")
        _check_pod_affinity_term(term, path, labels)


# --- scheduling gates, spread constraints, tolerations ------------------------------------------


def _check_scheduling_gates(spec: Any) -> None:
    """``validateSchedulingGates``: qualified names, no duplicates."""
    seen: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates):
        fld = f"spec.schedulingGates[{i}]"
        errs = qualified_errors(gate.name)
        if errs:
            raise invalid(fld, gate.name, errs[0])
        if gate.name in seen:
            raise ConfigError(f"Duplicate value: {go_quote(gate.name)}", field=fld)
        seen.add(gate.name)


def _check_topology_spread(spec: Any) -> None:
    """``validateTopologySpreadConstraints``."""
    constraints = spec.topology_spread_constraints
    for i, c in enumerate(constraints):
        p = f"spec.topologySpreadConstraints[{i}]"
        if c.max_skew <= 0:
            raise invalid(f"{p}.maxSkew", c.max_skew, "must be greater than zero")
        if not c.topology_key:
            raise ConfigError("Required value: can not be empty", field=f"{p}.topologyKey")
        errs = qualified_errors(c.topology_key)
        if errs:
            raise invalid(f"{p}.topologyKey", c.topology_key, errs[0])
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            raise not_supported(f"{p}.whenUnsatisfiable", c.when_unsatisfiable, ("DoNotSchedule", "ScheduleAnyway"))
        # ValidateSpreadConstraintNotRepeat: {topologyKey, whenUnsatisfiable} is one kind of constraint
        pair = (c.topology_key, c.when_unsatisfiable)
        if any((o.topology_key, o.when_unsatisfiable) == pair for o in constraints[i + 1 :]):
            raise ConfigError(
                f"Duplicate value: {go_quote('{' + ', '.join(pair) + '}')}", field=f"{p}.{{topologyKey, whenUnsatisfiable}}"
            )
        if c.min_domains is not None:
            if c.min_domains <= 0:
                raise invalid(f"{p}.minDomains", c.min_domains, "must be greater than zero")
            if c.when_unsatisfiable != "DoNotSchedule":
                raise invalid(
                    f"{p}.minDomains", c.min_domains,
                    'can only use minDomains if whenUnsatisfiable="DoNotSchedule", not "ScheduleAnyway"',
                )
        for fld, policy in (("nodeAffinityPolicy", c.node_affinity_policy), ("nodeTaintsPolicy", c.node_taints_policy)):
            if policy is not None and policy not in ("Honor", "Ignore"):
                raise not_supported(f"{p}.{fld}", policy, ("Honor", "Ignore"))
        _check_spread_match_label_keys(c, f"{p}.matchLabelKeys")
        check_label_selector(c.label_selector, f"{p}.labelSelector")


def _check_spread_match_label_keys(c: Any, path: str) -> None:
    """``validateMatchLabelKeysInTopologySpread``: label names, none already in the selector."""
    if not c.match_label_keys:
        return
    sel = c.label_selector
    if sel is None:
        raise ConfigError("Forbidden: must not be specified when labelSelector is not set", field=path)
    in_selector = set(sel.match_labels) | {r.key for r in sel.match_expressions}
    for j, key in enumerate(c.match_label_keys):
        errs = qualified_errors(key)
        if errs:
            raise invalid(f"{path}[{j}]", key, errs[0])
        if key in in_selector:
            raise invalid(f"{path}[{j}]", key, "exists in both matchLabelKeys and labelSelector")


def _check_tolerations(tolerations: Any, path: str) -> None:
    """``ValidateTolerations``."""
    for i, t in enumerate(tolerations):
        p = f"{path}[{i}]"
        if t.key:
            errs = qualified_errors(t.key)
            if errs:
                raise invalid(f"{p}.key", t.key, errs[0])
        if not t.key and t.operator != "Exists":
            raise ConfigError(
                f'Invalid value: {go_quote(t.operator)}: operator must be Exists when `key` is empty, which means '
                '"match all values and all keys"',
                field=f"{p}.operator",
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            raise invalid(f"{p}.effect", t.effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if t.operator in ("", "Equal"):
            errs = label_value_errors(t.value)
            if errs:
                raise invalid(f"{p}.operator", t.value, ";".join(errs))
        elif t.operator == "Exists":
            if t.value:
                raise invalid(f"{p}.operator", t.value, "value must be empty when `operator` is 'Exists'")
        else:
            raise not_supported(f"{p}.operator", t.operator, ("Equal", "Exists"))
        if t.effect and t.effect not in _TAINT_EFFECTS:
            raise ConfigError(
                f"Unsupported value: {go_quote(t.effect)}: supported values: {supported(_TAINT_EFFECTS)}",
                field=f"{p}.effect",
            )


# --- the spec ----------------------------------------------------------------------------------


def check_pod_spec(pod: Pod, *, label_keys: bool = True) -> None:
    """``ValidatePodSpec`` (and the grace period's sign): the first error, as a ConfigError.
    ``label_keys=False`` leaves out the pod affinity terms' matchLabelKeys and mismatchLabelKeys
    (for a caller that knows the MatchLabelKeysInPodAffinity gate only later:
    :func:`check_pod_affinity_label_keys`, or :func:`drop_pod_affinity_label_keys` when it is off)."""
    spec = pod.spec
    if spec.volumes:
        check_volumes(spec.volumes, pod.metadata.name)
    if spec.resource_claims or any(c.resources.claims for c in spec.containers) or any(
        c.resources.claims for c in spec.init_containers
    ):
        check_pod_resource_claims(pod)
    _check_containers(spec)
    # an empty restartPolicy is defaulted to Always (SetDefaults_PodSpec)
    if spec.restart_policy and spec.restart_policy not in _RESTART_POLICIES:
        raise not_supported("spec.restartPolicy", spec.restart_policy, _RESTART_POLICIES)
    validate_labels(spec.node_selector, "spec.nodeSelector")
    _check_affinity(pod, label_keys)
    _check_scheduling_gates(spec)
    _check_topology_spread(spec)
    if spec.node_name:
        errs = dns1123_subdomain_errors(spec.node_name)
        if errs:
            raise invalid("spec.nodeName", spec.node_name, errs[0])
    ads = spec.active_deadline_seconds
    if ads is not None and not 1 <= ads <= MAX_INT32:
        raise invalid("spec.activeDeadlineSeconds", ads, f"must be between 1 and {MAX_INT32}, inclusive")
    if spec.hostname:
        errs = dns1123_label_errors(spec.hostname)
        if errs:
            raise invalid("spec.hostname", spec.hostname, errs[0])
    if spec.termination_grace_period_seconds is not None and spec.termination_grace_period_seconds < 0:
        raise invalid(
            "spec.terminationGracePeriodSeconds", spec.termination_grace_period_seconds,
            "must be greater than or equal to 0",
        )
    _check_tolerations(spec.tolerations, "spec.tolerations")
    if spec.priority_class_name:
        errs = dns1123_subdomain_errors(spec.priority_class_name)
        if errs:
            raise invalid("spec.priorityClassName", spec.priority_class_name, errs[0])
    if spec.preemption_policy is not None:
        if not spec.preemption_policy:
            raise ConfigError("Required value", field="spec.preemptionPolicy")
        if spec.preemption_policy not in _PREEMPTION_POLICIES:
            raise not_supported("spec.preemptionPolicy", spec.preemption_policy, _PREEMPTION_POLICIES)
    check_quantities(spec.overhead, "spec.overhead")
    check_pod_resources(spec)


__all__ = ["check_pod_affinity_label_keys", "check_pod_spec", "drop_pod_affinity_label_keys"]
