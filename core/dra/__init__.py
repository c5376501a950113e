"""Dynamic resource allocation: CEL device selectors and the structured allocator.

Flow: :func:`compile_selector` compiles a class's or request's CEL expression once per
environment (``_cel``, ``_celfuncs``, ``_celast``); :class:`Allocator` (``_allocator``) gathers a
node's ResourceSlices into pools (``_pools``), checks selectors (``_selection``), constraints
and taints (``_constraints``), shared counters and consumable capacity (``_capacity``), and
turns what it took into ``AllocationResult``s (``_results``); ``_taintrules`` applies
DeviceTaintRules to the slices it is given (the scheduler's slice tracker); ``_extended`` maps
extended resources to DeviceClasses and builds the special claim's requests
(DRAExtendedResource).

The CEL engine is cel-expr-python (Google's cel-cpp binding), chosen by measurement on
DRA-shaped selectors: a few µs an evaluation of an attribute or driver check where the
pure-Python ``cel-python`` takes hundreds, and it has ``cel.bind`` and optional chaining,
which ``common-expression-language`` lacks.
"""

from kubesched.dra._allocator import (
    Aborted,
    AllocatedState,
    Allocator,
    AllocatorFeatures,
    FailedOnNode,
    allocator_features,
)
from kubesched.dra._cel import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    CelCompileError,
    CelDevice,
    CelFeatures,
    CelRuntimeError,
    CompiledSelector,
    compile_selector,
    validate_selector,
)
from kubesched.dra._cel import validation_check as _validation_check
from kubesched.dra._extended import (
    RESOURCE_DEVICE_CLASS_PREFIX,
    ClassTableResolver,
    ExtendedResourceClasses,
    create_requests_and_mappings,
    is_dra_extended_resource_name,
)
from kubesched.dra._memo import PoolUse
from kubesched.dra._results import AllocationError
from kubesched.dra._taintrules import (
    ClassSelectors,
    PatchedSlices,
    apply_rules,
    legacy_selectors,
    taint_rules_apply,
)
from kubesched.validation._dra import set_cel_check as _set_cel_check

_set_cel_check(_validation_check)

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "RESOURCE_DEVICE_CLASS_PREFIX",
    "Aborted",
    "AllocatedState",
    "AllocationError",
    "Allocator",
    "AllocatorFeatures",
    "CelCompileError",
    "CelDevice",
    "CelFeatures",
    "CelRuntimeError",
    "ClassSelectors",
    "ClassTableResolver",
    "CompiledSelector",
    "ExtendedResourceClasses",
    "FailedOnNode",
    "PatchedSlices",
    "PoolUse",
    "allocator_features",
    "apply_rules",
    "compile_selector",
    "create_requests_and_mappings",
    "is_dra_extended_resource_name",
    "legacy_selectors",
    "taint_rules_apply",
    "validate_selector",
]
