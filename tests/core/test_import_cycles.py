"""Modules never import each other in a circle (docs/architecture.md, Rooms).

The graph: every module of ``kubesched`` (``core/``, ``core/cli/``), ``kubesched.plugins`` and
``kubesched.transports``, and an edge for every import of one of them in any spelling — at module
level, under ``TYPE_CHECKING``, or inside a function (deferring an import hides a circle from
the interpreter, not from a reader).  ``import a.b`` and ``from a import b`` name the module
``a.b`` (or ``a`` when ``b`` is not a module), never the packages above it.  A cycle is a
strongly connected component of more than one module.

There are none: the cycles that predated this test are gone (the last ones, in
``transports/apiserver``, by moving the shared types down and typing what a module needs of the
one above it as a Protocol), and :data:`KNOWN` is empty.  The test fails on any cycle not listed
in it, and on a listed one that no longer exists (delete its entry); a cycle is removed, never
listed.
"""

from __future__ import annotations

import ast
import functools
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

from _sources import GROUP, parsed

pytestmark = GROUP

ROOT = Path(__file__).resolve().parents[2]
# folder -> import package, as pyproject's package-dir maps them
PACKAGES = {"core": "kubesched", "plugins": "kubesched.plugins", "transports": "kubesched.transports"}

_API = "kubesched.transports.apiserver."
KNOWN: frozenset[frozenset[str]] = frozenset()
"""The cycles that remain: none."""


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "build" in path.parts:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            found[".".join([package, *parts])] = (path, is_package)
    return found


def imports_of(source: str | ast.AST, name: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that ``source`` (module ``name``) imports, in any spelling."""
    modules = set(known)
    package = name if is_package else name.rpartition(".")[0]
    targets: list[str] = []
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Import):
            targets.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for a in node.names:
                sub = f"{module}.{a.name}"
                targets.append(sub if sub in modules else module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            targets.append(node.args[0].value)
    out: set[str] = set()
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)
    return out


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports (read once per test session)."""
    modules = _modules()
    return {
        name: imports_of(parsed(path), name, is_package, modules)
        for name, (path, is_package) in modules.items()
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def a_circle(graph: Mapping[str, Iterable[str]], component: frozenset[str]) -> list[str]:
    """One circle through ``component``'s first module, for the failure message."""
    start = min(component)
    came: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return [*reversed(path), start]
            if w in component and w not in came:
                came[w] = v
                queue.append(w)
    return sorted(component)


def test_the_checker_sees_every_spelling_and_circle() -> None:
    known = {"p", "p.a", "p.b", "p.c", "p.d"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "from .c import thing\n"
        "if TYPE_CHECKING:\n    import p.d\n"
        "def f():\n    from p import a\n    importlib.import_module('p.x.y')\n"
    )
    assert imports_of(source, "p.a", False, known) == {"p.b", "p.c", "p.d", "p"}
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == {frozenset({"a", "b", "c"})}
    assert a_circle(graph, frozenset({"a", "b", "c"})) == ["a", "b", "c", "a"]


def test_the_preemption_package_has_no_cycle() -> None:
    graph = import_graph()
    assert "kubesched.preemption.evaluator" in graph
    touching = [sorted(c) for c in cycles(graph) if any(m.startswith("kubesched.preemption") for m in c)]
    assert not touching


def test_no_cycle_beyond_the_known_ones() -> None:
    graph = import_graph()
    found = cycles(graph)
    new = [" -> ".join(a_circle(graph, c)) for c in found - KNOWN]
    assert not new, f"modules import each other in a circle: {new}"
    gone = [sorted(c) for c in KNOWN - found]
    assert not gone, f"these KNOWN cycles no longer exist (or changed): delete their entries: {gone}"


def test_known_cycles_are_all_in_the_apiserver() -> None:
    """Everything outside ``transports/apiserver`` is free of cycles: none may be listed again."""
    outside = [sorted(c) for c in KNOWN if not all(m.startswith(_API) for m in c)]
    assert not outside, f"a cycle outside transports/apiserver must be removed, not listed: {outside}"
