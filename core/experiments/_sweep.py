"""A sweep: scenarios x variants x seeds, one simulation per cell, on Dask (``kubesched sweep``).

The model::

    SWEEP.yaml ──► cells (scenario, variant, seed), each a task carrying its own inputs
                   (manifest text or generate spec, config text, feature gates, seed, until)
                     │ client.submit(run_cell, task, retries=2)       a LocalCluster, or
                     ▼                                                 --scheduler tcp://HOST:8786
                 a worker process: generate (if a spec), simulate in virtual time, cell_metrics
                     │ as each cell completes
                     ▼
                 DIR/results.csv (one row per cell, in grid order; rewritten as cells finish),
                 DIR/results.parquet (when pyarrow is installed), DIR/sweep.html (plotly, offline:
                 each variant against the baseline, per scenario, paired by seed; :mod:`._sweep_page`)

- Scenarios travel with the task, never through a shared file system: workers need only
  kubesched installed.
- A cell that fails records its one-line error in ``status``; the sweep goes on. Dask reschedules
  the cells of a worker that dies.
- Resume: a cell whose row in ``results.csv`` says ``ok`` under the same ``cell`` digest (a hash of
  the scenario, the variant, the seed and ``until``) is not run again.
- The rows are the same bytes however the cells were spread over workers: each cell is a
  deterministic simulation, and rows are written in grid order.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kubesched._errors import ConfigError
from kubesched.api._decoding import read_text
from kubesched.api._durations import parse_duration
from kubesched.config._versions import DEFAULT_VERSION
from kubesched.experiments._sweep_page import render as render_page
from kubesched.reporting._result_metrics import compute as compute_metrics
from kubesched.reporting._result_metrics import last_seen, occurrences
from kubesched.validation._validation import go_quote

SWEEP_KEYS = ("scenarios", "variants", "baseline", "seeds", "until")
VARIANT_KEYS = ("name", "config", "featureGates", "emulatedVersion")
SCENARIO_KEYS = ("generate", "name")
OPENB_SCENARIO_KEYS = ("openb", "name")
OPENB_KEYS = ("nodes", "pods", "fill")
FILL_CHECKPOINTS = (30, 60, 80, 90, 100, 110, 120, 130)
"""The percents arrived a fill cell's row reports (the issue's, and the paper's Figure 9(a))."""
FIXED_COLUMNS = ("scenario", "variant", "seed", "status")
DIGEST_COLUMN = "cell"
ADDRESS = re.compile(r"^((tcp|tls|ws|wss)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+):\d{1,5}$")


# --- the sweep file ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    label: str
    text: str | None = None  # the manifests of a file scenario
    generate: dict[str, Any] | None = None  # the spec of a generate scenario
    openb: dict[str, Any] | None = None  # a fill of an openb trace: node and pod CSV texts, factor


@dataclass(frozen=True)
class Variant:
    name: str
    config_name: str = ""  # the config file, as errors name it
    config_text: str | None = None
    feature_gates: str = ""
    emulated_version: str = ""  # MAJOR.MINOR; "" for the default


@dataclass(frozen=True)
class Cell:
    scenario: Scenario
    variant: Variant
    seed: int
    until: str | None
    validation: str = "Strict"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.scenario.label, self.variant.name, str(self.seed))

    def task(self) -> dict[str, Any]:
        """Everything a worker needs to run this cell (no paths: the inputs themselves)."""
        extra: dict[str, Any] = {} if self.validation == "Strict" else {"validation": self.validation}
        if self.variant.emulated_version:  # absent for the default: the digests of old cells hold
            extra["emulatedVersion"] = self.variant.emulated_version
        return {
            **extra,
            "scenario": self.scenario.label,
            "text": self.scenario.text,
            "generate": self.scenario.generate,
            **({"openb": self.scenario.openb} if self.scenario.openb is not None else {}),
            "variant": self.variant.name,
            "configName": self.variant.config_name,
            "config": self.variant.config_text,
            "featureGates": self.variant.feature_gates,
            "seed": self.seed,
            "until": self.until,
        }

    @property
    def digest(self) -> str:
        t = self.task()
        del t["configName"]
        return hashlib.sha256(json.dumps(t, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Sweep:
    path: str
    scenarios: list[Scenario]
    variants: list[Variant]
    seeds: list[int]
    until: str | None
    validation: str = "Strict"
    """``--validate``: unknown fields in the scenarios' manifests (kubectl's modes)."""
    baseline: str = ""
    """The variant every other is judged against: ``baseline:`` in SWEEP.yaml, else the first."""

    def cells(self) -> list[Cell]:
        """The grid, in order: scenario, then variant, then seed."""
        return [
            Cell(s, v, seed, self.until, self.validation)
            for s in self.scenarios for v in self.variants for seed in self.seeds
        ]


def _unknown(key: str, allowed: Sequence[str], source: str, fld: str) -> ConfigError:
    return ConfigError(f"unknown field {go_quote(key)} (allowed: {', '.join(allowed)})", source=source, field=fld)


def load_sweep(path: str, *, warn: Callable[[str], object] | None = None) -> Sweep:
    """Read and check SWEEP.yaml; every problem is one :class:`ConfigError` line.  ``warn`` is
    told the variants' configuration warnings (a plugin left out)."""
    from kubesched.generate._generate import parse_spec
    from kubesched.scenario._config import simulation_config
    from kubesched.scenario._manifests import load_documents

    docs = load_documents(path)
    if len(docs) != 1 or not isinstance(docs[0][1], dict):
        raise ConfigError("expected one mapping with scenarios, variants and seeds", source=path)
    data: dict[str, Any] = docs[0][1]
    for key in data:
        if key not in SWEEP_KEYS:
            raise _unknown(str(key), SWEEP_KEYS, path, str(key))
    base = Path(path).parent

    def read(rel: str, fld: str) -> str:
        try:
            return read_text(base / rel)
        except OSError as e:
            raise ConfigError(f"cannot read {go_quote(str(base / rel))}: {e.strerror or e}", source=path, field=fld) from None

    raw_scenarios = data.get("scenarios")
    if not isinstance(raw_scenarios, list) or not raw_scenarios:
        raise ConfigError("Required value: a list of manifest files or {generate: {...}} specs", source=path, field="scenarios")
    scenarios: list[Scenario] = []
    for i, item in enumerate(raw_scenarios):
        fld = f"scenarios[{i}]"
        if isinstance(item, str) and item:
            scenarios.append(Scenario(item, text=read(item, fld)))
            continue
        if isinstance(item, dict) and "openb" in item:
            scenarios.append(_openb_scenario(item, i, path, read))
            continue
        if not isinstance(item, dict) or "generate" not in item:
            raise ConfigError(f"Invalid value: {go_quote(item)}: a manifest file or a {{generate: {{...}}}} spec",
                              source=path, field=fld)
        for key in item:
            if key not in SCENARIO_KEYS:
                raise _unknown(str(key), SCENARIO_KEYS, path, f"{fld}.{key}")
        spec = item["generate"] if item["generate"] is not None else {}
        try:
            parse_spec(spec, prefix=f"{fld}.generate.")
        except ConfigError as e:
            raise e.at(source=path) from None
        name = item.get("name", f"generate-{i + 1}")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"Invalid value: {go_quote(name)}: must be a non-empty string", source=path, field=f"{fld}.name")
        scenarios.append(Scenario(name, generate=dict(spec)))
    _unique([s.label for s in scenarios], path, "scenarios")

    raw_variants = data.get("variants", [{"name": "default"}])
    if not isinstance(raw_variants, list) or not raw_variants:
        raise ConfigError("Required value: a list of {name, config?, featureGates?, emulatedVersion?}", source=path, field="variants")
    variants: list[Variant] = []
    for i, item in enumerate(raw_variants):
        fld = f"variants[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"Invalid value: {go_quote(item)}: must be a mapping {{name, config?, featureGates?, emulatedVersion?}}",
                              source=path, field=fld)
        for key in item:
            if key not in VARIANT_KEYS:
                raise _unknown(str(key), VARIANT_KEYS, path, f"{fld}.{key}")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError("Required value: a name", source=path, field=f"{fld}.name")
        config = item.get("config") or ""
        if not isinstance(config, str):
            raise ConfigError(f"Invalid value: {go_quote(config)}: must be a file name", source=path, field=f"{fld}.config")
        gates_raw = item.get("featureGates") or {}
        if not isinstance(gates_raw, dict):
            raise ConfigError(f"Invalid value: {go_quote(gates_raw)}: must be a mapping of gate: true|false",
                              source=path, field=f"{fld}.featureGates")
        parts = []
        for k, v in gates_raw.items():
            if not isinstance(v, bool):
                raise ConfigError(f"Invalid value: {go_quote(v)}: must be true or false", source=path,
                                  field=f"{fld}.featureGates.{k}")
            parts.append(f"{k}={'true' if v else 'false'}")
        gates = ",".join(parts)
        version = item.get("emulatedVersion") or ""
        if not isinstance(version, str):  # YAML reads 1.30 as the number 1.3
            raise ConfigError(f'Invalid value: {go_quote(version)}: must be a string MAJOR.MINOR, quoted ("1.30")',
                              source=path, field=f"{fld}.emulatedVersion")
        text = read(config, f"{fld}.config") if config else None
        config_name = str(base / config) if config else ""
        try:
            simulation_config(config_name, gates, text, warn=warn, emulated_version=version or DEFAULT_VERSION)
        except ConfigError as e:
            if e.field == "--feature-gates":
                raise ConfigError(e.message, source=path, field=f"{fld}.featureGates") from None
            if e.field == "--emulated-version":
                raise ConfigError(e.message, source=path, field=f"{fld}.emulatedVersion") from None
            raise
        variants.append(Variant(name, config_name, text, gates, version))
    _unique([v.name for v in variants], path, "variants")

    raw_seeds = data.get("seeds", [0])
    if not isinstance(raw_seeds, list) or not raw_seeds:
        raise ConfigError("Required value: a list of integer seeds", source=path, field="seeds")
    for i, s in enumerate(raw_seeds):
        if isinstance(s, bool) or not isinstance(s, int):
            raise ConfigError(f"Invalid value: {go_quote(s)}: must be an integer", source=path, field=f"seeds[{i}]")
    if len(set(raw_seeds)) != len(raw_seeds):
        raise ConfigError("Duplicate value: seeds must be unique", source=path, field="seeds")

    until = data.get("until")  # none: every run until nothing more can happen
    if until is not None:
        try:
            if parse_duration(str(until)) < 0:
                raise ValueError(f"Invalid value: {go_quote(until)}: must not be negative")
        except ValueError as e:
            raise ConfigError(str(e), source=path, field="until") from None
    else:
        _check_scenarios_end(scenarios, path)  # a fill ends by itself: nothing finishes, nothing waits
    baseline = data.get("baseline", variants[0].name)
    if baseline not in [v.name for v in variants]:
        raise ConfigError(f"Invalid value: {go_quote(baseline)}: must be the name of a variant "
                          f"({', '.join(v.name for v in variants)})", source=path, field="baseline")
    return Sweep(path, scenarios, variants, list(raw_seeds), None if until is None else str(until),
                 baseline=str(baseline))


def _openb_scenario(item: dict[str, Any], i: int, path: str, read: Callable[[str, str], str]) -> Scenario:
    """``{openb: {nodes: N.csv, pods: P.csv, fill: 1.3}, name: ...}``: the FGD paper's fill
    experiment of a trace (``kubesched trace openb --fill``), the CSV files read here and carried
    by each cell; its row is the fill's report at the paper's checkpoints."""
    from kubesched.traces import read_nodes

    fld = f"scenarios[{i}]"
    for key in item:
        if key not in OPENB_SCENARIO_KEYS:
            raise _unknown(str(key), OPENB_SCENARIO_KEYS, path, f"{fld}.{key}")
    spec = item["openb"]
    if not isinstance(spec, dict):
        raise ConfigError(f"Invalid value: {go_quote(spec)}: must be a mapping {{nodes, pods, fill?}}",
                          source=path, field=f"{fld}.openb")
    for key in spec:
        if key not in OPENB_KEYS:
            raise _unknown(str(key), OPENB_KEYS, path, f"{fld}.openb.{key}")
    texts: dict[str, str] = {}
    for key in ("nodes", "pods"):
        rel = spec.get(key)
        if not isinstance(rel, str) or not rel:
            raise ConfigError("Required value: a CSV file", source=path, field=f"{fld}.openb.{key}")
        texts[key] = read(rel, f"{fld}.openb.{key}")
        # bad rows are found now, once, naming the file, row and column
        (read_nodes if key == "nodes" else _read_tasks_no_times)(str(Path(path).parent / rel))
    factor = spec.get("fill", 1.3)
    if isinstance(factor, bool) or not isinstance(factor, int | float) or not math.isfinite(factor) or factor <= 0:
        raise ConfigError(f"Invalid value: {go_quote(factor)}: must be greater than 0", source=path,
                          field=f"{fld}.openb.fill")
    name = item.get("name", Path(str(spec["pods"])).stem)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"Invalid value: {go_quote(name)}: must be a non-empty string", source=path, field=f"{fld}.name")
    return Scenario(name, openb={"nodes": texts["nodes"], "pods": texts["pods"], "fill": float(factor)})


def _read_tasks_no_times(path: str) -> Any:
    from kubesched.traces import read_tasks

    return read_tasks(path, times=False)


def fill_cell(task: dict[str, Any]) -> dict[str, Any]:
    """One fill cell's row: the GPU allocation at each checkpoint percent arrived (``allocation130``
    ...), the fragmentation amount and ratio at 130 % (``fragAmount130``, ``fragRatio130``), the
    tasks placed and failed (:func:`kubesched.traces._fill.run_fill`)."""
    import tempfile

    from kubesched.scenario._config import simulation_config
    from kubesched.traces import read_nodes, read_tasks
    from kubesched.traces._fill import run_fill

    spec = task["openb"]
    with tempfile.TemporaryDirectory(prefix="kubesched-fill-") as tmp:
        nodes_path, pods_path = Path(tmp, "nodes.csv"), Path(tmp, "pods.csv")
        nodes_path.write_text(spec["nodes"], encoding="utf-8")
        pods_path.write_text(spec["pods"], encoding="utf-8")
        nodes, tasks = read_nodes(str(nodes_path)), read_tasks(str(pods_path), times=False)
    cfg = simulation_config(task["configName"], task["featureGates"], task["config"], warn=_worker_warning,
                            emulated_version=task.get("emulatedVersion") or DEFAULT_VERSION)
    factor = float(spec["fill"])
    report = run_fill(nodes, tasks, cfg, factor=factor, seed=task["seed"])
    row: dict[str, Any] = {}
    for pct in FILL_CHECKPOINTS:
        if pct < len(report.allocation):
            row[f"allocation{pct}"] = report.allocation[pct]
    last = len(report.allocation) - 1
    row[f"fragAmount{last}"] = report.frag_amount[last]
    row[f"fragRatio{last}"] = report.frag_ratio[last]
    row["placed"] = report.placed
    row["failed"] = report.failed
    row["gpuAllocated"] = report.gpu_milli_placed / (report.gpus * 1000) if report.gpus else None
    return row


def _check_scenarios_end(scenarios: list[Scenario], path: str) -> None:
    """Without ``until`` every scenario file must be able to end by itself
    (:func:`kubesched.simulation.check_can_end`), checked before any cell runs; a file that does
    not load is left to its cells, which report it."""
    from kubesched.scenario._manifests import load_manifests
    from kubesched.simulation import check_can_end

    for i, scenario in enumerate(scenarios):
        if scenario.text is None:
            continue
        try:
            manifests = load_manifests([scenario.label], {scenario.label: scenario.text}, validation="Ignore")
        except ConfigError:
            continue
        try:
            check_can_end(manifests)
        except ConfigError as e:
            raise ConfigError(f"{e}; or give the sweep an until", source=path, field=f"scenarios[{i}]") from None


def _unique(names: list[str], path: str, fld: str) -> None:
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise ConfigError(f"Duplicate value: {go_quote(n)}", source=path, field=f"{fld}[{i}].name")
        seen.add(n)


# --- one cell, in a worker --------------------------------------------------------------------


def simulate_cell(task: dict[str, Any]) -> dict[str, Any]:
    """The ``simulate --output json`` object of one cell, exactly as the command would give it."""
    from kubesched.generate._generate import generate_text, parse_spec
    from kubesched.scenario._config import parse_until, simulation_config
    from kubesched.scenario._manifests import load_manifests
    from kubesched.simulation._simulation import Simulation

    label = task["scenario"]
    if task.get("generate") is not None:
        spec = {"seed": task["seed"], **task["generate"]}
        texts = {label: generate_text(parse_spec(spec))}
    elif task.get("files") is not None:  # several manifest files (compare --seeds): [name, text] pairs
        texts = dict(task["files"])
    else:
        texts = {label: task["text"]}
    manifests = load_manifests(list(texts), texts, validation=task.get("validation", "Strict"))
    cfg = simulation_config(task["configName"], task["featureGates"], task["config"], warn=_worker_warning,
                            emulated_version=task.get("emulatedVersion") or DEFAULT_VERSION)
    until = parse_until(task["until"])
    result = Simulation(manifests, cfg, seed=task["seed"], until=until).run_in_virtual_time("trio")
    obj: dict[str, Any] = json.loads(result.to_json())
    return obj


def _worker_warning(line: str) -> None:
    """A configuration's warning, said on the worker's stderr as ``kubesched simulate`` says it."""
    print(f"kubesched: warning: {line}", file=sys.stderr)


def _one_line(e: BaseException) -> str:
    while isinstance(e, BaseExceptionGroup):
        e = e.exceptions[0]
    if isinstance(e, ConfigError):
        text = str(e)
    else:
        first = str(e).strip().splitlines()
        text = f"{type(e).__name__}: {first[0]}" if first else type(e).__name__
    return text.replace("\n", " ")


def run_cell(task: dict[str, Any]) -> dict[str, Any]:
    """Run one cell (in a Dask worker): ``{"status", "metrics", "seconds"}``; never raises for bad input."""
    start = time.perf_counter()
    try:
        metrics = fill_cell(task) if task.get("openb") is not None else cell_metrics(simulate_cell(task))
        status = "ok"
    except Exception as e:  # a cell's failure is its row's status, never the sweep's end
        metrics, status = {}, f"error: {_one_line(e)}"
    return {"status": status, "metrics": metrics, "seconds": time.perf_counter() - start}


def cell_metrics(result: dict[str, Any]) -> dict[str, Any]:
    """One cell's row of metrics, flat keys to numbers or None, from a ``simulate`` JSON result:
    the compare table's metrics (:mod:`kubesched.reporting`, computed once for text, report, compare and
    sweeps), plus what the README promises a sweep's table: the summary's attempts and
    deletions, the scheduled fraction, attempts per pod, the FailedScheduling and Preempted
    events (every occurrence: a folded entry counts as its ``series.count``), and the last
    placement (virtual seconds)."""
    row = compute_metrics(result).table()
    summary = result.get("summary", {})
    events = result.get("events", [])
    pods = summary.get("pods") or 0
    row["attempts"] = summary.get("attempts")
    row["deleted"] = summary.get("deleted")
    row["scheduledFraction"] = summary.get("scheduled", 0) / pods if pods else None
    row["attemptsPerPod"] = summary.get("attempts", 0) / pods if pods else None
    row["failedScheduling"] = sum(occurrences(e) for e in events if e.get("reason") == "FailedScheduling")
    row["preempted"] = sum(occurrences(e) for e in events if e.get("reason") == "Preempted")
    scheduled = [last_seen(e) for e in events if e.get("reason") == "Scheduled"]
    row["lastPlacement"] = max(scheduled) if scheduled else None
    return row


# --- results ----------------------------------------------------------------------------------


def format_value(v: Any) -> str:
    """A CSV cell: '' for None, integers plainly, floats in their shortest round-trip form."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return str(int(v)) + ".0" if v.is_integer() and abs(v) < 1e15 else repr(v)
    return str(v)


@dataclass
class Results:
    """The rows of a sweep (strings, as in the CSV), keyed by (scenario, variant, seed)."""

    columns: list[str] = field(default_factory=lambda: list(FIXED_COLUMNS))
    rows: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)

    def add(self, row: dict[str, str]) -> None:
        for c in row:
            if c not in self.columns and c != DIGEST_COLUMN:
                self.columns.append(c)
        self.rows[(row["scenario"], row["variant"], row["seed"])] = row

    def csv_text(self, order: list[Cell]) -> str:
        buf = io.StringIO()
        cols = [*self.columns, DIGEST_COLUMN]
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for cell in order:
            row = self.rows.get(cell.key)
            if row is not None:
                w.writerow([row.get(c, "") for c in cols])
        return buf.getvalue()

    @classmethod
    def read(cls, path: Path) -> Results:
        out = cls()
        try:
            text = read_text(path)
        except FileNotFoundError:
            return out
        except OSError as e:  # read_text: a file not UTF-8 is an OSError too
            raise ConfigError(f"cannot read the previous results: {e.strerror or e}", source=str(path)) from None
        reader = csv.DictReader(io.StringIO(text))
        if reader.fieldnames is None or not set(FIXED_COLUMNS) <= set(reader.fieldnames):
            raise ConfigError("not a sweep results file (no scenario, variant, seed, status columns)", source=str(path))
        for row in reader:
            out.add({k: v or "" for k, v in row.items() if k is not None})
        return out


def _row(cell: Cell, outcome: dict[str, Any]) -> dict[str, str]:
    row = {"scenario": cell.scenario.label, "variant": cell.variant.name, "seed": str(cell.seed),
           "status": outcome["status"]}
    row.update({k: format_value(v) for k, v in outcome["metrics"].items()})
    row[DIGEST_COLUMN] = cell.digest
    return row


def _write_atomic(path: Path, data: str | bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def write_parquet(path: Path, columns: list[str], rows: list[dict[str, str]]) -> bool:
    """``results.parquet`` (typed columns) when pyarrow is installed; False when it is not."""
    try:
        import pyarrow as pa  # type: ignore[import-not-found, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return False
    data: dict[str, Any] = {}
    for c in columns:
        values = [r.get(c, "") for r in rows]
        if c == "seed":
            data[c] = pa.array([int(v) for v in values], pa.int64())
        elif c in FIXED_COLUMNS or c == DIGEST_COLUMN:
            data[c] = pa.array(values, pa.string())
        else:
            data[c] = pa.array([_number(v) for v in values], pa.float64())
    pq.write_table(pa.table(data), str(path))
    return True


# --- running on Dask --------------------------------------------------------------------------


def check_address(address: str) -> str:
    if not ADDRESS.match(address):
        raise ConfigError(f"Invalid value: {go_quote(address)}: must be a Dask scheduler address such as "
                          "tcp://HOST:8786", field="--scheduler")
    return address


def connect(address: str | None, workers: int | None, timeout: float) -> tuple[Any, Any]:
    """A Dask client: to ``address``, or to a new LocalCluster (one single-threaded worker process per core)."""
    import logging

    # Dask logs to stderr: the sweep's stderr is its progress bar, its closing note or one error line
    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    from distributed import Client, LocalCluster

    if address:
        try:
            return Client(check_address(address), timeout=timeout), None  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if "Timed out" in reason or isinstance(e, TimeoutError):
                reason = f"no answer within {timeout:g}s"
            raise ConfigError(f"cannot reach the Dask scheduler at {address}: {reason}", field="--scheduler") from None
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL
    )
    return Client(cluster), cluster  # type: ignore[no-untyped-call]


@dataclass
class SweepReport:
    cells: int
    ran: int
    skipped: int
    failed: int
    wall: float
    cell_seconds: float
    errors: list[str]


class CellProgress(Protocol):
    """What :func:`run_sweep` tells of its progress: the cells in all, then each cell done."""

    total: int

    def step(self, ok: bool) -> None: ...


class _Quiet:
    def __init__(self, total: int) -> None:
        self.total = total

    def step(self, ok: bool) -> None:
        pass


def run_sweep(sweep: Sweep, out: Path, client: Any, *, progress: CellProgress | None = None,
              on_submitted: Callable[[], None] | None = None) -> SweepReport:
    """Run every cell not already done into ``out``; rows are written as cells complete."""
    from distributed import as_completed

    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "results.csv"
    results = Results.read(csv_path)
    cells = sweep.cells()
    # rows of cells that are no longer in the grid are dropped; ok rows of unchanged cells are kept
    keep = Results()
    todo: list[Cell] = []
    for cell in cells:
        row = results.rows.get(cell.key)
        if row is not None and row.get("status") == "ok" and row.get(DIGEST_COLUMN) == cell.digest:
            keep.add(row)
        else:
            todo.append(cell)
    results = keep
    progress = progress or _Quiet(len(cells))
    progress.total = len(cells)
    for _ in range(len(cells) - len(todo)):
        progress.step(True)
    start = time.perf_counter()
    cell_seconds = 0.0
    errors: list[str] = []
    if todo:
        futures = {
            client.submit(run_cell, cell.task(), key=f"kubesched-cell-{cell.digest}-{i}", retries=2): cell
            for i, cell in enumerate(todo)
        }
        if on_submitted is not None:
            on_submitted()
        for fut in as_completed(list(futures)):  # type: ignore[no-untyped-call]
            cell = futures[fut]
            try:
                outcome = fut.result()
            except Exception as e:  # the task itself failed for good (e.g. its workers kept dying)
                outcome = {"status": f"error: {_one_line(e)}", "metrics": {}, "seconds": 0.0}
            cell_seconds += outcome["seconds"]
            if outcome["status"] != "ok":
                errors.append(f"{cell.scenario.label} / {cell.variant.name} / seed {cell.seed}: {outcome['status']}")
            results.add(_row(cell, outcome))
            _write_atomic(csv_path, results.csv_text(cells))
            progress.step(outcome["status"] == "ok")
            fut.release()
    wall = time.perf_counter() - start
    text = results.csv_text(cells)
    _write_atomic(csv_path, text)
    rows = list(csv.DictReader(io.StringIO(text)))
    cols = [*results.columns, DIGEST_COLUMN]
    parquet = out / "results.parquet"
    if not write_parquet(parquet, cols, rows) and parquet.exists():
        parquet.unlink()  # a stale table would disagree with results.csv
    _write_atomic(out / "sweep.html", render_page(f"kubesched sweep: {Path(sweep.path).name}", cols, rows,
                                                         sweep.baseline or None))
    failed = sum(1 for r in rows if r["status"] != "ok")
    return SweepReport(len(cells), len(todo), len(cells) - len(todo), failed, wall, cell_seconds, errors)


__all__ = [
    "FIXED_COLUMNS", "Cell", "CellProgress", "Results", "Scenario", "Sweep", "SweepReport", "Variant", "cell_metrics",
    "check_address", "connect", "fill_cell", "format_value", "load_sweep", "run_cell", "run_sweep", "simulate_cell",
]
