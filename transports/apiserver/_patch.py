"""The PATCH flavours an API server accepts, applied to an object's wire form (plain dicts).

- ``application/merge-patch+json`` (RFC 7386): maps merge, ``null`` deletes, the rest replaces.
- ``application/json-patch+json`` (RFC 6902): add / remove / replace / move / copy / test.
- ``application/strategic-merge-patch+json``: a merge patch that merges lists of objects by their
  ``patchMergeKey`` (containers by name, conditions by type, ...) and understands the directives
  ``$patch`` (replace / delete / merge), ``$retainKeys``, ``$setElementOrder/<list>`` and
  ``$deleteFromPrimitiveList/<list>``, as ``strategicpatch.StrategicMergePatch`` does.  The merge
  keys come from the Go struct tags of the built-in kinds this server serves (below), keyed by
  field name: every list with one of these names in Pods, Nodes, PodDisruptionBudgets,
  PriorityClasses, Events, Leases and Namespaces carries that key.
- ``application/apply-patch+yaml`` (server-side apply): the applied configuration is merged into
  the live object the strategic way.  Field ownership (managedFields) is not tracked, so a field
  dropped from a later applied configuration is not removed.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["PatchError", "apply_json_patch", "json_merge_patch", "strategic_merge_patch"]

# field name → patchMergeKey (from the +patchMergeKey/+patchStrategy=merge tags of k8s.io/api)
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
}
# lists of scalars with patchStrategy=merge (a set union)
MERGE_PRIMITIVE_LISTS = frozenset({"finalizers"})


class PatchError(ValueError):
    """A patch that cannot be applied (a 422 Invalid)."""


# --- JSON merge patch --------------------------------------------------------------------------


def json_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


# --- JSON patch ----------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list[Any], token: str, *, insert: bool) -> int:
    if token == "-" and insert:
        return len(container)
    try:
        i = int(token)
    except ValueError:
        raise PatchError(f"invalid array index {token!r}") from None
    if i < 0 or i > len(container) or (i == len(container) and not insert):
        raise PatchError(f"array index {i} out of bounds")
    return i


def _parent(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, insert=False)]
        else:
            raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
    return cur


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, insert=False)]
    raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")


def _remove(doc: Any, tokens: list[str]) -> Any:
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, insert=False))
    raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _parent(doc, tokens)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, insert=True), value)
    else:
        raise PatchError(f"doc is missing path: /{'/'.join(tokens)}")
    return doc


def apply_json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902, on a deep copy of ``doc``."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid JSON patch operation {op!r}")
        kind, tokens = op["op"], _pointer(op["path"])
        if kind == "add":
            doc = _add(doc, tokens, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, tokens)
        elif kind == "replace":
            _get(doc, tokens)
            if not tokens:
                doc = copy.deepcopy(op.get("value"))
            else:
                _remove(doc, tokens)
                doc = _add(doc, tokens, copy.deepcopy(op.get("value")))
        elif kind in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, tokens, value)
        elif kind == "test":
            if _get(doc, tokens) != op.get("value"):
                raise PatchError(f"testing value {op['path']} failed")
        else:
            raise PatchError(f"unexpected operation {kind!r}")
    return doc


# --- strategic merge patch --------------------------------------------------------------------


def strategic_merge_patch(original: Any, patch: Any) -> Any:
    """``strategicpatch.StrategicMergePatch`` over the built-in kinds (see MERGE_KEYS)."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    return _merge_map(original if isinstance(original, dict) else {}, patch)


def _merge_map(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive!r}")
    result = dict(original)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    orders: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value if isinstance(value, list) else []
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            gone = value if isinstance(value, list) else []
            result[field] = [x for x in result.get(field) or [] if x not in gone]
            continue
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                result[key] = _merge_map(current if isinstance(current, dict) else {}, value)
        elif isinstance(value, list) and key in MERGE_KEYS:
            result[key] = _merge_list(
                current if isinstance(current, list) else [], value, MERGE_KEYS[key]
            )
        elif isinstance(value, list) and key in MERGE_PRIMITIVE_LISTS:
            merged = list(current) if isinstance(current, list) else []
            merged.extend(v for v in value if v not in merged)
            result[key] = merged
        else:
            result[key] = copy.deepcopy(value)
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _reorder(result[field], order, MERGE_KEYS.get(field))
    return result


def _merge_list(original: list[Any], patch: list[Any], key: str) -> list[Any]:
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [copy.deepcopy(p) for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    result = [copy.deepcopy(x) for x in original]
    for item in patch:
        if not isinstance(item, dict):
            if item not in result:
                result.append(copy.deepcopy(item))
            continue
        if key not in item:
            raise PatchError(f"map: {item!r} does not contain declared merge key: {key}")
        where = next(
            (i for i, x in enumerate(result) if isinstance(x, dict) and x.get(key) == item[key]),
            None,
        )
        if item.get("$patch") == "delete":
            if where is not None:
                del result[where]
            continue
        if where is None:
            result.append(_merge_map({}, item))
        else:
            result[where] = _merge_map(result[where], item)
    return result


def _reorder(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    def ident(x: Any) -> Any:
        return x.get(key) if key is not None and isinstance(x, dict) else x

    rank = {repr(ident(o)): i for i, o in enumerate(order)}
    return sorted(items, key=lambda x: rank.get(repr(ident(x)), len(rank)))
