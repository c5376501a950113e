"""The pods waiting at Permit (upstream ``waiting_pods_map.go``): a :class:`WaitingPod` per
pod a Permit plugin asked to wait for, released once every such plugin allows it, at the first
rejection, or when a plugin's wait ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import anyio

from kubesched.clock import now as _now
from kubesched.runtime._status import Code, Status

if TYPE_CHECKING:
    from kubesched.api._objects import Pod


class WaitingPod:
    """A pod held at Permit: one result, the plugins that still have to allow it."""

    def __init__(self, pod: Pod, timeouts: Mapping[str, float], now: float) -> None:
        self.pod = pod
        self.pending: dict[str, float] = {p: now + t for p, t in timeouts.items()}
        self.timeouts = dict(timeouts)
        self._result: Status | None = None
        self._done = anyio.Event()
        # called once when the pod is released (allowed or rejected), synchronously
        self.on_release: Callable[[], None] | None = None
        # expires every waiting pod of the framework whose wait is over (set by the framework)
        self.expire_all: Callable[[float], None] | None = None
        self.timed = True

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid

    def get_pending_plugins(self) -> list[str]:
        return list(self.pending)

    def allow(self, plugin: str) -> None:
        """Remove ``plugin`` from the pending set; the last one releases the pod with Success."""
        self.pending.pop(plugin, None)
        if not self.pending and not self._done.is_set():
            self._result = Status(Code.SUCCESS)
            self._release()

    def reject(self, plugin: str, msg: str) -> None:
        """Release the pod at once as Unschedulable(msg); the first result wins."""
        if self._done.is_set():
            return
        self.pending.clear()
        self._result = Status(Code.UNSCHEDULABLE, msg, plugin=plugin)
        self._release()

    def preempt(self, plugin: str, msg: str) -> bool:
        """Release the pod at once as Error(msg), for a preemptor taking its place: the pod goes
        to the backoff queue, not to the unschedulable pods (Kubernetes 1.36, kubernetes#135719:
        ``waitingPod.Preempt``).  False when the pod was already released."""
        if self._done.is_set():
            return False
        self.pending.clear()
        self._result = Status(Code.ERROR, msg, plugin=plugin)
        self._release()
        return True

    def _release(self) -> None:
        self._done.set()
        if self.on_release is not None:
            self.on_release()

    @property
    def released(self) -> bool:
        return self._done.is_set()

    def expire(self, now: float) -> None:
        """Reject the pod now if a plugin's wait is over (the timer does the same, later)."""
        for plugin, deadline in sorted(self.pending.items(), key=lambda kv: kv[1]):
            if deadline <= now + 1e-9:
                self.reject(plugin, self._timeout_message(plugin))
                return

    def _timeout_message(self, plugin: str) -> str:
        return (
            f"rejected due to timeout after waiting {go_duration(self.timeouts[plugin])} "
            f"at plugin {plugin}"
        )

    async def wait(self) -> Status:
        if not self.timed:
            # a deterministic driver expires waits itself (``Framework.expire_waiting_pods``)
            await self._done.wait()
        while not self._done.is_set():
            if not self.pending:
                break
            plugin, deadline = min(self.pending.items(), key=lambda kv: kv[1])
            with anyio.move_on_after(max(0.0, deadline - _now())):
                await self._done.wait()
            if not self._done.is_set() and plugin in self.pending:
                if self.expire_all is not None:
                    # every wait that is over at this instant ends now, in a fixed order,
                    # whichever waiting pod's timer the event loop ran first
                    self.expire_all(_now())
                else:
                    self.reject(plugin, self._timeout_message(plugin))
        assert self._result is not None
        return self._result


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole / fractional seconds ("1m0s", "10s", "1.5s")."""
    if seconds == 0:
        return "0s"
    total = round(seconds, 9)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    s_txt = f"{s:.9f}".rstrip("0").rstrip(".")
    if h:
        return f"{int(h)}h{int(m)}m{s_txt}s"
    if m:
        return f"{int(m)}m{s_txt}s"
    return f"{s_txt}s"


class WaitingPods:
    """``waitingPodsMap``: the pods waiting at Permit, by uid, in the order they started."""

    def __init__(self) -> None:
        self.pods: dict[str, WaitingPod] = {}

    def add(self, pod: Pod, timeouts: Mapping[str, float], *, timed: bool) -> None:
        """Park ``pod`` until every plugin in ``timeouts`` allows it (or one rejects it or its
        wait ends); ``timed`` False: a deterministic driver expires the waits itself."""
        wp = WaitingPod(pod, timeouts, _now())
        wp.expire_all = self.expire
        wp.timed = timed
        self.pods[wp.uid] = wp

    async def wait(self, pod: Pod) -> Status | None:
        """``WaitOnPermit``: None once allowed (or never waiting), else the rejection."""
        wp = self.pods.get(pod.metadata.uid)
        if wp is None:
            return None
        try:
            st = await wp.wait()
        finally:
            self.pods.pop(pod.metadata.uid, None)
        if st.is_success() or st.is_rejected():
            return None if st.is_success() else st
        # v1.35.4 framework/runtime/framework.go WaitOnPermit: any other code is an error
        return Status(Code.ERROR, f"waiting on permit for pod: {st.message}", plugin=st.plugin)

    def next_deadline(self) -> float | None:
        """The earliest instant a waiting pod's wait ends."""
        deadlines = [d for wp in self.pods.values() if not wp.released for d in wp.pending.values()]
        return min(deadlines, default=None)

    def expire(self, now: float) -> None:
        """Reject every waiting pod whose wait is over, in the order they started waiting."""
        for wp in list(self.pods.values()):
            wp.expire(now)

    def get(self, uid: str) -> WaitingPod | None:
        return self.pods.get(uid)

    def iterate(self) -> Iterator[WaitingPod]:
        return iter(list(self.pods.values()))

    def reject(self, uid: str) -> bool:
        wp = self.pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True
