"""kube-scheduler's logging, in Python's: klog verbosity levels and the rate-limited log of
scheduling errors.

klog's ``V(n).Info`` is logged here at :func:`v` ``(n)`` = ``INFO - n`` (V(0) is INFO, V(10)
DEBUG), so a logger set to ``v(4)`` shows what ``kube-scheduler -v=4`` shows.  Nothing here
configures a handler: only ``kubesched run`` does (:func:`kubesched.service.configure_logging`),
so a simulation prints none of this.

:class:`ErrorLog` is where a pod's scheduling error is logged (``Error scheduling pod; retrying``,
``schedule_one.go``), with the plugin, its extension point and the plugin's traceback when a
plugin raised.  A pod retried for hours with the same error would log it at every attempt; so:

- a distinct (pod, plugin, extension point, error) is logged the first time, with the traceback;
- the same again is counted, not logged, for :attr:`ErrorLog.repeat_every` seconds; the next one
  after that is logged without the traceback, with ``suppressed=N`` (how many were not logged);
- every line takes a token from a bucket of :attr:`ErrorLog.burst` tokens refilled at
  :attr:`ErrorLog.per_second`; a line without a token is dropped and counted, and the next line
  logged says ``dropped=N``.

It costs nothing until something fails, and at a failure with no handler anywhere (a
simulation) one ``hasHandlers()``.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from kubesched.api._objects import Pod
    from kubesched.runtime._status import Status

__all__ = ["ErrorLog", "PluginFailure", "v"]


def v(level: int) -> int:
    """The Python logging level of klog's ``V(level)``: ``INFO - level`` (V(10) is DEBUG)."""
    return logging.INFO - max(0, min(level, 10))


class PluginFailure(Exception):
    """The :attr:`~kubesched.runtime._status.Status.error` of a plugin that raised: which plugin,
    at which extension point, and what it raised (:attr:`error`, with its traceback)."""

    def __init__(self, plugin: str, point: str, error: BaseException) -> None:
        super().__init__(str(error))
        self.plugin = plugin
        self.point = point
        self.error = error


def _q(value: str) -> str:
    """A klog structured value: double-quoted, escaped."""
    return json.dumps(value, ensure_ascii=False)


class ErrorLog:
    """The error lines of one profile's pods, rate-limited (the module's docstring says how)."""

    repeat_every = 300.0
    """Seconds during which the same error of the same pod is counted, not logged."""
    burst = 10
    """Lines that may be logged at once (the bucket's size)."""
    per_second = 1.0
    """Tokens added to the bucket per second."""
    max_keys = 4096
    """Distinct errors remembered (the least recently seen forgotten first)."""

    def __init__(self, logger: logging.Logger | None = None, *, now: Callable[[], float] | None = None) -> None:
        """``logger``: where the lines go (``kubesched``); ``now``: the clock (anyio's)."""
        self.log = logger or logging.getLogger("kubesched")
        self._clock = now
        self._seen: OrderedDict[tuple[str, ...], list[float]] = OrderedDict()  # key -> [logged at, suppressed]
        self._tokens = float(self.burst)
        self._refilled: float | None = None
        self.dropped = 0
        """Lines dropped by the bucket since a line was last logged."""

    def failed(self, pod: Pod, status: Status, message: str = "Error scheduling pod; retrying") -> None:
        """Log ``status`` (an Error) of ``pod``: ``message`` with the error, the pod, and the plugin,
        extension point and traceback when a plugin raised."""
        if not self.log.isEnabledFor(logging.ERROR) or not self.log.hasHandlers():
            return
        err = status.error
        failure = err if isinstance(err, PluginFailure) else None
        plugin = failure.plugin if failure is not None else status.plugin
        point = failure.point if failure is not None else ""
        raised = failure.error if failure is not None else err
        text = status.message
        key = (pod.metadata.uid or pod.key, plugin, point, type(raised).__name__ if raised else "", text)
        now = self._now()
        seen = self._seen.get(key)
        if seen is not None:
            self._seen.move_to_end(key)
            if now - seen[0] < self.repeat_every:
                seen[1] += 1
                return
        if not self._take(now):
            self.dropped += 1
            return
        line = f"{message} err={_q(text)} pod={_q(pod.key)}"
        if plugin:
            line += f" plugin={_q(plugin)}"
        if point:
            line += f" extensionPoint={_q(point)}"
        exc_info: BaseException | None = None  # the traceback: a plugin's exception, the first time
        if seen is not None:
            line += f" suppressed={int(seen[1])}"
            seen[:] = [now, 0]
        else:
            self._seen[key] = [now, 0]
            if len(self._seen) > self.max_keys:
                self._seen.popitem(last=False)
            if failure is not None:
                exc_info = failure.error
        if self.dropped:
            line += f" dropped={self.dropped}"
            self.dropped = 0
        self.log.error("%s", line, exc_info=exc_info)

    def _take(self, now: float) -> bool:
        """A token from the bucket, if there is one."""
        if self._refilled is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._refilled) * self.per_second)
        self._refilled = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def _now(self) -> float:
        if self._clock is not None:
            return self._clock()
        try:
            return anyio.current_time()
        except RuntimeError:  # no event loop: a Framework used on its own
            return 0.0
