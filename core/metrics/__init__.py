"""What the scheduler measures, as kube-scheduler's ``pkg/scheduler/metrics`` (see ``_metrics``)."""
