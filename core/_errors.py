"""The exception hierarchy: bad input, and the transport's typed failures (one module, as httpx).

Every exception kubesched raises on purpose derives from :class:`KubeschedError`, so that one
``except KubeschedError`` in a service catches them all.  The input and transport errors are
here; the others live beside the code that raises them, keeping a second base where callers
catch them by it (``QuantityError`` is still a ``ValueError``):

    KubeschedError
    ├── ConfigError                     bad input (manifests, configurations, plugin args)
    ├── TransportError                  the transport's typed failures
    │   ├── ConflictError, NotFoundError, UnavailableError
    │   └── GoneError                   (kubesched.transports.kube: 410, the watch must relist)
    ├── PluginError                     a profile that cannot be built (runtime/_plugins.py)
    ├── FitError                        the pod fits no node (runtime/_status.py)
    ├── QuantityError (also ValueError) not a Kubernetes quantity (api/_resources.py)
    ├── VolumeError                     the storage helpers' errors (api/_pvhelpers.py)
    ├── ExtenderError                   an HTTP extender failed (runtime/_extender.py)
    └── LeaderElectionLost              (kubesched.transports.kube)

Task groups wrap what their tasks raise in an ExceptionGroup; the public entry points raise the
plain exception instead (:func:`plain_exception` says which).
"""

from __future__ import annotations


class KubeschedError(Exception):
    """Base of every kubesched exception."""


class ConfigError(KubeschedError):
    """Invalid input: a manifest, a configuration, plugin args.  ``str()`` is one clear line."""

    def __init__(self, message: str, *, field: str = "", source: str = "") -> None:
        self.message = message
        self.field = field
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ", ".join(p for p in (self.source, self.field) if p)
        return f"{where}: {self.message}" if where else self.message

    def at(self, *, field: str = "", source: str = "") -> ConfigError:
        """The same error with an outer field path / source prefixed."""
        f = ".".join(p for p in (field, self.field) if p) if field else self.field
        return ConfigError(self.message, field=f, source=source or self.source)


class TransportError(KubeschedError):
    """A write or watch failed at the transport."""


class ConflictError(TransportError):
    """409: the object changed (e.g. a pod already bound, a UID precondition failed)."""


class NotFoundError(TransportError):
    """404: the object does not exist (any more)."""


class UnavailableError(TransportError):
    """The API could not be reached or answered 5xx; the call may be retried."""


def plain_exception(
    group: BaseExceptionGroup[BaseException], *, keep: BaseException | None = None
) -> BaseException | None:
    """The one plain exception that a task group's ``group`` stands for, or None to let the group
    go on as it is.

    A task group (anyio, trio) wraps what its tasks raise in an ExceptionGroup, even a single
    error; kubesched's public entry points (``Scheduler.run``, the transports' ``async with``,
    ``Simulation.run``, :func:`kubesched.testing.scheduler_for`) raise plain exceptions instead,
    by this rule:

    - the leaves are the exceptions of ``group`` and of the groups nested in it, in order; an
      exception the caller's own code raised (``keep``: what the block of an ``async with``
      raised) is one leaf, even if it is an ExceptionGroup of its own;
    - if a leaf is a cancellation (trio's ``Cancelled``, asyncio's ``CancelledError``: any
      BaseException but KeyboardInterrupt and SystemExit) the group goes on unchanged (None),
      for the event loop's cancel scopes to find it;
    - one leaf: that exception;
    - several: the first KeyboardInterrupt or SystemExit (the user stops the program), else the
      first :class:`KubeschedError`, else the first leaf; with one note per other leaf ("also
      raised: TypeError: ...") so that none goes unseen.

    The caller raises the exception outside its ``except`` block, so that the group does not
    become its ``__context__``::

        error = None
        try:
            async with anyio.create_task_group() as tg:
                ...
        except BaseExceptionGroup as group:
            if (error := plain_exception(group)) is None:
                raise
        if error is not None:
            raise error
    """
    kept = _leaves(keep) if isinstance(keep, BaseExceptionGroup) else None
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if not isinstance(exc, BaseExceptionGroup):
            leaves.append(exc)
        elif keep is not None and (exc is keep or (kept is not None and _same(_leaves(exc), kept))):
            # ``keep`` itself, or the copy trio's nursery makes of it (split off its
            # cancellations: the same leaves, the same traceback)
            leaves.append(keep)
        else:
            stack.extend(reversed(exc.exceptions))
    if not all(isinstance(e, Exception | KeyboardInterrupt | SystemExit) for e in leaves):
        return None
    first = next(
        (e for e in leaves if not isinstance(e, Exception)),
        next((e for e in leaves if isinstance(e, KubeschedError)), leaves[0]),
    )
    for other in leaves:
        note = f"also raised: {type(other).__name__}: {other}"
        if other is not first and note not in getattr(first, "__notes__", ()):
            first.add_note(note)
    return first


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


def _same(a: list[BaseException], b: list[BaseException]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
