"""The paper's projected gradient method (``alg:proj_grad``) on the exact gradient."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from ._validation import check_positive_scalar
from .problem import IndefiniteProblem
from .result import HISTORY_COLUMNS, SolveResult


def projected_gradient(problem: IndefiniteProblem, *, step: float = 5.0, tol: float = 1e-3,
                       max_iter: int = 1000, check_every: int = 10, refine: bool = True,
                       alpha0=None) -> SolveResult:
    """Maximize ``f`` over ``A`` by ``α_{k+1} = p_A(α_k + step/(k+1) ∇f(α_k))`` (``alg:proj_grad``).

    Starts at ``problem.initial_point()`` (the projection of C/2, as the authors' code) unless
    ``alpha0`` is given. Every ``check_every`` iterations the point is certified
    (``problem.certify``; with ``refine=True`` also by libsvm on the proxy kernel); the best
    lower and upper bounds seen are kept, so the reported gap only shrinks. Stops with status
    ``"optimal"`` once ``upper - lower <= tol * |lower|``, else ``"max_iter"`` with a
    ConvergenceWarning.

    Parameters
    ----------
    problem : IndefiniteProblem
    step : float, default 5.0
        The constant t of the step ``t/(k+1)``; the paper uses 5 for the SVM.
    tol : float, default 1e-3
        Relative tolerance on the certified gap.
    max_iter, check_every : int
    refine : bool, default True
    alpha0 : (n,) array_like, optional; projected onto A first.
    """
    step = check_positive_scalar(step, "step", "the constant t of the step size t/(k+1)")
    tol = check_positive_scalar(tol, "tol", "the relative tolerance on the certified gap")
    for name, value in (("max_iter", max_iter), ("check_every", check_every)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    alpha = problem.initial_point() if alpha0 is None else problem.project(alpha0)

    start, rows, fallbacks_before = time.perf_counter(), [], getattr(problem.oracle, "fallbacks", 0)
    best_alpha, lower, upper = alpha, -np.inf, np.inf
    status, reason, k = "max_iter", f"stopped at max_iter={max_iter} before the gap reached tol={tol:g}", 0
    for k in range(max_iter + 1):
        if k % check_every == 0 or k == max_iter:
            certificate = problem.certify(alpha, refine=refine)
            if certificate.lower > lower:
                best_alpha, lower = alpha, certificate.lower
            upper = min(upper, certificate.upper)
            rows.append((k, time.perf_counter() - start, lower, upper, upper - lower))
            if upper - lower <= tol * abs(lower):
                status, reason = "optimal", f"certified relative gap {(upper - lower) / abs(lower):.2e} <= tol={tol:g}"
                break
        if k < max_iter:
            alpha = problem.project(alpha + step / (k + 1) * problem.gradient(alpha))
    if status != "optimal":
        warnings.warn(f"projected gradient: {reason}; raise max_iter or loosen tol", ConvergenceWarning, stacklevel=2)
    return SolveResult(alpha=best_alpha, lower=lower, upper=upper, status=status, stop_reason=reason,
                       iterations=k, seconds=time.perf_counter() - start,
                       history=pd.DataFrame(rows, columns=HISTORY_COLUMNS), method="projected gradient",
                       fallbacks=getattr(problem.oracle, "fallbacks", 0) - fallbacks_before)
