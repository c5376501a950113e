"""No class over 400 lines in ``core/``, ``plugins/`` or ``transports/`` (STYLE: split by responsibility).

A class is counted from its ``class`` line to its last line (``ast``'s ``end_lineno``), nested
classes on their own as well.  The classes over the limit when this test was written are listed
in :data:`KNOWN` with their length then: an entry may not grow, and must be deleted once its
class is back under the limit (the test fails until it is).  The list is to shrink to nothing:
split a listed class (a stage, a helper moved out as a module function), never raise its number.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

from _sources import GROUP, parsed

pytestmark = GROUP

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("core", "plugins", "transports")
LIMIT = 400

# "path::Class" -> its length in lines when listed; TO BE REMOVED, each
KNOWN: dict[str, int] = {}


def class_lengths(source: str | ast.AST) -> Iterator[tuple[str, int]]:
    """(qualified name, lines from the ``class`` line to the last) of every class in ``source``
    (text, or its tree)."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                assert child.end_lineno is not None
                yield name, child.end_lineno - child.lineno + 1
                yield from visit(child, name + ".")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                yield from visit(child, prefix)

    yield from visit(ast.parse(source) if isinstance(source, str) else source, "")


@functools.cache
def lengths() -> dict[str, int]:
    """``path::Class`` -> length, for every class of the checked folders."""
    found: dict[str, int] = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "build" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            for name, n in class_lengths(parsed(path)):
                found[f"{rel}::{name}"] = n
    return found


def test_the_count_runs_from_the_class_line_to_its_last_line() -> None:
    source = (
        "@decorator\n"
        "class A:\n"
        "    x = 1\n"
        "\n"
        "    class B:\n"
        "        y = 2\n"
        "\n"
        "    def f(self):\n"
        "        class C:\n"
        "            pass\n"
        "        return C\n"
        "z = 3\n"
    )
    assert dict(class_lengths(source)) == {"A": 10, "A.B": 2, "A.f.<locals>.C": 2}


def test_no_class_is_over_the_limit_or_a_known_one_longer() -> None:
    found = lengths()
    new = [f"{k} ({n} lines)" for k, n in sorted(found.items()) if n > LIMIT and k not in KNOWN]
    assert not new, f"classes over {LIMIT} lines: {new}; split them (a helper as a module function...)"
    grown = [f"{k}: {found[k]} lines, listed at {n}" for k, n in KNOWN.items() if found.get(k, 0) > n]
    assert not grown, f"these KNOWN classes grew; they may only shrink: {grown}"


def test_every_known_class_is_still_over_the_limit() -> None:
    found = lengths()
    done = [f"{k} ({found.get(k, 'gone')})" for k in KNOWN if found.get(k, 0) <= LIMIT]
    assert not done, f"these KNOWN classes are {LIMIT} lines or fewer now (or gone): delete their entries: {done}"
