"""The project's Python files, each read and parsed once per test process.

The structure tests (class and file lengths, layers, import cycles, the public API, core purity)
all walk the same 170 files; parsing them is two seconds each time.  Those modules share this
cache and one xdist group (:data:`GROUP`), so the files are parsed once in a run.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

GROUP = pytest.mark.xdist_group("sources")


@functools.cache
def parsed(path: Path) -> ast.Module:
    """``path``'s syntax tree (the structure tests only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
