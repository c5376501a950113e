"""Server-side printing: the ``meta.k8s.io/v1`` Table that ``kubectl get`` asks for.

The columns and cells follow kube-apiserver's printers (``pkg/printers/internalversion``) for the
kinds served here; each row of the registry names its ``Printer``, and a kind without one gets
``DEFAULT`` (Name and Age), as a CRD without printer columns does.
Each row carries the object's metadata as a PartialObjectMetadata, so ``kubectl get -A`` can add
the NAMESPACE column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "DEFAULT",
    "EVENT",
    "LEASE",
    "NAMESPACE",
    "NODE",
    "POD",
    "POD_DISRUPTION_BUDGET",
    "PRIORITY_CLASS",
    "Printer",
    "SCALE",
    "columns",
    "human_duration",
    "ready_of_desired",
    "table",
]

_NAME_DOC = "Name must be unique within a namespace."
_AGE_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created."
)


def _col(
    name: str, type_: str = "string", priority: int = 0, fmt: str = "", doc: str = ""
) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": doc, "priority": priority}


_NAME = _col("Name", fmt="name", doc=_NAME_DOC)
_AGE = _col("Age", doc=_AGE_DOC)


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: 5s, 2m30s, 10m, 3h20m, 2d3h, ..."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _parse_time(ts: Any) -> datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _since(ts: Any, now: datetime) -> str:
    t = _parse_time(ts)
    if t is None:
        return "<unknown>"
    return human_duration((now - t).total_seconds())


def _or_none(v: Any) -> str:
    return str(v) if v not in (None, "") else "<none>"


# --- per-kind printers: (columns, row cells of one object) ---------------------------------------


@dataclass(frozen=True)
class Printer:
    """The Table columns of one kind, and the cells of one object (in wire form) under them."""

    columns: list[dict[str, Any]]
    cells: Callable[[dict[str, Any], datetime], list[Any]]


_POD_COLUMNS = [
    _NAME,
    _col("Ready", doc="The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", doc="The aggregate status of the containers in this pod."),
    _col(
        "Restarts",
        doc="The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    _AGE,
    _col("IP", priority=1, doc="podIP address allocated to the pod."),
    _col("Node", priority=1, doc="NodeName indicates in which node this pod is scheduled."),
    _col(
        "Nominated Node",
        priority=1,
        doc="nominatedNodeName is set only when this pod preempts other pods on the node.",
    ),
    _col(
        "Readiness Gates",
        priority=1,
        doc="If specified, all readiness gates will be evaluated for pod readiness.",
    ),
]


def _pod(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = obj.get("metadata", {}), obj.get("spec", {}), obj.get("status", {})
    total = len(spec.get("containers") or [])
    reason = status.get("reason") or status.get("phase") or ""
    # the kubelet emulation starts every container of a Running pod at once
    ready = total if status.get("phase") == "Running" else 0
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    if meta.get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        "0",
        _since(meta.get("creationTimestamp"), now),
        _or_none(status.get("podIP")),
        _or_none(spec.get("nodeName")),
        _or_none(status.get("nominatedNodeName")),
        f"0/{len(gates)}" if gates else "<none>",
    ]


_NODE_COLUMNS = [
    _NAME,
    _col("Status", doc="The status of the node"),
    _col("Roles", doc="The roles of the node"),
    _AGE,
    _col("Version", doc="Kubelet Version reported by the node."),
    _col("Internal-IP", priority=1, doc="List of addresses reachable to the node."),
    _col("External-IP", priority=1, doc="List of addresses reachable to the node."),
    _col(
        "OS-Image",
        priority=1,
        doc="OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    ),
    _col(
        "Kernel-Version",
        priority=1,
        doc="Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    ),
    _col(
        "Container-Runtime",
        priority=1,
        doc="ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    ),
]


def _node(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = obj.get("metadata", {}), obj.get("spec", {}), obj.get("status", {})
    states = []
    for c in status.get("conditions") or []:
        if c.get("type") == "Ready":
            states = ["Ready" if c.get("status") == "True" else "NotReady"]
    if not states:
        states = ["Unknown"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = set()
    for k, v in (meta.get("labels") or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            roles.add(k.removeprefix("node-role.kubernetes.io/"))
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    addresses = status.get("addresses") or []
    internal = [a.get("address") for a in addresses if a.get("type") == "InternalIP"]
    external = [a.get("address") for a in addresses if a.get("type") == "ExternalIP"]
    info = status.get("nodeInfo") or {}
    return [
        meta.get("name", ""),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        internal[0] if internal else "<none>",
        external[0] if external else "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


_PC_COLUMNS = [
    _NAME,
    _col("Value", "integer", doc="value represents the integer value of this priority class."),
    _col(
        "Global-Default",
        "boolean",
        doc="globalDefault specifies whether this PriorityClass should be considered as the default priority.",
    ),
    _AGE,
    _col(
        "PreemptionPolicy",
        doc="preemptionPolicy is the Policy for preempting pods with lower priority.",
    ),
]


def _priority_class(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta = obj.get("metadata", {})
    return [
        meta.get("name", ""),
        obj.get("value", 0),
        bool(obj.get("globalDefault", False)),
        _since(meta.get("creationTimestamp"), now),
        obj.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


_PDB_COLUMNS = [
    _NAME,
    _col("Min Available", doc="The minimum number of pods that must be available."),
    _col("Max Unavailable", doc="The maximum number of pods that may be unavailable."),
    _col(
        "Allowed Disruptions",
        "integer",
        doc="Calculated number of pods that may be disrupted at this time.",
    ),
    _AGE,
]


def _pdb(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta, spec = obj.get("metadata", {}), obj.get("spec", {})
    status = obj.get("status") or {}
    return [
        meta.get("name", ""),
        str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
        str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
        status.get("disruptionsAllowed", 0),
        _since(meta.get("creationTimestamp"), now),
    ]


_NS_COLUMNS = [_NAME, _col("Status", doc="The status of the namespace"), _AGE]


def _namespace(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta = obj.get("metadata", {})
    phase = (obj.get("status") or {}).get("phase", "Active")
    return [meta.get("name", ""), phase, _since(meta.get("creationTimestamp"), now)]


_EVENT_COLUMNS = [
    _col("Last Seen", doc="Time when last event occurred."),
    _col("Type", doc="Type of this event."),
    _col("Reason", doc="Reason is why the action was taken."),
    _col("Object", doc="The object that this event is about."),
    _col("Subobject", priority=1, doc="Subobject of the object that this event is about."),
    _col("Source", priority=1, doc="The component reporting this event."),
    _col("Message", doc="A human-readable description of the status of this operation."),
    _col("First Seen", priority=1, doc="Time when first event occurred."),
    _col("Count", priority=1, doc="The number of times this event has occurred."),
    _col("Name", priority=1, fmt="name", doc=_NAME_DOC),
]


def _event(obj: dict[str, Any], now: datetime) -> list[Any]:
    """A core/v1 Event (events.k8s.io/v1 events are printed after conversion to it), as
    printEvent: first seen at ``eventTime`` without a firstTimestamp, last seen at the series'
    last observation when there is one; a count of 1 when none is set (the new API's
    singletons); the source as ``component, host`` (or the reporting controller and
    instance)."""
    meta = obj.get("metadata", {})
    ref = obj.get("involvedObject") or {}
    first = obj.get("firstTimestamp") or obj.get("eventTime") or meta.get("creationTimestamp")
    last = obj.get("lastTimestamp") or first
    count = obj.get("count") or 1
    series = obj.get("series")
    if isinstance(series, dict):
        last, count = series.get("lastObservedTime") or last, series.get("count") or count
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [
        _since(last, now),
        obj.get("type", ""),
        obj.get("reason", ""),
        f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}",
        ref.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        obj.get("message", "").strip(),
        _since(first, now),
        count,
        meta.get("name", ""),
    ]


_SCALE_COLUMNS = [
    _NAME,
    _col("Desired", "integer", doc="desired number of instances for the scaled object."),
    _col("Available", "integer", doc="actual number of observed instances of the scaled object."),
    _AGE,
]


def _scale(obj: dict[str, Any], now: datetime) -> list[Any]:
    """An autoscaling/v1 Scale (``kubectl get --subresource=scale``)."""
    meta = obj.get("metadata", {})
    return [
        meta.get("name", ""),
        int((obj.get("spec") or {}).get("replicas") or 0),
        int((obj.get("status") or {}).get("replicas") or 0),
        _since(meta.get("creationTimestamp"), now),
    ]


_LEASE_COLUMNS = [_NAME, _col("Holder", doc="HolderIdentity is the ID of the lease holder."), _AGE]


def _lease(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta = obj.get("metadata", {})
    holder = (obj.get("spec") or {}).get("holderIdentity") or ""
    return [meta.get("name", ""), holder, _since(meta.get("creationTimestamp"), now)]


_CLAIM_COLUMNS = [
    _NAME,
    _col("State", doc="A summary of the current state (allocated, pending, reserved, etc.)."),
    _AGE,
]


def claim_state(obj: dict[str, Any]) -> str:
    """``resourceClaimState`` (printers.go): deleted, pending or allocated, reserved."""
    meta, status = obj.get("metadata", {}), obj.get("status") or {}
    states = []
    if meta.get("deletionTimestamp"):
        states.append("deleted")
    if not status.get("allocation"):
        if not meta.get("deletionTimestamp"):
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _resource_claim(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta = obj.get("metadata", {})
    return [meta.get("name", ""), claim_state(obj), _since(meta.get("creationTimestamp"), now)]


def _default(obj: dict[str, Any], now: datetime) -> list[Any]:
    meta = obj.get("metadata", {})
    return [meta.get("name", ""), _since(meta.get("creationTimestamp"), now)]


POD = Printer(_POD_COLUMNS, _pod)
NODE = Printer(_NODE_COLUMNS, _node)
PRIORITY_CLASS = Printer(_PC_COLUMNS, _priority_class)
POD_DISRUPTION_BUDGET = Printer(_PDB_COLUMNS, _pdb)
NAMESPACE = Printer(_NS_COLUMNS, _namespace)
EVENT = Printer(_EVENT_COLUMNS, _event)
LEASE = Printer(_LEASE_COLUMNS, _lease)
SCALE = Printer(_SCALE_COLUMNS, _scale)
RESOURCE_CLAIM = Printer(_CLAIM_COLUMNS, _resource_claim)
DEFAULT = Printer([_NAME, _AGE], _default)
"""Name and Age: a kind without printers of its own (as a CRD without printer columns)."""


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _cell(v: Any) -> Any:
    if isinstance(v, list):
        return ",".join(str(x) for x in v) if v else "<none>"
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items()) if v else "<none>"
    return v if isinstance(v, int | float) and not isinstance(v, bool) else _or_none(v)


def columns(*cols: tuple[str, str]) -> Printer:
    """Name, a column per (title, dotted path into the object), Age: the printer of a kind
    whose columns are fields as they are (as a CRD's ``additionalPrinterColumns``)."""

    def cells(obj: dict[str, Any], now: datetime) -> list[Any]:
        meta = obj.get("metadata", {})
        out: list[Any] = [meta.get("name", "")]
        out += [_cell(_at(obj, path)) for _, path in cols]
        return [*out, _since(meta.get("creationTimestamp"), now)]

    return Printer([_NAME, *(_col(title) for title, _ in cols), _AGE], cells)


def ready_of_desired(*cols: tuple[str, str]) -> Printer:
    """Name, Ready as ``readyReplicas/replicas``, a column per (title, dotted path) of counts,
    Age: how ``printers.go`` prints Deployments (``printDeployment``: Up-to-date, Available) and
    StatefulSets (``printStatefulSet``); an unset count is 0, as Go's int32."""

    def count(obj: dict[str, Any], path: str) -> int:
        v = _at(obj, path)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    def cells(obj: dict[str, Any], now: datetime) -> list[Any]:
        meta = obj.get("metadata", {})
        ready = f"{count(obj, 'status.readyReplicas')}/{count(obj, 'spec.replicas')}"
        out: list[Any] = [meta.get("name", ""), ready, *(count(obj, path) for _, path in cols)]
        return [*out, _since(meta.get("creationTimestamp"), now)]

    ready_col = _col("Ready", doc="Number of the pod with ready state")
    return Printer([_NAME, ready_col, *(_col(title) for title, _ in cols), _AGE], cells)


def table(
    printer: Printer,
    objects: list[dict[str, Any]],
    now: datetime,
    *,
    resource_version: str = "",
    include_object: str = "Metadata",
    continue_token: str = "",
) -> dict[str, Any]:
    """The Table for ``objects`` (wire form) printed by ``printer``; ``include_object`` is the
    ``?includeObject=`` parameter (None, Metadata or Object)."""
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": printer.cells(obj, now)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata", {}),
            }
        rows.append(row)
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": printer.columns,
        "rows": rows,
    }
