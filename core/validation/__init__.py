"""Object validation as the API server makes it on create, in upstream's words.

``_base`` (the checks every kind shares: names, labels, selectors, quantities) ← ``_pod``
(``ValidatePodSpec``) and ``_storage`` (PersistentVolume, claims, StorageClass, CSI kinds,
StatefulSet) ← ``_validation`` (one entry point per kind, and priority admission).

The public face (what the fake API server and the CLI use): :func:`validate_object` (an object
as the API server checks it on create), :func:`check_priority_admission` (the Priority admission
plugin), the Workload API's update rules (:func:`check_workload_update`,
:func:`check_scheduling_pod_group_update`), and the name checks in upstream's words (:func:`dns1123_label_errors`,
:func:`dns1123_subdomain_errors`, :func:`go_quote`, ...).
"""

from __future__ import annotations

from kubesched.validation._validation import (
    SYSTEM_PRIORITY_CLASSES,
    check_priority_admission,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    label_value_errors,
    validate_labels,
    validate_name,
    validate_namespace_name,
    validate_object,
)
from kubesched.validation._workload import check_scheduling_pod_group_update, check_workload_update

__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "check_priority_admission",
    "check_scheduling_pod_group_update",
    "check_workload_update",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "go_quote",
    "label_value_errors",
    "validate_labels",
    "validate_name",
    "validate_namespace_name",
    "validate_object",
]
