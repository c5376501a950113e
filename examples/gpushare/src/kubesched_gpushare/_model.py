"""The GPU-sharing model of the FGD paper's artifact, as data: names, a task's shape, a node's cards.

Ported as behaviour from hkust-adsl/kubernetes-scheduler-simulator (commit 8f3d641, Apache-2.0):
``pkg/type/open-gpu-share/utils/{const,pod,node}.go``, ``pkg/type/resource.go`` and
``pkg/utils/utils.go`` (``GetPodResource``, ``IsNodeAccessibleToPodByType``).

- A node carries ``alibabacloud.com/gpu-count`` cards (its capacity) of the model in its label
  ``alibabacloud.com/gpu-card-model``; each card has 1000 milli.
- A task asks, in its annotations, for ``alibabacloud.com/gpu-count`` cards with
  ``alibabacloud.com/gpu-milli`` of each (less than 1000: a share of one card), optionally of the
  models ``alibabacloud.com/gpu-card-model`` (``|``-separated).  CPU and memory are ordinary
  requests.
- Once placed, ``alibabacloud.com/gpu-index`` names the cards (``2`` or ``0-1-3``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubesched.framework import Node, Pod, QuantityError, parse_quantity, pod_requests

GPU_MILLI = "alibabacloud.com/gpu-milli"
"""Pod annotation: milli of each card (1000 = a whole card); also a node's capacity (cards x 1000)."""
GPU_COUNT = "alibabacloud.com/gpu-count"
"""Pod annotation: how many cards; node capacity: how many cards it has."""
GPU_INDEX = "alibabacloud.com/gpu-index"
"""Pod annotation: the cards the pod is placed on, ``-``-separated (``DeviceIndex``)."""
GPU_MODEL = "alibabacloud.com/gpu-card-model"
"""Node label: the card model; pod annotation: the models it accepts, ``|``-separated."""
DEV_ID_SEP = "-"
MILLI = 1000
MAX_SPEC_CPU = 128000
"""``MaxSpecCpu``: the largest node's cpu (milli), the normaliser of DotProd and BestFit."""
MAX_SPEC_GPU = 8000
"""``MaxSpecGpu``: the largest node's GPU (milli)."""
MAX_CARDS = 8
"""``MaxNumGpuPerNode``."""
NO_GPU_TAG = "no-gpu"
SHARE_GPU_TAG = "share-gpu"


@dataclass(frozen=True, slots=True)
class Shape:
    """A task's resources as the policies see them (``simontype.PodResource``)."""

    cpu: int
    """Milli cpu (a container without a cpu request counts 100m, ``GetNonzeroRequests``)."""
    milli: int
    """Milli of each card, 0 without GPU."""
    num: int
    """Cards."""
    models: str = ""
    """The accepted card models as written (``V100M16|V100M32``), empty for any."""

    @property
    def total_milli(self) -> int:
        return self.milli * self.num

    @property
    def is_share(self) -> bool:
        """One card, partly (``IsGpuShare``)."""
        return self.num == 1 and self.milli < MILLI

    @property
    def affinity(self) -> str:
        """``GetGpuAffinityFromPodAnnotation``: no-gpu, share-gpu or ``<n>-gpu``."""
        if self.num == 0:
            return NO_GPU_TAG
        if self.num == 1 and self.milli < MILLI:
            return SHARE_GPU_TAG
        return f"{self.num}-gpu"

    def sort_key(self) -> tuple[int, int, int, str]:
        """``PodResource.Less``'s order."""
        return (self.cpu, self.milli, self.num, self.models)


def _annotation_milli(value: str) -> int:
    # resource.ParseQuantity(value).Value(): rounded up to a whole number; unparsable counts 0
    try:
        q = parse_quantity(value)
    except QuantityError:
        return 0
    whole = -((-q.numerator) // q.denominator)
    return max(int(whole), 0)


def _annotation_count(value: str) -> int:
    # strconv.Atoi, negative or unparsable counts 0
    try:
        n = int(value.strip()) if value.strip().lstrip("+-").isdigit() else 0
    except ValueError:
        return 0
    return n if n >= 0 else 0


def gpu_request(annotations: Mapping[str, str] | None) -> tuple[int, int, str]:
    """(milli per card, cards, models) from a pod's annotations."""
    if not annotations:
        return 0, 0, ""
    milli = _annotation_milli(annotations[GPU_MILLI]) if GPU_MILLI in annotations else 0
    num = _annotation_count(annotations[GPU_COUNT]) if GPU_COUNT in annotations else 0
    return milli, num, annotations.get(GPU_MODEL, "")


def pod_shape(pod: Pod) -> Shape:
    """``GetPodResource``."""
    milli, num, models = gpu_request(pod.metadata.annotations)
    cpu = pod_requests(pod, non_zero=True).milli_cpu
    return Shape(cpu=cpu, milli=milli, num=num, models=models)


def gpu_index(pod: Pod) -> list[int] | None:
    """The cards named by the pod's ``gpu-index`` annotation; None without one or when it does
    not parse (``GpuIdStrToIntList``)."""
    ann = pod.metadata.annotations
    if not ann or not ann.get(GPU_INDEX):
        return None
    try:
        return [int(x) for x in ann[GPU_INDEX].split(DEV_ID_SEP)]
    except ValueError:
        return None


def format_index(cards: Sequence[int]) -> str:
    return DEV_ID_SEP.join(str(c) for c in cards)


def node_cards(node: Node | None) -> tuple[int, str]:
    """(cards, model) of a node: its capacity ``gpu-count`` (``GetGpuCountOfNode``; allocatable
    when the node states no capacity) and its model label (``GetGpuModelOfNode``).  A node is a
    GPU node only when it also has ``gpu-milli`` (``IsGpuSharingNode``)."""
    if node is None:
        return 0, ""
    status = node.status
    res = status.capacity or status.allocatable or {}
    model = (node.metadata.labels or {}).get(GPU_MODEL, "")
    if GPU_MILLI not in res or GPU_COUNT not in res:
        return 0, model
    try:
        count = parse_quantity(res[GPU_COUNT])
        milli = parse_quantity(res[GPU_MILLI])
    except QuantityError:
        return 0, model
    if milli <= 0:
        return 0, model
    return max(0, min(int(count), MAX_CARDS)), model


def accessible(node_model: str, pod_models: str) -> bool:
    """``IsNodeAccessibleToPodByType``: any model when the task names none; never a node without
    a model otherwise."""
    if not pod_models:
        return True
    if not node_model:
        return False
    named = [m for m in pod_models.split("|") if m]
    return not named or node_model in named
