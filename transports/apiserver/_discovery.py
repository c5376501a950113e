"""The documents that describe the served resources to clients, all generated from the rows a
server serves (its ``_registry.Registry``: names, scope, verbs, short names, categories,
subresources; groups in the API server's priority order):

- legacy discovery: ``/api`` (APIVersions), ``/api/v1`` and ``/apis/<g>/<v>`` (APIResourceList),
  ``/apis`` (APIGroupList), ``/apis/<g>`` (APIGroup);
- aggregated discovery (``apidiscovery.k8s.io/v2`` APIGroupDiscoveryList), which kubectl and
  client-go ask for first on ``/api`` and ``/apis``;
- OpenAPI v3: the ``/openapi/v3`` index and one document per group-version with a path per
  resource and its operations.  It carries no schemas: kubectl reads it only to learn that the
  server validates fields itself (the ``fieldValidation`` parameter of each PATCH), and, finding
  no ``application/strategic-merge-patch+json`` request body, computes ``kubectl apply`` patches
  from its compiled-in types as it does for any server without schemas.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from ._registry import DEFAULT, Registry, ResourceSpec, Subresource

__all__ = [
    "AGGREGATED_CONTENT_TYPE",
    "aggregated_discovery",
    "api_group",
    "api_group_list",
    "api_resource_list",
    "api_versions",
    "openapi_document",
    "openapi_index",
]


# --- legacy discovery --------------------------------------------------------------------------


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group(name: str, reg: Registry) -> dict[str, Any]:
    versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in reg.groups[name]]
    return {"name": name, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(reg: Registry = DEFAULT) -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(g, reg) for g in reg.groups]}


def api_group(name: str, reg: Registry = DEFAULT) -> dict[str, Any]:
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, reg)}


def api_resource_list(group: str, version: str, reg: Registry = DEFAULT) -> dict[str, Any]:
    out = []
    for r in reg.resources_of(group, version):
        entry: dict[str, Any] = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for name, sub in r.subresources.items():
            sub_entry: dict[str, Any] = {
                "name": f"{r.plural}/{name}",
                "singularName": "",
                "namespaced": r.namespaced,
            }
            if sub.group is not None:  # a kind of another group-version (autoscaling/v1 Scale)
                sub_entry |= {"group": sub.group, "version": sub.version}
            out.append(sub_entry | {"kind": sub.kind or r.kind, "verbs": list(sub.verbs)})
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": out,
    }


# --- aggregated discovery -------------------------------------------------------------------------

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _discovery_version(group: str, version: str, reg: Registry) -> dict[str, Any]:
    resources = []
    for r in reg.resources_of(group, version):
        entry: dict[str, Any] = {
            "resource": r.plural,
            "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
            "scope": "Namespaced" if r.namespaced else "Cluster",
            "singularResource": r.singular,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        if r.subresources:
            entry["subresources"] = [
                {
                    "subresource": name,
                    "responseKind": {
                        "group": r.group if sub.group is None else sub.group,
                        "version": sub.version or r.version,
                        "kind": sub.kind or r.kind,
                    },
                    "verbs": list(sub.verbs),
                }
                for name, sub in r.subresources.items()
            ]
        resources.append(entry)
    return {"version": version, "resources": resources, "freshness": "Current"}


def aggregated_discovery(legacy: bool, reg: Registry = DEFAULT) -> dict[str, Any]:
    """The APIGroupDiscoveryList of ``/api`` (``legacy``) or ``/apis``."""
    if legacy:
        items = [
            {"metadata": {"creationTimestamp": None}, "versions": [_discovery_version("", "v1", reg)]}
        ]
    else:
        items = [
            {
                "metadata": {"name": g, "creationTimestamp": None},
                "versions": [_discovery_version(g, v, reg) for v in vs],
            }
            for g, vs in reg.groups.items()
        ]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


# --- OpenAPI v3 ---------------------------------------------------------------------------------

_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
)


def _param(name: str, where: str = "query", type_: str = "string") -> dict[str, Any]:
    return {"name": name, "in": where, "schema": {"type": type_, "uniqueItems": True}}


def _operation(
    r: ResourceSpec, action: str, op_id: str, sub: Subresource | None = None
) -> dict[str, Any]:
    gvk = {"group": r.group, "version": r.version, "kind": r.kind}
    if sub is not None:
        gvk = {
            "group": r.group if sub.group is None else sub.group,
            "version": sub.version or r.version,
            "kind": sub.kind or r.kind,
        }
    op: dict[str, Any] = {
        "operationId": op_id,
        "responses": {"200": {"description": "OK"}, "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }
    if action in ("post", "put", "patch"):
        params = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]
        if action == "patch":
            params.append(_param("force", type_="boolean"))
            op["requestBody"] = {
                "content": {t: {"schema": {"type": "object"}} for t in _PATCH_TYPES},
                "required": True,
            }
        else:
            op["requestBody"] = {
                "content": {"*/*": {"schema": {"type": "object"}}},
                "required": True,
            }
        op["parameters"] = params
    return op


def openapi_index(reg: Registry = DEFAULT) -> dict[str, Any]:
    paths = {}
    for gv in [("", "v1")] + [(g, v) for g, vs in reg.groups.items() for v in vs]:
        key = f"api/{gv[1]}" if not gv[0] else f"apis/{gv[0]}/{gv[1]}"
        digest = hashlib.sha512(msgspec.json.encode(openapi_document(*gv, reg))).hexdigest().upper()
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def openapi_document(group: str, version: str, reg: Registry = DEFAULT) -> dict[str, Any]:
    """The OpenAPI v3 document of one group-version: paths and operations, no schemas."""
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    camel = "".join(p.capitalize() for p in (group.split(".")[0] if group else "core", version))
    paths: dict[str, Any] = {}
    for r in reg.resources_of(group, version):
        base = (
            f"{prefix}/namespaces/{{namespace}}/{r.plural}"
            if r.namespaced
            else f"{prefix}/{r.plural}"
        )
        scope = "Namespaced" if r.namespaced else ""
        if "create" in r.verbs and r.verbs == ("create",):
            paths[base] = {"post": _operation(r, "post", f"create{camel}{scope}{r.kind}")}
            continue
        paths[base] = {
            "get": _operation(r, "list", f"list{camel}{scope}{r.kind}"),
            "post": _operation(r, "post", f"create{camel}{scope}{r.kind}"),
        }
        paths[f"{base}/{{name}}"] = {
            "get": _operation(r, "get", f"read{camel}{scope}{r.kind}"),
            "put": _operation(r, "put", f"replace{camel}{scope}{r.kind}"),
            "patch": _operation(r, "patch", f"patch{camel}{scope}{r.kind}"),
            "delete": _operation(r, "delete", f"delete{camel}{scope}{r.kind}"),
        }
        for sub_name, sub in r.subresources.items():
            ops: dict[str, Any] = {}
            name = f"{r.kind}{sub_name.capitalize()}"
            if "create" in sub.verbs:
                ops["post"] = _operation(r, "post", f"create{camel}{scope}{name}", sub)
            if "get" in sub.verbs:
                ops["get"] = _operation(r, "get", f"read{camel}{scope}{name}", sub)
            if "update" in sub.verbs:
                ops["put"] = _operation(r, "put", f"replace{camel}{scope}{name}", sub)
            if "patch" in sub.verbs:
                ops["patch"] = _operation(r, "patch", f"patch{camel}{scope}{name}", sub)
            paths[f"{base}/{{name}}/{sub_name}"] = ops
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": {}},
    }
