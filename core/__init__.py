"""kubesched: the Kubernetes scheduling framework in Python, on anyio, extended through pluggy."""

from __future__ import annotations

from kubesched.api._objects import (
    Binding,
    Event,
    Lease,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
)
from kubesched.api._resources import QuantityError, Resource, parse_quantity, pod_requests
from kubesched.config._config import SchedulerConfig
from kubesched.config._load import load_config
from kubesched.queue._scheduling_queue import QueuedPodInfo, SchedulingQueue
from kubesched.runtime._entrypoints import load_entry_point_plugins
from kubesched.runtime._events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.runtime._events import Resource as EventResource
from kubesched.runtime._framework import (
    CycleState,
    Framework,
    PluginError,
    PostFilterResult,
    PreFilterResult,
    WaitingPod,
    per_node_filter,
    per_node_score,
)
from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, PodInfo
from kubesched.runtime._status import Code, Diagnosis, FitError, Status
from kubesched.scheduler._scheduler import Scheduler

# kubesched.dra registers its CEL compile check with kubesched.validation (set_cel_check), so a
# manifest's selector is checked as the API server checks it wherever manifests are validated.
from . import dra as _dra  # noqa: E402, F401, I001
from ._errors import (
    ConfigError,
    ConflictError,
    KubeschedError,
    NotFoundError,
    TransportError,
    UnavailableError,
    plain_exception,
)
from ._transport import Transport, WatchEvent, WatchEventType
from .hookspecs import hookimpl, hookspec

__version__ = "0.1.0"

__all__ = [
    "ActionType",
    "Binding",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "ConfigError",
    "ConflictError",
    "CycleState",
    "Diagnosis",
    "Event",
    "EventResource",
    "FitError",
    "Framework",
    "KubeschedError",
    "Lease",
    "Node",
    "NodeBatch",
    "NodeInfo",
    "NotFoundError",
    "Pod",
    "PodDisruptionBudget",
    "PodGroup",
    "PodInfo",
    "PluginError",
    "PostFilterResult",
    "PreFilterResult",
    "PriorityClass",
    "QuantityError",
    "QueuedPodInfo",
    "QueueingHint",
    "Resource",
    "Scheduler",
    "SchedulerConfig",
    "SchedulingQueue",
    "Status",
    "Transport",
    "TransportError",
    "UnavailableError",
    "WaitingPod",
    "WatchEvent",
    "WatchEventType",
    "hookimpl",
    "hookspec",
    "load_config",
    "load_entry_point_plugins",
    "parse_quantity",
    "per_node_filter",
    "per_node_score",
    "plain_exception",
    "pod_requests",
    "__version__",
]
