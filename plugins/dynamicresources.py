"""DynamicResources: what upstream's plugin does for pods WITHOUT resource claims, per version.

Upstream ``plugins/dynamicresources`` allocates ResourceClaims (dynamic resource allocation,
DRA).  kubesched does not allocate devices yet; this plugin is what the default profile holds
where DRA is on (gate ``DynamicResourceAllocation``: with the gate set in 1.30–1.33, by default
from 1.34), so that pods without claims read as they do upstream:

- PreFilter: the pod has no claim: Skip, its Filter does not run (every tag from v1.30.6 to
  v1.35.4, ``dynamicresources.go`` ``PreFilter``: "If the pod does not reference any claim,
  DynamicResources Filter has nothing to do with the Pod").
- PostFilter (it runs before DefaultPreemption's, and the framework joins the rejecting
  PostFilters' reasons with ", "): Unschedulable "no new claims to deallocate" in v1.30.6 and
  v1.31.8 (``if len(state.claims) == 0``) and in v1.34.7 and v1.35.4 (``if
  state.claims.empty()``); v1.33.3 returns Unschedulable without a reason for a pod without
  claims (``if len(pod.Spec.ResourceClaims) == 0``, kubernetes#129823), so the message has no
  DRA part.  1.32 is before #129823 (merged for 1.33): the v1.31 answer.  1.36: no v1.36 tag was
  read; a stored copy of the plugin newer than v1.35.4 (it has the SignPlugin interface and
  BindingTimeout) keeps ``state.claims.empty()`` → "no new claims to deallocate": 1.36 answers
  as 1.35.
- A pod WITH claims: kubesched cannot allocate them, and placing the pod as if it had none would
  be wrong where DRA is on: PreFilter rejects it, UnschedulableAndUnresolvable
  :data:`MSG_CLAIMS_NOT_EMULATED` (so the pod is pending with that reason on every node), and
  PostFilter adds nothing for it.
- In a profile while the gate is off (a configuration naming it): upstream's disabled plugin,
  PreFilter Skip and PostFilter Unschedulable "plugin disabled" (every tag, ``!pl.enabled``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.framework import Code, ConfigError, Status, hookimpl

if TYPE_CHECKING:
    from kubesched.framework import CycleState, Handle, NodeInfo, Pod, PostFilterResult

NAME = "DynamicResources"
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"
MSG_PLUGIN_DISABLED = "plugin disabled"
MSG_CLAIMS_NOT_EMULATED = (
    "kubesched does not emulate dynamic resource allocation: the pod's resource claims cannot be allocated"
)


class DynamicResources:
    """PreFilter and PostFilter (see the module)."""

    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        if args:
            # DynamicResourcesArgs (filterTimeout from 1.34, bindingTimeout from 1.35) tune
            # allocation, which kubesched does not do: accepted as upstream decodes them
            allowed = {"apiVersion", "kind", "filterTimeout", "bindingTimeout"}
            for key in args:
                if key not in allowed:
                    raise ConfigError(f'strict decoding error: unknown field "{key}"')
        self.handle: Handle = handle
        self.enabled = bool(handle.feature_gates.get("DynamicResourceAllocation", False))
        reasons: tuple[str, ...] = (MSG_NO_NEW_CLAIMS,)
        if not self.enabled:
            reasons = (MSG_PLUGIN_DISABLED,)
        elif handle.emulated_version == (1, 33):
            reasons = ()  # v1.33.3 dynamicresources.go PostFilter, a pod without claims (#129823)
        self._postfilter_reasons = reasons

    @hookimpl
    def kubesched_pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        if self.enabled and pod.spec.resource_claims:
            return Status.unresolvable(MSG_CLAIMS_NOT_EMULATED)
        return Status.skip()

    @hookimpl
    def kubesched_post_filter(
        self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        if self.enabled and pod.spec.resource_claims:
            return None, Status(Code.UNSCHEDULABLE)
        return None, Status(Code.UNSCHEDULABLE, *self._postfilter_reasons)


def new(args: Mapping[str, Any] | None, handle: Handle) -> DynamicResources:
    return DynamicResources(args, handle)


__all__ = ["MSG_CLAIMS_NOT_EMULATED", "MSG_NO_NEW_CLAIMS", "MSG_PLUGIN_DISABLED", "NAME", "DynamicResources", "new"]
