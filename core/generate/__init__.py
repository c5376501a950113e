"""Synthetic workloads: nodes and workloads drawn from a spec, written as ordinary manifests.

::

    knobs (a YAML spec, or kubesched generate's flags) ─► parse_spec ─► Spec (checked; one
        ConfigError naming the knob) ─► generate_objects: PriorityClasses, Nodes (pools over
        zones), then Pods, Jobs, gangs and Deployments arriving as Poisson processes
        ─► generate_text: multi-document YAML, the same bytes for the same spec and seed

Every draw comes from a stream of its own (:class:`Dist`), so changing one knob does not
reshuffle the others.  The module :mod:`._generate` documents every knob (:data:`KNOBS`).
"""

from kubesched.generate._generate import (
    CHOICES,
    KNOB_BY_KEY,
    KNOBS,
    MAX_NODES,
    Dist,
    Knob,
    Spec,
    generate_objects,
    generate_text,
    parse_dist,
    parse_spec,
)

__all__ = [
    "CHOICES",
    "KNOBS",
    "KNOB_BY_KEY",
    "MAX_NODES",
    "Dist",
    "Knob",
    "Spec",
    "generate_objects",
    "generate_text",
    "parse_dist",
    "parse_spec",
]
