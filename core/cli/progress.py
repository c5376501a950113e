"""A progress line on stderr for long runs (``simulate``, ``compare``, ``bench``, ``snapshot``).

On a terminal, rich redraws the line from its own refresh thread, four times a second, and the
line disappears when the run ends.  Without a terminal (a pipe, CI) a run longer than 10 s of
wall time writes a plain line every 10 s (``kubesched simulate: virtual time 0:20:00 / 1:00:00,
40 pods scheduled / 120``), no control characters; a shorter run writes nothing.
``KUBESCHED_PROGRESS_EVERY`` sets that period in seconds (0: never).  Updating is two attribute
stores either way (the run's hot path may call it per event).
"""

from __future__ import annotations

import os
import sys
import threading
from types import TracebackType
from typing import IO, Any

STYLE_DONE = "green"


class Progress:
    """``with Progress("simulate", total_time=3600, total_pods=n) as p: ... p.update(t, k)``."""

    def __init__(
        self,
        what: str,
        *,
        total_time: float | None = None,
        total_pods: int | None = None,
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        time_label: str = "virtual time",
        width: int | None = None,
    ) -> None:
        self.width = width
        self.what = what
        self.time_label = time_label
        self.total_time = total_time
        self.total_pods = total_pods
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _isatty(self.stream) if enabled is None else enabled
        self.every = _plain_every() if enabled is None and not self.enabled else 0.0
        """Seconds between the plain lines written without a terminal (0: none)."""
        self.virtual = 0.0
        self.scheduled = 0
        self._live: Any = None
        self._stop: threading.Event | None = None
        self._ticker: threading.Thread | None = None

    @property
    def active(self) -> bool:
        """Whether the run should report its progress here (a terminal, or the plain lines)."""
        return self.enabled or self.every > 0

    def update(self, virtual: float | None = None, scheduled: int | None = None) -> None:
        """Time reached (virtual seconds, or wall seconds for bench) and pods scheduled so far."""
        if virtual is not None:
            self.virtual = virtual
        if scheduled is not None:
            self.scheduled = scheduled

    def __call__(self, virtual: float, scheduled: int) -> None:
        self.virtual = virtual
        self.scheduled = scheduled

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream, force_terminal=True, width=self.width)
            self._live = Live(self, console=console, refresh_per_second=4, transient=True)
            self._live.start()
        elif self.every > 0:
            self._stop = threading.Event()
            self._ticker = threading.Thread(target=self._plain_lines, args=(self._stop,), daemon=True)
            self._ticker.start()
        return self

    def _plain_lines(self, stop: threading.Event) -> None:
        while not stop.wait(self.every):
            try:
                print(self.plain_line(), file=self.stream, flush=True)
            except (OSError, ValueError):  # the stream is gone: the run goes on without it
                return

    def plain_line(self) -> str:
        """The line written without a terminal."""
        if self.total_time:
            when = f"{self.time_label} {_hms(self.virtual)} / {_hms(self.total_time)}"
        else:
            when = f"{self.time_label} {_hms(self.virtual)}"
        pods = f"{self.scheduled} pods scheduled" + (f" / {self.total_pods}" if self.total_pods else "")
        return f"kubesched {self.what}: {when}, {pods}"

    def __exit__(
        self, typ: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._stop is not None and self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            self._stop = self._ticker = None

    def __rich__(self) -> Any:
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        row: list[Any] = [f"[bold]{self.what}[/bold]"]
        if self.total_time:
            row.append(ProgressBar(total=self.total_time, completed=min(self.virtual, self.total_time), width=30))
            row.append(f"{self.time_label} {_hms(self.virtual)} / {_hms(self.total_time)}")
        else:
            row.append(f"{self.time_label} {_hms(self.virtual)}")
        row.append(f"{self.scheduled} pods scheduled" + (f" / {self.total_pods}" if self.total_pods else ""))
        grid.add_row(*row)
        return grid


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _plain_every() -> float:
    raw = os.environ.get("KUBESCHED_PROGRESS_EVERY", "10")
    try:
        every = float(raw)
    except ValueError:
        return 10.0
    return every if every > 0 else 0.0


def _isatty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class SnapshotProgress(Progress):
    """``kubesched snapshot``'s line: the kind being read and how many objects so far (a
    :class:`kubesched.snapshot.Progress`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("snapshot", **kwargs)
        self.kind = ""
        self.read = 0
        self.written = 0

    def __rich__(self) -> Any:
        from rich.table import Table

        grid = Table.grid(padding=(0, 1))
        grid.add_row("[bold]snapshot[/bold]", self.kind, f"{self.read:,} objects read, {self.written:,} written")
        return grid
