"""kubesched: the Kubernetes scheduling framework in Python, on anyio, extended through pluggy."""

from __future__ import annotations

from ._config import SchedulerConfig
from ._entrypoints import load_entry_point_plugins
from ._errors import (
    ConfigError,
    ConflictError,
    KubeschedError,
    NotFoundError,
    TransportError,
    UnavailableError,
)
from ._events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from ._events import Resource as EventResource
from ._framework import (
    CycleState,
    Framework,
    PluginError,
    PostFilterResult,
    PreFilterResult,
    WaitingPod,
    per_node_filter,
    per_node_score,
)
from ._nodeinfo import NodeBatch, NodeInfo, PodInfo
from ._objects import (
    Binding,
    Event,
    Lease,
    Node,
    Pod,
    PodDisruptionBudget,
    PodGroup,
    PriorityClass,
)
from ._queue import QueuedPodInfo, SchedulingQueue
from ._resources import QuantityError, Resource, parse_quantity, pod_requests
from ._scheduler import Scheduler
from ._status import Code, Diagnosis, FitError, Status
from ._transport import Transport, WatchEvent
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
    "hookimpl",
    "hookspec",
    "load_entry_point_plugins",
    "parse_quantity",
    "per_node_filter",
    "per_node_score",
    "pod_requests",
    "__version__",
]
