"""The solvers: :func:`solve` and its registry (:mod:`indkernel.solvers.registry`), the run bookkeeping
(:mod:`indkernel.solvers.tracking`) and one module per method (``alg:accpm``, the projected gradient
and Newton methods, the exchange method, the direct SDP).
"""

from .registry import METHODS, compare, method_options, plot_comparison, solve
from .result import SolveResult

__all__ = ["METHODS", "SolveResult", "compare", "method_options", "plot_comparison", "solve"]
