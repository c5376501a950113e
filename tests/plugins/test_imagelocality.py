"""ImageLocality (k/k ``plugins/imagelocality/image_locality_test.go``: TestImageLocalityPriority,
TestNormalizedImageName)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import Container, ContainerImage
from kubesched.cache._cache import Cache, Snapshot
from kubesched.plugins import imagelocality
from kubesched.testing import FakeHandle, make_node, make_pod

MB = 1024 * 1024


def image_node(name: str, images: list[tuple[list[str], int]]):
    n = make_node(name).obj()
    n.status.images = [ContainerImage(names=names, size_bytes=size * MB) for names, size in images]
    return n


N403002000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
]
N25010 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
N60040900 = [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)]
N300600900 = [
    (["gcr.io/300:latest"], 300),
    (["gcr.io/600:latest"], 600),
    (["gcr.io/900:latest"], 900),
]
N400030 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
N203040 = [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)]


def spec(*images: str, init: tuple[str, ...] = ()):
    p = make_pod("p").obj()
    p.spec.containers = [Container(name=f"c{i}", image=img) for i, img in enumerate(images)]
    p.spec.init_containers = [Container(name=f"i{i}", image=img) for i, img in enumerate(init)]
    return p


CASES = [
    pytest.param(
        spec("gcr.io/40", "gcr.io/250"),
        [N403002000, N25010],
        [0, 5],
        id="two images spread on two nodes, prefer the larger image one",
    ),
    pytest.param(
        spec("gcr.io/40", "gcr.io/300"),
        [N403002000, N25010],
        [7, 0],
        id="two images on one node, prefer this node",
    ),
    pytest.param(
        spec("gcr.io/10", "gcr.io/4000"),
        [N400030, N25010],
        [100, 0],
        id="if exceed limit, use limit",
    ),
    pytest.param(
        spec("gcr.io/10", "gcr.io/4000"),
        [N400030, N25010, []],
        [66, 0, 0],
        id="if exceed limit, use limit (with node which has no images present)",
    ),
    pytest.param(
        spec("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [N60040900, N300600900, []],
        [32, 36, 0],
        id="pod with multiple large images, node2 is preferred",
    ),
    pytest.param(
        spec("gcr.io/30", "gcr.io/40"),
        [N203040, N400030],
        [1, 0],
        id="pod with multiple small images",
    ),
    pytest.param(
        spec("gcr.io/30", init=("gcr.io/300",)),
        [N403002000, N203040],
        [6, 0],
        id="include InitContainers: two images spread on two nodes, prefer the larger image one",
    ),
]


@pytest.mark.parametrize("batch_kind", ["snapshot", "node-infos"])
@pytest.mark.parametrize(("pod", "node_images", "want"), CASES)
def test_image_locality_priority(pod, node_images, want, batch_kind) -> None:
    cache = Cache()
    for i, images in enumerate(node_images):
        cache.add_node(image_node(f"node{i + 1}", images))
    snap = Snapshot()
    snap.update(cache)
    pl = imagelocality.new(None, FakeHandle(snapshot=snap))
    batch = (
        NodeBatch(snapshot=snap, indices=np.arange(len(snap)))
        if batch_kind == "snapshot"
        else NodeBatch.of(snap.node_infos)
    )
    assert np.asarray(pl.kubesched_score(CycleState(), pod, batch)).tolist() == want


def test_without_snapshot_the_batch_is_the_cluster() -> None:
    from kubesched.testing import make_node_info

    infos = [
        make_node_info(image_node("node1", N403002000)),
        make_node_info(image_node("node2", N25010)),
    ]
    pl = imagelocality.new(None, FakeHandle())
    assert np.asarray(
        pl.kubesched_score(CycleState(), spec("gcr.io/40", "gcr.io/300"), NodeBatch.of(infos))
    ).tolist() == [7, 0]


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "out"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + _digest("root"), "root@" + _digest("root"), id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name, out) -> None:
    assert imagelocality.normalized_image_name(name) == out
