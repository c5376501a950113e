"""NodeDeclaredFeatures: a pod whose spec needs a feature its node must declare fits only the
nodes whose ``status.declaredFeatures`` list it (KEP-5328; upstream
``plugins/nodedeclaredfeatures``, kubernetes#133389; alpha off in 1.35, beta on in 1.36).

- Where it runs: ``applyFeatureGates`` *appends* it to the default profile when the gate is on
  (it comes last, after DefaultBinder; a Filter verdict of any other plugin comes first).  In a
  profile while the gate is off, upstream's disabled plugin: PreFilter Skip, Filter passes.
- PreFilter: the pod's requirements inferred from its spec (component-helpers
  ``nodedeclaredfeatures`` ``InferForPodScheduling`` over the release's feature registry); none:
  Skip, so a pod that needs nothing costs one look at its spec.
- Filter: every requirement in the node's declared features, else UnschedulableAndUnresolvable
  ``node(s) didn't match Pod's required features``.
- Events: a node added, or one whose declared features changed (``UpdateNodeDeclaredFeature``:
  kubesched registers node updates with a hint that compares the lists).

The registry's features that infer a requirement at scheduling time (the others infer only on a
resize, which the scheduler does not see): ``RestartAllContainersOnContainerExits`` (a container
or init container with a ``restartPolicyRules`` rule whose action is ``RestartAllContainers``),
and from 1.36 ``UserNamespacesHostNetworkSupport`` (``hostNetwork: true`` with ``hostUsers:
false``).  The v1.36 registry (component-helpers v0.36.x ``features/registry.go``) has both; the
1.35 one is read from an early copy that has only the resize feature, and kubernetes#133389 /
KEP-5532 date the restart rule to 1.35 — see docs/versions.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Handle,
    QueueingHint,
    Status,
    hookimpl,
    per_node_filter,
)

from ._helper import SKIP

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Node, NodeInfo, Pod

NAME = "NodeDeclaredFeatures"
ERR_REASON = "node(s) didn't match Pod's required features"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"


def required_features(pod: Pod, version: tuple[int, int]) -> frozenset[str]:
    """``InferForPodScheduling``: the declared features ``pod`` needs at ``version``."""
    spec = pod.spec
    restart_all = False
    for c in (*spec.containers, *spec.init_containers) if spec.init_containers else spec.containers:
        rules = c.restart_policy_rules  # most containers have none: no generator for them
        if rules and any(rule.action == "RestartAllContainers" for rule in rules):
            restart_all = True
            break
    host_network = spec.host_network and spec.host_users is False and version >= (1, 36)
    if not restart_all and not host_network:
        return _NONE
    out: set[str] = set()
    if restart_all:
        out.add(RESTART_ALL_CONTAINERS)
    if host_network:
        out.add(USER_NAMESPACES_HOST_NETWORK)
    return frozenset(out)


_NONE: frozenset[str] = frozenset()


class NodeDeclaredFeatures:
    """PreFilter, Filter and EnqueueExtensions (see the module)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle
        self.version = handle.emulated_version
        # the gate: alpha off in 1.35, beta on in 1.36 (upstream's VersionedSpecs after v1.36.0)
        self.enabled = self.version >= (1, 35) and bool(
            handle.feature_gates.get("NodeDeclaredFeatures", self.version >= (1, 36))
        )
        self._rejected = Status.unresolvable(ERR_REASON)  # one status for every rejected node

    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE), self.is_schedulable_after_node_change
            )
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        """A new node, or one whose declared features changed."""
        if old is not None and old.status.declared_features == new.status.declared_features:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    @hookimpl
    def kubesched_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not self.enabled:
            return SKIP
        reqs = required_features(pod, self.version)
        if not reqs:
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, reqs)
        return None

    # Filter, written per node: it runs only for the few pods that need a declared feature
    # (PreFilter skips the others), so a Python call per node costs nothing that matters, and
    # the check reads as upstream's.  The batch plugins (NodeResourcesFit, TaintToleration...)
    # show the other form: columns over every node of the batch at once.
    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        try:
            reqs: frozenset[str] = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as e:
            return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: {e.args[0]}')
        node = node_info.node
        if node is None or not reqs.issubset(node.status.declared_features):
            return self._rejected
        return None


def new(args: dict[str, Any] | None, handle: Handle) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(args, handle)


__all__ = ["ERR_REASON", "NAME", "NodeDeclaredFeatures", "new", "required_features"]
