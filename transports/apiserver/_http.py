"""One request, one reply, and the API errors a handler raises (answered as a ``Status``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

__all__ = [
    "MAX_REQUEST_BODY_BYTES",
    "HTTPError",
    "Resource",
    "check_path_segment",
    "already_exists",
    "Reply",
    "Request",
    "bad_request",
    "conflict",
    "details",
    "invalid",
    "json_reply",
    "method_not_allowed",
    "not_found",
    "no_such_path",
    "success",
]


# upstream's limit on a request body (apiserver's MaxRequestBodyBytes, 3 MiB): 413 above it
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


def check_path_segment(what: str, segment: str) -> None:
    """``IsValidPathSegmentName`` for a name or namespace in a URL path: 400 when it is not one."""
    if segment in (".", ".."):
        errs = [f"may not be '{segment}'"]
    else:
        errs = [f"may not contain '{c}'" for c in ("/", "%") if c in segment]
    if errs:
        raise bad_request(f"{what}: Invalid value: {msgspec.json.encode(segment).decode()}: {errs[0]}")


class Resource(Protocol):
    """What an API error names of a resource (a row of the registry, ``ResourceSpec``)."""

    @property
    def group(self) -> str: ...
    @property
    def plural(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def qualified(self) -> str: ...


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    warnings: tuple[str, ...] = ()
    """``Warning`` response headers (``299 - "<text>"``), as kubectl prints them."""


def json_reply(doc: Any, content_type: str = "application/json", status: int = 200) -> Reply:
    return Reply(status, msgspec.json.encode(doc), content_type)


class HTTPError(Exception):
    """An API error: answered as a Kubernetes Status."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def body(self) -> bytes:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            status["details"] = self.details
        return msgspec.json.encode(status)


def details(spec: Resource, name: str) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "kind": spec.plural}
    if spec.group:
        d["group"] = spec.group
    return d


def no_such_path() -> HTTPError:
    return HTTPError(404, "NotFound", "the server could not find the requested resource")


def method_not_allowed() -> HTTPError:
    return HTTPError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )


def not_found(spec: Resource, name: str) -> HTTPError:
    return HTTPError(404, "NotFound", f'{spec.qualified} "{name}" not found', details(spec, name))


def already_exists(spec: Resource, name: str) -> HTTPError:
    return HTTPError(
        409, "AlreadyExists", f'{spec.qualified} "{name}" already exists', details(spec, name)
    )


def conflict(spec: Resource, name: str, message: str) -> HTTPError:
    return HTTPError(409, "Conflict", message, details(spec, name))


def invalid(spec: Resource, name: str, fld: str, message: str) -> HTTPError:
    d = details(spec, name)
    d["kind"] = spec.kind
    d["causes"] = [{"reason": "FieldValueInvalid", "message": message, "field": fld}]
    # errors.NewInvalid names the GroupKind: "StorageClass.storage.k8s.io", core kinds bare
    kind = f"{spec.kind}.{spec.group}" if spec.group else spec.kind
    return HTTPError(422, "Invalid", f'{kind} "{name}" is invalid: {fld}: {message}', d)


def bad_request(message: str) -> HTTPError:
    return HTTPError(400, "BadRequest", message)


def success(
    spec: Resource | None = None, name: str = "", uid: str = "", code: int = 200
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    }
    if spec is not None:
        d = details(spec, name)
        if uid:
            d["uid"] = uid
        out["details"] = d
    if code != 200:
        out["code"] = code
    return out


def warning_header(text: str) -> str:
    """A ``Warning`` header value as the API server writes it (RFC 7234: code 299, agent "-",
    the text quoted)."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
