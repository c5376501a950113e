"""The cache (assume / forget / expiry / add / update / remove) and the incremental snapshot."""

from __future__ import annotations

import msgspec
import pytest

from kubesched.cache._cache import Cache, CacheError, NodeTree, Snapshot
from kubesched.runtime._nodeinfo import NodeBatch, PodInfo
from kubesched.testing import make_node, make_pod


def _bound(name: str, node: str, cpu: str = "1") -> PodInfo:
    return PodInfo(make_pod(name).req(cpu=cpu, memory="1Gi").node(node).obj())


def _cache(*nodes: str) -> Cache:
    c = Cache()
    for n in nodes:
        c.add_node(make_node(n).capacity(cpu="4", memory="8Gi").obj())
    return c


def test_assume_counts_at_once_and_forget_undoes_it() -> None:
    c = _cache("n1")
    pi = _bound("p", "n1")
    c.assume_pod(pi, "n1")
    assert c.is_assumed(pi.uid)
    assert c.node_infos["n1"].requested.milli_cpu == 1000
    with pytest.raises(CacheError):
        c.assume_pod(pi, "n1")
    c.forget_pod(pi.uid)
    assert not c.is_assumed(pi.uid)
    assert c.node_infos["n1"].requested.milli_cpu == 0


def test_add_confirms_an_assumed_pod_on_the_node_the_api_says() -> None:
    c = _cache("n1", "n2")
    pi = _bound("p", "n1")
    c.assume_pod(pi, "n1")
    c.add_pod(msgspec.structs.replace(pi.pod, spec=msgspec.structs.replace(pi.pod.spec, node_name="n2")))
    assert not c.is_assumed(pi.uid)
    assert [p.key for p in c.node_infos["n2"].pods] == ["default/p"]
    assert c.node_infos["n1"].pods == []
    with pytest.raises(CacheError, match="can't forget"):
        c.forget_pod(pi.uid)


def test_assumed_pods_expire_only_after_binding_finished_and_ttl() -> None:
    c = Cache(ttl=30)
    c.add_node(make_node("n1").obj())
    pi = _bound("p", "n1")
    c.assume_pod(pi, "n1")
    assert c.cleanup_expired(now=1000) == []  # binding not finished: never expires
    c.finish_binding(pi.uid, now=10)
    assert c.cleanup_expired(now=40) == []
    assert c.cleanup_expired(now=40.5) == [pi.uid]
    assert c.node_infos["n1"].pods == []


def test_default_ttl_zero_never_expires() -> None:
    c = _cache("n1")
    pi = _bound("p", "n1")
    c.assume_pod(pi, "n1")
    c.finish_binding(pi.uid, now=0)
    assert c.cleanup_expired(now=10**9) == []


def test_update_and_remove_pod() -> None:
    c = _cache("n1")
    c.add_pod(_bound("p", "n1", cpu="1").pod)
    c.update_pod(_bound("p", "n1", cpu="2").pod)
    assert c.node_infos["n1"].requested.milli_cpu == 2000
    c.remove_pod(_bound("p", "n1").uid)
    assert c.node_infos["n1"].requested.milli_cpu == 0


def test_removed_node_keeps_its_pods_until_they_go() -> None:
    c = _cache("n1")
    pi = _bound("p", "n1")
    c.add_pod(pi.pod)
    c.remove_node("n1")
    assert c.node_count() == 0
    assert "n1" in c.node_infos
    c.remove_pod(pi.uid)
    assert "n1" not in c.node_infos


def test_snapshot_updates_only_dirty_rows() -> None:
    c = _cache("n1", "n2", "n3")
    snap = Snapshot()
    snap.update(c)
    before = snap.column("requested", "cpu").copy()
    n3_info = snap.get("n3")
    c.add_pod(_bound("p", "n2", cpu="1500m").pod)
    snap.update(c)
    after = snap.column("requested", "cpu")
    assert before.tolist() == [0, 0, 0]
    assert after.tolist() == [0, 1500, 0]
    assert snap.get("n3") is n3_info  # untouched rows are not re-cloned
    batch = NodeBatch(snapshot=snap, indices=snap.column("requested", "cpu").argsort()[::-1][:1].copy())
    assert batch.names == ["n2"]
    # the snapshot is a copy: the cache changing does not change it until the next update
    c.add_pod(_bound("q", "n1").pod)
    assert snap.get("n1").pods == []


def test_a_batch_of_consecutive_snapshot_rows_has_their_span() -> None:
    """NodeBatch.row_span: (lo, hi) only for a unit-stride slice of the snapshot's all_rows()
    (the rows lo..hi-1 in order), so that a per-row array may be sliced instead of gathered."""
    import numpy as np

    snap = Snapshot()
    snap.update(_cache(*[f"n{i}" for i in range(8)]))
    rows = snap.all_rows()
    assert NodeBatch(snapshot=snap, indices=rows[2:6]).row_span() == (2, 6)
    assert NodeBatch(snapshot=snap, indices=rows[2:6][1:]).row_span() == (3, 6)
    per_row = np.arange(100, 108)
    for indices in (rows[2:6], rows[1:7][1:4]):
        lo, hi = NodeBatch(snapshot=snap, indices=indices).row_span() or (0, 0)
        assert per_row[lo:hi].tolist() == per_row[indices].tolist()
    for indices in (
        rows,  # the array itself: no view
        rows[::2],  # a stride
        rows[2:2],  # empty
        np.array([2, 3, 4, 5]),  # the same rows, not a view of all_rows()
        np.concatenate((rows[6:], rows[:2])),  # wrapped around
        rows[[1, 2, 3]],  # gathered
    ):
        assert NodeBatch(snapshot=snap, indices=indices).row_span() is None
    assert NodeBatch([snap.node_infos[0]]).row_span() is None


def test_a_batch_names_and_infos_its_rows_whether_sliced_or_gathered() -> None:
    """NodeBatch.names and .infos: a batch of consecutive rows takes a slice of the snapshot's
    lists, any other one looks its rows up; both are the rows' own, in the batch's order, and
    a list of the batch's own (changing it leaves the snapshot alone)."""
    import numpy as np

    snap = Snapshot()
    snap.update(_cache(*[f"n{i}" for i in range(8)]))
    rows = snap.all_rows()
    for indices in (rows[2:6], rows[1:7][1:4], rows[::2], np.concatenate((rows[6:], rows[:2])), rows[[5, 1]]):
        batch = NodeBatch(snapshot=snap, indices=indices)
        assert batch.names == [snap.names[i] for i in indices.tolist()]
        assert batch.infos == [snap.node_infos[i] for i in indices.tolist()]
        batch.names.clear()
        batch.infos.clear()
    assert snap.names == [f"n{i}" for i in range(8)] and len(snap.node_infos) == 8


def test_node_tree_interleaves_zones() -> None:
    t = NodeTree()
    for name, zone in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"), ("c2", "c")]:
        t.add(make_node(name).label("topology.kubernetes.io/zone", zone).obj())
    assert t.list() == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_a_node_info_clone_copies_every_field_of_its_requests() -> None:
    """NodeInfo.clone copies ``requested`` field by field (Resource.clone inlined): a field
    added to Resource must be copied there too."""
    import dataclasses

    from kubesched.api._resources import Resource
    from kubesched.runtime._infos import NodeInfo

    ni = NodeInfo(make_node("n").capacity(cpu="4", memory="8Gi", pods="10").obj())
    ni.add_pod(PodInfo(make_pod("p").req(cpu="1", memory="1Gi", **{"example.com/gpu": "1"}).obj()))
    c = ni.clone()
    assert [f.name for f in dataclasses.fields(Resource)] == [
        "milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar",
    ]  # fmt: skip
    assert c.requested == ni.requested and c.requested is not ni.requested
    assert c.requested.scalar is not ni.requested.scalar


@pytest.mark.parametrize(
    "asked",
    [
        pytest.param([("pods", "cpu", "memory"), ("cpu", "memory")], id="a run of a kept stack first"),
        pytest.param([("cpu", "memory"), ("pods", "cpu", "memory")], id="the smaller stack first"),
        pytest.param([("cpu",), ("memory", "cpu"), ("pods", "cpu", "memory"), ("cpu", "cpu")], id="mixed"),
        pytest.param([("ephemeral-storage", "cpu"), ("pods", "ephemeral-storage")], id="another resource"),
    ],
)
def test_snapshot_stacks_share_rows_and_stay_current(asked: list[tuple[str, ...]]) -> None:
    """A stack is a run of a kept stack's rows, or its new columns are its rows (views), so a
    changed row is written once per array; whatever the order the columns and stacks are asked
    in, each equals a recomputation from the NodeInfos as pods come and go and a node's
    allocatable changes."""
    import random

    from kubesched.runtime._infos import pod_value

    rng = random.Random(5)
    nodes = [f"n{i}" for i in range(5)]
    c = _cache(*nodes)
    snap = Snapshot()
    snap.update(c)
    kinds = ("allocatable", "requested", "non_zero_requested")
    # a column handed out before any stack stays the column (until a node change rebuilds all)
    held, tree = snap.column("requested", "cpu"), snap.tree_generation
    live: list[str] = []

    def want(kind: str, resource: str) -> list[int]:
        if kind == "allocatable":
            return [ni.allocatable.get(resource) for ni in snap.node_infos]
        return [sum(pod_value(pi, kind, resource) for pi in ni.pods) for ni in snap.node_infos]

    for step in range(120):
        if step < len(asked) * len(kinds):
            kind, names = kinds[step % len(kinds)], asked[step // len(kinds)]
            snap.columns(kind, names)
        if live and rng.random() < 0.3:
            c.remove_pod(live.pop(rng.randrange(len(live))))
        elif rng.random() < 0.1:
            c.update_node(make_node(rng.choice(nodes)).capacity(cpu=str(rng.randrange(4, 9)), memory="8Gi").obj())
        else:
            cpu, storage = f"{rng.randrange(1, 9) * 100}m", f"{rng.randrange(3)}Gi"
            pod = make_pod(f"p{step}").req(cpu=cpu, memory="1Gi", **{"ephemeral-storage": storage})
            c.add_pod(pod.node(rng.choice(nodes)).obj())
            live.append(pod.obj().metadata.uid)
        snap.update(c)
        assert (held is snap.column("requested", "cpu")) == (tree == snap.tree_generation)
        for kind in kinds:
            for names in asked[: step // len(kinds) + 1]:
                assert snap.columns(kind, names).tolist() == [want(kind, r) for r in names], (step, kind, names)
                for r in names:
                    assert snap.column(kind, r).tolist() == want(kind, r)
