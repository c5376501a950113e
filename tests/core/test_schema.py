"""``core/api/_schema.json`` is what ``tests/tools/schema_gen.py`` makes of the official client's models
(re-run it after upgrading the ``kubernetes`` client), and the walk finds unknown fields at every
depth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched.api._schema import strict_error, unknown_fields

ROOT = Path(__file__).resolve().parents[2]


def build() -> dict:  # type: ignore[type-arg]
    """``tests/tools/schema_gen.build`` (loaded by path: ``tests`` is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("schema_gen", ROOT / "tests" / "tools" / "schema_gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()  # type: ignore[no-any-return]


def test_the_committed_schema_is_the_generated_one() -> None:
    committed = json.loads((ROOT / "core" / "api" / "_schema.json").read_text())
    assert committed == json.loads(json.dumps(build()))


@pytest.mark.parametrize(
    ("api", "kind", "obj", "want"),
    [
        ("v1", "Pod", {"metadata": {"name": "p", "labelz": {}}}, ["metadata.labelz"]),
        ("v1", "Pod", {"spec": {"containers": [{"name": "c"}, {"nmae": "d"}]}}, ["spec.containers[1].nmae"]),
        ("v1", "Pod", {"spec": {"affinity": {"nodeAffinity": {"requiredDuringScheduling": {}}}}},
         ["spec.affinity.nodeAffinity.requiredDuringScheduling"]),
        ("v1", "Pod", {"status": {"phase": "Running", "containerStatuses": [{"name": "c", "ready": True}]}}, []),
        ("v1", "Node", {"spec": {"taints": [{"key": "k", "effect": "NoSchedule", "valu": "x"}]}}, ["spec.taints[0].valu"]),
        ("apps/v1", "Deployment", {"spec": {"template": {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}}},
         ["spec.template.spec.containers[0].imagee"]),
        ("scheduling.x-k8s.io/v1alpha1", "PodGroup", {"spec": {"minMember": 2, "minMembers": 3}}, ["spec.minMembers"]),
        ("v1", "ConfigMap", {"whatever": 1}, []),  # a kind outside the schema: not checked here
    ],
)
def test_unknown_fields(api: str, kind: str, obj: dict, want: list[str]) -> None:  # type: ignore[type-arg]
    assert unknown_fields({"apiVersion": api, "kind": kind, **obj}, api, kind) == want


def test_strict_error_lists_every_field_as_the_api_server() -> None:
    assert strict_error(["spec.a", "spec.b[0].c"]) == (
        'strict decoding error: unknown field "spec.a", unknown field "spec.b[0].c"'
    )
