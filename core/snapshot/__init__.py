"""A snapshot: a live cluster (or the fake API server) read into a scenario ``simulate`` takes.

::

    snapshot(Options(kubeconfig=..., namespaces=..., selector=...), out)
        kind by kind (KINDS): list pages (limit/continue) ─► decode ─► Reducer (what simulate
        reads, times shifted to SIMULATE_EPOCH) ─► one YAML document each, written at once;
        pending pods spooled and written last, oldest first
        ─► the Reducer: counts written and left out, notes; summary(reducer, target) says them

Memory is one page plus a sort key per pending pod.  Secrets and ConfigMaps are never read.
The module :mod:`._snapshot` says what is kept of each kind.
"""

from kubesched.snapshot._snapshot import (
    DEFAULT_CHUNK_SIZE,
    KINDS,
    SIMULATE_EPOCH,
    Counts,
    Options,
    Progress,
    Reducer,
    snapshot,
    summary,
)

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "KINDS",
    "SIMULATE_EPOCH",
    "Counts",
    "Options",
    "Progress",
    "Reducer",
    "snapshot",
    "summary",
]
