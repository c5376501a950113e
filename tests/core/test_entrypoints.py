"""Plugins from other distributions, through the ``kubesched`` entry-point group.

Each test puts small fake distributions (a ``*.dist-info`` with ``entry_points.txt``, and the
module it points at) on ``sys.path``, so discovery goes through the real importlib.metadata.
"""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

import kubesched
from kubesched._config import default_profile, parse_config
from kubesched._entrypoints import ENTRY_POINT_GROUP, all_plugins, load_entry_point_plugins
from kubesched._scheduler import Scheduler
from kubesched.plugins import IN_TREE
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


@pytest.mark.parametrize(
    ("value", "module", "expected"),
    [
        pytest.param(
            "{mod}:Gate",
            "raise RuntimeError('boom at import')\n",
            "loading entry point 'Broken' ({mod}:Gate) of distribution 'acme-broken 1.0' in group "
            f"'{GROUP}': RuntimeError: boom at import",
            id="module raises on import",
        ),
        pytest.param(
            "{mod}:Missing",
            "X = 1\n",
            "loading entry point 'Broken' ({mod}:Missing) of distribution 'acme-broken 1.0' in group "
            f"'{GROUP}': AttributeError: ",
            id="attribute does not exist",
        ),
        pytest.param(
            "{mod}:X",
            "X = 1\n",
            "entry point 'Broken' ({mod}:X) of distribution 'acme-broken 1.0' in group "
            f"'{GROUP}': int is not a plugin factory (expected a callable (args, handle) -> plugin, e.g. a class)",
            id="value is not callable",
        ),
    ],
)
def test_a_broken_entry_point_is_a_plugin_error_naming_distribution_and_entry_point(
    site: Path, value: str, module: str, expected: str
) -> None:
    mod = _mod()
    fake_dist(site, "acme-broken", {"Broken": value.format(mod=mod)}, module)
    with pytest.raises(kubesched.PluginError) as exc:
        load_entry_point_plugins(GROUP)
    assert str(exc.value).startswith(expected.format(mod=mod))


def test_two_distributions_offering_one_name_is_a_plugin_error(site: Path) -> None:
    mod = _mod()
    fake_dist(site, "acme-a", {"Gate": f"{mod}:Gate"}, GOOD_PLUGIN)
    fake_dist(site, "acme-b", {"Gate": f"{mod}:Other"})
    with pytest.raises(
        kubesched.PluginError, match=r"plugin 'Gate' is already provided by entry point 'Gate'"
    ):
        load_entry_point_plugins(GROUP)


def test_in_tree_names_win_over_entry_points(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    mod = _mod()
    fake_dist(site, "acme-shadow", {"NodeName": f"{mod}:Gate", "Gate": f"{mod}:Gate"}, GOOD_PLUGIN)
    registry = all_plugins(GROUP)
    assert registry["NodeName"] is IN_TREE["NodeName"]
    assert registry["Gate"].__name__ == "Gate"
    assert set(registry) == {*IN_TREE, "Gate"}
    assert "ignoring entry-point plugin 'NodeName'" in caplog.text


def _install_default_group(site: Path, plugins: dict[str, str], module: str) -> None:
    """A distribution in the real ``kubesched`` group (what Scheduler and parse_config read)."""
    fake_dist(
        site, f"acme-default-{next(_seq)}", plugins, module, group=ENTRY_POINT_GROUP
    )


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


async def test_scheduler_with_a_broken_entry_point_raises_plugin_error(site: Path) -> None:
    _install_default_group(
        site, {"Broken": f"{_mod()}:Gate"}, "raise ImportError('no numpy here')\n"
    )
    async with FakeCluster() as cluster:
        with pytest.raises(
            kubesched.PluginError,
            match=r"entry point 'Broken' .* of distribution 'acme-default-\d+ 1.0'",
        ):
            Scheduler(cluster)
