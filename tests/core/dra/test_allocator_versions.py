"""Which allocator variant and features each emulated version's default gates select
(k8s.io/dynamic-resource-allocation structured/allocator.go ``availableAllocators``), and the
order of pools each variant walks."""

from __future__ import annotations

import random

import pytest

from kubesched.api._dra import Device, ResourcePool, ResourceSlice
from kubesched.api._objects import Node, ObjectMeta
from kubesched.config._versions import Version, default_feature_gates
from kubesched.dra._allocator import allocator_features
from kubesched.dra._pools import gather_pools


@pytest.mark.parametrize(
    ("version", "variant"),
    [
        pytest.param(Version(1, 34), "stable", id="1.34 stable"),
        pytest.param(Version(1, 35), "stable", id="1.35 stable"),
        pytest.param(Version(1, 36), "incubating", id="1.36 incubating"),
    ],
)
def test_variant_per_version(version: Version, variant: str) -> None:
    assert allocator_features(default_feature_gates(version)).variant == variant


def test_1_36_features() -> None:
    f = allocator_features(default_feature_gates(Version(1, 36)))
    assert (f.admin_access, f.prioritized_list, f.partitionable_devices, f.device_taints) == (
        True,
    ) * 4
    assert (f.binding_conditions, f.consumable_capacity, f.list_type_attributes) == (
        True,
        True,
        False,
    )


def _slice(name: str, driver: str, pool: str, binding: bool = False) -> ResourceSlice:
    s = ResourceSlice(metadata=ObjectMeta(name=name))
    s.spec.driver = driver
    s.spec.pool = ResourcePool(name=pool, generation=1, resource_slice_count=1)
    s.spec.node_name = "n"
    s.spec.devices = [Device(name="d", binding_conditions=["ready"] if binding else [])]
    return s


SLICES = [
    _slice("s1", "b.example.com", "p2"),
    _slice("s2", "a.example.com", "p9", binding=True),
    _slice("s3", "a.example.com", "p1"),
    _slice("s4", "b.example.com", "p1"),
]
NODE = Node(metadata=ObjectMeta(name="n"))


def test_incubating_sorts_pools_and_puts_binding_conditions_last() -> None:
    pools = gather_pools(SLICES, NODE, SLICES, partitionable=True, incubating=True)
    assert [p.id for p in pools] == [
        ("a.example.com", "p1"),
        ("b.example.com", "p1"),
        ("b.example.com", "p2"),
        ("a.example.com", "p9"),
    ]


def test_stable_pool_order_is_a_seeded_shuffle() -> None:
    def order(seed: int) -> list[tuple[str, str]]:
        return [
            p.id
            for p in gather_pools(
                SLICES, NODE, SLICES, partitionable=True, incubating=False, rng=random.Random(seed)
            )
        ]

    assert order(7) == order(7)
    assert len({tuple(order(seed)) for seed in range(20)}) > 1  # Go's map order varies, so do seeds


def test_a_stop_aborts_the_search_with_upstreams_text() -> None:
    """allocateOne checks its context at every step; kubesched asks ``stop`` every 1024 steps
    (here: a search with no solution that backtracks through many combinations)."""
    from kubesched.api._dra import (
        CELDeviceSelector,
        DeviceClass,
        DeviceClassSpec,
        DeviceConstraint,
        DeviceRequest,
        DeviceSelector,
        ExactDeviceRequest,
        ResourceClaim,
    )
    from kubesched.api._dra import DeviceAttribute as Attr
    from kubesched.dra import Aborted, Allocator, AllocatorFeatures

    s = _slice("s", "a.example.com", "p")
    s.spec.devices = [
        Device(name=f"d{i}", attributes={"n": Attr(int_value=i % 2)}) for i in range(22)
    ]
    cls = DeviceClass(
        metadata=ObjectMeta(name="c"),
        spec=DeviceClassSpec(selectors=[DeviceSelector(cel=CELDeviceSelector(expression="true"))]),
    )
    claim = ResourceClaim(metadata=ObjectMeta(name="claim", namespace="ns"))
    # 12 devices that must share attribute "n": only 11 do, so every combination fails
    claim.spec.devices.requests = [
        DeviceRequest(
            name="r",
            exactly=ExactDeviceRequest(
                device_class_name="c", allocation_mode="ExactCount", count=12
            ),
        )
    ]
    claim.spec.devices.constraints = [DeviceConstraint(match_attribute="a.example.com/n")]
    asked = []

    def stop() -> str | None:
        asked.append(1)
        return "context deadline exceeded" if len(asked) >= 3 else None

    allocator = Allocator(AllocatorFeatures(), set(), {"c": cls}, [s])
    with pytest.raises(Aborted, match="^filter operation aborted: context deadline exceeded$"):
        allocator.allocate(NODE, [claim], stop=stop)
    assert len(asked) == 3


def test_kept_outcomes_follow_node_labels_and_devices_in_use() -> None:
    """With stored slices the allocator keeps each node's outcome; a node whose labels change
    (a slice selecting nodes by label) or whose devices get used is asked afresh."""
    from kubesched.api._dra import (
        CELDeviceSelector,
        DeviceClass,
        DeviceClassSpec,
        DeviceRequest,
        DeviceSelector,
        ExactDeviceRequest,
        ResourceClaim,
    )
    from kubesched.api._objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
    from kubesched.dra import AllocatedState, Allocator, AllocatorFeatures

    s = ResourceSlice(metadata=ObjectMeta(name="s", uid="u-s", resource_version="7"))
    s.spec.driver, s.spec.pool = (
        "a.example.com",
        ResourcePool(name="p", generation=1, resource_slice_count=1),
    )
    s.spec.node_selector = NodeSelector(
        node_selector_terms=[
            NodeSelectorTerm(
                match_expressions=[
                    NodeSelectorRequirement(key="zone", operator="In", values=["z1"])
                ]
            )
        ]
    )
    s.spec.devices = [Device(name="d0")]
    cls = DeviceClass(
        metadata=ObjectMeta(name="c"),
        spec=DeviceClassSpec(selectors=[DeviceSelector(cel=CELDeviceSelector(expression="true"))]),
    )
    claim = ResourceClaim(metadata=ObjectMeta(name="claim", namespace="ns"))
    claim.spec.devices.requests = [
        DeviceRequest(
            name="r",
            exactly=ExactDeviceRequest(
                device_class_name="c", allocation_mode="ExactCount", count=1
            ),
        )
    ]
    in_z1 = Node(metadata=ObjectMeta(name="n", labels={"zone": "z1"}))
    in_z2 = Node(metadata=ObjectMeta(name="n", labels={"zone": "z2"}))

    def allocate(node: Node, state: AllocatedState) -> bool:
        return (
            Allocator(AllocatorFeatures(), state, {"c": cls}, [s]).allocate(node, [claim])
            is not None
        )

    assert allocate(in_z1, AllocatedState())
    assert not allocate(in_z2, AllocatedState())
    assert allocate(in_z1, AllocatedState())
    assert not allocate(in_z1, AllocatedState({("a.example.com", "p", "d0")}))
