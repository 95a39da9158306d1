"""Support vector regression with an indefinite kernel (``eq:kern_learn_SVR``)."""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVR

from .._validation import (
    check_kernel,
    check_nonnegative_scalar,
    check_rho,
    check_vector,
    per_sample_penalty,
)
from .intercept import active_terms, best_svr_intercept
from .problem import IndefiniteProblem, libsvm_fit
from .proxy import Oracle


class SVRProblem(IndefiniteProblem):
    """``max_{eᵀα = 0, -C <= α <= C} min_{K ⪰ 0} yᵀα - ε‖α‖₁ - ½αᵀKα + ρ‖K - K0‖²_F``
    (``eq:kern_learn_SVR``); the proxy kernel is ``K* = (K0 + ααᵀ/(4ρ))_+`` (``eq:kstar_SVR``).

    The ℓ1 term is made smooth as libsvm does: the variables are ``x = (α⁺, α⁻)`` in
    ``[0, C]^{2n}`` with ``eᵀα⁺ = eᵀα⁻`` and ``α = α⁺ - α⁻``, so ``-ε‖α‖₁`` becomes the linear
    ``-ε eᵀ(α⁺ + α⁻)`` (equal at the optimum, where ``α⁺_iα⁻_i = 0``). The feasible set is still a
    box cut by one hyperplane, so every solver and the exact projection apply unchanged; ``dim``
    is 2n and :meth:`dual_coef` gives α. The certificate bounds the SVR primal
    ``½βᵀKβ + Σ C_i max(0, |y_i - (Kβ)_i - b| - ε)`` at ``β = α`` with the best b.

    The targets are centered inside (``y - mean(y)``): on A, ``eᵀα = 0`` makes ``yᵀα`` blind to a
    shift, and the intercept absorbs the mean, so the problem is the same; but ``yᵀα`` with
    ``y + 1e6`` would multiply the round-off of ``eᵀα`` by 1e6 (the certificate's intercept is
    given for the original y).

    Parameters
    ----------
    K0 : (n, n) array_like, symmetric similarity matrix (indefinite allowed).
    y : (n,) array_like, real targets.
    C : float or (n,) array_like, default 1.0; rho : float, default 1.0.
    epsilon : float >= 0, default 0.1, the half-width of the insensitive tube.
    symmetrize, oracle : as :class:`indkernel.SVMProblem`.
    """

    def __init__(self, K0, y, C=1.0, rho=1.0, epsilon=0.1, *, symmetrize: bool = False, oracle: str | Oracle = "rank-one"):
        K0 = check_kernel(K0, symmetrize=symmetrize)
        n = K0.shape[0]
        self.y = check_vector(y, n, "y")
        self._y_mean = float(np.mean(self.y))
        self._target = self.y - self._y_mean
        self._offset_shift = self._y_mean
        self.C = per_sample_penalty(C, n, "the SVR penalty on errors outside the tube")
        self.epsilon = check_nonnegative_scalar(epsilon, "epsilon", "the half-width of the SVR's insensitive tube")
        rho = check_rho(rho, "the penalty on ||K - K0||_F^2 in eq:kern_learn_SVR")
        super().__init__(K0, rho, oracle, dim=2 * n)
        self._a, self._b = np.concatenate([np.ones(n), -np.ones(n)]), 0.0
        self._lo, self._hi = np.zeros(2 * n), np.concatenate([self.C, self.C])
        self._check_scale()

    def _u(self, x):
        return x[: self.n] - x[self.n:]

    def _u_adjoint(self, g):
        return np.concatenate([g, -g])

    def _u_extent(self):
        """``|α_i| <= max(α⁺_i, α⁻_i) <= C_i`` (``u`` of the box's corner would cancel to 0)."""
        return np.maximum(self._hi[: self.n], self._hi[self.n:])

    def _linear(self, x):
        return float(self._target @ self._u(x) - self.epsilon * np.sum(x))

    def _linear_gradient(self, x):
        return np.concatenate([self._target - self.epsilon, -self._target - self.epsilon])

    def _primal_loss(self, decision):
        return best_svr_intercept(decision, self._target, self.C, self.epsilon)

    def _loss_magnitude(self, decision, offset):
        magnitude = np.abs(self._target) + np.abs(decision) + abs(offset) + self.epsilon
        margin = np.abs(self._target - decision - offset) - self.epsilon
        return float(self.C @ active_terms(margin, magnitude)), self.C

    def _libsvm_beta(self, K, tol, max_iter):
        svr = SVR(C=1.0, epsilon=self.epsilon, kernel="precomputed", tol=tol, max_iter=max_iter)
        capped = libsvm_fit(svr, max_iter, K, self._target, sample_weight=self.C)
        beta = np.zeros(self.n)
        beta[svr.support_] = svr.dual_coef_[0]
        return beta, capped

    def from_model(self, alpha):
        return self.project(np.concatenate([np.maximum(alpha, 0.0), np.maximum(-alpha, 0.0)]))


