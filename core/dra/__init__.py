"""Dynamic resource allocation: CEL device selectors and the structured allocator.

The CEL engine is cel-expr-python (Google's cel-cpp binding), chosen by measurement on
DRA-shaped selectors (see ``_cel``): about 2–5 µs an evaluation of a plain attribute check where
the pure-Python ``cel-python`` takes hundreds, and it has ``cel.bind`` and optional chaining,
which ``common-expression-language`` lacks.
"""

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

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "CelCompileError",
    "CelDevice",
    "CelFeatures",
    "CelRuntimeError",
    "CompiledSelector",
    "compile_selector",
    "validate_selector",
]
