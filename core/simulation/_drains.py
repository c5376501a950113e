"""Draining a node during a simulation (``kubesched.io/drain: D`` on a Node document), as
``kubectl drain --ignore-daemonsets --force`` does it::

    at D:  cordon (spec.unschedulable: true) ─► evict every pod on the node, in creation order
           (not DaemonSet pods, not mirror pods; a finished pod is just deleted)
    evict: the pod's PodDisruptionBudget allows it (disruptionsAllowed > 0, one budget at most)
           ─► its budget spent, DisruptionTarget (EvictionByEvictionAPI) on the pod, graceful
              deletion: its controller replaces it at once, as upstream
           refused ─► that pod is tried again 5 s later (kubectl drain's retry), until it goes

Drains are a timed source of the simulation's loop (:class:`Drains`): a drain still refused when
the run ends is counted as unfinished (``summary.cutShort.drains``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from msgspec.structs import replace

from kubesched._errors import ConfigError
from kubesched.api._durations import parse_duration
from kubesched.api._labels import selector_matches
from kubesched.api._objects import Pod, PodCondition
from kubesched.scenario._manifests import DRAIN_ANNOTATION, Manifest
from kubesched.validation._validation import go_quote

EVICTION_RETRY = 5.0
"""Seconds before a refused eviction is tried again (``kubectl drain``'s)."""
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_TERMINAL = ("Succeeded", "Failed")

__all__ = ["Drains", "planned_drains"]


def planned_drains(manifests: Sequence[Manifest]) -> list[tuple[float, int, str]]:
    """(seconds, order, node) of every ``kubesched.io/drain`` of ``manifests``, in time order; a
    bad one is one ConfigError naming its document."""
    out = []
    fld = f"metadata.annotations[{DRAIN_ANNOTATION}]"
    for m in manifests:
        raw = m.obj.metadata.annotations.get(DRAIN_ANNOTATION)
        if raw is None:
            continue
        if m.kind != "Node":
            raise ConfigError(f"Invalid value: {go_quote(raw)}: only a Node is drained", source=m.label, field=fld)
        try:
            at = parse_duration(raw)
        except ValueError as e:
            raise ConfigError(str(e), source=m.label, field=fld) from None
        if at < m.arrival:
            raise ConfigError(
                f"Invalid value: {go_quote(raw)}: must not be earlier than the arrival ({m.arrival:g}s)",
                source=m.label,
                field=fld,
            )
        out.append((at, m.order, m.obj.metadata.name))
    return sorted(out)


class Drains:
    """The node drains of one simulation, a timed source of its loop (see the module docstring).

    ``next_planned`` (the next drain to begin) belongs with the run's other timed events; the
    retries of refused evictions are in ``next_due`` only, so that a drain a budget blocks for
    ever does not keep a run going for ever (it ends as ``retrying``, with the drain unfinished).
    """

    def __init__(self, manifests: Sequence[Manifest]) -> None:
        self.plan = planned_drains(manifests)
        self._next = 0
        self.blocked: dict[str, float] = {}
        """Node → when (anyio time) its refused evictions are tried again."""
        self.cluster: Any = None
        self.start = 0.0

    def __bool__(self) -> bool:
        return bool(self.plan)

    def bind(self, cluster: Any, start: float) -> None:
        """The fake cluster it drains, and the anyio time of the run's start."""
        self.cluster, self.start = cluster, start

    def next_planned(self) -> float | None:
        if self._next >= len(self.plan):
            return None
        return self.start + self.plan[self._next][0]

    def next_due(self) -> float | None:
        times = [t for t in (self.next_planned(), min(self.blocked.values(), default=None)) if t is not None]
        return min(times, default=None)

    def pending(self) -> int:
        """Drains not begun, or with evictions still refused."""
        return len(self.plan) - self._next + len(self.blocked)

    def run_due(self) -> None:
        now = anyio.current_time()
        while self._next < len(self.plan) and self.start + self.plan[self._next][0] <= now + 1e-9:
            name = self.plan[self._next][2]
            self._next += 1
            self._cordon(name)
            self.blocked[name] = now
        for name, at in sorted(self.blocked.items(), key=lambda item: (item[1], item[0])):
            if at > now + 1e-9:
                continue
            if self._evict_all(name):
                del self.blocked[name]
            else:
                self.blocked[name] = now + EVICTION_RETRY

    def _cordon(self, name: str) -> None:
        node = self.cluster.get("Node", "", name)
        if node is not None and not node.spec.unschedulable:
            meta = replace(node.metadata, resource_version="")
            self.cluster.update(replace(node, metadata=meta, spec=replace(node.spec, unschedulable=True)))

    def _evict_all(self, name: str) -> bool:
        """Evict what may go now; whether nothing is left to evict."""
        if self.cluster.get("Node", "", name) is None:
            return True  # deleted meanwhile: its pods went with it
        done = True
        for pod in self.cluster.pods():
            if pod.spec.node_name != name or pod.metadata.deletion_timestamp is not None or _stays(pod):
                continue
            if not self._evict(pod):
                done = False
        return done

    def _evict(self, pod: Pod) -> bool:
        """The eviction API: refused (False) when the pod's budget allows no disruption."""
        cluster, md = self.cluster, pod.metadata
        if pod.status.phase not in _TERMINAL:
            budgets = [
                b for b in cluster.list("PodDisruptionBudget")
                if b.metadata.namespace == md.namespace and selector_matches(b.spec.selector, md.labels)
            ]  # fmt: skip
            if len(budgets) > 1:
                return False  # upstream: "This pod has more than one PodDisruptionBudget"
            now = cluster.timestamp()
            if budgets:
                pdb = budgets[0]
                st = pdb.status
                if st is None or st.disruptions_allowed <= 0:
                    return False
                spent = replace(st, disruptions_allowed=st.disruptions_allowed - 1,
                                disrupted_pods={**st.disrupted_pods, md.name: now})  # fmt: skip
                cluster.update(replace(pdb, metadata=replace(pdb.metadata, resource_version=""), status=spent))
            cond = PodCondition(type="DisruptionTarget", status="True", reason="EvictionByEvictionAPI",
                                message="Eviction API: evicting", last_transition_time=now)  # fmt: skip
            conditions = [c for c in pod.status.conditions if c.type != cond.type] + [cond]
            cluster.update(replace(pod, metadata=replace(md, resource_version=""),
                                   status=replace(pod.status, conditions=conditions)))  # fmt: skip
        cluster.delete_now("Pod", md.namespace, md.name, graceful=True)
        return True


def _stays(pod: Pod) -> bool:
    """What ``kubectl drain --ignore-daemonsets`` leaves: DaemonSet pods and mirror (static) pods."""
    if MIRROR_ANNOTATION in pod.metadata.annotations:
        return True
    return any(r.controller and r.kind in ("DaemonSet", "Node") for r in pod.metadata.owner_references)
