"""Every plugin's verdict for every scheduling attempt, in kube-scheduler-simulator's layout.

Recording is opt-in (``Scheduler(record_plugin_results=True)``; ``simulate --explain``,
``run --record-plugin-results``).  Off, the scheduler holds no recorder and each stage costs one
``is None`` check per pod.  On, one :class:`AttemptRecord` rides in the cycle state
(``CycleState.recording``) from the pop to the end of the attempt::

    schedule_one ── begin ──► AttemptRecord ── PreFilter, Filter, PostFilter, PreScore, Score,
                                 (CycleState)   selected node, Reserve, Permit   (scheduling cycle)
                                                 PreBind, Bind                    (binding cycle)
    attempt over (failure handled, or bound) ──► kept (simulate: encoded when read), or encoded
                                                 and written onto the pod by a background task

Filter and Score are batch hooks: their verdicts come from the batch results the cycle already
has (the failing status per rejected node, the score arrays per plugin), never from running a
plugin again per node.  Cloned states (preemption's dry runs) record nothing.

The annotations are kube-scheduler-simulator's (``simulator/scheduler/plugin/resultstore``,
``storereflector``): the same keys, the same JSON shapes (Go's ``json.Marshal``: keys sorted,
``<``, ``>``, ``&`` escaped), string values:

======================  ==============================================================
``prefilter-result-status``  {plugin: "success" | status message}
``prefilter-result``    {plugin: [node names]} for the plugins that narrowed the nodes
``filter-result``       {node: {plugin: "passed" | status message}}: the plugins that ran on
                        that node, up to the first that rejected it
``postfilter-result``   {node: {}} for the nodes with a Filter status; the nominated node gets
                        {plugin: "preemption victim"} (the simulator's wording)
``prescore-result``     {plugin: "success" | status message}
``score-result``        {node: {plugin: raw score}}
``finalscore-result``   {node: {plugin: normalized score × the plugin's weight}}
``reserve-result``      {plugin: "success" | status message}
``permit-result``       {plugin: "success" | "wait" | status message}
``permit-result-timeout``  {plugin: Go duration, e.g. "0s", "1m0s"}
``prebind-result``, ``bind-result``  {plugin: "success" | status message}
``selected-node``       the node chosen for the pod ("" if none)
``result-history``      a JSON list of every attempt's map of the keys above, oldest first,
                        trimmed from the front to 256 KiB
======================  ==============================================================

kubesched adds one key of its own, ``kubesched.io/postfilter-victims``:
{plugin: {"nominatedNodeName": node, "victims": ["namespace/name", ...]}} for a PostFilter that
nominated a node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._status import Status

PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
PREFILTER_STATUS = PREFIX + "prefilter-result-status"
PREFILTER_RESULT = PREFIX + "prefilter-result"
FILTER_RESULT = PREFIX + "filter-result"
POSTFILTER_RESULT = PREFIX + "postfilter-result"
PRESCORE_RESULT = PREFIX + "prescore-result"
SCORE_RESULT = PREFIX + "score-result"
FINALSCORE_RESULT = PREFIX + "finalscore-result"
RESERVE_RESULT = PREFIX + "reserve-result"
PERMIT_RESULT = PREFIX + "permit-result"
PERMIT_TIMEOUT = PREFIX + "permit-result-timeout"
PREBIND_RESULT = PREFIX + "prebind-result"
BIND_RESULT = PREFIX + "bind-result"
SELECTED_NODE = PREFIX + "selected-node"
RESULT_HISTORY = PREFIX + "result-history"
POSTFILTER_VICTIMS = "kubesched.io/postfilter-victims"

PASSED = "passed"
SUCCESS = "success"
WAIT = "wait"
POSTFILTER_NOMINATED = "preemption victim"
# validation.TotalAnnotationSizeLimitB: the history is trimmed (oldest first) to fit
HISTORY_LIMIT = 256 * 1024

_encoder = msgspec.json.Encoder(order="sorted")
# names that are their own JSON string body (node names are DNS subdomains)
_PLAIN = re.compile(r"[A-Za-z0-9._-]*")


def go_json(obj: Any, *, escaped: bool = False) -> str:
    """``json.Marshal``'s bytes for ``obj``: compact, map keys sorted, HTML characters and the
    line / paragraph separators escaped as Go escapes them (``escaped``: the strings in ``obj``
    are known to hold none of them, e.g. JSON that this function wrote)."""
    out = _encoder.encode(obj)
    if escaped:
        return out.decode()
    if b"<" in out or b">" in out or b"&" in out or b"\xe2\x80" in out:
        out = (
            out.replace(b"<", b"\\u003c")
            .replace(b">", b"\\u003e")
            .replace(b"&", b"\\u0026")
            .replace("\u2028".encode(), b"\\u2028")
            .replace("\u2029".encode(), b"\\u2029")
        )
    return out.decode()


def verdict(st: Status | None) -> str:
    """A plugin's result as the simulator writes it: "success" or the status message."""
    return SUCCESS if st is None or st.is_success() else st.message


class AttemptRecord:
    """One scheduling attempt's results, filled in stage by stage (see the module docstring)."""

    __slots__ = (
        "prefilter_status",
        "prefilter_result",
        "_filter_passes",
        "postfilter_nodes",
        "postfilter",
        "prescore",
        "score_nodes",
        "raw_scores",
        "final_scores",
        "reserve",
        "permit",
        "permit_timeout",
        "prebind",
        "bind",
        "selected_node",
    )

    def __init__(self) -> None:
        self.prefilter_status: dict[str, str] = {}
        self.prefilter_result: dict[str, list[str]] = {}
        # the Filter passes, each (nodes that passed, their verdicts' JSON, [(failed node, its
        # verdicts' JSON)]): :attr:`filter` makes the map from them when it is read (at the
        # encoding), so that a pass records its 500 nodes without hashing their names
        self._filter_passes: list[tuple[list[str], str, list[tuple[str, str]]]] = []
        self.postfilter_nodes: list[str] = []
        # plugin -> (nominated node, victims "namespace/name")
        self.postfilter: dict[str, tuple[str, list[str]]] = {}
        self.prescore: dict[str, str] = {}
        self.score_nodes: list[str] = []
        self.raw_scores: dict[str, np.ndarray] = {}
        self.final_scores: dict[str, np.ndarray] = {}
        self.reserve: dict[str, str] = {}
        self.permit: dict[str, str] = {}
        self.permit_timeout: dict[str, str] = {}
        self.prebind: dict[str, str] = {}
        self.bind: dict[str, str] = {}
        self.selected_node = ""

    # --- recording ------------------------------------------------------------------------
    def filtered(
        self,
        plugins: Sequence[str],
        passed: list[str],
        failed: Iterable[str],
        statuses: Sequence[Status],
    ) -> None:
        """One Filter pass: ``plugins`` ran in this order (the skipped ones left out); the
        ``passed`` nodes passed them all; each ``failed`` node was rejected with its status
        (the plugin named in the status; those before it passed)."""
        ok = go_json(dict.fromkeys(plugins, PASSED))
        if not statuses:
            self._filter_passes.append((passed, ok, []))
            return
        inner: dict[int, str] = {}

        def verdicts(st: Status) -> str:
            text = inner.get(id(st))
            if text is None:
                m: dict[str, str] = {}
                for p in plugins:
                    if p == st.plugin:
                        break
                    m[p] = PASSED
                m[st.plugin] = st.message
                text = inner[id(st)] = go_json(m)
            return text

        self._filter_passes.append((passed, ok, list(zip(failed, map(verdicts, statuses), strict=True))))

    @property
    def filter(self) -> dict[str, str]:
        """Node -> its {plugin: verdict} map, already as JSON (shared among nodes with one
        verdict): every pass's nodes, a later pass's verdict replacing an earlier one's."""
        out: dict[str, str] = {}
        for passed, ok, failed in self._filter_passes:
            out.update(dict.fromkeys(passed, ok))
            out.update(failed)
        return out

    def scored(
        self, nodes: list[str], raw: dict[str, np.ndarray], weighted: dict[str, np.ndarray]
    ) -> None:
        """One Score pass: per plugin, the raw scores and the normalized × weight ones."""
        self.score_nodes = nodes
        self.raw_scores = raw
        self.final_scores = weighted

    # --- the annotations --------------------------------------------------------------------
    @staticmethod
    def _per_node(names: list[str], order: list[int], scores: Mapping[str, np.ndarray]) -> str:
        """{node: {plugin: "score"}} (``names``: the nodes' JSON strings in ``order``, sorted),
        one string format per node."""
        if not scores or not names:
            return "{}"
        plugins = sorted(scores)
        template = "%s:{" + ",".join(go_json(p).replace("%", "%%") + ':"%d"' for p in plugins) + "}"
        columns = [scores[p][order].tolist() for p in plugins]
        return "{" + ",".join([template % row for row in zip(names, *columns, strict=True)]) + "}"

    def annotations(self) -> dict[str, str]:
        """The simulator's annotations for this attempt (every key, as it writes them)."""
        postfilter: dict[str, dict[str, str]] = {n: {} for n in self.postfilter_nodes}
        victims: dict[str, dict[str, Any]] = {}
        for plugin, (node, pods) in self.postfilter.items():
            if node and node in postfilter:
                postfilter[node][plugin] = POSTFILTER_NOMINATED
            if node:
                victims[plugin] = {"nominatedNodeName": node, "victims": pods}
        nodes = self.score_nodes
        order = sorted(range(len(nodes)), key=nodes.__getitem__)
        names = _json_names([nodes[i] for i in order])
        out = {
            PREFILTER_RESULT: go_json(self.prefilter_result),
            PREFILTER_STATUS: go_json(self.prefilter_status),
            FILTER_RESULT: _json_object(self.filter),
            POSTFILTER_RESULT: go_json(postfilter),
            PRESCORE_RESULT: go_json(self.prescore),
            SCORE_RESULT: self._per_node(names, order, self.raw_scores),
            FINALSCORE_RESULT: self._per_node(names, order, self.final_scores),
            RESERVE_RESULT: go_json(self.reserve),
            PERMIT_TIMEOUT: go_json(self.permit_timeout),
            PERMIT_RESULT: go_json(self.permit),
            PREBIND_RESULT: go_json(self.prebind),
            BIND_RESULT: go_json(self.bind),
            SELECTED_NODE: self.selected_node,
        }
        if victims:
            out[POSTFILTER_VICTIMS] = go_json(victims)
        return out


def _json_names(names: list[str]) -> list[str]:
    """Each name as a JSON string."""
    if _PLAIN.fullmatch("".join(names)):
        return ['"' + n + '"' for n in names]
    return [go_json(n) for n in names]


def _json_object(members: Mapping[str, str]) -> str:
    """A JSON object of already-encoded values, keys sorted."""
    keys = sorted(members)
    if _PLAIN.fullmatch("".join(keys)):
        return "{" + ",".join(['"' + k + '":' + members[k] for k in keys]) + "}"
    return "{" + ",".join([go_json(k) + ":" + members[k] for k in keys]) + "}"


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


def append_history(history: str | None, entry: Mapping[str, str]) -> str | None:
    """``updateResultHistory``: ``entry`` appended to the JSON list ``history``; the oldest
    entries dropped until it fits in :data:`HISTORY_LIMIT` bytes (None if even the newest alone
    does not: the history annotation is then left as it was).  ``entry``: as
    :meth:`AttemptRecord.annotations` writes it (its JSON texts already Go-escaped)."""
    item = go_json(entry, escaped=_PLAIN.fullmatch(entry.get(SELECTED_NODE, "")) is not None)
    if _utf8_len(item) + 2 > HISTORY_LIMIT:
        return None
    if not history or history == "[]":
        out = "[" + item + "]"
    else:
        out = history[:-1] + "," + item + "]"
    if _utf8_len(out) <= HISTORY_LIMIT:
        return out
    entries: list[Any] = json.loads(out)
    while entries:
        text = go_json(entries)
        if len(text.encode()) <= HISTORY_LIMIT:
            return text
        entries = entries[1:]
    return None


class ResultRecorder:
    """The scheduler's recorder: it starts an :class:`AttemptRecord` per attempt and turns the
    finished ones into each pod's annotations (the latest attempt's keys + ``result-history``).

    Encoding waits until the annotations are wanted, out of the scheduling cycle:

    - without ``patch`` (``simulate``): the finished records are kept per pod; :attr:`latest`
      encodes them when read (at the end of the run);
    - with ``patch`` (``run``): the scheduler's write task encodes each finished attempt
      (:meth:`encode`) and merges the result into the pod's annotations.
    """

    def __init__(self, *, patch: bool = False) -> None:
        self.patch = patch
        self._attempts: dict[str, list[AttemptRecord]] = {}
        # with ``patch``: the history last written onto each pod not bound yet
        self._history: dict[str, str] = {}

    def begin(self) -> AttemptRecord:
        return AttemptRecord()

    def finish(self, pod: Pod, record: AttemptRecord) -> None:
        """Keep ``record``, the pod's latest attempt (without ``patch``)."""
        self._attempts.setdefault(pod.metadata.uid, []).append(record)

    @property
    def latest(self) -> dict[str, dict[str, str]]:
        """pod uid -> its annotations after its latest attempt (encoded now)."""
        return {uid: self.annotations_of(uid) for uid in self._attempts}

    def annotations_of(self, uid: str) -> dict[str, str]:
        out: dict[str, str] = {}
        history: str | None = None
        for record in self._attempts.get(uid, ()):
            entry = record.annotations()
            history = append_history(history, entry) or history
            out = entry
        if history is not None:
            out[RESULT_HISTORY] = history
        return out

    def encode(self, pod: Pod, record: AttemptRecord, *, bound: bool) -> dict[str, str]:
        """(``patch``) The annotations to merge into ``pod`` for its attempt ``record``: the
        history appended to the one last written (or the pod's own); ``bound``: the pod's last
        attempt, nothing more to keep for it."""
        uid = pod.metadata.uid
        entry = record.annotations()
        history = self._history.get(uid)
        if history is None:
            history = (pod.metadata.annotations or {}).get(RESULT_HISTORY)
        new_history = append_history(history, entry)
        if new_history is not None:
            entry[RESULT_HISTORY] = history = new_history
        if bound:
            self._history.pop(uid, None)
        elif history is not None:
            self._history[uid] = history
        return entry

    def forget(self, uid: str) -> None:
        """The pod is gone (with ``patch``: nothing to keep for it)."""
        if self.patch:
            self._history.pop(uid, None)


def only_results_changed(old: Pod, new: Pod) -> bool:
    """The update only wrote result annotations (the scheduler's own patch): nothing the queue
    or the plugins look at has changed."""
    a, b = old.metadata.annotations or {}, new.metadata.annotations or {}
    if a == b:
        return False
    keys = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    if not all(k.startswith(PREFIX) or k == POSTFILTER_VICTIMS for k in keys):
        return False
    meta = msgspec.structs.replace(
        old.metadata, annotations=new.metadata.annotations,
        resource_version=new.metadata.resource_version,
    )
    return msgspec.structs.replace(old, metadata=meta) == new
