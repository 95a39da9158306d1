"""Least squares in a Krein space with separate regularizers on the positive and negative parts
(Oglic & Gärtner, ICML 2018), solved globally on K0's eigendecomposition.

With ``K0 = U Λ Uᵀ``, ``K₊ = U Λ₊ Uᵀ`` and ``K₋ = U Λ₋ Uᵀ`` (``Λ₋ = max(-Λ, 0)``), a function
``f = Σ α_j k(x_j, ·)`` has the parts' squared norms ``‖f₊‖² = αᵀK₊α`` and ``‖f₋‖² = αᵀK₋α``;
their sum, ``αᵀ|K0|α``, is its squared norm in the Hilbert space associated with the Krein space.
The problem, for targets t::

    min (1/n)‖K0 α - t‖² + λ₊ αᵀK₊α + λ₋ αᵀK₋α   s.t.   αᵀ|K0|α = r²

a quadratic form over a hypersphere (nonconvex: the constraint is an equality). In the
coordinates ``β = |Λ|^½ Uᵀα`` of the nonzero eigenvalues it reads ``min βᵀDβ - 2cᵀβ + ‖t‖²/n``
s.t. ``‖β‖ = r`` with the diagonal ``D_i = |λ_i|/n + λ_{sign λ_i}`` and ``c_i = sign(λ_i)
|λ_i|^½ (Uᵀt)_i / n``. Its global minimizers are ``β = (D - μ)⁻¹c`` with ``μ <= min D`` and
``‖β‖ = r`` (the trust-region subproblem's conditions; with ``μ = min D`` and the rest of the norm
on the smallest D's directions where c vanishes there, the "hard case"), so one root of the
secular equation ``Σ c_i²/(D_i - μ)² = r²`` after the eigendecomposition solves it: O(n) beyond
the O(n³) of ``eigh``. On the sphere ``λ₊‖f₊‖² + λ₋‖f₋‖² = λ₊r² + (λ₋ - λ₊)‖f₋‖²``: the solution
depends on the difference of the regularizers and on r.

Strong duality holds for one quadratic equality constraint, and the dual function at any
``μ < min D``, ``q(μ) = μr² - Σ c_i²/(D_i - μ) + ‖t‖²/n``, is a lower bound on the optimum: at
the root (in the hard case just below min D, where q tends to the optimum) and with the objective
at the solution as the upper bound, both widened by their round-off, it brackets the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize

from .certificate import Interval
from .proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF

#: Eigenvalues below this multiple of ``n·u·max|λ|`` are treated as zero (their directions carry
#: round-off only): α has no component there.
ZERO_EIGENVALUE_FACTOR = 1.0


@dataclass(frozen=True)
class KreinLeastSquaresSolution(Interval):
    """The weights α of one target vector, the multiplier μ, and the bracket ``lower <= p* <= upper``."""

    alpha: np.ndarray
    multiplier: float
    lower: float
    upper: float


def solve_krein_least_squares(values: np.ndarray, vectors: np.ndarray, targets: np.ndarray, *,
                              lambda_positive: float, lambda_negative: float,
                              radius: float) -> KreinLeastSquaresSolution:
    """The global solution of the sphere-constrained problem (module docstring) for K0's
    eigenpairs ``(values, vectors)`` and the targets ``t``."""
    n = len(targets)
    keep = np.abs(values) > ZERO_EIGENVALUE_FACTOR * n * UNIT_ROUNDOFF * max(np.abs(values).max(), np.finfo(float).tiny)
    lam, U = values[keep], vectors[:, keep]
    if not len(lam):
        raise ValueError("the similarity matrix is zero (to round-off): no function can be fitted on it")
    D = np.abs(lam) / n + np.where(lam > 0, lambda_positive, lambda_negative)
    c = np.sign(lam) * np.sqrt(np.abs(lam)) * (U.T @ targets) / n
    constant = float(targets @ targets) / n
    beta, mu = _sphere_minimizer(D, c, radius)
    alpha = U @ (beta / np.sqrt(np.abs(lam)))
    terms = np.concatenate([D * beta ** 2, -2 * c * beta, [constant]])
    upper = float(terms.sum())
    below = min(mu, np.nextafter(D.min(), -np.inf))  # the dual function's argument must lie below min D
    dual_terms = np.concatenate([[below * radius ** 2, constant], -c ** 2 / (D - below)])
    gamma = ROUNDOFF_FACTOR * n * UNIT_ROUNDOFF
    lower = float(dual_terms.sum()) - gamma * float(np.abs(dual_terms).sum())
    upper += gamma * float(np.abs(terms).sum())
    return KreinLeastSquaresSolution(alpha=alpha, multiplier=mu, lower=min(lower, upper), upper=upper)


def _sphere_minimizer(D: np.ndarray, c: np.ndarray, radius: float) -> tuple[np.ndarray, float]:
    """``(β, μ)``: a global minimizer of ``βᵀdiag(D)β - 2cᵀβ`` on ``‖β‖ = radius`` and its multiplier."""
    d_min = D.min()
    high = np.nextafter(d_min, -np.inf)

    def excess(mu: float) -> float:  # rises with μ; its root is the multiplier
        return 1.0 / radius - 1.0 / float(np.linalg.norm(c / (D - mu)))

    if excess(high) > 0:  # ‖(D - μ)⁻¹c‖ rises from at most r at μ = min D - ‖c‖/r to above r near min D
        low = min(d_min - float(np.linalg.norm(c)) / radius, high)
        mu = low if excess(low) >= 0 else scipy.optimize.brentq(excess, low, high, xtol=1e-15 * (1 + abs(d_min)),
                                                                rtol=4 * np.finfo(float).eps)
        return c / (D - mu), float(mu)
    # the hard case: c (nearly) vanishes on the smallest D's directions; the rest of the norm goes there
    at_min = D <= d_min
    beta = np.where(at_min, 0.0, c / np.where(at_min, 1.0, D - d_min))
    first = np.flatnonzero(at_min)[0]
    beta[first] = (1.0 if c[first] >= 0 else -1.0) * np.sqrt(max(radius ** 2 - float(beta @ beta), 0.0))
    return beta, float(d_min)
