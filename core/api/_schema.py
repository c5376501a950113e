"""Strict field validation: which field names the API server knows, kind by kind.

``kubectl`` sends ``fieldValidation=Strict`` by default, and the API server then refuses an
object with a field its type does not have (``strict decoding error: unknown field
"spec.nodeSelecter"``), where a lenient decoder would drop it silently.  ``_schema.json`` holds
the field names (and field types, to walk into them) of every type kubesched takes, generated
from the official Kubernetes client's models (``tests/tools/schema_gen.py``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

VALIDATION_MODES = ("Strict", "Warn", "Ignore")
"""``fieldValidation``: refuse, warn about, or drop unknown fields."""


@cache
def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(files("kubesched.api").joinpath("_schema.json").read_text())
    return data


def knows(api_version: str, kind: str) -> bool:
    """Whether the schema has ``kind`` (the kinds kubesched decodes into its own types)."""
    return f"{api_version}/{kind}" in _schema()["kinds"]


def unknown_fields(obj: Any, api_version: str, kind: str) -> list[str]:
    """The paths of the fields ``obj`` has that its kind does not (``spec.containers[0].x``),
    in document order; [] for a kind outside the schema."""
    schema = _schema()
    type_name = schema["kinds"].get(f"{api_version}/{kind}")
    if type_name is None:
        return []
    out: list[str] = []
    _walk(obj, type_name, "", schema["types"], out)
    return out


def _walk(value: Any, type_name: str, path: str, types: dict[str, Any], out: list[str]) -> None:
    if type_name.startswith("List["):
        if isinstance(value, list):
            inner = type_name[5:-1]
            for i, item in enumerate(value):
                _walk(item, inner, f"{path}[{i}]", types, out)
        return
    if type_name.startswith("Dict["):
        inner = type_name[type_name.index(",") + 1 : -1].strip()
        if isinstance(value, dict) and inner in types:
            for k, item in value.items():
                _walk(item, inner, f"{path}[{k}]", types, out)
        return
    fields = types.get(type_name)
    if fields is None or not isinstance(value, dict):
        return  # a primitive, or a value of the wrong type (the decoder reports that)
    for k, item in value.items():
        p = f"{path}.{k}" if path else str(k)
        sub = fields.get(k)
        if sub is None:
            out.append(p)
        else:
            _walk(item, sub, p, types, out)


def strict_error(paths: list[str]) -> str:
    """The API server's text for unknown fields (``fieldValidation=Strict``)."""
    return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths)


def warning(path: str) -> str:
    """The API server's Warning header text for one unknown field (``fieldValidation=Warn``)."""
    return f'unknown field "{path}"'
