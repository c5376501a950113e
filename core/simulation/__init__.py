"""A simulation: a scenario scheduled on a fake cluster in virtual time, and what came of it.

The flow (``kubesched simulate`` is these steps and the printing)::

    load      kubesched.scenario.load_manifests(files) ─► [Manifest]
              kubesched.scenario.simulation_config(config_path, feature_gates) ─► SchedulerConfig
              (or both at once: Simulation.load(files, config=...))
    build     sim = Simulation(manifests, config, seed=0, until=None, explain=False, metrics=False,
                               events="series")
              (without ``until`` the scenario must be able to end by itself: check_can_end)
    run       result = sim.run_in_virtual_time(backend="trio")     (await sim.run() on a loop
                                                                    already in virtual time)
    result    SimulationResult: pods, events, summary, nodes, timeline, workloads, warnings;
              write_json (the output contract), to_text (for people), to_json_obj

Modules: :mod:`._simulation` (the :class:`Simulation` and its run), :mod:`._observer` (the run's
watch: records, timeline, workloads), :mod:`._timeline`, :mod:`._drains` (``kubesched.io/drain``
as a timed source of the run), :mod:`._events` (the recorded events folded as the API server
keeps them), :mod:`._result` (the result and its text).
"""

from kubesched.simulation._drains import Drains
from kubesched.simulation._result import PodRecord, SimulationResult, render_text
from kubesched.simulation._simulation import (
    QUIET_LIMIT,
    Simulation,
    apply_update,
    check_can_end,
    simulate,
)
from kubesched.simulation._timeline import Timeline, final_allocation

__all__ = [
    "QUIET_LIMIT",
    "Drains",
    "PodRecord",
    "Simulation",
    "SimulationResult",
    "Timeline",
    "apply_update",
    "check_can_end",
    "final_allocation",
    "render_text",
    "simulate",
]
