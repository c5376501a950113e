"""Decoding untrusted YAML and JSON with bounds, as upstream's decoders have them.

Manifests (``kubesched simulate``), configurations (:func:`kubesched.load_config`) and the fake
API server decode with these (:func:`load_documents`: a file's documents, each error one line): a
document nests at most :data:`MAX_DEPTH` levels; YAML aliases may not expand a document past a
small allowance (go-yaml's rule against alias bombs); a duplicate key is refused (upstream's
strict decoding); a lone UTF-16 surrogate in JSON becomes U+FFFD, as Go's decoder makes it.  A
file is read to at most :data:`MAX_INPUT_BYTES` (``simulate /dev/zero`` ends in one line).
"""

from __future__ import annotations

import errno
import json
import re
from pathlib import Path
from typing import Any

import yaml

from kubesched._errors import ConfigError
from kubesched.api import _yamlstream

# libyaml's safe loader when PyYAML was built with it (8x faster), else the pure-Python one
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Bounds on one document, so that no input can exhaust the stack or the memory: a nesting depth
# well inside Python's recursion limit, and a rule against alias bombs in go-yaml's spirit
# (what aliases expand to may not exceed half the document's own nodes plus an allowance)
MAX_DEPTH = 100
_ALIAS_ALLOWANCE = 10_000
MAX_INPUT_BYTES = 1 << 30
"""The most one input file may hold (a 1,000,000-pod manifest is a few hundred MB)."""


def read_text(path: str | Path, limit: int = MAX_INPUT_BYTES) -> str:
    """A file's UTF-8 text, newlines universal as ``Path.read_text``'s, read to at most ``limit``
    bytes.  Every failure is an OSError whose ``strerror`` is one line: beyond the limit (EFBIG),
    not UTF-8 (EILSEQ, naming the byte), or the system's own."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {_bytes(limit)}, the most an input may hold")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise OSError(errno.EILSEQ, f"not UTF-8 text (byte {e.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


class BoundedLoader(_YAML_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, refusing duplicate keys and aliases that expand past the bound."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._count_aliases = isinstance(stream, str) and "*" in stream
        self._sizes: dict[int, tuple[int, int]] = {}
        self._expanded = 0

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if self._count_aliases and node in self.constructed_objects and not isinstance(node, yaml.ScalarNode):
            self._expanded += _size(node, self._sizes)[0]
            if self._expanded > _ALIAS_ALLOWANCE + _size(self._root, self._sizes)[0] // 2:
                raise yaml.constructor.ConstructorError(
                    None, None, "document contains excessive aliasing", node.start_mark
                )
        return super().construct_object(node, deep)

    def construct_document(self, node: Any) -> Any:
        self._root = node
        self._expanded = 0
        # a document with aliases is a graph: measure it with shared nodes counted once
        try:
            too_deep = _size(node, self._sizes)[1] > MAX_DEPTH if self._count_aliases else _too_deep(node)
        except RecursionError as e:  # an alias of an enclosing node
            raise yaml.constructor.ConstructorError(None, None, str(e), node.start_mark) from None
        if too_deep:
            raise yaml.constructor.ConstructorError(
                None, None, f"document nested deeper than {MAX_DEPTH} levels", node.start_mark
            )
        return super().construct_document(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        # the node's own pairs: flattening ``<<`` merge keys deletes them from this very list
        # and puts the merged pairs (which the own keys may override) in a new one
        own = node.value
        mapping = super().construct_mapping(node, deep)
        if len(mapping) != len(node.value) or own is not node.value:
            seen: set[Any] = set()
            for key_node, _ in own:
                key = self.construct_object(key_node)
                if not isinstance(key, (str, int, float, bool)):
                    continue
                if key in seen:
                    where = _path_to(self._root, node)
                    field = f"{where}.{key}" if where else str(key)
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f'strict decoding error: duplicate field "{field}"',
                        key_node.start_mark,
                    )
                seen.add(key)
        return mapping


def _path_to(root: Any, target: Any) -> str:
    """The field path of mapping node ``target`` in the composed tree ``root`` (``spec`` or
    ``spec.containers[0]``), as the API server names fields; "" for the root or when not found."""
    stack: list[tuple[Any, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    stack.append((v, f"{path}.{k.value}" if path else str(k.value)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node.value))
    return ""


def _too_deep(root: Any) -> bool:
    """Whether a composed YAML tree (no aliases) nests deeper than MAX_DEPTH (level by level,
    scalars skipped)."""
    level = [root]
    depth = 0
    scalar = yaml.ScalarNode
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        nxt = []
        for n in level:
            if n.__class__ is yaml.MappingNode:
                for k, v in n.value:
                    if k.__class__ is not scalar:
                        nxt.append(k)
                    if v.__class__ is not scalar:
                        nxt.append(v)
            elif n.__class__ is yaml.SequenceNode:
                nxt.extend(c for c in n.value if c.__class__ is not scalar)
        level = nxt
    return False


def _size(root: Any, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(nodes when expanded, depth) of a composed YAML node, iteratively, shared nodes once."""
    stack = [(root, False)]
    visiting: set[int] = set()  # the nodes being expanded: the current node's ancestors
    while stack:
        node, done = stack.pop()
        if id(node) in memo:
            continue
        if isinstance(node, yaml.ScalarNode):
            memo[id(node)] = (1, 1)
            continue
        if isinstance(node, yaml.MappingNode):
            children = [n for kv in node.value for n in kv]
        else:
            children = list(node.value)
        if not done:
            if id(node) in visiting:
                raise RecursionError("document contains a recursive alias")
            visiting.add(id(node))
            stack.append((node, True))
            for c in children:
                if id(c) in visiting:  # an alias of an enclosing node: an infinite document
                    raise RecursionError("document contains a recursive alias")
                if id(c) not in memo:
                    stack.append((c, False))
        else:
            visiting.discard(id(node))
            sizes = [memo.get(id(c), (1, MAX_DEPTH + 1)) for c in children]
            memo[id(node)] = (1 + sum(n for n, _ in sizes), 1 + max((d for _, d in sizes), default=0))
    return memo[id(root)]


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f'duplicate field "{k}"')
            seen.add(k)
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _replace_surrogates(data: Any) -> Any:
    """Lone UTF-16 surrogates (``"\\ud800"``) become U+FFFD, as Go's JSON decoder makes them."""

    def fix(s: str) -> str:
        return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")

    if isinstance(data, str):
        return fix(data)
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k in list(item):
                v = item.pop(k)
                item[fix(k)] = fix(v) if isinstance(v, str) else v
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(item, list):
            for i, v in enumerate(item):
                if isinstance(v, str):
                    item[i] = fix(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return data


def _json_depth_ok(data: Any) -> bool:
    """Whether ``data`` nests at most MAX_DEPTH levels (iteratively)."""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return True


def decode_json(text: str | bytes) -> Any:
    """JSON as upstream's decoder reads it: duplicate fields refused, nesting bounded, lone
    surrogates replaced.  Raises ValueError (one line) on bad input."""
    try:
        data = json.loads(text, object_pairs_hook=_json_pairs)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise ValueError(f"invalid JSON: nested deeper than {MAX_DEPTH} levels") from None
    if not _json_depth_ok(data):
        raise ValueError(f"invalid JSON: nested deeper than {MAX_DEPTH} levels")
    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if _SURROGATE_ESCAPE.search(raw):
        data = _replace_surrogates(data)
    return data


def load_yaml_documents(text: str) -> list[Any]:
    """Every document of a YAML stream, bounded; raises yaml.YAMLError on bad input."""
    return list(yaml.load_all(text, Loader=BoundedLoader))




def drop_nulls(value: Any) -> Any:
    """An explicit ``null`` (``labels:`` left empty by a template) means the field is absent, as
    Go's decoding into an object takes it: such keys are dropped, at every depth."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


# --- the documents of one file -------------------------------------------------------------------


def load_documents(path: str, text: str | None = None) -> list[tuple[int, Any]]:
    """The documents of one YAML / JSON file (1-based document numbers): ``.json`` is JSON, any
    other name YAML.  Every failure is one :class:`~kubesched.ConfigError` line naming the file
    (and, for YAML, the document).

    ``text`` gives the content directly (``path`` then only names it in errors).
    """
    p = Path(path)
    if text is None:
        try:
            text = read_text(p)
        except OSError as e:
            raise ConfigError(f"cannot read: {e.strerror or e}", source=path) from None
        except ValueError:  # a NUL byte in the file name
            raise ConfigError("cannot read: invalid file name", source=repr(path)) from None
    return parse_documents(text, source=path, json=p.suffix == ".json")


def parse_documents(text: str, *, source: str = "", json: bool = False) -> list[tuple[int, Any]]:
    """The documents of a YAML stream, or of a JSON text (``json``), with their 1-based numbers;
    empty YAML documents are left out, and a JSON ``...List`` stands for its ``items``.  Errors
    are :class:`~kubesched.ConfigError` lines whose source is ``source`` (may be empty)."""
    if json:
        try:
            data = decode_json(text)
        except ValueError as e:
            raise ConfigError(str(e), source=source) from None
        kind = data.get("kind") if isinstance(data, dict) else None
        items = data.get("items") if isinstance(kind, str) and kind.endswith("List") else None
        docs = items if isinstance(items, list) else [data]
        return list(enumerate(docs, start=1))
    try:  # libyaml's events built straight into objects; anything unusual: the bounded loader
        docs = list(_yamlstream.documents(text, MAX_DEPTH))
    except _yamlstream.Unusual:
        docs = _bounded_documents(text, source)
    return [(i, d) for i, d in enumerate(docs, start=1) if d is not None]


def _bounded_documents(text: str, source: str) -> list[Any]:
    """The documents as the bounded loader builds them, each error one ConfigError line."""
    try:
        return list(yaml.load_all(text, Loader=BoundedLoader))
    except yaml.constructor.ConstructorError as e:
        raise _yaml_error(source, text, e) from None
    except yaml.YAMLError as e:
        if getattr(e, "problem", None) == "exceeded maximum nesting depth":  # libyaml's own bound:
            raise _yaml_error(source, text, e) from None  # the pure-Python parser would recurse past it, slowly
        # parse again with the pure-Python loader: its messages are the clearer ones
        try:
            list(yaml.safe_load_all(text))
        except yaml.YAMLError as e2:
            raise _yaml_error(source, text, e2) from None
        except RecursionError:
            pass
        raise _yaml_error(source, text, e) from None


def _yaml_error(path: str, text: str, e: yaml.YAMLError) -> ConfigError:
    """One line for a YAML syntax error: where, and what."""
    mark = getattr(e, "problem_mark", None)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        offset = _offset(text, mark)
    elif isinstance(getattr(e, "position", None), int):  # a ReaderError (a forbidden character)
        offset = e.position  # type: ignore[attr-defined]
    else:
        offset = 0
    doc = _document_at(text, offset)
    source = f"{path}: document {doc}" if path else f"document {doc}"
    if problem.startswith("strict decoding error"):  # well-formed YAML, a field given twice
        return ConfigError(f"{problem} (line {mark.line + 1})" if mark else problem, source=source)
    return ConfigError(f"malformed YAML{where}: {problem}", source=source)


def _document_at(text: str, offset: int) -> int:
    """The 1-based number of the document holding ``offset`` (``---`` lines separate them)."""
    before = text[:offset]
    n = len(re.findall(r"(?m)^---", before))
    starts_with_marker = re.match(r"(?:\s*#[^\n]*\n|\s*\n)*---", text) is not None
    return max(1, n if starts_with_marker else n + 1)


def _offset(text: str, mark: Any) -> int:
    lines = text.split("\n")
    return int(sum(len(line) + 1 for line in lines[: mark.line]) + mark.column)


__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "BoundedLoader",
    "decode_json",
    "drop_nulls",
    "load_documents",
    "load_yaml_documents",
    "parse_documents",
    "read_text",
]
