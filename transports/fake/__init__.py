"""The in-memory fake cluster transport: a store (the API server's storage, watch fan-out, fault
injection for tests) plus controllers fed by it (admission, kubelet, disruption controller), in
virtual time."""

from __future__ import annotations

from ._cluster import EventRecord, FakeCluster, Faults, match_label_selector

__all__ = ["EventRecord", "FakeCluster", "Faults", "match_label_selector"]
