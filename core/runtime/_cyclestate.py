"""The values a scheduling cycle hands its plugins: ``CycleState`` (upstream's
``framework/cycle_state.go``) and the results of PreFilter and PostFilter (``interface.go``).

The leaf below the hook specifications (``hookspecs``) and the runtime (``_framework``, which
re-exports these names): both name them, neither owns them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._infos import PodInfo
    from kubesched.scheduler._results import AttemptRecord


class _Values(dict[str, Any]):
    """A cycle's values: a missing key is upstream's ``framework.ErrNotFound``."""

    __slots__ = ()

    def __missing__(self, key: str) -> Any:
        raise KeyError("not found")


class CycleState:
    """Per-cycle plugin state (``framework.CycleState``); ``clone`` copies values with ``clone``.

    ``read(key)`` (a KeyError "not found" when missing), ``get(key, default=None)`` and
    ``write(key, value)`` are the value dict's own methods, bound once per cycle: the plugins
    call them a dozen times a cycle, and a C method costs no Python frame."""

    __slots__ = (
        "_data", "get", "read", "write", "skip_filter_plugins", "skip_score_plugins", "recording",
        "record_plugin_metrics", "pod_info",
    )

    def __init__(self, *, record_plugin_metrics: bool = False) -> None:
        data = self._data = _Values()
        self.read: Callable[[str], Any] = data.__getitem__
        self.get: Callable[..., Any] = data.get
        self.write: Callable[[str, Any], None] = data.__setitem__
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        # the attempt's plugin results, when recording (:mod:`kubesched.scheduler._results`); a clone
        # (preemption's dry runs) records nothing
        self.recording: AttemptRecord | None = None
        # ``ShouldRecordPluginMetrics``: this cycle is one of the sampled ones whose plugin calls
        # are timed (set only while a MetricsRecorder is attached; a clone keeps it)
        self.record_plugin_metrics = record_plugin_metrics
        # the PodInfo of the pod being scheduled (its requests computed once when it was
        # queued: ``pod_requests(..., state=state)`` reuses them), or None
        self.pod_info: PodInfo | None = None

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState(record_plugin_metrics=self.record_plugin_metrics)
        for k, v in self._data.items():
            clone = getattr(v, "clone", None)
            c._data[k] = clone() if callable(clone) else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.pod_info = self.pod_info
        return c


@dataclass
class PreFilterResult:
    """Narrows the nodes to evaluate to ``node_names`` (None: all nodes)."""

    node_names: set[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return PreFilterResult(set(other.node_names))
        return PreFilterResult(self.node_names & other.node_names)


@dataclass
class PreBindPreFlightResult:
    """What a PreBind plugin's ``pre_bind_pre_flight`` may return with its status, as
    ``(PreBindPreFlightResult, Status | None)`` (upstream's ``fwk.PreBindPreFlightResult``, v1.36,
    kubernetes#135393): ``allow_parallel`` lets its PreBind run at the same time as the adjacent
    PreBind plugins that allow it too.  Before 1.36 the result is ignored (PreBind runs one
    plugin after another); a bare status stands for ``allow_parallel=False``."""

    allow_parallel: bool = False


PRE_BIND_PRE_FLIGHT_KEY = "kubesched/prebind-preflight"
"""The cycle's PreBindPreFlight outcome (``SetSkipPreBindPlugins``, ``SetParallelPreBindPlugins``):
(the plugins to skip at PreBind, the plugins that may run in parallel), written by
``RunPreBindPreFlights`` only, so a binding cycle without pre-flights reads nothing."""


@dataclass
class PostFilterResult:
    """A PostFilter outcome: nominate the pod to ``nominated_node_name`` ("" clears it);
    ``victims``: the pods preempted to make room there (recorded by ``--explain``)."""

    nominated_node_name: str | None = None
    victims: list[Pod] = field(default_factory=list, compare=False)


__all__ = ["CycleState", "PostFilterResult", "PreFilterResult"]
