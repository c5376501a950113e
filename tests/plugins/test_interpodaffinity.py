"""InterPodAffinity (k/k ``plugins/interpodaffinity``): filtering_test.go › TestRequiredAffinitySingleNode,
TestRequiredAffinityMultipleNodes, TestPreFilterDisabled, TestPreFilterStateAddRemovePod,
TestGetTPMapMatchingIncomingAffinityAntiAffinity; scoring_test.go › TestPreferredAffinity,
TestPreferredAffinityWithHardPodAffinitySymmetricWeight; plus args, hints, matchLabelKeys, the
snapshot index kept current across cycles, and an end-to-end simulation.

Why one file: upstream's filtering_test.go and scoring_test.go tables, one row per case, in
upstream's order.

Upstream builds test pods in namespace "" (``defaultNamespace``); so do these tables.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from kubesched import ConfigError, CycleState, NodeBatch
from kubesched.api._objects import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from kubesched.cache._cache import Cache, Snapshot
from kubesched.config._config import parse_config
from kubesched.plugins import interpodaffinity as ipa
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code, Status
from kubesched.scenario import load_manifests
from kubesched.simulation import simulate
from kubesched.testing import FakeHandle, framework_for, make_node, make_pod

NAME = ipa.NAME
AFF = ipa.ERR_REASON_AFFINITY_RULES_NOT_MATCH
ANTI = ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
EXISTING = ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
UNRES = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
UNSCHED = Code.UNSCHEDULABLE
SKIP = "skip"

# scoring_test.go's namespaces (filtering_test.go uses them too)
NAMESPACES = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}

_names = itertools.count()


# --- builders ----------------------------------------------------------------------------------


def req(key: str, op: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=op, values=list(values))


def term(
    tk: str,
    *exprs: LabelSelectorRequirement,
    namespaces: list[str] | None = None,
    ns_selector: LabelSelector | None = None,
    match_label_keys: list[str] | None = None,
    mismatch_label_keys: list[str] | None = None,
) -> PodAffinityTerm:
    return PodAffinityTerm(
        label_selector=LabelSelector(match_expressions=list(exprs)),
        topology_key=tk,
        namespaces=list(namespaces or []),
        namespace_selector=ns_selector,
        match_label_keys=list(match_label_keys or []),
        mismatch_label_keys=list(mismatch_label_keys or []),
    )


def In(key: str, tk: str, *values: str) -> PodAffinityTerm:  # noqa: N802 - st.PodAffinityIn
    return term(tk, req(key, "In", *values))


def NotIn(key: str, tk: str, *values: str) -> PodAffinityTerm:  # noqa: N802
    return term(tk, req(key, "NotIn", *values))


def Exists(key: str, tk: str) -> PodAffinityTerm:  # noqa: N802
    return term(tk, req(key, "Exists"))


def pod(
    labels: dict[str, str] | None = None,
    *,
    node: str = "",
    ns: str = "",
    name: str = "",
    affinity: list[PodAffinityTerm] | None = None,
    anti: list[PodAffinityTerm] | None = None,
    pref: list[tuple[int, PodAffinityTerm]] | None = None,
    pref_anti: list[tuple[int, PodAffinityTerm]] | None = None,
) -> Pod:
    b = make_pod(name or f"p{next(_names)}", namespace=ns)
    if labels:
        b.labels(labels)
    if node:
        b.node(node)
    p = b.obj()
    if affinity is not None or pref is not None or anti is not None or pref_anti is not None:
        p.spec.affinity = Affinity(
            pod_affinity=PodAffinity(
                required_during_scheduling_ignored_during_execution=list(affinity or []),
                preferred_during_scheduling_ignored_during_execution=[
                    WeightedPodAffinityTerm(weight=w, pod_affinity_term=t) for w, t in pref or []
                ],
            )
            if affinity is not None or pref is not None
            else None,
            pod_anti_affinity=PodAffinity(
                required_during_scheduling_ignored_during_execution=list(anti or []),
                preferred_during_scheduling_ignored_during_execution=[
                    WeightedPodAffinityTerm(weight=w, pod_affinity_term=t)
                    for w, t in pref_anti or []
                ],
            )
            if anti is not None or pref_anti is not None
            else None,
        )
    return p


def with_affinity(p: Pod, affinity: Affinity) -> Pod:
    p.spec.affinity = affinity
    return p


def node(name: str, labels: dict[str, str]) -> Node:
    n = make_node(name).obj()
    n.metadata.labels = dict(labels)  # exactly upstream's labels (no hostname label)
    return n


def setup(
    nodes: list[Node],
    pods: list[Pod],
    args: dict[str, Any] | None = None,
    namespaces: dict[str, dict[str, str]] | None = None,
    snapshot: Snapshot | None = None,
) -> tuple[Any, ipa.InterPodAffinity]:
    points = {p: [NAME] for p in ("preFilter", "filter", "preScore", "score")}
    handle = FakeHandle(nodes, pods, snapshot=snapshot)
    fw = framework_for(points, plugin_args={NAME: args or {}}, handle=handle)
    fw.handle.cluster.namespace_labels = dict(NAMESPACES if namespaces is None else namespaces)
    return fw, fw.plugin(NAME)


def all_nodes(fw: Any) -> NodeBatch:
    return NodeBatch(snapshot=fw.snapshot, indices=np.arange(len(fw.snapshot)))


def run_filter(
    fw: Any, p: ipa.InterPodAffinity, incoming: Pod, names: list[str]
) -> tuple[Any, list[Any]]:
    """PreFilter, then Filter over every node: (prefilter outcome, [status per ``names``])."""
    state = CycleState()
    st = p.kubesched_pre_filter(state, incoming, fw.snapshot.node_infos)
    if isinstance(st, Status):
        if st.is_skip():
            return SKIP, []
        return (st.code, st.message), []
    batch = all_nodes(fw)
    out = p.kubesched_filter(state, incoming, batch) or {}
    by_name = {batch.names[i]: (s.code, s.message) for i, s in out.items()}
    return None, [by_name.get(n) for n in names]


# --- TestRequiredAffinitySingleNode --------------------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
LABELS1 = {"region": "r1", "zone": "z11"}


def _existing() -> Pod:
    return pod(POD_LABEL, node="node1")


def _ns_selector_term(op_team: str, tk: str) -> PodAffinityTerm:
    return term(
        tk,
        req("service", "In", "securityscan", "value2"),
        ns_selector=LabelSelector(match_expressions=[req("team", "In", op_team)]),
    )


SINGLE_NODE = [
    pytest.param(
        pod(),
        [],
        SKIP,
        None,
        id="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
    ),
    pytest.param(
        pod(POD_LABEL2, affinity=[In("service", "region", "securityscan", "value2")]),
        [_existing()],
        None,
        None,
        id="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
    ),
    pytest.param(
        pod(POD_LABEL2, affinity=[NotIn("service", "region", "securityscan3", "value3")]),
        [_existing()],
        None,
        None,
        id="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            affinity=[
                term(
                    "", req("service", "In", "securityscan", "value2"), namespaces=["DiffNameSpace"]
                )
            ],
        ),
        [pod({"service": "securityscan"}, ns="ns", node="node1")],
        None,
        (UNRES, AFF),
        id="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
    ),
    pytest.param(
        pod(POD_LABEL, affinity=[In("service", "", "antivirusscan", "value2")]),
        [_existing()],
        None,
        (UNRES, AFF),
        id="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            affinity=[
                term("region", req("service", "Exists"), req("wrongkey", "DoesNotExist")),
                term(
                    "region",
                    req("service", "In", "securityscan"),
                    req("service", "NotIn", "WrongValue"),
                ),
            ],
        ),
        [_existing()],
        None,
        None,
        id="satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            affinity=[
                term("region", req("service", "Exists"), req("wrongkey", "DoesNotExist")),
                term(
                    "region",
                    req("service", "In", "securityscan2"),
                    req("service", "NotIn", "WrongValue"),
                ),
            ],
        ),
        [_existing()],
        None,
        (UNRES, AFF),
        id="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            affinity=[In("service", "region", "securityscan", "value2")],
            anti=[In("service", "node", "antivirusscan", "value2")],
        ),
        [_existing()],
        None,
        None,
        id="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            affinity=[In("service", "region", "securityscan", "value2")],
            anti=[In("service", "node", "antivirusscan", "value2")],
        ),
        [pod(POD_LABEL, node="node1", anti=[In("service", "node", "antivirusscan", "value2")])],
        None,
        None,
        id="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            affinity=[In("service", "region", "securityscan", "value2")],
            anti=[In("service", "zone", "securityscan", "value2")],
        ),
        [_existing()],
        None,
        (UNSCHED, ANTI),
        id="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(
            POD_LABEL,
            affinity=[In("service", "region", "securityscan", "value2")],
            anti=[In("service", "node", "antivirusscan", "value2")],
        ),
        [pod(POD_LABEL, node="node1", anti=[In("service", "zone", "securityscan", "value2")])],
        None,
        (UNSCHED, EXISTING),
        id="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(POD_LABEL, affinity=[NotIn("service", "region", "securityscan", "value2")]),
        [pod({"service": "securityscan"}, node="node2")],
        None,
        (UNRES, AFF),
        id="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
    ),
    pytest.param(
        pod(POD_LABEL),
        [pod(POD_LABEL, node="node1", anti=[In("service", "zone", "securityscan", "value2")])],
        None,
        (UNSCHED, EXISTING),
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(POD_LABEL),
        [pod(POD_LABEL, node="node1", anti=[NotIn("service", "zone", "securityscan", "value2")])],
        SKIP,
        None,
        id="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
    ),
    pytest.param(
        pod(POD_LABEL, anti=[Exists("service", "region"), Exists("security", "region")]),
        [pod(POD_LABEL2, node="node1", anti=[Exists("security", "zone")])],
        None,
        (UNSCHED, ANTI),
        id="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
    ),
    pytest.param(
        pod(POD_LABEL, anti=[Exists("service", "zone"), Exists("security", "zone")]),
        [pod(POD_LABEL2, node="node1", anti=[Exists("security", "zone")])],
        None,
        (UNSCHED, ANTI),
        id="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        pod(POD_LABEL2, anti=[Exists("security", "zone")]),
        [
            pod(
                POD_LABEL,
                node="node1",
                anti=[Exists("service", "zone"), Exists("security", "zone")],
            )
        ],
        None,
        (UNSCHED, EXISTING),
        id="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        pod({"abc": "", "xyz": ""}, anti=[Exists("abc", "zone"), Exists("def", "zone")]),
        [
            pod(
                {"def": "", "xyz": ""},
                node="node1",
                anti=[Exists("abc", "zone"), Exists("def", "zone")],
            )
        ],
        None,
        (UNSCHED, ANTI),
        id="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        pod({"def": "", "xyz": ""}, anti=[Exists("abc", "zone"), Exists("def", "zone")]),
        [
            pod(
                {"abc": "", "xyz": ""},
                node="node1",
                anti=[Exists("abc", "zone"), Exists("def", "zone")],
            )
        ],
        None,
        (UNSCHED, ANTI),
        id="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
    ),
    pytest.param(
        pod(
            POD_LABEL,
            affinity=[
                In("service", "region", "{{.bad-value.}}"),
                In("service", "node", "antivirusscan", "value2"),
            ],
        ),
        [],
        (
            UNRES,
            "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        None,
        id="PodAffinity fails PreFilter with an invalid affinity label syntax",
    ),
    pytest.param(
        pod(
            POD_LABEL,
            affinity=[In("service", "region", "foo"), In("service", "node", "{{.bad-value.}}")],
        ),
        [],
        (
            UNRES,
            "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        None,
        id="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
    ),
    pytest.param(
        pod(POD_LABEL2, affinity=[_ns_selector_term("team1", "region")]),
        [pod(POD_LABEL, ns="subteam1.team1", node="node1")],
        None,
        None,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        pod(POD_LABEL2, affinity=[_ns_selector_term("team1", "region")]),
        [pod(POD_LABEL, ns="subteam1.team2", node="node1")],
        None,
        (UNRES, AFF),
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        pod(POD_LABEL2, ns="subteam1.team1", anti=[_ns_selector_term("team1", "zone")]),
        [pod(POD_LABEL, ns="subteam2.team1", node="node1")],
        None,
        (UNSCHED, ANTI),
        id="anti-affinity with matching NamespaceSelector",
    ),
    pytest.param(
        pod(
            POD_LABEL2,
            ns="subteam1.team1",
            anti=[
                term(
                    "zone",
                    req("service", "In", "securityscan", "value2"),
                    ns_selector=LabelSelector(),
                )
            ],
        ),
        [pod(POD_LABEL, ns="subteam2.team1", node="node1")],
        None,
        (UNSCHED, ANTI),
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        pod(POD_LABEL2, ns="subteam1.team1", anti=[_ns_selector_term("team1", "zone")]),
        [pod(POD_LABEL, ns="subteam1.team2", node="node1")],
        None,
        None,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "want_pre", "want"), SINGLE_NODE)
def test_required_affinity_single_node(
    incoming: Pod, pods: list[Pod], want_pre: Any, want: Any
) -> None:
    fw, p = setup([node("node1", LABELS1)], pods)
    pre, statuses = run_filter(fw, p, incoming, ["node1"])
    assert pre == want_pre
    if pre is None:
        assert statuses == [want]


# --- TestRequiredAffinityMultipleNodes ---------------------------------------------------------

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def _n3(
    a: dict[str, str],
    b: dict[str, str],
    c: dict[str, str],
    names: tuple[str, str, str] = ("nodeA", "nodeB", "nodeC"),
) -> list[Node]:
    return [node(names[0], a), node(names[1], b), node(names[2], c)]


def _rzh(name: str, zone: str, region: str = "r1") -> Node:
    return node(name, {"region": region, "zone": zone, "hostname": name})


MULTI_NODE = [
    pytest.param(
        pod(affinity=[In("foo", "region", "bar")]),
        [pod({"foo": "bar"}, node="node1")],
        _n3(CHINA, CHINA_AZ1, INDIA, ("node1", "node2", "node3")),
        None,
        [None, None, (UNRES, AFF)],
        id="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
    ),
    pytest.param(
        pod(
            {"foo": "bar", "service": "securityscan"},
            affinity=[In("foo", "zone", "bar"), In("service", "zone", "securityscan")],
        ),
        [pod({"foo": "bar"}, node="nodeA")],
        [
            node("nodeA", {"zone": "az1", "hostname": "h1"}),
            node("nodeB", {"zone": "az2", "hostname": "h2"}),
        ],
        None,
        [None, None],
        id="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
    ),
    pytest.param(
        pod(
            {"foo": "bar", "service": "securityscan"},
            affinity=[In("foo", "zone", "bar"), In("service", "zone", "securityscan")],
        ),
        [pod({"foo": "bar"}, node="nodeA")],
        [
            node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
            node("nodeB", {"zoneLabel": "az2", "hostname": "h2"}),
        ],
        None,
        [(UNRES, AFF), (UNRES, AFF)],
        id="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
    ),
    pytest.param(
        pod(anti=[In("foo", "region", "abc")]),
        [pod({"foo": "abc"}, node="nodeA")],
        [
            node("nodeA", {"region": "r1", "hostname": "nodeA"}),
            node("nodeB", {"region": "r1", "hostname": "nodeB"}),
        ],
        None,
        [(UNSCHED, ANTI), (UNSCHED, ANTI)],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    pytest.param(
        pod(anti=[In("foo", "region", "abc"), In("service", "zone", "securityscan")]),
        [pod({"foo": "abc", "service": "securityscan"}, node="nodeA")],
        [
            node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
            node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"}),
        ],
        None,
        [(UNSCHED, ANTI), (UNSCHED, ANTI)],
        id="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
    ),
    pytest.param(
        pod(anti=[In("foo", "region", "abc")]),
        [pod({"foo": "abc"}, node="nodeA")],
        _n3(CHINA, CHINA_AZ1, INDIA),
        None,
        [(UNSCHED, ANTI), (UNSCHED, ANTI), None],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    pytest.param(
        pod({"foo": "123"}, ns="NS1", anti=[In("foo", "region", "bar")]),
        [
            pod({"foo": "bar"}, ns="NS1", node="nodeA"),
            pod(ns="NS2", node="nodeC", anti=[In("foo", "region", "123")]),
        ],
        _n3(CHINA, CHINA_AZ1, INDIA),
        None,
        [(UNSCHED, ANTI), (UNSCHED, ANTI), None],
        id="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    pytest.param(
        pod({"foo": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "invalid-node-label")])],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")],
        SKIP,
        [],
        id="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
    ),
    pytest.param(
        pod(node="nodeA", anti=[Exists("foo", "invalid-node-label")]),
        [pod({"foo": ""}, node="nodeA")],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")],
        None,
        [None, None],
        id="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [
            pod(node="nodeA", anti=[Exists("foo", "zone")]),
            pod(node="nodeA", anti=[Exists("bar", "region")]),
        ],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNSCHED, EXISTING), (UNSCHED, EXISTING)],
        id="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
    ),
    pytest.param(
        pod(anti=[Exists("foo", "zone"), Exists("bar", "region")]),
        [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNSCHED, ANTI), (UNSCHED, ANTI)],
        id="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")])],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNSCHED, EXISTING), None],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        pod(anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")]),
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNSCHED, ANTI), None],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [pod(node="nodeA", anti=[Exists("foo", "region"), Exists("bar", "zone")])],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNSCHED, EXISTING), (UNSCHED, EXISTING)],
        id="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        pod(anti=[Exists("foo", "region"), Exists("bar", "zone")]),
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNSCHED, ANTI), (UNSCHED, ANTI)],
        id="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [
            pod(node="nodeA", anti=[Exists("foo", "zone"), Exists("labelA", "zone")]),
            pod(node="nodeB", anti=[Exists("bar", "zone"), Exists("labelB", "zone")]),
        ],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2"), _rzh("nodeC", "z3")],
        None,
        [(UNSCHED, EXISTING), (UNSCHED, EXISTING), None],
        id="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    pytest.param(
        pod(affinity=[Exists("foo", "region"), Exists("bar", "zone")]),
        [pod({"foo": "", "bar": ""}, node="nodeA")],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")],
        None,
        [None, None],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
    ),
    pytest.param(
        pod(affinity=[Exists("foo", "region"), Exists("bar", "zone")]),
        [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
        [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")],
        None,
        [(UNRES, AFF), (UNRES, AFF)],
        id="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "want_pre", "want"), MULTI_NODE)
def test_required_affinity_multiple_nodes(
    incoming: Pod, pods: list[Pod], nodes: list[Node], want_pre: Any, want: list[Any]
) -> None:
    fw, p = setup(nodes, pods, namespaces={"NS1": {}})
    pre, statuses = run_filter(fw, p, incoming, [n.metadata.name for n in nodes])
    assert pre == want_pre
    if pre is None:
        assert statuses == want


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error."""
    fw, p = setup([node("node1", {})], [])
    out = p.kubesched_filter(CycleState(), pod(), all_nodes(fw))
    assert out is not None
    assert (out[0].code, out[0].message) == (
        Code.ERROR,
        'error reading "PreFilterInterPodAffinity" from cycleState: not found',
    )


# --- TestPreFilterStateAddRemovePod --------------------------------------------------------------

SELECTOR1 = {"foo": "bar"}


def _anti_foo_bar() -> list[PodAffinityTerm]:
    return [In("foo", "region", "bar")]


def _complex() -> list[PodAffinityTerm]:
    return [In("foo", "region", "bar", "buzz"), NotIn("service", "zone", "bar", "security", "test")]


def _nodes_abc() -> list[Node]:
    return [
        node("nodeA", {"region": "r1", "zone": "z11"}),
        node("nodeB", {"region": "r1", "zone": "z12"}),
        node("nodeC", {"region": "r2", "zone": "z21"}),
    ]


ADD_REMOVE = [
    pytest.param(
        pod(SELECTOR1, name="pending", anti=_anti_foo_bar()),
        [
            pod(SELECTOR1, name="p1", node="nodeA"),
            pod(name="p2", node="nodeC", anti=_anti_foo_bar()),
        ],
        pod(SELECTOR1, name="addedPod", node="nodeB", anti=_anti_foo_bar()),
        {("region", "r1"): 2},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
    ),
    pytest.param(
        pod(SELECTOR1, name="pending", anti=_complex()),
        [
            pod(SELECTOR1, name="p1", node="nodeA"),
            pod(name="p2", node="nodeC", anti=_anti_foo_bar()),
        ],
        pod(SELECTOR1, name="addedPod", node="nodeA", anti=_complex()),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        id="preFilterState anti-affinity terms are updated correctly after adding and removing a pod (complex)",
    ),
    pytest.param(
        pod(SELECTOR1, name="pending", affinity=_complex()),
        [
            pod(SELECTOR1, name="p1", node="nodeA"),
            pod(name="p2", node="nodeC", anti=_anti_foo_bar(), affinity=_complex()),
        ],
        pod(SELECTOR1, name="addedPod", node="nodeA", anti=_complex()),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        id="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
    ),
]


@pytest.mark.parametrize(("pending", "existing", "added", "want_anti", "want_aff"), ADD_REMOVE)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing: list[Pod],
    added: Pod,
    want_anti: dict[Any, int],
    want_aff: dict[Any, int],
) -> None:
    def state_for(pods: list[Pod]) -> tuple[Any, ipa.InterPodAffinity, CycleState]:
        fw, p = setup(_nodes_abc(), pods)
        cs = CycleState()
        assert p.kubesched_pre_filter(cs, pending, fw.snapshot.node_infos) is None
        return fw, p, cs

    _, _, all_state = state_for([*existing, added])
    want_all = all_state.read(ipa.PRE_FILTER_STATE_KEY)
    fw, p, cs = state_for(existing)
    s = cs.read(ipa.PRE_FILTER_STATE_KEY)
    original = s.clone()
    ni = fw.snapshot.get(added.spec.node_name)
    assert p.kubesched_pre_filter_add_pod(cs, pending, PodInfo(added), ni) is None
    assert s.anti_affinity_counts == want_anti
    assert s.affinity_counts == want_aff
    for attr in ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts"):
        assert getattr(s, attr) == getattr(want_all, attr)
    assert p.kubesched_pre_filter_remove_pod(cs, pending, PodInfo(added), ni) is None
    for attr in ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts"):
        assert getattr(s, attr) == getattr(original, attr)


def test_pre_filter_state_clone() -> None:
    """TestPreFilterStateClone: a copy, equal, not the same object."""
    src = ipa.PreFilterState(
        ipa.TopologyCounts(None, {("name", "node1"): 1, ("name", "node2"): 1}),
        ipa.TopologyCounts(None, {("name", "nodeA"): 1, ("name", "nodeC"): 2}),
        ipa.TopologyCounts(None, {("name", "nodeN"): 3, ("name", "nodeM"): 1}),
        ipa.PodTerms(),
        pod(),
        lambda ns: {},
    )
    c = src.clone()
    assert c is not src and c.affinity_counts is not src.affinity_counts
    assert (c.existing_anti_affinity_counts, c.affinity_counts, c.anti_affinity_counts) == (
        src.existing_anti_affinity_counts,
        src.affinity_counts,
        src.anti_affinity_counts,
    )


# --- TestGetTPMapMatchingIncomingAffinityAntiAffinity --------------------------------------------


def _normal(*labels: str) -> Pod:
    return pod(dict.fromkeys(labels, ""), name="normal", node="nodeA")


INCOMING_COUNTS = [
    pytest.param([], pod(name="aaa-normal"), {}, {}, id="nil test"),
    pytest.param(
        [_normal("aaa")],
        pod(name="aaa-normal"),
        {},
        {},
        id="incoming pod without affinity/anti-affinity causes a no-op",
    ),
    pytest.param(
        [_normal("bbb")],
        pod(affinity=[Exists("aaa", "hostname")], anti=[Exists("aaa", "hostname")]),
        {},
        {},
        id="no pod has label that violates incoming pod's affinity and anti-affinity",
    ),
    pytest.param(
        [_normal("aaa")],
        pod(affinity=[Exists("aaa", "hostname")], anti=[Exists("aaa", "hostname")]),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
        id="existing pod matches incoming pod's affinity and anti-affinity - single term case",
    ),
    pytest.param(
        [_normal("aaa", "bbb")],
        pod(
            affinity=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
            anti=[Exists("aaa", "hostname")],
        ),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
        id="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
    ),
    pytest.param(
        [_normal("aaa")],
        pod(
            affinity=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
            anti=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
        id="existing pod not match incoming pod's affinity but matches anti-affinity",
    ),
    pytest.param(
        [_normal("aaa", "bbb")],
        pod(
            affinity=[Exists("aaa", "hostname"), Exists("ccc", "hostname")],
            anti=[Exists("aaa", "hostname"), Exists("ccc", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
    ),
    pytest.param(
        [_normal("bbb")],
        pod(
            affinity=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
            anti=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
        ),
        {},
        {("hostname", "nodeA"): 1},
        id="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
    ),
]


@pytest.mark.parametrize(("existing", "incoming", "want_aff", "want_anti"), INCOMING_COUNTS)
def test_get_incoming_affinity_anti_affinity_counts(
    existing: list[Pod], incoming: Pod, want_aff: Any, want_anti: Any
) -> None:
    fw, p = setup([node("nodeA", {"hostname": "nodeA"})], existing)
    cs = CycleState()
    p.kubesched_pre_filter(cs, incoming, fw.snapshot.node_infos)
    s = cs.get(ipa.PRE_FILTER_STATE_KEY)
    got = (s.affinity_counts, s.anti_affinity_counts) if s is not None else ({}, {})
    assert got == (want_aff, want_anti)


# --- TestPreferredAffinity -----------------------------------------------------------------------

S1 = {"security": "S1"}
S2 = {"security": "S2"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}


def _pref(
    w: int, tk: str, *exprs: LabelSelectorRequirement, **kw: Any
) -> tuple[int, PodAffinityTerm]:
    return (w, term(tk, *exprs, **kw))


def stay_with_s1_in_region() -> dict[str, Any]:
    return {"pref": [_pref(5, "region", req("security", "In", "S1"))]}


def stay_with_s2_in_region() -> dict[str, Any]:
    return {"pref": [_pref(6, "region", req("security", "In", "S2"))]}


def affinity3() -> dict[str, Any]:
    return {
        "pref": [
            _pref(8, "region", req("security", "NotIn", "S1"), req("security", "In", "S2")),
            _pref(2, "region", req("security", "Exists"), req("wrongkey", "DoesNotExist")),
        ]
    }


def hard_affinity() -> dict[str, Any]:
    return {
        "affinity": [
            term("region", req("security", "In", "S1", "value2")),
            term("region", req("security", "Exists"), req("wrongkey", "DoesNotExist")),
        ]
    }


def away_from_s1_in_az() -> dict[str, Any]:
    return {"pref_anti": [_pref(5, "az", req("security", "In", "S1"))]}


def away_from_s2_in_az() -> dict[str, Any]:
    return {"pref_anti": [_pref(5, "az", req("security", "In", "S2"))]}


def stay_s1_region_away_s2_az() -> dict[str, Any]:
    return {
        "pref": [_pref(8, "region", req("security", "In", "S1"))],
        "pref_anti": [_pref(5, "az", req("security", "In", "S2"))],
    }


_TEAM1 = LabelSelector(match_expressions=[req("team", "In", "team1")])


def affinity_ns_selector() -> dict[str, Any]:
    return {
        "pref": [
            _pref(
                5,
                "region",
                req("security", "In", "S1"),
                namespaces=["subteam2.team2"],
                ns_selector=_TEAM1,
            )
        ]
    }


def anti_affinity_ns_selector() -> dict[str, Any]:
    return {
        "pref_anti": [
            _pref(
                5,
                "region",
                req("security", "In", "S1"),
                namespaces=["subteam2.team2"],
                ns_selector=_TEAM1,
            )
        ]
    }


def n(name: str, labels: dict[str, str]) -> Node:
    return node(name, labels)


def P(
    labels: dict[str, str] | None = None,
    node_name: str = "",
    ns: str = "",
    aff: dict[str, Any] | None = None,
) -> Pod:  # noqa: N802
    return pod(labels, node=node_name, ns=ns, **(aff or {}))


def _bad(kind: str) -> dict[str, Any]:
    return {
        kind: [
            _pref(
                8 if kind == "pref" else 5,
                "region" if kind == "pref" else "az",
                req("security", "In", "{{.bad-value.}}"),
            )
        ]
    }


MAX = 100
PREFERRED = [
    pytest.param(
        P(S1),
        [],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        SKIP,
        None,
        False,
        id="all nodes are same priority as Affinity is nil",
    ),
    pytest.param(
        P(S1, aff=stay_with_s1_in_region()),
        [P(S1, "node1"), P(S2, "node2"), P(S1, "node3")],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        None,
        [MAX, 0, 0],
        False,
        id="Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't match either pods in nodes or in topology key",
    ),
    pytest.param(
        P(aff=stay_with_s1_in_region()),
        [P(S1, "node1")],
        [n("node1", CHINA), n("node2", CHINA_AZ1), n("node3", INDIA)],
        None,
        [MAX, MAX, 0],
        False,
        id="All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
    ),
    pytest.param(
        P(S1, aff=stay_with_s2_in_region()),
        [
            P(S2, "node1"),
            P(S2, "node1"),
            P(S2, "node2"),
            P(S2, "node3"),
            P(S2, "node4"),
            P(S2, "node5"),
        ],
        [
            n("node1", CHINA),
            n("node2", INDIA),
            n("node3", CHINA),
            n("node4", CHINA),
            n("node5", INDIA),
        ],
        None,
        [MAX, 0, MAX, MAX, 0],
        False,
        id="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
    ),
    pytest.param(
        P(S1, aff=affinity3()),
        [P(S1, "node1"), P(S2, "node2"), P(S1, "node3")],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        None,
        [20, MAX, 0],
        False,
        id="Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
    ),
    pytest.param(
        P(S2),
        [
            P(S1, "node1", aff=stay_with_s1_in_region()),
            P(S2, "node2", aff=stay_with_s2_in_region()),
        ],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        None,
        [0, MAX, 0],
        False,
        id="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        P(S1, ns="subteam1.team1"),
        [P(S1, "node1", aff=affinity_ns_selector()), P(S2, "node2", aff=stay_with_s2_in_region())],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        None,
        [MAX, 0, 0],
        False,
        id="Affinity symmetry with namespace selector",
    ),
    pytest.param(
        P(S1, ns="subteam1.team1"),
        [
            P(S1, "node1", aff=anti_affinity_ns_selector()),
            P(S2, "node2", aff=stay_with_s2_in_region()),
        ],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        None,
        [0, MAX, MAX],
        False,
        id="AntiAffinity symmetry with namespace selector",
    ),
    pytest.param(
        P(S1),
        [P(S1, "node1", aff=hard_affinity()), P(S2, "node2", aff=hard_affinity())],
        [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)],
        None,
        [MAX, MAX, 0],
        False,
        id="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
    ),
    pytest.param(
        P(S1, aff=away_from_s1_in_az()),
        [P(S1, "node1"), P(S2, "node2")],
        [n("node1", AZ1), n("node2", CHINA)],
        None,
        [0, MAX],
        False,
        id="Anti Affinity: pod that does not match existing pods in node will get high score ",
    ),
    pytest.param(
        P(S1, aff=away_from_s1_in_az()),
        [P(S1, "node1"), P(S1, "node2")],
        [n("node1", AZ1), n("node2", CHINA)],
        None,
        [0, MAX],
        False,
        id="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
    ),
    pytest.param(
        P(S1, aff=away_from_s1_in_az()),
        [P(S1, "node1"), P(S1, "node1"), P(S2, "node2")],
        [n("node1", AZ1), n("node2", INDIA)],
        None,
        [0, MAX],
        False,
        id="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
    ),
    pytest.param(
        P(S2),
        [P(S1, "node1", aff=away_from_s2_in_az()), P(S2, "node2", aff=away_from_s1_in_az())],
        [n("node1", AZ1), n("node2", AZ2)],
        None,
        [0, MAX],
        False,
        id="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
    ),
    pytest.param(
        P(S1, aff=stay_s1_region_away_s2_az()),
        [P(S1, "node1"), P(S1, "node2")],
        [n("node1", CHINA), n("node2", AZ1)],
        None,
        [MAX, 0],
        False,
        id="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
    ),
    pytest.param(
        P(S1, aff=stay_s1_region_away_s2_az()),
        [
            P(S1, "node1"),
            P(S1, "node1"),
            P(S1, "node2"),
            P(S1, "node3"),
            P(S1, "node3"),
            P(S1, "node4"),
            P(S1, "node5"),
        ],
        [
            n("node1", CHINA_AZ1),
            n("node2", INDIA),
            n("node3", CHINA),
            n("node4", CHINA),
            n("node5", INDIA),
        ],
        None,
        [MAX, 0, MAX, MAX, 0],
        False,
        id="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
    ),
    pytest.param(
        P(S1, aff=stay_s1_region_away_s2_az()),
        [
            P(S1, "node1"),
            P(S2, "node2"),
            P(None, "node3", aff=stay_s1_region_away_s2_az()),
            P(None, "node4", aff=away_from_s1_in_az()),
        ],
        [n("node1", CHINA), n("node2", AZ1), n("node3", INDIA), n("node4", AZ2)],
        None,
        [MAX, 0, MAX, 0],
        False,
        id="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
    ),
    pytest.param(
        P(S1),
        [P(S1, "node1"), P(None, "node2", aff=stay_s1_region_away_s2_az())],
        [n("node1", CHINA), n("node2", CHINA)],
        None,
        [0, 0],
        False,
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        P(aff=_bad("pref")),
        [],
        [n("node1", CHINA), n("node2", CHINA)],
        (Code.ERROR, 'Invalid value: "{{.bad-value.}}"'),
        None,
        False,
        id="invalid Affinity fails PreScore",
    ),
    pytest.param(
        P(aff=_bad("pref_anti")),
        [],
        [n("node1", CHINA), n("node2", CHINA)],
        (Code.ERROR, 'Invalid value: "{{.bad-value.}}"'),
        None,
        False,
        id="invalid AntiAffinity fails PreScore",
    ),
    pytest.param(
        P(S1, ns="subteam1.team1", aff=affinity_ns_selector()),
        [
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam1.team2"),
            P(S1, "node2", "subteam2.team1"),
        ],
        [n("node1", CHINA), n("node2", INDIA)],
        None,
        [MAX, 0],
        False,
        id="Affinity with pods matching NamespaceSelector",
    ),
    pytest.param(
        P(S1, ns="subteam1.team1", aff=affinity_ns_selector()),
        [
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam2.team2"),
            P(S1, "node2", "subteam2.team1"),
        ],
        [n("node1", CHINA), n("node2", INDIA)],
        None,
        [MAX, 0],
        False,
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    pytest.param(
        P(S1, ns="subteam1.team1", aff=anti_affinity_ns_selector()),
        [
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam1.team2"),
            P(S1, "node2", "subteam2.team1"),
        ],
        [n("node1", CHINA), n("node2", INDIA)],
        None,
        [0, MAX],
        False,
        id="Affinity with pods matching NamespaceSelector (anti)",
    ),
    pytest.param(
        P(S1, ns="subteam1.team1", aff=anti_affinity_ns_selector()),
        [
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam1.team1"),
            P(S1, "node1", "subteam2.team2"),
            P(S1, "node2", "subteam2.team1"),
        ],
        [n("node1", CHINA), n("node2", INDIA)],
        None,
        [0, MAX],
        False,
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields (anti)",
    ),
    pytest.param(
        P(S2),
        [
            P(S1, "node1", aff=stay_s1_region_away_s2_az()),
            P(S2, "node2", aff=stay_with_s2_in_region()),
        ],
        [n("node1", CHINA), n("node2", INDIA)],
        SKIP,
        None,
        True,
        id="Ignore preferred terms of existing pods",
    ),
    pytest.param(
        P(S2),
        [
            P(S1, "node1", aff=stay_s1_region_away_s2_az()),
            P(S2, "node2", aff=stay_with_s2_in_region()),
        ],
        [n("node1", CHINA), n("node2", INDIA)],
        None,
        [0, MAX],
        False,
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(P(S2), [], [], SKIP, None, False, id="No nodes to score"),
]


def run_score(fw: Any, p: ipa.InterPodAffinity, incoming: Pod) -> tuple[Any, list[int] | None]:
    state = CycleState()
    batch = all_nodes(fw)
    st = p.kubesched_pre_score(state, incoming, batch)
    if isinstance(st, Status):
        return (SKIP if st.is_skip() else (st.code, st.message)), None
    scores = np.asarray(p.kubesched_score(state, incoming, batch), dtype=np.int64)
    assert p.kubesched_normalize_score(state, incoming, scores) is None
    by_name = dict(zip(batch.names, scores.tolist(), strict=True))
    return None, [by_name[x.metadata.name] for x in fw.handle.cluster.nodes.values()]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "want_pre", "want", "ignore"), PREFERRED)
def test_preferred_affinity(
    incoming: Pod, pods: list[Pod], nodes: list[Node], want_pre: Any, want: Any, ignore: bool
) -> None:
    fw, p = setup(
        nodes, pods, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore}
    )
    pre, scores = run_score(fw, p, incoming)
    if isinstance(
        want_pre, tuple
    ):  # upstream checks the code and that the message contains the text
        assert pre[0] == want_pre[0] and want_pre[1] in pre[1], pre
        return
    assert pre == want_pre
    assert scores == want


HARD = {
    "affinity": [
        term(
            "region",
            req("service", "In", "S1"),
            namespaces=["", "subteam2.team2"],
            ns_selector=_TEAM1,
        ),
    ]
}
_HARD_NODES = [n("node1", CHINA), n("node2", INDIA), n("node3", AZ1)]


@pytest.mark.parametrize(
    ("incoming", "weight", "want_pre", "want"),
    [
        pytest.param(P({"service": "S1"}), 1, None, [MAX, MAX, 0], id="with default weight"),
        pytest.param(P({"service": "S1"}), 0, SKIP, None, id="with zero weight"),
        pytest.param(
            P({"service": "S1"}, ns="subteam1.team2"),
            1,
            SKIP,
            None,
            id="with no matching namespace",
        ),
        pytest.param(
            P({"service": "S1"}, ns="subteam1.team1"),
            1,
            None,
            [MAX, MAX, 0],
            id="with matching NamespaceSelector",
        ),
        pytest.param(
            P({"service": "S1"}, ns="subteam2.team2"),
            1,
            None,
            [MAX, MAX, 0],
            id="with matching Namespaces",
        ),
    ],
)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    incoming: Pod, weight: int, want_pre: Any, want: Any
) -> None:
    """TestPreferredAffinityWithHardPodAffinitySymmetricWeight."""
    pods = [P(None, "node1", aff=HARD), P(None, "node2", aff=HARD)]
    fw, p = setup(_HARD_NODES, pods, {"hardPodAffinityWeight": weight})
    assert run_score(fw, p, incoming) == (want_pre, want)


# --- args, hints, matchLabelKeys, incremental index ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"hardPodAffinityWeight": -1},
            "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]",
            id="negative",
        ),
        pytest.param(
            {"hardPodAffinityWeight": 101},
            "hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]",
            id="over 100",
        ),
    ],
)
def test_args_validation(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        ipa.new(args, FakeHandle())
    assert exc.value.field == "hardPodAffinityWeight"
    assert str(exc.value) == message


def test_args_defaults() -> None:
    p = ipa.new(None, FakeHandle())
    assert p.hard_pod_affinity_weight == 1
    assert p.ignore_preferred_terms_of_existing_pods is False
    assert ipa.new({"hardPodAffinityWeight": 0}, FakeHandle()).hard_pod_affinity_weight == 0


def test_match_label_keys_merged_into_selector() -> None:
    """matchLabelKeys adds ``key In (own value)``, mismatchLabelKeys ``key NotIn (own value)``."""
    t = term(
        "zone", req("app", "In", "web"), match_label_keys=["rev"], mismatch_label_keys=["team"]
    )
    incoming = pod({"app": "web", "rev": "2", "team": "a"}, anti=[t])
    parsed = ipa.parse_pod_terms(incoming).req_anti[0]
    no_ns = ipa.InterPodAffinity(None, FakeHandle()).namespace_labels()
    assert parsed.matches("", {"app": "web", "rev": "2", "team": "b"}, no_ns)
    assert not parsed.matches("", {"app": "web", "rev": "1", "team": "b"}, no_ns)  # other revision
    assert not parsed.matches("", {"app": "web", "rev": "2", "team": "a"}, no_ns)  # same team
    # a key the pod lacks is ignored; a nil selector stays "nothing"
    lone = pod(
        {"app": "web"}, anti=[t, PodAffinityTerm(topology_key="zone", match_label_keys=["rev"])]
    )
    a, b = ipa.parse_pod_terms(lone).req_anti
    assert a.matches("", {"app": "web", "rev": "9"}, no_ns)
    assert not b.matches("", {"app": "web"}, no_ns)


def test_namespace_selector_defaults_to_metadata_name_label() -> None:
    """Without a namespace_labels mapping a namespace carries only kubernetes.io/metadata.name."""
    by_name = LabelSelector(match_labels={"kubernetes.io/metadata.name": "prod"})
    t = term("zone", req("app", "Exists"), ns_selector=by_name)
    parsed = ipa.parse_pod_terms(pod(affinity=[t])).req_aff[0]
    labels_of = ipa.InterPodAffinity(None, FakeHandle()).namespace_labels()
    assert parsed.matches("prod", {"app": "x"}, labels_of)
    assert not parsed.matches("dev", {"app": "x"}, labels_of)


def test_pod_change_hint() -> None:
    p = ipa.new(None, FakeHandle())
    target = pod({"x": "y"}, affinity=[In("app", "zone", "web")], anti=[In("app", "zone", "db")])
    web = pod({"app": "web"}, node="n1")
    db = pod({"app": "db"}, node="n1")
    other = pod({"app": "other"}, node="n1")
    unscheduled = pod({"app": "web"})
    assert p.is_schedulable_after_pod_change(target, None, web) == QueueingHint.QUEUE
    assert p.is_schedulable_after_pod_change(target, None, other) == QueueingHint.QUEUE_SKIP
    assert p.is_schedulable_after_pod_change(target, None, unscheduled) == QueueingHint.QUEUE_SKIP
    assert p.is_schedulable_after_pod_change(target, db, None) == QueueingHint.QUEUE
    assert p.is_schedulable_after_pod_change(target, other, None) == QueueingHint.QUEUE_SKIP
    assert p.is_schedulable_after_pod_change(target, other, web) == QueueingHint.QUEUE
    assert p.is_schedulable_after_pod_change(target, db, other) == QueueingHint.QUEUE
    assert p.is_schedulable_after_pod_change(target, web, db) == QueueingHint.QUEUE_SKIP


def test_node_change_hint() -> None:
    p = ipa.new(None, FakeHandle())
    target = pod(affinity=[In("app", "zone", "web")])
    assert (
        p.is_schedulable_after_node_change(target, None, node("n", {"zone": "a"}))
        == QueueingHint.QUEUE
    )
    assert (
        p.is_schedulable_after_node_change(target, None, node("n", {"rack": "a"}))
        == QueueingHint.QUEUE_SKIP
    )
    assert (
        p.is_schedulable_after_node_change(pod(), None, node("n", {"zone": "a"}))
        == QueueingHint.QUEUE_SKIP
    )


def test_snapshot_index_follows_dirty_rows() -> None:
    """The pod indexes stay right as pods come and go between cycles (no full rebuild)."""
    cache = Cache()
    nodes = [
        node(f"n{i}", {"zone": f"z{i % 2}", "kubernetes.io/hostname": f"n{i}"}) for i in range(4)
    ]
    for x in nodes:
        cache.add_node(x)
    snap = Snapshot()
    snap.update(cache)
    fw, p = setup(nodes, [], snapshot=snap)
    incoming = pod({"app": "web"}, anti=[In("app", "kubernetes.io/hostname", "web")])
    names = [x.metadata.name for x in nodes]
    assert run_filter(fw, p, incoming, names) == (None, [None] * 4)
    placed = pod({"app": "web"}, node="n1")
    cache.add_pod(placed)
    snap.update(cache)
    assert run_filter(fw, p, incoming, names) == (None, [None, (UNSCHED, ANTI), None, None])
    cache.remove_pod(placed.metadata.uid)
    cache.add_pod(pod({"app": "web"}, node="n3", anti=[In("app", "zone", "web")]))
    snap.update(cache)
    assert run_filter(fw, p, incoming, names) == (
        None,
        [None, (UNSCHED, EXISTING), None, (UNSCHED, ANTI)],
    )


def test_nominated_pods_pass_uses_add_pod() -> None:
    """RunFilterPluginsWithNominatedPods: a nominated pod's anti-affinity counts through AddPod."""
    nodes = [node("n1", {"kubernetes.io/hostname": "n1"})]
    fw, p = setup(nodes, [])
    incoming = pod({"app": "web"})
    nominated = PodInfo(
        pod({"app": "db"}, name="nom", anti=[In("app", "kubernetes.io/hostname", "web")])
    )
    nominated.priority = 10
    fw.nominator.for_node = lambda name: [nominated]  # type: ignore[method-assign]
    state = CycleState()
    # no existing pod has anti-affinity: PreFilter skips, the plugin stays out of the pass
    assert p.kubesched_pre_filter(state, incoming, fw.snapshot.node_infos).is_skip()
    state.skip_filter_plugins.add(NAME)
    assert (
        fw.run_filter_plugins_with_nominated_pods(state, incoming, fw.snapshot.node_infos[0])
        is None
    )
    # an incoming pod with its own terms gets the nominated pod counted
    incoming2 = pod({"app": "web"}, anti=[In("app", "kubernetes.io/hostname", "cache")])
    state2 = CycleState()
    assert p.kubesched_pre_filter(state2, incoming2, fw.snapshot.node_infos) is None
    st = fw.run_filter_plugins_with_nominated_pods(state2, incoming2, fw.snapshot.node_infos[0])
    assert st is not None and st.message == EXISTING  # the nominated pod's anti-affinity (symmetry)
    # its own anti-affinity against the nominated pod is counted too
    incoming3 = pod({"app": "web"}, anti=[In("app", "kubernetes.io/hostname", "db")])
    state3 = CycleState()
    assert p.kubesched_pre_filter(state3, incoming3, fw.snapshot.node_infos) is None
    st = fw.run_filter_plugins_with_nominated_pods(state3, incoming3, fw.snapshot.node_infos[0])
    assert st is not None and st.message == ANTI


# --- end to end ----------------------------------------------------------------------------------

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
}


def _node_yaml(name: str) -> str:
    return f"""apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status:
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""


def _replica_yaml(i: int) -> str:
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: web-{i}, labels: {{app: web}}}}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {{matchLabels: {{app: web}}}}
        topologyKey: kubernetes.io/hostname
  containers:
  - name: c
    image: pause
    resources: {{requests: {{cpu: 100m}}}}
"""


@pytest.mark.anyio
async def test_e2e_four_replicas_anti_affinity_three_nodes() -> None:
    text = "---\n".join(
        [*(_node_yaml(f"n{i}") for i in range(3)), *(_replica_yaml(i) for i in range(4))]
    )
    manifests = load_manifests(["web.yaml"], texts={"web.yaml": text})
    result = await simulate(manifests, parse_config(CONFIG), until=120)
    out = result.to_json_obj()
    placed = {x["name"]: x["nodeName"] for x in out["pods"]}
    bound = [v for v in placed.values() if v]
    assert sorted(bound) == ["n0", "n1", "n2"], placed
    pending = [k for k, v in placed.items() if v is None]
    assert len(pending) == 1
    messages = {e["message"] for e in out["events"] if e["reason"] == "FailedScheduling"}
    # every replica carries the term: the pending one is rejected by its own anti-affinity
    # (checked before the symmetry rule) on every node; upstream's message ends in "pod."
    assert messages == {
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    }
