"""GPU sharing per card and the FGD paper's six policies, as kubesched plugins.

The model and the policies of hkust-adsl/kubernetes-scheduler-simulator (Apache-2.0), the
artifact of "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent" (USENIX ATC '23), ported as behaviour onto ``kubesched.framework``:

- ``Open-Gpu-Share`` (Filter, Reserve): nodes carry cards of a model, 1000 milli each; a task
  asks for a share of one card or for whole cards; Reserve picks the cards;
- ``RandomScore``, ``DotProductScore``, ``GpuClusteringScore``, ``GpuPackingScore``,
  ``BestFitScore``, ``FGDScore``: the policies.

Installed, the package offers them through the ``kubesched`` entry-point group; the
configurations in ``examples/gpushare/configs`` enable each policy as the artifact runs it.
"""

from __future__ import annotations

from kubesched_gpushare._frag import (
    FragTable,
    TypicalPod,
    node_frag,
    node_frag_amount,
    typical_pods,
)
from kubesched_gpushare._model import (
    GPU_COUNT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    Shape,
    pod_shape,
)
from kubesched_gpushare.opengpushare import OpenGpuShare
from kubesched_gpushare.policies import (
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)

__all__ = [
    "GPU_COUNT",
    "GPU_INDEX",
    "GPU_MILLI",
    "GPU_MODEL",
    "BestFitScore",
    "DotProductScore",
    "FGDScore",
    "FragTable",
    "GpuClusteringScore",
    "GpuPackingScore",
    "OpenGpuShare",
    "RandomScore",
    "Shape",
    "TypicalPod",
    "node_frag",
    "node_frag_amount",
    "pod_shape",
    "typical_pods",
]
