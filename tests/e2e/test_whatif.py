"""What-if recipes (docs/what-if.md) end to end on a snapshot of the fake API server: another
configuration (``compare``), drain a node, lose a zone, add pods; and the drain itself
(``kubesched.io/drain``): cordon, evictions that respect PodDisruptionBudgets and are retried
every 5 s, controllers replacing what was evicted, DaemonSet and mirror pods left alone, the same
bytes on asyncio and trio, bad input in one line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
import yaml
from test_simulate_cli import docs, node, pod
from test_snapshot import SCENARIO, serving

from kubesched import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def snap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A snapshot of the fake API server serving test_snapshot's scenario (3 nodes, n1 and n2 in
    zone a, n3 tainted; a web Deployment of 3 under a PDB of minAvailable 2, bound and pending pods)."""
    d = tmp_path_factory.mktemp("whatif")
    (d / "scenario.yaml").write_text(SCENARIO)
    with (
        anyio.from_thread.start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(serving(d / "scenario.yaml")) as server,
    ):
        assert cli.main(["snapshot", "--server", server.url, "-o", str(d / "snapshot.yaml")]) == 0
    yield d / "snapshot.yaml"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def simulated(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[dict[str, Any], str]:
    code, out, err = run(capsys, "simulate", *args)
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result, err


def whatif(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: Any) -> Path:
    overlay = tmp_path / "overlay.yaml"
    code, out, err = run(capsys, "whatif", *args, "-o", overlay)
    assert (code, out, err) == (0, "", "")
    return overlay


def pods(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in result["pods"]}


def evicted(p: dict[str, Any]) -> bool:
    return p["deleted"] and any(
        c["type"] == "DisruptionTarget" and c["reason"] == "EvictionByEvictionAPI" for c in p["conditions"]
    )


# --- the recipes, on a snapshot -----------------------------------------------------------------


def test_with_this_config_instead(snap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recipe 1: the same snapshot under the default profile and another configuration."""
    mine = ROOT / "examples" / "scenarios" / "most-allocated-config.yaml"
    code, out, err = run(capsys, "compare", snap, "--config", "default", "--config", mine, "--output", "json")
    assert code == 0, err
    variants = json.loads(out)["variants"]
    assert [v["name"] for v in variants] == ["default", "most-allocated-config.yaml"]
    assert all(v["metrics"]["pods"] == 11 for v in variants)


def test_drain_a_node(snap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recipe 2: n1 drained at 1m.  Its bare pod is evicted for good; one web replica is evicted
    and replaced at once, and the PDB (minAvailable 2 of 3) refuses the others while the
    replacement cannot run: the drain is left blocked, and the run says so."""
    overlay = whatif(capsys, tmp_path, snap, "--drain", "n1@1m")
    (doc,) = [d for d in yaml.safe_load_all(overlay.read_text()) if d]
    assert doc["kind"] == "Node" and doc["metadata"]["name"] == "n1"
    assert doc["metadata"]["annotations"] == {"kubesched.io/arrival": "1m0s", "kubesched.io/drain": "1m0s"}
    before, _ = simulated(capsys, snap)
    on_n1 = sorted(n for n, p in pods(before).items() if p["nodeName"] == "n1")
    assert on_n1 == ["db"] + sorted(n for n in pods(before) if n.startswith("web-"))

    result, err = simulated(capsys, snap, overlay)
    by_name = pods(result)
    assert evicted(by_name["db"])  # owned by nobody: gone
    web = sorted(n for n in on_n1 if n.startswith("web-"))
    assert [evicted(by_name[n]) for n in web].count(True) == 1
    assert [n for n in on_n1 if not by_name[n]["deleted"]] == [n for n in web if not evicted(by_name[n])]
    replacements = [p for n, p in by_name.items() if n.startswith("web-") and n not in before["pods"][0] and p["createdAt"] == 60.0]
    assert len(replacements) == 1 and replacements[0]["nodeName"] is None  # n1 cordoned, no room elsewhere
    assert result["summary"]["cutShort"]["reason"] == "retrying" and result["summary"]["cutShort"]["drains"] == 1
    assert "1 node drain(s) (kubesched.io/drain) not begun or with evictions a PodDisruptionBudget refused" in err


def test_lose_a_zone(snap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recipe 3: zone a (n1, n2) deleted at 2m: its pods go with it, the ReplicaSet replaces
    its replicas at once, and they wait (n3 is tainted)."""
    overlay = whatif(capsys, tmp_path, snap, "--lose-zone", "a@2m")
    annotations = [d["metadata"]["annotations"] for d in yaml.safe_load_all(overlay.read_text()) if d]
    assert annotations == [{"kubesched.io/arrival": "1m59.999s", "kubesched.io/deletion": "2m0s"}] * 2
    # seed 1: the served cluster's controllers named its pods with seed 0, and the fake cluster
    # gives a pod made again under a name the same uid, so with seed 0 a replacement would take
    # the name (and the record) of a pod it replaces
    result, _ = simulated(capsys, snap, overlay, "--until", "1h", "--seed", "1")
    assert [n["name"] for n in result["nodes"]] == ["n3"]
    by_name = pods(result)
    assert all(p["deleted"] for p in by_name.values() if p["nodeName"] in ("n1", "n2"))
    new = [p for n, p in by_name.items() if n.startswith("web-") and p["createdAt"] == 120.0]
    assert len(new) == 3 and all(p["nodeName"] is None and not p["deleted"] for p in new)


def test_add_50_of_this_pod(snap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Recipe 4: 50 copies of a pod of the snapshot arriving at 5m, and the example overlay (a
    ReplicaSet of 50)."""
    overlay = whatif(capsys, tmp_path, snap, "--add", "default/zeta=50@5m")
    result, _ = simulated(capsys, snap, overlay)
    copies = [p for n, p in pods(result).items() if n.startswith("zeta-whatif-")]
    assert len(copies) == 50 and {p["createdAt"] for p in copies} == {300.0}
    assert result["summary"]["pods"] == 11 + 50

    example = ROOT / "examples" / "whatif" / "add-50.yaml"
    result, _ = simulated(capsys, snap, example)
    more = [p for p in result["pods"] if p["owner"] == "ReplicaSet/default/whatif-50-more"]
    assert len(more) == 50 and {p["createdAt"] for p in more} == {300.0}
    assert any(p["nodeName"] for p in more) and any(p["nodeName"] is None for p in more)


def test_one_overlay_of_several_flags_in_arrival_order(snap: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overlay = whatif(capsys, tmp_path, snap, "--lose-zone", "b@5m", "--drain", "n1@1m", "--add", "zeta=1@2m")
    docs_ = [d for d in yaml.safe_load_all(overlay.read_text()) if d]
    assert [(d["metadata"]["name"], d["metadata"]["annotations"]["kubesched.io/arrival"]) for d in docs_] == [
        ("n1", "1m0s"), ("zeta-whatif-1", "2m0s"), ("n3", "4m59.999s")
    ]
    result, _ = simulated(capsys, snap, overlay, "--until", "10m", "--seed", "1")
    assert sorted(n["name"] for n in result["nodes"]) == ["n1", "n2"]


def test_the_readme_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README "What if": examples/whatif/cluster.yaml served, snapshot, node-1 drained at 10m,
    compared under the default profile and MostAllocated."""
    with (
        anyio.from_thread.start_blocking_portal("trio") as portal,
        portal.wrap_async_context_manager(serving(ROOT / "examples" / "whatif" / "cluster.yaml")) as server,
    ):
        code, _, err = run(capsys, "snapshot", "--server", server.url, "-o", tmp_path / "snapshot.yaml", "--backend", "trio")
        assert code == 0, err
    overlay = whatif(capsys, tmp_path, tmp_path / "snapshot.yaml", "--drain", "node-1@10m")
    mine = ROOT / "examples" / "scenarios" / "most-allocated-config.yaml"
    code, out, err = run(capsys, "compare", tmp_path / "snapshot.yaml", overlay, "--config", "default", "--config", mine,
                         "--output", "json")  # fmt: skip
    assert code == 0, err
    metrics = [v["metrics"] for v in json.loads(out)["variants"]]
    assert [(m["pods"], m["scheduled"], m["nodesUsedPeak"], m["timeToDrain"]) for m in metrics] == [
        (11, 9, 4, 630.0), (14, 9, 4, 645.0)
    ]


# --- the drain, on small scenarios ----------------------------------------------------------------


def web(name: str, node_name: str = "") -> str:
    owner = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs-web, controller: true}]"
    return pod(name, "1", extra_meta=f"labels: {{app: web}}, {owner}", spec=f"nodeName: {node_name}" if node_name else "")


WEB_RS = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, uid: rs-web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]"""


def pdb(min_available: str) -> str:
    return f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: web}}\nspec: {{minAvailable: {min_available}, selector: {{matchLabels: {{app: web}}}}}}"


def drained(n1: str = "n1") -> str:
    return node(n1).replace("metadata: {name: n1,", "metadata: {name: n1, annotations: {kubesched.io/drain: 1m},")


def test_a_drain_waits_for_the_budget_and_retries_every_5s(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two replicas on n1 under minAvailable 1: at 60s the first is evicted and replaced on n2 at
    once; the second is refused then (the replacement was not running yet) and evicted at the
    retry, 65s; the drain is then done and the run ends by itself.  The same bytes on both backends."""
    (tmp_path / "in.yaml").write_text(docs(drained(), node("n2"), WEB_RS, pdb("1"), web("a", "n1"), web("b", "n1")))
    outs = []
    for backend in ("trio", "asyncio"):
        code, out, err = run(capsys, "simulate", tmp_path / "in.yaml", "--backend", backend)
        assert (code, err) == (0, ""), err
        outs.append(out)
    assert outs[0] == outs[1]
    result = json.loads(outs[0])
    by_name = pods(result)
    assert evicted(by_name["a"]) and evicted(by_name["b"])
    replacements = sorted((p["createdAt"], p["nodeName"]) for n, p in by_name.items() if n.startswith("web-"))
    assert replacements == [(60.0, "n2"), (65.0, "n2")]
    assert result["summary"]["cutShort"] is None
    assert result["timeline"][-1]["capacity"]["cpu"] == 4000  # n1 cordoned: out of the capacity


def test_a_drain_a_budget_never_allows_is_left_unfinished(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.yaml").write_text(docs(drained(), node("n2"), WEB_RS, pdb('"100%"'), web("a", "n1"), web("b", "n1")))
    result, err = simulated(capsys, tmp_path / "in.yaml", "--until", "10m")
    assert not pods(result)["a"]["deleted"] and not pods(result)["b"]["deleted"]
    assert result["summary"]["cutShort"] == {
        "reason": "until", "at": 600.0, "arrivals": 0, "deletions": 0, "terminations": 0, "completions": 0,
        "scheduling": 0, "waitingOnPermit": 0, "drains": 1,
    }  # fmt: skip
    assert err.startswith("kubesched: warning: stopped at --until (600s of virtual time) with 1 node drain(s)")


def test_a_drain_leaves_daemonset_and_mirror_pods(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = pod("agent", "100m", spec="nodeName: n1",
             extra_meta="ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds, controller: true}]")
    mirror = pod("etcd", "100m", spec="nodeName: n1", extra_meta="annotations: {kubernetes.io/config.mirror: abc}")
    bare = pod("bare", "100m", spec="nodeName: n1")
    (tmp_path / "in.yaml").write_text(docs(drained(), ds, mirror, bare))
    result, _ = simulated(capsys, tmp_path / "in.yaml")
    by_name = pods(result)
    assert [by_name[n]["deleted"] for n in ("agent", "etcd", "bare")] == [False, False, True]
    assert evicted(by_name["bare"])


@pytest.mark.parametrize(
    ("node_meta", "line"),
    [
        pytest.param("annotations: {kubesched.io/drain: soon}",
                     'in.yaml: document 1 (Node n1), metadata.annotations[kubesched.io/drain]: time: invalid duration "soon"',
                     id="not a duration"),
        pytest.param("annotations: {kubesched.io/drain: 1m, kubesched.io/arrival: 5m}",
                     'in.yaml: document 1 (Node n1), metadata.annotations[kubesched.io/drain]: Invalid value: "1m": must not be '
                     "earlier than the arrival (300s)",
                     id="before the arrival"),
    ],
)
def test_a_bad_drain_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], node_meta: str, line: str) -> None:
    (tmp_path / "in.yaml").write_text(docs(node("n1").replace("metadata: {name: n1,", f"metadata: {{name: n1, {node_meta},")))
    code, out, err = run(capsys, "simulate", tmp_path / "in.yaml")
    assert (code, out) == (2, "")
    assert err == f"kubesched: error: {tmp_path / 'in.yaml'}: " + line.removeprefix("in.yaml: ") + "\n"


def test_a_drain_on_a_pod_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.yaml").write_text(docs(node("n1"), pod("p", extra_meta="annotations: {kubesched.io/drain: 1m}")))
    code, _, err = run(capsys, "simulate", tmp_path / "in.yaml")
    assert code == 2
    assert err.endswith('document 2 (Pod p), metadata.annotations[kubesched.io/drain]: Invalid value: "1m": only a Node is drained\n')


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        pytest.param([], "--drain: nothing to do: give --drain, --delete-node, --lose-zone or --add", id="nothing"),
        pytest.param(["--drain", "n1"], '--drain: Invalid value: "n1": expected NAME@TIME, e.g. n1@10m', id="no time"),
        pytest.param(["--drain", "n9@1m"], '--drain: Invalid value: "n9@1m": no Node n9 in the scenario', id="no node"),
        pytest.param(["--drain", "n1@0s"], '--drain: Invalid value: "n1@0s": must be later than the Node\'s last document',
                     id="not later"),
        pytest.param(["--delete-node", "n1@1x"], '--delete-node: time: invalid duration "1x"', id="bad time"),
        pytest.param(["--lose-zone", "c@1m"], '--lose-zone: Invalid value: "c@1m": no Node has the label '
                     "topology.kubernetes.io/zone=c", id="no zone"),
        pytest.param(["--drain", "n1@1m", "--lose-zone", "a@2m"], '--lose-zone: Invalid value: "a@2m": Node n1 is in '
                     '--drain n1@1m already', id="one node twice"),
        pytest.param(["--add", "zeta=0@1m"], '--add: Invalid value: "zeta=0@1m": the count must be 1 to 100000', id="zero"),
        pytest.param(["--add", "nope=2@1m"], '--add: Invalid value: "nope=2@1m": no Pod default/nope in the scenario',
                     id="no pod"),
    ],
)
def test_whatif_bad_flags_are_one_line(snap: Path, capsys: pytest.CaptureFixture[str], flags: list[str], line: str) -> None:
    code, out, err = run(capsys, "whatif", snap, *flags)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith(f"kubesched: error: {line}"), err
