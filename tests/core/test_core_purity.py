"""Core code never names asyncio or trio, and takes time only from anyio (so a simulation can run in virtual time)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from _sources import GROUP, parsed

pytestmark = GROUP

CORE = Path(__file__).resolve().parents[2] / "core"
# the applications too, but the fake API server, which serves in real time, and the sweep driver,
# which reports the wall time its Dask tasks took (never part of a simulation's result)
REAL_TIME = {"service/_fake_apiserver.py", "experiments/_sweep.py"}
FILES = sorted(p for p in CORE.rglob("*.py") if p.relative_to(CORE).as_posix() not in REAL_TIME)

FORBIDDEN_MODULES = {"asyncio", "trio", "sniffio"}
FORBIDDEN_CALLS = {("time", "time"), ("time", "monotonic"), ("time", "perf_counter"), ("datetime", "now"), ("datetime", "utcnow")}


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(CORE).as_posix() for p in FILES])
def test_core_module_is_backend_neutral_and_clock_free(path: Path) -> None:
    tree = parsed(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or "").split(".")[0]}
        else:
            names = set()
        assert not names & FORBIDDEN_MODULES, f"{path.name}:{node.lineno} imports {names & FORBIDDEN_MODULES}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if isinstance(target, ast.Name) and (target.id, node.func.attr) in FORBIDDEN_CALLS:
                raise AssertionError(f"{path.name}:{node.lineno} calls {target.id}.{node.func.attr}()")
