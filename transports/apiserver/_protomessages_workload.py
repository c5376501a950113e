"""The protobuf messages of the Workload API's kinds (``scheduling.k8s.io``), as field tables for
``_protobuf``'s decoder: what a typed client creates of a Workload (v1alpha1 at 1.35, v1alpha2 at
1.36) and a PodGroup (v1alpha2), and what a scheduler writes of a PodGroup's status.

The conventions are ``_protomessages``' (see its docstring).  Written from k8s.io/api
``scheduling/v1alpha1/types.go`` at v0.35.0 and ``scheduling/v1alpha2/types.go`` at v0.36.0:
every field of the three kinds and of every message they hold, numbered by its ``protobuf`` tag
(v1alpha1's pod group policy numbers ``basic`` 2 and ``gang`` 3, v1alpha2's 1 and 2).
"""

from __future__ import annotations

from ._protomessages import OBJECT_META, Table
from ._protomessages_dra import CONDITION

__all__ = ["POD_GROUP_V1ALPHA2", "WORKLOAD_V1ALPHA1", "WORKLOAD_V1ALPHA2"]

_GANG: Table = {1: ("minCount", "int")}
_TYPED_LOCAL_OBJECT_REFERENCE: Table = {1: ("apiGroup", "string"), 2: ("kind", "string"), 3: ("name", "string")}

# --- v1alpha1 (k8s.io/api v0.35.0) --------------------------------------------------------------

_POD_GROUP_POLICY_V1ALPHA1: Table = {2: ("basic", {}), 3: ("gang", _GANG)}
_POD_GROUP_V1ALPHA1: Table = {1: ("name", "string"), 3: ("policy", _POD_GROUP_POLICY_V1ALPHA1)}
WORKLOAD_V1ALPHA1: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", {1: ("controllerRef", _TYPED_LOCAL_OBJECT_REFERENCE), 2: ("podGroups", [_POD_GROUP_V1ALPHA1])}),
}

# --- v1alpha2 (k8s.io/api v0.36.0) --------------------------------------------------------------

_SCHEDULING_POLICY: Table = {1: ("basic", {}), 2: ("gang", _GANG)}
_SCHEDULING_CONSTRAINTS: Table = {1: ("topology", [{1: ("key", "string")}])}
_RESOURCE_CLAIM: Table = {
    1: ("name", "string"), 2: ("resourceClaimName", "string?"), 3: ("resourceClaimTemplateName", "string?"),
}
_GROUP_FIELDS: Table = {
    2: ("schedulingPolicy", _SCHEDULING_POLICY),
    3: ("schedulingConstraints", _SCHEDULING_CONSTRAINTS),
    4: ("resourceClaims", [_RESOURCE_CLAIM]),
    5: ("disruptionMode", "string?"),
    6: ("priorityClassName", "string"),
    7: ("priority", "int?"),
}
"""The fields a PodGroupTemplate and a PodGroupSpec share (2-7)."""
_POD_GROUP_TEMPLATE: Table = {1: ("name", "string"), **_GROUP_FIELDS}
WORKLOAD_V1ALPHA2: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", {1: ("controllerRef", _TYPED_LOCAL_OBJECT_REFERENCE), 2: ("podGroupTemplates", [_POD_GROUP_TEMPLATE])}),
}
_TEMPLATE_REFERENCE: Table = {1: ("workload", {1: ("workloadName", "string"), 2: ("podGroupTemplateName", "string")})}
_POD_GROUP_STATUS: Table = {
    1: ("conditions", [CONDITION]),
    2: ("resourceClaimStatuses", [{1: ("name", "string"), 2: ("resourceClaimName", "string?")}]),
}
POD_GROUP_V1ALPHA2: Table = {
    1: ("metadata", OBJECT_META),
    2: ("spec", {1: ("podGroupTemplateRef", _TEMPLATE_REFERENCE), **_GROUP_FIELDS}),
    3: ("status", _POD_GROUP_STATUS),
}
