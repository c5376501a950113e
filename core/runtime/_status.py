"""Plugin outcomes: :class:`Code`, :class:`Status`, and the scheduling-cycle :class:`FitError`."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterator, Mapping

import numpy as np

from kubesched._errors import KubeschedError


class Code(enum.IntEnum):
    """``framework.Code``, in upstream's order."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _CODE_NAMES[self]


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """The result of one plugin at one extension point: a code, reasons, and the plugin's name.

    ``None`` stands for Success wherever a Status is expected.  The runtime stamps the plugin
    name (:attr:`plugin`) on every status a plugin returns.
    """

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        plugin: str = "",
        error: BaseException | None = None,
    ) -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin
        self.error = error

    # constructors -----------------------------------------------------------------------
    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def as_error(cls, err: BaseException | str) -> Status:
        if isinstance(err, BaseException):
            return cls(Code.ERROR, str(err), error=err)
        return cls(Code.ERROR, err)

    @classmethod
    def skip(cls) -> Status:
        """A Skip: the most frequent status of a cycle, so one shared object (:data:`SKIP`),
        which keeps no plugin name the runtime stamps on it (a Skip is never reported by it)."""
        if cls is Status:
            return SKIP
        st = cls.__new__(cls)
        st.code, st.reasons, st.plugin, st.error = Code.SKIP, (), "", None
        return st

    @classmethod
    def wait(cls, *reasons: str) -> Status:
        return cls(Code.WAIT, *reasons)

    # predicates -------------------------------------------------------------------------
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (``IsRejected``)."""
        return self.code in (
            Code.UNSCHEDULABLE,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            Code.PENDING,
        )

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    @property
    def message(self) -> str:
        """The reasons joined with ", " (``Status.Message``)."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.code == Code.SUCCESS
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        plugin = f" plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.label}{plugin} {list(self.reasons)!r})"


class _SharedSkip(Status):
    """The class of :data:`SKIP`: a plugin name stamped on it is not kept (it is shared)."""

    __slots__ = ()

    @property  # type: ignore[override]
    def plugin(self) -> str:
        return ""

    @plugin.setter
    def plugin(self, value: str) -> None:
        pass


SKIP: Status = _SharedSkip.__new__(_SharedSkip)
SKIP.code, SKIP.reasons, SKIP.error = Code.SKIP, (), None


def code_of(status: Status | None) -> Code:
    """The code of a possibly-None status."""
    return Code.SUCCESS if status is None else status.code


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


class Rejections(Mapping[int, Status]):
    """A batch Filter result as arrays: ``{positions[i]: statuses[which[i]]}``.

    What a batch Filter hook may return instead of a dict when it rejects many nodes with a few
    distinct statuses (NodeResourcesFit does): the framework then keeps the rejected positions
    as arrays end to end, with no per-node Python.  As a Mapping it reads like the dict it
    stands for (made on first lookup).
    """

    __slots__ = ("positions", "which", "statuses", "_dict")

    def __init__(self, positions: np.ndarray, which: np.ndarray, statuses: list[Status]) -> None:
        self.positions = positions  # int64 positions in the batch, distinct
        self.which = which  # int64 index into ``statuses`` per position
        self.statuses = statuses
        self._dict: dict[int, Status] | None = None

    @classmethod
    def of(cls, rejected: Mapping[int, Status]) -> Rejections:
        """The arrays of a {position: status} mapping."""
        if isinstance(rejected, Rejections):
            return rejected
        sts = list(rejected.values())
        index: dict[int, int] = {}
        distinct: list[Status] = []
        which = np.empty(len(sts), dtype=np.int64)
        for i, st in enumerate(sts):
            j = index.get(id(st))
            if j is None:
                j = index[id(st)] = len(distinct)
                distinct.append(st)
            which[i] = j
        return cls(np.fromiter(rejected.keys(), np.int64, len(sts)), which, distinct)

    def status_list(self) -> list[Status]:
        """The status of each of ``positions``, in order."""
        statuses = self.statuses
        if len(statuses) == 1:
            return statuses * len(self.positions)
        return [statuses[j] for j in self.which.tolist()]

    def as_dict(self) -> dict[int, Status]:
        if self._dict is None:
            self._dict = dict(zip(self.positions.tolist(), self.status_list(), strict=True))
        return self._dict

    def __getitem__(self, key: int) -> Status:
        return self.as_dict()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self.positions.tolist())

    def __len__(self) -> int:
        return len(self.positions)

    def __bool__(self) -> bool:
        return len(self.positions) > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.as_dict() == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Rejections({self.as_dict()!r})"


def merge_rejections(parts: list[tuple[np.ndarray | None, Mapping[int, Status]]]) -> Rejections:
    """Several results as one: each ``(map, result)`` has its positions mapped through ``map``
    (None: kept as they are)."""
    positions: list[np.ndarray] = []
    which: list[np.ndarray] = []
    statuses: list[Status] = []
    for mapping, result in parts:
        r = Rejections.of(result)
        if not len(r):
            continue
        positions.append(r.positions if mapping is None else mapping[r.positions])
        which.append(r.which + len(statuses))
        statuses.extend(r.statuses)
    if not positions:
        return Rejections(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])
    if len(positions) == 1:
        return Rejections(positions[0], which[0], statuses)
    return Rejections(np.concatenate(positions), np.concatenate(which), statuses)


NO_NODE_AVAILABLE = "0/{} nodes are available"


class Diagnosis:
    """Why a pod fit no node: per-node statuses and the plugins that rejected it.

    ``node_to_status`` is a dict name -> Status.  The Filter pass hands its rejections over as
    arrays (:meth:`add_filtered`); they become dict entries only when ``node_to_status`` is read,
    and :meth:`status_of`, :meth:`count`, ``filtered`` answer from the arrays without
    making them (a pod rejected by 5000 nodes then costs no 5000-entry dict unless asked).
    """

    __slots__ = (
        "_node_to_status",
        "_pending",
        "_position_of_row",
        "filtered",
        "unschedulable_plugins",
        "pending_plugins",
        "pre_filter_msg",
        "post_filter_msg",
        "absent_status",
    )

    def __init__(
        self,
        node_to_status: dict[str, Status] | None = None,
        unschedulable_plugins: set[str] | None = None,
        pending_plugins: set[str] | None = None,
        pre_filter_msg: str = "",
        post_filter_msg: str = "",
        absent_status: Status | None = None,
    ) -> None:
        self._node_to_status: dict[str, Status] = {} if node_to_status is None else node_to_status
        # (node names of the snapshot, rows, rejections) not yet in the dict
        self._pending: tuple[list[str], np.ndarray, Rejections] | None = None
        self._position_of_row: np.ndarray | None = None
        # the Filter pass's rejections as arrays (snapshot rows, statuses) while they are all of
        # node_to_status; None otherwise
        self.filtered: tuple[np.ndarray, Rejections] | None = None
        self.unschedulable_plugins: set[str] = set() if unschedulable_plugins is None else unschedulable_plugins
        self.pending_plugins: set[str] = set() if pending_plugins is None else pending_plugins
        self.pre_filter_msg = pre_filter_msg
        self.post_filter_msg = post_filter_msg
        # status given to every node absent from node_to_status (PreFilter narrowed the node set)
        self.absent_status = absent_status

    @property
    def node_to_status(self) -> dict[str, Status]:
        """Every node's status (the Filter pass's arrays made into entries first).  Writing
        to it ends the arrays' use (``filtered`` becomes None)."""
        self._flush()
        self.filtered = None  # the caller may change the dict
        return self._node_to_status

    @node_to_status.setter
    def node_to_status(self, value: dict[str, Status]) -> None:
        self._pending = None
        self.filtered = None
        self._node_to_status = value

    def add_filtered(self, names: list[str], rows: np.ndarray, rejected: Rejections) -> None:
        """The Filter pass's rejections: ``rows`` of the snapshot whose node names are
        ``names``, with their statuses (added after what is there; a later one wins)."""
        self._flush()
        self._pending = (names, rows, rejected)
        self._position_of_row = None
        self.filtered = (rows, rejected) if not self._node_to_status else None

    def _flush(self) -> None:
        pending = self._pending
        if pending is not None:
            self._pending = None
            names, rows, rejected = pending
            self._node_to_status.update(
                zip([names[r] for r in rows.tolist()], rejected.status_list(), strict=True)
            )

    def status_of(self, name: str, index: Mapping[str, int] | None = None) -> Status | None:
        """``node_to_status.get(name)`` (``index``: the snapshot's name -> row, to look the
        name up in the arrays)."""
        pending = self._pending
        if pending is not None:
            if index is None:
                return self.node_to_status.get(name)
            row = index.get(name)
            if row is not None:
                pos = self._position_of_row
                if pos is None:
                    names, rows, _ = pending
                    pos = self._position_of_row = np.full(len(names), -1, dtype=np.int64)
                    pos[rows] = np.arange(len(rows))
                at = int(pos[row])
                if at >= 0:
                    rej = pending[2]
                    return rej.statuses[int(rej.which[at])]
        return self._node_to_status.get(name)

    def count(self) -> int:
        """``len(node_to_status)``."""
        if self._pending is not None and self._node_to_status:
            self._flush()
        return len(self._node_to_status) + (len(self._pending[1]) if self._pending is not None else 0)

    def __repr__(self) -> str:
        return (
            f"Diagnosis(node_to_status={self.node_to_status!r}, "
            f"unschedulable_plugins={self.unschedulable_plugins!r}, pending_plugins={self.pending_plugins!r}, "
            f"pre_filter_msg={self.pre_filter_msg!r}, post_filter_msg={self.post_filter_msg!r}, "
            f"absent_status={self.absent_status!r})"
        )


class FitError(KubeschedError):
    """``framework.FitError``: the pod fits no node; its text is upstream's message.

    The PreFilter message or the reasons histogram is added with upstream's ``SeparatorFormat``
    (``" %v."``); the PostFilter message follows with ``" %v"`` and no period of its own
    (``framework/types.go`` ``FitError.Error()`` since v1.28, kubernetes#117588), so a preemption
    message reads ``"... preemption: 0/3 nodes are available: 3 No preemption victims found for
    incoming pod."`` with one period, as kube-scheduler v1.28+ logs it.
    """

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            counts: Counter[str] = Counter()
            # plugins share one Status among the nodes they reject for one reason: count the
            # nodes per distinct Status, then its reasons once
            arrays = d.filtered
            node_count = d.count()
            if arrays is not None:
                rej = arrays[1]
                per = np.bincount(rej.which, minlength=len(rej.statuses)).tolist()
                for st, times in zip(rej.statuses, per, strict=True):
                    for reason in st.reasons:
                        counts[reason] += times
            else:
                statuses = list(d.node_to_status.values())
                per_status = Counter(map(id, statuses))
                distinct = dict(zip(map(id, statuses), statuses, strict=True))
                for key, times in per_status.items():
                    for reason in distinct[key].reasons:
                        counts[reason] += times
            if d.absent_status is not None:
                absent = self.num_all_nodes - node_count
                if absent > 0:
                    for reason in d.absent_status.reasons:
                        counts[reason] += absent
            if counts:
                msg += " " + ", ".join(sorted(f"{n} {r}" for r, n in counts.items())) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg
