"""``FindMatchingVolume`` on the scheduler's path (a node, the chosen volumes excluded,
``delayBinding`` true), with and without VolumeAttributesClass: component-helpers v0.34.7
``storage/volume/pv_helpers_test.go`` TestFindMatchVolumeWithNode, every scenario at each of its
``vacEnabled`` values (``[VolumeAttributiesClass: <on>] <name>`` in the ids, as upstream names
them), matched by volume UID as upstream compares them.  Before v0.31 the function has no VAC
check at all (``vac_enabled=None``)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kubesched.api._objects import (
    LocalVolumeSource,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    VolumeNodeAffinity,
    VolumeResourceRequirements,
)
from kubesched.api._pvhelpers import VolumeError, find_matching_volume, vac_matching

GOLD, SILVER = "gold", "silver"


def node_affinity(key: str, value: str) -> VolumeNodeAffinity:
    req = NodeSelectorRequirement(key=key, operator="In", values=[value])
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=[req])]))


def volume(uid: str, name: str, size: str, available: bool, cls: str = "", affinity: str | None = None,
           ref: str | None = None) -> PersistentVolume:  # fmt: skip
    """makeTestVolume: a local volume, ReadWriteOnce + ReadOnlyMany, Filesystem."""
    return PersistentVolume(
        metadata=ObjectMeta(name=name, uid=uid),
        spec=PersistentVolumeSpec(
            capacity={"storage": size}, access_modes=["ReadWriteOnce", "ReadOnlyMany"], volume_mode="Filesystem",
            local=LocalVolumeSource(), storage_class_name=cls,
            node_affinity=node_affinity("key1", affinity) if affinity else None,
            claim_ref=ObjectReference(name=ref, namespace="myns") if ref else None,
        ),  # fmt: skip
        status=PersistentVolumeStatus(phase="Available" if available else ""),
    )


def claim(name: str, modes: list[str], vac: str | None = None) -> PersistentVolumeClaim:
    """makeTestPersistentVolumeClaim: 100G, class "wait", Filesystem, in myns."""
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="myns"),
        spec=PersistentVolumeClaimSpec(
            access_modes=modes, resources=VolumeResourceRequirements(requests={"storage": "100G"}),
            storage_class_name="wait", volume_mode="Filesystem", volume_attributes_class_name=vac,
        ),  # fmt: skip
    )


VOLUMES = [
    volume("local-small", "local001", "5G", True),
    volume("local-pd-very-large", "local002", "200E", True, cls="large"),
    volume("affinity-pv", "affinity001", "100G", True, cls="wait", affinity="value1"),
    volume("affinity-pv2", "affinity002", "150G", True, cls="wait", affinity="value1"),
    volume("affinity-prebound", "affinity003", "100G", True, cls="wait", affinity="value1", ref="claim02"),
    volume("affinity-pv3", "affinity003", "200G", True, cls="wait", affinity="value3"),
    volume("affinity-pv4", "affinity004", "200G", False, cls="wait", affinity="value4"),
]


def with_vac(name: str, volumes: list[PersistentVolume]) -> list[PersistentVolume]:
    return [msgspec.structs.replace(v, spec=msgspec.structs.replace(v.spec, volume_attributes_class_name=name))
            for v in volumes]  # fmt: skip


def node(value: str) -> Node:
    return Node(metadata=ObjectMeta(name=f"node-{value}", labels={"key1": value}))


RWO, RWX = ["ReadWriteOnce"], ["ReadWriteMany"]
# name: (expected UID or "" or "error", claim, node, volumes, excluded, vacEnabled values)
SCENARIOS: dict[str, tuple[str, PersistentVolumeClaim, Node, list[PersistentVolume], set[str], tuple[bool, ...]]] = {
    "success-match": ("affinity-pv", claim("claim01", RWO), node("value1"), VOLUMES, set(), (True, False)),
    "success-prebound": ("affinity-prebound", claim("claim02", RWO), node("value1"), VOLUMES, set(), (True, False)),
    "success-exclusion": ("affinity-pv2", claim("claim01", RWO), node("value1"), VOLUMES, {"affinity001"}, (True, False)),
    "fail-exclusion": ("", claim("claim01", RWO), node("value1"), VOLUMES,
                       {"affinity001", "affinity002", "affinity002-vac"}, (True, False)),
    "fail-accessmode": ("", claim("claim01", RWX), node("value1"), VOLUMES, set(), (True, False)),
    "fail-nodeaffinity": ("", claim("claim01", RWO), node("value2"), VOLUMES, set(), (True, False)),
    "fail-prebound-node-affinity": ("", claim("claim02", RWO), node("value3"), VOLUMES, set(), (True, False)),
    "fail-nonavaliable": ("", claim("claim04", RWO), node("value4"), VOLUMES, set(), (True, False)),
    "success-bad-and-good-node-affinity": ("affinity-pv3", claim("claim03", RWO), node("value3"), VOLUMES, set(),
                                           (True, False)),
    "success-match-with-vac": ("affinity-pv", claim("claim01", RWO, GOLD), node("value1"), with_vac(GOLD, VOLUMES),
                               set(), (True,)),
    "fail-vac": ("", claim("claim01", RWO, SILVER), node("value1"), VOLUMES, set(), (True,)),
    "fail-prebound-vac": ("", claim("claim02", RWO, SILVER), node("value1"), with_vac(GOLD, VOLUMES), set(), (True,)),
    "fail-on-error": ("error", claim("claim01", RWO, GOLD), node("value1"), VOLUMES, set(), (False,)),
    "fail-volumes-vac": ("", claim("claim01", RWO), node("value1"), with_vac(GOLD, VOLUMES), set(), (False,)),
}  # fmt: skip


@pytest.mark.parametrize(
    ("expected", "pvc", "on", "volumes", "excluded", "enabled"),
    [pytest.param(exp, c, n, vols, exc, en, id=f"[VolumeAttributiesClass: {str(en).lower()}] {name}")
     for name, (exp, c, n, vols, exc, ens) in SCENARIOS.items() for en in ens],
)  # fmt: skip
def test_find_match_volume_with_node(expected: str, pvc: PersistentVolumeClaim, on: Node,
                                     volumes: list[PersistentVolume], excluded: set[str], enabled: bool) -> None:  # fmt: skip
    if expected == "error":
        with pytest.raises(VolumeError) as e:
            find_matching_volume(pvc, volumes, on, excluded, True, enabled)
        assert str(e.value) == ("unsupported volumeAttributesClassName is set on claim myns/claim01 when the "
                                "feature-gate VolumeAttributesClass is disabled")  # fmt: skip
        return
    got = find_matching_volume(pvc, volumes, on, excluded, True, enabled)
    assert (got.metadata.uid if got is not None else "") == expected


def test_before_1_31_there_is_no_check() -> None:
    """v0.30.6's FindMatchingVolume has no vacEnabled: a class of attributes on either side is
    not looked at."""
    assert find_matching_volume(claim("claim01", RWO, SILVER), with_vac(GOLD, VOLUMES), node("value1"), set(), True,
                                None).metadata.uid == "affinity-pv"  # fmt: skip


@pytest.mark.parametrize(
    ("version", "gates", "want"),
    [((1, 30), {"VolumeAttributesClass": True}, None), ((1, 31), {"VolumeAttributesClass": False}, False),
     ((1, 34), {"VolumeAttributesClass": True}, True)],
)  # fmt: skip
def test_vac_matching_per_version(version: tuple[int, int], gates: dict[str, bool], want: Any) -> None:
    assert vac_matching(version, gates) is want

