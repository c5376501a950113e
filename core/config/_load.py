"""``kubesched.load_config``: a KubeSchedulerConfiguration read, validated and checked before any
scheduler starts, as ``kubesched run --config`` checks it::

    path ──► read ──┐
    text ───────────┴──► its documents (YAML; JSON by a .json name or a leading "{")
                                        │ exactly one
    mapping ────────────────────────────┤
                                        ▼
                    parse_config (fields, plugin names, entry points)
                                        ▼
                    every profile built once (plugin args, hooks) ──► SchedulerConfig

Every failure is one :class:`~kubesched.ConfigError` whose text is the line the command line
prints for the same file after ``kubesched: error:`` (``bad.yaml,
profiles[0].plugins.filter.enabled[0].name: Invalid value: "Nope": plugin "Nope" does not
exist``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from kubesched._errors import ConfigError
from kubesched.api._decoding import load_documents, parse_documents
from kubesched.config._config import SchedulerConfig, parse_config
from kubesched.runtime._entrypoints import all_plugins
from kubesched.runtime._framework import PluginError, build_framework

ConfigSource = str | os.PathLike[str] | Mapping[str, Any]
"""What :func:`load_config` reads: a path, a document's text, or the decoded document."""


def load_config(
    source: ConfigSource,
    *,
    registry: Mapping[str, Callable[[Any, Any], Any]] | None = None,
) -> SchedulerConfig:
    """A validated KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``), ready for
    :class:`~kubesched.Scheduler`, or :class:`~kubesched.ConfigError` at once.

    ``source`` is, by this rule:

    - an ``os.PathLike`` (a :class:`pathlib.Path`): always a path, the file is read;
    - a ``str`` that holds a newline or starts with ``{`` (after blanks), or is empty: the
      document's text (a one-line document can only be a JSON or YAML flow mapping);
    - any other ``str``: a path;
    - a mapping: the decoded document.

    A file is JSON when its name ends in ``.json`` and YAML otherwise, as ``--config`` reads it; a
    text is JSON when it starts with ``{`` and YAML otherwise.  There must be exactly one document.

    The plugins a configuration may name are the in-tree ones, those installed distributions
    offer (the ``kubesched`` entry-point group: one that failed to load is reported with why), and
    ``registry`` (name → factory ``(args, handle) -> plugin``), which wins over them as in
    ``Scheduler(registry=...)``: give the scheduler the same one.  Every profile is then built
    once, so that bad plugin args, a plugin enabled at an extension point it does not implement
    or a profile without a QueueSort plugin are found here, not when the scheduler starts.

    Errors read as the command line's for the same ``--config``: prefixed with the path, or with
    nothing for a text or a mapping.  What is worth telling but not an error (a plugin
    kubesched does not implement, left out) is in the result's ``warnings``, one line each.
    """
    name, document = _document(source)
    plugins = all_plugins()  # keeps ``.unavailable``: why a broken entry point is missing
    if registry:
        plugins.update(registry)
    try:
        config = parse_config(document, registry=plugins)
    except ConfigError as e:
        raise e.at(source=name) from None
    check_profiles(config, name, plugins)
    return config


def check_profiles(
    config: SchedulerConfig,
    source: str = "",
    registry: Mapping[str, Callable[[Any, Any], Any]] | None = None,
) -> None:
    """Build every profile of ``config`` once (with its feature gates), so that bad plugin args,
    a hook declared ``async def`` that must be plain, or a profile that cannot be assembled (no
    QueueSort plugin) are a :class:`~kubesched.ConfigError` now, prefixed with ``source`` and
    naming the profile's field.  ``registry``: the plugins to build from (default: the in-tree,
    entry-point and temporarily registered ones)."""
    plugins = all_plugins() if registry is None else registry
    for i, profile in enumerate(config.profiles):
        try:
            build_framework(profile, plugins, config.feature_gates)
        except ConfigError as e:
            raise e.at(source=source) from None
        except PluginError as e:
            field = f"profiles[{i}].{e.field}" if e.field else f"profiles[{i}]"
            raise ConfigError(str(e), source=source, field=field) from None


def _document(source: ConfigSource) -> tuple[str, Any]:
    """(the name errors give ``source``: its path or "", its one decoded document)."""
    if isinstance(source, Mapping):
        return "", source
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        if not isinstance(path, str):
            raise TypeError(f"load_config takes a str path, not {type(path).__name__}")
        name, documents = path, load_documents(path)
    elif isinstance(source, str):
        if _is_text(source):
            name, documents = "", parse_documents(source, json=source.lstrip().startswith("{"))
        else:
            name, documents = source, load_documents(source)
    else:
        raise TypeError(
            f"load_config takes a path, a document's text or a mapping, not {type(source).__name__}"
        )
    if len(documents) != 1:
        raise ConfigError(
            f"expected one KubeSchedulerConfiguration document, found {len(documents)}", source=name
        )
    return name, documents[0][1]


def _is_text(source: str) -> bool:
    """Whether :func:`load_config` takes the ``str`` ``source`` as a document's text (a path
    otherwise): it holds a newline, starts with ``{`` after blanks, or is empty."""
    return not source or "\n" in source or source.lstrip().startswith("{")


__all__ = ["ConfigSource", "check_profiles", "load_config"]
