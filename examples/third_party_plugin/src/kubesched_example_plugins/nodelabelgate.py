"""NodeLabelGate: a Filter plugin written as a plain per-node function.

Args (pluginConfig)::

    - name: NodeLabelGate
      args:
        label: example.io/pool        # required: nodes without this label are rejected
        values: [batch, general]      # optional: and the label's value must be one of these
"""

from __future__ import annotations

from typing import Any

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    ConfigError,
    CycleState,
    EventResource,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
    per_node_filter,
)

NAME = "NodeLabelGate"


class NodeLabelGate:
    """Filter: reject nodes that lack ``args.label`` (or whose value is not in ``args.values``)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        args = args or {}
        label = args.get("label")
        if not isinstance(label, str) or not label:
            # raised from a factory, a ConfigError is reported at pluginConfig[i].args.label
            raise ConfigError("Required value: a label key", field="label")
        values = args.get("values")
        if values is not None and (
            not isinstance(values, list) or not all(isinstance(v, str) for v in values)
        ):
            raise ConfigError(
                f"Invalid value: {values!r}: must be a list of strings", field="values"
            )
        self.label = label
        self.values = None if values is None else frozenset(values)
        # The reasons a pending pod reports ("0/3 nodes are available: 2 node(s) didn't ...").
        # Unresolvable: preempting pods cannot add a label to a node.
        self.missing = Status.unresolvable(f"node(s) didn't have label {label}")
        self.wrong_value = Status.unresolvable(
            f"node(s) had label {label} with a value not in [{', '.join(sorted(values or ()))}]"
        )

    def _check(self, labels: dict[str, str]) -> Status | None:
        value = labels.get(self.label)
        if value is None:
            return self.missing
        if self.values is not None and value not in self.values:
            return self.wrong_value
        return None

    # Filter: kubesched's Filter hook takes a batch of nodes; per_node_filter adapts a function
    # of one node into it (returning None means the node passes).
    @hookimpl
    @per_node_filter
    def kubesched_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._check(node_info.labels)

    # EnqueueExtensions: a pod this plugin rejected is retried only when a node that now
    # passes appears or gets its labels changed.
    @hookimpl
    def kubesched_events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._is_schedulable_after_node_change,
            )
        ]

    def _is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Node) -> QueueingHint:
        if self._check(new.metadata.labels) is None:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
