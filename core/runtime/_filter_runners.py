"""The PreFilter and Filter runners of a :class:`~kubesched.runtime._framework.Framework` (upstream
``RunPreFilterPlugins``, ``RunPreFilterExtensionAddPod`` / ``RemovePod``, ``RunFilterPlugins``):
an object holding the profile's PreFilter and Filter plugins, which the Framework holds.  Filter
is a batch call over a :class:`NodeBatch`, each result checked once per call, never per node.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched import hookspecs
from kubesched._logs import PluginFailure
from kubesched.api._objects import Pod
from kubesched.runtime._cyclestate import CycleState, PreFilterResult
from kubesched.runtime._nodeinfo import NodeBatch, NodeInfo, PodInfo
from kubesched.runtime._plugins import PluginCalls, PluginEntry, _as_status, _raised, _wrong
from kubesched.runtime._status import SKIP, Code, Rejections, Status, merge_rejections
from kubesched.scheduler._results import verdict as _verdict

# what an in-tree plugin's PreFilter may declare it needs (``skips_pre_filter_without``), in
# the order of their bits in FilterRunners._plain_tables: host ports, volumes, and node selection
# (a nodeSelector or required node affinity)
PLAIN_TRAITS = ("host ports", "volumes", "node selection")

_FILTER_RESULT = "a mapping {index in batch: Status} or None"


def _filter_result_error(out: Any, n: int) -> str:
    """What is wrong with a Filter result (only on the error path: it looks at every entry)."""
    if not isinstance(out, Mapping):
        return _wrong(out, _FILTER_RESULT)
    for k, st in out.items():
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            return f"returned the key {k!r} ({type(k).__name__}), expected {_FILTER_RESULT}"
        if not -n <= int(k) < n:
            return f"returned node index {k} for a batch of {n} node(s)"
        if st is not None and not isinstance(st, Status):
            return f"returned {type(st).__name__} for node index {k}, expected a Status"
    return f"returned a {type(out).__name__} whose keys are not indices in a batch of {n} node(s)"


def _all_rejected(distinct: Sequence[Any]) -> bool | None:
    """Whether each of a Filter result's distinct statuses rejects its nodes (None: one of them is
    not a Status at all)."""
    out = True
    for st in distinct:
        if not isinstance(st, Status):
            if st is not None:
                return None
            out = False
        elif st.code == Code.SUCCESS or not st.is_rejected():
            out = False
    return out


def _all_nodes(n: int, st: Status) -> Rejections:
    """``st`` for every node of a batch of ``n``."""
    return Rejections(np.arange(n), np.zeros(n, dtype=np.int64), [st])


class FilterRunners:
    """A profile's PreFilter plugins (with their AddPod / RemovePod extensions) and Filter
    plugins, in profile order, and the runners that call them (the Framework holds one)."""

    def __init__(self, points: Mapping[str, list[PluginEntry]], calls: PluginCalls) -> None:
        self.calls = calls
        self.pre_filter: list[PluginEntry] = points.get("preFilter", [])
        # what a PreFilter call needs of each plugin, looked up once: (position, entry, name, hook)
        self._pre_filter_table: list[tuple[int, PluginEntry, str, Any, frozenset[str]]] = [
            (i, e, e.name, e.plugin.kubesched_pre_filter, frozenset()) for i, e in enumerate(self.pre_filter)
        ]
        # Most pods lack the things some in-tree plugins' PreFilter is about: volumes, host
        # ports, node selection (a nodeSelector or required node affinity).  Such a plugin
        # declares the one it needs with ``skips_pre_filter_without`` (one of PLAIN_TRAITS):
        # for a pod without it, PreFilter answers the shared Skip and does nothing else
        # (NodePorts, the volume plugins, NodeAffinity without addedAffinity; their tests check
        # it).  A cycle that records and times nothing runs the others only (one table per set
        # of traits the pod has: each plugin with the skippers before it, which an early return
        # marks as skipped, as the full loop would have) and marks the skippers skipped without
        # a call; the others see the same state, as these write none.
        needs = [
            e.plugin.skips_pre_filter_without
            if type(e.plugin).__module__.startswith("kubesched.plugins.")
            and getattr(e.plugin, "skips_pre_filter_without", None) in PLAIN_TRAITS
            else None
            for e in self.pre_filter
        ]
        self._plain_skips = frozenset(e.name for e, t in zip(self.pre_filter, needs, strict=True) if t is not None)
        # by the traits a pod has (bit 1 host ports, 2 volumes, 4 node selection): (the table
        # to run, the skippers not called)
        self._plain_tables: list[tuple[list[tuple[int, PluginEntry, str, Any, frozenset[str]]], frozenset[str]]] = []
        for has in range(1 << len(PLAIN_TRAITS)):
            absent = {t for bit, t in enumerate(PLAIN_TRAITS) if not has >> bit & 1}
            skips = [t in absent for t in needs]
            self._plain_tables.append((
                [
                    (i, e, name, hook, frozenset(e2.name for e2, s in zip(self.pre_filter[:i], skips, strict=False) if s))
                    for (i, e, name, hook, _), s in zip(self._pre_filter_table, skips, strict=True)
                    if not s
                ],
                frozenset(e.name for e, s in zip(self.pre_filter, skips, strict=True) if s),
            ))
        self.filter: list[tuple[str, Any]] = [(e.name, e.plugin.kubesched_filter) for e in points.get("filter", [])]
        self.add_pod: list[tuple[PluginEntry, Any]] = [
            (e, e.plugin.kubesched_pre_filter_add_pod)
            for e in self.pre_filter
            if hookspecs.implements(e.plugin, "kubesched_pre_filter_add_pod")
        ]
        self.remove_pod: list[tuple[PluginEntry, Any]] = [
            (e, e.plugin.kubesched_pre_filter_remove_pod)
            for e in self.pre_filter
            if hookspecs.implements(e.plugin, "kubesched_pre_filter_remove_pod")
        ]
        # plugin_evaluation_total, counted in plain ints by position (upstream's
        # instrumented_plugins.go: every PreFilter call that is not a Skip, every Filter call,
        # one per node; read by ``Framework.plugin_evaluations``)
        self.pre_filter_evaluations = [0] * len(self.pre_filter)
        self.filter_evaluations = [0] * len(self.filter)
        # the Filter plugins a cycle runs, by its set of skipped plugins: (position, name, hook)
        # of those not skipped, in profile order (a cycle usually skips most of them, and the
        # pods of one shape skip the same ones: one look-up instead of a test per plugin)
        self._running: dict[frozenset[str], list[tuple[int, str, Any]]] = {}

    # --- PreFilter ------------------------------------------------------------------------
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """``RunPreFilterPlugins``: (merged result, first failure, plugins that rejected)."""
        result: PreFilterResult | None = None
        rejected: set[str] = set()
        returned_names: list[str] = []
        rec = state.recording
        timed = self.calls.timed if state.record_plugin_metrics else None
        evaluations = self.pre_filter_evaluations
        skip = state.skip_filter_plugins
        table = self._pre_filter_table
        plain_skips: frozenset[str] = frozenset()  # the plain skippers not called (marked on the way out)
        if rec is None and timed is None and self._plain_skips:
            pi = state.pod_info
            if pi is not None and pi.pod is pod:  # (else NodePorts computes the ports itself)
                spec = pod.spec
                aff = spec.affinity
                has = (1 if pi.host_ports else 0) | (2 if spec.volumes else 0)
                if spec.node_selector or (
                    aff is not None and aff.node_affinity is not None
                    and aff.node_affinity.required_during_scheduling_ignored_during_execution is not None
                ):
                    has |= 4
                table, plain_skips = self._plain_tables[has]
        for i, e, name, hook, before in table:
            if timed is not None:
                out = timed(e, "prefilter", hook, state, pod, nodes)
            else:  # PluginCalls.call, inlined: a raise is this plugin's Error, its name on the status
                try:
                    out = hook(state, pod, nodes)
                except Exception as err:
                    out = _raised(name, "prefilter", err)
                else:
                    if out is SKIP and rec is None:  # the usual answer
                        skip.add(name)
                        continue
                    if out is None and rec is None:  # the other usual one: Success, no result
                        evaluations[i] += 1  # (an earlier result naming no node returned already)
                        continue
                    if isinstance(out, Status):
                        out.plugin = name
            if rec is None and type(out) is Status and out.code == Code.SKIP:  # a Skip of its own
                skip.add(name)
                continue
            st: Status | None = None
            r: PreFilterResult | None = None
            if out is None:
                pass
            elif isinstance(out, Status):
                st = out
            elif isinstance(out, PreFilterResult):
                r = out
            elif (
                isinstance(out, tuple)
                and len(out) == 2
                and (out[0] is None or isinstance(out[0], PreFilterResult))
                and (out[1] is None or isinstance(out[1], Status))
            ):
                r, st = out
                if st is not None:
                    st.plugin = e.name
            else:
                expected = "a PreFilterResult, a Status, (PreFilterResult, Status) or None"
                st = Status(Code.ERROR, _wrong(out, expected), plugin=e.name)
            if r is not None:
                result = r if result is None else result.merge(r)
                if r.node_names is not None:
                    returned_names.append(e.name)
            if rec is not None:
                rec.prefilter_status[e.name] = _verdict(st)
                if r is not None and r.node_names is not None:
                    rec.prefilter_result[e.name] = sorted(r.node_names)
            if st is not None and st.is_skip():
                state.skip_filter_plugins.add(e.name)
                continue
            evaluations[i] += 1
            if before:  # the plain skippers the full loop would have got to
                skip.update(before)
            if st is not None and not st.is_success():
                if st.is_rejected():
                    rejected.add(e.name)
                    return None, st, rejected
                msg = st.message
                if not msg.startswith("running "):
                    st = Status(Code.ERROR, f'running PreFilter plugin "{e.name}": {msg}', plugin=e.name, error=st.error)
                return None, st, rejected
            if result is not None and result.node_names is not None and not result.node_names:
                names = " ".join(returned_names)
                st = Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"node(s) didn't satisfy plugin(s) [{names}] simultaneously"
                    if len(returned_names) > 1
                    else f"node(s) didn't satisfy plugin {returned_names[0]}",
                    plugin=e.name,
                )
                rejected.update(returned_names)
                return result, st, rejected
        if plain_skips:
            skip.update(plain_skips)
        return result, None, set(returned_names)

    def has_pre_filter_extensions(self, state: CycleState) -> bool:
        """Whether an AddPod or RemovePod extension would run for this cycle (not skipped)."""
        skip = state.skip_filter_plugins
        return any(e.name not in skip for e, _ in (*self.add_pod, *self.remove_pod))

    def has_add_pod(self, state: CycleState) -> bool:
        """Whether an AddPod extension would run for this cycle (not skipped)."""
        skip = state.skip_filter_plugins
        return any(e.name not in skip for e, _ in self.add_pod)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        call = self.calls.timed if state.record_plugin_metrics else self.calls.call
        for e, fn in self.add_pod:
            if e.name in state.skip_filter_plugins:
                continue
            st = _as_status(call(e, "AddPod", fn, state, pod, pod_to_add, node_info), e.name)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running AddPod on PreFilter plugin "{e.name}": {st.message}', plugin=e.name)
        return None

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        call = self.calls.timed if state.record_plugin_metrics else self.calls.call
        for e, fn in self.remove_pod:
            if e.name in state.skip_filter_plugins:
                continue
            st = _as_status(call(e, "RemovePod", fn, state, pod, pod_to_remove, node_info), e.name)
            if st is not None and not st.is_success():
                return Status(Code.ERROR, f'running RemovePod on PreFilter plugin "{e.name}": {st.message}', plugin=e.name)
        return None

    # --- Filter ---------------------------------------------------------------------------
    def run_filter_plugins(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> Mapping[int, Status]:
        """``RunFilterPlugins`` over a batch: {position in batch: first failing status}.

        Plugins run in profile order; a node rejected by one plugin is not shown to the next.
        The result is a :class:`Rejections` (arrays) for a batch of several nodes.
        """
        n = len(nodes)  # len(alive), kept as ``alive`` shrinks
        if n == 1:
            return self.run_filter_plugins_one(state, pod, nodes)
        parts: list[tuple[np.ndarray | None, Mapping[int, Status]]] = []
        alive = nodes
        positions: np.ndarray | None = None  # positions of ``alive`` within ``nodes``
        skip = state.skip_filter_plugins
        timed = state.record_plugin_metrics
        evaluations = self.filter_evaluations
        skipped = frozenset(skip)
        running = self._running.get(skipped)
        if running is None:
            if len(self._running) >= 64:
                self._running.clear()
            running = self._running[skipped] = [
                (i, name, fn) for i, (name, fn) in enumerate(self.filter) if name not in skipped
            ]
        for i, name, fn in running:
            if n == 0:
                break
            evaluations[i] += n
            try:
                out = self.calls.timed_batch(name, "Filter", fn, state, pod, alive) if timed else fn(state, pod, alive)
            except Exception as err:
                st = Status(Code.ERROR, f'running "{name}" filter plugin: {err}', plugin=name,
                            error=PluginFailure(name, "Filter", err))
                parts.append((positions, _all_nodes(n, st)))
                break
            if out is None:
                continue
            # one look at the result per call (its type, its distinct statuses), none per node
            if type(out) is not dict and not isinstance(out, Mapping):
                parts.append((positions, _all_nodes(n, self._bad_filter_result(name, out, n))))
                break
            if not out:
                continue
            # Plugins share one Status among the nodes they reject for the same reason: look at
            # each distinct status once and record the rejected positions in bulk.
            if isinstance(out, Rejections):
                rej = out
                distinct: Sequence[Status | None] = out.statuses
            else:
                sts = list(out.values())
                distinct = list(dict(zip(map(id, sts), sts, strict=True)).values())
                rej = None
            all_rejected = _all_rejected(distinct)
            if all_rejected is None:  # a value that is not a Status
                parts.append((positions, _all_nodes(n, self._bad_filter_result(name, out, n))))
                break
            keep = np.ones(n, dtype=bool)
            try:
                if all_rejected:
                    for rejected in distinct:
                        assert rejected is not None
                        rejected.plugin = name
                    if rej is None:
                        rej = Rejections.of(out)
                    keep[rej.positions] = False
                    result: Mapping[int, Status] = rej
                else:
                    bad: dict[int, Status] = {}
                    for i, st in out.items():
                        if st is None or st.code == Code.SUCCESS:
                            continue
                        st.plugin = name
                        if not st.is_rejected():
                            msg = f'running "{name}" filter plugin: {st.message}'
                            st = Status(Code.ERROR, msg, plugin=name, error=st.error)
                        bad[int(i)] = st
                    if not bad:
                        continue
                    keep[np.fromiter(bad.keys(), np.int64, len(bad))] = False
                    result = bad
            except (TypeError, ValueError, IndexError, OverflowError):  # keys that are no index in the batch
                parts.append((positions, _all_nodes(n, self._bad_filter_result(name, out, n))))
                break
            parts.append((positions, result))
            idx = keep.nonzero()[0]
            positions = idx if positions is None else positions[idx]
            alive = alive.subset(idx)
            n = len(idx)
        if not parts:
            return {}
        return merge_rejections(parts)

    def run_filter_plugins_one(self, state: CycleState, pod: Pod, nodes: NodeBatch) -> dict[int, Status]:
        """:meth:`run_filter_plugins` for a batch of one node, without the position bookkeeping."""
        failed: dict[int, Status] = {}
        skip = state.skip_filter_plugins
        timed = state.record_plugin_metrics
        evaluations = self.filter_evaluations
        for i, (name, fn) in enumerate(self.filter):
            if name in skip:
                continue
            evaluations[i] += 1
            try:
                out = self.calls.timed_batch(name, "Filter", fn, state, pod, nodes) if timed else fn(state, pod, nodes)
            except Exception as err:
                msg = f'running "{name}" filter plugin: {err}'
                return {0: Status(Code.ERROR, msg, plugin=name, error=PluginFailure(name, "Filter", err))}
            if out is None:
                continue
            if type(out) is not dict and not isinstance(out, Mapping):
                return {0: self._bad_filter_result(name, out, 1)}
            if not out:
                continue
            for i, st in out.items():
                # the batch's index rules: 0 or -1 (as numpy indexing), and a Status or None
                if type(i) is not bool and i in (0, -1) and (st is None or isinstance(st, Status)):
                    if st is None or st.code == Code.SUCCESS:
                        continue
                    st.plugin = name
                    if not st.is_rejected():
                        st = Status(Code.ERROR, f'running "{name}" filter plugin: {st.message}', plugin=name, error=st.error)
                    failed[0] = st
                    continue
                return {0: self._bad_filter_result(name, out, 1)}
            if failed:
                break
        return failed

    @staticmethod
    def _bad_filter_result(name: str, out: Any, n: int) -> Status:
        """The Error for every node of a batch whose Filter result is not ``{index: Status}``."""
        return Status(Code.ERROR, f'running "{name}" filter plugin: {_filter_result_error(out, n)}', plugin=name)
