"""Loading a scenario's Kubernetes manifests: decode, validate, order by arrival.

Every error is one :class:`ConfigError` line naming the file, the document and the field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from kubesched._errors import ConfigError
from kubesched.api._decoding import MAX_DEPTH, drop_nulls, load_documents, read_text
from kubesched.api._durations import parse_duration
from kubesched.api._objects import KINDS, Pod, PriorityClass, convert
from kubesched.api._schema import strict_error, unknown_fields
from kubesched.api._schema import warning as field_warning
from kubesched.api._workload import (
    SCHEDULING_POD_GROUP_KIND,
    WORKLOAD_API_V1ALPHA1,
    WORKLOAD_API_V1ALPHA2,
)
from kubesched.api._yamlstream import Unusual, documents, single_list
from kubesched.transports.fake._controllers import MAX_PODS as FAKE_MAX_PODS
from kubesched.validation._validation import SYSTEM_PRIORITY_CLASSES, go_quote, validate_object
from kubesched.validation._workload import check_scheduling_pod_group_update, check_workload_update

ARRIVAL_ANNOTATION = "kubesched.io/arrival"
DURATION_ANNOTATION = "kubesched.io/duration"
DELETION_ANNOTATION = "kubesched.io/deletion"
DRAIN_ANNOTATION = "kubesched.io/drain"
"""On a Node: when it is drained (cordoned, its pods evicted): :mod:`kubesched.simulation._drains`."""
WORKLOAD_KINDS = ("Job", "ReplicaSet", "Deployment", "StatefulSet")
NAMESPACED_KINDS = (
    "Pod", "PodDisruptionBudget", "PodGroup", "PersistentVolumeClaim", "CSIStorageCapacity", *WORKLOAD_KINDS,
    "Workload", SCHEDULING_POD_GROUP_KIND, "ResourceClaim", "ResourceClaimTemplate",
)  # fmt: skip
"""The kinds a namespace belongs to: one left out of the manifest is ``default``, as kubectl's."""
MAX_PODS = FAKE_MAX_PODS
"""The most pods one workload may ask for (replicas, parallelism, completions) in a run: a
Deployment of 2147483647 replicas would be made pod by pod until memory runs out.  ``--max-pods``
overrides it."""
INPUT_KINDS = {
    ("v1", "Node"),
    ("v1", "Pod"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("policy/v1", "PodDisruptionBudget"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"),
    ("batch/v1", "Job"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSIStorageCapacity"),
    (WORKLOAD_API_V1ALPHA1, "Workload"),
    (WORKLOAD_API_V1ALPHA2, "Workload"),
    (WORKLOAD_API_V1ALPHA2, "PodGroup"),
    ("resource.k8s.io/v1", "DeviceClass"),
    ("resource.k8s.io/v1", "ResourceClaim"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"),
    ("resource.k8s.io/v1", "ResourceSlice"),
    ("resource.k8s.io/v1beta2", "DeviceTaintRule"),
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"),
}
INTERNAL_KINDS = {(WORKLOAD_API_V1ALPHA2, "PodGroup"): SCHEDULING_POD_GROUP_KIND}
"""The kinds whose name inside kubesched is not their kind on the wire: the Workload API's
PodGroup next to scheduler-plugins' (``scheduling.x-k8s.io/v1alpha1`` PodGroup)."""


@dataclass
class Manifest:
    """One decoded object with where it came from and when it arrives."""

    obj: Any
    kind: str
    source: str
    doc: int
    arrival: float
    order: int
    where: str = ""
    update: bool = False
    """A later document for an object defined before: it replaces it at ``arrival``."""
    deletion: float | None = None
    """``kubesched.io/deletion``: seconds after the start at which the object is deleted."""

    @property
    def label(self) -> str:
        """Where the object came from, as error messages name it: ``file: document N (Kind name)``."""
        if self.where:
            return self.where
        md = self.obj.metadata
        name = f"{md.namespace}/{md.name}" if md.namespace else md.name
        return f"{self.source}: document {self.doc} ({self.kind} {name})"


def _where(source: str, doc: int, kind: str = "", name: str = "", *, item: int | None = None) -> str:
    what = f" ({kind} {name})" if kind and name else f" ({kind})" if kind else ""
    at = f" items[{item}]" if item is not None else ""
    return f"{source}: document {doc}{at}{what}"


def _expand_lists(path: str, documents: list[tuple[int, Any]]) -> Iterable[tuple[int, int | None, Any]]:
    """(document, item, object) for every object: a ``v1 List`` (``kubectl get ... -o yaml``)
    or a typed list (``PodList``, ``NodeList``, ...: the API server's list, whose items carry no
    apiVersion and kind) stands for its items, in order."""
    for doc, data in documents:
        kind = data.get("kind") if isinstance(data, dict) else None
        api = data.get("apiVersion") if isinstance(data, dict) else None
        if not (isinstance(kind, str) and kind.endswith("List") and isinstance(api, str)):
            yield doc, None, data
            continue
        item_kind = kind[: -len("List")]
        if item_kind and (api, item_kind) not in INPUT_KINDS:
            yield doc, None, data  # not a list of a kind we take: refused below by its kind
            continue
        items = data.get("items")
        if items is None:
            continue
        if not isinstance(items, list):
            raise ConfigError("Invalid value: must be a list", source=_where(path, doc, kind), field="items")
        for i, obj in enumerate(items):
            if item_kind and isinstance(obj, dict):
                obj = {"apiVersion": api, "kind": item_kind, **obj}
            yield doc, i, obj


_GOT_TYPES: dict[str, Any] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, float),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}
_PATH_PART = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _resolve(data: Any, parts: list[str], got: Any) -> str | None:
    """The path below ``data`` with each ``[...]`` (a map key msgspec does not name) filled in."""
    if not parts:
        return "" if got is None or got(data) else None
    head, rest = parts[0], parts[1:]
    if head == "[...]":
        if not isinstance(data, dict):
            return None
        for key, value in data.items():
            sub = _resolve(value, rest, got)
            if sub is not None:
                return f"[{key}]{sub}"
        return None
    if head.startswith("["):
        i = int(head[1:-1])
        if not isinstance(data, list) or i >= len(data):
            return None
        sub = _resolve(data[i], rest, got)
        return None if sub is None else f"{head}{sub}"
    if not isinstance(data, dict) or head not in data:
        return None
    sub = _resolve(data[head], rest, got)
    return None if sub is None else f".{head}{sub}"


def _msgspec_field(err: msgspec.ValidationError, data: Any = None) -> tuple[str, str]:
    """(field path, message) of a msgspec error, the map keys filled in from ``data``."""
    text = str(err)
    m = re.search(r" - at `\$(.*)`$", text)
    if not m:
        return "", text
    msg, path = text[: m.start()], m.group(1)
    if "[...]" in path:
        parts = [f".{a}" if a else f"[{b}]" for a, b in _PATH_PART.findall(path)]
        parts = [p[1:] if p.startswith(".") else p for p in parts]
        got = re.search(r"got `(\w+)`", msg)
        resolved = _resolve(data, parts, _GOT_TYPES.get(got.group(1)) if got else None)
        if resolved is not None:
            path = resolved
    return path.lstrip("."), msg



def load_manifests(
    paths: Iterable[str],
    texts: dict[str, str] | None = None,
    *,
    validation: str = "Strict",
    warn: Callable[[str], object] | None = None,
    max_pods: int = MAX_PODS,
) -> list[Manifest]:
    """Decode, validate and order (by arrival, then file order) every object in ``paths``.

    ``texts`` maps a path to its content, for manifests that are not files (the demo).
    ``validation`` is kubectl's field validation: ``Strict`` refuses a field the kind does not
    have, ``Warn`` passes each one to ``warn`` (one line, naming where it is), ``Ignore`` drops
    them silently.
    """
    out: list[Manifest] = []
    order = 0
    seen: dict[tuple[str, str, str], Manifest] = {}
    uids: dict[str, str] = {}
    texts = texts or {}

    def take(path: str, doc: int, item: int | None, data: Any) -> None:
        nonlocal order
        where = _where(path, doc, item=item)
        if not isinstance(data, dict):
            raise ConfigError("a document must be a mapping (a Kubernetes object)", source=where)
        api, kind = data.get("apiVersion"), data.get("kind")
        if not kind:
            raise ConfigError("Required value: kind is required", source=where, field="kind")
        if not isinstance(kind, str):
            raise ConfigError(f"Invalid value: {kind!r}: must be a string", source=where, field="kind")
        if not api:
            raise ConfigError("Required value: apiVersion is required", source=where, field="apiVersion")
        if not isinstance(api, str):
            raise ConfigError(f"Invalid value: {api!r}: must be a string", source=where, field="apiVersion")
        if (api, kind) not in INPUT_KINDS:
            supported = ", ".join(f"{a}/{k}" for a, k in sorted(INPUT_KINDS))
            raise ConfigError(f'unknown kind "{api}/{kind}" (supported: {supported})', source=where, field="kind")
        md = data.get("metadata") or {}
        name = md.get("name", "") if isinstance(md, dict) else ""
        ns = md.get("namespace", "") if isinstance(md, dict) else ""
        if isinstance(name, str) and isinstance(ns, str) and ns and name:
            name = f"{ns}/{name}"
        where = _where(path, doc, kind, name if isinstance(name, str) else "", item=item)
        data = drop_nulls(data)
        if validation != "Ignore":
            unknown = unknown_fields(data, api, kind)
            if unknown and validation == "Strict":
                raise ConfigError(strict_error(unknown), source=where)
            for path_ in unknown:
                if warn is not None:
                    warn(f"{where}: {field_warning(path_)}")
        try:
            obj = _convert_strictly(data, KINDS[(api, kind)], f"{api}/{kind}")
        except ConfigError as e:
            raise e.at(source=where) from None
        except msgspec.ValidationError as e:
            fld, msg = _msgspec_field(e, data)
            raise ConfigError(msg, source=where, field=fld) from None
        kind = INTERNAL_KINDS.get((api, kind), kind)
        try:
            # the fields WorkloadAwarePreemption, MatchLabelKeysInPodAffinity and
            # VolumeAttributesClass guard: checked or dropped per the gate, later
            # (scenario._workloadapi.check_workload_api, scenario._gatedfields.apply_gated_fields)
            validate_object(obj, kind, preemption_fields=False, label_keys=False, vac_fields=False)
        except ConfigError as e:
            raise e.at(source=where) from None
        if kind == "Node":
            _kubelet_labels(obj)
        if kind in NAMESPACED_KINDS and not obj.metadata.namespace:
            obj.metadata.namespace = "default"
        if kind in WORKLOAD_KINDS:
            _check_workload(obj, kind, where, max_pods)
        annotations = obj.metadata.annotations
        arrival = _offset_annotation(annotations, ARRIVAL_ANNOTATION, where)
        deletion = _offset_annotation(annotations, DELETION_ANNOTATION, where)
        if kind == "Pod":
            _offset_annotation(annotations, DURATION_ANNOTATION, where)
        if deletion is not None and deletion <= (arrival or 0.0):
            raise ConfigError(
                f"Invalid value: {go_quote(annotations[DELETION_ANNOTATION])}: must be later than the "
                f"arrival ({arrival or 0.0:g}s)",
                source=where,
                field=f"metadata.annotations[{DELETION_ANNOTATION}]",
            )
        key = (kind, obj.metadata.namespace, obj.metadata.name)
        update = False
        if key in seen:
            first = seen[key]
            if (arrival or 0.0) <= first.arrival:
                raise ConfigError(
                    f"already defined in {first.label} (a later document replaces it only with a "
                    f"later {ARRIVAL_ANNOTATION})",
                    source=where,
                    field="metadata.name",
                )
            _check_update(first.obj, obj, kind, where)
            update = True
            if not obj.metadata.uid:
                obj.metadata.uid = first.obj.metadata.uid
        uid = obj.metadata.uid
        if uid and not update:
            if uid in uids:
                raise ConfigError(
                    f"Duplicate value: {go_quote(uid)}: already the uid of {uids[uid]}",
                    source=where,
                    field="metadata.uid",
                )
            uids[uid] = where
        if kind == "PriorityClass" and obj.metadata.name in SYSTEM_PRIORITY_CLASSES:
            # validation let it through, so it is the built-in class exactly: the cluster
            # has it from the start, and creating it again changes nothing
            return
        m = Manifest(obj, kind, path, doc, arrival or 0.0, order, where, update=update, deletion=deletion)
        seen[key] = m
        out.append(m)
        order += 1
    for path in paths:
        text = texts.get(path)
        if text is None and not path.endswith(".json"):
            text = _read(path)
        guess = single_list(text) if text is not None else None
        if text is not None and guess is not None and (not guess[1][:-4] or (guess[0], guess[1][:-4]) in INPUT_KINDS):
            # kubectl's export, one List: each item is decoded and checked as it is parsed, so
            # the parsed tree of thousands of objects is never alive at once
            state = (len(out), order, dict(seen), dict(uids))
            try:
                roots = _stream_list(path, text, guess, take)
            except Unusual:  # decoded again below, as any other file
                del out[state[0] :]
                order = state[1]
                seen.clear()
                seen.update(state[2])
                uids.clear()
                uids.update(state[3])
            else:
                for doc, item, data in _expand_lists(path, roots):
                    take(path, doc, item, data)
                continue
        documents = load_documents(path, text)
        if not documents:  # as kubectl: an empty (or comments-only) file is a mistake
            raise ConfigError("no objects passed to create", source=path)
        for doc, item, data in _expand_lists(path, documents):
            take(path, doc, item, data)
    # PriorityClasses first at each instant: objects of one instant exist at once (an export
    # lists pods before the classes they name), and admission resolves a pod's class on create
    out.sort(key=lambda m: (m.arrival, m.kind != "PriorityClass", m.order))
    _check_priority_classes(out)
    _check_device_classes(out)
    return out


_QUOTED = re.compile(r"Expected `(int|float|bool)(?: \| null)?`(?: [<>]=? ?-?\d+)*, got `str` - at `\$(.*)`$")


def _convert_strictly(data: Any, kind: type[Any], schema_kind: str) -> Any:
    """``data`` decoded into ``kind``, a string where the type has a number or a boolean
    (``replicas: "2"``) refused as the API server's JSON decoder refuses it; any other
    mismatch as :func:`~kubesched.api._objects.convert` has it."""
    try:
        return msgspec.convert(data, kind, strict=True)
    except msgspec.ValidationError as e:
        m = _QUOTED.match(str(e))
        if m is None:
            return convert(data, kind)
        path = m.group(2).lstrip(".")
        raise ConfigError(_unmarshal_error(kind, schema_kind, path), field=path) from None


def _unmarshal_error(kind: type[Any], schema_kind: str, path: str) -> str:
    """encoding/json's UnmarshalTypeError for a string in a number or boolean field, as the
    API server returns it (``json: cannot unmarshal string into Go struct field
    PodSpec.spec.terminationGracePeriodSeconds of type int64``; Go's decode.go, go1.22)."""
    from msgspec import inspect

    parts = re.findall(r"[^.\[\]]+", re.sub(r"\[\d+\]", "", path))
    from kubesched.api._schema import _schema

    schema = _schema()
    go_type = schema["kinds"].get(schema_kind, kind.__name__)
    struct = go_type
    for part in parts:
        struct = go_type
        go_type = re.sub(r"^(List|Dict)\[(?:str, )?(.*)\]$", r"\2", schema["types"].get(go_type, {}).get(part, ""))
    struct = re.sub(r"^V\d+(?:(?:alpha|beta)\d+)?", "", struct)
    info: Any = inspect.type_info(kind)
    for part in parts:
        while isinstance(info, (inspect.UnionType, inspect.ListType)):
            info = next(t for t in info.types if not isinstance(t, inspect.NoneType)) if isinstance(info, inspect.UnionType) else info.item_type
        if not isinstance(info, inspect.StructType):
            break
        info = next((f.type for f in info.fields if f.encode_name == part), None)
    while isinstance(info, inspect.UnionType):
        info = next(t for t in info.types if not isinstance(t, inspect.NoneType))
    if isinstance(info, inspect.IntType):
        go = "int32" if info.le is not None and info.le <= 2**31 - 1 else "int64"
    elif isinstance(info, inspect.FloatType):
        go = "float64"
    else:
        go = "bool"
    return f"json: cannot unmarshal string into Go struct field {struct}.{'.'.join(parts)} of type {go}"


def _read(path: str) -> str:
    """A manifest file's text; a failure is one ConfigError line (as load_documents's)."""
    try:
        return read_text(path)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror or e}", source=path) from None
    except ValueError:  # a NUL byte in the file name
        raise ConfigError("cannot read: invalid file name", source=repr(path)) from None


def _stream_list(
    path: str, text: str, expected: tuple[str, str], take: Callable[[str, int, int | None, Any], None]
) -> list[tuple[int, Any]]:
    """Decode the one ``List`` document of ``text``, passing each item to ``take`` as it is
    parsed (as ``_expand_lists`` gives them); the document, without its items, is returned.
    Raises Unusual when the file must be decoded the ordinary way."""
    api, kind = expected
    item_kind = kind[: -len("List")]

    def on_item(i: int, obj: Any) -> None:
        if item_kind and isinstance(obj, dict):
            obj = {"apiVersion": api, "kind": item_kind, **obj}
        take(path, 1, i, obj)

    roots = [d for d in documents(text, MAX_DEPTH, stream_items=expected, on_item=on_item) if d is not None]
    return list(enumerate(roots, start=1))


NODE_OS = "linux"
NODE_ARCH = "amd64"


def _kubelet_labels(node: Any) -> None:
    """The labels a Node's kubelet puts on it when it registers (``kubelet_node_status.go``
    ``initialNode`` / ``updateDefaultLabels``), where the manifest does not set them: a node
    of the input is a node whose kubelet runs."""
    defaults = {
        "kubernetes.io/hostname": node.metadata.name,
        "kubernetes.io/os": NODE_OS,
        "kubernetes.io/arch": NODE_ARCH,
        "beta.kubernetes.io/os": NODE_OS,
        "beta.kubernetes.io/arch": NODE_ARCH,
    }
    labels = node.metadata.labels
    if not all(k in labels for k in defaults):
        node.metadata.labels = {**labels, **{k: v for k, v in defaults.items() if k not in labels}}


def _offset_annotation(annotations: dict[str, str], key: str, where: str) -> float | None:
    """A duration annotation (``kubesched.io/arrival``, ``deletion``, ``duration``) in
    seconds, or None when absent; a malformed or negative one is bad input."""
    raw = annotations.get(key)
    if raw is None:
        return None
    fld = f"metadata.annotations[{key}]"
    try:
        value = parse_duration(raw)
    except ValueError as e:
        raise ConfigError(str(e), source=where, field=fld) from None
    if value < 0:
        raise ConfigError(f"Invalid value: {go_quote(raw)}: must not be negative", source=where, field=fld)
    return value


def _check_workload(obj: Any, kind: str, where: str, max_pods: int = MAX_PODS) -> None:
    """A Job, ReplicaSet or Deployment as the API server validates it: a pod template with
    containers (checked as a pod's), a selector for the apps kinds, sane counts."""
    spec = obj.spec
    tmpl = spec.template
    if not tmpl.spec.containers:
        raise ConfigError("Required value", source=where, field="spec.template.spec.containers")
    if kind == "Job":
        if spec.completion_mode not in (None, "Indexed", "NonIndexed"):
            raise ConfigError(
                f'Unsupported value: {go_quote(spec.completion_mode)}: supported values: "Indexed", "NonIndexed"',
                source=where,
                field="spec.completionMode",
            )
        if spec.completion_mode == "Indexed" and spec.completions is None:
            raise ConfigError("Required value: when completion mode is Indexed", source=where, field="spec.completions")
        names: tuple[str, ...] = ("parallelism", "completions", "backoff_limit")
    else:
        if spec.selector is None or not (spec.selector.match_labels or spec.selector.match_expressions):
            raise ConfigError("Required value", source=where, field="spec.selector")
        from kubesched.api._labels import selector_matches

        if not selector_matches(spec.selector, tmpl.metadata.labels):
            raise ConfigError(
                "Invalid value: `selector` does not match template `labels`",
                source=where,
                field="spec.template.metadata.labels",
            )
        names = ("replicas",)
    for n in names:
        v = getattr(spec, n)
        if v is not None and v < 0:
            camel = "backoffLimit" if n == "backoff_limit" else n
            raise ConfigError(
                f"Invalid value: {v}: must be greater than or equal to 0", source=where, field=f"spec.{camel}"
            )
        if v is not None and n != "backoff_limit" and v > max_pods:
            raise ConfigError(
                f"Invalid value: {v}: more pods than a run may make ({max_pods}; --max-pods sets it)",
                source=where,
                field=f"spec.{n}",
            )
    pod = Pod(metadata=tmpl.metadata, spec=tmpl.spec)
    try:
        _check_pod_template(pod)
    except ConfigError as e:
        raise e.at(field="spec.template", source=where) from None
    _offset_annotation(tmpl.metadata.annotations, DURATION_ANNOTATION, where + ", spec.template")


def _check_pod_template(pod: Pod) -> None:
    from kubesched.validation._validation import _check_pod_spec

    _check_pod_spec(pod, label_keys=False)  # per MatchLabelKeysInPodAffinity, later


# A pod's spec fields an update may change (ValidatePodUpdate); any other change is forbidden
_POD_MUTABLE = ("tolerations", "scheduling_gates", "active_deadline_seconds", "termination_grace_period_seconds")


def _check_update(old: Any, new: Any, kind: str, where: str) -> None:
    """As the API server refuses an update to an immutable field."""
    if kind == "Pod":
        for f in old.spec.__struct_fields__:
            if f in _POD_MUTABLE:
                continue
            if getattr(old.spec, f) != getattr(new.spec, f):
                camel = new.spec.__struct_encode_fields__[new.spec.__struct_fields__.index(f)]
                raise ConfigError(
                    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                    "(allow it to be set to 1 if it was previously negative)",
                    source=where,
                    field=f"spec.{camel}",
                )
    elif kind == "Job":
        for f, camel in (("template", "template"), ("completion_mode", "completionMode"), ("completions", "completions")):
            if getattr(old.spec, f) != getattr(new.spec, f):
                raise ConfigError("Invalid value: field is immutable", source=where, field=f"spec.{camel}")
    elif kind == "StatefulSet" and any(
        getattr(old.spec, f) != getattr(new.spec, f)
        for f in ("selector", "volume_claim_templates", "service_name", "pod_management_policy")
    ):
        raise ConfigError(
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
            "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            source=where,
            field="spec",
        )
    elif kind == "Workload" or kind == SCHEDULING_POD_GROUP_KIND:
        try:
            if kind == "Workload":
                check_workload_update(old, new)
            else:
                check_scheduling_pod_group_update(old, new)
        except ConfigError as e:
            raise e.at(source=where) from None
    elif kind == "StorageClass":
        for f, camel in (("parameters", "parameters"), ("provisioner", "provisioner"), ("reclaim_policy", "reclaimPolicy")):
            if getattr(old, f) != getattr(new, f):
                raise ConfigError(f"Forbidden: updates to {camel} are forbidden.", source=where, field=camel)
        if old.volume_binding_mode != new.volume_binding_mode:
            raise ConfigError("Invalid value: field is immutable", source=where, field="volumeBindingMode")
    elif kind in ("ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"):
        for path in _dra_immutable_changes(old, new, kind):
            raise ConfigError("Invalid value: field is immutable", source=where, field=path)
    if kind in ("ReplicaSet", "Deployment", "StatefulSet"):
        if old.spec.selector != new.spec.selector:
            raise ConfigError("Invalid value: field is immutable", source=where, field="spec.selector")
        if old.spec.template != new.spec.template:
            raise ConfigError(
                "Forbidden: a changed pod template (a rolling update) is not emulated",
                source=where,
                field="spec.template",
            )


def _dra_immutable_changes(old: Any, new: Any, kind: str) -> list[str]:
    """The immutable fields an update of a DRA object changes (``ValidateResourceClaimUpdate``,
    ``ValidateResourceClaimTemplateUpdate``: the spec; ``ValidateResourceSliceUpdate``: the
    pool's name, the driver, the node name)."""
    if kind != "ResourceSlice":
        return ["spec"] if old.spec != new.spec else []
    return [path for path, a, b in (
        ("spec.pool.name", old.spec.pool.name, new.spec.pool.name),
        ("spec.driver", old.spec.driver, new.spec.driver),
        ("spec.nodeName", old.spec.node_name, new.spec.node_name),
    ) if a != b]  # fmt: skip


def _check_priority_classes(manifests: list[Manifest]) -> None:
    """As the PriorityClass admission does when each object is created (in arrival order)."""
    from kubesched.validation._validation import check_priority_admission

    classes: dict[str, Manifest] = {}
    default = ""
    for m in manifests:  # in creation order
        if isinstance(m.obj, PriorityClass):
            classes[m.obj.metadata.name] = m
            if m.obj.global_default:
                if default:
                    raise ConfigError(
                        f"Forbidden: PriorityClass {default} is already marked as default. "
                        "Only one default can exist",
                        source=m.label,
                        field="globalDefault",
                    )
                default = m.obj.metadata.name
        elif isinstance(m.obj, Pod):
            name = m.obj.spec.priority_class_name
            if not name or name in classes or name in SYSTEM_PRIORITY_CLASSES:
                check_priority_admission(m.obj, classes[name].obj if name in classes else None, source=m.label)
                continue
            later = next((c for c in manifests if isinstance(c.obj, PriorityClass) and c.obj.metadata.name == name), None)
            why = f" (it arrives later, at {later.arrival:g}s)" if later is not None else ""
            raise ConfigError(
                f"no PriorityClass with name {name} was found{why}",
                source=m.label,
                field="spec.priorityClassName",
            )


def _check_device_classes(manifests: list[Manifest]) -> None:
    """Every DeviceClass a ResourceClaim or ResourceClaimTemplate names (``exactly`` or a
    ``firstAvailable`` subrequest) is among the input's DeviceClasses, at any arrival.

    kubesched's choice: upstream's API server does not check it (``validation.go`` of v1.35.4
    looks no class up) and the fake API server and the live transport accept such a claim as
    it does; a claim created later through the API is the scheduler's
    ``device class x does not exist`` when a pod needs it.  A scenario file is checked whole,
    so a class named nowhere in it is a mistake in the file, refused before the run."""
    classes = {m.obj.metadata.name for m in manifests if m.kind == "DeviceClass"}
    for m in sorted(manifests, key=lambda m: m.order):  # file order: the first mistake reads first
        if m.kind == "ResourceClaim":
            devices, fld = m.obj.spec.devices, "spec.devices.requests"
        elif m.kind == "ResourceClaimTemplate":
            devices, fld = m.obj.spec.spec.devices, "spec.spec.devices.requests"
        else:
            continue
        for i, req in enumerate(devices.requests):
            named = [(f"{fld}[{i}].exactly", req.exactly)] if req.exactly is not None else []
            named += [(f"{fld}[{i}].firstAvailable[{j}]", sub) for j, sub in enumerate(req.first_available)]
            for path, r in named:
                if r.device_class_name not in classes:
                    raise ConfigError(
                        f"Not found: {go_quote(r.device_class_name)}: no DeviceClass of this name in the input",
                        source=m.label,
                        field=f"{path}.deviceClassName",
                    )


def system_priority_classes() -> list[PriorityClass]:
    from kubesched.api._objects import ObjectMeta

    return [PriorityClass(metadata=ObjectMeta(name=n), value=v) for n, v in SYSTEM_PRIORITY_CLASSES.items()]


__all__ = [
    "ARRIVAL_ANNOTATION", "DELETION_ANNOTATION", "DRAIN_ANNOTATION", "DURATION_ANNOTATION", "MAX_PODS", "Manifest",
    "load_documents", "load_manifests", "system_priority_classes",
]
