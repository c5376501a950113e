"""Fields of a scenario's objects that a feature gate guards, as the emulated release's API server
takes them on create: checked with the gate on, dropped (before any check) with it off.

    field                                                   gate
    a pod's (and pod template's) pod (anti-)affinity terms'  MatchLabelKeysInPodAffinity
      matchLabelKeys / mismatchLabelKeys                     (alpha off 1.30, beta on 1.31)
    a claim's, a volume's and a StatefulSet's claim          VolumeAttributesClass
      templates' volumeAttributesClassName                   (beta off 1.31-1.33, GA on 1.34)

Manifest loading validates every object without these fields (it does not know the gates yet);
:func:`apply_gated_fields` finishes the job once the run's configuration is known, as the pod
strategy's ``dropDisabledMatchLabelKeysFieldInPodAffinity`` and the storage strategies' drop of
``volumeAttributesClassName`` do before validation.  The Workload API's gated fields are
:func:`kubesched.scenario._workloadapi.check_workload_api`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kubesched._errors import ConfigError
from kubesched.api._objects import Pod
from kubesched.scenario._manifests import WORKLOAD_KINDS
from kubesched.validation._pod import check_pod_affinity_label_keys, drop_pod_affinity_label_keys
from kubesched.validation._storage import (
    check_volume_attributes_class,
    drop_volume_attributes_class,
)

if TYPE_CHECKING:
    from kubesched.scenario._manifests import Manifest

_VAC_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "StatefulSet")


def _pod_affinity_label_keys(m: Manifest, enabled: bool) -> None:
    if m.kind == "Pod":
        pod, field = m.obj, None
    elif m.kind in WORKLOAD_KINDS:
        pod, field = Pod(metadata=m.obj.spec.template.metadata, spec=m.obj.spec.template.spec), "spec.template"
    else:
        return
    if not enabled:
        drop_pod_affinity_label_keys(pod)
        return
    try:
        check_pod_affinity_label_keys(pod)
    except ConfigError as e:
        raise (e.at(field=field, source=m.label) if field else e.at(source=m.label)) from None


def _volume_attributes_class(m: Manifest, enabled: bool) -> None:
    if m.kind not in _VAC_KINDS:
        return
    if not enabled:
        drop_volume_attributes_class(m.obj, m.kind)
        return
    try:
        check_volume_attributes_class(m.obj, m.kind)
    except ConfigError as e:
        raise e.at(source=m.label) from None


def apply_gated_fields(manifests: Sequence[Manifest], gates: Mapping[str, bool]) -> None:
    """Check or drop, per ``gates``, the fields above in every object of ``manifests``."""
    label_keys = bool(gates.get("MatchLabelKeysInPodAffinity", True))
    vac = bool(gates.get("VolumeAttributesClass", True))
    for m in manifests:
        _pod_affinity_label_keys(m, label_keys)
        _volume_attributes_class(m, vac)


__all__ = ["apply_gated_fields"]
