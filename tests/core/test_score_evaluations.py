"""plugin_evaluation_total of the Score plugins (kubesched.runtime._score_runners): every node
each called plugin scores, counted once per cycle for the plugins a skip set leaves running,
and taken back for those a failing plugin keeps from being called."""

from __future__ import annotations

from typing import Any

import numpy as np

from kubesched import CycleState, Framework, NodeBatch, hookimpl
from kubesched.plugins import IN_TREE
from kubesched.testing import make_node, make_node_info, make_pod

POD = make_pod("p").obj()


def _batch(n: int) -> NodeBatch:
    return NodeBatch.of([make_node_info(make_node(f"n{i}").obj()) for i in range(n)])


def _plugin(name: str, fail: list[bool]) -> type:
    class Scorer:
        def __init__(self, args: Any, handle: Any) -> None:
            pass

        @hookimpl
        def kubesched_score(self, state: CycleState, pod: Any, nodes: NodeBatch) -> np.ndarray:
            if fail[0]:
                raise RuntimeError("no")
            return np.full(len(nodes), 10, dtype=np.int64)

    Scorer.name = name  # type: ignore[attr-defined]
    return Scorer


def test_score_evaluations_count_each_called_plugin_per_node() -> None:
    fail = {"A": [False], "B": [False], "C": [False]}
    classes = {name: _plugin(name, fail[name]) for name in fail}
    plugins = {
        "queueSort": [("PrioritySort", 0)],
        "bind": [("DefaultBinder", 0)],
        "score": [("A", 1), ("B", 2), ("C", 1)],
    }
    fw = Framework("default-scheduler", plugins, {**IN_TREE, **classes}, {})
    expected = {"A": 0, "B": 0, "C": 0}

    def run(n: int, skip: set[str], check: bool = True) -> None:
        state = CycleState()
        state.skip_score_plugins.update(skip)
        _, _, st = fw.run_score_plugins(state, POD, _batch(n))
        failed = None if st is None else st.plugin
        for name in ("A", "B", "C"):
            if name in skip:
                continue
            expected[name] += n
            if name == failed:
                break  # the plugins after it are not called
        if not check:
            return
        got = {name: count for (name, point), count in fw.plugin_evaluations().items() if point == "Score"}
        assert got == expected

    run(3, set())
    run(4, {"B"})
    fail["B"][0] = True
    run(2, set())  # B raises: C is not called
    run(5, {"A"})
    run(1, {"C"})
    fail["B"][0] = False
    run(3, set())
    fail["A"][0] = True
    run(2, set())  # A raises: neither B nor C is called
    fail["A"][0] = False
    for k in range(70):  # more skip sets than the runner keeps, unread: its counts folded, none lost
        run(1, {f"X{k}"}, check=k == 69)
