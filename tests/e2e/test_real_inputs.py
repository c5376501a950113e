"""Trust on real inputs: what users bring is taken as the API server and kubectl take
it, or refused in one line; a run is never cut short without a word.

Unknown fields (strict field validation, ``--validate``), explicit nulls, ``kubectl get -o yaml``
exports and typed lists, the kubelet's node labels, no default ``--until`` and what a cut says,
pods no profile takes, upstream's own configuration dump, and the small things a user hits
(``--version``, ``--html`` alone, links in the docs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_simulate_cli import by_name, docs, node, pod, report, simulate_cli, workdir

from kubesched import ConfigError, cli

__all__ = ["workdir"]  # the fixture, shared with test_simulate_cli


# --- unknown fields --------------------------------------------------------------------------

TYPO = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelecter: {disk: ssd}\n"
    "  containers: [{name: c, image: x, resources: {request: {cpu: '8'}}}]"
)


def test_unknown_fields_are_refused_as_the_api_server_does(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Pod with ``nodeSelecter`` and ``resources.request`` was placed on a 4-CPU node without
    the label: now one line naming the file, the document and every unknown field, exit 2."""
    (workdir / "in.yaml").write_text(docs(node("n1"), TYPO))
    code, out, err = simulate_cli(capsys, "in.yaml")
    assert (code, out) == (2, "")
    assert err == (
        'kubesched: error: in.yaml: document 2 (Pod p): strict decoding error: unknown field '
        '"spec.nodeSelecter", unknown field "spec.containers[0].resources.request"\n'
    )


@pytest.mark.parametrize("flag", ["warn", "ignore", "false", "true", "strict"])
def test_validate_flag_as_kubectl(flag: str, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), TYPO))
    code, out, err = simulate_cli(capsys, "in.yaml", "--validate", flag)
    if flag in ("true", "strict"):
        assert code == 2 and err.startswith("kubesched: error: in.yaml: document 2 (Pod p): strict decoding error")
        return
    assert code == 0 and by_name(json.loads(out))["p"]["nodeName"] == "n1"
    if flag == "warn":
        assert err.splitlines() == [
            'kubesched: warning: in.yaml: document 2 (Pod p): unknown field "spec.nodeSelecter"',
            'kubesched: warning: in.yaml: document 2 (Pod p): unknown field "spec.containers[0].resources.request"',
        ]
    else:
        assert err == ""


def test_every_field_of_every_kind_taken_is_known() -> None:
    """The examples use many fields of every kind: strict validation refuses none of them."""
    examples = Path(__file__).parents[2] / "examples" / "scenarios"
    for path in sorted(examples.glob("*.yaml")):
        if "config" in path.name or "sweep" in path.name:
            continue
        # an example of alpha kinds says in its header which gates its command line sets
        gates = re.findall(r"--feature-gates (\S+)", path.read_text()[:2000])
        extra = ["--feature-gates", gates[0]] if gates else []
        assert cli.main(["simulate", str(path), "--until", "1s", "--output", "text", *extra]) == 0, path


def test_without_until_the_run_goes_on_until_nothing_more_can_happen(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No default cap: a pod arriving after 30 hours of virtual time is scheduled (it was cut
    at a default 1h before), and nothing is said because nothing was cut."""
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("now"), pod("tomorrow", arrival="30h")))
    result = report(capsys, "in.yaml")
    assert by_name(result)["tomorrow"]["nodeName"] == "n1"
    assert result["summary"]["virtualSeconds"] == 108000.0
    assert result["summary"]["cutShort"] is None


def test_a_run_of_nothing_but_retries_ends_and_says_so(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pod that fails with an Error for ever would retry for ever: without --until the run
    ends after an hour of virtual time in which nothing but retries happened, and says so."""
    bad = pod("bad", extra_meta="labels: {gang.kubesched.io/name: g, gang.kubesched.io/available-count: x}")
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("ok"), bad))
    (workdir / "gang.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    multiPoint: {enabled: [{name: Gang}]}\n"
        "    queueSort: {enabled: [{name: Gang}], disabled: [{name: PrioritySort}]}\n"
    )
    code, out, err = simulate_cli(capsys, "in.yaml", "--config", "gang.yaml")
    assert code == 0
    assert err == (
        "kubesched: warning: stopped at t=3600s after 3600s of virtual time with nothing but "
        "scheduling retries, with 1 pod(s) queued to be scheduled (active or backoff) still to "
        "come; pass --until to run longer\n"
    )
    result = json.loads(out)
    assert result["summary"]["cutShort"] == {
        "reason": "retrying", "at": 3600.0, "arrivals": 0, "deletions": 0, "terminations": 0,
        "completions": 0, "scheduling": 1, "waitingOnPermit": 0,
    }
    assert by_name(result)["ok"]["nodeName"] == "n1" and by_name(result)["bad"]["nodeName"] is None


def test_a_pod_no_profile_schedules_says_why(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("mine"), pod("theirs", spec="schedulerName: my-scheduler")))
    result = report(capsys, "in.yaml")
    theirs = by_name(result)["theirs"]
    assert (theirs["nodeName"], theirs["schedulerName"], theirs["noProfile"]) == (None, "my-scheduler", True)
    assert by_name(result)["mine"]["noProfile"] is False
    assert result["summary"]["noProfile"] == 1
    code, text, _ = simulate_cli(capsys, "in.yaml", "--output", "text")
    assert code == 0
    assert (
        '  default/theirs: not scheduled here: schedulerName "my-scheduler" matches no profile '
        "(profiles: default-scheduler)"
    ) in text.splitlines()


def test_nodes_carry_the_labels_their_kubelet_sets(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch (and the beta forms) are
    on every node whose manifest does not set them; a label the manifest sets is kept."""
    arm = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {kubernetes.io/arch: arm64}}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}"
    )
    (workdir / "in.yaml").write_text(
        docs(
            node("n1"),
            arm,
            pod("linux", spec="nodeSelector: {kubernetes.io/os: linux, beta.kubernetes.io/arch: amd64}"),
            pod("arm", spec="nodeSelector: {kubernetes.io/arch: arm64, beta.kubernetes.io/os: linux}"),
            pod("host", spec="nodeSelector: {kubernetes.io/hostname: n2}"),
        )
    )
    result = report(capsys, "in.yaml")
    assert {p["name"]: p["nodeName"] for p in result["pods"]} == {"linux": "n1", "arm": "n2", "host": "n2"}


def test_explicit_nulls_mean_absent(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``labels:``, ``annotations:``, ``resources:`` left empty by a template are null: absent,
    as the API server and kubectl take them (they were refused as "Expected object, got null")."""
    templated = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  labels:\n  annotations:\n"
        "spec:\n  nodeSelector:\n  containers:\n  - name: c\n    image: x\n    resources:\n"
    )
    (workdir / "in.yaml").write_text(docs(node("n1"), templated))
    assert by_name(report(capsys, "in.yaml"))["t"]["nodeName"] == "n1"


FIXTURES = Path(__file__).parent / "fixtures"


def test_a_kubectl_export_loads_as_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    """A ``v1 List`` from ``kubectl get ... -o yaml``: the Running pod runs on its node, the
    Succeeded one holds nothing, the Pending one is scheduled (into what the Succeeded one does
    not hold), and the Deployment and ReplicaSet adopt what they already control: no
    ReplicaSet or pod is created."""
    result = report(capsys, str(FIXTURES / "kubectl-export.yaml"))
    pods = {p["name"]: (p["nodeName"], p["phase"]) for p in result["pods"]}
    assert pods == {
        "web-7d4b9c8f6d-abcde": ("n1", "Running"),
        "done": ("n1", "Succeeded"),
        "pending": ("n1", "Running"),
    }
    assert [(e["reason"], e["object"]) for e in result["events"]] == [("Scheduled", "default/pending")]
    assert [(w["kind"], w["name"], w["pods"]) for w in result["workloads"]] == [
        ("Deployment", "web", 1),  # its one pod, adopted, not created
        ("ReplicaSet", "web-7d4b9c8f6d", 1),
    ]


def test_a_typed_list_and_its_items(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typed list (the API server's ``PodList``) has items without apiVersion and kind; an
    error in an item names the document and the item."""
    (workdir / "in.yaml").write_text(
        docs(
            node("n1"),
            "apiVersion: v1\nkind: PodList\nitems:\n"
            "- metadata: {name: a}\n  spec: {containers: [{name: c, image: x}]}\n"
            "- metadata: {name: b}\n  spec: {containers: [{name: c, image: x}]}\n",
        )
    )
    assert {p["name"]: p["nodeName"] for p in report(capsys, "in.yaml")["pods"]} == {"a": "n1", "b": "n1"}
    (workdir / "bad.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, image: x}]}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {priority: high, containers: []}}\n"
    )
    code, out, err = simulate_cli(capsys, "bad.yaml")
    assert code == 2 and out == ""
    assert err.startswith("kubesched: error: bad.yaml: document 1 items[1] (Pod b), spec.priority: ")
    assert len(err.splitlines()) == 1


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == (
        f"kubesched {version('kubesched')} (emulates Kubernetes 1.30–1.36, default 1.36)\n"
    )


def test_html_without_output_prints_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--html`` alone writes the page and keeps stdout empty; ``--output`` still prints."""
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("p")))
    code, out, err = simulate_cli(capsys, "in.yaml", "--html", "r.html")
    assert (code, out, err) == (0, "", "")
    assert (workdir / "r.html").read_text().startswith("<!DOCTYPE html>")
    code, out, _ = simulate_cli(capsys, "in.yaml", "--html", "r2.html", "--output", "json")
    assert code == 0 and json.loads(out)["summary"]["scheduled"] == 1


def test_readme_and_docs_link_only_inside_the_repository() -> None:
    """Every markdown link of the README and docs/ names a file of the repository that exists."""
    import re

    root = Path(__file__).parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "examples").glob("*/README.md"))]
    for page in pages:
        text = page.read_text()
        # GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens
        anchors = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                   for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            assert "://" not in target, (page.name, target)
            if target.startswith("#"):  # a heading of the same page
                assert target[1:] in anchors, (page.name, target)
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists() and root in path.parents, (page.name, target)


def test_upstreams_own_default_configuration_loads_unchanged_as_the_default_profile(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``kube-scheduler --write-config-to``'s dump (the volume plugins included) loads unchanged,
    without a warning, and builds the very profile kubesched uses by default."""
    import yaml

    from kubesched.config._config import default_profile, parse_config
    from kubesched.plugins import IN_TREE
    from kubesched.runtime._framework import build_framework

    config = Path(__file__).parent / "fixtures" / "kube-scheduler-default-config.yaml"
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("p")))
    code, out, err = simulate_cli(capsys, "in.yaml", "--config", str(config))
    assert (code, err) == (0, "") and json.loads(out)["summary"]["scheduled"] == 1
    dumped = build_framework(parse_config(yaml.safe_load(config.read_text())).profiles[0], IN_TREE).list_plugins()
    assert dumped == build_framework(default_profile(), IN_TREE).list_plugins()
    assert [n for n, _ in dumped["filter"]][6:10] == [
        "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"
    ]


@pytest.mark.parametrize(
    ("section", "field"),
    [("leaderElection: {leaderElet: true}", "leaderElection.leaderElet"),
     ("clientConnection: {qpps: 5}", "clientConnection.qpps")],
)
def test_config_sections_decoded_strictly(
    workdir: Path, capsys: pytest.CaptureFixture[str], section: str, field: str
) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), pod("p")))
    (workdir / "c.yaml").write_text(
        f"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{section}\n"
    )
    code, out, err = simulate_cli(capsys, "in.yaml", "--config", "c.yaml")
    assert (code, out) == (2, "")
    assert err == f'kubesched: error: c.yaml: strict decoding error: unknown field "{field}"\n'


def test_a_sweep_cell_validates_as_asked() -> None:
    """A sweep's cells are strict by default (the cell fails with the one line), and take
    ``--validate`` as simulate does; the default keeps the cell's digest."""
    from kubesched.experiments import Cell, Scenario, Variant, simulate_cell

    scenario = Scenario("typo.yaml", text=docs(node("n1"), TYPO))
    strict = Cell(scenario, Variant("default"), 1, None)
    with pytest.raises(ConfigError, match=r'strict decoding error: unknown field "spec.nodeSelecter"'):
        simulate_cell(strict.task())
    assert "validation" not in strict.task()
    for mode in ("Warn", "Ignore"):
        lenient = Cell(scenario, Variant("default"), 1, None, mode)
        assert lenient.digest != strict.digest
        result = simulate_cell(lenient.task())
        assert [p["nodeName"] for p in result["pods"]] == ["n1"]


def test_compare_takes_validate_too(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "in.yaml").write_text(docs(node("n1"), TYPO))
    variants = ["--feature-gates", "SchedulerAsyncPreemption=true", "--feature-gates", "SchedulerAsyncPreemption=false"]
    assert cli.main(["compare", "in.yaml", *variants, "--output", "json"]) == 2
    assert "strict decoding error" in capsys.readouterr().err
    assert cli.main(["compare", "in.yaml", *variants, "--output", "json", "--validate", "warn"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        'kubesched: warning: in.yaml: document 2 (Pod p): unknown field "spec.nodeSelecter"',
        'kubesched: warning: in.yaml: document 2 (Pod p): unknown field "spec.containers[0].resources.request"',
    ]


def test_fake_apiserver_files_carry_kubelet_labels(workdir: Path) -> None:
    """``kubesched fake-apiserver FILE`` loads its files as simulate does: a Node of the file
    has its kubelet's labels when it is served."""
    from kubesched.scenario import load_manifests
    from kubesched.service._fake_apiserver import _admit

    (workdir / "in.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: bare}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    )
    (m,) = load_manifests(["in.yaml"])
    assert _admit(m.obj).metadata.labels == {
        "kubernetes.io/hostname": "bare",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }
