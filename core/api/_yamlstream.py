"""YAML documents from libyaml's events, built without PyYAML's node tree: the fast path.

PyYAML's loader (even its C one) composes a node per scalar, resolves each one's tag in Python
and constructs the objects from the nodes: for a 54 MB ``kubectl get -o yaml`` export that is
100 s and 2.5 GB.  Here libyaml's event stream (PyYAML's ``CParser``) is turned into dicts and
lists directly, plain scalars resolved as PyYAML's safe loader resolves them (YAML 1.1: a plain
``yes`` is true, ``010`` is 8, ``1e3`` a string), with the same results.

Anything this path does not build exactly as :class:`~kubesched.api._decoding.BoundedLoader`
would (an anchor, an alias, an explicit tag, a merge key, a duplicate key, a key that is not a
scalar, nesting past the bound, a syntax error) raises :class:`Unusual`, and the caller decodes
the stream again with the bounded loader, whose message for it is the one users see.

A ``List``'s items (``kubectl get -o yaml``: one document of thousands of objects) can be
delivered one by one as each is complete (:func:`documents` with ``stream_items``), so the
parsed tree of all of them is never alive at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Unusual(Exception):
    """The stream has something the fast path leaves to the bounded loader."""


class _Resolver:
    """Plain scalars as PyYAML's safe loader resolves and constructs them (its own tables)."""

    def __init__(self) -> None:
        self._loader = yaml.SafeLoader("")
        self._first = frozenset(k for k in yaml.resolver.Resolver.yaml_implicit_resolvers if k)
        self._cache: dict[str, Any] = {}

    def __call__(self, value: str) -> Any:
        if value and value[0] not in self._first:
            return value
        try:
            return self._cache[value]
        except KeyError:
            pass
        tag = self._loader.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        if tag in ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value", "tag:yaml.org,2002:yaml"):
            raise Unusual(tag)
        result = self._loader.yaml_constructors[tag](self._loader, yaml.ScalarNode(tag, value))
        if len(self._cache) < 100_000:
            self._cache[value] = result
        return result


def documents(
    text: str,
    max_depth: int,
    *,
    stream_items: tuple[str, str] | None = None,
    on_item: Callable[[int, Any], None] | None = None,
) -> Iterator[Any]:
    """Every document of ``text`` (None for an empty one), built from libyaml's events.

    With ``stream_items`` (the apiVersion and kind the single document is expected to have)
    and ``on_item``, each element of the root mapping's ``items`` sequence is passed to
    ``on_item(index, element)`` as soon as it is complete and left out of the document; the
    document is yielded without ``items``.  Raises :class:`Unusual` where the bounded loader
    must decide (and where the root turns out not to be the expected one).
    """
    resolve = _Resolver()
    keys: dict[str, str] = {}  # one str object per distinct mapping key
    try:
        loader = _LOADER(text)
    except yaml.YAMLError as e:  # pragma: no cover - a reader error on the whole text
        raise Unusual(str(e)) from None
    # the containers being built: [container, is_mapping, pending key, pairs seen]
    stack: list[list[Any]] = []
    root: Any = None
    streaming: bool | None = False  # None: the items were streamed
    item_index = 0
    try:
        while loader.check_event():
            ev = loader.get_event()
            cls = ev.__class__
            if cls is ScalarEvent:
                if ev.anchor is not None or ev.tag is not None:
                    raise Unusual("tag or anchor")
                value: Any = ev.value
                if ev.implicit[0]:
                    value = resolve(value)
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                if ev.anchor is not None or ev.tag is not None:
                    raise Unusual("tag or anchor")
                if len(stack) >= max_depth:
                    raise Unusual("deep")
                is_map = cls is MappingStartEvent
                stack.append([{} if is_map else [], is_map, None, 0])
                if streaming is False and stream_items is not None and len(stack) == 2 and not is_map:
                    parent = stack[0]
                    if parent[1] and parent[2] == "items":
                        streaming = True
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                top = stack.pop()
                value = top[0]
                if top[1] and len(value) != top[3]:
                    raise Unusual("duplicate key")
                if streaming is True and len(stack) == 1:
                    streaming = None  # the items are done; the root mapping goes on
            elif cls is AliasEvent:
                raise Unusual("alias")
            elif cls is DocumentStartEvent:
                root = None
                continue
            elif cls is DocumentEndEvent:
                yield root
                continue
            elif cls is StreamStartEvent or cls is StreamEndEvent:
                continue
            else:  # pragma: no cover - libyaml has no other events
                raise Unusual(cls.__name__)
            # add ``value`` to the container on top of the stack (or make it the root)
            if not stack:
                root = value
                continue
            top = stack[-1]
            if top[1]:
                key = top[2]
                if key is None:
                    if value.__class__ is dict or value.__class__ is list or value is None:
                        raise Unusual("key")
                    if value.__class__ is str:
                        value = keys.setdefault(value, value)
                    top[2] = value
                    continue
                top[0][key] = value
                top[2] = None
                top[3] += 1
            elif streaming is True and len(stack) == 2:
                assert on_item is not None
                on_item(item_index, value)
                item_index += 1
            else:
                top[0].append(value)
    except yaml.YAMLError as e:
        raise Unusual(str(e)) from None
    finally:
        loader.dispose()
    expected = stream_items is not None and streaming is None and isinstance(root, dict)
    if expected and (root.get("apiVersion"), root.get("kind")) != stream_items:
        raise Unusual("not the List expected")


_ROOT_KEY = re.compile(r"(?m)^(apiVersion|kind|items):[ \t]*(.*?)[ \t]*$")
_DOC_MARK = re.compile(r"(?m)^(?:---|\.\.\.)")


def single_list(text: str) -> tuple[str, str] | None:
    """(apiVersion, kind) when ``text`` looks like one block-style ``...List`` document whose
    ``items`` is a block sequence (``kubectl get -o yaml``): one line each of ``apiVersion:``,
    ``kind: ...List`` and ``items:`` at the margin, no document markers.  A guess, checked as
    the document is built."""
    if _DOC_MARK.search(text) is not None:
        return None
    found: dict[str, list[str]] = {}
    for m in _ROOT_KEY.finditer(text):
        found.setdefault(m.group(1), []).append(m.group(2))
    api, kind, items = found.get("apiVersion", []), found.get("kind", []), found.get("items", [])
    if len(api) != 1 or len(kind) != 1 or items != [""] or not kind[0].endswith("List"):
        return None
    if not re.fullmatch(r"[A-Za-z0-9./-]+", api[0]) or not re.fullmatch(r"[A-Za-z0-9]+", kind[0]):
        return None  # quoted or unusual: leave it to the whole-document path
    return api[0], kind[0]
