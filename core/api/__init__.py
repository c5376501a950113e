"""The Kubernetes API objects as the scheduler reads them, and how untrusted input becomes one.

``_objects`` (msgspec Structs, camelCase on the wire) ← ``_decoding`` (bounded YAML/JSON, strict
fields against ``_schema``); the arithmetic and matching every layer shares: ``_resources``
(quantities, pod requests), ``_labels`` (label selectors), ``_durations`` (Go durations),
``_helpers`` (component-helpers: node affinity, taints) and ``_pvhelpers`` (persistent volumes).
"""
