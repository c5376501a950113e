"""NodeAffinity (k/k ``plugins/nodeaffinity/node_affinity_test.go`` › TestNodeAffinity,
TestNodeAffinityPriority) and the node-selector helpers."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched import ConfigError, CycleState, NodeBatch, PreFilterResult
from kubesched.api._objects import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from kubesched.plugins import nodeaffinity
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod

R = NodeSelectorRequirement


def term(*exprs: tuple[str, str, list[str]], fields: tuple[tuple[str, str, list[str]], ...] = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        match_expressions=[R(key=k, operator=o, values=v) for k, o, v in exprs],
        match_fields=[R(key=k, operator=o, values=v) for k, o, v in fields],
    )


def name_field(*names: str) -> tuple[tuple[str, str, list[str]], ...]:
    return (("metadata.name", "In", list(names)),)


def pod(*terms: NodeSelectorTerm, selector: dict[str, str] | None = None, affinity: bool = True):
    b = make_pod("p")
    if selector:
        b.node_selector(selector)
    p = b.obj()
    if affinity and terms:
        p.spec.affinity = Affinity(
            node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=list(terms)))
        )
    return p


def empty_terms_pod(*terms: NodeSelectorTerm):
    p = make_pod("p").obj()
    p.spec.affinity = Affinity(
        node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=list(terms)))
    )
    return p


def node(labels: dict[str, str] | None = None, name: str = "node1"):
    b = make_node(name)
    for k, v in (labels or {}).items():
        b.label(k, v)
    return b.obj()


ERR = nodeaffinity.ERR_REASON_POD
ENF = nodeaffinity.ERR_REASON_ENFORCED
SKIP = "skip"
ADDED = {
    "addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["foo"]}]}]
        }
    }
}

CASES = [
    pytest.param(pod(selector={"foo": "bar"}), {}, None, None, ERR, id="TestNodeAffinity › missing labels"),
    pytest.param(pod(selector={"foo": "bar"}), {"foo": "bar"}, None, None, None, id="TestNodeAffinity › same labels"),
    pytest.param(pod(selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, None, None, None,
                 id="TestNodeAffinity › node labels are superset"),
    pytest.param(pod(selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"}, None, None, ERR,
                 id="TestNodeAffinity › node labels are subset"),
    pytest.param(pod(term(("foo", "In", ["bar", "value2"]))), {"foo": "bar"}, None, None, None,
                 id="TestNodeAffinity › Pod with matchExpressions using In operator that matches the existing node"),
    pytest.param(pod(term(("kernel-version", "Gt", ["0204"]))), {"kernel-version": "0206"}, None, None, None,
                 id="TestNodeAffinity › Pod with matchExpressions using Gt operator that matches the existing node"),
    pytest.param(pod(term(("mem-type", "NotIn", ["DDR", "DDR2"]))), {"mem-type": "DDR3"}, None, None, None,
                 id="TestNodeAffinity › Pod with matchExpressions using NotIn operator that matches the existing node"),
    pytest.param(pod(term(("GPU", "Exists", []))), {"GPU": "NVIDIA-GRID-K1"}, None, None, None,
                 id="TestNodeAffinity › Pod with matchExpressions using Exists operator that matches the existing node"),
    pytest.param(pod(term(("foo", "In", ["value1", "value2"]))), {"foo": "bar"}, None, None, ERR,
                 id="TestNodeAffinity › Pod with affinity that don't match node's labels won't schedule onto the node"),
    pytest.param(empty_terms_pod(), {"foo": "bar"}, None, None, ERR,
                 id="TestNodeAffinity › Pod with empty NodeSelectorTerms in affinity can't schedule onto any node"),
    pytest.param(empty_terms_pod(term()), {"foo": "bar"}, None, None, ERR,
                 id="TestNodeAffinity › Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node"),
    pytest.param(pod(), {"foo": "bar"}, None, SKIP, None, id="TestNodeAffinity › Pod with no Affinity will schedule onto a node"),
    pytest.param(pod(term(("GPU", "Exists", []), ("GPU", "NotIn", ["AMD", "INTER"]))), {"GPU": "NVIDIA-GRID-K1"}, None, None, None,
                 id="TestNodeAffinity › Pod with multiple matchExpressions ANDed that matches the existing node"),
    pytest.param(pod(term(("GPU", "Exists", []), ("GPU", "In", ["AMD", "INTER"]))), {"GPU": "NVIDIA-GRID-K1"}, None, None, ERR,
                 id="TestNodeAffinity › Pod with multiple matchExpressions ANDed that doesn't match the existing node"),
    pytest.param(pod(term(("foo", "In", ["bar", "value2"])), term(("diskType", "In", ["ssd"]))), {"foo": "bar"}, None, None, None,
                 id="TestNodeAffinity › Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto the node"),
    pytest.param(pod(term(("foo", "Exists", [])), selector={"foo": "bar"}), {"foo": "bar"}, None, None, None,
                 id="TestNodeAffinity › Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node"),
    pytest.param(pod(term(("foo", "Exists", [])), selector={"foo": "bar"}), {"foo": "barrrrrr"}, None, None, ERR,
                 id="TestNodeAffinity › Pod with an Affinity matches node's labels but the old thing that we are deprecating is not satisfied, won't schedule onto the node"),
    pytest.param(pod(term(("foo", "NotIn", ["invalid value: ___@#$%^"]))), {"foo": "bar"}, None, None, None,
                 id="TestNodeAffinity › Pod with an invalid value in Affinity term won't be scheduled onto the node (NotIn still matches)"),
    pytest.param(pod(term(("kernel-version", "Gt", ["invalid value: ___@#$%^"]))), {"kernel-version": "0206"}, None, None, ERR,
                 id="TestNodeAffinity › Pod with an invalid value in Affinity term won't be scheduled onto the node"),
    pytest.param(pod(term(fields=name_field("node1"))), {}, None, {"node1"}, None,
                 id="TestNodeAffinity › Pod with matchFields using In operator that matches the existing node"),
    pytest.param(pod(term(fields=name_field("node1"))), {"name": "node2"}, None, {"node1"}, ERR,
                 id="TestNodeAffinity › Pod with matchFields using In operator that does not match the existing node"),
    pytest.param(pod(term(fields=name_field("node1")), term(("foo", "In", ["bar"]))), {"name": "node2", "foo": "bar"}, None, None, None,
                 id="TestNodeAffinity › Pod with two terms: matchFields does not match, but matchExpressions matches"),
    pytest.param(pod(term(("foo", "In", ["bar"]), fields=name_field("node1"))), {"name": "node2", "foo": "bar"}, None, {"node1"}, ERR,
                 id="TestNodeAffinity › Pod with one term: matchFields does not match, but matchExpressions matches"),
    pytest.param(pod(term(("foo", "In", ["bar"]), fields=name_field("node1"))), {"foo": "bar"}, None, {"node1"}, None,
                 id="TestNodeAffinity › Pod with one term: both matchFields and matchExpressions match"),
    pytest.param(pod(term(fields=name_field("node1")), term(("foo", "In", ["not-match-to-bar"]))), {"name": "node2", "foo": "bar"},
                 None, None, ERR, id="TestNodeAffinity › Pod with two terms: both matchFields and matchExpressions do not match"),
    pytest.param(pod(term(fields=name_field("node1")), term(fields=name_field("node2"))), {"name": "node2"}, None, {"node1", "node2"},
                 None, id="TestNodeAffinity › Pod with two terms of node.Name affinity"),
    pytest.param(pod(term(fields=(("metadata.name", "In", ["node1"]), ("metadata.name", "In", ["node2"])))), {"name": "node2"},
                 None, "conflict", None, id="TestNodeAffinity › Pod with two conflicting mach field requirements"),
    pytest.param(pod(term(("foo", "In", ["bar"]))), {"foo": "bar", "zone": "foo"}, ADDED, None, None,
                 id="TestNodeAffinity › Matches added affinity and Pod's node affinity"),
    pytest.param(pod(term(("foo", "In", ["bar"]))), {"zone": "foo"}, ADDED, None, ERR,
                 id="TestNodeAffinity › Matches added affinity but not Pod's node affinity"),
    pytest.param(pod(), {"zone": "bar"}, ADDED, None, ENF, id="TestNodeAffinity › Doesn't match added affinity"),
]


@pytest.mark.parametrize(("p", "labels", "args", "want_pre", "want"), CASES)
def test_node_affinity(p, labels, args, want_pre, want) -> None:
    labels = dict(labels)
    name = labels.pop("name", "node1")
    ni = make_node_info(node(labels, name))
    plugin = nodeaffinity.new(args, FakeHandle())
    state = CycleState()
    pre = plugin.kubesched_pre_filter(state, p, [ni])
    if want_pre == SKIP:
        assert pre is not None and pre.code == Code.SKIP
        return
    if want_pre == "conflict":
        assert (pre.code, pre.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",))
        return
    if want_pre is None:
        assert pre is None
    else:
        assert pre == PreFilterResult(want_pre)
    out = plugin.kubesched_filter(state, p, NodeBatch.of([ni]))
    if want is None:
        assert out is None
    else:
        assert (out[0].code, out[0].reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))


def test_filter_batch_mixed() -> None:
    p = pod(term(("zone", "In", ["a", "b"])), term(("gpu", "Exists", [])))
    nodes = [node({"zone": "a"}, "n1"), node({"zone": "c"}, "n2"), node({"gpu": "1"}, "n3"), node({}, "n4")]
    plugin = nodeaffinity.new(None, FakeHandle())
    state = CycleState()
    plugin.kubesched_pre_filter(state, p, [])
    out = plugin.kubesched_filter(state, p, NodeBatch.of([make_node_info(n) for n in nodes]))
    assert sorted(out) == [1, 3]
    # without PreFilter (disabled) the same answer
    assert sorted(plugin.kubesched_filter(CycleState(), p, NodeBatch.of([make_node_info(n) for n in nodes]))) == [1, 3]


def _preferred(*terms: tuple[int, NodeSelectorTerm]):
    p = make_pod("p").obj()
    p.spec.affinity = Affinity(
        node_affinity=NodeAffinity(
            preferred_during_scheduling_ignored_during_execution=[PreferredSchedulingTerm(weight=w, preference=t) for w, t in terms]
        )
    )
    return p


AFFINITY1 = _preferred((2, term(("foo", "In", ["bar"]))))
AFFINITY2 = _preferred(
    (2, term(("foo", "In", ["bar"]))),
    (4, term(("key", "In", ["value"]))),
    (5, term(("foo", "In", ["bar"]), ("key", "In", ["value"]), ("az", "In", ["az1"]))),
)
LABEL1, LABEL2, LABEL3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


@pytest.mark.parametrize(
    ("p", "nodes", "args", "want"),
    [
        pytest.param(make_pod("p").obj(), [("m1", LABEL1), ("m2", LABEL2)], None, SKIP,
                     id="TestNodeAffinityPriority › all nodes are same priority as NodeAffinity is nil"),
        pytest.param(AFFINITY1, [("m1", LABEL2), ("m2", LABEL3)], None, [0, 0],
                     id="TestNodeAffinityPriority › no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero"),
        pytest.param(AFFINITY1, [("m1", LABEL1), ("m2", LABEL2), ("m3", LABEL3)], None, [100, 0, 0],
                     id="TestNodeAffinityPriority › only m1 matches the preferred scheduling requirements of pod"),
        pytest.param(AFFINITY2, [("m1", LABEL1), ("m5", LABEL5), ("m2", LABEL2)], None, [18, 100, 36],
                     id="TestNodeAffinityPriority › all nodes matches the preferred scheduling requirements of pod but with different priorities"),
        pytest.param(make_pod("p").obj(), [("m1", LABEL1), ("m2", LABEL2)],
                     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 3, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}}]}},
                     [0, 100], id="TestNodeAffinityPriority › added affinity"),
        pytest.param(AFFINITY1, [("m1", LABEL1), ("m5", LABEL5), ("m2", LABEL2)],
                     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 3, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}}]}},
                     [40, 100, 60], id="TestNodeAffinityPriority › added affinity and pod has default affinity"),
    ],
)
def test_score(p, nodes, args, want) -> None:
    plugin = nodeaffinity.new(args, FakeHandle())
    batch = NodeBatch.of([make_node_info(node(labels, name)) for name, labels in nodes])
    state = CycleState()
    pre = plugin.kubesched_pre_score(state, p, batch)
    if want == SKIP:
        assert pre is not None and pre.code == Code.SKIP
        return
    assert pre is None
    scores = np.asarray(plugin.kubesched_score(state, p, batch), dtype=np.int64)
    plugin.kubesched_normalize_score(state, p, scores)
    assert scores.tolist() == want


def test_added_affinity_validation() -> None:
    args = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}]
            }
        }
    }
    with pytest.raises(ConfigError) as ei:
        nodeaffinity.new(args, FakeHandle())
    assert ei.value.field == (
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values"
    )
    assert ei.value.message == "Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"


def test_node_change_hint() -> None:
    ev = nodeaffinity.new(None, FakeHandle()).kubesched_events_to_register()[0]
    p = pod(term(("foo", "In", ["bar"])))
    match, other = node({"foo": "bar"}), node({"foo": "baz"})
    assert ev.hint(p, None, match) == 1
    assert ev.hint(p, None, other) == 0
    assert ev.hint(p, other, match) == 1
    assert ev.hint(p, match, match) == 0


def test_filter_over_a_snapshot_follows_node_label_changes() -> None:
    """Pods with the same required affinity share one parsed selector and, from the second,
    a mask over the snapshot's nodes; a node's label change (a new node set) is seen."""
    from kubesched.cache._cache import Cache, Snapshot

    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i}").label("zone", "a" if i % 2 else "b").obj())
    snap = Snapshot()
    snap.update(cache)
    plugin = nodeaffinity.new(None, FakeHandle())

    def rejected(name: str) -> list[int]:
        p = make_pod(name).node_affinity_in("zone", ["a"]).obj()
        state = CycleState()
        assert plugin.kubesched_pre_filter(state, p, snap.node_infos) is None
        batch = NodeBatch(snapshot=snap, indices=np.array([0, 2, 3, 5], dtype=np.int64))
        return sorted((plugin.kubesched_filter(state, p, batch) or {}).keys())

    names = [snap.names[i] for i in (0, 2, 3, 5)]
    want = [i for i, n in enumerate(names) if int(n[1:]) % 2 == 0]
    assert rejected("p1") == rejected("p2") == rejected("p3") == want
    cache.update_node(make_node("n0").label("zone", "a").obj())  # n0 now matches
    snap.update(cache)
    names = [snap.names[i] for i in (0, 2, 3, 5)]
    want = [i for i, n in enumerate(names) if int(n[1:]) % 2 == 0 and n != "n0"]
    assert rejected("p4") == rejected("p5") == want
    for i in (2, 4):  # every node matches: the mask says so without a gather
        cache.update_node(make_node(f"n{i}").label("zone", "a").obj())
    snap.update(cache)
    assert rejected("p6") == rejected("p7") == rejected("p8") == []
    assert any(c.every for c in plugin._compiled.values())
    cache.update_node(make_node("n2").label("zone", "b").obj())  # and no longer
    snap.update(cache)
    names = [snap.names[i] for i in (0, 2, 3, 5)]
    assert rejected("p9") == rejected("p10") == [names.index("n2")]
