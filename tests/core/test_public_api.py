"""The public face: ``__all__`` changes only on purpose, every public name is documented."""

from __future__ import annotations

import inspect
from pathlib import Path

import kubesched
import kubesched.hookspecs

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_ALL = {
    "ActionType", "Binding", "ClusterEvent", "ClusterEventWithHint", "Code", "ConfigError",
    "ConflictError", "CycleState", "Diagnosis", "Event", "EventResource", "FitError", "Framework",
    "KubeschedError", "Lease", "Node", "NodeBatch", "NodeInfo", "NotFoundError", "Pod",
    "PodDisruptionBudget", "PodGroup", "PodInfo", "PluginError", "PostFilterResult",
    "PreFilterResult", "PriorityClass", "QuantityError", "QueuedPodInfo", "QueueingHint",
    "Resource", "SchedulingQueue", "Status", "Transport", "TransportError", "UnavailableError",
    "WaitingPod", "WatchEvent", "hookimpl", "hookspec", "parse_quantity", "per_node_filter",
    "per_node_score", "pod_requests", "__version__",
}


def test_all_is_pinned() -> None:
    assert set(kubesched.__all__) >= EXPECTED_ALL
    extra = set(kubesched.__all__) - EXPECTED_ALL
    assert not extra - {"Scheduler", "SchedulerConfig", "ClusterState", "load_entry_point_plugins", "simulate"}, extra


def test_every_public_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name in kubesched.__all__
        if (inspect.isclass(obj := getattr(kubesched, name)) or inspect.isfunction(obj))
        and not inspect.getdoc(obj)
    ]
    assert not missing


def _hooks() -> list[str]:
    return [n for n in vars(kubesched.hookspecs) if n.startswith("kubesched_")]


def test_every_hook_has_a_docstring() -> None:
    assert all(inspect.getdoc(getattr(kubesched.hookspecs, n)) for n in _hooks())


def test_reference_docs_list_every_hook() -> None:
    text = (ROOT / "docs" / "hooks.md").read_text()
    missing = [n for n in _hooks() if f"## `{n}`" not in text]
    assert not missing, f"docs/hooks.md lacks {missing}"
