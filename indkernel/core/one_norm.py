"""The 1-norm SVM on a raw similarity (Mangasarian 2000; Chen et al. 2009 report it the most
accurate SVM for indefinite similarities), solved as a linear program by HiGHS and certified by
LP duality.

Primal: ``min ‖β‖₁ + Σ C_i ξ_i`` s.t. ``y_i((Kβ)_i + b) >= 1 - ξ_i``, ``ξ >= 0``, for any
symmetric K (no spectrum enters: the same map scores training and new points, ``kᵀβ + b``).
Dual: ``max Σ λ_i`` s.t. ``0 <= λ <= C``, ``Σ λ_i y_i = 0``, ``|Kᵀ(λ∘y)| <= 1`` componentwise
(:func:`formulations.one_norm_svm_dual`). Weak duality brackets the optimum ``p*`` between the
dual value at any feasible λ and the primal value at any (β, b) with the slacks it implies:
HiGHS's marginals are made feasible (clipped to the box, the heavier class scaled down to
``yᵀλ = 0``, the whole scaled into ``|Kᵀ(λ∘y)| <= 1``: in exact arithmetic these scalings give a
feasible λ, and the computed one differs from it by round-off) and each side is widened by its
round-off (``γ = ROUNDOFF_FACTOR·n·u`` times the magnitude of each sum), so the bracket holds in
floating point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize
import scipy.sparse

from .certificate import Interval
from .proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF


@dataclass(frozen=True)
class OneNormSolution(Interval):
    """The LP's solution and its certified bracket ``lower <= p* <= upper``."""

    beta: np.ndarray
    intercept: float
    lower: float
    upper: float


def solve_one_norm_svm(K: np.ndarray, y: np.ndarray, C: np.ndarray) -> OneNormSolution:
    """The 1-norm SVM on the symmetric ``K`` with labels ``y`` in {-1, +1} and per-point penalties
    ``C > 0``, by HiGHS (``scipy.optimize.linprog``), with its certified bracket.

    The variables are ``(β⁺, β⁻, ξ, b)`` with ``β = β⁺ - β⁻``; each margin constraint is
    ``-y_i(K_i(β⁺ - β⁻) + b) - ξ_i <= -1``. Raises RuntimeError if HiGHS does not end optimal.
    """
    n = len(y)
    YK = y[:, None] * K
    A = scipy.sparse.hstack([-YK, YK, -scipy.sparse.identity(n), -y[:, None]], format="csr")
    cost = np.concatenate([np.ones(2 * n), C, [0.0]])
    bounds = [(0, None)] * (3 * n) + [(None, None)]
    result = scipy.optimize.linprog(cost, A_ub=A, b_ub=-np.ones(n), bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the 1-norm SVM's linear program: {result.message}")
    beta, intercept = result.x[:n] - result.x[n:2 * n], float(result.x[-1])
    return OneNormSolution(beta=beta, intercept=intercept, lower=dual_bound(K, y, C, -result.ineqlin.marginals),
                           upper=primal_bound(K, y, C, beta, intercept))


def primal_bound(K: np.ndarray, y: np.ndarray, C: np.ndarray, beta: np.ndarray, intercept: float) -> float:
    """``‖β‖₁ + Σ C_i max(0, 1 - y_i((Kβ)_i + b))`` at any (β, b), widened by its round-off: ``>= p*``."""
    gamma = ROUNDOFF_FACTOR * len(y) * UNIT_ROUNDOFF
    slack = np.maximum(0.0, 1.0 - y * (K @ beta + intercept))
    product_error = gamma * (np.abs(K) @ np.abs(beta) + abs(intercept) + 1.0)
    value = float(np.abs(beta).sum() + C @ slack)
    return value + float(C @ product_error) + gamma * value


def dual_bound(K: np.ndarray, y: np.ndarray, C: np.ndarray, multipliers: np.ndarray) -> float:
    """``Σ λ_i`` at the multipliers made dual feasible (module docstring), less its round-off: ``<= p*``."""
    gamma = ROUNDOFF_FACTOR * len(y) * UNIT_ROUNDOFF
    lam = np.clip(multipliers, 0.0, C)
    positive, negative = lam[y > 0].sum(), lam[y < 0].sum()
    if positive > negative:  # scaling one class down keeps 0 <= λ <= C and makes yᵀλ = 0 exactly
        lam[y > 0] *= negative / positive
    elif negative > positive:
        lam[y < 0] *= positive / negative
    reach = np.abs(K.T @ (lam * y)) + gamma * (np.abs(K).T @ lam)  # |Kᵀ(λ∘y)| with its round-off
    lam = lam / max(1.0, float(reach.max(initial=0.0)))
    return float(lam.sum()) * (1 - gamma)
