"""Preemption: the generic Evaluator behind DefaultPreemption (upstream ``framework/preemption``).

Why one file: upstream's Evaluator (``framework/preemption/preemption.go``) is one unit —
candidates, dry run, victims, SelectCandidate, preparation — and the batched dry run must sit
beside the per-node path it is checked against (``tests/core/test_preemption_batched.py``).

The model, in the order ``Evaluator.preempt`` runs it for a pod that fit no node::

    re-read the pod ─► eligible? (preemptionPolicy, terminating victims on its nominated node)
        ─► potential nodes: status exactly Unschedulable (absent nodes are Unresolvable)
        ─► dry run from a random offset: per node, on a copy of the NodeInfo and CycleState,
           remove every lower-priority pod, filter, reprieve pods (PDB-violating ones first),
           collect (victims, #PDB violations); stop early once enough candidates are found
        ─► extenders (ProcessPreemption) ─► pick one node (the ordered rules of §6.4)
        ─► prepare: synchronously (delete victims in the cycle) or asynchronously (a task in the
           scheduler's task group; the preemptor waits in ``preempting``, gated at PreEnqueue)
        ─► PostFilterResult(nominated node)

Preempting one victim (``preempt_pod``): a victim waiting on Permit is rejected; any other gets a
DisruptionTarget condition and is deleted, and a ``Preempted`` event is recorded on it.

The dry run is sequential: upstream's parallel dry run with parallelism 1, which is what makes its
results deterministic (the candidate limit and the early stop then depend only on the offset).
When no AddPod/RemovePod extension runs in the cycle it goes over batches of nodes: on the
snapshot's columns (``dry_run_preemption_columns``: no node copied, see docs/architecture.md)
when eligibility is by priority alone, else over node copies (``dry_run_preemption_batched``);
both give the same candidates, victims, statuses and errors as the node-by-node dry run.

In a simulation (a deterministic driver) the victims of one preemption are preempted one after
another in victim order, so their API writes and ``Preempted`` events come out in the same order
on every event loop; a live scheduler preempts them concurrently, as upstream.
"""

from __future__ import annotations

import functools
import inspect
import logging
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np

from ._errors import NotFoundError
from ._framework import PostFilterResult
from ._labels import compile_label_selector
from ._nodeinfo import RowOverlay, pod_value
from ._objects import PodCondition
from ._resources import CPU, MEMORY, PODS
from ._status import Code, Diagnosis, FitError, Rejections, Status

if TYPE_CHECKING:
    from ._framework import CycleState
    from ._nodeinfo import NodeInfo, PodInfo
    from ._objects import Pod, PodDisruptionBudget

log = logging.getLogger("kubesched.preemption")

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
MAX_INT32 = 2**31 - 1
MIN_INT64 = -(2**63)
_NOW_NS = 2**63 - 1  # a pod without a StartTime counts as started "now": later than any other

DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPT_NEVER = "Never"

MSG_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"


# --- candidates ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone (``preemption.Candidate``)."""

    name: str
    victims: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


class _RoundVictims:
    """One reprieve round of the column dry run: per node (in the round's order) its pods in
    reprieve order and which of them were kept; a node's victims are made when read."""

    __slots__ = ("orders", "kept", "num_pdb", "less")

    def __init__(
        self,
        orders: list[list[PodInfo]],
        kept: np.ndarray,
        num_pdb: list[int],
        less: Callable[[Pod, Pod], bool],
    ) -> None:
        self.orders = orders
        self.kept = kept  # (nodes, slots)
        self.num_pdb = num_pdb
        self.less = less

    def victims(self, w: int) -> list[Pod]:
        """Node ``w``'s pods not kept, in reprieve order (importance order once PDB-violating
        and other pods are both among them, as ``SelectVictimsOnNode`` sorts them)."""
        order = self.orders[w]
        kept = self.kept[w, : len(order)].tolist()
        victims = [pi.pod for pi, k in zip(order, kept, strict=True) if not k]
        if self.num_pdb[w] and self.num_pdb[w] < len(order):
            _sort_by_importance(victims, self.less, lambda p: p)
        return victims


# a slice of the column dry run's candidates: (round, its nodes in the round, their snapshot
# rows, their numbers of PDB-violating victims, their default-rule scores or None)
_Part = tuple[int, np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None"]


class CandidateList(Sequence[Candidate]):
    """The column dry run's candidates, as arrays: a :class:`Candidate` (its victims list) is
    made when read, and the default rules of :func:`pick_one_node_for_preemption` pick from the
    score arrays (:meth:`best_by_default_rules`) without making the others."""

    __slots__ = ("_names", "_rounds", "_round", "_local", "_violations", "_scores", "_made")

    def __init__(
        self,
        names: list[str],
        rounds: list[_RoundVictims],
        round_of: np.ndarray,
        local: np.ndarray,
        violations: np.ndarray,
        scores: np.ndarray | None,
    ) -> None:
        self._names = names  # per candidate
        self._rounds = rounds
        self._round = round_of  # per candidate: its round ...
        self._local = local  # ... and its node there
        self._violations = violations
        self._scores = scores  # (5, len) int64: the default rules' scores, or None
        self._made: dict[int, Candidate] = {}

    def __len__(self) -> int:
        return len(self._names)

    def candidate(self, i: int) -> Candidate:
        c = self._made.get(i)
        if c is None:
            victims = self._rounds[int(self._round[i])].victims(int(self._local[i]))
            c = self._made[i] = Candidate(self._names[i], victims, int(self._violations[i]))
        return c

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.candidate(j) for j in range(len(self))[i]]
        n = len(self)
        j = operator.index(i)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError("candidate index out of range")
        return self.candidate(j)

    @property
    def has_default_scores(self) -> bool:
        return self._scores is not None

    def best_by_default_rules(self) -> int:
        """The index :func:`pick_one_node_for_preemption` picks with the default rules: each rule
        keeps the best-scoring candidates, the first of the rest wins."""
        assert self._scores is not None
        # ascending on the negated scores, first rule first: the best first, ties in order
        # (a lexicographic sort is stable); no score is -2^63 (a candidate has victims)
        return int(np.lexsort(-self._scores[::-1])[0])


# the values the reprieve needs of every potential victim (what NodeResourcesFit reads, and the
# default candidate rules' inputs), kept together per node (see _RowStore)
_BLOCK_KEYS: dict[tuple[str, str], int] = {  # the order _block_of makes them in
    ("requested", PODS): 0,
    ("requested", CPU): 1,
    ("requested", MEMORY): 2,
    ("priority", ""): 3,
    ("start", ""): 4,
}


def _block_of(pods: list[PodInfo]) -> np.ndarray:
    """The values of :data:`_BLOCK_KEYS` for ``pods``, one row per key (what
    :func:`_values_of` gives for each, in one pass)."""
    if not pods:
        return np.empty((len(_BLOCK_KEYS), 0), dtype=np.int64)
    rows = [
        (1, pi.requests.get(CPU), pi.requests.get(MEMORY), pi.priority, pod_start_ns(pi.pod))
        for pi in pods
    ]
    return np.array(rows, dtype=np.int64).T.copy()


def _values_of(pods: list[PodInfo], kind: str, resource: str) -> np.ndarray:
    """Per pod: ``pod_value(pod, kind, resource)``; or its priority (kind "priority") or its
    start in nanoseconds (kind "start", :func:`pod_start_ns`)."""
    if kind == "priority":
        return np.fromiter((pi.priority for pi in pods), np.int64, len(pods))
    if kind == "start":
        return np.fromiter((pod_start_ns(pi.pod) for pi in pods), np.int64, len(pods))
    return np.fromiter((pod_value(pi, kind, resource) for pi in pods), np.int64, len(pods))


class _NodeStatuses(Mapping[str, Status]):
    """The dry run's node statuses as arrays: ``{names[nodes[i]]: statuses[which[i]]}`` in
    order; the dict is made on first use (Preempt reads them only when there is no candidate)."""

    def __init__(self, names: list[str], nodes: np.ndarray, which: np.ndarray, statuses: list[Status]) -> None:
        self._args = (names, nodes, which, statuses)
        self._dict: dict[str, Status] | None = None

    def as_dict(self) -> dict[str, Status]:
        if self._dict is None:
            names, nodes, which, statuses = self._args
            self._dict = dict(
                zip([names[i] for i in nodes.tolist()], [statuses[j] for j in which.tolist()], strict=True)
            )
        return self._dict

    def __getitem__(self, name: str) -> Status:
        return self.as_dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self._args[1])


class _CandidateList:
    """``candidateList``: a fixed-capacity list; adds beyond the capacity are dropped."""

    def __init__(self, size: int) -> None:
        self.size_cap = size
        self.items: list[Candidate] = []

    def add(self, c: Candidate) -> None:
        if len(self.items) < self.size_cap:
            self.items.append(c)

    def size(self) -> int:
        return len(self.items)


class _DryRun:
    """The dry run's result so far: the two candidate lists, node statuses and errors."""

    def __init__(self, num_candidates: int) -> None:
        self.num_candidates = num_candidates
        self.non_violating = _CandidateList(num_candidates)
        self.violating = _CandidateList(num_candidates)
        self.statuses: dict[str, Status] = {}
        self.errs: list[str] = []

    def size(self) -> int:
        return self.non_violating.size() + self.violating.size()

    def offer(self, name: str, victims: list[Pod], num_pdb: int, st: Status | None) -> bool:
        """Record one node's outcome; True when the search can stop (G12–G15)."""
        if (st is None or st.is_success()) and victims:
            c = Candidate(name, victims, num_pdb)
            (self.non_violating if num_pdb == 0 else self.violating).add(c)
            nv = self.non_violating.size()
            return nv > 0 and nv + self.violating.size() >= self.num_candidates
        if st is None or st.is_success():
            st = Status(Code.ERROR, f'expected at least one victim pod on node "{name}"')
        if st.code == Code.ERROR:
            self.errs.append(st.message)
        self.statuses[name] = st
        return False

    def result(self) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        return self.non_violating.items + self.violating.items, self.statuses, self.errs


class _Stripped:
    """A node's pods the preemptor may preempt (the batched dry run's start).

    Kept per node while the snapshot's NodeInfo is ``original`` and the preemptor priority is
    ``prio``; never changed once made.  ``stripped`` (the node without them; the reprieve loop
    works on copies of it), ``by_importance`` and ``values`` are made on first use.
    """

    __slots__ = ("original", "prio", "potential", "_stripped", "by_importance", "values", "_block")

    def __init__(
        self, original: NodeInfo, prio: int, potential: list[PodInfo], stripped: NodeInfo | None = None
    ) -> None:
        self.original = original
        self.prio = prio
        self.potential = potential  # in the node's pod order
        self._stripped = stripped
        # ``potential`` sorted by the default ``more_important_pod``, once needed
        self.by_importance: list[PodInfo] | None = None
        # (kind, resource) -> pod_value of each pod of ``by_importance``
        self.values: dict[tuple[str, str], np.ndarray] = {}
        self._block: np.ndarray | None = None

    def block(self) -> np.ndarray:
        """The values of :data:`_BLOCK_KEYS` (one row each) for the pods of ``by_importance``."""
        if self._block is None:
            assert self.by_importance is not None
            self._block = _block_of(self.by_importance)
        return self._block

    @property
    def stripped(self) -> NodeInfo:
        if self._stripped is None:
            copy = self.original.clone()
            for pi in self.potential:
                copy.remove_pod(pi.uid)
            self._stripped = copy
        return self._stripped


class _RowStore:
    """Per snapshot row, its stripped entry (for one preemptor priority) and the values of
    :data:`_BLOCK_KEYS` of its potential victims in importance order, in one array
    ``values[key, row, slot]`` that grows its slots as needed; ``generations`` says which
    NodeInfo generation each row was made from (-1: not yet)."""

    __slots__ = ("snapshot", "tree_generation", "prio", "by_row", "generations", "counts", "values")

    def __init__(self, snapshot: Any, prio: int, n: int) -> None:
        self.snapshot = snapshot
        self.tree_generation = snapshot.tree_generation
        self.prio = prio
        self.by_row: list[_Stripped | None] = [None] * n
        self.generations = np.full(n, -1, dtype=np.int64)
        self.counts = np.zeros(n, dtype=np.int64)
        self.values = np.zeros((len(_BLOCK_KEYS), n, 4), dtype=np.int64)

    def set(self, row: int, entry: _Stripped, generation: int) -> None:
        block = entry.block()
        width = block.shape[1]
        if width > self.values.shape[2]:
            grown = np.zeros((len(_BLOCK_KEYS), len(self.by_row), max(width, 2 * self.values.shape[2])), dtype=np.int64)
            grown[:, :, : self.values.shape[2]] = self.values
            self.values = grown
        self.values[:, row, :width] = block
        self.values[:, row, width:] = 0
        self.by_row[row] = entry
        self.generations[row] = generation
        self.counts[row] = width


class _Reprieve:
    """One node's reprieve loop in the batched dry run: PDB-violating pods first, then the rest."""

    __slots__ = (
        "entry",
        "node",
        "order",
        "num_pdb_candidates",
        "sort_victims",
        "victims",
        "num_violating",
    )

    def __init__(self, entry: _Stripped) -> None:
        self.entry = entry
        self.node = entry.stripped
        self.order: list[PodInfo] = []
        self.num_pdb_candidates = 0
        self.sort_victims = False
        self.victims: list[PodInfo] = []
        self.num_violating = 0

    def start(self, violating: list[PodInfo], non_violating: list[PodInfo]) -> None:
        self.node = self.entry.stripped.clone()  # the reprieve adds pods back
        self.order = violating + non_violating
        self.num_pdb_candidates = len(violating)
        self.sort_victims = bool(violating and non_violating)


# --- pod helpers --------------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$"
)


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _parse_ns(ts: str | None) -> int | None:
    """An RFC 3339 timestamp as integer nanoseconds since the epoch (nanosecond precision)."""
    if not ts:
        return None
    return _parse_ns_cached(ts)


@functools.lru_cache(maxsize=16384)
def _parse_ns_cached(ts: str) -> int:
    if len(ts) >= 20 and ts[-1] == "Z" and ts[4] == "-" and ts[10] == "T" and ts[19] in ".Z":
        # the form the API server writes: 2024-01-02T03:04:05Z or with a fraction, in UTC
        frac = ts[20:-1]
        try:
            secs = _days_from_civil(int(ts[0:4]), int(ts[5:7]), int(ts[8:10])) * 86400 + int(ts[11:13]) * 3600 + int(ts[14:16]) * 60 + int(ts[17:19])
        except ValueError:
            secs = None
        if secs is not None and (not frac or (frac.isdigit() and frac.isascii())) and _RFC3339.match(ts):
            return secs * 1_000_000_000 + int(frac[:9].ljust(9, "0") or 0)
    m = _RFC3339.match(ts)
    if m is None:
        from datetime import datetime

        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1e9)
    import calendar

    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = (m.group(7) or "")[:9].ljust(9, "0")
    secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    tz = m.group(8)
    if tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        secs -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return secs * 1_000_000_000 + int(frac)


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    return pod.spec.priority or 0


def pod_start_ns(pod: Pod) -> int:
    """``util.GetPodStartTime`` in nanoseconds; a pod not started yet counts as "now"."""
    ns = _parse_ns(pod.status.start_time)
    return _NOW_NS if ns is None else ns


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """``util.MoreImportantPod``: higher priority first; at equal priority the older pod."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_ns(pod1) < pod_start_ns(pod2)


def _importance_key(p: Pod) -> tuple[int, int]:
    """A sort key ordering pods exactly as :func:`more_important_pod` does."""
    return -(p.spec.priority or 0), pod_start_ns(p)


def _sort_by_importance(
    items: list[Any], less: Callable[[Pod, Pod], bool], pod: Callable[[Any], Pod]
) -> None:
    if less is more_important_pod:
        # the same comparisons as the cmp below, on keys computed once per item
        items.sort(key=lambda item: _importance_key(pod(item)))
        return

    def cmp(a: Any, b: Any) -> int:
        if less(pod(a), pod(b)):
            return -1
        if less(pod(b), pod(a)):
            return 1
        return 0

    items.sort(key=functools.cmp_to_key(cmp))


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """``podTerminatingByPreemption``: deleting, with DisruptionTarget=True by the scheduler."""
    if not pod.metadata.deletion_timestamp:
        return False
    for c in pod.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return c.status == "True" and c.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def earliest_pod_start_ns(victims: Sequence[Pod]) -> int | None:
    """``util.GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    if not victims:
        return None
    max_prio = victims[0].spec.priority or 0
    earliest = _NOW_NS
    for p in victims:
        prio = p.spec.priority or 0
        ts = p.status.start_time
        ns = _parse_ns_cached(ts) if ts else _NOW_NS
        if prio == max_prio:
            if ns < earliest:
                earliest = ns
        elif prio > max_prio:
            max_prio = prio
            earliest = ns
    return earliest


def _selector_is_empty(pdb: PodDisruptionBudget) -> bool | None:
    """None: nil selector (matches nothing); True: empty (upstream skips it); False otherwise."""
    sel = pdb.spec.selector
    if sel is None:
        return None
    return not sel.match_labels and not sel.match_expressions


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[Any],
    pdbs: Sequence[PodDisruptionBudget],
    pod: Callable[[Any], Pod] = lambda pi: pi.pod,
) -> tuple[list[Any], list[Any]]:
    """``filterPodsWithPDBViolation``: a stable split into (violating, non-violating)."""
    allowed = [(pdb.status.disruptions_allowed if pdb.status is not None else 0) for pdb in pdbs]
    matchers: list[Callable[[Mapping[str, str]], bool] | None] = []
    for pdb in pdbs:
        empty = _selector_is_empty(pdb)
        if empty is None or empty:
            matchers.append(None)  # a nil or empty selector matches nothing
            continue
        try:
            matchers.append(compile_label_selector(pdb.spec.selector))
        except ValueError:
            matchers.append(None)  # an invalid selector matches nothing
    violating: list[Any] = []
    non_violating: list[Any] = []
    if not pdbs:
        return violating, list(pod_infos)
    for pi in pod_infos:
        p = pod(pi)
        violated = False
        labels = p.metadata.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != p.metadata.namespace:
                    continue
                match = matchers[i]
                if match is None or not match(labels):
                    continue
                disrupted = pdb.status.disrupted_pods if pdb.status is not None else {}
                if p.metadata.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def aggregate_message(errors: Iterable[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several as ``[a, b]``."""
    seen: list[str] = []
    for msg in errors:
        if msg not in seen:
            seen.append(msg)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def calculate_num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """``calculateNumCandidates``: ``clamp(max(N * pct / 100, abs), <= N)``."""
    n = num_nodes * percentage // 100
    if n < absolute:
        n = absolute
    if n > num_nodes:
        n = num_nodes
    return n


def _status_of(m: Mapping[str, Status], name: str) -> Status:
    """``NodeToStatusReader.Get``: a node absent from the map is UnschedulableAndUnresolvable."""
    st = m.get(name)
    if st is None:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    return st


# --- the Evaluator ------------------------------------------------------------------------------

IsEligiblePodFunc = Callable[["NodeInfo", "PodInfo", "Pod"], bool]


def _default_is_eligible_pod(node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
    """Upstream's default ``IsEligiblePod``: every lower-priority pod may be preempted."""
    return True

MoreImportantPodFunc = Callable[["Pod", "Pod"], bool]
ScoreFunc = Callable[[str], int]


class Evaluator:
    """``preemption.Evaluator`` with DefaultPreemption's ``Interface`` methods built in.

    ``handle`` is the profile's :class:`~kubesched.Framework`.  A custom preemption plugin may
    subclass this and override :meth:`select_victims_on_node`, :meth:`ordered_score_funcs`,
    :meth:`pod_eligible_to_preempt_others` or :meth:`get_offset_and_num_candidates`; or just
    replace :attr:`is_eligible_pod` / :attr:`more_important_pod` (upstream ``IsEligiblePod`` and
    ``MoreImportantPod``) and :attr:`offset_source` (``getOffsetRand``: ``n -> [0, n)``, by
    default the scheduler's seeded ``handle.rng``).
    """

    def __init__(
        self,
        plugin_name: str,
        handle: Any,
        *,
        min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
        min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
        enable_async_preemption: bool | Callable[[], bool] = False,
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute
        self._async = enable_async_preemption
        # uids of preemptors whose victims are being deleted in the background
        self.preempting: set[str] = set()
        # preemptor uid -> (namespace, name) of the last victim, while it is being deleted
        self.last_victims_pending_preemption: dict[str, tuple[str, str]] = {}
        self.is_eligible_pod: IsEligiblePodFunc = _default_is_eligible_pod
        # node name -> (snapshot NodeInfo, preemptor priority, lower-priority pods, the node
        # without them): the batched dry run's stripped nodes, valid while the node is unchanged
        self._stripped: dict[str, _Stripped] = {}
        # the share of nodes that passed the last column dry run's strip (sizes its first chunk)
        self._strip_pass_rate = 1.0
        # the column dry run's stripped entries and victim values per snapshot row (_row_store)
        self._rows_memo: _RowStore | None = None
        self.more_important_pod: MoreImportantPodFunc = more_important_pod
        self.offset_source: Callable[[int], int] | None = None

    # --- configuration ------------------------------------------------------------------
    @property
    def enable_async_preemption(self) -> bool:
        a = self._async
        return bool(a() if callable(a) else a)

    # --- Interface (DefaultPreemption's implementations) ---------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        return calculate_num_candidates(
            num_nodes, self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        )

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """``GetOffsetAndNumCandidates``: a random offset in [0, N) and the candidate count."""
        src = self.offset_source
        if src is not None:
            offset = src(num_nodes)
        else:
            rng = getattr(self.handle, "rng", None)
            offset = rng.randrange(num_nodes) if rng is not None else 0
        return offset, self.calculate_num_candidates(num_nodes)

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """``isPreemptionAllowed``: lower priority, and ``is_eligible_pod``."""
        return victim.priority < pod_priority(preemptor) and self.is_eligible_pod(
            node_info, victim, preemptor
        )

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """``PodEligibleToPreemptOthers`` (cases J1–J5)."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, MSG_NOT_ELIGIBLE_NEVER
        nom = pod.status.nominated_node_name
        if nom:
            if (
                nominated_node_status is not None
                and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            snapshot = getattr(self.handle, "snapshot", None)
            node_info = snapshot.get(nom) if snapshot is not None else None
            if node_info is not None:
                for pi in node_info.pods:
                    if self.is_preemption_allowed(
                        node_info, pi, pod
                    ) and pod_terminating_by_preemption(pi.pod):
                        return False, MSG_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def ordered_score_funcs(
        self, nodes_to_victims: Mapping[str, Candidate]
    ) -> list[ScoreFunc] | None:
        """``OrderedScoreFuncs``: None selects the default rules of :func:`pick_one_node_for_preemption`."""
        return None

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """``SelectVictimsOnNode``: the fewest, least important pods whose removal lets ``pod`` fit.

        ``state`` and ``node_info`` are copies and are changed.  Returns (victims in importance
        order, number of PDB-violating victims, status: None for Success).
        """
        fh = self.handle
        prio = pod_priority(pod)

        def remove(pi: PodInfo) -> Status | None:
            node_info.remove_pod(pi.uid)
            st = fh.run_pre_filter_extension_remove_pod(state, pod, pi, node_info)
            return None if st is None or st.is_success() else Status(Code.ERROR, st.message)

        def add(pi: PodInfo) -> Status | None:
            node_info.add_pod(pi)
            st = fh.run_pre_filter_extension_add_pod(state, pod, pi, node_info)
            return None if st is None or st.is_success() else Status(Code.ERROR, st.message)

        potential = [pi for pi in node_info.pods if self.is_preemption_allowed(node_info, pi, pod)]
        for pi in potential:
            err = remove(pi)
            if err is not None:
                return [], 0, err
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)
        st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info, prio)
        if st is not None and not st.is_success():
            return [], 0, st
        _sort_by_importance(potential, self.more_important_pod, lambda pi: pi.pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []

        def reprieve(pi: PodInfo) -> tuple[bool, Status | None]:
            err = add(pi)
            if err is not None:
                return False, err
            st = fh.run_filter_plugins_with_nominated_pods(state, pod, node_info, prio)
            fits = st is None or st.is_success()
            if not fits:
                err = remove(pi)
                if err is not None:
                    return False, err
                victims.append(pi)
            return fits, None

        num_violating = 0
        for pi in violating:
            fits, err = reprieve(pi)
            if err is not None:
                return [], 0, err
            if not fits:
                num_violating += 1
        for pi in non_violating:
            _, err = reprieve(pi)
            if err is not None:
                return [], 0, err
        if violating and non_violating:
            _sort_by_importance(victims, self.more_important_pod, lambda pi: pi.pod)
        return [pi.pod for pi in victims], num_violating, None

    # --- Preempt --------------------------------------------------------------------------
    async def preempt(
        self, state: CycleState, pod: Pod, m: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """``Evaluator.Preempt``: see the module docstring for the steps and the results.

        ``(None, Error)``: a transient error; ``(None, Unschedulable)``: keep the nomination;
        ``(PostFilterResult(""), Unschedulable)``: preemption cannot help (clear it);
        ``(PostFilterResult(node), Success)``: nominate ``node``.
        """
        fh = self.handle
        cluster = getattr(fh, "cluster", None)
        if cluster is not None:
            current = cluster.get_pod(pod.metadata.namespace, pod.metadata.name)
            if current is None:
                return None, Status(Code.ERROR, f'pod "{pod.metadata.name}" not found')
            pod = current
        nominated_status = _status_of(m, pod.status.nominated_node_name)
        ok, msg = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)
        all_nodes = list(fh.snapshot.node_infos)
        if not all_nodes:
            return None, Status(Code.ERROR, "no nodes available")
        candidates, statuses, errs = self.find_candidates(state, all_nodes, pod, m)
        if errs and not candidates:
            return None, Status(Code.ERROR, aggregate_message(errs))
        if not candidates:
            diagnosis = Diagnosis(
                node_to_status=dict(statuses),
                absent_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NOT_HELPFUL),
            )
            fit_error = FitError(pod.key, len(all_nodes), diagnosis)
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, str(fit_error))
        candidates, st = await self.call_extenders(pod, candidates)
        if st is not None and not st.is_success():
            return None, st
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, MSG_NO_CANDIDATE)
        if self.enable_async_preemption:
            self.prepare_candidate_async(best, pod)
        else:
            st = await self.prepare_candidate(best, pod)
            if st is not None and not st.is_success():
                return None, st
        return PostFilterResult(best.name, victims=list(best.victims)), Status(Code.SUCCESS)

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, m: Mapping[str, Status]
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        """``findCandidates``: the nodes whose status is exactly Unschedulable, dry-run."""
        rows = self._potential_rows(state, all_nodes, m)
        potential: Sequence[NodeInfo] = ()
        if rows is None:
            potential = [ni for ni in all_nodes if _status_of(m, ni.name).code == Code.UNSCHEDULABLE]
        count = len(potential) if rows is None else len(rows)
        if not count:
            return [], {}, []
        cluster = getattr(self.handle, "cluster", None)
        pdbs = cluster.list_pdbs() if cluster is not None else []
        offset, num = self.get_offset_and_num_candidates(count)
        if rows is not None:
            return self.dry_run_preemption_columns(state, pod, rows, pdbs, offset, num)
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num)

    def _potential_rows(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], m: Mapping[str, Status]
    ) -> np.ndarray | None:
        """The snapshot rows of the nodes whose status is exactly Unschedulable, in snapshot
        order, when the column dry run applies to them (``all_nodes`` is the whole snapshot);
        None otherwise."""
        snap: Any = getattr(self.handle, "snapshot", None)
        if snap is None or not self._can_use_columns(state):
            return None
        infos = snap.node_infos
        if len(all_nodes) != len(infos) or (infos and (all_nodes[0] is not infos[0] or all_nodes[-1] is not infos[-1])):
            return None
        rows_with_code = getattr(m, "rows_with_code", None)
        if rows_with_code is not None:
            rows: np.ndarray | None = rows_with_code(Code.UNSCHEDULABLE)
            if rows is not None:
                return rows
        names = snap.names
        return np.array(
            [i for i in range(len(names)) if _status_of(m, names[i]).code == Code.UNSCHEDULABLE], dtype=np.int64
        )

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """``DryRunPreemption``: (non-violating then violating candidates, node statuses, errors).

        Nodes are visited from ``offset`` round the list; each list holds at most
        ``num_candidates``; the search stops once there is a non-violating candidate and
        ``non_violating + violating >= num_candidates`` (G12–G15).

        When no AddPod/RemovePod extension runs in this cycle (the cycle state then stays as
        PreFilter left it) and :meth:`select_victims_on_node` is not overridden, the nodes go in
        batches (:meth:`dry_run_preemption_batched`); otherwise one by one
        (:meth:`dry_run_preemption_per_node`).  Both give the same candidates, statuses, errors
        and Filter calls.
        """
        if self._can_batch(state):
            return self.dry_run_preemption_batched(
                state, pod, potential_nodes, pdbs, offset, num_candidates
            )
        return self.dry_run_preemption_per_node(
            state, pod, potential_nodes, pdbs, offset, num_candidates
        )

    def _strip_cacheable(self) -> bool:
        """Whether which pods may be preempted depends only on their priority (the default
        ``is_preemption_allowed`` and ``is_eligible_pod``): a node's stripped copy can then be
        kept for the next preemptors of the same priority while the node is unchanged."""
        return (
            type(self).is_preemption_allowed is Evaluator.is_preemption_allowed
            and self.is_eligible_pod is _default_is_eligible_pod
        )

    def _can_use_columns(self, state: CycleState) -> bool:
        """The column dry run applies: no AddPod/RemovePod extension in the cycle, the default
        ``select_victims_on_node`` and priority-only eligibility, a snapshot with columns."""
        fh = self.handle
        return (
            self._can_batch(state)
            and self._strip_cacheable()
            and hasattr(fh, "run_filter_plugins_with_nominated_pods_rows")
            and hasattr(getattr(fh, "snapshot", None), "column_below")
        )

    def _can_batch(self, state: CycleState) -> bool:
        if type(self).select_victims_on_node is not Evaluator.select_victims_on_node:
            return False
        fh = self.handle
        has_extensions = getattr(fh, "has_pre_filter_extensions", None)
        if has_extensions is None or not hasattr(
            fh, "run_filter_plugins_with_nominated_pods_batch"
        ):
            return False
        return not has_extensions(state)

    def dry_run_preemption_per_node(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """The dry run one node at a time: :meth:`select_victims_on_node` on copies of each."""
        acc = _DryRun(num_candidates)
        n = len(potential_nodes)
        for i in range(n):
            node_copy = potential_nodes[(offset + i) % n].clone()
            state_copy = state.clone()
            victims, num_pdb, st = self.select_victims_on_node(state_copy, pod, node_copy, pdbs)
            if acc.offer(node_copy.name, victims, num_pdb, st):
                break
        return acc.result()

    def dry_run_preemption_batched(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """The dry run over batches of nodes (requires no AddPod/RemovePod extension to run).

        Rounds of two phases.  Strip: from ``offset``, chunks of nodes with every
        lower-priority pod removed go through one batch Filter each, until as many nodes pass
        as candidates are still missing (each node gives at most one candidate, so this never
        reaches past the node where :meth:`dry_run_preemption_per_node` stops).  Reprieve: the
        loop of ``SelectVictimsOnNode`` on every node that passed, in lockstep, one batch
        Filter per step.  The round's outcomes are then offered in visit order; if the stop
        condition is not met (no non-violating candidate yet, or a node had no victim), the
        next round goes on from there.  Same Filter calls per node as the per-node dry run.
        """
        acc = _DryRun(num_candidates)
        prio = pod_priority(pod)
        n = len(potential_nodes)
        visited = 0
        while visited < n:
            # strip phase
            outcomes: list[tuple[NodeInfo, Any]] = []
            passing = 0
            needed = max(num_candidates - acc.size(), 1)
            while passing < needed and visited < n:
                size = needed - passing
                chunk = [
                    potential_nodes[(offset + i) % n]
                    for i in range(visited, min(n, visited + size))
                ]
                visited += len(chunk)
                for ni, out in zip(
                    chunk, self._strip_nodes(state, pod, prio, chunk), strict=True
                ):
                    outcomes.append((ni, out))
                    passing += isinstance(out, _Reprieve)
            # reprieve phase
            self._reprieve(
                state, pod, prio, [out for _, out in outcomes if isinstance(out, _Reprieve)], pdbs
            )
            for ni, out in outcomes:
                if isinstance(out, _Reprieve):
                    victims = [pi.pod for pi in out.victims]
                    stop = acc.offer(ni.name, victims, out.num_violating, None)
                else:
                    stop = acc.offer(ni.name, [], 0, out)
                if stop:
                    return acc.result()
        return acc.result()

    def _strip_nodes(
        self, state: CycleState, pod: Pod, prio: int, nodes: Sequence[NodeInfo]
    ) -> list[Status | _Reprieve]:
        """Per node: the status that ends its ``SelectVictimsOnNode`` early (no lower-priority
        pod, or the pod does not fit even without them), or the reprieve loop still to run."""
        fh = self.handle
        out: list[Status | _Reprieve] = [Status(Code.SUCCESS)] * len(nodes)
        copies: list[NodeInfo] = []
        entries: list[_Stripped] = []
        at: list[int] = []
        snapshot: Any = getattr(fh, "snapshot", None)
        cache = self._stripped if self._strip_cacheable() and snapshot is not None else None
        for i, ni in enumerate(nodes):
            entry = cache.get(ni.name) if cache is not None else None
            if entry is None or entry.original is not ni or entry.prio != prio:
                copy = ni.clone()
                potential = [pi for pi in copy.pods if self.is_preemption_allowed(copy, pi, pod)]
                for pi in potential:
                    copy.remove_pod(pi.uid)
                entry = _Stripped(ni, prio, potential, copy)
                if cache is not None and snapshot.get(ni.name) is ni:
                    if len(cache) > 4 * max(len(snapshot), 1024):
                        cache.clear()
                    cache[ni.name] = entry
            if not entry.potential:
                out[i] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)
                continue
            copies.append(entry.stripped)
            entries.append(entry)
            at.append(i)
        if not copies:
            return out
        # the stripped nodes are never changed (the reprieve works on copies of them)
        sts = fh.run_filter_plugins_with_nominated_pods_batch(
            state, pod, copies, prio, frozen=cache is not None
        )
        for j, st in enumerate(sts):
            if st is not None and not st.is_success():
                out[at[j]] = st
            else:
                out[at[j]] = _Reprieve(entries[j])
        return out

    def _reprieve(
        self,
        state: CycleState,
        pod: Pod,
        prio: int,
        work: list[_Reprieve],
        pdbs: Sequence[PodDisruptionBudget],
    ) -> None:
        """``SelectVictimsOnNode``'s reprieve loop on every node of ``work``, in lockstep."""
        fh = self.handle
        default_order = self.more_important_pod is more_important_pod
        for w in work:
            potential = self._by_importance(w.entry, default_order)
            violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
            w.start(violating, non_violating)
        step = 0
        active = work
        while active:
            for w in active:
                w.node.add_pod(w.order[step])
            sts = fh.run_filter_plugins_with_nominated_pods_batch(
                state, pod, [w.node for w in active], prio
            )
            for w, st in zip(active, sts, strict=True):
                if st is not None and not st.is_success():
                    pi = w.order[step]
                    w.node.remove_pod(pi.uid)
                    w.victims.append(pi)
                    if step < w.num_pdb_candidates:
                        w.num_violating += 1
            step += 1
            active = [w for w in active if step < len(w.order)]
        for w in work:
            if w.sort_victims:
                _sort_by_importance(w.victims, self.more_important_pod, lambda pi: pi.pod)

    # --- the dry run on columns ------------------------------------------------------------
    def dry_run_preemption_columns(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        """The dry run over the snapshot's nodes ``rows`` (the potential nodes, in order), on
        columns: no node is copied unless a plugin reads the NodeInfos.

        Requires what :meth:`_can_use_columns` checks.  Strip: chunks of nodes, from ``offset``
        round ``rows``, with every lower-priority pod removed (the snapshot's
        :meth:`~kubesched._cache.Snapshot.column_below` subtracted from its columns) go through
        one two-pass batch Filter each, until as many nodes wait as candidates are missing.
        Reprieve: the loop of ``SelectVictimsOnNode`` on those nodes in lockstep, each step one
        batch Filter over the nodes with the pods reprieved so far and the next pod added back.
        The outcomes are then offered in visit order, as the per-node dry run would, until the
        stop condition; nodes filtered past the stopping node are discarded (upstream's parallel
        dry run also filters some nodes past it).  Same candidates, victims, statuses and errors
        as :meth:`dry_run_preemption_per_node`; the statuses (only read when there is no
        candidate) become a dict on first use.
        """
        fh = self.handle
        snap = fh.snapshot
        names = snap.names
        prio = pod_priority(pod)
        n = len(rows)
        if n == 0:
            return [], {}, []
        # the candidates found, per list: (round, nodes in the round, their rows, their numbers
        # of PDB-violating victims, their default-rule scores)
        nonv_parts: list[_Part] = []
        viol_parts: list[_Part] = []
        rounds: list[_RoundVictims] = []
        n_nonv = n_viol = 0
        order = np.concatenate((rows[offset:], rows[:offset])) if offset else rows
        order_l: list[int] = order.tolist()
        below_pods = snap.column_below("requested", PODS, prio)
        no_victims = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MSG_NO_VICTIMS)
        # the nodes whose dry run ended with a status, as arrays: positions in visit order and
        # the index of each one's status in ``fail_sts``
        fail_pos: list[np.ndarray] = []
        fail_which: list[np.ndarray] = []
        fail_sts: list[Status] = [no_victims]
        passing: list[int] = []  # positions that passed the strip, not reprieved yet
        evaluated = passed = 0
        stop_at = n
        while True:
            missing = max(num_candidates - n_nonv - n_viol, 1)
            while len(passing) < missing and evaluated < n:
                # enough nodes to find the missing ones at the pass rate seen so far (the last
                # dry run's at first): nodes filtered past the stopping node cost only Filter
                rate = passed / evaluated if evaluated else self._strip_pass_rate
                need = missing - len(passing)
                chunk = max(need, int(need / max(rate, 1 / 16) * 1.25) + 1)
                seg = order[evaluated : evaluated + chunk]
                at = np.arange(evaluated, evaluated + len(seg))
                evaluated += len(seg)
                has = below_pods[seg] > 0
                if not has.all():
                    none = at[~has]
                    fail_pos.append(none)
                    fail_which.append(np.zeros(len(none), dtype=np.int64))
                cand = has.nonzero()[0]
                if len(cand):
                    r = seg[cand]
                    out = fh.run_filter_plugins_with_nominated_pods_rows(
                        state, pod, r, prio, base=self._strip_overlay(snap, r, prio)
                    )
                    ok = np.ones(len(cand), dtype=bool)
                    if out:
                        rej = Rejections.of(out)
                        ok[rej.positions] = False
                        fail_pos.append(at[cand[rej.positions]])
                        fail_which.append(rej.which + len(fail_sts))
                        fail_sts.extend(rej.statuses)
                    new = at[cand[ok]].tolist()
                    passed += len(new)
                    passing.extend(new)
            if not passing:
                break
            group = passing[:missing]
            del passing[:missing]
            group_rows = order[group]
            round_, nvict, nviol, scores = self._reprieve_columns(state, pod, prio, group_rows, pdbs)
            # _CandidateList.add and the stop condition of _DryRun.offer, over the group at once:
            # each list keeps at most num_candidates; a node with victims ends the search once
            # there is a non-violating candidate and the two lists hold num_candidates
            hv = nvict > 0
            nonv = hv & (nviol == 0)
            viol = hv & ~nonv
            c_nonv = n_nonv + np.cumsum(nonv)
            c_viol = n_viol + np.cumsum(viol)
            stop = hv & (c_nonv > 0) & (
                np.minimum(c_nonv, num_candidates) + np.minimum(c_viol, num_candidates) >= num_candidates
            )
            hit = stop.nonzero()[0]
            end = int(hit[0]) + 1 if len(hit) else len(group)
            ri = len(rounds)
            rounds.append(round_)
            for mask, parts, have in ((nonv, nonv_parts, n_nonv), (viol, viol_parts, n_viol)):
                local = mask[:end].nonzero()[0][: max(num_candidates - have, 0)]
                if len(local):
                    parts.append((ri, local, group_rows[local], nviol[local], None if scores is None else scores[:, local]))
            n_nonv = min(int(c_nonv[end - 1]), num_candidates)
            n_viol = min(int(c_viol[end - 1]), num_candidates)
            # no victims cannot happen for a node that failed Filter as it is; kept for parity
            for j in (~hv[:end]).nonzero()[0].tolist():
                p = group[j]
                msg = f'expected at least one victim pod on node "{names[order_l[p]]}"'
                fail_pos.append(np.array([p], dtype=np.int64))
                fail_which.append(np.array([len(fail_sts)], dtype=np.int64))
                fail_sts.append(Status(Code.ERROR, msg))
            if len(hit):
                stop_at = group[end - 1] + 1
                break
        self._strip_pass_rate = passed / evaluated if evaluated else 1.0
        # the statuses of the nodes before the stopping node, in visit order
        statuses: Mapping[str, Status] = {}
        errs: list[str] = []
        if fail_pos:
            positions = np.concatenate(fail_pos)
            which = np.concatenate(fail_which)
            if stop_at < n:
                before = positions < stop_at
                positions, which = positions[before], which[before]
            by_pos = np.argsort(positions, kind="stable")
            positions, which = positions[by_pos], which[by_pos]
            nodes = order[positions]
            statuses = _NodeStatuses(names, nodes, which, fail_sts)
            if any(fail_sts[j].code == Code.ERROR for j in set(which.tolist())):
                errs = [st.message for st in statuses.values() if st.code == Code.ERROR]
        parts = nonv_parts + viol_parts
        if not parts:
            return [], statuses, errs
        cand_rows = np.concatenate([part[2] for part in parts])
        candidates = CandidateList(
            [names[i] for i in cand_rows.tolist()],
            rounds,
            np.concatenate([np.full(len(part[1]), part[0], dtype=np.int64) for part in parts]),
            np.concatenate([part[1] for part in parts]),
            np.concatenate([part[3] for part in parts]),
            None if any(part[4] is None for part in parts) else np.concatenate([part[4] for part in parts], axis=1),  # type: ignore[misc]
        )
        return candidates, statuses, errs

    def _row_store(
        self, snap: Any, rows: np.ndarray, prio: int
    ) -> tuple[list[_Stripped], np.ndarray, np.ndarray] | None:
        """The stripped entries of the snapshot's ``rows`` (``by_importance`` made), their
        numbers of potential victims, and the values of :data:`_BLOCK_KEYS` of those pods in
        importance order (``(len(_BLOCK_KEYS), len(rows), most victims)``, zero past a row's
        count).  Kept per row while the row's NodeInfo generation is the same (one array
        comparison finds the stale rows); None if the snapshot has no generations."""
        generations = getattr(snap, "generations", None)
        n = len(snap.node_infos)
        if generations is None or len(generations) != n:
            return None
        memo = self._rows_memo
        if memo is None or memo.snapshot is not snap or memo.tree_generation != snap.tree_generation or memo.prio != prio or len(memo.by_row) != n:
            memo = self._rows_memo = _RowStore(snap, prio, n)
        stale = (memo.generations[rows] != generations[rows]).nonzero()[0]
        for i in stale.tolist():
            r = int(rows[i])
            entry = self._strip_entry(snap.node_infos[r], prio)
            self._by_importance(entry, True)  # only called with the default order
            memo.set(r, entry, int(generations[r]))
        by_row = memo.by_row
        entries: list[_Stripped] = [by_row[r] for r in rows.tolist()]  # type: ignore[misc]
        counts = memo.counts[rows]
        width = int(counts.max()) if len(counts) else 0
        return entries, counts, memo.values.take(rows, axis=1)[:, :, :width]

    def _by_importance(self, entry: _Stripped, default_order: bool) -> list[PodInfo]:
        """The entry's potential victims, most important first (kept on the entry for the
        default order)."""
        potential = entry.by_importance if default_order else None
        if potential is None:
            potential = list(entry.potential)
            _sort_by_importance(potential, self.more_important_pod, lambda pi: pi.pod)
            if default_order:
                entry.by_importance = potential
        return potential

    def _strip_entry(self, ni: NodeInfo, prio: int) -> _Stripped:
        """The node's lower-priority pods (cached while the node is unchanged)."""
        cache = self._stripped
        entry = cache.get(ni.name)
        if entry is None or entry.original is not ni or entry.prio != prio:
            entry = _Stripped(ni, prio, [pi for pi in ni.pods if pi.priority < prio])
            snapshot: Any = getattr(self.handle, "snapshot", None)
            if snapshot is not None and snapshot.get(ni.name) is ni:
                if len(cache) > 4 * max(len(snapshot), 1024):
                    cache.clear()
                cache[ni.name] = entry
        return entry

    def _strip_overlay(self, snap: Any, rows: np.ndarray, prio: int) -> RowOverlay:
        """The nodes ``rows`` without their lower-priority pods."""

        def column(kind: str, resource: str) -> np.ndarray:
            col: np.ndarray = snap.column_stripped(kind, resource, prio)[rows]
            return col

        def columns(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            cols: np.ndarray = snap.columns_stripped(kind, resources, prio).take(rows, axis=1)
            return cols

        def make(i: int) -> NodeInfo:
            return self._strip_entry(snap.node_infos[int(rows[i])], prio).stripped

        return RowOverlay(column, make, columns=columns)

    def _reprieve_columns(
        self,
        state: CycleState,
        pod: Pod,
        prio: int,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[_RoundVictims, np.ndarray, np.ndarray, np.ndarray | None]:
        """``SelectVictimsOnNode``'s reprieve loop on the stripped nodes ``rows`` in lockstep:
        the round (each node's victims, made when read) and per node its number of victims, of
        PDB-violating victims, and the default rules' scores (one row per rule; None when the
        pod order is not the default one).

        Node ``w``'s pods in reprieve order are slots ``0..counts[w]-1`` of row ``w`` of
        ``(nodes, most victims)`` arrays; step ``s`` adds back slot ``s`` of every node that
        has one, over the pods kept so far."""
        fh = self.handle
        snap = fh.snapshot
        default_order = self.more_important_pod is more_important_pod
        entries: list[_Stripped] = []
        orders: list[list[PodInfo]] = []
        reordered: list[bool] = []  # the order is not the entry's by_importance
        num_pdb: list[int] = []
        block: np.ndarray | None = None  # the _BLOCK_KEYS values, (keys, nodes, slots)
        fast = self._row_store(snap, rows, prio) if default_order and not pdbs else None
        if fast is not None:
            entries, counts, block = fast
            orders = [e.by_importance for e in entries]  # type: ignore[misc]
            reordered = [False] * len(entries)
            num_pdb = [0] * len(entries)
        else:
            infos = snap.node_infos
            for r in rows.tolist():
                entry = self._strip_entry(infos[r], prio)
                potential = self._by_importance(entry, default_order)
                if pdbs:
                    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
                    order = violating + non_violating
                    num_pdb.append(len(violating))
                    reordered.append(not default_order or bool(violating and non_violating))
                else:
                    order = potential
                    num_pdb.append(0)
                    reordered.append(not default_order)
                entries.append(entry)
                orders.append(order)
            counts = np.fromiter((len(o) for o in orders), np.int64, len(orders))
        k = len(orders)
        width = int(counts.max()) if k else 0
        slot = np.arange(width)
        kept = np.zeros((k, width), dtype=bool)

        # per (kind, resource): each pod's value, (nodes, slots)
        values: dict[tuple[str, str], np.ndarray] = {}

        def slot_values(kind: str, resource: str) -> np.ndarray:
            key = (kind, resource)
            v = values.get(key)
            if v is None:
                at = _BLOCK_KEYS.get(key)
                if block is not None and at is not None:
                    v = block[at]
                else:
                    v = np.zeros((k, width), dtype=np.int64)
                    for w, (entry, order, re_) in enumerate(zip(entries, orders, reordered, strict=True)):
                        if re_:
                            v[w, : len(order)] = _values_of(order, kind, resource)
                            continue
                        ev = entry.values.get(key)
                        if ev is None:
                            ev = entry.values[key] = _values_of(order, kind, resource)
                        v[w, : len(order)] = ev
                values[key] = v
            return v

        values2: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

        def slot_values2(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            key = (kind, resources)
            v = values2.get(key)
            if v is None:
                if block is not None and all((kind, r) in _BLOCK_KEYS for r in resources):
                    v = block.take([_BLOCK_KEYS[kind, r] for r in resources], axis=0)
                else:
                    v = np.stack([slot_values(kind, r) for r in resources])
                values2[key] = v
            return v

        # per column asked for: each node's value with the pods kept so far (stripped + kept),
        # brought up to date after each step; ``current2`` several columns, one row each
        now: dict[tuple[str, str], np.ndarray] = {}
        now2: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

        def current(kind: str, resource: str) -> np.ndarray:
            key = (kind, resource)
            col = now.get(key)
            if col is None:
                back = np.where(kept, slot_values(kind, resource), 0).sum(axis=-1)
                col = now[key] = snap.column_stripped(kind, resource, prio)[rows] + back
            return col

        def current2(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            key = (kind, resources)
            cols = now2.get(key)
            if cols is None:
                back = np.where(kept, slot_values2(kind, resources), 0).sum(axis=-1)
                cols = now2[key] = snap.columns_stripped(kind, resources, prio).take(rows, axis=1) + back
            return cols

        active = (counts > 0).nonzero()[0]
        step = 0
        while len(active):
            base = self._reprieve_overlay(
                active, step, kept, orders, entries, slot_values, current, slot_values2, current2
            )
            out = fh.run_filter_plugins_with_nominated_pods_rows(state, pod, rows[active], prio, base=base)
            if out:
                ok = np.ones(len(active), dtype=bool)
                ok[Rejections.of(out).positions] = False
                reprieved = active[ok]
            else:
                reprieved = active
            kept[reprieved, step] = True
            for key, col in now.items():
                col[reprieved] += slot_values(*key)[reprieved, step]
            for key2, cols in now2.items():
                cols[:, reprieved] = cols.take(reprieved, axis=1) + slot_values2(*key2)[:, :, step].take(reprieved, axis=1)
            step += 1
            active = active[counts[active] > step]
        victim = ~kept & (slot < counts[:, None])
        nvict = victim.sum(axis=1)
        if any(num_pdb):
            nviol = (victim & (slot < np.array(num_pdb, dtype=np.int64)[:, None])).sum(axis=1)
        else:
            nviol = np.zeros(k, dtype=np.int64)
        scores = None
        if default_order:
            scores = self._default_scores(victim, nvict, nviol, slot_values("priority", ""), slot_values("start", ""))
        return _RoundVictims(orders, kept, num_pdb, self.more_important_pod), nvict, nviol, scores

    @staticmethod
    def _default_scores(
        victim: np.ndarray, number: np.ndarray, violations: np.ndarray, prio: np.ndarray, start: np.ndarray
    ) -> np.ndarray:
        """Per node (a row of ``victim``, its victims' slots), the default rules' scores, one
        row per rule, higher is better: minus the PDB violations, minus the highest victim
        priority (``victims[0]``'s in importance order), minus the sum of (priority + 2^31),
        minus the count, the earliest start among the highest-priority ones."""
        highest = np.where(victim, prio, MIN_INT64).max(axis=1)
        top = victim & (prio == highest[:, None])
        earliest = np.where(top, start, _NOW_NS).min(axis=1)
        total = np.where(victim, prio + (MAX_INT32 + 1), 0).sum(axis=1)
        return np.stack((-violations, -highest, -total, -number, earliest))

    @staticmethod
    def _reprieve_overlay(
        active: np.ndarray,
        step: int,
        kept: np.ndarray,
        orders: list[list[PodInfo]],
        entries: list[_Stripped],
        slot_values: Callable[[str, str], np.ndarray],
        current: Callable[[str, str], np.ndarray],
        slot_values2: Callable[[str, tuple[str, ...]], np.ndarray],
        current2: Callable[[str, tuple[str, ...]], np.ndarray],
    ) -> RowOverlay:
        """One reprieve step: the stripped nodes ``rows[active]`` with the pods kept so far and
        their pod in slot ``step`` added back (in the reprieve order, as the per-node loop adds
        them).  ``current(kind, resource)`` is each node's column with the pods kept so far
        (``current2`` several of them, one row each)."""
        kept = kept[active, :step]  # a copy: later steps change ``kept``

        def column(kind: str, resource: str) -> np.ndarray:
            col: np.ndarray = current(kind, resource)[active] + slot_values(kind, resource)[active, step]
            return col

        def columns(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            cols: np.ndarray = current2(kind, resources).take(active, axis=1) + slot_values2(kind, resources)[:, :, step].take(active, axis=1)
            return cols

        def make(i: int) -> NodeInfo:
            w = int(active[i])
            info = entries[w].stripped.clone()
            order = orders[w]
            for j, k in enumerate(kept[i].tolist()):
                if k:
                    info.add_pod(order[j])
            info.add_pod(order[step])
            return info

        return RowOverlay(column, make, columns=columns)

    async def call_extenders(
        self, pod: Pod, candidates: Sequence[Candidate]
    ) -> tuple[Sequence[Candidate], Status | None]:
        """``callExtenders``: let preemption-capable extenders narrow the candidates.

        An extender is any object with ``supports_preemption()``, ``is_interested(pod)``,
        ``is_ignorable()``, ``name`` and ``process_preemption(pod, {node: Candidate}, snapshot)``
        returning ``{node: Candidate}`` or an awaitable of it (an HTTP extender's call).
        """
        scheduler = getattr(self.handle, "scheduler", None)
        extenders = list(getattr(scheduler, "extenders", ()) or ())
        if not extenders:
            return candidates, None
        victims_map = {c.name: c for c in candidates}
        if not victims_map:
            return candidates, None
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                answer = ext.process_preemption(pod, victims_map, self.handle.snapshot)
                if inspect.isawaitable(answer):
                    answer = await answer
                result = dict(answer)
            except Exception as err:
                if ext.is_ignorable():
                    log.info(
                        "skipped extender %s as it returned error and has ignorable flag set: %s",
                        getattr(ext, "name", ext),
                        err,
                    )
                    continue
                return [], Status(Code.ERROR, str(err), error=err)
            for node, c in list(result.items()):
                if c is None or not c.victims:
                    if ext.is_ignorable():
                        del result[node]
                        continue
                    return [], Status(
                        Code.ERROR, f'expected at least one victim pod on node "{node}"'
                    )
            victims_map = result
            if not victims_map:
                break
        return [
            Candidate(name, c.victims, c.num_pdb_violations) for name, c in victims_map.items()
        ], None

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """``SelectCandidate``: the one candidate, or the pick of the ordered score functions."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        if (
            isinstance(candidates, CandidateList)
            and candidates.has_default_scores
            and getattr(self.ordered_score_funcs, "__func__", None) is Evaluator.ordered_score_funcs
        ):
            return candidates.candidate(candidates.best_by_default_rules())
        victims_map = {c.name: c for c in candidates}
        funcs = self.ordered_score_funcs(victims_map)
        if not funcs and len(victims_map) == len(candidates):
            return _pick_by_default_rules(candidates)
        node = pick_one_node_for_preemption(victims_map, funcs)
        return victims_map.get(node) or candidates[0]

    # --- executing a preemption -------------------------------------------------------------
    def _metrics(self) -> Any:
        return getattr(getattr(self.handle, "scheduler", None), "metrics", None)

    def _observe_victims(self, c: Candidate) -> None:
        metrics = self._metrics()
        if metrics is not None:
            metrics.preemptions += 1
            metrics.preemption_victims.append(len(c.victims))

    async def preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod) -> None:
        """``PreemptPod``: reject a waiting victim, else DisruptionTarget + delete; then the event.

        Raises the transport's error (NotFound counts as done).
        """
        fh = self.handle
        wp = fh.get_waiting_pod(victim.metadata.uid) if hasattr(fh, "get_waiting_pod") else None
        if wp is not None:
            wp.reject(self.plugin_name, "preempted")
        else:
            client = fh.client
            condition = PodCondition(
                type=DISRUPTION_TARGET,
                status="True",
                reason=REASON_PREEMPTION_BY_SCHEDULER,
                message=f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod",
            )
            if _condition_changes(victim, condition):
                try:
                    await client.patch_pod_status(
                        victim.metadata.namespace, victim.metadata.name, condition=condition
                    )
                except NotFoundError:
                    return
            try:
                await client.delete_pod(
                    victim.metadata.namespace, victim.metadata.name, uid=victim.metadata.uid
                )
            except NotFoundError:
                return
        scheduler = getattr(fh, "scheduler", None)
        if scheduler is not None:
            await scheduler.record_event(
                victim,
                "Normal",
                "Preempted",
                "Preempting",
                f"Preempted by pod {preemptor.metadata.uid} on node {c.name}",
            )

    async def _preempt_all(
        self, c: Candidate, preemptor: Pod, victims: Sequence[Pod]
    ) -> BaseException | None:
        """Preempt ``victims``; the first error stops the rest and is returned.

        Upstream deletes them concurrently.  A live scheduler does too; a deterministic one (a
        simulation) preempts them one after another in victim order, which is what its driver's
        turns would make of concurrent tasks, so that the victims' API writes and ``Preempted``
        events come out in the same order on every event loop.  So does one whose transport
        completes every write within the call (the fake cluster without injected delays):
        there, tasks would only add their own cost.
        """
        driver = getattr(getattr(self.handle, "scheduler", None), "driver", None)
        instant = getattr(getattr(self.handle, "client", None), "instant_writes", False)
        if instant or (driver is not None and driver.deterministic):
            for v in victims:
                try:
                    await self.preempt_pod(c, preemptor, v)
                except Exception as err:  # transport failures and plugin bugs alike
                    return err
            return None
        errors: list[BaseException] = []

        async with anyio.create_task_group() as tg:

            async def one(v: Pod) -> None:
                try:
                    await self.preempt_pod(c, preemptor, v)
                except Exception as err:  # transport failures and plugin bugs alike
                    if not errors:
                        errors.append(err)
                    tg.cancel_scope.cancel()

            for v in victims:
                tg.start_soon(one, v)
        return errors[0] if errors else None

    def lower_priority_nominated_pods(self, pod: Pod, node_name: str) -> list[Pod]:
        """``getLowerPriorityNominatedPods``."""
        nominator = getattr(self.handle, "nominator", None)
        if nominator is None:
            return []
        prio = pod_priority(pod)
        return [pi.pod for pi in nominator.for_node(node_name) if pi.priority < prio]

    async def clear_nominated_node_name(self, pods: Sequence[Pod]) -> list[BaseException]:
        """``clearNominatedNodeName``: drop each pod's nomination (nominator and status)."""
        errs: list[BaseException] = []
        nominator = getattr(self.handle, "nominator", None)
        for p in pods:
            if nominator is not None:
                nominator.delete(p.metadata.uid)
            if not p.status.nominated_node_name:
                continue
            try:
                await self.handle.client.patch_pod_status(
                    p.metadata.namespace, p.metadata.name, nominated_node_name=""
                )
            except Exception as err:
                errs.append(err)
        return errs

    async def prepare_candidate(self, c: Candidate, pod: Pod) -> Status | None:
        """``prepareCandidate``: delete the victims now, then clear lower nominations."""
        victims = [v for v in c.victims if not v.metadata.deletion_timestamp]
        err = await self._preempt_all(c, pod, victims)
        if err is not None:
            return Status(Code.ERROR, str(err), error=err)
        self._observe_victims(c)
        errs = await self.clear_nominated_node_name(self.lower_priority_nominated_pods(pod, c.name))
        for e in errs:
            log.warning("cannot clear 'NominatedNodeName' field: %s", e)
        return None

    def prepare_candidate_async(self, c: Candidate, pod: Pod) -> None:
        """``prepareCandidateAsync`` (seed 000): mark the pod ``preempting`` and work in the
        background: clear lower-priority nominations to the node first, then, if some victim
        is not already terminating, delete N-1 victims, leave ``preempting``, delete the last."""
        self._observe_victims(c)
        victims = [v for v in c.victims if not v.metadata.deletion_timestamp]
        self.preempting.add(pod.metadata.uid)
        self.handle.spawn(self._preempt_in_background, c, pod, victims)

    async def _preempt_in_background(self, c: Candidate, pod: Pod, victims: list[Pod]) -> None:
        uid = pod.metadata.uid
        failed = False
        try:
            errs = await self.clear_nominated_node_name(
                self.lower_priority_nominated_pods(pod, c.name)
            )
            if errs:
                log.warning(
                    "cannot clear 'NominatedNodeName' field from lower priority pods on node %s: %s",
                    c.name,
                    errs[0],
                )
                failed = True
            if not victims:  # every victim is terminating already: nothing to delete
                return
            preempt_last = True
            if len(victims) > 1:
                err = await self._preempt_all(c, pod, victims[:-1])
                if err is not None:
                    log.warning("error occurred during async preemption: %s", err)
                    failed = True
                    preempt_last = False
            if preempt_last:
                last = victims[-1]
                self.last_victims_pending_preemption[uid] = (
                    last.metadata.namespace,
                    last.metadata.name,
                )
                try:
                    await self.preempt_pod(c, pod, last)
                except Exception as err:
                    log.warning(
                        "error occurred during async preemption of the last victim: %s", err
                    )
                    failed = True
        finally:
            self.preempting.discard(uid)
            self.last_victims_pending_preemption.pop(uid, None)
            if failed:
                # the pod may be stuck in unschedulablePods: move it to activeQ
                self.handle.activate([pod])

    def is_pod_running_preemption(self, uid: str) -> bool:
        """``IsPodRunningPreemption``: in ``preempting`` and its last victim not yet going."""
        if uid not in self.preempting:
            return False
        pending = self.last_victims_pending_preemption.get(uid)
        if pending is None:
            return True
        cluster = getattr(self.handle, "cluster", None)
        victim = cluster.get_pod(*pending) if cluster is not None else None
        return not (victim is None or victim.metadata.deletion_timestamp)


def _condition_changes(pod: Pod, cond: PodCondition) -> bool:
    """``UpdatePodCondition`` would change the status (a new condition or a different one)."""
    for c in pod.status.conditions:
        if c.type == cond.type:
            return (c.status, c.reason, c.message) != (cond.status, cond.reason, cond.message)
    return True


def _earliest_start_of(c: Candidate) -> int:
    """``latest_start_time``'s score: the earliest start among the highest-priority victims."""
    earliest = earliest_pod_start_ns(c.victims)
    return MIN_INT64 if earliest is None else earliest


# the default rules of pick_one_node_for_preemption, as scores of a candidate (higher wins)
_DEFAULT_RULES: tuple[Callable[[Candidate], int], ...] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -(c.victims[0].spec.priority or 0),
    lambda c: -sum((v.spec.priority or 0) + MAX_INT32 + 1 for v in c.victims),
    lambda c: -len(c.victims),
    _earliest_start_of,
)


def _pick_by_default_rules(candidates: Sequence[Candidate]) -> Candidate:
    """:func:`pick_one_node_for_preemption` with the default rules, on the candidates (distinct
    nodes) themselves: each rule keeps the best-scoring ones, the first of the rest wins."""
    remaining = list(candidates)
    for rule in _DEFAULT_RULES:
        scores = [rule(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, score in zip(remaining, scores, strict=True) if score == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Candidate], score_funcs: Sequence[ScoreFunc] | None = None
) -> str:
    """``pickOneNodeForPreemption``: apply the score functions in turn, keeping the top nodes.

    Default order: fewest PDB violations; lowest highest-priority victim; smallest sum of
    (priority + 2^31); fewest victims; latest earliest-start among the highest-priority victims;
    then the first remaining node (in candidate order).
    """
    if not nodes_to_victims:
        return ""
    all_candidates = list(nodes_to_victims)
    if not score_funcs:

        def min_pdb(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].victims[0])

        def min_sum_priorities(node: str) -> int:
            return -sum(pod_priority(p) + MAX_INT32 + 1 for p in nodes_to_victims[node].victims)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].victims)

        def latest_start_time(node: str) -> int:
            earliest = earliest_pod_start_ns(nodes_to_victims[node].victims)
            return MIN_INT64 if earliest is None else earliest

        score_funcs = [
            min_pdb,
            min_highest_priority,
            min_sum_priorities,
            min_num_pods,
            latest_start_time,
        ]
    for f in score_funcs:
        selected: list[str] = []
        max_score = MIN_INT64
        for node in all_candidates:
            score = f(node)
            if score > max_score:
                max_score = score
                selected = []
            if score == max_score:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        all_candidates = selected
    return all_candidates[0]


__all__ = [
    "Candidate",
    "Evaluator",
    "MSG_WAITING_FOR_PREEMPTION",
    "aggregate_message",
    "calculate_num_candidates",
    "earliest_pod_start_ns",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "pod_terminating_by_preemption",
]
