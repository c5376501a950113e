"""No file over ~800 lines without a reason written at its top (the rooms issue).

A long module is a smell unless it is one unit on purpose (an upstream table ported row by row,
a plugin kept in one file): such a file says so in its opening docstring with a line that starts
``Why one file:``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 800
MARKER = "Why one file:"


def _python_files() -> list[Path]:
    files: list[Path] = []
    for top in ("core", "plugins", "transports", "tests", "examples"):
        files.extend(p for p in (ROOT / top).rglob("*.py") if "build" not in p.parts)
    return sorted(files)


def _has_reason(text: str) -> bool:
    head = "\n".join(text.splitlines()[:60])
    return MARKER in head


def test_the_check_sees_a_reason_only_at_the_top() -> None:
    assert _has_reason('"""A module.\n\nWhy one file: upstream keeps it together.\n"""\n')
    assert not _has_reason('"""A module."""\n' + "x = 1\n" * 100 + "# Why one file: too late\n")


def test_a_long_file_says_why_at_its_top() -> None:
    silent = []
    for path in _python_files():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > LIMIT and not _has_reason(text):
            silent.append(f"{path.relative_to(ROOT)} ({lines} lines)")
    assert not silent, f"long files without '{MARKER}' at their top: {silent}"
