"""``transports/`` uses the engine only through its public face.

A transport is what a third party could write: it may import ``kubesched`` and the public modules
and packages below it (``kubesched.api``, ``kubesched.validation``, ...), never a private one
(a module whose dotted name has a component starting with ``_`` below ``kubesched``, as
``kubesched._errors`` or ``kubesched.api._objects``).  Its own private modules
(``kubesched.transports.fake._store``) are its own business.  Every spelling counts: ``import``,
``from ... import`` (relative ones resolved), ``from kubesched import _errors``,
``importlib.import_module("kubesched._x")`` and an attribute reach ``kubesched._x`` — at module
level, under ``TYPE_CHECKING`` or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TRANSPORTS = ROOT / "transports"
OWN = "kubesched.transports"


def _package_of(path: Path) -> str:
    return ".".join([OWN, *path.relative_to(TRANSPORTS).parts[:-1]])


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def targets_of(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``tree`` imports or reaches below ``kubesched``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
        ):
            found.append((node.lineno, node.args[0].value))
        elif isinstance(node, ast.Attribute) and (name := _dotted(node)) is not None:
            found.append((node.lineno, name))
    return [(line, name) for line, name in found if name == "kubesched" or name.startswith("kubesched.")]


def is_private_engine(name: str) -> bool:
    """A name below ``kubesched`` with a private component, outside ``kubesched.transports``."""
    if name == OWN or name.startswith(OWN + "."):
        return False
    return any(_private(part) for part in name.split(".")[1:])


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for line, name in targets_of(tree, _package_of(path))
        if is_private_engine(name)
    ]


def test_no_transport_module_imports_a_private_engine_module() -> None:
    files = sorted(TRANSPORTS.rglob("*.py"))
    assert len(files) > 30
    found = [hit for path in files for hit in private_imports(path)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("from kubesched._errors import ConfigError", id="from private module"),
        pytest.param("from kubesched.api._objects import Pod", id="from private module of a package"),
        pytest.param("from kubesched import _errors", id="private module by name"),
        pytest.param("import kubesched._objects as o", id="import"),
        pytest.param("from ...api._objects import Pod", id="relative, out of transports"),
        pytest.param("def f():\n    from kubesched._errors import ConfigError", id="inside a function"),
        pytest.param("import importlib\nimportlib.import_module('kubesched._errors')", id="import_module"),
        pytest.param("import kubesched\nkubesched._errors.ConfigError", id="attribute reach"),
    ],
)
def test_every_spelling_is_found(source: str) -> None:
    tree = ast.parse(source)
    hits = [n for _, n in targets_of(tree, "kubesched.transports.fake") if is_private_engine(n)]
    assert hits, source


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("from kubesched import ConfigError, Pod", id="the top-level face"),
        pytest.param("from kubesched.api import Pod, convert", id="a public package"),
        pytest.param("from ._store import Store", id="its own private module"),
        pytest.param("from kubesched.transports.kube._client import ApiClient", id="another transport's"),
        pytest.param("import kubesched\nkubesched.__version__", id="dunder"),
    ],
)
def test_public_and_own_imports_pass(source: str) -> None:
    tree = ast.parse(source)
    assert [n for _, n in targets_of(tree, "kubesched.transports.fake") if is_private_engine(n)] == []
