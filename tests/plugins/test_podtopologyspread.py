"""PodTopologySpread (k/k ``plugins/podtopologyspread/{filtering,scoring,plugin}_test.go``).

Why one file: upstream's filtering_test.go, scoring_test.go and plugin_test.go tables, one row
per case, in upstream's order.

Ported tables: TestPreFilterState, TestPreFilterStateAddPod, TestPreFilterStateRemovePod,
TestSingleConstraint, TestMultipleConstraints, TestPodTopologySpreadScore, TestPreScoreSkip.
Upstream runs them with the NodeInclusionPolicy / MinDomains / MatchLabelKeys gates on or off;
kubesched has them all on (their GA behaviour), so "feature gate disabled" rows whose result
differs are left out, and rows needing Services / ReplicaSets (default-constraint selectors) are
replaced by the "no owner selector: nothing to spread" behaviour kubesched documents.
The expected state is upstream's (TpKeyToCriticalPaths, TpPairToMatchNum, TpKeyToDomainsNum),
read from kubesched's per-constraint state; critical paths compare as upstream's cmpOpts (tied
match numbers sorted by value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from kubesched import CycleState, NodeBatch
from kubesched._errors import ConfigError
from kubesched.api._objects import LabelSelector, LabelSelectorRequirement, Taint, Toleration
from kubesched.cache._cache import Cache, Snapshot
from kubesched.plugins import podtopologyspread as pts
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._nodeinfo import PodInfo
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_pod


def exists(key: str) -> LabelSelector:
    return LabelSelector(match_expressions=[LabelSelectorRequirement(key=key, operator="Exists")])


FOO = exists("foo")
BAR = exists("bar")
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def node(name: str, *, taint: bool = False, **labels: str) -> Any:
    """A node with exactly ``labels`` (``node``/``zone`` style keys; no implicit hostname)."""
    n = make_node(name).obj()
    n.metadata.labels = dict(labels)
    if taint:
        n.spec.taints = [UNSCHEDULABLE_TAINT]
    return n


def host(name: str, **labels: str) -> Any:
    """A node labelled ``kubernetes.io/hostname=<name>`` plus ``labels``."""
    n = node(name, **labels)
    n.metadata.labels["kubernetes.io/hostname"] = name
    return n


def pod(
    name: str,
    on: str | None = None,
    *,
    ns: str = "default",
    terminating: bool = False,
    **labels: str,
) -> Any:
    b = make_pod(name, ns).labels(labels)
    if on:
        b.node(on)
    if terminating:
        b.terminating()
    return b.obj()


def snapshot_of(nodes: list[Any], pods: list[Any]) -> Snapshot:
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    snap = Snapshot()
    snap.update(cache)
    return snap


def handle(snap: Snapshot) -> Any:
    return FakeHandle(snapshot=snap)


DNS, SA = "DoNotSchedule", "ScheduleAnyway"
I32 = 2**31 - 1


def spod(
    *constraints: tuple,
    labels: dict[str, str] | None = None,
    node_selector=None,
    aff_in=None,
    aff_not_in=None,
    tolerate_unschedulable: bool = False,
    name: str = "p",
):
    """The incoming pod: ``constraints`` are ``spread()`` argument tuples."""
    b = make_pod(name).labels(labels if labels is not None else {"foo": ""})
    for c in constraints:
        b.spread(*c[:4], **(c[4] if len(c) > 4 else {}))
    if node_selector:
        b.node_selector(node_selector)
    if aff_in:
        b.node_affinity_in(aff_in[0], aff_in[1])
    if aff_not_in:
        b.node_affinity_in(aff_not_in[0], aff_not_in[1], op="NotIn")
    if tolerate_unschedulable:
        b.toleration("node.kubernetes.io/unschedulable", operator="Exists")
    return b.obj()


def ZONES4():
    return [
        node("node-a", zone="zone1", node="node-a"),
        node("node-b", zone="zone1", node="node-b"),
        node("node-x", zone="zone2", node="node-x"),
        node("node-y", zone="zone2", node="node-y"),
    ]


def plugin_for(nodes, pods, args=None):
    snap = snapshot_of(nodes, pods)
    return pts.new(args or {"defaultingType": "List"}, handle(snap)), snap


def sort_paths(paths):
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return ((v0, n0), (v1, n1))


def state_view(s: pts.PreFilterState):
    """(TpKeyToCriticalPaths, TpPairToMatchNum, TpKeyToDomainsNum) as upstream's test compares them."""
    paths, pairs, domains = {}, {}, {}
    for i, c in enumerate(s.constraints):
        paths[c.topology_key] = sort_paths(s.critical_paths[i].as_tuples())
        for v, n in s.tp_value_to_match_num(i).items():
            pairs[(c.topology_key, v)] = n
        domains[c.topology_key] = s.domains_num(i)
    return paths, pairs, domains


def want(paths, pairs):
    dom = {}
    for k, _ in pairs:
        dom[k] = dom.get(k, 0) + 1
    for k in paths:
        dom.setdefault(k, 0)
    return {k: sort_paths(v) for k, v in paths.items()}, dict(pairs), dom


def P(*args, **kw):
    return pod(*args, **kw)


# --- TestPreFilterState ------------------------------------------------------------------------

PREFILTER_CASES = [
    pytest.param(
        spod((5, "zone", DNS, LabelSelector(match_labels={"foo": "bar"}))),
        ZONES4(),
        [],
        {"zone": (("zone1", 0), ("zone2", 0))},
        {("zone", "zone1"): 0, ("zone", "zone2"): 0},
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
        ],
        {"zone": (("zone2", 2), ("zone1", 3))},
        {("zone", "zone1"): 3, ("zone", "zone2"): 2},
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        spod((1, "zone", DNS, None)),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
        ],
        {"zone": (("zone2", 0), ("zone1", 0))},
        {("zone", "zone1"): 0, ("zone", "zone2"): 0},
        id="normal case with null label selector",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        [
            *ZONES4(),
            node("node-o", zone="zone3", node="node-o"),
            node("node-p", zone="zone3", node="node-p"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
        ],
        {"zone": (("zone3", 0), ("zone2", 2))},
        {("zone", "zone1"): 3, ("zone", "zone2"): 2, ("zone", "zone3"): 0},
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", ns="ns1", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", ns="ns2", foo=""),
            P("p-y2", "node-y", foo=""),
        ],
        {"zone": (("zone2", 1), ("zone1", 2))},
        {("zone", "zone1"): 2, ("zone", "zone2"): 1},
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
            P("p-y3", "node-y", foo=""),
            P("p-y4", "node-y", foo=""),
        ],
        {"zone": (("zone1", 3), ("zone2", 4)), "node": (("node-x", 0), ("node-b", 1))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 4,
            ("node", "node-a"): 2,
            ("node", "node-b"): 1,
            ("node", "node-x"): 0,
            ("node", "node-y"): 4,
        },
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        spod(
            (1, "zone", SA, FOO), (1, "zone", DNS, FOO), (1, "node", SA, FOO), (1, "node", DNS, FOO)
        ),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
            P("p-y3", "node-y", foo=""),
            P("p-y4", "node-y", foo=""),
        ],
        {"zone": (("zone1", 3), ("zone2", 4)), "node": (("node-b", 1), ("node-a", 2))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 4,
            ("node", "node-a"): 2,
            ("node", "node-b"): 1,
            ("node", "node-y"): 4,
        },
        id="soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [P("p-a", "node-a", foo=""), P("p-b", "node-b", bar="")],
        {"zone": (("zone2", 0), ("zone1", 1)), "node": (("node-a", 0), ("node-y", 0))},
        {
            ("zone", "zone1"): 1,
            ("zone", "zone2"): 0,
            ("node", "node-a"): 0,
            ("node", "node-b"): 1,
            ("node", "node-y"): 0,
        },
        id="different labelSelectors - simple version",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo="", bar=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo="", bar=""),
            P("p-y3", "node-y", foo=""),
            P("p-y4", "node-y", foo="", bar=""),
        ],
        {"zone": (("zone1", 3), ("zone2", 4)), "node": (("node-b", 0), ("node-a", 1))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 4,
            ("node", "node-a"): 1,
            ("node", "node-b"): 0,
            ("node", "node-y"): 2,
        },
        id="different labelSelectors - complex pods",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO), aff_not_in=("node", ["node-x"])),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
            P("p-y3", "node-y", foo=""),
            P("p-y4", "node-y", foo=""),
        ],
        {"zone": (("zone1", 3), ("zone2", 4)), "node": (("node-b", 1), ("node-a", 2))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 4,
            ("node", "node-a"): 2,
            ("node", "node-b"): 1,
            ("node", "node-y"): 4,
        },
        id="two spreadConstraints, and with podAffinity",
    ),
    pytest.param(
        spod(
            (1, "zone", DNS, LabelSelector(match_labels={"baz": "tar"})),
            (2, "planet", SA, LabelSelector(match_labels={"fot": "rok"})),
            labels={"foo": "bar", "baz": "tar"},
        ),
        [],
        [],
        {"zone": (("", I32), ("", I32))},
        {},
        id="default constraints and a service, but pod has constraints",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
            P("p-y3", "node-y", foo=""),
            P("p-y4", "node-y", foo=""),
        ],
        {"zone": (("zone1", 3), ("zone2", 4)), "node": (("node-x", 0), ("node-b", 1))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 4,
            ("node", "node-a"): 2,
            ("node", "node-b"): 1,
            ("node", "node-x"): 0,
            ("node", "node-y"): 4,
        },
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    *[
        pytest.param(
            spod((1, "node", DNS, BAR, kw), **extra),
            [
                node("node-a", node="node-a", foo=""),
                node("node-b", node="node-b", foo=""),
                node("node-c", node="node-c", bar=""),
            ],
            [
                P("p-a", "node-a", bar=""),
                P("p-b", "node-b", bar=""),
                P("p-c", "node-b", bar=""),
                P("p-d", "node-c"),
            ],
            paths,
            pairs,
            id=name,
        )
        for name, kw, extra, paths, pairs in [
            (
                "NodeAffinityPolicy honored with labelSelectors",
                {},
                {"node_selector": {"foo": ""}},
                {"node": (("node-a", 1), ("node-b", 2))},
                {("node", "node-a"): 1, ("node", "node-b"): 2},
            ),
            (
                "NodeAffinityPolicy ignored with labelSelectors",
                {"node_affinity_policy": "Ignore"},
                {"node_selector": {"foo": ""}},
                {"node": (("node-c", 0), ("node-a", 1))},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0},
            ),
            (
                "NodeAffinityPolicy honored with nodeAffinity",
                {},
                {"aff_in": ("foo", [""])},
                {"node": (("node-a", 1), ("node-b", 2))},
                {("node", "node-a"): 1, ("node", "node-b"): 2},
            ),
            (
                "NodeAffinityPolicy ignored with nodeAffinity",
                {"node_affinity_policy": "Ignore"},
                {"aff_in": ("foo", [""])},
                {"node": (("node-c", 0), ("node-a", 1))},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0},
            ),
        ]
    ],
    *[
        pytest.param(
            spod((1, "node", DNS, BAR, kw), tolerate_unschedulable=tol),
            [
                node("node-a", node="node-a"),
                node("node-b", node="node-b"),
                node("node-c", taint=True, node="node-c", bar=""),
            ],
            [
                P("p-a", "node-a", bar=""),
                P("p-b", "node-b", bar=""),
                P("p-c", "node-b", bar=""),
                P("p-d", "node-c"),
            ],
            paths,
            pairs,
            id=name,
        )
        for name, kw, tol, paths, pairs in [
            (
                "NodeTaintsPolicy ignored",
                {},
                False,
                {"node": (("node-c", 0), ("node-a", 1))},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0},
            ),
            (
                "NodeTaintsPolicy honored",
                {"node_taints_policy": "Honor"},
                False,
                {"node": (("node-a", 1), ("node-b", 2))},
                {("node", "node-a"): 1, ("node", "node-b"): 2},
            ),
            (
                "NodeTaintsPolicy honored with tolerated taints",
                {"node_taints_policy": "Honor"},
                True,
                {"node": (("node-c", 0), ("node-a", 1))},
                {("node", "node-a"): 1, ("node", "node-b"): 2, ("node", "node-c"): 0},
            ),
        ]
    ],
    pytest.param(
        spod(
            (1, "zone", DNS, FOO),
            (1, "node", DNS, FOO, {"node_affinity_policy": "Ignore"}),
            node_selector={"foo": ""},
        ),
        [
            node("node-a", zone="zone1", node="node-a", foo=""),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x", foo=""),
        ],
        [P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""), P("p-x1", "node-x", foo="")],
        {"zone": (("zone1", 0), ("zone2", 1)), "node": (("node-a", 0), ("node-x", 1))},
        {
            ("zone", "zone1"): 0,
            ("zone", "zone2"): 1,
            ("node", "node-a"): 0,
            ("node", "node-b"): 2,
            ("node", "node-x"): 1,
        },
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO, {"node_taints_policy": "Honor"}), (1, "node", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a", foo=""),
            node("node-b", taint=True, zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x", foo=""),
        ],
        [P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""), P("p-x1", "node-x", foo="")],
        {"zone": (("zone1", 0), ("zone2", 1)), "node": (("node-a", 0), ("node-x", 1))},
        {
            ("zone", "zone1"): 0,
            ("zone", "zone2"): 1,
            ("node", "node-a"): 0,
            ("node", "node-b"): 2,
            ("node", "node-x"): 1,
        },
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO), node_selector={"foo": ""}),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", taint=True, zone="zone1", node="node-b", foo=""),
            node("node-x", zone="zone2", node="node-x", foo=""),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        {"zone": (("zone1", 0), ("zone2", 1)), "node": (("node-b", 0), ("node-x", 1))},
        {("zone", "zone1"): 0, ("zone", "zone2"): 1, ("node", "node-b"): 0, ("node", "node-x"): 1},
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        spod(
            (1, "zone", DNS, FOO, {"node_affinity_policy": "Ignore"}),
            (1, "node", DNS, FOO, {"node_taints_policy": "Honor"}),
            node_selector={"foo": ""},
        ),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", taint=True, zone="zone1", node="node-b", foo=""),
            node("node-x", zone="zone2", node="node-x", foo=""),
            node("node-y", zone="zone2", node="node-y", foo=""),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-x2", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        {"zone": (("zone1", 2), ("zone2", 3)), "node": (("node-y", 1), ("node-x", 2))},
        {("zone", "zone1"): 2, ("zone", "zone2"): 3, ("node", "node-x"): 2, ("node", "node-y"): 1},
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO, {"match_label_keys": ["bar"]}), labels={"foo": "", "bar": "a"}),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo="", bar="a"),
            P("p-b1", "node-b", foo=""),
            P("p-y1", "node-y", foo="", bar="a"),
            P("p-y2", "node-y", bar=""),
        ],
        {"zone": (("zone2", 1), ("zone1", 1))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 1},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    pytest.param(
        spod((1, "zone", DNS, LabelSelector(), {"match_label_keys": ["foo"]}), labels={"foo": "a"}),
        ZONES4(),
        [
            P("p-a1", "node-a", foo="a"),
            P("p-a2", "node-a", foo="a"),
            P("p-b1", "node-b", foo="a"),
            P("p-y1", "node-y", foo="a"),
            P("p-y2", "node-y", foo="a"),
        ],
        {"zone": (("zone2", 2), ("zone1", 3))},
        {("zone", "zone1"): 3, ("zone", "zone2"): 2},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        spod((1, "zone", DNS, None, {"match_label_keys": ["bar"]})),
        ZONES4(),
        [
            P("p-a1", "node-a", foo="a"),
            P("p-a2", "node-a", foo="a"),
            P("p-b1", "node-b", foo="a"),
            P("p-y1", "node-y", foo="a"),
            P("p-y2", "node-y", foo="a"),
        ],
        {"zone": (("zone2", 0), ("zone1", 0))},
        {("zone", "zone1"): 0, ("zone", "zone2"): 0},
        id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO, {"match_label_keys": ["bar"]})),
        ZONES4(),
        [
            P("p-a1", "node-a", foo="a"),
            P("p-a2", "node-a", foo="a"),
            P("p-b1", "node-b", foo="a"),
            P("p-y1", "node-y", foo="a"),
            P("p-y2", "node-y", foo="a"),
        ],
        {"zone": (("zone2", 2), ("zone1", 3))},
        {("zone", "zone1"): 3, ("zone", "zone2"): 2},
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
]


@pytest.mark.parametrize("fast", [True, False], ids=["snapshot", "node-list"])
@pytest.mark.parametrize(("incoming", "nodes", "existing", "paths", "pairs"), PREFILTER_CASES)
def test_pre_filter_state(incoming, nodes, existing, paths, pairs, fast) -> None:
    pl, snap = plugin_for(nodes, existing)
    state = CycleState()
    st = pl.kubesched_pre_filter(
        state, incoming, snap.node_infos if fast else list(snap.node_infos)
    )
    assert st is None
    assert state_view(state.read(pts.PRE_FILTER_STATE_KEY)) == want(paths, pairs)


@pytest.mark.parametrize(
    ("incoming", "args"),
    [
        pytest.param(pod("p", foo=""), None, id="skip if not specified"),
        pytest.param(
            pod("p", foo="bar"),
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            id="default constraints and a service that doesn't match",
        ),
        pytest.param(
            pod("p", foo="bar", baz="kar"),
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            id="default constraints without Services or ReplicaSets select nothing (kubesched)",
        ),
        pytest.param(
            pod("p", foo=""), {}, id="system default constraints are soft: nothing to filter"
        ),
    ],
)
def test_pre_filter_skip(incoming, args) -> None:
    pl, snap = plugin_for([node("node-a", zone="zone1", node="node-a")], [], args)
    assert pl.kubesched_pre_filter(CycleState(), incoming, snap.node_infos).code == Code.SKIP


# --- TestPreFilterStateAddPod / RemovePod --------------------------------------------------------

ADD_CASES = [
    pytest.param(
        spod((1, "node", DNS, FOO)),
        P("p-a1", "node-a", foo=""),
        [],
        0,
        [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
        {"node": (("node-b", 0), ("node-a", 1))},
        {("node", "node-a"): 1, ("node", "node-b"): 0},
        id="node a and b both impact current min match",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO)),
        P("p-a1", "node-a", foo=""),
        [P("p-b1", "node-b", foo="")],
        0,
        [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
        {"node": (("node-a", 1), ("node-b", 1))},
        {("node", "node-a"): 1, ("node", "node-b"): 1},
        id="only node a impacts current min match",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO)),
        P("p-a1", "node-a", ns="ns1", foo=""),
        [P("p-b1", "node-b", foo="")],
        0,
        [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
        {"node": (("node-a", 0), ("node-b", 1))},
        {("node", "node-a"): 0, ("node", "node-b"): 1},
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO)),
        P("p-b2", "node-b", foo=""),
        [P("p-b1", "node-b", foo="")],
        1,
        [node("node-a", zone="zone1", node="node-a"), node("node-b", zone="zone1", node="node-b")],
        {"node": (("node-a", 0), ("node-b", 2))},
        {("node", "node-a"): 0, ("node", "node-b"): 2},
        id="add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        P("p-a1", "node-a", foo=""),
        [],
        0,
        [node("node-a", zone="zone1", node="node-a"), node("node-x", zone="zone2", node="node-x")],
        {"zone": (("zone2", 0), ("zone1", 1)), "node": (("node-x", 0), ("node-a", 1))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 0, ("node", "node-a"): 1, ("node", "node-x"): 0},
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        P("p-a1", "node-a", foo=""),
        [P("p-x1", "node-x", foo="")],
        0,
        [node("node-a", zone="zone1", node="node-a"), node("node-x", zone="zone2", node="node-x")],
        {"zone": (("zone1", 1), ("zone2", 1)), "node": (("node-a", 1), ("node-x", 1))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 1, ("node", "node-a"): 1, ("node", "node-x"): 1},
        id="only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        P("p-a1", "node-a", foo=""),
        [P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""), P("p-x1", "node-x", foo="")],
        0,
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
        ],
        {"zone": (("zone2", 1), ("zone1", 3)), "node": (("node-a", 1), ("node-x", 1))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 1,
            ("node", "node-a"): 1,
            ("node", "node-b"): 2,
            ("node", "node-x"): 1,
        },
        id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        P("p-a1", "node-a", foo=""),
        [
            P("p-b1", "node-b", foo="", bar=""),
            P("p-x1", "node-x", foo="", bar=""),
            P("p-x2", "node-x", bar=""),
        ],
        0,
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
        ],
        {"zone": (("zone2", 1), ("zone1", 2)), "node": (("node-a", 0), ("node-b", 1))},
        {
            ("zone", "zone1"): 2,
            ("zone", "zone2"): 1,
            ("node", "node-a"): 0,
            ("node", "node-b"): 1,
            ("node", "node-x"): 2,
        },
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        P("p-a1", "node-a", foo="", bar=""),
        [
            P("p-b1", "node-b", bar=""),
            P("p-x1", "node-x", foo="", bar=""),
            P("p-x2", "node-x", bar=""),
        ],
        0,
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
        ],
        {"zone": (("zone1", 1), ("zone2", 1)), "node": (("node-a", 1), ("node-b", 1))},
        {
            ("zone", "zone1"): 1,
            ("zone", "zone2"): 1,
            ("node", "node-a"): 1,
            ("node", "node-b"): 1,
            ("node", "node-x"): 2,
        },
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), aff_not_in=("foo", ["bar"])),
        P("p-a1", "node-a", foo="", zone="zone1"),
        [P("p-a2", "node-a", foo="", zone="zone1"), P("p-b1", "node-b", foo="", zone="zone2")],
        0,
        [
            node("node-a", zone="zone1", node="node-a", foo="bar"),
            node("node-b", zone="zone2", node="node-b", foo=""),
        ],
        {"zone": (("zone2", 1), ("", I32))},
        {("zone", "zone2"): 1},
        id="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        P("p-b1", "node-b", foo="", zone="zone2"),
        [P("p-a1", "node-a", foo="", zone="zone1"), P("p-b2", "node-b", foo="", zone="zone2")],
        1,
        [
            node("node-a", zone="zone1", node="node-a", foo="bar"),
            node("node-b", zone="zone2", node="node-b", foo=""),
        ],
        {"zone": (("zone1", 1), ("zone2", 2))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 2},
        id="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        P("p-b1", "node-b", zone="zone2"),
        [P("p-a1", "node-a", foo="", zone="zone1"), P("p-b2", "node-b", foo="", zone="zone2")],
        1,
        [
            node("node-a", zone="zone1", node="node-a", foo="bar"),
            node("node-b", zone="zone2", node="node-b", foo=""),
        ],
        {"zone": (("zone1", 1), ("zone2", 1))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 1},
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), tolerate_unschedulable=True),
        P("p-b1", "node-b", foo="", zone="zone2"),
        [P("p-a1", "node-a", foo="", zone="zone1"), P("p-b2", "node-b", foo="", zone="zone2")],
        1,
        [
            node("node-a", taint=True, zone="zone1", node="node-a"),
            node("node-b", zone="zone2", node="node-b"),
        ],
        {"zone": (("zone1", 1), ("zone2", 2))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 2},
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "added", "existing", "node_idx", "nodes", "paths", "pairs"), ADD_CASES
)
def test_pre_filter_state_add_pod(
    preemptor, added, existing, node_idx, nodes, paths, pairs
) -> None:
    pl, snap = plugin_for(nodes, existing)
    state = CycleState()
    assert pl.kubesched_pre_filter(state, preemptor, snap.node_infos) is None
    ni = snap.get(nodes[node_idx].metadata.name)
    assert pl.kubesched_pre_filter_add_pod(state, preemptor, PodInfo(added), ni) is None
    assert state_view(state.read(pts.PRE_FILTER_STATE_KEY)) == want(paths, pairs)


def _four_nodes_zone():
    return [
        node("node-a", zone="zone1", node="node-a"),
        node("node-b", zone="zone1", node="node-b"),
        node("node-x", zone="zone2", node="node-x"),
        node("node-y", zone="zone2", node="node-y"),
    ]


REMOVE_CASES = [
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
        ],
        [P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""), P("p-x1", "node-x", foo="")],
        0,
        None,
        0,
        {"zone": (("zone1", 1), ("zone2", 1))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 1},
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        _four_nodes_zone(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        0,
        None,
        0,
        {"zone": (("zone1", 1), ("zone2", 2))},
        {("zone", "zone1"): 1, ("zone", "zone2"): 2},
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        _four_nodes_zone(),
        [
            P("p-a0", "node-a", bar=""),
            P("p-a1", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        0,
        None,
        0,
        {"zone": (("zone1", 2), ("zone2", 2))},
        {("zone", "zone1"): 2, ("zone", "zone2"): 2},
        id="delete an irrelevant pod won't help",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        _four_nodes_zone(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        -1,
        P("p-a0", "node-a", bar=""),
        0,
        {"zone": (("zone1", 2), ("zone2", 2))},
        {("zone", "zone1"): 2, ("zone", "zone2"): 2},
        id="delete a non-existing pod won't help",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-x2", "node-x", foo=""),
        ],
        3,
        None,
        2,
        {"zone": (("zone2", 1), ("zone1", 3)), "node": (("node-b", 1), ("node-x", 1))},
        {
            ("zone", "zone1"): 3,
            ("zone", "zone2"): 1,
            ("node", "node-a"): 2,
            ("node", "node-b"): 1,
            ("node", "node-x"): 1,
        },
        id="two spreadConstraints",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), aff_not_in=("foo", ["bar"])),
        [
            node("node-a", zone="zone1", node="node-a", foo="bar"),
            node("node-b", zone="zone2", node="node-b", foo=""),
        ],
        [P("p-a2", "node-a", foo="", zone="zone1"), P("p-b1", "node-b", foo="", zone="zone2")],
        -1,
        P("p-a1", "node-a", foo="", zone="zone1"),
        0,
        {"zone": (("zone2", 1), ("", I32))},
        {("zone", "zone2"): 1},
        id="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a", foo="bar"),
            node("node-b", zone="zone2", node="node-b", foo=""),
        ],
        [P("p-a1", "node-a", foo="", zone="zone1"), P("p-b2", "node-b", foo="", zone="zone2")],
        -1,
        P("p-b1", "node-b", foo="", zone="zone2"),
        1,
        {"zone": (("zone2", 0), ("zone1", 1))},
        {("zone", "zone2"): 0, ("zone", "zone1"): 1},
        id="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "nodes", "existing", "deleted_idx", "deleted", "node_idx", "paths", "pairs"),
    REMOVE_CASES,
)
def test_pre_filter_state_remove_pod(
    preemptor, nodes, existing, deleted_idx, deleted, node_idx, paths, pairs
) -> None:
    pl, snap = plugin_for(nodes, existing)
    state = CycleState()
    assert pl.kubesched_pre_filter(state, preemptor, snap.node_infos) is None
    victim = existing[deleted_idx] if deleted_idx >= 0 else deleted
    ni = snap.get(nodes[node_idx].metadata.name)
    assert pl.kubesched_pre_filter_remove_pod(state, preemptor, PodInfo(victim), ni) is None
    assert state_view(state.read(pts.PRE_FILTER_STATE_KEY)) == want(paths, pairs)


def test_clone_is_independent() -> None:
    pl, snap = plugin_for(_four_nodes_zone(), [P("p-a1", "node-a", foo="")])
    state = CycleState()
    incoming = spod((1, "zone", DNS, FOO))
    pl.kubesched_pre_filter(state, incoming, snap.node_infos)
    copy = state.clone()
    pl.kubesched_pre_filter_add_pod(
        copy, incoming, PodInfo(P("p-x1", "node-x", foo="")), snap.get("node-x")
    )
    assert state.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num(0) == {"zone1": 1, "zone2": 0}
    assert copy.read(pts.PRE_FILTER_STATE_KEY).tp_value_to_match_num(0) == {"zone1": 1, "zone2": 1}


# --- TestSingleConstraint / TestMultipleConstraints ----------------------------------------------

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE

_2103 = [
    P("p-a1", "node-a", foo=""),
    P("p-a2", "node-a", foo=""),
    P("p-b1", "node-b", foo=""),
    P("p-y1", "node-y", foo=""),
    P("p-y2", "node-y", foo=""),
    P("p-y3", "node-y", foo=""),
]
_NODE4 = [
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""),
    node("node-y", node="node-y"),
]
_NODE4_EXISTING = [
    P("p-b1", "node-a", foo=""),
    P("p-b2", "node-b", foo=""),
    P("p-y1", "node-y", foo=""),
]

SINGLE_CASES = [
    pytest.param(spod((1, "zone", DNS, FOO)), ZONES4(), [], [S, S, S, S], id="no existing pods"),
    pytest.param(
        spod((1, "zone", DNS, BAR)),
        ZONES4(),
        [],
        [S, S, S, S],
        id="no existing pods, incoming pod doesn't match itself",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        ZONES4(),
        [
            P("p-a1", "node-a", ns="ns1", foo=""),
            P("p-b1", "node-a", ns="ns2", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        [S, S, U, U],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        spod((1, "zone", DNS, None)),
        ZONES4(),
        [P("p-x1", "node-x", foo=""), P("p-y1", "node-y", foo="")],
        [S, S, S, S],
        id="existing pods do not match null selector",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        ZONES4(),
        [*_2103[:3], *_2103[3:]],
        [S, S, S, S],
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zon="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
        ],
        [S, UU, U, U],
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        spod((1, "rack", DNS, FOO)),
        [node("node-a", zone="zone1", node="node-a"), node("node-x", zone="zone2", node="node-x")],
        [],
        [UU, UU],
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO)),
        ZONES4(),
        _2103,
        [U, U, S, U],
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    pytest.param(
        spod((2, "node", DNS, FOO)),
        ZONES4(),
        _2103,
        [U, S, S, U],
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO), labels={"bar": ""}),
        ZONES4(),
        _2103,
        [U, S, S, U],
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO), aff_in=("node", ["node-a", "node-y"])),
        ZONES4(),
        _2103,
        [S, S, S, U],
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO)),
        [node("node-a", node="node-a"), node("node-b", node="node-b")],
        [P("p-a", "node-a", terminating=True, foo=""), P("p-b", "node-b", foo="")],
        [S, U],
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), aff_not_in=("node", ["node-b"])),
        ZONES4(),
        [P("p-b1", "node-b", foo=""), P("p-b2", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [S, S, U, U],
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    pytest.param(
        spod((2, "node", DNS, FOO, {"min_domains": 4})),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", node="node-c"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-b2", "node-b", foo=""),
            P("p-c1", "node-c", foo=""),
        ],
        [U, U, S],
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
    ),
    pytest.param(
        spod((2, "node", DNS, FOO, {"min_domains": 2})),
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", node="node-c"),
        ],
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-b2", "node-b", foo=""),
            P("p-c1", "node-c", foo=""),
        ],
        [S, S, S],
        id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
    ),
    pytest.param(
        spod((2, "zone", DNS, FOO, {"min_domains": 3})),
        ZONES4(),
        [P("p-b1", "node-a", foo=""), P("p-b2", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [U, U, S, S],
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
    ),
    pytest.param(
        spod((2, "zone", DNS, FOO, {"min_domains": 1})),
        ZONES4(),
        [P("p-b1", "node-a", foo=""), P("p-b2", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [S, S, S, S],
        id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO), node_selector={"foo": ""}),
        _NODE4,
        _NODE4_EXISTING,
        [U, U, S, S],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO, {"node_affinity_policy": "Ignore"}), node_selector={"foo": ""}),
        _NODE4,
        _NODE4_EXISTING,
        [U, U, S, U],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO), aff_in=("foo", [""])),
        _NODE4,
        _NODE4_EXISTING,
        [U, U, S, S],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO, {"node_affinity_policy": "Ignore"}), aff_in=("foo", [""])),
        _NODE4,
        _NODE4_EXISTING,
        [U, U, S, U],
        id="NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO, {"node_taints_policy": "Honor"})),
        [*_NODE4[:3], node("node-y", taint=True, node="node-y")],
        _NODE4_EXISTING,
        [U, U, S, S],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        spod((1, "node", DNS, FOO)),
        [*_NODE4[:3], node("node-y", taint=True, node="node-y")],
        _NODE4_EXISTING,
        [U, U, S, U],
        id="NodeTaintsPolicy ignored",
    ),
]

MULTI_CASES = [
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        ZONES4(),
        _2103,
        [U, U, S, U],
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        ZONES4(),
        [*_2103, P("p-y4", "node-y", foo="")],
        [U, U, U, U],
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        ZONES4(),
        [P("p-a1", "node-a", foo=""), P("p-y1", "node-y", bar="")],
        [U, U, S, U],
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        ZONES4(),
        [P("p-a1", "node-a", foo=""), P("p-x1", "node-x", bar=""), P("p-y1", "node-y", bar="")],
        [U, U, U, U],
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"foo": "", "bar": ""}),
        ZONES4(),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo="", bar=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo="", bar=""),
            P("p-y3", "node-y", foo=""),
        ],
        [U, S, U, U],
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, BAR), labels={"bar": ""}),
        ZONES4(),
        [P("p-a1", "node-a", foo=""), P("p-x1", "node-x", bar=""), P("p-y1", "node-y", bar="")],
        [S, S, U, U],
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a"),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2"),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [P("p-a1", "node-a", foo=""), P("p-y3", "node-y", foo="")],
        [U, S, UU, U],
        id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
    ),
    pytest.param(
        spod(
            (1, "zone", DNS, FOO),
            (1, "node", DNS, FOO, {"node_affinity_policy": "Ignore"}),
            node_selector={"foo": ""},
        ),
        [
            node("node-a", zone="zone1", node="node-a", foo=""),
            node("node-b", zone="zone1", node="node-b", foo=""),
            node("node-x", zone="zone2", node="node-x", foo=""),
            node("node-y", zone="zone2", node="node-y"),
        ],
        [P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [U, U, S, U],
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO, {"node_taints_policy": "Honor"}), (1, "node", DNS, FOO)),
        [
            node("node-a", zone="zone1", node="node-a", foo=""),
            node("node-b", zone="zone1", node="node-b", foo=""),
            node("node-x", zone="zone2", node="node-x", foo=""),
            node("node-y", taint=True, zone="zone2", node="node-y"),
        ],
        [P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [U, U, S, U],
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    pytest.param(
        spod((1, "zone", DNS, FOO), (1, "node", DNS, FOO), node_selector={"foo": ""}),
        [
            node("node-a", zone="zone1", node="node-a", foo=""),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x", foo=""),
            node("node-y", taint=True, zone="zone2", node="node-y", foo=""),
        ],
        [P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [U, S, S, U],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    pytest.param(
        spod(
            (1, "zone", DNS, FOO, {"node_taints_policy": "Honor"}),
            (1, "node", DNS, FOO, {"node_affinity_policy": "Ignore"}),
            node_selector={"foo": ""},
        ),
        [
            node("node-a", zone="zone1", node="node-a", foo=""),
            node("node-b", zone="zone1", node="node-b"),
            node("node-x", zone="zone2", node="node-x", foo=""),
            node("node-y", taint=True, zone="zone2", node="node-y", foo=""),
        ],
        [P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo=""), P("p-y1", "node-y", foo="")],
        [U, U, S, U],
        id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
]


def _codes(out, n):
    return [out[i].code if out and i in out else Code.SUCCESS for i in range(n)]


@pytest.mark.parametrize("batch_kind", ["snapshot", "node-infos"])
@pytest.mark.parametrize(("incoming", "nodes", "existing", "codes"), [*SINGLE_CASES, *MULTI_CASES])
def test_filter(incoming, nodes, existing, codes, batch_kind) -> None:
    pl, snap = plugin_for(nodes, existing)
    state = CycleState()
    assert pl.kubesched_pre_filter(state, incoming, snap.node_infos) is None
    names = [n.metadata.name for n in nodes]
    idx = np.array([snap.index[n] for n in names], dtype=np.int64)
    if batch_kind == "snapshot":
        out = pl.kubesched_filter(state, incoming, NodeBatch(snapshot=snap, indices=idx))
        got = _codes(out, len(names))
    else:  # one node at a time, as the nominated-pods pass and preemption's dry runs do
        got = [
            _codes(pl.kubesched_filter(state, incoming, NodeBatch.of([snap.get(n)])), 1)[0]
            for n in names
        ]
    assert got == codes


def test_filter_reasons() -> None:
    nodes = [node("node-a", zone="zone1"), node("node-b", zone="zone2"), node("node-x")]
    pl, snap = plugin_for(nodes, [P("p-a1", "node-a", foo="")])
    state = CycleState()
    incoming = spod((1, "zone", DNS, FOO))
    pl.kubesched_pre_filter(state, incoming, snap.node_infos)
    out = pl.kubesched_filter(state, incoming, NodeBatch(snapshot=snap, indices=np.arange(3)))
    assert {snap.names[i]: (st.code, st.message) for i, st in out.items()} == {
        "node-a": (Code.UNSCHEDULABLE, "node(s) didn't match pod topology spread constraints"),
        "node-x": (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node(s) didn't match pod topology spread constraints (missing required label)",
        ),
    }


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an Error."""
    pl, snap = plugin_for([node("n")], [])
    out = pl.kubesched_filter(CycleState(), pod("p"), NodeBatch.of(snap.node_infos))
    assert out[0].code == Code.ERROR
    assert out[0].message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


def test_counts_refresh_incrementally() -> None:
    """The per-node count cache sees pods added after it was built (NodeInfo.generation)."""
    cache = Cache()
    for n in _four_nodes_zone():
        cache.add_node(n)
    snap = Snapshot()
    snap.update(cache)
    pl = pts.new({"defaultingType": "List"}, FakeHandle(snapshot=snap))
    incoming = spod((1, "zone", DNS, FOO))
    s1 = pl.filtering.cal_pre_filter_state(incoming, snap.node_infos)
    assert s1.tp_value_to_match_num(0) == {"zone1": 0, "zone2": 0}
    cache.add_pod(P("p-x1", "node-x", foo=""))
    snap.update(cache)
    s2 = pl.filtering.cal_pre_filter_state(incoming, snap.node_infos)
    assert s2.tp_value_to_match_num(0) == {"zone1": 0, "zone2": 1}
    assert s1.tp_value_to_match_num(0) == {"zone1": 0, "zone2": 0}


# --- TestPodTopologySpreadScore ----------------------------------------------------------------

HN = "kubernetes.io/hostname"
_4321 = [
    P("p-a1", "node-a", foo=""),
    P("p-a2", "node-a", foo=""),
    P("p-a3", "node-a", foo=""),
    P("p-a4", "node-a", foo=""),
    P("p-b1", "node-b", foo=""),
    P("p-b2", "node-b", foo=""),
    P("p-b3", "node-b", foo=""),
    P("p-c1", "node-c", foo=""),
    P("p-c2", "node-c", foo=""),
    P("p-d1", "node-d", foo=""),
]
_4213 = [
    P("p-a1", "node-a", foo=""),
    P("p-a2", "node-a", foo=""),
    P("p-a3", "node-a", foo=""),
    P("p-a4", "node-a", foo=""),
    P("p-b1", "node-b", foo=""),
    P("p-b2", "node-b", foo=""),
    P("p-x1", "node-x", foo=""),
    P("p-y1", "node-y", foo=""),
    P("p-y2", "node-y", foo=""),
    P("p-y3", "node-y", foo=""),
]
_2103_abcd = [
    P("p-a1", "node-a", foo=""),
    P("p-a2", "node-a", foo=""),
    P("p-b1", "node-b", foo=""),
    P("p-d1", "node-d", foo=""),
    P("p-d2", "node-d", foo=""),
    P("p-d3", "node-d", foo=""),
]


def hosts(*names, **labels):
    return [host(n, **labels) for n in names]


def zh(name, zone):
    return host(name, zone=zone)


_NODE_ABC = [
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-c", node="node-c"),
]
_NODE_ABC_PODS = [
    P("p-a1", "node-a", foo=""),
    P("p-a2", "node-a", foo=""),
    P("p-b1", "node-b", foo=""),
    P("p-c1", "node-c", foo=""),
]
_DIFF_SEL = [
    P("p-a1", "node-a", foo=""),
    P("p-b1", "node-b", foo="", bar=""),
    P("p-y1", "node-y", foo=""),
    P("p-y2", "node-y", bar=""),
]
_ZH4 = [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")]

SCORE_CASES = [
    pytest.param(
        spod((1, HN, SA, FOO)),
        [],
        hosts("node-a", "node-b"),
        [],
        [100, 100],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        [P("p-a1", "node-a", foo=""), P("p-a2", "node-a", foo=""), P("p-b1", "node-b", foo="")],
        hosts("node-a"),
        hosts("node-b"),
        [100],
        id="one constraint on node, only one node is candidate",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        [P("p-a1", "node-a", foo=""), P("p-b1", "node-b", foo="")],
        hosts("node-a", "node-b"),
        [],
        [100, 100],
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        _2103_abcd,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        [20, 60, 100, 0],
        id="one constraint on node, all 4 nodes are candidates",
    ),
    pytest.param(
        spod((1, HN, SA, None)),
        _2103_abcd,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        [100, 100, 100, 100],
        id="one constraint on node, null selector",
    ),
    pytest.param(
        spod((2, HN, SA, FOO)),
        _2103_abcd,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        [33, 66, 100, 16],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    pytest.param(
        spod((3, HN, SA, FOO)),
        _4321,
        hosts("node-a", "node-b", "node-c", "node-d"),
        [],
        [44, 66, 77, 100],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        _4213,
        hosts("node-a", "node-b", "node-x"),
        hosts("node-y"),
        [33, 83, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        _4213,
        [host("node-a"), node("node-b", n="node-b"), host("node-x")],
        hosts("node-y"),
        [16, 0, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    pytest.param(
        spod((1, "zone", SA, FOO)),
        _4213,
        [zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")],
        [zh("node-y", "zone2")],
        [75, 75, 100],
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        spod((1, "zone", SA, FOO), (1, HN, SA, FOO)),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-x1", "node-x", foo=""),
            P("p-x2", "node-x", foo=""),
            P("p-y1", "node-y", foo=""),
            P("p-y2", "node-y", foo=""),
            P("p-y3", "node-y", foo=""),
            P("p-y4", "node-y", foo=""),
        ],
        [zh("node-a", "zone1"), zh("node-x", "zone2")],
        [zh("node-b", "zone1"), zh("node-y", "zone2")],
        [100, 63],
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    pytest.param(
        spod((1, "zone", SA, FOO), (1, HN, SA, BAR), labels={"foo": "", "bar": ""}),
        _DIFF_SEL,
        _ZH4,
        [],
        [60, 20, 100, 60],
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    pytest.param(
        spod((1, "zone", SA, FOO), (1, HN, SA, BAR), labels={"foo": "", "bar": ""}),
        [
            P("p-b1", "node-b", bar=""),
            P("p-x1", "node-x", foo=""),
            P("p-y1", "node-y", foo="", bar=""),
        ],
        _ZH4,
        [],
        [100, 60, 40, 0],
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    pytest.param(
        spod((1, "zone", SA, FOO), (1, HN, SA, BAR), labels={"foo": "", "bar": ""}),
        _DIFF_SEL,
        _ZH4[:3],
        _ZH4[3:],
        [50, 25, 100],
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        [
            P("p-a1", "node-a", ns="ns1", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-b2", "node-b", foo=""),
        ],
        hosts("node-a", "node-b"),
        [],
        [100, 33],
        id="existing pods in a different namespace do not count",
    ),
    pytest.param(
        spod((1, HN, SA, FOO)),
        [P("p-a", "node-a", terminating=True, foo=""), P("p-b", "node-b", foo="")],
        hosts("node-a", "node-b"),
        [],
        [100, 0],
        id="terminating Pods should be excluded",
    ),
    pytest.param(
        spod((2, "node", SA, FOO, {"min_domains": 10})),
        [
            P("p-a1", "node-a", foo=""),
            P("p-a2", "node-a", foo=""),
            P("p-b1", "node-b", foo=""),
            P("p-b2", "node-b", foo=""),
            P("p-c1", "node-c", foo=""),
        ],
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", node="node-c"),
        ],
        [],
        [75, 75, 100],
        id="minDomains has no effect when ScheduleAnyway",
    ),
    pytest.param(
        spod((1, "node", SA, FOO), node_selector={"foo": ""}),
        _NODE_ABC_PODS,
        _NODE_ABC,
        [],
        [0, 33, 100],
        id="NodeAffinityPolicy honoed with labelSelectors",
    ),
    pytest.param(
        spod((1, "node", SA, FOO, {"node_affinity_policy": "Ignore"}), node_selector={"foo": ""}),
        _NODE_ABC_PODS,
        _NODE_ABC,
        [],
        [66, 100, 100],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        spod((1, "node", SA, FOO), aff_in=("foo", [""])),
        _NODE_ABC_PODS,
        _NODE_ABC,
        [],
        [0, 33, 100],
        id="NodeAffinityPolicy honoed with nodeAffinity",
    ),
    pytest.param(
        spod((1, "node", SA, FOO, {"node_affinity_policy": "Ignore"}), aff_in=("foo", [""])),
        _NODE_ABC_PODS,
        _NODE_ABC,
        [],
        [66, 100, 100],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        spod((1, "node", SA, FOO, {"node_taints_policy": "Honor"})),
        _NODE_ABC_PODS,
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", taint=True, node="node-c"),
        ],
        [],
        [0, 33, 100],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        spod((1, "node", SA, FOO)),
        _NODE_ABC_PODS,
        [
            node("node-a", node="node-a"),
            node("node-b", node="node-b"),
            node("node-c", taint=True, node="node-c"),
        ],
        [],
        [66, 100, 100],
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        spod(
            (1, "zone", SA, LabelSelector(), {"match_label_keys": ["foo"]}),
            (1, HN, SA, LabelSelector(), {"match_label_keys": ["bar"]}),
            labels={"foo": "", "bar": ""},
        ),
        [
            P("p-a1", "node-a", foo=""),
            P("p-b1", "node-b", foo="", bar=""),
            P("p-y1", "node-c", foo=""),
            P("p-y2", "node-c", bar=""),
        ],
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-c", "zone2"),
            zh("node-d", "zone2"),
        ],
        [],
        [60, 20, 60, 100],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    pytest.param(
        spod(
            (1, "zone", SA, FOO),
            (1, HN, SA, BAR, {"match_label_keys": ["baz"]}),
            labels={"foo": "", "bar": "", "baz": ""},
        ),
        [
            P("p-a1", "node-a", foo=""),
            P("p-b1", "node-b", foo="", bar="", baz=""),
            P("p-c1", "node-c", foo=""),
            P("p-c2", "node-c", bar=""),
            P("p-d3", "node-c", bar="", baz=""),
        ],
        [
            zh("node-a", "zone1"),
            zh("node-b", "zone1"),
            zh("node-c", "zone2"),
            zh("node-d", "zone2"),
        ],
        [],
        [60, 20, 60, 100],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


def _score(pl, snap, incoming, names, batch_kind="snapshot"):
    idx = np.array([snap.index[n] for n in names], dtype=np.int64)
    batch = (
        NodeBatch(snapshot=snap, indices=idx)
        if batch_kind == "snapshot"
        else NodeBatch.of([snap.get(n) for n in names])
    )
    state = CycleState()
    st = pl.kubesched_pre_score(state, incoming, batch)
    if st is not None:
        return st
    scores = np.asarray(pl.kubesched_score(state, incoming, batch), dtype=np.int64).copy()
    assert pl.kubesched_normalize_score(state, incoming, scores) is None
    return scores.tolist()


@pytest.mark.parametrize("batch_kind", ["snapshot", "node-infos"])
@pytest.mark.parametrize(("incoming", "existing", "nodes", "failed", "want_scores"), SCORE_CASES)
def test_score(incoming, existing, nodes, failed, want_scores, batch_kind) -> None:
    # upstream runs these with System defaulting
    pl, snap = plugin_for([*nodes, *failed], existing, {})
    assert _score(pl, snap, incoming, [n.metadata.name for n in nodes], batch_kind) == want_scores


@pytest.mark.parametrize(
    ("incoming", "args"),
    [
        pytest.param(
            pod("p"),
            {"defaultingType": "List"},
            id="the pod doesn't have soft topology spread Constraints",
        ),
        pytest.param(
            pod("p", foo="bar", baz="sup"),
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}
                ],
            },
            id="default constraints and a replicaset that doesn't match",
        ),
        pytest.param(
            pod("p", foo=""),
            {},
            id="system defaulting: no Service or ReplicaSet selects the pod (kubesched)",
        ),
    ],
)
def test_pre_score_skip(incoming, args) -> None:
    pl, snap = plugin_for([host("node-a", planet="mars"), host("node-b")], [], args)
    st = _score(pl, snap, incoming, ["node-a", "node-b"])
    assert st.code == Code.SKIP


def test_pre_score_state() -> None:
    """TestPreScoreStateEmptyNodes › node-x doesn't have label zone."""
    pl, snap = plugin_for(
        [host("node-a", zone="zone1"), host("node-b", zone="zone1"), host("node-x")], []
    )
    incoming = spod((1, "zone", SA, FOO), (1, HN, SA, BAR))
    state = CycleState()
    pl.kubesched_pre_score(state, incoming, NodeBatch(snapshot=snap, indices=np.arange(3)))
    s = state.read(pts.PRE_SCORE_STATE_KEY)
    assert s.ignored_nodes == {"node-x"}
    assert s.topology_value_to_pod_counts(0) == {"zone1": 0}
    assert s.weights == [math.log(1 + 2), math.log(2 + 2)]


# --- args, events --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        (
            {"defaultingType": "Foo"},
            "defaultingType",
            'Unsupported value: "Foo": supported values: "System", "List"',
        ),
        (
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            "defaultingType",
            'Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "defaultConstraints[0].maxSkew",
            "Invalid value: 0: not in valid range (0, inf)",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
            },
            "defaultConstraints[0].topologyKey",
            "Required value: can not be empty",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone"}],
            },
            "defaultConstraints[0].whenUnsatisfiable",
            "Required value: can not be empty",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}
                ],
            },
            "defaultConstraints[0].whenUnsatisfiable",
            'Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {},
                    }
                ],
            },
            "defaultConstraints[0].labelSelector",
            "Forbidden: constraint must not define a selector, as they deduced for each pod",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            "defaultConstraints[1]",
            'Duplicate value: "{zone, DoNotSchedule}"',
        ),
    ],
)
def test_args_validation(args, field, message) -> None:
    with pytest.raises(ConfigError) as e:
        pts.new(args, FakeHandle())
    assert (e.value.field, e.value.message) == (field, message)


def test_system_defaults() -> None:
    pl = pts.new(None, FakeHandle())
    assert pl.spread.system_defaulted
    assert [(c.topology_key, c.max_skew, c.when_unsatisfiable) for c in pl.spread.default_constraints] == [
        ("kubernetes.io/hostname", 3, "ScheduleAnyway"),
        ("topology.kubernetes.io/zone", 5, "ScheduleAnyway"),
    ]


def test_queueing_hints() -> None:
    pl = pts.new(None, FakeHandle())
    target = spod((1, "zone", DNS, FOO))
    assigned = P("other", "node-a", foo="")
    assert pl.is_schedulable_after_pod_change(target, None, assigned) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_pod_change(target, assigned, None) == QueueingHint.QUEUE
    assert (
        pl.is_schedulable_after_pod_change(target, None, P("x", "node-a", bar=""))
        == QueueingHint.QUEUE_SKIP
    )
    assert (
        pl.is_schedulable_after_pod_change(target, None, P("u", None, foo=""))
        == QueueingHint.QUEUE_SKIP
    )
    assert (
        pl.is_schedulable_after_pod_change(target, None, P("o", "node-a", ns="other", foo=""))
        == QueueingHint.QUEUE_SKIP
    )
    relabelled = P("other", "node-a", bar="")
    assert pl.is_schedulable_after_pod_change(target, assigned, relabelled) == QueueingHint.QUEUE
    tolerating = make_pod("p").labels({"foo": ""}).obj()
    tolerating.spec.topology_spread_constraints = target.spec.topology_spread_constraints
    tolerating.spec.tolerations = [Toleration(key="k", operator="Exists")]
    assert pl.is_schedulable_after_pod_change(target, target, tolerating) == QueueingHint.QUEUE_SKIP
    n_old, n_new = node("n", zone="z1"), node("n", zone="z2")
    assert pl.is_schedulable_after_node_change(target, None, n_old) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_node_change(target, None, node("m")) == QueueingHint.QUEUE_SKIP
    assert pl.is_schedulable_after_node_change(target, n_old, n_new) == QueueingHint.QUEUE
    assert (
        pl.is_schedulable_after_node_change(target, n_old, node("n", zone="z1"))
        == QueueingHint.QUEUE_SKIP
    )
    assert pl.is_schedulable_after_node_change(target, n_old, None) == QueueingHint.QUEUE


# --- the gates of the constraint fields (v1.30.6 podtopologyspread/common.go
# filterTopologySpreadConstraints: enableNodeInclusionPolicyInPodTopologySpread,
# enableMatchLabelKeysInPodTopologySpread; both on in every release kubesched emulates) --------


def _case(cases: list[Any], case_id: str) -> tuple[Any, ...]:
    (found,) = [c for c in cases if c.id == case_id]
    return tuple(found.values)


@pytest.mark.parametrize(
    ("case_id", "as_id"),
    [
        ("NodeAffinityPolicy ignored with labelSelectors", "NodeAffinityPolicy honored with labelSelectors"),
        ("NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)", "NodeAffinityPolicy honored with nodeAffinity"),
        ("NodeTaintsPolicy honored", "NodeTaintsPolicy ignored"),
    ],
)  # fmt: skip
def test_node_inclusion_policies_need_their_gate(case_id: str, as_id: str) -> None:
    """With NodeInclusionPolicyInPodTopologySpread off the policies are Honor / Ignore whatever
    the constraint says: each case answers as its sibling with the default policy."""
    incoming, nodes, existing, _ = _case(SINGLE_CASES, case_id)
    *_, codes = _case(SINGLE_CASES, as_id)
    snap = snapshot_of(nodes, existing)
    gates = {"NodeInclusionPolicyInPodTopologySpread": False}
    pl = pts.new({"defaultingType": "List"}, FakeHandle(snapshot=snap, feature_gates=gates))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, incoming, snap.node_infos) is None
    idx = np.array([snap.index[n.metadata.name] for n in nodes], dtype=np.int64)
    assert _codes(pl.kubesched_filter(state, incoming, NodeBatch(snapshot=snap, indices=idx)), len(nodes)) == codes


def test_match_label_keys_need_their_gate() -> None:
    """"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty" with
    MatchLabelKeysInPodTopologySpread off: the selector is the constraint's alone (foo), so
    zone1 counts 3 and zone2 1 (with the gate: 1 and 1)."""
    incoming, nodes, existing, *_ = _case(PREFILTER_CASES, "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty")
    snap = snapshot_of(nodes, existing)
    gates = {"MatchLabelKeysInPodTopologySpread": False}
    pl = pts.new({"defaultingType": "List"}, FakeHandle(snapshot=snap, feature_gates=gates))
    state = CycleState()
    assert pl.kubesched_pre_filter(state, incoming, snap.node_infos) is None
    assert state_view(state.read(pts.PRE_FILTER_STATE_KEY)) == want(
        {"zone": (("zone2", 1), ("zone1", 3))}, {("zone", "zone1"): 3, ("zone", "zone2"): 1}
    )
