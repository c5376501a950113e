"""Quantities (exact parsing) and pod requests (containers, init containers, sidecars, overhead)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import QuantityError, parse_quantity, pod_requests
from kubesched.api._resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    milli_value,
    whole_value,
)
from kubesched.testing import make_pod


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0", Fraction(0)),
        ("1", Fraction(1)),
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("1Ki", Fraction(1024)),
        ("1Mi", Fraction(2**20)),
        ("1Gi", Fraction(2**30)),
        ("2Ti", Fraction(2 * 2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1G", Fraction(10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        ("1n", Fraction(1, 10**9)),
        ("1u", Fraction(1, 10**6)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("1.5e-3", Fraction(3, 2000)),
        ("+2", Fraction(2)),
        ("-1", Fraction(-1)),
        (2, Fraction(2)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse_quantity_exact(text: str | int | float, want: Fraction) -> None:
    assert parse_quantity(text) == want


@pytest.mark.parametrize("bad", ["", "abc", "1Ki2", "1.2.3", "1KB", "Mi", "1 Gi", "--1", "1e", True])
def test_parse_quantity_rejects(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)  # type: ignore[arg-type]


def test_milli_and_whole_values_round_up() -> None:
    assert milli_value(parse_quantity("0.1m")) == 1
    assert milli_value(parse_quantity("1.0001")) == 1001
    assert whole_value(parse_quantity("1.5")) == 2
    assert whole_value(parse_quantity("100m")) == 1


def test_containers_are_summed() -> None:
    pod = make_pod("p").req(cpu="100m", memory="1Gi").req(cpu="1", memory="512Mi").obj()
    r = pod_requests(pod)
    assert (r.milli_cpu, r.memory) == (1100, 2**30 + 2**29)


def test_init_containers_peak_against_the_sum() -> None:
    pod = make_pod("p").req(cpu="1").init_req({"cpu": "2"}).init_req({"cpu": "500m"}).obj()
    assert pod_requests(pod).milli_cpu == 2000


def test_restartable_sidecars_add_to_the_sum_and_to_later_init_containers() -> None:
    # sidecar 1 CPU runs alongside everything after it: init peak = 1 + 3 = 4; sum = 1 + 1
    pod = (
        make_pod("p")
        .req(cpu="1")
        .init_req({"cpu": "1"}, sidecar=True)
        .init_req({"cpu": "3"})
        .obj()
    )
    assert pod_requests(pod).milli_cpu == 4000
    pod2 = make_pod("q").req(cpu="5").init_req({"cpu": "1"}, sidecar=True).init_req({"cpu": "3"}).obj()
    assert pod_requests(pod2).milli_cpu == 6000


def test_overhead_is_added() -> None:
    pod = make_pod("p").req(cpu="1").overhead({"cpu": "250m", "memory": "100Mi"}).obj()
    r = pod_requests(pod)
    assert (r.milli_cpu, r.memory) == (1250, 100 * 2**20)


def test_limits_stand_in_for_missing_requests() -> None:
    pod = make_pod("p").obj()
    from kubesched.api._objects import Container, ResourceRequirements

    pod.spec.containers = [Container(name="c", resources=ResourceRequirements(limits={"cpu": "2", "memory": "1Gi"}))]
    r = pod_requests(pod)
    assert (r.milli_cpu, r.memory) == (2000, 2**30)


def test_non_zero_defaults_apply_per_container_to_missing_requests_only() -> None:
    pod = make_pod("p").container().req(cpu="0", memory="0").req(cpu="300m").obj()
    r = pod_requests(pod, non_zero=True)
    assert r.milli_cpu == DEFAULT_MILLI_CPU_REQUEST + 0 + 300
    assert r.memory == DEFAULT_MEMORY_REQUEST + 0 + DEFAULT_MEMORY_REQUEST
    assert pod_requests(make_pod("empty").obj(), non_zero=True).milli_cpu == 0


def test_extended_resources_and_ephemeral_storage() -> None:
    pod = make_pod("p").req_list({"nvidia.com/gpu": 2, "ephemeral-storage": "1Gi"}).obj()
    r = pod_requests(pod)
    assert r.scalar == {"nvidia.com/gpu": 2}
    assert r.ephemeral_storage == 2**30


def _exact(text: str) -> Fraction:
    """A quantity the slow, exact way: the whole mantissa as a Fraction (quadratic in its
    digits), scaled, then upstream's nano rounding and int64 cap."""
    import re as _re
    from decimal import Decimal as _D

    from kubesched.api._resources import _BINARY, _DECIMAL, _bounded

    m = _re.fullmatch(r"([+-]?[0-9.]+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+|[numkMGTPE]?)", text)
    assert m is not None
    num, suffix = Fraction(_D(m[1])), m[2]
    if suffix in _BINARY:
        return _bounded(num * _BINARY[suffix])
    if suffix in _DECIMAL:
        return _bounded(num * _DECIMAL[suffix])
    return _bounded(num * Fraction(10) ** int(suffix[1:]))


@settings(max_examples=400, deadline=None)
@given(
    st.text("0123456789", min_size=1, max_size=60),
    st.text("0000123456789", max_size=60),
    st.booleans(),
    st.sampled_from(["", "-", "+"]),
    st.sampled_from(["", "m", "n", "u", "k", "M", "G", "E", "Ki", "Gi", "Ei", "e3", "e-3", "e-9", "e18", "e-12", "e-30", "e25"]),
)
def test_linear_parsing_equals_the_exact_value(ip: str, fp: str, point: bool, sign: str, suffix: str) -> None:
    """The mantissa is kept to 50 places (rounded away from zero beyond): the same
    quantity as the exact computation, however long the digits."""
    text = sign + ip + ("." + fp if point else "") + suffix
    assert parse_quantity(text) == _exact(text)


def test_the_pod_infos_requests_are_pod_requests_both_ways() -> None:
    """PodInfo computes a pod's requests and non-zero cpu/memory in one pass over its
    containers (pods of containers only) or as pod_requests does (the rest); a plugin asking
    ``pod_requests(..., state=state)`` for the pod being scheduled gets them back, equal to
    pod_requests itself at every version's rules."""
    import random

    from kubesched.api._objects import Container, PodStatus, ResourceRequirements
    from kubesched.api._resources import request_rules
    from kubesched.runtime._cyclestate import CycleState
    from kubesched.runtime._infos import PodInfo

    rng = random.Random(3)

    def container(i: int) -> Container:
        req = {k: v for k, v in (("cpu", f"{rng.randint(0, 900)}m"), ("memory", f"{rng.randint(0, 900)}Mi"),
                                  ("example.com/gpu", "1"), ("ephemeral-storage", "1Gi")) if rng.random() < 0.6}  # fmt: skip
        lim = {"cpu": "2"} if rng.random() < 0.2 else {}
        return Container(name=f"c{i}", image="x", resources=ResourceRequirements(requests=req, limits=lim))

    for trial in range(300):
        pod = make_pod(f"p{trial}").obj()
        pod.spec.containers = [container(i) for i in range(rng.randint(1, 3))]
        if trial % 5 == 0:
            pod.spec.init_containers = [container(9)]
        if trial % 7 == 0:
            pod.spec.overhead = {"cpu": "10m"}
        if trial % 11 == 0:
            pod.status = PodStatus()
        for version in ((1, 30), (1, 33), (1, 36)):
            rules = request_rules(version, {})
            pi = PodInfo(pod, rules)
            state = CycleState()
            state.pod_info = pi
            for non_zero in (False, True):
                want = pod_requests(pod, non_zero=non_zero, rules=rules)
                assert pod_requests(pod, non_zero=non_zero, rules=rules, state=state) == want
                assert (pi.non_zero_requests if non_zero else pi.requests) == want
            other = make_pod("other").obj()  # not the pod being scheduled: computed afresh
            assert pod_requests(other, rules=rules, state=state) == pod_requests(other, rules=rules)


def test_pod_info_requests_remembered_for_one_container_match_a_fresh_count() -> None:
    """PodInfo remembers the requests of a one-container pod by its container's resources: the
    same answer as ``pod_requests_and_non_zero`` for equal resources seen again, values of other
    types (1, 1.0, "1") and the scalar resources' order kept apart, and a Resource of its own."""
    from kubesched.api._objects import Container, ResourceRequirements
    from kubesched.api._resources import NEWEST_RULES, pod_requests_and_non_zero
    from kubesched.runtime._infos import PodInfo

    shapes = [
        ({"cpu": "100m", "memory": "500Mi"}, None),
        ({"memory": "500Mi", "cpu": "100m"}, None),
        ({"cpu": 1}, None),
        ({"cpu": 1.0}, None),
        ({"cpu": "1"}, None),
        (None, {"cpu": "2", "memory": "1Gi"}),
        ({"cpu": "100m"}, {"cpu": "2", "example.com/gpu": "1"}),
        ({"example.com/b": "1", "example.com/a": "2"}, None),
        ({"example.com/a": "2", "example.com/b": "1"}, None),
        (None, None),
    ]
    for _ in range(3):
        for i, (req, lim) in enumerate(shapes):
            pod = make_pod(f"p{i}").obj()
            res = ResourceRequirements(requests=dict(req) if req else None, limits=dict(lim) if lim else None)
            pod.spec.containers = [Container(name="c", image="x", resources=res)]
            pi = PodInfo(pod)
            want, nz_cpu, nz_mem = pod_requests_and_non_zero(pod, NEWEST_RULES)
            assert (pi.requests, pi.non_zero_cpu, pi.non_zero_mem) == (want, nz_cpu, nz_mem)
            assert list(pi.requests.scalar) == list(want.scalar)
            pi.requests.milli_cpu += 1  # its own: the next pod of these resources is not changed
