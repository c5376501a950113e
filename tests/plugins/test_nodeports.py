"""NodePorts (k/k ``plugins/nodeports/node_ports_test.go``: TestNodePorts, TestFits,
Test_isSchedulableAfterPodDeleted, TestPreFilterDisabled)."""

from __future__ import annotations

import pytest

from kubesched import CycleState, NodeBatch
from kubesched.api._objects import Container, ContainerPort
from kubesched.plugins import nodeports
from kubesched.runtime._events import QueueingHint
from kubesched.runtime._status import Code
from kubesched.testing import FakeHandle, make_node, make_node_info, make_pod


def new_pod(host: str, *port_infos: str):
    """``newPod``: ports as "PROTOCOL/hostIP/hostPort"."""
    ports = []
    for info in port_infos:
        proto, ip, port = info.split("/")
        ports.append(ContainerPort(host_ip=ip, host_port=int(port), protocol=proto))
    p = make_pod("pod-" + "-".join(port_infos).replace("/", "_") or "pod").node(host).obj()
    p.spec.containers = [Container(name="c", image="pause", ports=ports)]
    return p


def node_info(*pods):
    return make_node_info(make_node("n").obj(), *pods)


def init_port_pod(sidecar: bool):
    p = make_pod("init").obj()
    p.spec.init_containers = [
        Container(
            name="i",
            image="pause",
            restart_policy="Always" if sidecar else None,
            ports=[ContainerPort(container_port=8001, host_port=8001, protocol="TCP")],
        )
    ]
    return p


ERR = nodeports.ERR_REASON
CASES = [
    pytest.param(make_pod("p").obj(), node_info(), "skip", id="skip filter"),
    pytest.param(
        new_pod("m1", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "UDP/127.0.0.1/9090")),
        None,
        id="other port",
    ),
    pytest.param(
        new_pod("m1", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
        ERR,
        id="same udp port",
    ),
    pytest.param(
        new_pod("m1", "TCP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
        ERR,
        id="same tcp port",
    ),
    pytest.param(
        new_pod("m1", "TCP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.2/8080")),
        None,
        id="different host ip",
    ),
    pytest.param(
        new_pod("m1", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
        None,
        id="different protocol",
    ),
    pytest.param(
        new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
        ERR,
        id="second udp port conflict",
    ),
    pytest.param(
        new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
        ERR,
        id="first tcp port conflict",
    ),
    pytest.param(
        new_pod("m1", "TCP/0.0.0.0/8001"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
        ERR,
        id="first tcp port conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
        ERR,
        id="TCP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        new_pod("m1", "TCP/127.0.0.1/8001"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
        ERR,
        id="second tcp port conflict to 0.0.0.0 hostIP",
    ),
    pytest.param(
        new_pod("m1", "UDP/127.0.0.1/8001"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
        None,
        id="second different protocol",
    ),
    pytest.param(
        new_pod("m1", "UDP/127.0.0.1/8001"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
        ERR,
        id="UDP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        init_port_pod(False),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
        "skip",
        id="non-sidecar initContainer using hostPort",
    ),
    pytest.param(
        init_port_pod(True),
        node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
        ERR,
        id="TCP hostPort conflict from sidecar initContainer",
    ),
    pytest.param(
        new_pod("m1", "TCP//8080"),
        node_info(new_pod("m1", "TCP/0.0.0.0/8080")),
        ERR,
        id="empty hostIP means 0.0.0.0",
    ),
]


@pytest.mark.parametrize(("pod", "ni", "want"), CASES)
def test_node_ports(pod, ni, want) -> None:
    pl = nodeports.new(None, FakeHandle())
    state = CycleState()
    st = pl.kubesched_pre_filter(state, pod, [ni])
    if want == "skip":
        assert st is not None and st.code == Code.SKIP
        return
    assert st is None
    out = pl.kubesched_filter(state, pod, NodeBatch.of([ni, node_info()]))
    if want is None:
        assert out is None
    else:
        assert list(out) == [0]
        assert (out[0].code, out[0].message) == (Code.UNSCHEDULABLE, want)


def test_pre_filter_disabled() -> None:
    out = nodeports.new(None, FakeHandle()).kubesched_filter(
        CycleState(), make_pod("p").obj(), NodeBatch.of([node_info()])
    )
    assert out[0].code == Code.ERROR


@pytest.mark.parametrize(
    ("pod", "existing", "fits"),
    [
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80"),
            node_info(new_pod("e", "TCP/127.0.0.1/9090")),
            True,
            id="non-conflicting ports",
        ),
        pytest.param(
            new_pod(
                "p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            ),
            node_info(
                new_pod("e", "TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080")
            ),
            True,
            id="multiple non-conflicting ports",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            node_info(new_pod("e", "UDP/127.0.0.1/80")),
            True,
            id="same ports on different protocols",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            node_info(new_pod("e", "TCP/127.0.0.1/80")),
            False,
            id="conflicting ports",
        ),
        pytest.param(
            new_pod(
                "p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            ),
            node_info(new_pod("e", "TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080")),
            False,
            id="multiple ports, some conflicting",
        ),
    ],
)
def test_fits(pod, existing, fits) -> None:
    assert nodeports.fits(pod, existing) is fits


@pytest.mark.parametrize(
    ("old", "hint"),
    [
        pytest.param(make_pod("o").obj(), QueueingHint.QUEUE_SKIP, id="skip-queue-on-unscheduled"),
        pytest.param(
            make_pod("o").node("fake-node").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-non-hostport",
        ),
        pytest.param(
            make_pod("o").node("fake-node").host_port(8081).obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            make_pod("o").node("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="queue-on-released-hostport",
        ),
    ],
)
def test_is_schedulable_after_pod_deleted(old, hint) -> None:
    pod = make_pod("p").host_port(8080).obj()
    assert nodeports.new(None, FakeHandle()).is_schedulable_after_pod_deleted(pod, old, None) == hint
