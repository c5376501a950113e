"""PrioritySort: the default QueueSort (``plugins/queuesort/priority_sort.go``).

Higher pod priority first; at equal priority, the pod queued earlier (``QueuedPodInfo.timestamp``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework import Handle, hookimpl

if TYPE_CHECKING:
    from kubesched.framework import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    """Orders the active queue by (priority desc, timestamp asc)."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None, handle: Handle) -> None:
        self.handle: Handle = handle

    @hookimpl
    def kubesched_queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1, p2 = a.priority, b.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    @staticmethod
    def queue_sort_key(q: QueuedPodInfo) -> tuple[int, float]:
        """A key ordering pods exactly as :meth:`kubesched_queue_sort_less` does (the queue's
        heaps then compare keys instead of calling the hook)."""
        return -q.priority, q.timestamp


def new(args: dict[str, Any] | None, handle: Handle) -> PrioritySort:
    return PrioritySort(args, handle)


__all__ = ["NAME", "PrioritySort", "new"]
