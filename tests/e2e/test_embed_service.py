"""examples/embed_service.py: a service embedding the scheduler, on both backends, in virtual time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import anyio
import pytest

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "embed_service.py"

PLACEMENTS = {
    "search-1": "node-a",  # TeamAffinity: the search team's node
    "ads-1": "node-b",  # the ads team's node
    "batch-1": "node-c",  # no team: the emptiest node
    "search-2": "node-a",  # second wave, 30 s later
    "huge": None,  # 16 cpu fits no node
}


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("embed_service_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_service_places_pods_with_its_own_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example()
    start = anyio.current_time()
    assert await example.main() == PLACEMENTS
    assert anyio.current_time() - start == pytest.approx(30.0, abs=0.5)  # virtual seconds
    out = capsys.readouterr().out
    assert "t= 30.0s  bound search-2 to node-a" in out
    assert "huge       -> Pending" in out


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_runs_as_a_script(backend: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--backend", backend],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == [
        "t=  0.0s  bound search-1 to node-a",
        "t=  0.0s  bound ads-1 to node-b",
        "t=  0.0s  bound batch-1 to node-c",
        "t= 30.0s  bound search-2 to node-a",
    ]
    assert lines[4:] == [f"{pod:<10} -> {node or 'Pending'}" for pod, node in PLACEMENTS.items()]
