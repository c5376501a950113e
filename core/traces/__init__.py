"""Published cluster traces as scenarios (docs/traces.md).

One format so far, ``openb`` (the Alibaba GPU cluster trace v2023)::

    NODES.csv ─► read_nodes ─► [TraceNode]
    PODS.csv  ─► read_tasks ─► [Task] ─► group_units (gangs) ─► replay, or fill (the paper's
                                          experiment, by seed) ─► scenario(): Nodes, PodGroups, Pods
    write(out, nodes_path, pods_path, Options(...)): the manifests, one document at a time

Bad input is one ConfigError line naming the file, the row and the column.  The module
:mod:`._openb` documents what comes out of each row.
"""

from kubesched.traces._openb import (
    FILL_FACTOR,
    GANG_APIS,
    GANGS,
    GPU,
    GPU_MILLI,
    MODEL_LABEL,
    MODES,
    NODE_PODS,
    SHARED_GPU,
    Options,
    Task,
    TraceNode,
    Unit,
    fill,
    group_units,
    read_nodes,
    read_tasks,
    scenario,
    write,
)

__all__ = [
    "FILL_FACTOR",
    "GANGS",
    "GANG_APIS",
    "GPU",
    "GPU_MILLI",
    "MODEL_LABEL",
    "MODES",
    "NODE_PODS",
    "SHARED_GPU",
    "Options",
    "Task",
    "TraceNode",
    "Unit",
    "fill",
    "group_units",
    "read_nodes",
    "read_tasks",
    "scenario",
    "write",
]
