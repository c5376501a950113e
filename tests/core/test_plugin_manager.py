"""The plugin manager's faster reading of a plugin's attributes finds what pluggy's finds.

``kubesched.runtime._plugins._PluginManager.parse_hookimpl_opts`` answers most names without
``inspect.getattr_static``; for every in-tree plugin and for plugins shaped to reach each branch
(instance attributes, properties, static and class methods, slots, markers above and below the
wrapper, a ``__getattr__``), its answer for every name in ``dir(plugin)`` is pluggy's own.
"""

from __future__ import annotations

import functools
from typing import Any

import pluggy
import pytest

from kubesched import hookimpl, hookspecs
from kubesched.config._config import parse_config
from kubesched.runtime._entrypoints import all_plugins
from kubesched.runtime._framework import build_framework
from kubesched.runtime._plugins import _plugin_manager


class _Base:
    name = "Base"

    @hookimpl
    def kubesched_filter(self, state: Any, pod: Any, nodes: Any) -> None:
        return None


class _Shapes(_Base):
    """Every kind of attribute a plugin may carry."""

    name = "Shapes"
    weight = 3
    nested = _Base

    def __init__(self) -> None:
        self.cache: dict[str, int] = {}
        self.callback = lambda: None
        self.marked_callback = hookimpl(lambda state, pod: None)
        self.bound = self.helper

    @property
    def expensive(self) -> int:
        raise AssertionError("a property is never evaluated")

    @functools.cached_property
    def lazily(self) -> int:
        raise AssertionError("a cached property is never evaluated")

    def helper(self) -> None:
        return None

    @hookimpl
    def kubesched_score(self, state: Any, pod: Any, nodes: Any) -> int:
        return 0

    @staticmethod
    @hookimpl
    def kubesched_pre_filter(state: Any, pod: Any, nodes: Any) -> None:
        return None

    @hookimpl
    @staticmethod
    def kubesched_post_bind(state: Any, pod: Any, node_name: str) -> None:
        return None

    @classmethod
    @hookimpl
    def kubesched_permit(cls, state: Any, pod: Any, node_name: str) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


class _Slotted:
    __slots__ = ("name", "kubesched_filter")

    def __init__(self) -> None:
        self.name = "Slotted"
        self.kubesched_filter = hookimpl(lambda state, pod, nodes: None)


def _in_tree_plugins() -> list[Any]:
    """The default profile's plugins, built as a scheduler builds them."""
    config = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    return list(build_framework(config.profiles[0], all_plugins()).plugins.values())


def _plugins() -> list[Any]:
    return [_Shapes(), _Base(), _Slotted(), _Shapes, hookspecs, *_in_tree_plugins()]


@pytest.mark.parametrize("plugin", _plugins(), ids=lambda p: getattr(p, "name", None) or type(p).__name__)
def test_every_name_gets_pluggys_answer(plugin: Any) -> None:
    ours = _plugin_manager()
    theirs = pluggy.PluginManager(hookspecs.PROJECT)
    for name in dir(plugin):
        assert ours.parse_hookimpl_opts(plugin, name) == theirs.parse_hookimpl_opts(plugin, name), name


def test_the_shapes_register_the_same_hooks() -> None:
    def hooks(pm: pluggy.PluginManager, plugin: Any) -> list[tuple[str, Any]]:
        pm.register(plugin, name="p")
        return sorted((caller.name, impl.function) for caller in pm.get_hookcallers(plugin) or []
                      for impl in caller.get_hookimpls())

    plugin = _Shapes()
    plain = pluggy.PluginManager(hookspecs.PROJECT)
    plain.add_hookspecs(hookspecs)
    found = hooks(_plugin_manager(), plugin)
    assert [n for n, _ in found] == [n for n, _ in hooks(plain, plugin)]
    assert [n for n, _ in found] == [  # the marked callback too: check_pending then refuses it
        "kubesched_filter", "kubesched_permit", "kubesched_post_bind", "kubesched_pre_filter", "kubesched_score",
        "marked_callback",
    ]
