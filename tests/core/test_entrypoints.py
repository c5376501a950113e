"""Plugins from other distributions, through the ``kubesched`` entry-point group.

Each test puts small fake distributions (a ``*.dist-info`` with ``entry_points.txt``, and the
module it points at) on ``sys.path``, so discovery goes through the real importlib.metadata.
"""

from __future__ import annotations

import itertools
import logging
import os
import textwrap
from pathlib import Path

import pytest

import kubesched
from kubesched.config._config import default_profile, parse_config
from kubesched.plugins import IN_TREE
from kubesched.runtime._entrypoints import (
    ENTRY_POINT_GROUP,
    all_plugins,
    load_entry_point_plugins,
    register_temporary_plugin,
)
from kubesched.scheduler._scheduler import Scheduler
from kubesched.transports.fake import FakeCluster

pytestmark = pytest.mark.anyio

GROUP = "kubesched-test-entrypoints"  # a private group: the installed distributions stay out
_seq = itertools.count()

GOOD_PLUGIN = """
import kubesched

class Gate:
    name = "Gate"

    def __init__(self, args, handle):
        self.args = args

    @kubesched.hookimpl
    @kubesched.per_node_filter
    def kubesched_filter(self, state, pod, node_info):
        return None
"""


def fake_dist(
    root: Path, dist: str, entry_points: dict[str, str], module: str = "", group: str = GROUP
) -> None:
    """A distribution ``dist`` 1.0 offering ``entry_points`` (name → value) in ``group``."""
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
    if module:
        name = entry_points[next(iter(entry_points))].split(":")[0]
        (root / f"{name}.py").write_text(textwrap.dedent(module))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _mod() -> str:
    return f"kubesched_ep_test_{next(_seq)}"


def test_entry_point_name_is_the_plugin_name_and_value_its_factory(site: Path) -> None:
    mod = _mod()
    fake_dist(site, "acme-plugins", {"Gate": f"{mod}:Gate"}, GOOD_PLUGIN)
    found = load_entry_point_plugins(GROUP)
    assert list(found) == ["Gate"]
    plugin = found["Gate"]({"x": 1}, None)
    assert plugin.args == {"x": 1}
    assert kubesched.hookspecs.implements(plugin, "kubesched_filter")


def test_no_entry_points_is_an_empty_registry(site: Path) -> None:
    assert load_entry_point_plugins("kubesched-test-nothing-here") == {}


def test_a_distribution_installed_later_is_found_and_each_caller_gets_a_copy(site: Path) -> None:
    """What was found is kept while the search path is unchanged; a distribution installed into
    a path directory afterwards changes that directory's mtime, and is found (importlib.metadata's
    own lookup cache keys on the same mtime)."""
    first = load_entry_point_plugins(GROUP)
    assert first == {}
    first["Mine"] = object  # a caller's copy: changing it changes no later answer
    before = site.stat().st_mtime_ns
    mod = _mod()
    fake_dist(site, "acme-later", {"Gate": f"{mod}:Gate"}, GOOD_PLUGIN)
    # an install a second later (within one clock tick, the filesystem may keep the old mtime)
    os.utime(site, ns=(before + 10**9, before + 10**9))
    assert list(load_entry_point_plugins(GROUP)) == ["Gate"]


BROKEN = [
    pytest.param(
        "{mod}:Gate",
        "raise ImportError('no module named numpy_extra')\n",
        "loading entry point 'Broken' ({mod}:Gate) of distribution 'acme-broken 1.0' in group "
        f"'{GROUP}': ImportError: no module named numpy_extra",
        id="module fails to import",
    ),
    pytest.param(
        "{mod}:Gate",
        "raise RuntimeError('boom\\n  at import')\n",
        "loading entry point 'Broken' ({mod}:Gate) of distribution 'acme-broken 1.0' in group "
        f"'{GROUP}': RuntimeError: boom at import",
        id="module raises on import, a two-line message",
    ),
    pytest.param(
        "{mod}:Missing",
        "X = 1\n",
        "loading entry point 'Broken' ({mod}:Missing) of distribution 'acme-broken 1.0' in group "
        f"'{GROUP}': AttributeError: module '{{mod}}' has no attribute 'Missing'",
        id="attribute does not exist",
    ),
    pytest.param(
        "{mod}:X",
        "X = 1\n",
        "entry point 'Broken' ({mod}:X) of distribution 'acme-broken 1.0' in group "
        f"'{GROUP}': int is not a plugin factory (expected a callable (args, handle) -> plugin, e.g. a class)",
        id="value is not callable",
    ),
]


@pytest.mark.parametrize(("value", "module", "why"), BROKEN)
def test_a_broken_entry_point_is_left_out_with_one_warning_line(
    site: Path, caplog: pytest.LogCaptureFixture, value: str, module: str, why: str
) -> None:
    mod = _mod()
    fake_dist(site, "acme-broken", {"Broken": value.format(mod=mod)}, module)
    fake_dist(site, "acme-good", {"Gate": f"{mod}_good:Gate"}, GOOD_PLUGIN)
    (site / f"{mod}_good.py").write_text(GOOD_PLUGIN)
    why = why.format(mod=mod)
    with caplog.at_level(logging.WARNING, logger="kubesched"):
        found = load_entry_point_plugins(GROUP)
        again = load_entry_point_plugins(GROUP)
    assert list(found) == list(again) == ["Gate"]  # the others still load
    assert found.unavailable == again.unavailable == {"Broken": why}
    # one line, once per process however often the registry is built
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, f"plugin 'Broken' is unavailable: {why}")
    ]


def test_two_distributions_offering_one_name_offer_neither(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mod = _mod()
    fake_dist(site, "acme-a", {"Gate": f"{mod}:Gate"}, GOOD_PLUGIN)
    fake_dist(site, "acme-b", {"Gate": f"{mod}:Other"})
    with caplog.at_level(logging.WARNING, logger="kubesched"):
        found = load_entry_point_plugins(GROUP)
    assert dict(found) == {}
    why = (
        f"offered by entry point 'Gate' ({mod}:Gate) of distribution 'acme-a 1.0' in group '{GROUP}' "
        f"and by entry point 'Gate' ({mod}:Other) of distribution 'acme-b 1.0' in group '{GROUP}'"
    )
    assert found.unavailable == {"Gate": why}
    assert caplog.messages == [f"plugin 'Gate' is unavailable: {why}"]


def test_in_tree_names_win_over_entry_points(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    mod = _mod()
    fake_dist(site, "acme-shadow", {"NodeName": f"{mod}:Gate", "Gate": f"{mod}:Gate"}, GOOD_PLUGIN)
    registry = all_plugins(GROUP)
    assert registry["NodeName"] is IN_TREE["NodeName"]
    assert registry["Gate"].__name__ == "Gate"
    assert set(registry) == {*IN_TREE, "Gate"}
    assert "ignoring entry-point plugin 'NodeName'" in caplog.text


def _install_default_group(site: Path, plugins: dict[str, str], module: str) -> str:
    """A distribution in the real ``kubesched`` group (what Scheduler and parse_config read);
    its name."""
    dist = f"acme-default-{next(_seq)}"
    fake_dist(site, dist, plugins, module, group=ENTRY_POINT_GROUP)
    return dist


def test_parse_config_accepts_entry_point_plugins_but_never_enables_them_by_default(
    site: Path,
) -> None:
    mod = _mod()
    # "ImageLocality" is in upstream's default set: an out-of-tree plugin of that name still
    # joins a profile only when the configuration names it
    _install_default_group(
        site, {"Gate": f"{mod}:Gate", "ImageLocality": f"{mod}:Gate"}, GOOD_PLUGIN
    )
    base = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    assert parse_config(base).profiles[0].multi_point == default_profile().multi_point
    cfg = parse_config(
        {
            **base,
            "profiles": [
                {
                    "plugins": {"filter": {"enabled": [{"name": "Gate"}]}},
                    "pluginConfig": [{"name": "Gate", "args": {"label": "x"}}],
                }
            ],
        }
    )
    assert cfg.profiles[0].enabled["filter"] == [("Gate", 0)]
    assert cfg.profiles[0].plugin_args["Gate"] == {"label": "x"}
    with pytest.raises(kubesched.ConfigError, match='plugin "Nope" does not exist'):
        parse_config(
            {**base, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]}
        )


async def test_scheduler_merges_entry_points_under_in_tree_and_caller_registry(site: Path) -> None:
    mod = _mod()
    _install_default_group(site, {"Gate": f"{mod}:Gate", "Other": f"{mod}:Gate"}, GOOD_PLUGIN)

    def caller_factory(args: object, handle: object) -> object:
        raise AssertionError("not built: no profile enables it")

    async with FakeCluster() as cluster:
        sched = Scheduler(cluster, registry={"Other": caller_factory})
        assert sched.registry["Gate"].__name__ == "Gate"
        assert sched.registry["Other"] is caller_factory
        assert sched.registry["NodeName"] is IN_TREE["NodeName"]


BASE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


async def test_a_broken_entry_point_breaks_only_the_configurations_that_use_it(site: Path) -> None:
    mod = _mod()
    dist = _install_default_group(site, {"Broken": f"{mod}:Gate"}, "raise ImportError('no numpy here')\n")
    why = (
        f"loading entry point 'Broken' ({mod}:Gate) of distribution '{dist} 1.0' in group "
        "'kubesched': ImportError: no numpy here"
    )
    # a configuration that does not name it: parsed, built, running
    cfg = parse_config({**BASE, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "NodeName"}]}}}]})
    async with FakeCluster() as cluster:
        sched = Scheduler(cluster, cfg)
        assert "Broken" not in sched.registry
        assert sched.registry.unavailable == {"Broken": why}
    # one that does: the unknown-plugin ConfigError, saying why it is missing
    with pytest.raises(kubesched.ConfigError) as exc:
        parse_config({**BASE, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Broken"}]}}}]})
    assert str(exc.value) == (
        'profiles[0].plugins.filter.enabled[0].name: Invalid value: "Broken": plugin "Broken" does not exist'
        f": {why}"
    )
    # a profile built in Python reaches the framework, which says why
    profile = default_profile()
    profile.multi_point.append(("Broken", 1))
    async with FakeCluster() as cluster:
        with pytest.raises(kubesched.PluginError) as perr:
            Scheduler(cluster, kubesched.SchedulerConfig(profiles=[profile]))
    assert str(perr.value) == f'"Broken" does not exist: {why}'


def test_a_plugin_offered_after_all_is_not_unavailable(site: Path) -> None:
    """A broken entry point named like an in-tree plugin, or a temporarily registered one."""
    mod = _mod()
    fake_dist(site, "acme-shadowed", {"NodeName": f"{mod}:Gate", "Temp": f"{mod}:Gate"}, "raise ImportError('x')\n")
    with register_temporary_plugin("Temp", lambda args, handle: None):
        registry = all_plugins(GROUP)
    assert registry["NodeName"] is IN_TREE["NodeName"]
    assert "Temp" in registry
    assert registry.unavailable == {}
