"""A scenario: what a simulation takes in, read and checked, and written back out.

::

    FILE.yaml ... ─► load_documents (YAML / JSON, one ConfigError line per problem)
                 ─► load_manifests: decode strictly (validation: Strict | Warn | Ignore), validate
                    as the API server, order by arrival ─► [Manifest] (object, kind, where, when)
    config.yaml  ─► load_config_file (+ feature gates) ─► simulation_config (profiles built once,
                    no HTTP extenders) ─► SchedulerConfig
    objects      ─► document / dump: manifests out (snapshots, overlays)
    whatif       ─► overlay: the later documents that drain, delete or add at a time

The ``kubesched.io/`` annotations a scenario may carry (arrival, deletion, duration, drain) are
named here; the built-in demo (``kubesched simulate`` with no file) is :data:`DEMO_MANIFESTS`
under :data:`DEMO_CONFIG`.
"""

from kubesched.scenario._config import (
    check_profiles,
    load_config_file,
    parse_until,
    simulation_config,
    validation_mode,
)
from kubesched.scenario._demo import DEMO_CONFIG, DEMO_MANIFESTS
from kubesched.scenario._manifests import (
    ARRIVAL_ANNOTATION,
    DELETION_ANNOTATION,
    DRAIN_ANNOTATION,
    DURATION_ANNOTATION,
    MAX_PODS,
    Manifest,
    load_documents,
    load_manifests,
    system_priority_classes,
)
from kubesched.scenario._whatif import ZONE_LABEL, overlay, overlay_text
from kubesched.scenario._writing import document, dump

__all__ = [
    "ARRIVAL_ANNOTATION",
    "DELETION_ANNOTATION",
    "DEMO_CONFIG",
    "DEMO_MANIFESTS",
    "DRAIN_ANNOTATION",
    "DURATION_ANNOTATION",
    "MAX_PODS",
    "ZONE_LABEL",
    "Manifest",
    "check_profiles",
    "document",
    "dump",
    "load_config_file",
    "load_documents",
    "load_manifests",
    "overlay",
    "overlay_text",
    "parse_until",
    "simulation_config",
    "system_priority_classes",
    "validation_mode",
]
