"""What every command prints alike: the program's name and the warning line on stderr.

The meaning of the options several commands share (``--config`` with ``--feature-gates``,
``--validate``, ``--until``) is the library's: :mod:`kubesched.scenario`.
"""

from __future__ import annotations

import sys

PROG = "kubesched"


def warn_line(line: str) -> None:
    """``kubesched: warning: LINE`` on stderr (what the library's ``warn`` callbacks are given)."""
    print(f"{PROG}: warning: {line}", file=sys.stderr)


__all__ = ["PROG", "warn_line"]
