"""The caches that spare a scan per cycle: the nominator's per-priority counts and the
ClusterState label index.  Each is checked against the scan it replaces."""

from __future__ import annotations

import random
from typing import Any

from kubesched.api._objects import Pod
from kubesched.cache._cache import Snapshot
from kubesched.queue._scheduling_queue import Nominator
from kubesched.runtime._nodeinfo import NodeInfo, PodInfo, pod_value
from kubesched.scheduler._scheduler import ClusterState
from kubesched.testing import make_pod


def _reference_nominated(nom: Nominator, pi: PodInfo) -> set[str]:
    """The scan ``_nodes_with_nominated_pods`` used to do."""
    return {
        node
        for node, pods in nom.nominated_pods.items()
        if any(p.priority >= pi.priority and p.uid != pi.uid for p in pods)
    }


NODES = ["n1", "n2", "n3"]


def _snapshot() -> Snapshot:
    snap = Snapshot()
    snap.names = list(NODES)
    snap.index = {n: i for i, n in enumerate(NODES)}
    snap.node_infos = [NodeInfo(name=n) for n in NODES]
    snap.tree_generation = 1
    return snap


SNAP = _snapshot()


def _nodes_with_nominated_pods(nom: Nominator, pi: PodInfo) -> set[str]:
    """The nodes the two-pass Filter treats as having nominated pods, from the nominator's arrays."""
    view = nom.view(SNAP, pi.priority, pi.uid)
    if view is None:
        return set()
    assert view.counts.sum() > 0
    return {NODES[i] for i in range(len(NODES)) if view.counts[i] > 0}


def _view_matches_scan(nom: Nominator, pi: PodInfo) -> None:
    """Per node: the count, the pods and the summed requests of the view equal the scan's."""
    view = nom.view(SNAP, pi.priority, pi.uid)
    for row, node in enumerate(NODES):
        pods = [p for p in nom.for_node(node) if p.priority >= pi.priority and p.uid != pi.uid]
        if view is None:
            assert pods == []
            continue
        assert view.counts[row] == len(pods)
        assert view.pods(row) == pods
        for kind, resource in (("requested", "cpu"), ("requested", "pods"), ("non_zero_requested", "memory")):
            assert view.delta(kind, resource)[row] == sum(pod_value(p, kind, resource) for p in pods)


def test_nominator_generation_and_cache() -> None:
    nom = Nominator()
    a = PodInfo(make_pod("a").priority(10).obj())
    b = PodInfo(make_pod("b").priority(5).obj())
    g0 = nom.generation
    nom.add(a, "n1")
    assert nom.generation > g0
    counts, nodes = nom.counts_at_or_above(5)
    assert counts == {"n1": 1} and nodes == {"n1"}
    assert nom.counts_at_or_above(5)[1] is nodes  # cached
    g1 = nom.generation
    nom.delete("nobody")  # no change: no bump
    assert nom.generation == g1
    nom.add(b, "n1")
    assert nom.generation > g1
    assert nom.counts_at_or_above(5)[0] == {"n1": 2}
    assert nom.counts_at_or_above(6)[0] == {"n1": 1}
    # the pod itself is excluded: a alone qualifies at priority 10, and a is the pod asking
    assert _nodes_with_nominated_pods(nom, a) == set()
    assert _nodes_with_nominated_pods(nom, b) == {"n1"}
    nom.update(b.pod, PodInfo(make_pod("b").priority(5).obj()))  # keeps b's nomination
    assert nom.counts_at_or_above(5)[0] == {"n1": 2}
    nom.delete(a.uid)
    assert _nodes_with_nominated_pods(nom, b) == set()
    assert _nodes_with_nominated_pods(nom, PodInfo(make_pod("c").priority(1).obj())) == {"n1"}


def test_nominator_cache_matches_scan() -> None:
    rng = random.Random(7)
    nom = Nominator()
    pis = [
        PodInfo(make_pod(f"p{i}").priority(rng.randrange(4)).req(cpu=f"{rng.randrange(1, 9) * 100}m").obj())
        for i in range(12)
    ]
    for step in range(2000):
        pi = rng.choice(pis)
        r = rng.random()
        if r < 0.4:
            nom.add(pi, rng.choice(["n1", "n2", "n3", "n4", ""]))  # n4: a node the snapshot lacks
        elif r < 0.55:
            nom.delete(pi.uid)
        elif r < 0.65:
            nom.update(pi.pod, pi)
        asking = rng.choice(pis)
        assert _nodes_with_nominated_pods(nom, asking) == _reference_nominated(nom, asking) - {"n4"}
        if step % 3 == 0:
            _view_matches_scan(nom, asking)
        if step % 500 == 499:
            SNAP.tree_generation += 1  # the node set changed: the views start over


def _labelled(name: str, ns: str, labels: dict[str, str], uid: str | None = None) -> Pod:
    pod = make_pod(name).namespace(ns).obj()
    pod.metadata.labels = dict(labels)
    if uid is not None:
        pod.metadata.uid = uid
    return pod


def _reference_with_label(cluster: ClusterState, ns: str | None, key: str, value: str) -> list[Pod]:
    return [
        p
        for p in cluster.pods.values()
        if (ns is None or p.metadata.namespace == ns) and p.metadata.labels.get(key) == value
    ]


def test_pods_with_label_basic() -> None:
    cluster = ClusterState()
    p1 = _labelled("p1", "ns", {"g": "a"})
    p2 = _labelled("p2", "ns", {"g": "b"})
    p3 = _labelled("p3", "other", {"g": "a"})
    p4 = _labelled("p4", "ns", {"g": "a"})
    for p in (p1, p2, p3):
        cluster.pods[p.metadata.uid] = p
    cluster.index_label("g")
    cluster.pods[p4.metadata.uid] = p4
    assert cluster.pods_with_label("ns", "g", "a") == [p1, p4]
    assert cluster.pods_with_label("other", "g", "a") == [p3]
    assert cluster.pods_with_label("ns", "g", "zzz") == []
    assert cluster.pods_with_label(None, "g", "a") == [p1, p3, p4]  # every namespace
    # p2 joins group a by a label change: it keeps its place in the store's order
    p2b = _labelled("p2", "ns", {"g": "a"}, uid=p2.metadata.uid)
    cluster.pods[p2.metadata.uid] = p2b
    assert cluster.pods_with_label("ns", "g", "a") == [p1, p2b, p4]
    assert cluster.pods_with_label("ns", "g", "b") == []
    cluster.pods.pop(p1.metadata.uid)
    del cluster.pods[p4.metadata.uid]
    assert cluster.pods_with_label("ns", "g", "a") == [p2b]
    cluster.pods[p1.metadata.uid] = p1  # re-added: now last
    assert cluster.pods_with_label("ns", "g", "a") == [p2b, p1]
    # a key not indexed yet is indexed on first use
    assert cluster.pods_with_label("ns", "other-key", "x") == []
    cluster.pods.clear()
    assert cluster.pods_with_label("ns", "g", "a") == []
    cluster.pods[p3.metadata.uid] = p3
    assert cluster.pods_with_label("other", "g", "a") == [p3]


def test_pods_with_label_matches_scan() -> None:
    rng = random.Random(11)
    cluster = ClusterState()
    cluster.index_label("g")
    uids = [f"u{i}" for i in range(30)]
    for step in range(3000):
        uid = rng.choice(uids)
        r = rng.random()
        if r < 0.6:
            labels = {"g": rng.choice("abc")} if rng.random() < 0.8 else {"h": "x"}
            ns = rng.choice(["n1", "n2"])
            cluster.pods[uid] = _labelled(f"{uid}-{step}", ns, labels, uid=uid)
        elif r < 0.9:
            cluster.pods.pop(uid, None)
        elif r < 0.95 and uid in cluster.pods:
            del cluster.pods[uid]
        elif r < 0.96:
            cluster.pods.clear()
        for ns in ("n1", "n2", None):  # None: every namespace (the Gang plugin's listing)
            for v in "abc":
                assert cluster.pods_with_label(ns, "g", v) == _reference_with_label(
                    cluster, ns, "g", v
                )


def pod_value_sum(ni: Any, kind: str, resource: str) -> int:
    return sum(pod_value(pi, kind, resource) for pi in ni.pods)


def test_snapshot_columns_below_a_priority_stay_current() -> None:
    """``Snapshot.column_below`` / ``column_stripped`` (preemption's stripped nodes) kept row by
    row as pods come and go equal a recomputation from the NodeInfos."""
    import numpy as np

    from kubesched.cache._cache import Cache
    from kubesched.testing import make_node

    rng = random.Random(11)
    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i}").capacity_list({"cpu": "8", "memory": "8Gi", "pods": "20"}).obj())
    snap = Snapshot()
    snap.update(cache)
    keys = [("requested", "cpu"), ("requested", "pods"), ("non_zero_requested", "memory")]
    live: list[str] = []
    for step in range(300):
        if live and rng.random() < 0.4:
            cache.remove_pod(live.pop(rng.randrange(len(live))))
        else:
            pod = (
                make_pod(f"p{step}").priority(rng.choice([0, 5, 10]))
                .req(cpu=f"{rng.randrange(1, 9) * 100}m").node(f"n{rng.randrange(6)}").obj()
            )
            cache.add_pod(pod)
            live.append(pod.metadata.uid)
        snap.update(cache)
        for kind, resource in keys:
            for prio in (5, 10):
                below = snap.column_below(kind, resource, prio)
                want = np.array(
                    [sum(pod_value(pi, kind, resource) for pi in ni.pods if pi.priority < prio) for ni in snap.node_infos]
                )
                assert below.tolist() == want.tolist()
                whole = snap.column(kind, resource)
                assert snap.column_stripped(kind, resource, prio).tolist() == (whole - want).tolist()
        # the stacked columns (Fit's several resources at once) stay current too
        for kind in ("requested", "non_zero_requested"):
            names = ("pods", "cpu", "memory")
            want2 = [[pod_value_sum(ni, kind, r) for ni in snap.node_infos] for r in names]
            assert snap.columns(kind, names).tolist() == want2
            for prio in (5, 10):
                stripped = [
                    [sum(pod_value(pi, kind, r) for pi in ni.pods if pi.priority >= prio) for ni in snap.node_infos]
                    for r in names
                ]
                assert snap.columns_stripped(kind, names, prio).tolist() == stripped
