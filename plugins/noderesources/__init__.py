"""NodeResourcesFit and NodeResourcesBalancedAllocation (upstream ``plugins/noderesources``)."""

from __future__ import annotations

from ._args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    FitArgs,
    ResourceSpec,
    ScoringStrategy,
    parse_balanced_allocation_args,
    parse_fit_args,
    validate_fit_args,
)
from .balanced_allocation import BALANCED_NAME, BalancedAllocation, new_balanced_allocation
from .fit import (
    FIT_NAME,
    REASON_TOO_MANY_PODS,
    Fit,
    InsufficientResource,
    fits,
    fits_request,
    insufficient_reason,
    is_fit,
    new_fit,
)

__all__ = [
    "BALANCED_NAME",
    "FIT_NAME",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REASON_TOO_MANY_PODS",
    "REQUESTED_TO_CAPACITY_RATIO",
    "BalancedAllocation",
    "Fit",
    "FitArgs",
    "InsufficientResource",
    "ResourceSpec",
    "ScoringStrategy",
    "fits",
    "fits_request",
    "insufficient_reason",
    "is_fit",
    "new_balanced_allocation",
    "new_fit",
    "parse_balanced_allocation_args",
    "parse_fit_args",
    "validate_fit_args",
]
