"""The request options upstream decodes from the query (or the body) and validates before a verb
runs, with upstream's status codes and messages:

- query parameters as the parameter codec converts them (``runtime.Convert_Slice_string_To_*``):
  a bool is false only when absent, ``0`` or ``false``; an int64 that does not parse is 400;
- ListOptions (``ValidateListOptions``, k8s.io/apimachinery/pkg/apis/meta/internalversion/
  validation/validation.go, with the WatchList feature on): 422 ``ListOptions.meta.k8s.io "" is
  invalid``; a resourceVersion that is not a uint64 is 400 as the etcd3 store answers it
  ("invalid resource version: ...", k8s.io/apiserver/pkg/storage/etcd3/store.go);
- DeleteOptions (``ValidateDeleteOptions``) and PatchOptions (``ValidatePatchOptions``,
  k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go): 422 on ``DeleteOptions`` or
  ``PatchOptions`` of meta.k8s.io.

Upstream's watch cache answers a bad resourceVersion with a 500 whose message is the same field
error (kubernetes/kubernetes#101350, #139485, fixed to a 400 by #131180): this server answers the
etcd3 store's 400, as the fuzz suite requires a client's error to be a 4xx.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kubesched.validation import go_quote

from ._http import HTTPError, bad_request

__all__ = [
    "FieldError",
    "check_delete_options",
    "check_list_options",
    "check_patch_options",
    "flag",
    "meta_invalid",
    "not_supported",
    "resource_version",
    "watch_timeout",
]

_MAX_TIMEOUT_SECONDS = (2**63 - 1) // 10**9  # the longest time.Duration

_CAUSES = {
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Required value": "FieldValueRequired",
    "Forbidden": "FieldValueForbidden",
}


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error``: its path, its type ("Unsupported value", "Forbidden", ...) and the
    rest of its body (the quoted value and the detail)."""

    field: str
    type: str
    detail: str = ""

    @property
    def body(self) -> str:
        """``ErrorBody()``."""
        return f"{self.type}: {self.detail}" if self.detail else self.type

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


def not_supported(fld: str, value: str, values: list[str]) -> FieldError:
    supported = ", ".join(go_quote(v) for v in values)
    return FieldError(fld, "Unsupported value", f"{go_quote(value)}: supported values: {supported}")


def aggregate(errs: list[FieldError]) -> str:
    """``ErrorList.ToAggregate().Error()``: one error as itself, more as ``[a, b]``."""
    msgs = list(dict.fromkeys(str(e) for e in errs))
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


def meta_invalid(
    kind: str, errs: list[FieldError], group: str = "meta.k8s.io", name: str = ""
) -> HTTPError:
    """``errors.NewInvalid(schema.GroupKind{group, kind}, name, errs)``: 422 Invalid."""
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [
        {"reason": _CAUSES[e.type], "message": e.body, "field": e.field} for e in errs
    ]
    return HTTPError(422, "Invalid", f'{qualified} "{name}" is invalid: {aggregate(errs)}', details)


# --- query parameters ---------------------------------------------------------------------------


def flag(q: dict[str, str], key: str) -> bool | None:
    """A bool parameter (None when absent): false only for ``0`` or ``false`` (any case), as
    ``Convert_Slice_string_To_bool``; anything else, even empty, is true."""
    raw = q.get(key)
    if raw is None:
        return None
    return not (raw == "0" or raw.lower() == "false")


def resource_version(raw: str) -> int | None:
    """A resourceVersion parameter (None when absent or empty): ``APIObjectVersioner.
    ParseResourceVersion``, a uint64 in base 10; else 400."""
    if not raw:
        return None
    if re.fullmatch(r"[0-9]+", raw) is None:
        why = "invalid syntax"
    elif int(raw) >= 2**64:
        why = "value out of range"
    else:
        return int(raw)
    raise bad_request(
        f"invalid resource version: resourceVersion: Invalid value: {go_quote(raw)}: "
        f"strconv.ParseUint: parsing {go_quote(raw)}: {why}"
    )


def watch_timeout(q: dict[str, str], default: float) -> float:
    """A watch's ``timeoutSeconds``: an int64 number of seconds as upstream's ListOptions (nan,
    inf, 1e308 are 400; a fraction is kept, for tests); past what a Duration holds it is capped
    there, so that every watch ends.  0 or absent is ``default``; a negative one has already
    passed (upstream's context deadline is in the past: the watch ends at once)."""
    raw = q.get("timeoutSeconds") or ""
    if not raw:
        return default
    m = re.fullmatch(r"-?([0-9]{1,19})(\.[0-9]{1,9})?", raw)
    if m is None or int(m.group(1)) >= 2**63:
        raise bad_request(
            f'timeoutSeconds: Invalid value: "{raw}": strconv.ParseInt: parsing "{raw}": invalid syntax'
        )
    seconds = float(raw)
    if seconds < 0:
        return 0.0
    return min(seconds, _MAX_TIMEOUT_SECONDS) if seconds > 0 else default


# --- options ------------------------------------------------------------------------------------


def check_list_options(q: dict[str, str], watch: bool) -> None:
    """``ValidateListOptions`` (the WatchList feature enabled): 422 ListOptions."""
    match = q.get("resourceVersionMatch") or ""
    send_initial = flag(q, "sendInitialEvents")
    errs: list[FieldError] = []
    if watch:
        if send_initial is not None and match != "NotOlderThan":
            errs.append(
                FieldError(
                    "resourceVersionMatch",
                    "Forbidden",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                )
            )
        if match:
            if send_initial is None:
                errs.append(
                    FieldError(
                        "resourceVersionMatch",
                        "Forbidden",
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    )
                )
            if match != "NotOlderThan":
                errs.append(not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
            if q.get("continue"):
                errs.append(
                    FieldError(
                        "resourceVersionMatch",
                        "Forbidden",
                        "resourceVersionMatch is forbidden when continue is provided",
                    )
                )
    else:
        rv = q.get("resourceVersion") or ""
        if match:
            if not rv:
                errs.append(
                    FieldError(
                        "resourceVersionMatch",
                        "Forbidden",
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                )
            if q.get("continue"):
                errs.append(
                    FieldError(
                        "resourceVersionMatch",
                        "Forbidden",
                        "resourceVersionMatch is forbidden when continue is provided",
                    )
                )
            if match not in ("Exact", "NotOlderThan"):
                errs.append(
                    not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""])
                )
            if match == "Exact" and rv == "0":
                errs.append(
                    FieldError(
                        "resourceVersionMatch",
                        "Forbidden",
                        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                    )
                )
        if send_initial is not None:
            errs.append(
                FieldError(
                    "sendInitialEvents", "Forbidden", "sendInitialEvents is forbidden for list"
                )
            )
    if errs:
        raise meta_invalid("ListOptions", errs)


_PROPAGATION = ["Foreground", "Background", "Orphan", "nil"]


def check_delete_options(opts: dict[str, Any]) -> None:
    """``ValidateDeleteOptions``: propagationPolicy one of Foreground, Background, Orphan, and not
    with orphanDependents; 422 DeleteOptions."""
    policy = opts.get("propagationPolicy")
    errs: list[FieldError] = []
    if opts.get("orphanDependents") is not None and policy is not None:
        errs.append(
            FieldError(
                "propagationPolicy",
                "Invalid value",
                f"{go_quote(policy)}: orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if policy is not None and policy not in _PROPAGATION[:3]:
        errs.append(not_supported("propagationPolicy", str(policy), _PROPAGATION))
    if errs:
        raise meta_invalid("DeleteOptions", errs)


def check_patch_options(q: dict[str, str], apply: bool) -> None:
    """``ValidatePatchOptions``: a server-side apply names its fieldManager; ``force`` is for
    apply only; 422 PatchOptions."""
    errs: list[FieldError] = []
    if apply and not q.get("fieldManager"):
        errs.append(FieldError("fieldManager", "Required value", "is required for apply patch"))
    if not apply and "force" in q:
        errs.append(FieldError("force", "Forbidden", "may not be specified for non-apply patch"))
    if errs:
        raise meta_invalid("PatchOptions", errs)
