"""The dry run on the snapshot's columns: the fast form of ``dryrun.py``, no node copied.

It applies when which pods may be preempted depends only on priority and no AddPod/RemovePod
extension runs in the cycle (the Evaluator checks).  Over the potential nodes' snapshot rows, in
visit order from ``offset``, rounds of two phases::

    strip     chunks of rows with every lower-priority pod removed (the snapshot's columns minus
              Snapshot.column_below) ─► one two-pass batch Filter each (nominated pods from the
              nominator's arrays), until as many rows passed as candidates are missing
    reprieve  SelectVictimsOnNode's loop on the passing rows in lockstep, over (nodes, victim
              slots) arrays: step s adds back slot s of every row that has one over the pods
              kept so far ─► one batch Filter per step; a row that fails keeps that pod a victim
    offer     the outcomes in visit order, as the node-by-node dry run offers them (the two
              fixed-capacity lists and the stop rule, over the round at once); if the stop
              condition is not met the next round goes on from there

A plugin that reads a NodeInfo gets one made from the stripped entry (``stripped.py``) with the
kept pods added back (``RowOverlay``).  Rows filtered past the stopping row are discarded
(upstream's parallel dry run also filters some nodes past it).  The candidates stay arrays
(:class:`CandidateList`): the default rules pick from their score arrays in one sort and only
the chosen candidate's victims list is made; the statuses (read only when there is no candidate)
become a dict on first use (:class:`NodeStatuses`).  Same candidates, victims, statuses and
errors as the node-by-node dry run (``tests/core/preemption/test_dryrun_equivalence.py``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api._resources import PODS
from kubesched.runtime._nodeinfo import RowOverlay
from kubesched.runtime._status import Code, Rejections, Status

from .stripped import BLOCK_KEYS, Stripped, StrippedNodes, values_of
from .types import MAX_INT32, MIN_INT64, MSG_NO_VICTIMS, Candidate
from .util import NOW_NS, more_important_pod, pod_priority, sort_by_importance
from .victims import filter_pods_with_pdb_violation

if TYPE_CHECKING:
    from kubesched.api._objects import Pod, PodDisruptionBudget
    from kubesched.runtime._framework import CycleState
    from kubesched.runtime._handle import Handle
    from kubesched.runtime._nodeinfo import NodeInfo, PodInfo

    from .types import MoreImportantPodFunc


class RoundVictims:
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
            sort_by_importance(victims, self.less, lambda p: p)
        return victims


# a slice of the column dry run's candidates: (round, its nodes in the round, their snapshot
# rows, their numbers of PDB-violating victims, their default-rule scores or None)
_Part = tuple[int, np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None"]


class CandidateList(Sequence[Candidate]):
    """The column dry run's candidates, as arrays: a :class:`Candidate` (its victims list) is
    made when read, and the default rules of ``pick_one_node_for_preemption`` pick from the
    score arrays (:meth:`best_by_default_rules`) without making the others."""

    __slots__ = ("_names", "_rounds", "_round", "_local", "_violations", "_scores", "_made")

    def __init__(
        self,
        names: list[str],
        rounds: list[RoundVictims],
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
        """The index ``pick_one_node_for_preemption`` picks with the default rules: each rule
        keeps the best-scoring candidates, the first of the rest wins."""
        assert self._scores is not None
        # ascending on the negated scores, first rule first: the best first, ties in order
        # (a lexicographic sort is stable); no score is -2^63 (a candidate has victims)
        return int(np.lexsort(-self._scores[::-1])[0])


class NodeStatuses(Mapping[str, Status]):
    """The dry run's node statuses as arrays: ``{names[nodes[i]]: statuses[which[i]]}`` in
    order; the dict is made on first use (Preempt reads them only when there is no candidate)."""

    def __init__(
        self, names: list[str], nodes: np.ndarray, which: np.ndarray, statuses: list[Status]
    ) -> None:
        self._args = (names, nodes, which, statuses)
        self._dict: dict[str, Status] | None = None

    def as_dict(self) -> dict[str, Status]:
        if self._dict is None:
            names, nodes, which, statuses = self._args
            self._dict = dict(
                zip(
                    [names[i] for i in nodes.tolist()],
                    [statuses[j] for j in which.tolist()],
                    strict=True,
                )
            )
        return self._dict

    def __getitem__(self, name: str) -> Status:
        return self.as_dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self._args[1])


class ColumnDryRun:
    """The dry run on columns for one Evaluator: its stripped nodes and the strip pass rate of
    its last run (which sizes the next one's first chunk)."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.stripped = StrippedNodes(handle)
        # the share of nodes that passed the last dry run's strip
        self._strip_pass_rate = 1.0

    def run(
        self,
        state: CycleState,
        pod: Pod,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
        less: MoreImportantPodFunc,
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        """The dry run over the snapshot's nodes ``rows`` (the potential nodes, in order), from
        ``offset``, pods ordered by ``less``: (candidates, node statuses, error messages), as
        ``dryrun.dry_run_per_node`` gives them (see the module docstring for the phases)."""
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
        rounds: list[RoundVictims] = []
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
            round_, nvict, nviol, scores = self._reprieve(state, pod, prio, group_rows, pdbs, less)
            # CandidateBuffer.add and the stop condition of DryRunResult.offer, over the group at
            # once: each list keeps at most num_candidates; a node with victims ends the search
            # once there is a non-violating candidate and the two lists hold num_candidates
            hv = nvict > 0
            nonv = hv & (nviol == 0)
            viol = hv & ~nonv
            c_nonv = n_nonv + np.cumsum(nonv)
            c_viol = n_viol + np.cumsum(viol)
            stop = (
                hv
                & (c_nonv > 0)
                & (
                    np.minimum(c_nonv, num_candidates) + np.minimum(c_viol, num_candidates)
                    >= num_candidates
                )
            )
            hit = stop.nonzero()[0]
            end = int(hit[0]) + 1 if len(hit) else len(group)
            ri = len(rounds)
            rounds.append(round_)
            for mask, parts, have in ((nonv, nonv_parts, n_nonv), (viol, viol_parts, n_viol)):
                local = mask[:end].nonzero()[0][: max(num_candidates - have, 0)]
                if len(local):
                    parts.append(
                        (
                            ri,
                            local,
                            group_rows[local],
                            nviol[local],
                            None if scores is None else scores[:, local],
                        )
                    )
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
            statuses = NodeStatuses(names, nodes, which, fail_sts)
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
            None
            if any(part[4] is None for part in parts)
            else np.concatenate([part[4] for part in parts], axis=1),  # type: ignore[misc]
        )
        return candidates, statuses, errs

    def _strip_overlay(self, snap: Any, rows: np.ndarray, prio: int) -> RowOverlay:
        """The nodes ``rows`` without their lower-priority pods."""

        def column(kind: str, resource: str) -> np.ndarray:
            col: np.ndarray = snap.column_stripped(kind, resource, prio)[rows]
            return col

        def columns(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            cols: np.ndarray = snap.columns_stripped(kind, resources, prio).take(rows, axis=1)
            return cols

        def make(i: int) -> NodeInfo:
            return self.stripped.entry(snap.node_infos[int(rows[i])], prio).stripped

        return RowOverlay(column, make, columns=columns)

    def _reprieve(
        self,
        state: CycleState,
        pod: Pod,
        prio: int,
        rows: np.ndarray,
        pdbs: Sequence[PodDisruptionBudget],
        less: MoreImportantPodFunc,
    ) -> tuple[RoundVictims, np.ndarray, np.ndarray, np.ndarray | None]:
        """``SelectVictimsOnNode``'s reprieve loop on the stripped nodes ``rows`` in lockstep:
        the round (each node's victims, made when read) and per node its number of victims, of
        PDB-violating victims, and the default rules' scores (one row per rule; None when the
        pod order is not the default one).

        Node ``w``'s pods in reprieve order are slots ``0..counts[w]-1`` of row ``w`` of
        ``(nodes, most victims)`` arrays; step ``s`` adds back slot ``s`` of every node that
        has one, over the pods kept so far."""
        fh = self.handle
        snap = fh.snapshot
        default_order = less is more_important_pod
        entries: list[Stripped] = []
        orders: list[list[PodInfo]] = []
        reordered: list[bool] = []  # the order is not the entry's by_importance
        num_pdb: list[int] = []
        block: np.ndarray | None = None  # the BLOCK_KEYS values, (keys, nodes, slots)
        fast = self.stripped.rows(snap, rows, prio) if default_order and not pdbs else None
        if fast is not None:
            entries, counts, block = fast
            orders = [e.by_importance for e in entries]  # type: ignore[misc]
            reordered = [False] * len(entries)
            num_pdb = [0] * len(entries)
        else:
            infos = snap.node_infos
            for r in rows.tolist():
                entry = self.stripped.entry(infos[r], prio)
                potential = self.stripped.by_importance(entry, less)
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
                at = BLOCK_KEYS.get(key)
                if block is not None and at is not None:
                    v = block[at]
                else:
                    v = np.zeros((k, width), dtype=np.int64)
                    for w, (entry, order, re_) in enumerate(
                        zip(entries, orders, reordered, strict=True)
                    ):
                        if re_:
                            v[w, : len(order)] = values_of(order, kind, resource)
                            continue
                        ev = entry.values.get(key)
                        if ev is None:
                            ev = entry.values[key] = values_of(order, kind, resource)
                        v[w, : len(order)] = ev
                values[key] = v
            return v

        values2: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

        def slot_values2(kind: str, resources: tuple[str, ...]) -> np.ndarray:
            key = (kind, resources)
            v = values2.get(key)
            if v is None:
                if block is not None and all((kind, r) in BLOCK_KEYS for r in resources):
                    v = block.take([BLOCK_KEYS[kind, r] for r in resources], axis=0)
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
                cols = now2[key] = (
                    snap.columns_stripped(kind, resources, prio).take(rows, axis=1) + back
                )
            return cols

        active = (counts > 0).nonzero()[0]
        step = 0
        while len(active):
            base = _reprieve_overlay(
                active, step, kept, orders, entries, slot_values, current, slot_values2, current2
            )
            out = fh.run_filter_plugins_with_nominated_pods_rows(
                state, pod, rows[active], prio, base=base
            )
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
                added = slot_values2(*key2)[:, :, step].take(reprieved, axis=1)
                cols[:, reprieved] = cols.take(reprieved, axis=1) + added
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
            scores = _default_scores(
                victim, nvict, nviol, slot_values("priority", ""), slot_values("start", "")
            )
        return RoundVictims(orders, kept, num_pdb, less), nvict, nviol, scores


def _default_scores(
    victim: np.ndarray,
    number: np.ndarray,
    violations: np.ndarray,
    prio: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:
    """Per node (a row of ``victim``, its victims' slots), the default rules' scores, one row
    per rule, higher is better: minus the PDB violations, minus the highest victim priority
    (``victims[0]``'s in importance order), minus the sum of (priority + 2^31), minus the count,
    the earliest start among the highest-priority ones."""
    highest = np.where(victim, prio, MIN_INT64).max(axis=1)
    top = victim & (prio == highest[:, None])
    earliest = np.where(top, start, NOW_NS).min(axis=1)
    total = np.where(victim, prio + (MAX_INT32 + 1), 0).sum(axis=1)
    return np.stack((-violations, -highest, -total, -number, earliest))


def _reprieve_overlay(
    active: np.ndarray,
    step: int,
    kept: np.ndarray,
    orders: list[list[PodInfo]],
    entries: list[Stripped],
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
        col: np.ndarray = (
            current(kind, resource)[active] + slot_values(kind, resource)[active, step]
        )
        return col

    def columns(kind: str, resources: tuple[str, ...]) -> np.ndarray:
        added = slot_values2(kind, resources)[:, :, step].take(active, axis=1)
        cols: np.ndarray = current2(kind, resources).take(active, axis=1) + added
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


__all__ = ["CandidateList", "ColumnDryRun", "NodeStatuses", "RoundVictims"]
