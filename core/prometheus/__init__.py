"""kube-scheduler's metrics in the Prometheus text format, and ``kubesched run``'s HTTP endpoints.

::

    MetricsRecorder (kubesched.metrics._metrics) ──► SchedulerCollector ──► exposition()   simulate --metrics
                                                               └──► serve()        kubesched run
    serve(): GET /metrics, /healthz, /livez, /readyz (and /<endpoint>/<check>); any other path 404

The collector reads the recorder when scraped: counters and histograms as recorded, gauges from
the scheduler's queue at that moment; nothing is copied in between.  Its families carry no
``_created`` series (kube-scheduler's Go client has none), and nothing goes to prometheus-client's
global registry.  The server is h11 over anyio, on the scheduler's event loop: a scrape reads the
scheduler between two of its steps, never in the middle of one.

Health, as kube-scheduler's ``healthz`` package (``k8s.io/apiserver/pkg/server/healthz``):
``/livez`` checks ``ping``; ``/healthz`` checks ``leaderElection`` (with ``--leader-elect``: the
lease renewed within its duration plus 20 s) or else ``ping``; ``/readyz`` checks
``leaderElection``, ``shutdown`` (no SIGTERM yet) and ``sched-handler-sync`` (the informers have
filled the cache).  Success is ``ok`` (200); a failure is 500 with every check listed
(``[+]ping ok``, ``[-]sched-handler-sync failed: reason withheld``) and ``readyz check failed``;
``?verbose`` lists them on success too, ``?exclude=NAME`` skips one.  Unlike kube-scheduler, a
standby replica (``--leader-elect``, not leading) runs no informers, so it is not ready.

Modules: :mod:`._exposition` (the collector, the registry, the text), :mod:`._endpoints` (the
HTTP server and the health checks).
"""

from kubesched.prometheus._endpoints import Check, Endpoints, listen, ping, serve
from kubesched.prometheus._exposition import (
    CONTENT_TYPE,
    SchedulerCollector,
    exposition,
    go_float,
    registry,
)

__all__ = [
    "CONTENT_TYPE",
    "Check",
    "Endpoints",
    "SchedulerCollector",
    "exposition",
    "go_float",
    "listen",
    "ping",
    "registry",
    "serve",
]
