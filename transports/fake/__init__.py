"""The in-memory fake cluster transport: an API server, kubelet and disruption controller in
virtual time, with fault injection for tests."""

from __future__ import annotations

from ._cluster import EventRecord, FakeCluster, Faults, match_label_selector

__all__ = ["EventRecord", "FakeCluster", "Faults", "match_label_selector"]
