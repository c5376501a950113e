"""Benchmarks: upstream scheduler_perf's workloads on the fake cluster, in wall-clock time.

::

    WORKLOADS[name] ─► sized(workload, nodes=..., pods=...) ─► run(workload) (or await
        run_workload on a loop of one's own): the init pods scheduled, then the measured pods
        timed from creation to the last bind ─► BenchResult (pods/s, attempt p50/p99, gangs)
    run_day(nodes, pods): a day of Jobs and Deployments in virtual time ─► wall time, peak RSS

    check_sizes(workload): sizes that cannot hold the pods refused by arithmetic, before any work

Modules: :mod:`._workloads` (the cases, each with its upstream source), :mod:`._capacity` (the
up-front size check), :mod:`._runner`, :mod:`._day`.
"""

from kubesched.bench._day import DAY_NODES, DAY_PODS, day_manifests, run_day
from kubesched.bench._runner import BenchResult, check_sizes, run, run_workload, sized
from kubesched.bench._workloads import WORKLOADS, Workload

__all__ = [
    "DAY_NODES",
    "DAY_PODS",
    "WORKLOADS",
    "BenchResult",
    "Workload",
    "check_sizes",
    "day_manifests",
    "run",
    "run_day",
    "run_workload",
    "sized",
]
