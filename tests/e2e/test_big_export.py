"""Big ``kubectl get -o yaml`` exports load fast (issue 38 item 4).

``tests/tools/kubectl_export.py`` writes what kubectl prints for a cluster (nodes and pods with
managedFields, probes, env, sidecars); at 500 nodes and 13,700 pods it is the export measured in
the README.  Here a small one: the events-built documents are exactly what the bounded loader
builds, the List's items are streamed, and ``simulate`` takes it as YAML, as documents and as
JSON with the same result.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import cli
from kubesched.api import _yamlstream
from kubesched.api._decoding import MAX_DEPTH, BoundedLoader
from kubesched.scenario._manifests import load_manifests

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("kubectl_export", ROOT / "tests" / "tools" / "kubectl_export.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _export(form: str, nodes: int = 4, pods: int = 60) -> str:
    out = io.StringIO()
    _generator().write(out, nodes, pods, form=form)
    return out.getvalue()


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same types at every depth (1 == True is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b or (a != a and b != b))


@pytest.mark.parametrize("form", ["list", "documents"])
def test_events_build_what_the_bounded_loader_builds(form: str) -> None:
    text = _export(form)
    assert _same(list(_yamlstream.documents(text, MAX_DEPTH)), list(yaml.load_all(text, Loader=BoundedLoader)))


SCALARS = """\
a: yes
b: "1"
c: 010
d: 1e3
e: ~
f: .inf
g: 2024-01-01
h: null
i: 0x10
j: 1_000
k: On
l:
m: [x, 2, "3", '4', 1.5e3, 1:30, 0b101, -.inf, +.5, "true", True, FALSE, n, Y]
o: 2024-01-01 10:00:00
p: {1: 2, false: x, 1.5: y}
q: |
  literal 12
"""


def test_plain_scalars_resolve_as_pyyaml_safe_loader() -> None:
    """YAML 1.1 as PyYAML's safe loader has it: what kubesched took before the fast path."""
    assert _same(list(_yamlstream.documents(SCALARS, MAX_DEPTH)), list(yaml.load_all(SCALARS, Loader=BoundedLoader)))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: &x {b: 1}\nc: *x\n", id="alias"),
        pytest.param("a: !!str 12\n", id="explicit tag"),
        pytest.param("a: 1\na: 2\n", id="duplicate key"),
        pytest.param("<<: {a: 1}\nb: 2\n", id="merge key"),
        pytest.param("? [a]\n: 1\n", id="sequence as a key"),
        pytest.param("a: " + "[" * 101 + "]" * 101 + "\n", id="nested past the bound"),
        pytest.param("a: [1\n", id="syntax error"),
    ],
)
def test_what_the_fast_path_leaves_to_the_bounded_loader(text: str) -> None:
    with pytest.raises(_yamlstream.Unusual):
        list(_yamlstream.documents(text, MAX_DEPTH))


def test_a_list_is_streamed_item_by_item(tmp_path: Path) -> None:
    text = _export("list")
    assert _yamlstream.single_list(text) == ("v1", "List")
    seen: list[int] = []
    roots = list(_yamlstream.documents(text, MAX_DEPTH, stream_items=("v1", "List"), on_item=lambda i, _: seen.append(i)))
    assert seen == list(range(64)) and roots == [{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}]
    path = tmp_path / "export.yaml"
    path.write_text(text)
    streamed = load_manifests([str(path)])
    assert len(streamed) == 64
    assert streamed[0].label.startswith(f"{path}: document 1 items[0] (Node ip-10-0-0-")
    assert streamed[-1].label.startswith(f"{path}: document 1 items[63] (Pod ")


def test_a_list_whose_kind_is_not_the_guess_is_decoded_the_ordinary_way(tmp_path: Path) -> None:
    """``single_list`` guesses from the margin; the document decides (here a Pod whose
    ``items`` is a field: strict decoding's error, as without the fast path)."""
    text = "apiVersion: v1\nitems:\n- a\nkind: PodList\n"
    with pytest.raises(_yamlstream.Unusual):
        list(_yamlstream.documents(text.replace("PodList", "Pod") + "x: |\n kind: PodList\n", MAX_DEPTH,
                                   stream_items=("v1", "PodList"), on_item=lambda i, _: None))


def _simulate(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    assert cli.main(["simulate", str(path), "--output", "json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_yaml_documents_and_json_give_one_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = []
    for form, name in (("list", "export.yaml"), ("documents", "docs.yaml"), ("json", "export.json")):
        path = tmp_path / name
        path.write_text(_export(form))
        results.append(_simulate(capsys, path))
    assert results[0] == results[1] == results[2]
    assert len(results[0]["pods"]) == 60 and all(p["phase"] == "Running" for p in results[0]["pods"])
