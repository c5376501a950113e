"""Synthetic workloads as ordinary manifests, deterministic by seed (``kubesched generate``).

A spec is a flat set of knobs (:data:`KNOBS`): each is a command-line flag (``--node-cpu``) and a
key of a small YAML spec (``nodeCpu``), with one default. What comes out is multi-document YAML
that ``kubesched simulate`` reads like any other input:

- PriorityClasses (``priorityClasses``: name, value, share of the workloads);
- Nodes in pools (``nodePools``, or one pool from the ``node*`` knobs): count, cpu, memory, pods,
  extended resources such as ``nvidia.com/gpu``, labels, taints, spread round-robin over zones;
- workloads arriving as Poisson processes over ``span`` (``kubesched.io/arrival``): bare Pods,
  batch/v1 Jobs, gang Jobs (a scheduling.x-k8s.io/v1alpha1 PodGroup and the pod-group label, or
  the Gang plugin's labels) and apps/v1 Deployments; pods run for ``duration``
  (``kubesched.io/duration`` on the pod or pod template), Deployments live for ``lifetime``
  (``kubesched.io/deletion``); requests come from ``shapes`` (each with a share).

Sizes and durations are drawn from distributions written ``NAME:PARAM=V,...``: ``constant:value=V``
(or the bare value), ``exponential:mean=V``, ``lognormal:median=V,spread=S`` (S is the geometric
standard deviation, >= 1), ``uniform:min=A,max=B``. Every draw comes from a stream of its own
(``random.Random`` seeded with the seed and the stream's name, with our own inverse transforms),
so the same spec and seed give the same objects on any Python (and the same bytes with the same
PyYAML), and changing one knob does not reshuffle the others' draws.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import yaml

from kubesched._errors import ConfigError
from kubesched.api._durations import parse_duration
from kubesched.api._resources import QuantityError, parse_quantity
from kubesched.scenario._manifests import MAX_PODS
from kubesched.validation._validation import go_quote

MAX_NODES = 100_000
"""The most nodes a generated cluster may hold by default (upstream tests clusters of 5000)."""

ARRIVAL = "kubesched.io/arrival"
DURATION = "kubesched.io/duration"
DELETION = "kubesched.io/deletion"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
GANG_NAME_LABEL = "gang.kubesched.io/name"
GANG_COUNT_LABEL = "gang.kubesched.io/available-count"
POOL_LABEL = "kubesched.io/pool"
ZONE_LABEL = "topology.kubernetes.io/zone"
IMAGE = "registry.k8s.io/pause:3.9"
# libyaml's safe dumper when PyYAML was built with it (much faster), else the pure-Python one
_YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True)
class Knob:
    """One generate parameter: its spec key, its flag, its default and its help text."""

    key: str
    default: Any
    help: str
    kind: str  # int | count | duration | dist-duration | dist-size | quantity | choice | str | yaml

    @property
    def flag(self) -> str:
        return "--" + "".join("-" + c.lower() if c.isupper() else c for c in self.key)


KNOBS: tuple[Knob, ...] = (
    Knob("seed", 0, "random seed: the same spec and seed give the same manifests, byte for byte", "int"),
    Knob("span", "1h", "virtual time over which workloads arrive (arrivals fall in [0, span))", "duration"),
    Knob("namespace", "default", "namespace of every workload", "str"),
    # the default node pool (nodePools replaces it)
    Knob("nodes", 10, "number of nodes of the default pool", "count"),
    Knob("nodeCpu", "8", "allocatable cpu of each node", "quantity"),
    Knob("nodeMemory", "32Gi", "allocatable memory of each node", "quantity"),
    Knob("nodePods", 110, "allocatable pods of each node", "count"),
    Knob("nodeExtended", {}, "extended resources of each node, e.g. '{nvidia.com/gpu: 8}'", "yaml"),
    Knob("nodeLabels", {}, "extra labels of each node, e.g. '{disk: ssd}'", "yaml"),
    Knob("nodeTaints", [], "taints of each node, e.g. '[{key: gpu, value: \"true\", effect: NoSchedule}]'", "yaml"),
    Knob("zones", 1, "nodes are spread round-robin over this many zones (zone-a, zone-b, ...)", "count"),
    Knob(
        "nodePools",
        [],
        "node pools, replacing the default pool: a list of {name, count, cpu, memory, pods, extended, "
        "labels, taints, zones}; a missing key takes the node* knob's value",
        "yaml",
    ),
    # workloads
    Knob("pods", 0, "mean number of bare Pods arriving over the span (a Poisson process)", "count"),
    Knob("jobs", 0, "mean number of batch/v1 Jobs arriving over the span (a Poisson process)", "count"),
    Knob("gangs", 0, "mean number of gang Jobs arriving over the span (a Poisson process)", "count"),
    Knob("deployments", 0, "mean number of apps/v1 Deployments arriving over the span (a Poisson process)", "count"),
    Knob("duration", "exponential:mean=10m", "how long each pod runs (kubesched.io/duration), a distribution", "dist-duration"),
    Knob("jobSize", "1", "pods per Job (parallelism = completions), a distribution", "dist-size"),
    Knob("gangSize", "4", "members per gang Job (all or nothing), a distribution", "dist-size"),
    Knob("gangApi", "podgroup", "how gangs are declared: podgroup (PodGroup + pod-group label, for "
         "Coscheduling) or labels (the Gang plugin's labels)", "choice"),
    Knob("replicas", "3", "replicas per Deployment, a distribution", "dist-size"),
    Knob("lifetime", "lognormal:median=2h,spread=2", "how long each Deployment lives "
         "(kubesched.io/deletion), a distribution", "dist-duration"),
    Knob(
        "shapes",
        [{"name": "small", "cpu": "500m", "memory": "1Gi", "share": 1}],
        "pod request shapes, each workload draws one by share: a list of {name, cpu, memory, "
        "share, and extended resources such as nvidia.com/gpu: 1, tolerations, nodeSelector}",
        "yaml",
    ),
    Knob("priorityClasses", [], "PriorityClasses, each workload draws one by share: a list of "
         "{name, value, share} (empty: no priorities)", "yaml"),
    # bounds: a spec asking for more is refused in one line instead of filling memory
    Knob("maxPods", MAX_PODS, "the most pods the workloads may make in all (sizes and replicas drawn)", "count"),
    Knob("maxNodes", MAX_NODES, "the most nodes the pools may hold in all", "count"),
)
KNOB_BY_KEY = {k.key: k for k in KNOBS}
STREAMS = ("pods", "jobs", "gangs", "deployments")
CHOICES = {"gangApi": ("podgroup", "labels")}
POOL_KEYS = {
    "name": None, "count": "nodes", "cpu": "nodeCpu", "memory": "nodeMemory", "pods": "nodePods",
    "extended": "nodeExtended", "labels": "nodeLabels", "taints": "nodeTaints", "zones": "zones",
}
SHAPE_KEYS = {"name", "cpu", "memory", "share", "tolerations", "nodeSelector"}
PRIORITY_KEYS = {"name", "value", "share"}
DIST_PARAMS = {
    "constant": ("value",),
    "exponential": ("mean",),
    "lognormal": ("median", "spread"),
    "uniform": ("min", "max"),
}


# --- distributions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Dist:
    """A named distribution of positive numbers (seconds for durations)."""

    name: str
    params: tuple[float, ...]

    def draw(self, rng: random.Random) -> float:
        p = self.params
        if self.name == "constant":
            return p[0]
        u = rng.random()
        if self.name == "exponential":
            return -p[0] * math.log(1.0 - u)
        if self.name == "uniform":
            return p[0] + (p[1] - p[0]) * u
        # lognormal: Box-Muller from two uniforms, our own so the stream never changes
        z = math.sqrt(-2.0 * math.log(1.0 - u)) * math.cos(2.0 * math.pi * rng.random())
        return p[0] * math.exp(math.log(p[1]) * z)

    def draw_size(self, rng: random.Random) -> int:
        return max(1, round(self.draw(rng)))


def parse_dist(text: Any, field: str, *, durations: bool) -> Dist:
    """``NAME:K=V,...`` or a bare value; values are Go durations when ``durations``."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ConfigError(f"Invalid value: {go_quote(text)}: must be a distribution such as "
                          "exponential:mean=10m", field=field)
    raw = str(text).strip()
    name, _, rest = raw.partition(":")
    if not rest and name not in DIST_PARAMS:
        name, rest = "constant", f"value={raw}"
    if name not in DIST_PARAMS:
        raise ConfigError(f"Unsupported value: {go_quote(name)}: supported values: "
                          + ", ".join(go_quote(n) for n in DIST_PARAMS), field=field)
    given: dict[str, float] = {}
    for part in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in DIST_PARAMS[name]:
            raise ConfigError(f"Invalid value: {go_quote(raw)}: {name} takes "
                              + ", ".join(f"{k}=" for k in DIST_PARAMS[name]), field=field)
        try:
            given[key] = parse_duration(value) if durations and key != "spread" else float(value)
        except ValueError:
            raise ConfigError(f"Invalid value: {go_quote(raw)}: {key}: {go_quote(value)} is not a "
                              + ("duration" if durations and key != "spread" else "number"), field=field) from None
        if not math.isfinite(given[key]):
            raise ConfigError(f"Invalid value: {go_quote(raw)}: {key} must be finite", field=field)
    missing = [k for k in DIST_PARAMS[name] if k not in given]
    if missing:
        raise ConfigError(f"Invalid value: {go_quote(raw)}: {name} needs {', '.join(missing)}", field=field)
    params = tuple(given[k] for k in DIST_PARAMS[name])
    floor = 0.0 if durations else 1.0
    if name == "lognormal" and params[1] < 1:
        raise ConfigError(f"Invalid value: {go_quote(raw)}: spread must be >= 1", field=field)
    low = params[0]
    if name == "uniform" and params[1] < params[0]:
        raise ConfigError(f"Invalid value: {go_quote(raw)}: max must be >= min", field=field)
    if (low < floor) if name in ("constant", "uniform") else (low <= 0):
        bound = f">= {floor:g}" if name in ("constant", "uniform") else "> 0"
        raise ConfigError(f"Invalid value: {go_quote(raw)}: {DIST_PARAMS[name][0]} must be {bound}", field=field)
    return Dist(name, params)


# --- the spec ---------------------------------------------------------------------------------


@dataclass
class Pool:
    name: str
    count: int
    cpu: str
    memory: str
    pods: int
    extended: dict[str, str]
    labels: dict[str, str]
    taints: list[Any]
    zones: int


@dataclass
class Shape:
    name: str
    share: float
    requests: dict[str, str]
    tolerations: list[Any]
    node_selector: dict[str, str]


@dataclass
class Spec:
    """A validated generate spec."""

    seed: int
    span: float
    namespace: str
    pools: list[Pool]
    counts: dict[str, float]  # pods / jobs / gangs / deployments: mean arrivals over the span
    duration: Dist
    job_size: Dist
    gang_size: Dist
    gang_api: str
    replicas: Dist
    lifetime: Dist
    shapes: list[Shape]
    priorities: list[tuple[str, int, float]]
    max_pods: int = 0
    max_nodes: int = 0


def _check_int(value: Any, field: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(f"Invalid value: {go_quote(value)}: must be an integer", field=field)
    if value < minimum:
        raise ConfigError(f"Invalid value: {value}: must be greater than or equal to {minimum}", field=field)
    return int(value)


def _check_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"Invalid value: {go_quote(value)}: must be a number", field=field)
    if value < 0:
        raise ConfigError(f"Invalid value: {value:g}: must be greater than or equal to 0", field=field)
    return float(value)


def _check_quantity(value: Any, field: str, *, positive: bool = True) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ConfigError(f"Invalid value: {go_quote(value)}: must be a quantity such as 500m or 4Gi", field=field)
    text = str(value)
    try:
        q = parse_quantity(text)
    except (QuantityError, ValueError):
        raise ConfigError(f"Invalid value: {go_quote(text)}: quantities must match the regular expression "
                          "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", field=field) from None
    if q < 0 or (positive and q == 0):
        raise ConfigError(f"Invalid value: {go_quote(text)}: must be greater than 0", field=field)
    return text


def _check_mapping(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ConfigError(f"Invalid value: {go_quote(value)}: must be a mapping", field=field)
    return value


def _check_list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(f"Invalid value: {go_quote(value)}: must be a list", field=field)
    return value


def _check_keys(item: Any, allowed: set[str], field: str, *, extended: bool = False) -> dict[str, Any]:
    mapping = _check_mapping(item, field)
    for key in mapping:
        if key not in allowed and not (extended and "/" in key):
            raise ConfigError(f"unknown field {go_quote(key)} (allowed: {', '.join(sorted(allowed))})",
                              field=f"{field}.{key}")
    return mapping


def _share(value: Any, field: str) -> float:
    share = _check_number(value, field)
    if share <= 0:
        raise ConfigError(f"Invalid value: {share:g}: must be greater than 0", field=field)
    return share


def _check_as_node(labels: dict[str, Any], taints: list[Any], labels_field: str, taints_field: str) -> None:
    """A pool's labels and taints as the API server checks them on a Node (what simulate does
    with the nodes written), errors naming the knob."""
    node = {"metadata": {"name": "node", "labels": labels}, "spec": {"taints": taints}}
    _check_as("Node", node, {"spec.taints": taints_field, "metadata.labels": labels_field})


def _check_as_pod(tolerations: list[Any], node_selector: dict[str, Any], where: str) -> None:
    """A shape's tolerations and node selector as the API server checks them on a Pod."""
    pod = {"metadata": {"name": "pod"},
           "spec": {"containers": [{"name": "c", "image": "x"}], "tolerations": tolerations, "nodeSelector": node_selector}}
    _check_as("Pod", pod, {"spec.tolerations": f"{where}.tolerations", "spec.nodeSelector": f"{where}.nodeSelector"})


def _check_as(kind: str, data: dict[str, Any], knobs: dict[str, str]) -> None:
    """``data`` decoded and validated as a ``kind`` of the manifests generate writes; an error
    names the knob its field came from (``knobs``: field prefix to knob)."""
    from kubesched.api._objects import KINDS, convert
    from kubesched.validation._validation import validate_object

    def knob_field(path: str) -> str:
        for prefix, knob in knobs.items():
            if path.startswith(prefix):
                return knob + path[len(prefix) :]
        return path

    try:
        validate_object(convert(data, KINDS[("v1", kind)]), kind)
    except msgspec.ValidationError as e:
        text = str(e)
        at = text.rfind(" - at `$.")
        raise ConfigError(text[:at] if at >= 0 else text, field=knob_field(text[at + 9 : -1] if at >= 0 else "")) from None
    except ConfigError as e:
        raise ConfigError(e.message, field=knob_field(e.field)) from None


def parse_spec(values: dict[str, Any], *, prefix: str = "") -> Spec:
    """Validate a spec mapping (defaults filled in); errors name the field below ``prefix``."""
    _check_mapping(values, prefix or "spec")
    for key in values:
        if key not in KNOB_BY_KEY:
            raise ConfigError(f"unknown field {go_quote(key)} (see kubesched generate --help)",
                              field=f"{prefix}{key}")
    v = {k.key: values.get(k.key, k.default) for k in KNOBS}

    def f(key: str) -> str:
        return f"{prefix}{key}"

    seed = _check_int(v["seed"], f("seed"), -(2**63))
    try:
        span = parse_duration(str(v["span"]))
    except ValueError as e:
        raise ConfigError(str(e), field=f("span")) from None
    if span <= 0:
        raise ConfigError(f"Invalid value: {go_quote(v['span'])}: must be greater than 0", field=f("span"))
    namespace = v["namespace"]
    if not isinstance(namespace, str) or not namespace:
        raise ConfigError(f"Invalid value: {go_quote(namespace)}: must be a non-empty string", field=f("namespace"))

    def pool(item: dict[str, Any], where: str, default_name: str) -> Pool:
        def get(key: str) -> Any:
            knob = POOL_KEYS[key]
            return item[key] if key in item else (v[knob] if knob else default_name)

        def fld(key: str) -> str:  # the pool's own key, or the knob it defaults to
            knob = POOL_KEYS[key]
            return f"{where}{key}" if key in item or not knob else f(knob)

        name = get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"Invalid value: {go_quote(name)}: must be a non-empty string", field=fld("name"))
        extended = {str(r): _check_quantity(q, f"{fld('extended')}[{r}]")
                    for r, q in _check_mapping(get("extended"), fld("extended")).items()}
        labels = _check_mapping(get("labels"), fld("labels"))
        for lk, lv in labels.items():
            if not isinstance(lv, str):
                raise ConfigError(f"Invalid value: {go_quote(lv)}: must be a string", field=f"{fld('labels')}[{lk}]")
        taints = _check_list(get("taints"), fld("taints"))
        for i, t in enumerate(taints):
            _check_keys(t, {"key", "value", "effect"}, f"{fld('taints')}[{i}]")
        _check_as_node(labels, taints, fld("labels"), fld("taints"))
        return Pool(
            name=name,
            count=_check_int(get("count"), fld("count"), 0),
            cpu=_check_quantity(get("cpu"), fld("cpu")),
            memory=_check_quantity(get("memory"), fld("memory")),
            pods=_check_int(get("pods"), fld("pods"), 1),
            extended=extended,
            labels=dict(labels),
            taints=list(taints),
            zones=_check_int(get("zones"), fld("zones"), 1),
        )

    pools_raw = _check_list(v["nodePools"], f("nodePools"))
    pools = [
        pool(_check_keys(item, set(POOL_KEYS), f"{f('nodePools')}[{i}]"), f"{f('nodePools')}[{i}].", f"pool{i + 1}")
        for i, item in enumerate(pools_raw)
    ] or [pool({}, prefix, "node")]
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise ConfigError("Duplicate value: pool names must be unique", field=f("nodePools"))

    shapes = []
    for i, item in enumerate(_check_list(v["shapes"], f("shapes"))):
        where = f"{f('shapes')}[{i}]"
        item = _check_keys(item, SHAPE_KEYS, where, extended=True)
        requests = {"cpu": _check_quantity(item.get("cpu", "100m"), f"{where}.cpu"),
                    "memory": _check_quantity(item.get("memory", "128Mi"), f"{where}.memory")}
        for key, q in item.items():
            if "/" in key:
                requests[key] = _check_quantity(q, f"{where}.{key}")
        tolerations = _check_list(item.get("tolerations", []), f"{where}.tolerations")
        node_selector = dict(_check_mapping(item.get("nodeSelector", {}), f"{where}.nodeSelector"))
        _check_as_pod(tolerations, node_selector, where)
        shapes.append(Shape(
            name=str(item.get("name", f"shape{i + 1}")),
            share=_share(item.get("share", 1), f"{where}.share"),
            requests=requests,
            tolerations=tolerations,
            node_selector=node_selector,
        ))
    if not shapes:
        raise ConfigError("Required value: at least one shape", field=f("shapes"))
    max_pods = _check_int(v["maxPods"], f("maxPods"), 0)
    max_nodes = _check_int(v["maxNodes"], f("maxNodes"), 0)
    if (nodes := sum(p.count for p in pools)) > max_nodes:
        where = f("nodePools") if pools_raw else f("nodes")
        raise ConfigError(f"Invalid value: {nodes}: more nodes than a run may hold ({max_nodes}; maxNodes or --max-nodes sets it)",
                          field=where)
    counts = {k: _check_number(v[k], f(k)) for k in STREAMS}
    for k, mean in counts.items():
        if mean > max_pods:
            raise ConfigError(f"Invalid value: {mean:g}: more pods than a run may make ({max_pods}; maxPods or --max-pods sets it)",
                              field=f(k))

    priorities = []
    for i, item in enumerate(_check_list(v["priorityClasses"], f("priorityClasses"))):
        where = f"{f('priorityClasses')}[{i}]"
        item = _check_keys(item, PRIORITY_KEYS, where)
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError("Required value: a name", field=f"{where}.name")
        value = _check_int(item.get("value", 0), f"{where}.value", -(2**31))
        if value > 1_000_000_000:
            raise ConfigError(f"Invalid value: {value}: must be no greater than 1000000000 "
                              "(higher values are reserved for system classes)", field=f"{where}.value")
        priorities.append((name, value, _share(item.get("share", 1), f"{where}.share")))

    gang_api = v["gangApi"]
    if gang_api not in CHOICES["gangApi"]:
        raise ConfigError(f"Unsupported value: {go_quote(gang_api)}: supported values: "
                          + ", ".join(go_quote(c) for c in CHOICES["gangApi"]), field=f("gangApi"))
    return Spec(
        seed=seed,
        span=span,
        namespace=namespace,
        pools=pools,
        counts=counts,
        duration=parse_dist(v["duration"], f("duration"), durations=True),
        job_size=parse_dist(v["jobSize"], f("jobSize"), durations=False),
        gang_size=parse_dist(v["gangSize"], f("gangSize"), durations=False),
        gang_api=gang_api,
        replicas=parse_dist(v["replicas"], f("replicas"), durations=False),
        lifetime=parse_dist(v["lifetime"], f("lifetime"), durations=True),
        shapes=shapes,
        priorities=priorities,
        max_pods=max_pods,
        max_nodes=max_nodes,
    )


# --- generation -------------------------------------------------------------------------------


def _seconds(t: float) -> str:
    return f"{t:.3f}s"


def _pick(rng: random.Random, items: list[Any], share: Callable[[Any], float]) -> Any:
    total = sum(share(i) for i in items)
    u = rng.random() * total
    for item in items:
        u -= share(item)
        if u < 0:
            return item
    return items[-1]


def _poisson_arrivals(rng: random.Random, mean_count: float, span: float) -> list[float]:
    """Arrival times of a Poisson process with ``mean_count`` arrivals expected in [0, span)."""
    if mean_count <= 0:
        return []
    rate = mean_count / span
    out: list[float] = []
    t = 0.0
    while True:
        t += -math.log(1.0 - rng.random()) / rate
        if t >= span:
            return out
        out.append(t)


def _node(pool: Pool, index: int) -> dict[str, Any]:
    name = f"{pool.name}-{index + 1:04d}"
    zone = f"zone-{chr(ord('a') + index % pool.zones)}" if pool.zones <= 26 else f"zone-{index % pool.zones + 1}"
    alloc = {"cpu": pool.cpu, "memory": pool.memory, "pods": str(pool.pods), **pool.extended}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE_LABEL: zone,
                                              POOL_LABEL: pool.name, **pool.labels}},
    }
    if pool.taints:
        node["spec"] = {"taints": pool.taints}
    node["status"] = {"capacity": dict(alloc), "allocatable": alloc}
    return node


class _Workloads:
    """Draws every workload of a spec, each stream from its own generator."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def rng(self, stream: str) -> random.Random:
        return random.Random(f"kubesched-generate/{self.spec.seed}/{stream}")

    def pod_spec(self, rng: random.Random, restart: str) -> tuple[dict[str, Any], str]:
        spec = self.spec
        shape = _pick(rng, spec.shapes, lambda s: s.share)
        requests = dict(shape.requests)
        resources: dict[str, Any] = {"requests": requests}
        extended = {k: q for k, q in requests.items() if "/" in k}
        if extended:  # extended resources cannot be overcommitted: limits equal requests
            resources["limits"] = extended
        pod: dict[str, Any] = {"restartPolicy": restart}
        if spec.priorities:
            pod["priorityClassName"] = _pick(rng, spec.priorities, lambda p: p[2])[0]
        if shape.node_selector:
            pod["nodeSelector"] = shape.node_selector
        if shape.tolerations:
            pod["tolerations"] = shape.tolerations
        pod["containers"] = [{"name": "main", "image": IMAGE, "resources": resources}]
        return pod, shape.name

    def build(self) -> list[tuple[float, int, list[dict[str, Any]]]]:
        """(arrival, stream order, objects) for every workload."""
        spec = self.spec
        out: list[tuple[float, int, list[dict[str, Any]]]] = []
        made = 0  # pods the workloads make, in all
        for order, stream in enumerate(STREAMS):
            arrivals = _poisson_arrivals(self.rng(f"{stream}/arrivals"), spec.counts[stream], spec.span)
            rng = self.rng(f"{stream}/objects")
            prefix = {"pods": "pod", "jobs": "job", "gangs": "gang", "deployments": "deploy"}[stream]
            for i, t in enumerate(arrivals):
                name = f"{prefix}-{i + 1:05d}"
                objs = getattr(self, stream)(rng, name, t)
                made += sum(_pods_made(o) for o in objs)
                if made > spec.max_pods:
                    raise ConfigError(
                        f"Invalid value: {spec.counts[stream]:g}: these workloads, with the sizes and replicas "
                        f"drawn, make more than {spec.max_pods} pods (maxPods or --max-pods sets it)",
                        field=stream,
                    )
                out.append((t, order, objs))
        out.sort(key=lambda x: (x[0], x[1]))
        return out

    def meta(self, name: str, t: float, **annotations: str) -> dict[str, Any]:
        return {"name": name, "namespace": self.spec.namespace,
                "annotations": {ARRIVAL: _seconds(t), **annotations}}

    def pods(self, rng: random.Random, name: str, t: float) -> list[dict[str, Any]]:
        pod_spec, shape = self.pod_spec(rng, "Never")
        duration = _seconds(self.spec.duration.draw(rng))
        meta = self.meta(name, t, **{DURATION: duration})
        meta["labels"] = {"app": name, "kubesched.io/shape": shape}
        return [{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}]

    def _job(self, rng: random.Random, name: str, t: float, size: int, labels: dict[str, str]) -> dict[str, Any]:
        pod_spec, shape = self.pod_spec(rng, "Never")
        duration = _seconds(self.spec.duration.draw(rng))
        template = {"metadata": {"labels": {"job-name": name, "kubesched.io/shape": shape, **labels},
                                 "annotations": {DURATION: duration}},
                    "spec": pod_spec}
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": self.meta(name, t),
                "spec": {"parallelism": size, "completions": size, "backoffLimit": 0, "template": template}}

    def jobs(self, rng: random.Random, name: str, t: float) -> list[dict[str, Any]]:
        return [self._job(rng, name, t, self.spec.job_size.draw_size(rng), {})]

    def gangs(self, rng: random.Random, name: str, t: float) -> list[dict[str, Any]]:
        size = self.spec.gang_size.draw_size(rng)
        if self.spec.gang_api == "labels":
            return [self._job(rng, name, t, size, {GANG_NAME_LABEL: name, GANG_COUNT_LABEL: str(size)})]
        group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": self.meta(name, t), "spec": {"minMember": size}}
        return [group, self._job(rng, name, t, size, {POD_GROUP_LABEL: name})]

    def deployments(self, rng: random.Random, name: str, t: float) -> list[dict[str, Any]]:
        replicas = self.spec.replicas.draw_size(rng)
        pod_spec, shape = self.pod_spec(rng, "Always")
        deletion = _seconds(t + self.spec.lifetime.draw(rng))
        labels = {"app": name, "kubesched.io/shape": shape}
        return [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": self.meta(name, t, **{DELETION: deletion}),
                 "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                          "template": {"metadata": {"labels": labels}, "spec": pod_spec}}}]


def _pods_made(obj: dict[str, Any]) -> int:
    spec = obj.get("spec", {})
    made: int = {"Pod": 1, "Job": spec.get("parallelism", 0), "Deployment": spec.get("replicas", 0)}.get(obj["kind"], 0)
    return made


def generate_objects(spec: Spec) -> list[dict[str, Any]]:
    """Every object of the workload: PriorityClasses, Nodes, then workloads in arrival order."""
    objs: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
        for name, value, _ in spec.priorities
    ]
    for pool in spec.pools:
        objs.extend(_node(pool, i) for i in range(pool.count))
    for _, _, group in _Workloads(spec).build():
        objs.extend(group)
    return objs


def generate_text(spec: Spec) -> str:
    """The manifests as multi-document YAML (the same bytes for the same spec)."""
    head = f"# kubesched generate (seed {spec.seed}): ordinary manifests for kubesched simulate\n"
    return head + yaml.dump_all(generate_objects(spec), Dumper=_YAML_DUMPER, sort_keys=False,
                                default_flow_style=False, width=1000)


__all__ = [
    "CHOICES", "KNOB_BY_KEY", "KNOBS", "MAX_NODES", "Dist", "Knob", "Spec", "generate_objects", "generate_text", "parse_dist",
    "parse_spec",
]
