"""Transports: how the scheduler reaches a cluster (``fake``: in memory; ``kube``: a live API)."""

from __future__ import annotations

from .fake import EventRecord, FakeCluster, Faults

__all__ = ["EventRecord", "FakeCluster", "Faults"]
