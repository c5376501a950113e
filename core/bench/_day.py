"""``bench day``: a day of Jobs and Deployments on a large cluster in virtual time, timed in wall
time with the peak RSS (the simulation's own cost, not the scheduler's speed)."""

from __future__ import annotations

from typing import Any

from kubesched.bench._workloads import node_maker

__all__ = ["DAY_NODES", "DAY_PODS", "day_manifests", "run_day"]


DAY_NODES = 5000
DAY_PODS = 100_000


def day_manifests(nodes: int = DAY_NODES, pods: int = DAY_PODS, *, seed: int = 0) -> list[Any]:
    """A day of work on ``nodes`` nodes (4 CPU, 32Gi, 110 pods): Deployments holding a tenth
    of ``pods`` for the whole day, and Jobs of 100 pods (parallelism 25; durations 5 to 60
    minutes) arriving evenly over 24 hours for the rest."""
    import random

    from kubesched.api._objects import Deployment, Job, convert
    from kubesched.scenario._manifests import Manifest

    r = random.Random(seed)
    out: list[Manifest] = []

    def add(obj: Any, kind: str, arrival: float = 0.0) -> None:
        out.append(Manifest(obj, kind, "day", len(out) + 1, arrival, len(out)))

    for i in range(nodes):
        add(node_maker()(i), "Node")
    container = {"name": "c", "image": "x", "resources": {"requests": {"cpu": "", "memory": "1Gi"}}}
    serving = pods // 10
    deployments = max(1, serving // 500)
    for d in range(deployments):
        c = {**container, "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
        add(convert({"metadata": {"name": f"web-{d}", "namespace": "day"}, "spec": {
            "replicas": serving // deployments, "selector": {"matchLabels": {"app": f"web-{d}"}},
            "template": {"metadata": {"labels": {"app": f"web-{d}"}}, "spec": {"containers": [c]}}}}, Deployment),
            "Deployment")  # fmt: skip
    jobs = max(1, (pods - serving) // 100)
    for j in range(jobs):
        minutes = r.choice([5, 10, 15, 30, 45, 60])
        c = {**container, "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}
        arrival = 86400.0 * j / jobs
        add(convert({"metadata": {"name": f"job-{j}", "namespace": "day"}, "spec": {
            "parallelism": 25, "completions": 100,
            "template": {"metadata": {"annotations": {"kubesched.io/duration": f"{minutes}m"}},
                         "spec": {"restartPolicy": "Never", "containers": [c]}}}}, Job),
            "Job", arrival)  # fmt: skip
    out.sort(key=lambda m: (m.arrival, m.order))
    return out


def run_day(nodes: int | None = None, pods: int | None = None, *, backend: str = "asyncio") -> dict[str, Any]:
    """``kubesched bench day``: the simulation's wall time and peak RSS (virtual time inside)."""
    import resource

    from kubesched.simulation._simulation import Simulation
    from kubesched.transports.fake import virtual_time

    nodes = DAY_NODES if nodes is None else nodes
    pods = DAY_PODS if pods is None else pods
    sim = Simulation(day_manifests(nodes, pods), until=86400.0)
    result, wall = virtual_time.run_measured(sim.run, backend=backend)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    s = result.summary
    return {
        "workload": "day", "nodes": nodes, "pods": s["pods"], "succeeded": s["succeeded"],
        "scheduled": s["scheduled"], "attempts": s["attempts"], "virtualSeconds": s["virtualSeconds"],
        "timeline": len(result.timeline), "wallSeconds": round(wall, 2), "peakRssMiB": round(rss, 1),
    }  # fmt: skip
