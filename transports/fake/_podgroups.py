"""The fake cluster's writes of the Workload API's PodGroup status (the PodGroup scheduling cycle
of 1.36 sets ``PodGroupScheduled``, workload-aware preemption ``DisruptionTarget``): one verb,
kept out of :class:`~kubesched.transports.fake.FakeCluster`'s body, which mixes it in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from msgspec.structs import replace

from kubesched import NotFoundError
from kubesched.api import SCHEDULING_POD_GROUP_KIND, Condition, PodCondition

if TYPE_CHECKING:
    from kubesched.transports.fake._store import Store


_C = TypeVar("_C", PodCondition, Condition)


def _set_condition(conditions: list[_C], condition: _C, now: str) -> list[_C]:
    """``conditions`` with ``condition`` merged in by type (podutil.UpdatePodCondition)."""
    out: list[_C] = []
    found = False
    for c in conditions:
        if c.type != condition.type:
            out.append(c)
            continue
        found = True
        ltt = condition.last_transition_time
        if ltt is None:
            ltt = now if c.status != condition.status else c.last_transition_time
        out.append(replace(condition, last_transition_time=ltt))
    if not found:
        out.append(replace(condition, last_transition_time=condition.last_transition_time or now))
    return out


class PodGroupStatusWrites:
    """``patch_pod_group_status`` over the cluster's store."""

    _store: Store

    def _check_open(self) -> None:  # pragma: no cover - FakeCluster's own is used
        raise NotImplementedError

    def timestamp(self, offset: float | None = None) -> str:  # pragma: no cover - FakeCluster's
        raise NotImplementedError

    async def patch_pod_group_status(self, namespace: str, name: str, condition: Condition) -> None:
        """Set ``condition`` on the Workload API PodGroup's status (``SetStatusCondition``: the
        lastTransitionTime changes only with the status); no event when nothing changes."""
        self._check_open()
        pg: Any = self._store.get(SCHEDULING_POD_GROUP_KIND, (namespace, name))
        if pg is None:
            raise NotFoundError(f'podgroups.scheduling.k8s.io "{name}" not found')
        conditions = _set_condition(pg.status.conditions, condition, self.timestamp())
        if conditions == pg.status.conditions:
            return
        new = replace(pg, metadata=replace(pg.metadata), status=replace(pg.status, conditions=conditions))
        self._store.put(SCHEDULING_POD_GROUP_KIND, (namespace, name), new, "MODIFIED", "status")


__all__ = ["PodGroupStatusWrites", "_set_condition"]
