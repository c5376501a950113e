"""``kubesched sweep``: scenarios x variants x seeds on Dask, end to end.

One small sweep (2 scenarios x 2 variants x 3 seeds: a manifest file and a generate spec; the
default profile and a packed, synchronous-preemption variant) runs twice: on the LocalCluster the
command starts itself, and against a real ``dask scheduler`` with two ``dask worker`` processes on
127.0.0.1. Every cell's row equals what ``kubesched simulate`` gives for that cell alone, and the
two runs write the same bytes. Then: resume, a failing cell, a worker killed mid-sweep, bad input.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched import cli
from kubesched.experiments import FIXED_COLUMNS, cell_metrics, format_value

# the module's Dask cluster and its two sweeps start once: every test here runs on one xdist worker
pytestmark = pytest.mark.xdist_group("dask-sweep")

BIN = Path(sys.executable).parent

NODES = """\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}{ann}}}
spec: {{{prio}containers: [{{name: c, image: pause, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
"""


def pod(name: str, cpu: str, *, arrival: str = "", prio: str = "") -> str:
    ann = f", annotations: {{kubesched.io/arrival: {arrival}}}" if arrival else ""
    return POD.format(name=name, cpu=cpu, ann=ann, prio=f"priorityClassName: {prio}, " if prio else "")


# a preemption: two low pods fill both nodes, a high one arrives at 30s
PREEMPTION = "---\n".join([
    NODES.format(name="n1"), NODES.format(name="n2"),
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n",
    pod("low-1", "3"), pod("low-2", "3"), pod("hi", "2", arrival="30s", prio="high"),
])
GENERATE = {"nodes": 3, "nodeCpu": "4", "pods": 14, "span": "10m", "shapes": [{"cpu": "1500m", "memory": "1Gi"}],
            "priorityClasses": [{"name": "low", "value": 0, "share": 3}, {"name": "high", "value": 100}]}
PACKED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""
SWEEP = f"""\
scenarios:
- preemption.yaml
- {{generate: {json.dumps(GENERATE)}, name: generated}}
variants:
- {{name: default}}
- {{name: packed-sync, config: packed.yaml, featureGates: {{SchedulerAsyncPreemption: false}}}}
seeds: [1, 2, 3]
until: 2h
"""


def write_inputs(d: Path, sweep: str = SWEEP) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "preemption.yaml").write_text(PREEMPTION)
    (d / "packed.yaml").write_text(PACKED)
    (d / "sweep.yaml").write_text(sweep)
    return d / "sweep.yaml"


def kubesched(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "kubesched"), *argv], capture_output=True, text=True, timeout=timeout)


def rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- a real Dask cluster on 127.0.0.1 ---------------------------------------------------------


# an idle worker samples its own stack every 10 ms for the dashboard's profile and ticks its
# event loop every 20 ms: 15% of a core for the cluster while tests wait; neither is under test
QUIET_DASK = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
              "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s"}


class DaskCluster:
    """``dask scheduler`` and ``dask worker`` processes, each in its own process group."""

    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []
        # its HTTP server (metrics, health) is up even with --no-dashboard: on a free port, not 8787
        self.scheduler = self._spawn("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                                   "--no-dashboard", "--dashboard-address", "127.0.0.1:0"])
        self.workers = [self.start_worker() for _ in range(2)]

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}-{len(self.procs)}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen([str(BIN / "dask"), *argv], stdout=log, stderr=log, start_new_session=True, env=QUIET_DASK)
        log.close()
        self.procs.append(proc)
        return proc

    def start_worker(self) -> subprocess.Popen[bytes]:
        return self._spawn("worker", ["worker", self.address, "--nthreads", "1", "--no-nanny",
                                      "--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "60"])

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker and its nanny (its whole process group): no goodbye to the scheduler."""
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    cluster = DaskCluster(tmp_path_factory.mktemp("dask"))
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.fixture(scope="module")
def local_run(inputs: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("local") / "out"
    proc = kubesched("sweep", str(inputs), "--out", str(out), "--summary")  # no --scheduler: a LocalCluster
    assert proc.returncode == 0, proc.stderr
    return out, proc


@pytest.fixture(scope="module")
def cluster_run(inputs: Path, dask_cluster: DaskCluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("remote") / "out"
    proc = kubesched("sweep", str(inputs), "--out", str(out), "--scheduler", dask_cluster.address)
    assert proc.returncode == 0, proc.stderr
    return out, proc


# --- the grid, on a LocalCluster and on a real cluster ----------------------------------------


def alone(inputs: Path, scenario: str, variant: str, seed: int, tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The cell run by itself, through ``kubesched simulate`` (a generate spec through ``kubesched generate``)."""
    d = inputs.parent
    if scenario == "generated":
        spec = tmp / f"spec-{seed}.yaml"
        spec.write_text(json.dumps(GENERATE))
        manifests = tmp / f"generated-{seed}.yaml"
        assert cli.main(["generate", str(spec), "--seed", str(seed), "-o", str(manifests)]) == 0
    else:
        manifests = d / scenario
    argv = ["simulate", str(manifests), "--seed", str(seed), "--until", "2h"]
    if variant == "packed-sync":
        argv += ["--config", str(d / "packed.yaml"), "--feature-gates", "SchedulerAsyncPreemption=false"]
    capsys.readouterr()
    assert cli.main(argv) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def readme_columns(actual: list[str]) -> list[str]:
    """results.csv's columns as the README lists them (``<resource>`` expanded as in ``actual``)."""
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    text = readme.split("`sweep-out/results.csv` has one row per cell", 1)[1].split("a digest of", 1)[0]
    names = re.findall(r"`([^`]+)`", " ".join(text.split()))
    cols: list[str] = []
    for group in names:
        parts = [n.strip() for n in group.split(",") if n.strip()]
        prefixes = [n.split("<resource>")[0] for n in parts if "<resource>" in n]
        if not prefixes:
            cols += parts
            continue
        # each resource's columns together, resources in the file's order
        resources = [c[len(prefixes[0]):] for c in actual if c.startswith(prefixes[0])]
        cols += [p + r for r in resources for p in prefixes]
    return cols


def test_local_cluster_sweep_equals_each_cell_alone(
    local_run: tuple[Path, subprocess.CompletedProcess[str]], inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, proc = local_run
    table = rows(out)
    assert [(r["scenario"], r["variant"], r["seed"]) for r in table] == [
        (s, v, str(seed)) for s in ("preemption.yaml", "generated") for v in ("default", "packed-sync") for seed in (1, 2, 3)
    ]
    assert list(table[0])[:4] == list(FIXED_COLUMNS)
    assert list(table[0]) == readme_columns(list(table[0]))  # the README says what the file has
    assert all(r["status"] == "ok" for r in table)
    for r in table:
        result = alone(inputs, r["scenario"], r["variant"], int(r["seed"]), tmp_path, capsys)
        expected = {k: format_value(v) for k, v in cell_metrics(result).items()}
        assert {k: r[k] for k in expected} == expected, (r["scenario"], r["variant"], r["seed"])
    # the grid is not trivial: the preemption happens, and the generated seeds differ
    assert {r["preemptions"] for r in table if r["scenario"] == "preemption.yaml"} == {"1"}
    assert len({r["pods"] for r in table if r["scenario"] == "generated"}) > 1
    lines = proc.stderr.strip().splitlines()
    n = os.cpu_count()
    assert lines[-1].startswith(f"sweep: 12 cells (12 run, 0 already done, 0 failed) on a LocalCluster of {n} worker")
    page = (out / "sweep.html").read_text()
    # per scenario, on its own axes: the differences from the baseline and the values per seed
    # (preemption.yaml gives the same results under both variants: one line saying so, no charts)
    preemption, generated = page.split('<section class="scenario"')[1:]
    assert 'class="identical"' in preemption and 'class="kubesched-figure"' not in preemption
    assert generated.count('class="kubesched-figure"') == 2
    assert '<table id="verdicts" class="verdicts">' in page and "packed-sync \u2212 default" in page
    assert "<script src=" not in page  # plotly.js inlined: works offline
    # --summary: the verdict table of each scenario on stdout, the first variant the baseline
    heads = [line for line in proc.stdout.splitlines() if "each variant minus default" in line]
    assert [h.split(":")[0] for h in heads] == ["preemption.yaml", "generated"]
    assert "preemption victims" in proc.stdout and "lower" in proc.stdout
    assert not (out / "results.parquet").exists()  # pyarrow is not installed here


def test_dask_cluster_sweep_writes_the_same_files(
    local_run: tuple[Path, subprocess.CompletedProcess[str]], cluster_run: tuple[Path, subprocess.CompletedProcess[str]],
    dask_cluster: DaskCluster,
) -> None:
    local, _ = local_run
    remote, proc = cluster_run
    assert (remote / "results.csv").read_bytes() == (local / "results.csv").read_bytes()
    assert (remote / "sweep.html").read_bytes() == (local / "sweep.html").read_bytes()
    assert f"on {dask_cluster.address} in " in proc.stderr


def test_resume_skips_cells_already_done(
    cluster_run: tuple[Path, subprocess.CompletedProcess[str]], inputs: Path, dask_cluster: DaskCluster, tmp_path: Path
) -> None:
    done, _ = cluster_run
    out = tmp_path / "out"
    out.mkdir()
    complete = (done / "results.csv").read_text()
    lines = complete.splitlines(keepends=True)
    # two rows lost, one row failed earlier, one row from an older version of its variant
    older = lines[5].split(",")
    older[-1] = "0000000000000000\n"
    partial = [lines[0], lines[1], lines[2], lines[4].replace(",ok,", ",error: boom,", 1), ",".join(older), *lines[7:]]
    (out / "results.csv").write_text("".join(partial))
    proc = kubesched("sweep", str(inputs), "--out", str(out), "--scheduler", dask_cluster.address)
    assert proc.returncode == 0, proc.stderr
    assert "sweep: 12 cells (4 run, 8 already done, 0 failed)" in proc.stderr
    assert (out / "results.csv").read_text() == complete
    proc = kubesched("sweep", str(inputs), "--out", str(out), "--scheduler", dask_cluster.address)
    assert "sweep: 12 cells (0 run, 12 already done, 0 failed)" in proc.stderr
    assert (out / "results.csv").read_text() == complete


def test_a_failing_cell_records_its_error_and_the_sweep_goes_on(dask_cluster: DaskCluster, tmp_path: Path) -> None:
    bad = "---\n".join([NODES.format(name="n1"), pod("p", "1", prio="nope")])
    sweep = write_inputs(tmp_path, "scenarios: [preemption.yaml, bad.yaml]\nvariants: [{name: default}]\nseeds: [1, 2]\n")
    (tmp_path / "bad.yaml").write_text(bad)
    out = tmp_path / "out"
    proc = kubesched("sweep", str(sweep), "--out", str(out), "--scheduler", dask_cluster.address)
    assert proc.returncode == 0, proc.stderr
    table = rows(out)
    assert [r["status"] for r in table] == ["ok", "ok"] + [
        "error: bad.yaml: document 2 (Pod p), spec.priorityClassName: no PriorityClass with name nope was found"
    ] * 2
    assert all(r["pods"] == "" for r in table[2:])
    assert "2 failed" in proc.stderr
    assert "bad.yaml: document 2" in (out / "sweep.html").read_text()  # listed under the failed cells


# --- a worker killed mid-sweep ----------------------------------------------------------------


def test_killing_a_worker_mid_sweep_loses_no_cell(dask_cluster: DaskCluster, tmp_path: Path) -> None:
    from distributed import Client

    # cells of about a second each, so that one is surely running when its worker dies
    heavy = {"nodes": 60, "pods": 500, "span": "30m", "shapes": [{"cpu": "1", "memory": "1Gi"}]}
    sweep = write_inputs(tmp_path, f"scenarios: [{{generate: {json.dumps(heavy)}, name: heavy}}]\n"
                                   "variants: [{name: default}]\nseeds: [1, 2, 3, 4]\n")
    out = tmp_path / "out"
    killed = None
    with Client(dask_cluster.address, timeout=10) as client:
        client.wait_for_workers(2, timeout=30)
        pids = client.run(os.getpid)  # worker address -> its process id
        run = subprocess.Popen([str(BIN / "kubesched"), "sweep", str(sweep), "--out", str(out), "--scheduler",
                                dask_cluster.address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while killed is None and time.monotonic() < deadline and run.poll() is None:
                for address, tasks in client.processing().items():
                    if any(str(t).startswith("kubesched-cell-") for t in tasks) and address in pids:
                        pgid = os.getpgid(pids[address])
                        killed = next(p for p in dask_cluster.workers if p.pid == pgid)
                        killed_address = address
                        break
                else:
                    time.sleep(0.05)  # polling the scheduler for a running cell, not waiting for a result
            assert killed is not None, "no cell was seen running"
            dask_cluster.kill(killed)
            done_before = len(rows(out)) if (out / "results.csv").exists() else 0
            stdout, stderr = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
    assert run.returncode == 0, stderr
    table = rows(out)
    assert [(r["seed"], r["status"]) for r in table] == [(str(s), "ok") for s in (1, 2, 3, 4)], stderr
    assert done_before < 4 and all(r["pods"] for r in table)
    # the scheduler lost the worker that was running a cell, and the cell ran again elsewhere
    assert f"Remove worker addr: {killed_address}" in (dask_cluster.tmp / "scheduler-0.log").read_text()
    assert "sweep: 4 cells (4 run, 0 already done, 0 failed)" in stderr
    # the cluster gets its second worker back for any test that follows
    dask_cluster.workers[dask_cluster.workers.index(killed)] = dask_cluster.start_worker()


# --- bad input: one line, exit code 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("sweep", "line"),
    [
        pytest.param("scenarios: [preemption.yaml]\nvariants: [{name: a, configs: packed.yaml}]\n",
                     'sweep.yaml, variants[0].configs: unknown field "configs" (allowed: name, config, featureGates, emulatedVersion)',
                     id="unknown variant key"),
        pytest.param("scenarios: [preemption.yaml]\nvariant: []\n",
                     'sweep.yaml, variant: unknown field "variant" (allowed: scenarios, variants, baseline, seeds, until)',
                     id="unknown key"),
        pytest.param("scenarios: [preemption.yaml]\nvariants: [{name: a}, {name: b}]\nbaseline: c\n",
                     'sweep.yaml, baseline: Invalid value: "c": must be the name of a variant (a, b)', id="unknown baseline"),
        pytest.param("scenarios: [preemption.yaml, {generate: {nodes: -5}}]\n",
                     "sweep.yaml, scenarios[1].generate.nodes: Invalid value: -5: must be greater than or equal to 0",
                     id="generate parameter out of range"),
        pytest.param("scenarios: [{generate: {duration: 'lognormal:median=5m,spread=0'}}]\n",
                     'sweep.yaml, scenarios[0].generate.duration: Invalid value: "lognormal:median=5m,spread=0": spread must be >= 1',
                     id="generate distribution out of range"),
        pytest.param("scenarios: [missing.yaml]\n",
                     'sweep.yaml, scenarios[0]: cannot read "missing.yaml": No such file or directory', id="missing scenario"),
        pytest.param("scenarios: [preemption.yaml]\nvariants: [{name: a, featureGates: {NoSuchGate: true}}]\n",
                     "sweep.yaml, variants[0].featureGates: unrecognized feature gate: NoSuchGate", id="unknown feature gate"),
        pytest.param("scenarios: [preemption.yaml]\nvariants: [{name: a}, {name: a}]\n",
                     'sweep.yaml, variants[1].name: Duplicate value: "a"', id="duplicate variant"),
        pytest.param("scenarios: [preemption.yaml]\nseeds: [1, x]\n",
                     'sweep.yaml, seeds[1]: Invalid value: "x": must be an integer', id="bad seed"),
        pytest.param("scenarios: [preemption.yaml]\nuntil: soon\n",
                     'sweep.yaml, until: time: invalid duration "soon"', id="bad until"),
    ],
)
def test_bad_sweep_file_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], sweep: str, line: str
) -> None:
    write_inputs(tmp_path, sweep)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["sweep", "sweep.yaml", "--out", "out"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"kubesched: error: {line}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("address", "line"),
    [
        pytest.param("tcp://127.0.0.1:{port}", "--scheduler: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: ",
                     id="unreachable scheduler"),
        pytest.param("127.0.0.1", 'kubesched: error: --scheduler: Invalid value: "127.0.0.1": must be a Dask scheduler address such as tcp://HOST:8786',
                     id="no port"),
    ],
)
def test_bad_scheduler_address_is_one_line_exit_2(inputs: Path, tmp_path: Path, address: str, line: str) -> None:
    port = free_port()  # nothing listens there
    start = time.monotonic()
    proc = kubesched("sweep", str(inputs), "--out", str(tmp_path / "out"), "--scheduler", address.format(port=port),
                     "--connect-timeout", "2")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert line.format(port=port) in proc.stderr
    assert time.monotonic() - start < 30
    assert not (tmp_path / "out").exists()


def test_progress_bar_counts_cells() -> None:
    from kubesched.cli.sweep import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    bar = Progress(4, stream=stream)
    for ok in (True, False, True, True):
        bar.step(ok)
    frames = stream.getvalue().split("\r")[1:]
    assert frames[0] == "sweep [#######.......................] 1/4 cells"
    assert frames[1] == "sweep [###############...............] 2/4 cells, 1 failed"
    assert frames[-1] == "sweep [##############################] 4/4 cells, 1 failed\n"
    quiet = io.StringIO()  # not a terminal: no bar
    Progress(2, stream=quiet).step(True)
    assert quiet.getvalue() == ""
