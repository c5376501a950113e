"""The engine never imports the applications (docs/architecture.md, Rooms).

``kubesched.cli`` (``core/cli/``) may import anything; every other module of ``core/``, and
``plugins/`` and ``transports/``, must not import ``kubesched.cli`` in any spelling: ``import
kubesched.cli...``, ``from kubesched.cli... import``, ``from kubesched import cli``, relative
``from .cli``/``from ..cli``/``from . import cli``, or ``importlib.import_module("kubesched.cli")``,
at module level or inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from _sources import GROUP, parsed

pytestmark = GROUP

ROOT = Path(__file__).resolve().parents[2]
# folder -> import package, as pyproject's package-dir maps them
PACKAGES = {"core": "kubesched", "plugins": "kubesched.plugins", "transports": "kubesched.transports"}
APPLICATIONS = "kubesched.cli"
CLI_DIR = ROOT / "core" / "cli"


def _engine_files() -> list[Path]:
    files = []
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if not path.is_relative_to(CLI_DIR):
                files.append(path)
    return files


def _package_of(path: Path) -> str:
    """The package a module's relative imports start from (its folder's import name)."""
    rel = path.relative_to(ROOT)
    return ".".join([PACKAGES[rel.parts[0]], *rel.parts[1:-1]])


def _is_applications(name: str) -> bool:
    return name == APPLICATIONS or name.startswith(APPLICATIONS + ".")


def imports_of_applications(source: str | ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, what) for every import of ``kubesched.cli`` in ``source`` (a module of ``package``)."""
    found = []
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [module, *(f"{module}.{a.name}" for a in node.names)]
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
            targets = [node.args[0].value]
        hit = next((t for t in targets if _is_applications(t)), None)
        if hit is not None:
            found.append((node.lineno, hit))
    return found


ENGINE = _engine_files()


def test_the_engine_is_all_there() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in ENGINE}
    assert {"core/__init__.py", "core/testing.py", "plugins/__init__.py", "transports/__init__.py"} <= names
    assert not any(n.startswith("core/cli/") for n in names)


def test_the_engine_never_imports_the_applications() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {what}"
        for path in ENGINE
        for line, what in imports_of_applications(parsed(path), _package_of(path))
    ]
    assert not bad, "the engine must not import kubesched.cli:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "package"),
    [
        pytest.param("import kubesched.cli", "kubesched", id="import"),
        pytest.param("import kubesched.cli.simulate as s", "kubesched", id="import submodule as"),
        pytest.param("from kubesched.cli.manifests import load_manifests", "kubesched", id="from absolute"),
        pytest.param("from kubesched import cli", "kubesched.plugins", id="from package import cli"),
        pytest.param("from .cli import main", "kubesched", id="relative from core"),
        pytest.param("from . import cli", "kubesched", id="relative package import"),
        pytest.param("from ..cli.run import RunOptions", "kubesched.plugins", id="relative from plugins"),
        pytest.param("from ... import cli", "kubesched.transports.apiserver", id="relative from transports"),
        pytest.param("def f():\n    from .cli import simulate\n", "kubesched", id="inside a function"),
        pytest.param("import importlib\nimportlib.import_module('kubesched.cli.bench')", "kubesched", id="importlib"),
    ],
)
def test_every_spelling_is_caught(source: str, package: str) -> None:
    assert imports_of_applications(source, package)


@pytest.mark.parametrize(
    ("source", "package"),
    [
        pytest.param("from . import client", "kubesched", id="another module"),
        pytest.param("from .cli import x", "kubesched.plugins", id="a plugin's own cli module"),
        pytest.param("import kubesched.client", "kubesched", id="kubesched.client"),
        pytest.param("from kubesched import clinic", "kubesched", id="a longer name"),
    ],
)
def test_other_imports_pass(source: str, package: str) -> None:
    assert not imports_of_applications(source, package)
