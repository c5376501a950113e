"""Scenarios written out: an API object as a manifest (:func:`document`) and one YAML document
(:func:`dump`), for ``kubesched whatif`` overlays and ``kubesched snapshot`` scenarios."""

from __future__ import annotations

import json
import re
from typing import Any

from kubesched.api._objects import to_builtins

__all__ = ["document", "dump"]


def document(obj: Any) -> dict[str, Any]:
    """An API object as a manifest: apiVersion and kind first, an empty status left out."""
    body = to_builtins(obj)
    body.pop("apiVersion", None)
    body.pop("kind", None)
    if not body.get("status"):
        body.pop("status", None)
    return {"apiVersion": obj.api_version, "kind": obj.kind, **body}


def dump(doc: dict[str, Any]) -> str:
    """One YAML document, ``---`` first, in block style (PyYAML's ``safe_dump`` layout, written
    directly: a hundred thousand pods in seconds, where PyYAML's representer takes a minute).
    A string is plain only when no YAML 1.1 resolver could read it as anything else, else
    double-quoted with JSON's escapes (and the characters YAML may not hold raw escaped too)."""
    out = ["---\n"]
    _mapping(doc, "", out)
    return "".join(out)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_NOT_PLAIN = {"yes", "no", "true", "false", "on", "off", "null", "y", "n"}
# what YAML may not hold raw in a double-quoted scalar (non-printable, or a line break)
_UNPRINTABLE = re.compile("[^\x09\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        if _PLAIN.fullmatch(v) and v.lower() not in _NOT_PLAIN:
            return v
        quoted = json.dumps(v, ensure_ascii=False)
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return ".nan"
        if v in (float("inf"), float("-inf")):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v).lower()
        return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text
    if isinstance(v, dict | list) and not v:
        return "{}" if isinstance(v, dict) else "[]"
    raise TypeError(f"cannot write {type(v).__name__} as YAML")


def _mapping(d: dict[str, Any], indent: str, out: list[str]) -> None:
    for k, v in d.items():
        key = _scalar(str(k))
        if isinstance(v, dict) and v:
            out.append(f"{indent}{key}:\n")
            _mapping(v, indent + "  ", out)
        elif isinstance(v, list) and v:
            out.append(f"{indent}{key}:\n")
            _sequence(v, indent, out)
        else:
            out.append(f"{indent}{key}: {_scalar(v)}\n")


def _sequence(items: list[Any], indent: str, out: list[str]) -> None:
    for item in items:
        if isinstance(item, dict) and item:
            first = len(out)
            _mapping(item, indent + "  ", out)
            out[first] = f"{indent}- {out[first][len(indent) + 2:]}"
        elif isinstance(item, list) and item:
            out.append(f"{indent}-\n")
            _sequence(item, indent + "  ", out)
        else:
            out.append(f"{indent}- {_scalar(item)}\n")
