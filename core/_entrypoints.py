"""Plugins from other packages, found through the ``kubesched`` entry-point group.

A distribution offers plugins by declaring entry points in its ``pyproject.toml``::

    [project.entry-points.kubesched]
    NodeLabelGate = "kubesched_example_plugins:NodeLabelGate"

The entry point's *name* is the plugin name a KubeSchedulerConfiguration refers to; its *value*
is a factory ``(args, handle) -> plugin`` (a class whose ``__init__`` takes ``(args, handle)``
is one).  ``args`` is the plugin's ``pluginConfig`` args (a dict, or None); ``handle`` is the
profile's :class:`~kubesched.Framework`.

How the registries combine (as upstream's out-of-tree registry merged into the in-tree one):

    entry points  <  in-tree plugins (kubesched.plugins.IN_TREE)  <  temporary  <  Scheduler(registry=...)

An entry point named like an in-tree plugin is ignored (and logged); a plugin registered for a
test with :func:`kubesched.testing.register_temporary_plugin` overrides both; the caller's
``registry=`` overrides everything.  Entry-point plugins are never part of the default profile: a configuration
enables them by name, like any out-of-tree plugin.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from ._framework import PluginError

ENTRY_POINT_GROUP = "kubesched"
"""The entry-point group third-party plugins register under."""

Factory = Callable[[Any, Any], Any]

log = logging.getLogger("kubesched")

_temporary: dict[str, Factory] = {}
"""Plugins registered by :func:`register_temporary_plugin` (tests), by name."""


def _distribution(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "<unknown distribution>"
    name = dist.metadata["Name"] if dist.metadata is not None else None
    return f"{name or dist.name} {dist.version}"


def load_entry_point_plugins(group: str = ENTRY_POINT_GROUP) -> dict[str, Factory]:
    """Plugin name → factory, for every entry point of ``group`` in the installed distributions.

    Each entry point is imported now, so that a broken one fails loudly and early: a failing
    import, a value that is not callable, or two distributions offering the same name raise
    :class:`kubesched.PluginError` naming the distribution and the entry point.
    """
    found: dict[str, Factory] = {}
    origin: dict[str, tuple[str, str]] = {}  # name → (value, where)
    eps = sorted(metadata.entry_points(group=group), key=lambda ep: (ep.name, ep.value))
    for ep in eps:
        dist = _distribution(ep)
        where = f"entry point {ep.name!r} ({ep.value}) of distribution {dist!r} in group {group!r}"
        if not ep.name:
            raise PluginError(f"{where}: the entry point name (the plugin name) is empty")
        if ep.name in origin:
            value, first = origin[ep.name]
            if value == ep.value:  # the same plugin found twice on sys.path
                continue
            raise PluginError(f"{where}: plugin {ep.name!r} is already provided by {first}")
        try:
            factory = ep.load()
        except Exception as err:
            raise PluginError(f"loading {where}: {type(err).__name__}: {err}") from err
        if not callable(factory):
            raise PluginError(
                f"{where}: {type(factory).__name__} is not a plugin factory "
                "(expected a callable (args, handle) -> plugin, e.g. a class)"
            )
        found[ep.name] = factory
        origin[ep.name] = (ep.value, where)
    return found


def all_plugins(group: str = ENTRY_POINT_GROUP) -> dict[str, Factory]:
    """Every plugin a configuration may name: entry points, in-tree plugins, temporary ones.

    In-tree names win over entry points of the same name (the entry point is logged and ignored);
    temporarily registered plugins win over both.
    """
    from kubesched.plugins import IN_TREE

    out = load_entry_point_plugins(group)
    for name in sorted(out.keys() & IN_TREE.keys()):
        log.warning("ignoring entry-point plugin %r: an in-tree plugin has that name", name)
    out.update(IN_TREE)
    out.update(_temporary)
    return out


@contextmanager
def register_temporary_plugin(name: str, factory: Factory) -> Iterator[Factory]:
    """Make ``name`` a known plugin (``factory(args, handle) -> plugin``) inside the block.

    Every registry built meanwhile sees it (``Scheduler``, ``parse_config``, ``kubesched
    simulate`` run in-process), as if an installed distribution offered it, and it may replace
    an in-tree plugin of the same name.  On exit the previous registration, if any, is restored.
    """
    if not name:
        raise ValueError("a plugin name is required")
    if not callable(factory):
        raise TypeError(f"plugin {name!r}: the factory must be callable (args, handle) -> plugin")
    missing = object()
    previous = _temporary.get(name, missing)
    _temporary[name] = factory
    try:
        yield factory
    finally:
        if previous is missing:
            _temporary.pop(name, None)
        else:
            _temporary[name] = previous  # type: ignore[assignment]


__all__ = [
    "ENTRY_POINT_GROUP",
    "Factory",
    "all_plugins",
    "load_entry_point_plugins",
    "register_temporary_plugin",
]
