"""Where a command's output goes: atomically into a regular file, directly into anything else.

Every command that writes a file (``simulate --report/--metrics/--html``, ``generate --out``,
``trace --out``, ``whatif --output``, ``snapshot -o``) opens it with :func:`open_output`:

    "-"                      standard output (left open)
    a FIFO, a device, ...    opened and written as it is (``/dev/null``, ``/dev/stdout``, a pipe):
                             never replaced by a regular file, never removed
    a regular file, or none  written to a temporary file beside it, renamed over it only once the
                             whole output is written: a failed command leaves the file that was
                             there before (or none) untouched
    a symlink                followed: its target is what gets written (atomically if regular)

On failure only what the command itself created (the temporary file) is removed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def open_output(target: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A text stream for ``target`` (see the module's table); raises ``OSError`` as ``open`` does."""
    if str(target) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(os.path.realpath(target))
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "w", encoding="utf-8") as direct:
            yield direct
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
            yield out
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_output(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` as :func:`open_output` does."""
    with open_output(target) as out:
        out.write(text)
