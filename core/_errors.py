"""The exception hierarchy: bad input, and the transport's typed failures (one module, as httpx)."""

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
