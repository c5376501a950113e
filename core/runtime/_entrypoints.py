"""Plugins from other packages, found through the ``kubesched`` entry-point group.

A distribution offers plugins by declaring entry points in its ``pyproject.toml``::

    [project.entry-points.kubesched]
    NodeLabelGate = "kubesched_example_plugins:NodeLabelGate"

The entry point's *name* is the plugin name a KubeSchedulerConfiguration refers to; its *value*
is a factory ``(args, handle) -> plugin`` (a class whose ``__init__`` takes ``(args, handle)``
is one).  ``args`` is the plugin's ``pluginConfig`` args (a dict, or None); ``handle`` is a
:class:`kubesched.framework.Handle`.

How the registries combine (as upstream's out-of-tree registry merged into the in-tree one):

    entry points  <  in-tree plugins (kubesched.plugins.IN_TREE)  <  temporary  <  Scheduler(registry=...)

An entry point named like an in-tree plugin is ignored (and logged); a plugin registered for a
test with :func:`kubesched.testing.register_temporary_plugin` overrides both; the caller's
``registry=`` overrides everything.  Entry-point plugins are never part of the default profile: a configuration
enables them by name, like any out-of-tree plugin.

A broken entry point breaks only the configurations that use it.  One that fails to import, whose
value is not callable, or whose name two distributions offer with different values is left out,
with one warning line (logger ``kubesched``) naming the entry point and the error; the registry
keeps why (:attr:`kubesched.runtime._framework.PluginRegistry.unavailable`), so that a profile naming
it is told more than "does not exist".
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from kubesched.runtime._framework import PluginRegistry
from kubesched.runtime._handle import Handle

ENTRY_POINT_GROUP = "kubesched"
"""The entry-point group third-party plugins register under."""

Factory = Callable[[Any, Handle], Any]
"""A plugin's factory: ``(args, handle) -> plugin``, as upstream's ``New(ctx, args, handle)``."""

log = logging.getLogger("kubesched")

_temporary: dict[str, Factory] = {}
"""Plugins registered by :func:`register_temporary_plugin` (tests), by name."""

_warned: set[tuple[str, str]] = set()
"""(group, warning) already logged: each broken entry point is one line per process, however
many times the registry is built (the configuration, each profile, each scheduler)."""


def _distribution(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "<unknown distribution>"
    name = dist.metadata["Name"] if dist.metadata is not None else None
    return f"{name or dist.name} {dist.version}"


def load_entry_point_plugins(group: str = ENTRY_POINT_GROUP) -> PluginRegistry:
    """Plugin name → factory, for every entry point of ``group`` in the installed distributions.

    Each entry point is imported now.  One that cannot be used is left out, with one warning line
    naming the distribution, the entry point and the error, and the reason kept in the result's
    ``unavailable`` (name → why): a failing import, a value that is not callable, or a name two
    distributions offer with different values (neither is used).  An entry point without a name
    is left out with a warning.

    Reading every distribution's entry points takes 10-15 ms, and a configuration, each profile
    and each scheduler ask again; the answer is kept while the places distributions are found in
    are unchanged (``sys.path``, the meta path finders, each path directory's modification time,
    as importlib.metadata's own lookup cache is), and each caller gets its own copy.
    """
    where = _search_path()
    seen = _found.get(group)
    if seen is None or seen[0] != where:
        seen = _found[group] = (where, _load(group))
    cached = seen[1]
    out = PluginRegistry(cached)
    out.unavailable.update(cached.unavailable)
    return out


_found: dict[str, tuple[tuple[object, ...], PluginRegistry]] = {}
"""What :func:`load_entry_point_plugins` last found for each group, with the :func:`_search_path`
it was found on (one per group: a process whose working directory keeps changing holds no more)."""


def _search_path() -> tuple[object, ...]:
    """Where importlib.metadata looks for distributions, with each directory's mtime."""
    where: list[object] = [id(finder) for finder in sys.meta_path]
    for entry in sys.path:
        try:
            mtime = os.stat(entry or ".").st_mtime_ns
        except (OSError, TypeError, ValueError):
            mtime = None
        where.append((entry, mtime))
    return tuple(where)


def _load(group: str) -> PluginRegistry:
    found = PluginRegistry()
    by_name: dict[str, list[tuple[metadata.EntryPoint, str]]] = {}
    eps = sorted(metadata.entry_points(group=group), key=lambda ep: (ep.name, ep.value))
    for ep in eps:
        where = (
            f"entry point {ep.name!r} ({ep.value}) of distribution {_distribution(ep)!r} in group {group!r}"
        )
        if not ep.name:
            _warn(group, f"ignoring {where}: the entry point name (the plugin name) is empty")
            continue
        offers = by_name.setdefault(ep.name, [])
        if all(value != ep.value for value in (other.value for other, _ in offers)):
            offers.append((ep, where))  # the same plugin found twice on sys.path counts once
    for name, offers in by_name.items():
        if len(offers) > 1:
            why = "offered by " + " and by ".join(where for _, where in offers)
            _unavailable(found, group, name, why)
            continue
        ep, where = offers[0]
        try:
            factory = ep.load()
        except Exception as err:
            _unavailable(found, group, name, f"loading {where}: {type(err).__name__}: {err}")
            continue
        if not callable(factory):
            why = (
                f"{where}: {type(factory).__name__} is not a plugin factory "
                "(expected a callable (args, handle) -> plugin, e.g. a class)"
            )
            _unavailable(found, group, name, why)
            continue
        found[name] = factory
    return found


def _unavailable(found: PluginRegistry, group: str, name: str, why: str) -> None:
    why = " ".join(why.split())  # one line, whatever the error's text
    found.unavailable[name] = why
    _warn(group, f"plugin {name!r} is unavailable: {why}")


def _warn(group: str, message: str) -> None:
    if (group, message) not in _warned:
        _warned.add((group, message))
        log.warning("%s", message)


def all_plugins(group: str = ENTRY_POINT_GROUP) -> PluginRegistry:
    """Every plugin a configuration may name: entry points, in-tree plugins, temporary ones.

    In-tree names win over entry points of the same name (the entry point is logged and ignored);
    temporarily registered plugins win over both.  ``unavailable`` says why a broken entry
    point's plugin is missing (see :func:`load_entry_point_plugins`).
    """
    from kubesched.plugins import IN_TREE

    out = load_entry_point_plugins(group)
    for name in sorted(out.keys() & IN_TREE.keys()):
        log.warning("ignoring entry-point plugin %r: an in-tree plugin has that name", name)
    out.update(IN_TREE)
    out.update(_temporary)
    for name in out.keys() & out.unavailable.keys():  # offered by the tree or a test after all
        del out.unavailable[name]
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
