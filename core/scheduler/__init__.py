"""The scheduler itself (upstream's ``scheduler.go``, ``schedule_one.go``, ``eventhandlers.go``).

``_scheduler`` builds it and runs its loops; each popped pod goes through ``_schedule_one``
(the scheduling cycle, its Filter pass in ``_filterpass``) and ``_binding_cycle`` (binding and
failure handling); ``_eventhandlers`` feeds the cache and the queue from the transport.  In a
simulation ``_driver`` makes the order deterministic, ``_taskpool`` reuses the binding tasks,
``_results`` records every plugin's verdict, and ``_simcluster`` starts a fake cluster with a
scheduler for tests.
"""
