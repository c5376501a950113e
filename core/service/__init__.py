"""kubesched as a service: the scheduler on a live cluster, and a scenario served as a cluster.

::

    run_scheduler(RunOptions, SchedulerConfig)     a KubeTransport to the API server ─► a Scheduler
        (apply_config_sections: clientConnection     (leader election: only while leading), the
         and leaderElection of the config file)      metrics and health endpoints (--metrics-port)
                                                     ─► 0 on a signal, 1 on a lost lease
    serve_manifests(manifests, port=...)           a FakeCluster behind the Kubernetes API
                                                     (transports.apiserver), arrivals in real time

    configure_logging(verbosity, log_level)       kube-scheduler's -v=N on Python logging (run only)

Modules: :mod:`._run` (``kubesched run``), :mod:`._fake_apiserver` (``kubesched fake-apiserver``).
"""

from kubesched.service._fake_apiserver import serve_manifests
from kubesched.service._run import (
    RunOptions,
    apply_config_sections,
    configure_logging,
    run_scheduler,
)

__all__ = ["RunOptions", "apply_config_sections", "configure_logging", "run_scheduler", "serve_manifests"]
