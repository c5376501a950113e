"""KubeSchedulerConfiguration: defaults, merging, multiPoint expansion, weights, validation.

Upstream: ``pkg/scheduler/apis/config/v1/default_plugins.go`` (getDefaultPlugins, mergePluginSet),
``pkg/scheduler/framework/runtime/framework.go`` (expandMultiPointPlugins, getScoreWeights),
``pkg/scheduler/apis/config/validation/validation.go``; the expansion table is
``framework_test.go TestNewFrameworkMultiPointExpansion``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import hookimpl
from kubesched._errors import ConfigError
from kubesched.config._config import (
    DEFAULT_FEATURE_GATES,
    UPSTREAM_DEFAULT_MULTIPOINT,
    ProfileConfig,
    SchedulerConfig,
    default_multi_point,
    default_profile,
    merge_plugin_set,
    parse_config,
    parse_feature_gates,
)
from kubesched.config._versions import Version, default_feature_gates
from kubesched.plugins import IN_TREE
from kubesched.runtime._framework import PluginError, build_framework

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def config(**fields: Any) -> dict[str, Any]:
    return {**API, **fields}


def profile_config(**profile: Any) -> dict[str, Any]:
    return config(profiles=[profile])


def plugins(**points: Any) -> dict[str, Any]:
    """``plugins(filter={"enabled": ["A", ("B", 3)]})``: names or (name, weight) pairs."""

    def entry(p: Any) -> dict[str, Any]:
        return {"name": p[0], "weight": p[1]} if isinstance(p, tuple) else {"name": p}

    return {
        point: {k: [entry(p) for p in v] for k, v in pset.items()} for point, pset in points.items()
    }


# --- fake plugins, as framework_test.go's testPlugin / scorePlugin1 / ... -------------------


class _Plugin:
    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args


class AllPoints(_Plugin):
    """upstream ``testPlugin``: every extension point except PreEnqueue."""

    @hookimpl
    def kubesched_queue_sort_less(self, a: Any, b: Any) -> bool:
        return False

    @hookimpl
    def kubesched_pre_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None

    @hookimpl
    def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None

    @hookimpl
    def kubesched_post_filter(self, state: Any, pod: Any, node_statuses: Any) -> None:
        return None

    @hookimpl
    def kubesched_pre_score(self, state: Any, pod: Any, nodes: Any) -> None:
        return None

    @hookimpl
    def kubesched_score(self, state: Any, pod: Any, nodes: Any) -> list[int]:
        return [0] * len(nodes)

    @hookimpl
    def kubesched_reserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    @hookimpl
    def kubesched_unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    @hookimpl
    def kubesched_permit(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    @hookimpl
    def kubesched_pre_bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    @hookimpl
    def kubesched_bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None

    @hookimpl
    def kubesched_post_bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None


class PreScoreAndScore(_Plugin):
    """upstream ``scorePlugin1`` / ``scorePlugin2``."""

    @hookimpl
    def kubesched_pre_score(self, state: Any, pod: Any, nodes: Any) -> None:
        return None

    @hookimpl
    def kubesched_score(self, state: Any, pod: Any, nodes: Any) -> list[int]:
        return [0] * len(nodes)


class ScoreWithNormalize(_Plugin):
    """upstream ``scoreWithNormalizePlugin1``: Score (and NormalizeScore) only."""

    @hookimpl
    def kubesched_score(self, state: Any, pod: Any, nodes: Any) -> list[int]:
        return [0] * len(nodes)

    @hookimpl
    def kubesched_normalize_score(self, state: Any, pod: Any, scores: Any) -> None:
        return None


class QueueSortOnly(_Plugin):
    @hookimpl
    def kubesched_queue_sort_less(self, a: Any, b: Any) -> bool:
        return False


class BindOnly(_Plugin):
    @hookimpl
    def kubesched_bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None


FAKE = {
    "testPlugin": AllPoints,
    "scorePlugin1": PreScoreAndScore,
    "scorePlugin2": PreScoreAndScore,
    "scoreWithNormalizePlugin1": ScoreWithNormalize,
    "queueSortPlugin": QueueSortOnly,
    "queueSortPlugin2": QueueSortOnly,
    "bindPlugin": BindOnly,
}

EVERY_POINT = ["queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
               "reserve", "permit", "preBind", "bind", "postBind"]  # fmt: skip


def expanded(profile_plugins: dict[str, Any], registry: Any = FAKE) -> dict[str, list[tuple[str, int]]]:
    """parse → build → the framework's plugins per point; only score weights matter."""
    prof = parse_config(profile_config(plugins=profile_plugins), registry=registry).profiles[0]
    listed = build_framework(prof, registry).list_plugins()
    return {p: [(n, w) if p == "score" else (n, 1) for n, w in es] for p, es in listed.items()}


def test_plugins_everywhere() -> None:
    got = expanded(plugins(multiPoint={"enabled": [("testPlugin", 5)]}))
    assert got == {p: [("testPlugin", 5 if p == "score" else 1)] for p in EVERY_POINT}


def only_test_plugin(**overrides: list[tuple[str, int]]) -> dict[str, list[tuple[str, int]]]:
    out = {p: [("testPlugin", 1)] for p in EVERY_POINT}
    out.update(overrides)
    return {p: v for p, v in out.items() if v}


# framework_test.go TestNewFrameworkMultiPointExpansion, one row per upstream case
EXPANSION_CASES = [
    pytest.param(
        plugins(multiPoint={"enabled": ["testPlugin"]}, preScore={"disabled": ["testPlugin"]},
                score={"disabled": ["testPlugin"]}),
        only_test_plugin(preScore=[], score=[]),
        id="disable MultiPoint plugin at some extension points",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["testPlugin", "scorePlugin1"]}),
        only_test_plugin(preScore=[("testPlugin", 1), ("scorePlugin1", 1)],
                         score=[("testPlugin", 1), ("scorePlugin1", 1)]),
        id="Multiple MultiPoint plugins",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["testPlugin", "scorePlugin1"]}, preScore={"disabled": ["*"]}),
        only_test_plugin(preScore=[], score=[("testPlugin", 1), ("scorePlugin1", 1)]),
        id="disable MultiPoint extension",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["scoreWithNormalizePlugin1", "testPlugin", "scorePlugin1"]},
                score={"enabled": ["scorePlugin1", "testPlugin"]}),
        only_test_plugin(preScore=[("testPlugin", 1), ("scorePlugin1", 1)],
                         score=[("scorePlugin1", 1), ("testPlugin", 1), ("scoreWithNormalizePlugin1", 1)]),
        id="Reorder MultiPoint plugins (specified extension takes precedence)",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["testPlugin", "scorePlugin1"]},
                score={"enabled": ["scoreWithNormalizePlugin1", "scorePlugin1", "testPlugin"]}),
        only_test_plugin(preScore=[("testPlugin", 1), ("scorePlugin1", 1)],
                         score=[("scorePlugin1", 1), ("testPlugin", 1), ("scoreWithNormalizePlugin1", 1)]),
        id="Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["testPlugin", "scorePlugin1"]},
                score={"enabled": [("scorePlugin1", 5), ("testPlugin", 3)]}),
        only_test_plugin(preScore=[("testPlugin", 1), ("scorePlugin1", 1)],
                         score=[("scorePlugin1", 5), ("testPlugin", 3)]),
        id="Override MultiPoint plugins weights",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["queueSortPlugin", "bindPlugin", "scorePlugin1"], "disabled": ["*"]}),
        {"queueSort": [("queueSortPlugin", 1)], "preScore": [("scorePlugin1", 1)],
         "score": [("scorePlugin1", 1)], "bind": [("bindPlugin", 1)]},
        id="disable and enable MultiPoint plugins with '*'",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["bindPlugin", "queueSortPlugin", "scorePlugin1"],
                            "disabled": ["scorePlugin1"]}),
        {"queueSort": [("queueSortPlugin", 1)], "preScore": [("scorePlugin1", 1)],
         "score": [("scorePlugin1", 1)], "bind": [("bindPlugin", 1)]},
        id="disable and enable MultiPoint plugin by name",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": ["testPlugin", "scorePlugin1"]},
                score={"enabled": [("scorePlugin1", 5), ("scorePlugin2", 5), ("testPlugin", 3)]}),
        only_test_plugin(preScore=[("testPlugin", 1), ("scorePlugin1", 1)],
                         score=[("scorePlugin1", 5), ("testPlugin", 3), ("scorePlugin2", 5)]),
        id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("profile_plugins", "want"), EXPANSION_CASES)
def test_multi_point_expansion(profile_plugins: dict[str, Any], want: dict[str, Any]) -> None:
    assert expanded(profile_plugins) == want


def test_multi_point_double_registration_is_an_error() -> None:
    # upstream case "Expect 'already registered' error"
    with pytest.raises(ConfigError) as e:
        parse_config(profile_config(plugins=plugins(multiPoint={"enabled": ["testPlugin", "testPlugin"]})),
                     registry=FAKE)  # fmt: skip
    assert str(e.value) == (
        'profiles[0].plugins.multiPoint.enabled[1].name: Duplicate value: "testPlugin": '
        'plugin "testPlugin" already registered'
    )


def test_specific_point_double_registration_is_an_error() -> None:
    # upstream updatePluginList: plugin "X" already registered as "FilterPlugin"
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.plugins\.filter\.enabled\[1\]\.name: Duplicate"):
        parse_config(profile_config(plugins=plugins(filter={"enabled": ["testPlugin", "testPlugin"]})),
                     registry=FAKE)  # fmt: skip


def test_specific_point_plugin_must_implement_it() -> None:
    with pytest.raises(PluginError, match="does not extend Filter"):
        expanded(plugins(multiPoint={"enabled": ["testPlugin"]}, filter={"enabled": ["bindPlugin"]}))


# --- defaults -------------------------------------------------------------------------------


def test_upstream_default_multi_point() -> None:
    # default_plugins.go getDefaultPlugins (EBSLimits, GCEPDLimits and AzureDiskLimits are gone
    # from v1: validation.go invalidPluginsByVersion)
    assert list(UPSTREAM_DEFAULT_MULTIPOINT) == [
        ("SchedulingGates", 0),
        ("PrioritySort", 0),
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 0),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 0),
        ("NodeVolumeLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DefaultPreemption", 0),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 0),
    ]


def test_default_profile_is_the_upstream_set_of_the_plugins_kubesched_has() -> None:
    # 1.36: DynamicResourceAllocation is on, DynamicResources (weight 2) before DefaultPreemption
    want = [(n, w) for n, w in UPSTREAM_DEFAULT_MULTIPOINT if n in IN_TREE]
    at = [n for n, _ in want].index("DefaultPreemption")
    want.insert(at, ("DynamicResources", 2))
    want.append(("NodeDeclaredFeatures", 0))  # 1.36: its gate is on, applyFeatureGates appends it
    assert default_multi_point() == want
    prof = default_profile()
    assert (prof.scheduler_name, prof.multi_point, prof.enabled, prof.disabled) == (
        "default-scheduler", want, {}, {}
    )
    # plugins that are in-tree but not upstream defaults join only when configured
    assert {n for n, _ in want} <= {n for n, _ in UPSTREAM_DEFAULT_MULTIPOINT} | {"DynamicResources",
                                                                                  "NodeDeclaredFeatures"}
    for extra in ("Gang", "Coscheduling"):
        assert extra not in dict(want)


def test_default_framework_lists_the_defaults_in_upstream_order_and_weights() -> None:
    listed = build_framework(default_profile(), IN_TREE).list_plugins()
    order = [n for n, _ in default_multi_point()]
    for point, entries in listed.items():
        names = [n for n, _ in entries]
        assert names == sorted(names, key=order.index), point
    assert listed["queueSort"] == [("PrioritySort", 1)]
    assert listed["bind"] == [("DefaultBinder", 1)]
    want_weights = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                    "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                    "ImageLocality": 1, "DynamicResources": 2}  # fmt: skip
    assert listed["score"] == [(n, want_weights[n]) for n, _ in listed["score"]]
    assert [n for n, _ in listed["score"]][:2] == ["TaintToleration", "NodeAffinity"]
    assert [n for n, _ in listed["filter"]][:4] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"]


def test_config_defaults() -> None:
    cfg = parse_config(config())
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1.0, 10.0)
    assert cfg.feature_gates == DEFAULT_FEATURE_GATES
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
    assert cfg.profiles[0].multi_point == default_multi_point()
    assert cfg.profiles[0].percentage_of_nodes_to_score is None
    # the dataclass defaults are the same configuration
    plain = SchedulerConfig()
    assert (plain.parallelism, plain.profiles[0].multi_point) == (16, default_multi_point())


@pytest.mark.parametrize("profiles", [[], None, [{}], [None]], ids=["empty list", "null", "empty profile", "null profile"])
def test_missing_profiles_default_to_one_default_profile(profiles: Any) -> None:
    # v1 SetDefaults_KubeSchedulerConfiguration: no profile → one profile with the defaults
    cfg = parse_config(config(profiles=profiles))
    assert [(p.scheduler_name, p.multi_point) for p in cfg.profiles] == [("default-scheduler", default_multi_point())]


def test_fields_are_read() -> None:
    cfg = parse_config(
        config(parallelism=4, percentageOfNodesToScore=50, podInitialBackoffSeconds=2, podMaxBackoffSeconds=20,
               profiles=[{"schedulerName": "a", "percentageOfNodesToScore": 10}, {"schedulerName": "b"}])
    )  # fmt: skip
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (4, 50)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2.0, 20.0)
    assert [(p.scheduler_name, p.percentage_of_nodes_to_score) for p in cfg.profiles] == [("a", 10), ("b", None)]


# --- merging (mergePluginSet) -----------------------------------------------------------------

DEFAULT = [("A", 0), ("B", 2), ("C", 3)]


@pytest.mark.parametrize(
    ("enabled", "disabled", "want"),
    [
        pytest.param([], set(), DEFAULT, id="nothing configured"),
        pytest.param([("B", 5)], set(), [("A", 0), ("B", 5), ("C", 3)], id="re-weighted default keeps its place"),
        pytest.param([("B", 0)], set(), [("A", 0), ("B", 0), ("C", 3)], id="re-configured without weight"),
        pytest.param([("X", 1)], set(), [*DEFAULT, ("X", 1)], id="new plugin appended"),
        pytest.param([], {"B"}, [("A", 0), ("C", 3)], id="disabled default"),
        pytest.param([("B", 7)], {"B"}, [("A", 0), ("C", 3), ("B", 7)], id="disabled then enabled moves it last"),
        pytest.param([("X", 1), ("A", 4)], {"*"}, [("X", 1), ("A", 4)], id="'*' keeps only the user's, in order"),
        pytest.param([("Y", 0), ("C", 1), ("X", 0)], set(), [("A", 0), ("B", 2), ("C", 1), ("Y", 0), ("X", 0)],
                     id="replacements in place, new ones appended in the user's order"),
    ],
)  # fmt: skip
def test_merge_plugin_set(enabled: list[tuple[str, int]], disabled: set[str], want: list[tuple[str, int]]) -> None:
    assert merge_plugin_set(DEFAULT, enabled, disabled) == want


def test_user_multi_point_entry_reweights_a_default_in_place() -> None:
    cfg = parse_config(profile_config(plugins=plugins(multiPoint={"enabled": [("TaintToleration", 7)]})))
    mp = cfg.profiles[0].multi_point
    want = [(n, 7 if n == "TaintToleration" else w) for n, w in default_multi_point()]
    assert mp == want
    score = build_framework(cfg.profiles[0], IN_TREE).list_plugins()["score"]
    assert score[0] == ("TaintToleration", 7)


def test_disabled_multi_point_default_is_gone_everywhere() -> None:
    cfg = parse_config(profile_config(plugins=plugins(multiPoint={"disabled": ["TaintToleration"]})))
    assert "TaintToleration" not in dict(cfg.profiles[0].multi_point)
    listed = build_framework(cfg.profiles[0], IN_TREE).list_plugins()
    assert all("TaintToleration" not in dict(es) for es in listed.values())


def test_disabled_at_one_point_only() -> None:
    cfg = parse_config(profile_config(plugins=plugins(score={"disabled": ["NodeResourcesFit"]})))
    listed = build_framework(cfg.profiles[0], IN_TREE).list_plugins()
    assert "NodeResourcesFit" not in dict(listed["score"])
    assert "NodeResourcesFit" in dict(listed["filter"])
    assert "NodeResourcesFit" in dict(listed["preScore"])


def test_star_disables_every_default_then_user_plugins() -> None:
    cfg = parse_config(
        profile_config(plugins=plugins(multiPoint={"enabled": ["PrioritySort", "NodeName", "DefaultBinder"],
                                                   "disabled": ["*"]}))
    )  # fmt: skip
    assert cfg.profiles[0].multi_point == [("PrioritySort", 0), ("NodeName", 0), ("DefaultBinder", 0)]
    listed = build_framework(cfg.profiles[0], IN_TREE).list_plugins()
    assert listed == {"queueSort": [("PrioritySort", 1)], "filter": [("NodeName", 1)], "bind": [("DefaultBinder", 1)]}


def test_star_at_one_point_keeps_that_points_own_plugins() -> None:
    cfg = parse_config(
        profile_config(plugins=plugins(score={"enabled": [("NodeResourcesFit", 4)], "disabled": ["*"]}))
    )
    listed = build_framework(cfg.profiles[0], IN_TREE).list_plugins()
    assert listed["score"] == [("NodeResourcesFit", 4)]
    assert "TaintToleration" in dict(listed["filter"])


# --- score weights (getScoreWeights) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "want_first"),
    [
        pytest.param([("TaintToleration", 7)], ("TaintToleration", 7), id="score weight overrides multiPoint's"),
        pytest.param(["TaintToleration"], ("TaintToleration", 1), id="score weight 0 becomes 1, not multiPoint's 3"),
        pytest.param([("NodeResourcesFit", 9)], ("NodeResourcesFit", 9), id="overridden plugin moves first"),
    ],
)  # fmt: skip
def test_specific_score_weight(score: list[Any], want_first: tuple[str, int]) -> None:
    cfg = parse_config(profile_config(plugins=plugins(score={"enabled": score})))
    listed = build_framework(cfg.profiles[0], IN_TREE).list_plugins()["score"]
    assert listed[0] == want_first
    assert [n for n, _ in listed].count(want_first[0]) == 1
    rest = [(n, w) for n, w in default_multi_point() if n in dict(listed) and n != want_first[0]]
    assert listed[1:] == [(n, w or 1) for n, w in rest]


def test_multi_point_weight_zero_becomes_one() -> None:
    cfg = parse_config(profile_config(plugins=plugins(multiPoint={"enabled": [("TaintToleration", 0)]})))
    assert cfg.profiles[0].multi_point[4] == ("TaintToleration", 0)
    assert build_framework(cfg.profiles[0], IN_TREE).list_plugins()["score"][0] == ("TaintToleration", 1)


# --- queueSort -------------------------------------------------------------------------------------


def test_exactly_one_queue_sort_none() -> None:
    cfg = parse_config(profile_config(plugins=plugins(queueSort={"disabled": ["*"]})))
    with pytest.raises(PluginError, match="only one queue sort plugin required .*, but got 0"):
        build_framework(cfg.profiles[0], IN_TREE)


def test_exactly_one_queue_sort_two_through_expansion() -> None:
    # the default PrioritySort (multiPoint) plus a queueSort-enabled one: upstream refuses
    prof = parse_config(
        profile_config(plugins=plugins(multiPoint={"enabled": ["queueSortPlugin", "bindPlugin"]},
                                       queueSort={"enabled": ["queueSortPlugin2"]})),
        registry=FAKE,
    ).profiles[0]  # fmt: skip
    with pytest.raises(PluginError, match="only one queue sort plugin required .*, but got 2"):
        build_framework(prof, FAKE)


def test_replacing_the_queue_sort() -> None:
    prof = parse_config(
        profile_config(plugins=plugins(multiPoint={"enabled": ["queueSortPlugin", "bindPlugin"]},
                                       queueSort={"enabled": ["queueSortPlugin2"], "disabled": ["*"]})),
        registry=FAKE,
    ).profiles[0]  # fmt: skip
    assert build_framework(prof, FAKE).list_plugins()["queueSort"] == [("queueSortPlugin2", 1)]


def test_only_one_queue_sort_can_be_enabled() -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(profile_config(plugins=plugins(queueSort={"enabled": ["queueSortPlugin", "queueSortPlugin2"]})),
                     registry=FAKE)  # fmt: skip
    assert str(e.value) == "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"


def test_queue_sort_must_be_the_same_for_all_profiles() -> None:
    data = config(profiles=[{"schedulerName": "a"},
                            {"schedulerName": "b", "plugins": plugins(queueSort={"enabled": ["queueSortPlugin"],
                                                                                 "disabled": ["*"]})}])  # fmt: skip
    with pytest.raises(ConfigError) as e:
        parse_config(data, registry=FAKE)
    assert str(e.value) == "profiles[1].plugins.queueSort: Invalid value: must be the same for all profiles"


# --- validation ------------------------------------------------------------------------------------

VALIDATION_CASES = [
    pytest.param(config(parallelism=0),
                 "parallelism: Invalid value: 0: should be an integer value greater than zero", id="parallelism 0"),
    pytest.param(config(parallelism="16"), "parallelism: Invalid value: '16': must be an integer", id="parallelism string"),
    pytest.param(config(podInitialBackoffSeconds=0),
                 "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0", id="podInitialBackoffSeconds 0"),
    pytest.param(config(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4),
                 "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds",
                 id="podMaxBackoffSeconds below initial"),
    pytest.param(config(percentageOfNodesToScore=101),
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]", id="percentage above 100"),
    pytest.param(config(profiles=[{"percentageOfNodesToScore": -1}]),
                 "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
                 id="profile percentage below 0"),
    pytest.param(config(profiles=[{"schedulerName": ""}]), "profiles[0].schedulerName: Required value",
                 id="empty schedulerName"),
    pytest.param(config(profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}, {"schedulerName": "a"}]),
                 'profiles[2].schedulerName: Duplicate value: "a"', id="duplicate schedulerName"),
    pytest.param(config(profiles=[{}, {}]), 'profiles[1].schedulerName: Duplicate value: "default-scheduler"',
                 id="duplicate default schedulerName"),
    pytest.param(profile_config(pluginConfig=[{"name": "NodeResourcesFit", "args": {}},
                                              {"name": "NodeResourcesFit", "args": {}}]),
                 'profiles[0].pluginConfig[1]: Duplicate value: "NodeResourcesFit"', id="duplicate pluginConfig"),
    pytest.param(profile_config(plugins=plugins(filter={"enabled": ["Nope"]})),
                 'profiles[0].plugins.filter.enabled[0].name: Invalid value: "Nope": plugin "Nope" does not exist',
                 id="unknown plugin at a point"),
    pytest.param(profile_config(plugins=plugins(multiPoint={"enabled": ["NodeName", "Nope"]})),
                 'profiles[0].plugins.multiPoint.enabled[1].name: Invalid value: "Nope": plugin "Nope" does not exist',
                 id="unknown plugin in multiPoint"),
    pytest.param(profile_config(pluginConfig=[{"name": "Nope", "args": {}}]),
                 'profiles[0].pluginConfig[0].name: Invalid value: "Nope": plugin "Nope" does not exist',
                 id="unknown plugin in pluginConfig"),
    pytest.param(profile_config(plugins=plugins(filter={"enabled": ["EBSLimits"]})),
                 'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
                 '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
                 id="plugin removed in v1"),
    pytest.param(profile_config(plugins=plugins(score={"enabled": [("NodeResourcesFit", -1)]})),
                 "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: weight must be non-negative",
                 id="negative weight"),
    pytest.param(profile_config(plugins={"score": {"enabled": [{"name": "NodeResourcesFit", "weight": "high"}]}}),
                 "profiles[0].plugins.score.enabled[0].weight: Invalid value: 'high': must be an integer",
                 id="weight not an integer"),
    pytest.param(profile_config(plugins={"score": {"enabled": [{"weight": 1}]}}),
                 "profiles[0].plugins.score.enabled[0].name: Required value: plugin name is required",
                 id="plugin without a name"),
    pytest.param(config(bogus=1), 'strict decoding error: unknown field "bogus"', id="unknown top-level field"),
    pytest.param(profile_config(bogus=1), 'strict decoding error: unknown field "profiles[0].bogus"',
                 id="unknown profile field"),
    pytest.param(profile_config(plugins={"filters": {}}), 'strict decoding error: unknown field "profiles[0].plugins.filters"',
                 id="unknown extension point"),
    pytest.param(profile_config(plugins={"filter": {"enable": []}}),
                 'strict decoding error: unknown field "profiles[0].plugins.filter.enable"', id="unknown plugin set field"),
    pytest.param(profile_config(plugins={"score": {"enabled": [{"name": "NodeResourcesFit", "wieght": 2}]}}),
                 'strict decoding error: unknown field "profiles[0].plugins.score.enabled[0].wieght"',
                 id="unknown plugin field"),
    pytest.param(profile_config(pluginConfig=[{"name": "NodeResourcesFit", "arg": {}}]),
                 'strict decoding error: unknown field "profiles[0].pluginConfig[0].arg"', id="unknown pluginConfig field"),
    pytest.param({**API, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
                 'apiVersion: no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3"',
                 id="wrong apiVersion"),
    pytest.param({**API, "kind": "KubeProxyConfiguration"},
                 'kind: no kind "KubeProxyConfiguration" is registered for version "kubescheduler.config.k8s.io/v1"',
                 id="wrong kind"),
    pytest.param({"apiVersion": API["apiVersion"]}, "kind: Object 'Kind' is missing", id="missing kind"),
    pytest.param({"kind": API["kind"]}, "apiVersion: Object 'apiVersion' is missing", id="missing apiVersion"),
    pytest.param(["not", "a", "mapping"], "a KubeSchedulerConfiguration must be a mapping", id="not a mapping"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), VALIDATION_CASES)
def test_validation_errors_name_the_field(data: Any, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(data)
    assert str(e.value) == message


def test_plugin_config_of_an_upstream_plugin_kubesched_lacks_is_accepted_and_unused() -> None:
    # upstream builds only the plugins some extension point needs; their pluginConfig is unused
    # (GCEPDLimits: a v1.30.6 in-tree plugin, gone from 1.31)
    v = Version(1, 30)
    doc = profile_config(pluginConfig=[{"name": "GCEPDLimits", "args": {}}])
    cfg = parse_config(doc, version=v, feature_gates=default_feature_gates(v))
    assert "GCEPDLimits" not in cfg.profiles[0].plugin_args


PLUGIN_ARGS_CASES = [
    pytest.param(
        [{"name": "NodeResourcesFit",
          "args": {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}}],
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: "
        "Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
        id="NodeResourcesFit resource weight",
    ),
    pytest.param(
        [{"name": "NodeAffinity", "args": {}},
         {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Balanced"}}}],
        "profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: \"Balanced\": "
        'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        id="NodeResourcesFit strategy, second pluginConfig entry",
    ),
    pytest.param(
        [{"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 2}]}}],
        "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
        id="BalancedAllocation weight",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("plugin_config", "message"), PLUGIN_ARGS_CASES)
def test_plugin_args_errors_carry_the_config_path(plugin_config: list[Any], message: str) -> None:
    prof = parse_config(profile_config(pluginConfig=plugin_config)).profiles[0]
    with pytest.raises(ConfigError) as e:
        build_framework(prof, IN_TREE)
    assert str(e.value) == message


def test_plugin_args_reach_the_plugin() -> None:
    args = {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 3}]}}
    prof = parse_config(profile_config(pluginConfig=[{"name": "NodeResourcesFit", "args": args}])).profiles[0]
    assert prof.plugin_args == {"NodeResourcesFit": args}
    assert prof.arg_paths == {"NodeResourcesFit": "profiles[0].pluginConfig[0].args"}
    build_framework(prof, IN_TREE)


def test_profile_config_builds_directly() -> None:
    prof = ProfileConfig(scheduler_name="x", multi_point=[("PrioritySort", 0), ("NodeName", 0), ("DefaultBinder", 0)])
    assert build_framework(prof, IN_TREE).profile_name == "x"


# --- feature gates -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("", {}, id="none"),
        pytest.param("SchedulerAsyncPreemption=false", {"SchedulerAsyncPreemption": False}, id="one off"),
        pytest.param(" SchedulerAsyncPreemption = false , SchedulerQueueingHints=true ",
                     {"SchedulerAsyncPreemption": False, "SchedulerQueueingHints": True}, id="spaces, two gates"),
        pytest.param("SchedulerAsyncPreemption=0", {"SchedulerAsyncPreemption": False}, id="Go bool 0"),
        pytest.param("SchedulerAsyncPreemption=F", {"SchedulerAsyncPreemption": False}, id="Go bool F"),
        pytest.param("SchedulerAsyncPreemption=TRUE", {"SchedulerAsyncPreemption": True}, id="Go bool TRUE"),
        pytest.param("SchedulerAsyncPreemption=false,SchedulerAsyncPreemption=1", {"SchedulerAsyncPreemption": True},
                     id="last one wins"),
    ],
)  # fmt: skip
def test_feature_gates(text: str, want: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == {**DEFAULT_FEATURE_GATES, **want}


def test_feature_gates_on_top_of_a_base() -> None:
    base = {**DEFAULT_FEATURE_GATES, "SchedulerPopFromBackoffQ": False}
    got = parse_feature_gates("SchedulerAsyncPreemption=false", base)
    assert got == {
        "ClearingNominatedNodeNameAfterBinding": True,
        "DRAAdminAccess": True,
        "DRAConsumableCapacity": True,
        "DRADeviceBindingConditions": True,
        "DRAExtendedResource": True,
        "DRADeviceTaintRules": False,
        "DRADeviceTaints": True,
        "DRAListTypeAttributes": False,
        "DRAPartitionableDevices": True,
        "DRAPrioritizedList": True,
        "DRAResourceClaimDeviceStatus": True,
        "DRASchedulerFilterTimeout": True,
        "DynamicResourceAllocation": True,
        "GangScheduling": False,
        "GenericWorkload": False,
        "InPlacePodLevelResourcesVerticalScaling": True,
        "InPlacePodVerticalScaling": True,
        "KubeschedSourceExact": False,
        "MatchLabelKeysInPodAffinity": True,
        "MatchLabelKeysInPodTopologySpread": True,
        "NodeDeclaredFeatures": True,
        "NodeInclusionPolicyInPodTopologySpread": True,
        "NominatedNodeNameForExpectation": True,
        "OpportunisticBatching": True,
        "PodDisruptionConditions": True,
        "PodLevelResources": True,
        "SchedulerAsyncPreemption": False,
        "SchedulerPopFromBackoffQ": False,
        "SchedulerQueueingHints": True,
        "StorageCapacityScoring": False,
        "TopologyAwareWorkloadScheduling": False,
        "VolumeAttributesClass": True,
        "WorkloadAwarePreemption": False,
    }
    assert base["SchedulerAsyncPreemption"] is True  # not modified


def test_feature_gate_defaults_are_upstreams() -> None:
    # the defaults of the default emulated version, 1.36 (per version: tests/core/test_versions.py);
    # StorageCapacityScoring is alpha (off): VolumeBinding's Score only runs with it
    assert DEFAULT_FEATURE_GATES == {
        "ClearingNominatedNodeNameAfterBinding": True,
        "DRAAdminAccess": True,
        "DRAConsumableCapacity": True,
        "DRADeviceBindingConditions": True,
        "DRAExtendedResource": True,
        "DRADeviceTaintRules": False,
        "DRADeviceTaints": True,
        "DRAListTypeAttributes": False,
        "DRAPartitionableDevices": True,
        "DRAPrioritizedList": True,
        "DRAResourceClaimDeviceStatus": True,
        "DRASchedulerFilterTimeout": True,
        "DynamicResourceAllocation": True,
        "GangScheduling": False,
        "GenericWorkload": False,
        "InPlacePodLevelResourcesVerticalScaling": True,
        "InPlacePodVerticalScaling": True,
        "KubeschedSourceExact": False,
        "MatchLabelKeysInPodAffinity": True,
        "MatchLabelKeysInPodTopologySpread": True,
        "NodeDeclaredFeatures": True,
        "NodeInclusionPolicyInPodTopologySpread": True,
        "NominatedNodeNameForExpectation": True,
        "OpportunisticBatching": True,
        "PodDisruptionConditions": True,
        "PodLevelResources": True,
        "SchedulerAsyncPreemption": True,
        "SchedulerPopFromBackoffQ": True,
        "SchedulerQueueingHints": True,
        "StorageCapacityScoring": False,
        "TopologyAwareWorkloadScheduling": False,
        "VolumeAttributesClass": True,
        "WorkloadAwarePreemption": False,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("SchedulerAsyncPreemption", "--feature-gates: missing bool value for SchedulerAsyncPreemption",
                     id="no value"),
        pytest.param("Bogus=true", "--feature-gates: unrecognized feature gate: Bogus", id="unknown gate"),
        pytest.param("SchedulerAsyncPreemption=yes",
                     '--feature-gates: invalid value of SchedulerAsyncPreemption=yes, err: strconv.ParseBool: '
                     'parsing "yes": invalid syntax', id="not a Go bool"),
    ],
)  # fmt: skip
def test_feature_gate_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_feature_gates(text)
    assert str(e.value) == message
