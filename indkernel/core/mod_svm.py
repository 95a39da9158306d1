"""The Mod SVM baseline (Lin & Lin, 2003) by its dual, a concave piecewise quadratic on the SVM's set.

The primal ``min ½‖α‖² + Σ C_i ξ_i`` s.t. ``y_i((K0Yα)_i + b) >= 1 - ξ_i``, ``α, ξ >= 0`` (convex
for any symmetric K0) has, with multipliers λ of the margins and ``M = YK0Y``, the dual

    max_{λ ∈ A} g(λ) = eᵀλ - ½‖(Mλ)₊‖²,   A = {yᵀλ = 0, 0 <= λ <= C},

its α at the optimum ``(Mλ)₊``. g is concave with gradient ``e - M(Mλ)₊`` and, where no
``(Mλ)_i`` is 0, Hessian ``-M D M`` (D the indicator of ``Mλ > 0``): the shape the project's
projected Newton (:func:`indkernel.solvers.projected_newton.projected_newton`) solves, with the
same exact projection onto A. Every iterate is certified by weak duality: ``g(λ) <= P* <=
P((Mλ)₊, b)`` at the exactly optimal intercept b of that α (:func:`indkernel.core.intercept.best_hinge_intercept`),
each side widened by its round-off. No general QP is formed: each iteration costs a few O(n²)
products with K0.

Newton needs the right pieces of g (which α_j vanish) to converge fast; :meth:`ModSVMDual.active_set_start`
finds them first: with the set P of the positive α_j known, the primal is the ordinary SVM with
features ``(K0_ij y_j)_{j ∈ P}``, whose kernel ``K0_P K0_Pᵀ`` is PSD, so libsvm solves it; its λ
gives the next P = {(Mλ)_j > 0}, until P repeats (a few rounds on the tables' problems).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg

from .certificate import Certificate
from .intercept import best_hinge_intercept
from .machines import Hinge
from .proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF

#: Power iterations for the curvature estimate ‖M‖₂² (a rough scale: the methods backtrack).
POWER_STEPS = 20
#: The active-set start: libsvm solves at most, their tolerance, and their iteration cap per
#: point (15,580 iterations at n = 600, C = 100 on USPS; libsvm cycles on the singular kernels
#: of low-rank K0, where a capped λ serves as a start all the same: Newton certifies).
ACTIVE_SET_ROUNDS, ACTIVE_SET_TOL, ACTIVE_SET_CAP_PER_POINT = 10, 1e-5, 100


class ModSVMDual:
    """The dual ``max_{λ ∈ A} eᵀλ - ½‖(Mλ)₊‖²`` of one binary Mod SVM, in the solvers' protocol
    (``objective_at``, ``gradient_at``, ``hessian_at``, ``feasible``, ``certify_iterate``...).

    Parameters
    ----------
    K0 : (n, n) symmetric array; y : (n,) labels ±1; C : (n,) positive penalties.
    """

    oracle = None  # nothing to prepare: M is formed once

    def __init__(self, K0: np.ndarray, y: np.ndarray, C: np.ndarray):
        self.K0, self.y, self.C = K0, y, C
        self.M = y[:, None] * K0 * y[None, :]
        self.dim = self.n = y.size
        self.machine = Hinge(y, C, None, self.n)  # the SVM's set A, and libsvm
        self.feasible = self.machine.feasible
        self._absolute = np.abs(K0)  # |M| = |K0|: the products' round-off
        self._cached: tuple[np.ndarray, np.ndarray] | None = None
        #: ``(upper, α, b)``: the primal point of the smallest upper bound certified so far (a run's
        #: bracket pairs the best lower bound with the best upper one, often of different iterates).
        self.best_primal: tuple[float, np.ndarray, float] = (np.inf, np.zeros(self.n), 0.0)

    # ----- the objective -----------------------------------------------------------------
    def alpha(self, lam: np.ndarray) -> np.ndarray:
        """``(Mλ)₊``: the primal α at λ (the optimum's at the optimal λ)."""
        return np.maximum(self._product(lam), 0.0)

    def _product(self, lam: np.ndarray) -> np.ndarray:
        if self._cached is None or not np.array_equal(self._cached[0], lam):
            self._cached = (np.array(lam, copy=True), self.M @ lam)
        return self._cached[1]

    def objective_at(self, lam: np.ndarray) -> float:
        alpha = self.alpha(lam)
        return float(lam.sum() - 0.5 * alpha @ alpha)

    def gradient_at(self, lam: np.ndarray) -> np.ndarray:
        return 1.0 - self.M @ self.alpha(lam)

    def hessian_at(self, lam: np.ndarray) -> scipy.sparse.linalg.LinearOperator:
        """``v ↦ -M D Mv`` (the generalized Hessian, D the indicator of ``Mλ > 0``)."""
        active = self._product(lam) > 0
        M = self.M
        return scipy.sparse.linalg.LinearOperator((self.n, self.n), matvec=lambda v: -(M @ np.where(active, M @ v, 0.0)),
                                                  dtype=float)

    def hessian_product_at(self, lam: np.ndarray):
        """The Hessian as Newton's direction takes it: the product ``v ↦ ∇²q(λ)v`` (no compiled form)."""
        return self.hessian_at(lam).matvec

    def curvature_estimate(self) -> float:
        """``‖M‖₂²`` by a few power iterations (a rough scale for first step sizes)."""
        v = np.random.default_rng(0).standard_normal(self.n)
        value = 0.0
        for _ in range(POWER_STEPS):
            w = self.M @ v
            norm = float(np.linalg.norm(w))
            if norm == 0.0:
                return 1.0
            value, v = norm / float(np.linalg.norm(v)), w / norm
        return value * value

    def objective_noise(self, lam: np.ndarray) -> float:
        """The rounding a line search allows when it compares g at two nearby points."""
        alpha = self.alpha(lam)
        return ROUNDOFF_FACTOR * np.sqrt(self.n) * UNIT_ROUNDOFF * float(np.abs(lam).sum() + 0.5 * alpha @ alpha)

    # ----- the set -----------------------------------------------------------------------
    def initial_point(self) -> np.ndarray:
        """The projection of ``C/2`` onto A, as the SVM's start."""
        return self.feasible.project(self.C / 2)

    def active_set_start(self, rounds: int = ACTIVE_SET_ROUNDS) -> np.ndarray:
        """λ from libsvm on the primal with the vanishing α_j guessed (module docstring): P = all
        at first, then ``{(Mλ)_j > 0}`` of the last λ, until it repeats or after ``rounds`` solves."""
        positive = np.ones(self.n, dtype=bool)
        lam = self.initial_point()
        for _ in range(rounds):
            columns = self.K0[:, positive]
            beta, _ = self.machine.libsvm_beta(columns @ columns.T, ACTIVE_SET_TOL, ACTIVE_SET_CAP_PER_POINT * self.n)
            lam = self.feasible.project(self.machine.from_dual_coef(beta))
            now = self._product(lam) > 0
            if np.array_equal(now, positive) or not np.any(now):
                break
            positive = now
        return lam

    def project(self, x: np.ndarray) -> np.ndarray:
        return self.feasible.project(x)

    # ----- the certificate ---------------------------------------------------------------
    def certify_iterate(self, lam: np.ndarray, bound: str = "free", target: float = 0.0, budget=None,
                        start=None) -> Certificate:
        """``g(λ) <= P* <= P((Mλ)₊, b)`` (weak duality), each side widened by its round-off: γ =
        ``ROUNDOFF_FACTOR·n·u`` times the magnitude of its sums (``bound``, ``target``, ``budget`` and
        ``start`` are the protocol's: the primal point is exact, there is nothing to refine)."""
        alpha = self.alpha(lam)
        linear, quadratic = float(lam.sum()), float(alpha @ alpha)
        loss, b = best_hinge_intercept(self.K0 @ (self.y * alpha), self.y, self.C)
        upper = 0.5 * quadratic + loss
        gamma = ROUNDOFF_FACTOR * self.n * UNIT_ROUNDOFF
        alpha_error = gamma * float(np.linalg.norm(self._absolute @ np.abs(lam)))  # of Mλ, so of α = (Mλ)₊
        margin_error = gamma * (self._absolute @ alpha)  # of each (K0Yα)_i, so of each hinge term
        lower_error = gamma * (abs(linear) + quadratic) + alpha_error * (float(np.sqrt(quadratic)) + 0.5 * alpha_error)
        upper_error = gamma * (quadratic + abs(loss) + abs(upper)) + float(self.C @ margin_error)
        if upper + upper_error < self.best_primal[0]:
            self.best_primal = (upper + upper_error, alpha, b)
        return Certificate(lower=float(linear - 0.5 * quadratic - lower_error), upper=float(upper + upper_error),
                           intercept=float(b), scale=float(abs(linear) + 0.5 * quadratic),
                           allowance=float(lower_error + upper_error), alpha_intercept=float(b))
