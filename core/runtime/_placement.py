"""The placement plugin sets of the PodGroup scheduling cycle (TopologyAwareWorkloadScheduling,
Kubernetes 1.36 alpha): the types the ``placementGenerate`` and ``placementScore`` plugins see,
and their runners.

    placementGenerate   each plugin divides the placements of the one before it (the first
                        divides one placement of every node); a plugin without constraints for
                        the group gives its parent placement back
    (the cycle)         the group is tried on each placement (the snapshot holds only its nodes)
    placementScore      each plugin scores every placement the group fits, its
                        NormalizePlacementScore rewrites them (then within [0, 100]), times the
                        plugin's weight; the placement of highest total wins (ties: random)

Sources: k8s.io/kube-scheduler v0.36.0 ``framework/interface.go`` (PlacementGeneratePlugin,
PlacementScorePlugin, PlacementScoreExtensions, PlacementPluginScores, MaxScore 100) and
``framework/types.go`` (PodGroupInfo, Placement, ProposedAssignment, PodGroupAssignments); the
cycle's use of the runners from ``pkg/scheduler/schedule_one_podgroup.go`` as it is with the
v1alpha2 listers (the 1.36 line).  The runners themselves (``RunPlacementGeneratePlugins``,
``RunPlacementScorePlugins`` of the framework runtime) were not read at the v1.36.0 tag:
kubesched's chaining of several generate plugins, and the range check after normalization (that
of ``RunScorePlugins``), are its reading of the interfaces' contracts; their texts for no
placement and for a failing PlacementScore plugin are those schedule_one_podgroup_test.go of the
1.36 line expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.runtime._status import Code, Status

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._cyclestate import CycleState
    from kubesched.runtime._nodeinfo import NodeInfo

class PluginEntry(Protocol):
    """What the runners read of a profile's plugin entry (``kubesched.runtime._plugins.PluginEntry``)."""

    @property
    def name(self) -> str: ...
    @property
    def plugin(self) -> Any: ...
    @property
    def weight(self) -> int: ...


MSG_NO_FEASIBLE_PLACEMENTS = "no feasible placements found"
"""A placementGenerate plugin that leaves no placement: Unschedulable, with its name."""
MAX_PLACEMENT_SCORE = 100
MIN_PLACEMENT_SCORE = 0


@dataclass
class PodGroupInfo:
    """``fwk.PodGroupInfo``: the group (its namespace and name) and the unscheduled pods this
    cycle considers, in the cycle's order."""

    namespace: str
    name: str
    unscheduled_pods: list[Pod] = field(default_factory=list)


@dataclass
class Placement:
    """``fwk.Placement``: a set of nodes the group may be scheduled on (``name`` identifies it
    in messages; the plugin that made it chooses it)."""

    name: str
    nodes: list[NodeInfo]


@dataclass(frozen=True)
class ProposedAssignment:
    """``fwk.ProposedAssignment``: a member and the node the cycle found for it."""

    pod: Pod
    node_name: str


@dataclass
class PodGroupAssignments:
    """``fwk.PodGroupAssignments``: a placement and the node proposed for each member placed
    on it (only members that found a node)."""

    placement: Placement
    proposed: list[ProposedAssignment]


@dataclass
class PlacementScore:
    """``fwk.PlacementScore``: one plugin's score of one placement (NormalizePlacementScore
    rewrites ``score``)."""

    placement: Placement
    score: int


@dataclass
class PlacementPluginScores:
    """``fwk.PlacementPluginScores``: every plugin's weighted score of one placement."""

    placement: Placement
    scores: list[tuple[str, int]] = field(default_factory=list)
    total: int = 0
    randomizer: int = 0


def _failed(what: str, e: PluginEntry, why: str) -> Status:
    """``RunPlacementScorePlugins``' Error for a plugin that failed: ``<what>: plugin "X" failed
    with: <why>`` (the schedule_one_podgroup_test.go text of PlacementScore; the Normalize one as
    ``RunScorePlugins`` words it)."""
    return Status(Code.ERROR, f'{what}: plugin "{e.name}" failed with: {why}', plugin=e.name)


def _error(e: PluginEntry, what: str, err: Exception) -> Status:
    return Status(Code.ERROR, f'running "{e.name}" {what} plugin: {err}', plugin=e.name)


def run_placement_generate_plugins(
    entries: Sequence[PluginEntry], state: CycleState, pod_group: PodGroupInfo, all_nodes: list[NodeInfo]
) -> tuple[list[Placement], Status | None]:
    """``RunPlacementGeneratePlugins``: the candidate placements (no plugin: one of every node).

    A plugin's non-Success status ends the run with it (its name on it); a result that is not a
    sequence of :class:`Placement` is an Error naming the plugin."""
    placements = [Placement("", list(all_nodes))]
    for e in entries:
        out: list[Placement] = []
        for parent in placements:
            try:
                got: Any = e.plugin.kubesched_placement_generate(state, pod_group, parent)
            except Exception as err:  # a plugin bug is an Error for this group, not a dead scheduler
                return [], _error(e, "placementGenerate", err)
            if isinstance(got, Status):
                if got.is_success():
                    continue
                got.plugin = e.name
                return [], got
            if got is None or isinstance(got, (str, bytes)) or not isinstance(got, Sequence) or not all(
                isinstance(p, Placement) for p in got
            ):
                return [], Status(
                    Code.ERROR,
                    f'running "{e.name}" placementGenerate plugin: returned {type(got).__name__}, '
                    "expected a sequence of Placement",
                    plugin=e.name,
                )
            out.extend(got)
        if not out:
            return [], Status(Code.UNSCHEDULABLE, MSG_NO_FEASIBLE_PLACEMENTS, plugin=e.name)
        placements = out
    return placements, None


def run_placement_score_plugins(
    entries: Sequence[PluginEntry], state: CycleState, pod_group: PodGroupInfo, assignments: Sequence[PodGroupAssignments]
) -> tuple[list[PlacementPluginScores], Status | None]:
    """``RunPlacementScorePlugins``: each placement's scores, one per plugin (normalized when the
    plugin implements NormalizePlacementScore, then times its weight), and their total."""
    out = [PlacementPluginScores(a.placement) for a in assignments]
    for e in entries:
        scores: list[PlacementScore] = []
        for a in assignments:
            try:
                raw: Any = e.plugin.kubesched_placement_score(state, pod_group, a)
            except Exception as err:
                return [], _error(e, "placementScore", err)
            if isinstance(raw, Status):
                why = raw.message if not raw.is_success() else "returned a Status, expected an int score"
                return [], _failed("running PlacementScore plugins", e, why)
            if isinstance(raw, bool) or not isinstance(raw, int):
                return [], Status(
                    Code.ERROR,
                    f'running "{e.name}" placementScore plugin: returned {type(raw).__name__}, expected an int score',
                    plugin=e.name,
                )
            scores.append(PlacementScore(a.placement, raw))
        normalize = getattr(e.plugin, "kubesched_normalize_placement_score", None)
        if normalize is not None and hasattr(normalize, "kubesched_impl"):  # hookspecs.implements
            try:
                st = normalize(state, pod_group, scores)
            except Exception as err:
                return [], _error(e, "normalizePlacementScore", err)
            if st is not None and not st.is_success():
                return [], _failed("running Normalize on PlacementScore plugins", e, st.message)
            for s in scores:
                if not MIN_PLACEMENT_SCORE <= s.score <= MAX_PLACEMENT_SCORE:
                    return [], Status(
                        Code.ERROR,
                        f'applying score defaultWeights on PlacementScore plugins: plugin "{e.name}" returns an '
                        f"invalid score {s.score}, it should in the range of [{MIN_PLACEMENT_SCORE}, "
                        f"{MAX_PLACEMENT_SCORE}] after normalizing",
                        plugin=e.name,
                    )
        for row, s in zip(out, scores, strict=True):
            weighted = s.score * e.weight
            row.scores.append((e.name, weighted))
            row.total += weighted
    return out, None


__all__ = [
    "MAX_PLACEMENT_SCORE",
    "MSG_NO_FEASIBLE_PLACEMENTS",
    "MIN_PLACEMENT_SCORE",
    "Placement",
    "PlacementPluginScores",
    "PlacementScore",
    "PodGroupAssignments",
    "PodGroupInfo",
    "ProposedAssignment",
    "run_placement_generate_plugins",
    "run_placement_score_plugins",
]
