"""The framework runtime (upstream's ``framework/runtime``) and the types its plugins see.

A profile is a :class:`~kubesched.runtime._framework.Framework`: built by ``_plugins`` (plugin
construction, multiPoint expansion, the call wrappers), it runs each extension point in turn
through the parts it holds — PreFilter and Filter in ``_filter_runners`` (with the nominated pods:
``_nominated_filter``), PreScore and Score in ``_score_runners``, Reserve, Permit and the binding
in ``_binding_runners``, Permit's waits in ``_waiting_pods`` — and hands plugins
``_cyclestate``, ``_status``, ``_infos`` (PodInfo/NodeInfo), ``_nodeinfo`` (NodeBatch columns)
and ``_events`` (cluster events, queueing hints).  ``_extender`` speaks the HTTP extender protocol; ``_entrypoints`` finds plugins
that other packages ship.  The public face of all of it is :mod:`kubesched.framework`.
"""
