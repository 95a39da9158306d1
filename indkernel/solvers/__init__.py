"""The solvers: :func:`solve` and its registry (:mod:`indkernel.solvers.registry`), the run bookkeeping
(:mod:`indkernel.solvers.tracking`) and one module per method (``alg:accpm``, the projected gradient
and Newton methods, the exchange method, the direct SDP), and :func:`verify`, the certificate beside independent references.
"""

from .registry import (
    METHODS,
    ComparisonInterrupted,
    ComparisonTable,
    Method,
    compare,
    method_options,
    plot_comparison,
    solve,
)
from .result import SolveResult, load_result
from .tracking import CheckState, SolveError
from .verification import Verification, VerificationWarning, verify

__all__ = ["METHODS", "CheckState", "ComparisonInterrupted", "ComparisonTable", "Method", "SolveError", "SolveResult",
           "Verification", "VerificationWarning", "compare", "load_result", "method_options", "plot_comparison", "solve",
           "verify"]
