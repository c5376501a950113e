"""The live Kubernetes API transport: list-then-watch, binds, status patches, events, leases.

Configuration comes from a kubeconfig, the pod's service account, or a bare ``--server`` URL
(:func:`load_config`); requests go through httpx (anyio-native: asyncio or trio) with a
client-side QPS limit; objects decode with msgspec into kubesched's API structs.
"""

from __future__ import annotations

from ._auth import ExecConfig
from ._client import DEFAULT_BURST, DEFAULT_QPS, ApiClient, GoneError, TokenBucket
from ._config import ClusterConfig, in_cluster_config, load_config, load_kubeconfig
from ._leader import (
    DEFAULT_SCHEDULER_LEASE,
    LeaderElectionLost,
    LeaderElector,
    default_identity,
    live_lease_holder,
)
from ._transport import KubeTransport
from ._watch import RESOURCES, WORKLOAD_API_RESOURCES, KubeWatch, Reflector, Resource, resources_for

__all__ = [
    "DEFAULT_BURST",
    "DEFAULT_SCHEDULER_LEASE",
    "DEFAULT_QPS",
    "RESOURCES",
    "WORKLOAD_API_RESOURCES",
    "ApiClient",
    "ClusterConfig",
    "ExecConfig",
    "GoneError",
    "KubeTransport",
    "KubeWatch",
    "LeaderElectionLost",
    "LeaderElector",
    "Reflector",
    "Resource",
    "TokenBucket",
    "default_identity",
    "in_cluster_config",
    "load_config",
    "live_lease_holder",
    "load_kubeconfig",
    "resources_for",
]
