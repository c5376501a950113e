"""Example out-of-tree kubesched plugins, registered through the ``kubesched`` entry-point group.

- :class:`NodeLabelGate` (Filter, written per node with :func:`kubesched.framework.per_node_filter`):
  only nodes carrying a label named in its args may run pods.
- :class:`PreferEmptyNodes` (Score + NormalizeScore, written over numpy columns): prefer the
  nodes with the most free pod slots.

See README.md next to pyproject.toml for how they are written, registered and enabled.
"""

from __future__ import annotations

from .nodelabelgate import NodeLabelGate
from .preferemptynodes import PreferEmptyNodes

__all__ = ["NodeLabelGate", "PreferEmptyNodes"]
