"""Published cluster traces as scenarios, written as ordinary manifests (``kubesched trace``).

One trace format so far, ``openb``: the Alibaba GPU cluster trace v2023 of the paper "Beware of
Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent" (USENIX ATC
'23), published in the alibaba/clusterdata repository (folder ``cluster-trace-gpu-v2023``) and
used by the paper's artifact, the hkust-adsl/kubernetes-scheduler-simulator repository. Two CSV
files, read row by row with the csv module into compact records::

    openb_node_list_*.csv   sn, cpu_milli, memory_mib, gpu, model
    openb_pod_list_*.csv    name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
                            pod_phase, creation_time, deletion_time, scheduled_time

What comes out (docs/traces.md has the full contract):

- a Node per node row: ``cpu`` from cpu_milli, ``memory`` from memory_mib (MiB), ``pods`` 110 (the
  kubelet's default; ``--node-pods``), the GPUs as ``nvidia.com/gpu`` (``--shared-gpu whole``) or
  as ``alibabacloud.com/gpu-milli`` = gpu x 1000 (``--shared-gpu milli``, the artifact's resource
  name), labels ``kubernetes.io/hostname`` and ``alibabacloud.com/gpu-card-model`` (the model, as
  the artifact labels its nodes);
- a Pod per task row: requests from cpu_milli / memory_mib, GPUs as ``num_gpu`` whole devices or
  ``num_gpu x gpu_milli`` milli-units (limits equal, as the API server requires of extended
  resources), ``gpu_spec`` (``|``-separated models) as a required node affinity ``In`` those
  models, the trace's qos and pod_phase as labels;
- time, by ``--mode``: ``replay`` — each task arrives at its creation_time and runs as long as it
  ran in the trace (deletion_time - scheduled_time); a task the trace never scheduled is deleted at
  its deletion_time. ``fill`` — the paper's experiment: every task in an order shuffled by
  ``--seed``, then copies of tasks drawn with replacement appended until the next one would take
  the GPU requests past ``--fill-factor`` x the cluster's GPUs (or tasks removed at random while
  they exceed it), one arrival per second, none ever finishing;
- gangs, by ``--gangs``: none, ``same-second`` (consecutive tasks created in the same second with
  identical requests and QoS) or ``split`` (a task of k > 1 GPUs becomes k one-GPU members), as
  PodGroups or the Gang plugin's labels (``--gang-api``).

The same files and options give the same bytes (``random.Random`` seeded with the seed and the
stream's name, as ``kubesched generate`` does). Bad input is one line naming the file, the row (the
file's line number: the header is row 1) and the column.
"""

from __future__ import annotations

import csv
import errno
import json
import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

import yaml

from kubesched._errors import ConfigError
from kubesched.api._decoding import MAX_INPUT_BYTES
from kubesched.generate._generate import (
    ARRIVAL,
    DELETION,
    DURATION,
    GANG_COUNT_LABEL,
    GANG_NAME_LABEL,
    IMAGE,
    POD_GROUP_LABEL,
)
from kubesched.scenario._manifests import MAX_PODS
from kubesched.validation._validation import dns1123_subdomain_errors, go_quote, label_value_errors

GPU = "nvidia.com/gpu"
"""The GPU resource of ``--shared-gpu whole``: a task's num_gpu whole devices."""
GPU_MILLI = "alibabacloud.com/gpu-milli"
"""The GPU resource of ``--shared-gpu milli`` (the artifact's name): 1000 per GPU; also the pod
annotation carrying the trace's per-GPU share, as the artifact's pods carry it."""
GPU_COUNT = "alibabacloud.com/gpu-count"
"""The pod annotation carrying the trace's num_gpu, as the artifact's pods carry it."""
MODEL_LABEL = "alibabacloud.com/gpu-card-model"
"""The node label holding the GPU model, which ``gpu_spec`` affinities select on (the artifact's key)."""
QOS_LABEL = "kubesched.io/trace-qos"
PHASE_LABEL = "kubesched.io/trace-phase"
NODE_PODS = 110
FILL_FACTOR = 1.3
MODES = ("replay", "fill")
SHARED_GPU = ("whole", "milli")
GANGS = ("none", "same-second", "split")
GANG_APIS = ("podgroup", "labels")
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec")
TIME_COLUMNS = ("creation_time", "deletion_time", "scheduled_time")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class TraceNode:
    """One row of a node list."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class Task:
    """One row of a pod list (times in seconds from the trace's start, None when empty)."""

    row: int
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    """The share of each GPU in milli (1-1000); 0 for a task without GPUs."""
    gpu_spec: tuple[str, ...]
    qos: str = ""
    phase: str = ""
    creation: float | None = None
    deletion: float | None = None
    scheduled: float | None = None

    @property
    def gpu_request(self) -> int:
        """The GPU this task asks for, in milli-GPUs (num_gpu x gpu_milli)."""
        return self.num_gpu * self.gpu_milli


@dataclass(frozen=True, slots=True)
class Unit:
    """What arrives at once: one task, or the members of a gang (``gang`` its name)."""

    members: tuple[Task, ...]
    gang: str = ""

    @property
    def gpu_request(self) -> int:
        return sum(t.gpu_request for t in self.members)


@dataclass(frozen=True)
class Options:
    """The options of one conversion (the command's flags)."""

    mode: str = "replay"
    seed: int = 0
    fill_factor: float = FILL_FACTOR
    shared_gpu: str = "whole"
    gangs: str = "none"
    gang_api: str = "podgroup"
    node_pods: int = NODE_PODS
    namespace: str = "default"
    emulated_version: str = ""
    """``--emulated-version``: the Kubernetes minor the scenario is for, named in the header
    line (the objects written are the same for every minor kubesched emulates)."""


# --- reading the CSV files --------------------------------------------------------------------


MAX_LINE = 1 << 20
"""The longest line a trace's CSV file may have (``/dev/zero`` is one endless line)."""


def _bounded_lines(f: IO[str]) -> Iterator[str]:
    """The file's lines, each at most MAX_LINE characters and all of them at most
    MAX_INPUT_BYTES: past either, an OSError whose strerror is one line."""
    total = 0
    while line := f.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE:
            raise OSError(errno.EFBIG, "a line longer than 1 MiB, the most a CSV line may hold")
        total += len(line)
        if total > MAX_INPUT_BYTES:
            raise OSError(errno.EFBIG, "larger than 1 GiB, the most an input may hold")
        yield line


class _Rows:
    """A CSV file read row by row: the header's columns by name, errors naming row and column."""

    def __init__(self, path: str, required: Sequence[str]) -> None:
        self.path = path
        self.required = required
        self.row = 1

    def error(self, message: str, column: str = "") -> ConfigError:
        where = f"row {self.row}, column {column}" if column else f"row {self.row}"
        return ConfigError(message, source=self.path, field=where)

    def __iter__(self) -> Iterator[dict[str, str]]:
        try:
            with Path(self.path).open(encoding="utf-8-sig", newline="") as f:
                yield from self._rows(f)
        except OSError as e:
            raise ConfigError(f"cannot read: {e.strerror or e}", source=self.path) from None
        except UnicodeDecodeError:
            raise self.error("not UTF-8 text") from None
        except csv.Error as e:
            raise self.error(f"malformed CSV: {e}") from None

    def _rows(self, f: IO[str]) -> Iterator[dict[str, str]]:
        reader = csv.reader(_bounded_lines(f))
        header = next(reader, None)
        if header is None:
            raise self.error("Required value: a header row (" + ", ".join(self.required) + ")")
        header = [h.strip() for h in header]
        for column in self.required:
            if column not in header:
                raise self.error(f"Required value: the header has no such column (it has {', '.join(header)})",
                                 column)
        for fields in reader:
            self.row = reader.line_num
            if not fields or fields == [""]:
                continue  # a blank line
            if len(fields) != len(header):
                raise self.error(f"Invalid value: {len(fields)} fields: the header has {len(header)}")
            yield dict(zip(header, fields, strict=True))

    def number(self, values: dict[str, str], column: str) -> float | None:
        """A column's number (None when empty)."""
        text = values[column].strip()
        if not text:
            return None
        if _NUMBER.fullmatch(text) is None:
            raise self.error(f"Invalid value: {go_quote(text)}: must be a number", column)
        value = float(text)
        if not math.isfinite(value):
            raise self.error(f"Invalid value: {go_quote(text)}: must be a number", column)
        if value < 0:
            raise self.error(f"Invalid value: {go_quote(text)}: must be greater than or equal to 0", column)
        return value

    def integer(self, values: dict[str, str], column: str, *, maximum: int | None = None) -> int:
        """A column's non-negative integer (``12000`` or ``12000.0``); required."""
        value = self.number(values, column)
        if value is None:
            raise self.error("Required value: must be a number", column)
        if not value.is_integer():
            raise self.error(f"Invalid value: {go_quote(values[column].strip())}: must be an integer", column)
        if maximum is not None and value > maximum:
            raise self.error(f"Invalid value: {go_quote(values[column].strip())}: must be no greater than {maximum}",
                             column)
        return int(value)

    def name(self, values: dict[str, str], column: str) -> str:
        text = values[column].strip()
        if not text:
            raise self.error("Required value", column)
        errs = dns1123_subdomain_errors(text)
        if errs:
            raise self.error(f"Invalid value: {go_quote(text)}: {errs[0]}", column)
        return text

    def label(self, values: dict[str, str], column: str, text: str | None = None) -> str:
        """A label value (``nan``, as pandas prints an empty cell, is empty)."""
        text = (values.get(column, "") if text is None else text).strip()
        if text.lower() == "nan":
            return ""
        errs = label_value_errors(text)
        if errs:
            raise self.error(f"Invalid value: {go_quote(text)}: {errs[0]}", column)
        return text


def read_nodes(path: str) -> list[TraceNode]:
    """Every node of an openb node list, in file order."""
    rows = _Rows(path, NODE_COLUMNS)
    nodes: list[TraceNode] = []
    seen: set[str] = set()
    for values in rows:
        name = rows.name(values, "sn")
        if name in seen:
            raise rows.error(f"Duplicate value: {go_quote(name)}", "sn")
        seen.add(name)
        nodes.append(TraceNode(name, rows.integer(values, "cpu_milli"), rows.integer(values, "memory_mib"),
                               rows.integer(values, "gpu"), rows.label(values, "model")))
    return nodes


def read_tasks(path: str, *, times: bool) -> list[Task]:
    """Every task of an openb pod list, in file order (with their times when ``times``)."""
    rows = _Rows(path, POD_COLUMNS + (TIME_COLUMNS if times else ()))
    tasks: list[Task] = []
    for values in rows:
        num_gpu = rows.integer(values, "num_gpu")
        gpu_milli = 0
        if num_gpu:
            gpu_milli = rows.integer(values, "gpu_milli", maximum=1000)
            if gpu_milli == 0:
                raise rows.error(f"Invalid value: {go_quote(values['gpu_milli'].strip())}: must be greater than "
                                 "0 when num_gpu is not 0", "gpu_milli")
        spec = values["gpu_spec"].strip()
        models = [] if spec.lower() == "nan" else [rows.label(values, "gpu_spec", m) for m in spec.split("|")]
        task = Task(
            row=rows.row, name=rows.name(values, "name"), cpu_milli=rows.integer(values, "cpu_milli"),
            memory_mib=rows.integer(values, "memory_mib"), num_gpu=num_gpu, gpu_milli=gpu_milli,
            gpu_spec=tuple(dict.fromkeys(m for m in models if m)),  # duplicates dropped, order kept
            qos=rows.label(values, "qos"), phase=rows.label(values, "pod_phase"),
        )
        if times:
            task = _with_times(rows, values, task)
        tasks.append(task)
    return tasks


def _with_times(rows: _Rows, values: dict[str, str], task: Task) -> Task:
    creation = rows.number(values, "creation_time")
    if creation is None:
        raise rows.error("Required value: must be a number", "creation_time")
    deletion = rows.number(values, "deletion_time")
    scheduled = rows.number(values, "scheduled_time")
    if scheduled is not None and scheduled < creation:
        raise rows.error(f"Invalid value: {go_quote(values['scheduled_time'].strip())}: must not be before "
                         f"creation_time ({creation:g})", "scheduled_time")
    start = creation if scheduled is None else scheduled
    if deletion is not None and deletion < start:
        before = "creation_time" if scheduled is None else "scheduled_time"
        raise rows.error(f"Invalid value: {go_quote(values['deletion_time'].strip())}: must not be before "
                         f"{before} ({start:g})", "deletion_time")
    return replace(task, creation=creation, deletion=deletion, scheduled=scheduled)


# --- tasks into units (gangs) and the fill experiment -------------------------------------------


def group_units(tasks: Sequence[Task], gangs: str) -> list[Unit]:
    """The units that arrive: one per task, or gangs by the ``--gangs`` rule."""
    if gangs == "split":
        return [_split(t) if t.num_gpu > 1 else Unit((t,)) for t in tasks]
    if gangs == "none":
        return [Unit((t,)) for t in tasks]
    units: list[Unit] = []
    run: list[Task] = []
    for t in tasks:  # same-second: consecutive tasks of one creation second, requests and QoS
        if run and _alike(run[0]) != _alike(t):
            units.append(_gang(run))
            run = []
        run.append(t)
    if run:
        units.append(_gang(run))
    return units


def _alike(t: Task) -> tuple[Any, ...]:
    return (t.creation, t.cpu_milli, t.memory_mib, t.num_gpu, t.gpu_milli, t.gpu_spec, t.qos)


def _gang(run: list[Task]) -> Unit:
    return Unit(tuple(run), run[0].name if len(run) > 1 else "")


def _split(t: Task) -> Unit:
    """A task of k GPUs as a gang of k one-GPU members sharing its cpu and memory (the remainder
    of an uneven division going one unit each to the first members)."""
    k = t.num_gpu
    members = tuple(
        replace(t, name=f"{t.name}-{i}", num_gpu=1,
                cpu_milli=t.cpu_milli // k + (1 if i < t.cpu_milli % k else 0),
                memory_mib=t.memory_mib // k + (1 if i < t.memory_mib % k else 0))
        for i in range(k)
    )
    return Unit(members, t.name)


def fill(units: Sequence[Unit], capacity: int, factor: float, seed: int, *, max_pods: int = MAX_PODS) -> list[Unit]:
    """The paper's experiment shape (the artifact's workload tuning): every unit, in an order
    shuffled by ``seed``; then, while the GPU requests are under ``factor`` x ``capacity`` (milli-
    GPUs), copies of units drawn with replacement appended until the next would take them past
    it; or, while they are over it, units removed at random."""
    rng = random.Random(f"kubesched-trace/{seed}/fill")
    order = list(units)
    rng.shuffle(order)
    target = factor * capacity
    total = sum(u.gpu_request for u in order)
    while total > target:
        total -= order.pop(rng.randrange(len(order))).gpu_request
    if total == target or not units:
        return order
    copies = 0
    pods = sum(len(u.members) for u in order)
    while True:
        unit = units[rng.randrange(len(units))]
        if total + unit.gpu_request > target:
            return order
        order.append(_copy(unit, copies))
        total += unit.gpu_request
        copies += 1
        pods += len(unit.members)
        if pods > max_pods:
            raise ConfigError(f"Invalid value: {factor:g}: the fill makes more than {max_pods} pods", field="--fill-factor")


def _copy(unit: Unit, i: int) -> Unit:
    """A drawn unit again, named ``<name>-tuned-<i>`` as the artifact names its copies."""
    members = tuple(replace(t, name=f"{t.name}-tuned-{i}") for t in unit.members)
    return Unit(members, f"{unit.gang}-tuned-{i}" if unit.gang else "")


# --- the manifests ----------------------------------------------------------------------------


def _seconds(t: float) -> str:
    return f"{int(t)}s" if t.is_integer() else f"{t:.3f}".rstrip("0") + "s"


def node_object(node: TraceNode, opts: Options) -> dict[str, Any]:
    """The Node of a node row."""
    alloc = {"cpu": f"{node.cpu_milli}m", "memory": f"{node.memory_mib}Mi", "pods": str(opts.node_pods)}
    if node.gpus:
        alloc.update({GPU: str(node.gpus)} if opts.shared_gpu == "whole" else {GPU_MILLI: str(node.gpus * 1000)})
    labels = {"kubernetes.io/hostname": node.name}
    if node.model:
        labels[MODEL_LABEL] = node.model
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name, "labels": labels},
            "status": {"capacity": dict(alloc), "allocatable": alloc}}


def pod_object(task: Task, annotations: dict[str, str], labels: dict[str, str], opts: Options) -> dict[str, Any]:
    """The Pod of a task, with its time ``annotations`` and its gang ``labels``."""
    requests = {"cpu": f"{task.cpu_milli}m", "memory": f"{task.memory_mib}Mi"}
    resources: dict[str, Any] = {"requests": requests}
    annotations = dict(annotations)
    labels = dict(labels)
    if task.qos:
        labels[QOS_LABEL] = task.qos
    if task.phase:
        labels[PHASE_LABEL] = task.phase
    spec: dict[str, Any] = {"restartPolicy": "Never"}
    if task.num_gpu:
        name, amount = (GPU, task.num_gpu) if opts.shared_gpu == "whole" else (GPU_MILLI, task.gpu_request)
        requests[name] = str(amount)
        resources["limits"] = {name: str(amount)}  # extended resources: limits equal requests
        annotations[GPU_MILLI] = str(task.gpu_milli)
        annotations[GPU_COUNT] = str(task.num_gpu)
        if task.gpu_spec:
            term = {"matchExpressions": [{"key": MODEL_LABEL, "operator": "In", "values": list(task.gpu_spec)}]}
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                 {"nodeSelectorTerms": [term]}}}
    spec["containers"] = [{"name": "main", "image": IMAGE, "resources": resources}]
    meta: dict[str, Any] = {"name": task.name, "namespace": opts.namespace}
    if labels:
        meta["labels"] = labels
    meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _replay_times(task: Task) -> dict[str, str]:
    """Arrival at creation_time; the run the trace saw (deletion - scheduled) as the duration; a
    task never scheduled deleted at deletion_time (a second after its arrival when the trace,
    which counts whole seconds, deleted it in the second it arrived)."""
    assert task.creation is not None
    out = {ARRIVAL: _seconds(task.creation)}
    if task.scheduled is not None:
        if task.deletion is not None:
            out[DURATION] = _seconds(task.deletion - task.scheduled)
    elif task.deletion is not None:
        out[DELETION] = _seconds(task.deletion if task.deletion > task.creation else task.creation + 1)
    return out


def unit_objects(unit: Unit, times: dict[str, str], opts: Options) -> Iterator[dict[str, Any]]:
    """The objects of one unit: its PodGroup (a gang with ``--gang-api podgroup``) and its Pods."""
    each = [times if opts.mode == "fill" else _replay_times(t) for t in unit.members]
    labels: dict[str, str] = {}
    if unit.gang and opts.gang_api == "labels":
        labels = {GANG_NAME_LABEL: unit.gang, GANG_COUNT_LABEL: str(len(unit.members))}
    elif unit.gang:
        labels = {POD_GROUP_LABEL: unit.gang}
        meta = {"name": unit.gang, "namespace": opts.namespace, "annotations": {ARRIVAL: each[0][ARRIVAL]}}
        yield {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta,
               "spec": {"minMember": len(unit.members)}}
    for task, times_of_task in zip(unit.members, each, strict=True):
        yield pod_object(task, times_of_task, labels, opts)


def scenario(nodes: Sequence[TraceNode], tasks: Sequence[Task], opts: Options, *,
             nodes_source: str = "nodes", pods_source: str = "pods") -> Iterator[dict[str, Any]]:
    """Every object of the scenario: the Nodes, then the workload in arrival order."""
    units = group_units(tasks, opts.gangs)
    if opts.mode == "fill":
        capacity = sum(n.gpus for n in nodes) * 1000
        if capacity == 0:
            raise ConfigError("Invalid value: 0: the nodes have no GPU to fill (--mode fill)", source=nodes_source,
                              field="column gpu")
        if not any(u.gpu_request for u in units):
            raise ConfigError("Invalid value: no task asks for a GPU, so no number of them fills the GPUs "
                              "(--mode fill)", source=pods_source, field="column num_gpu")
        units = fill(units, capacity, opts.fill_factor, opts.seed)
    _check_names(units, pods_source)
    for node in nodes:
        yield node_object(node, opts)
    for i, unit in enumerate(units):
        times = {ARRIVAL: _seconds(float(i))} if opts.mode == "fill" else {}
        yield from unit_objects(unit, times, opts)


def _check_names(units: Sequence[Unit], source: str) -> None:
    """Pod names (and gang names) are unique, as the API server would require."""
    pods: set[str] = set()
    for unit in units:
        for t in unit.members:
            errs = dns1123_subdomain_errors(t.name)
            if errs or t.name in pods:
                why = errs[0] if errs else "a pod of that name comes earlier"
                raise ConfigError(f"Invalid value: {go_quote(t.name)}: {why}", source=source,
                                  field=f"row {t.row}, column name")
            pods.add(t.name)


def header(opts: Options, nodes_path: str, pods_path: str) -> str:
    """The comment line opening the output: what was made, from what."""
    how = opts.mode
    if opts.mode == "fill":
        how += f", seed {opts.seed}, fill factor {opts.fill_factor:g}"
    how += f", shared GPUs {opts.shared_gpu}"
    if opts.gangs != "none":
        how += f", gangs {opts.gangs} ({opts.gang_api})"
    run = f"kubesched simulate --emulated-version {opts.emulated_version}" if opts.emulated_version else "kubesched simulate"
    return (f"# kubesched trace openb ({how}) from {Path(nodes_path).name} and {Path(pods_path).name}: "
            f"ordinary manifests for {run}\n")


def write(out: IO[str], nodes_path: str, pods_path: str, opts: Options) -> None:
    """Read both files, then write the manifests one document at a time."""
    nodes = read_nodes(nodes_path)
    needs_times = opts.mode == "replay" or opts.gangs == "same-second"
    tasks = read_tasks(pods_path, times=needs_times)
    objects = scenario(nodes, tasks, opts, nodes_source=nodes_path, pods_source=pods_path)
    first = next(objects, None)  # the checks run before anything is written
    out.write(header(opts, nodes_path, pods_path))
    if first is None:
        return
    out.write(to_yaml(first))
    for obj in objects:
        out.write("---\n")
        out.write(to_yaml(obj))


# PyYAML's representer costs ~1 ms a pod (12 s for the fill experiment's 10,000 pods); these
# documents hold only mappings, lists, strings and integers, written here in PyYAML's block style
_PLAIN = re.compile(r"[A-Za-z0-9][-A-Za-z0-9._/:]*")
_RESOLVE: Callable[[Any, str, tuple[bool, bool]], str] = yaml.resolver.Resolver().resolve  # the tag of a plain scalar
_SCALARS: dict[str, str] = {}


def _scalar(text: str) -> str:
    """A string as PyYAML writes it: plain when it reads back as that string, else quoted."""
    done = _SCALARS.get(text)
    if done is None:
        plain = (_PLAIN.fullmatch(text) is not None and not text.endswith(":")
                 and _RESOLVE(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str")
        if plain:
            done = text
        elif text.isprintable():
            done = "'" + text.replace("'", "''") + "'"
        else:
            done = json.dumps(text)
        if len(_SCALARS) < 100_000:
            _SCALARS[text] = done
    return done


def to_yaml(obj: dict[str, Any]) -> str:
    """One document (mappings, lists, strings, integers) as YAML block text, as PyYAML would write it."""
    lines: list[str] = []
    _mapping(obj, "", lines)
    return "\n".join(lines) + "\n"


def _mapping(obj: dict[str, Any], indent: str, lines: list[str], first: str | None = None) -> None:
    for i, (key, value) in enumerate(obj.items()):
        head = (first if i == 0 and first is not None else indent) + _scalar(key) + ":"
        if isinstance(value, dict) and value:
            lines.append(head)
            _mapping(value, indent + "  ", lines)
        elif isinstance(value, list) and value:
            lines.append(head)
            _sequence(value, indent, lines)
        elif isinstance(value, dict | list):
            lines.append(head + (" {}" if isinstance(value, dict) else " []"))
        else:
            lines.append(head + " " + _value(value))


def _sequence(items: list[Any], indent: str, lines: list[str]) -> None:
    for item in items:
        if isinstance(item, dict) and item:
            _mapping(item, indent + "  ", lines, first=indent + "- ")
        else:
            lines.append(indent + "- " + _value(item))


def _value(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else _scalar(str(value))


__all__ = [
    "FILL_FACTOR", "GANG_APIS", "GANGS", "GPU", "GPU_MILLI", "MODEL_LABEL", "MODES", "NODE_PODS", "SHARED_GPU", "Options",
    "Task", "TraceNode", "Unit", "fill", "group_units", "read_nodes", "read_tasks", "scenario", "write",
]
