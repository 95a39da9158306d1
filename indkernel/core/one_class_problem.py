"""The one-class SVM with an indefinite kernel (``eq:kern_learn_1class_SVM``)."""

from __future__ import annotations

import numpy as np
from sklearn.svm import OneClassSVM

from .._validation import check_kernel, check_nu, check_rho
from .intercept import active_terms, best_one_class_offset
from .problem import IndefiniteProblem, libsvm_fit
from .proxy import Oracle


class OneClassProblem(IndefiniteProblem):
    """``max_{eᵀα = 1, 0 <= α <= 1/(νn)} min_{K ⪰ 0} -½αᵀKα + ρ‖K - K0‖²_F``
    (``eq:kern_learn_1class_SVM``), with ``K* = (K0 + ααᵀ/(4ρ))_+`` (``eq:kstar_SVR``).

    The certificate bounds the one-class primal (Schölkopf et al. 2001)
    ``½βᵀKβ - r + Σ max(0, r - (Kβ)_i)/(νn)`` at ``β = α`` with the best threshold r; a point x
    is an inlier when ``Σ_j α_j K(x, x_j) >= r`` (``intercept = r`` in the certificate).

    Parameters
    ----------
    K0 : (n, n) array_like, symmetric similarity matrix (indefinite allowed).
    nu : float in (0, 1], default 0.5, an upper bound on the fraction of training outliers.
    rho : float, default 1.0; symmetrize, oracle : as :class:`indkernel.SVMProblem`.
    """

    def __init__(self, K0, nu=0.5, rho=1.0, *, symmetrize: bool = False, oracle: str | Oracle = "rank-one"):
        K0 = check_kernel(K0, symmetrize=symmetrize)
        n = K0.shape[0]
        self.nu = check_nu(nu)
        rho = check_rho(rho, "the penalty on ||K - K0||_F^2 in eq:kern_learn_1class_SVM")
        super().__init__(K0, rho, oracle)
        self.bound = 1.0 / (self.nu * n)
        self._a, self._b, self._lo, self._hi = np.ones(n), 1.0, np.zeros(n), np.full(n, self.bound)
        self._check_scale(box_name="1/(nu·n)")

    def _u(self, alpha):
        return alpha

    _u_adjoint = _u

    def _linear(self, alpha):
        return 0.0

    def _linear_gradient(self, alpha):
        return np.zeros_like(alpha)

    def _primal_loss(self, decision):
        return best_one_class_offset(decision, self.bound)

    def _loss_magnitude(self, decision, offset):
        weights = np.full(self.n, self.bound)
        return float(abs(offset) + weights @ active_terms(offset - decision, np.abs(decision) + abs(offset))), weights

    def _libsvm_beta(self, K, tol, max_iter):
        model = OneClassSVM(nu=self.nu, kernel="precomputed", tol=tol, max_iter=max_iter)
        capped = libsvm_fit(model, max_iter, K)
        beta = np.zeros(self.n)
        beta[model.support_] = model.dual_coef_[0] / (self.nu * self.n)  # libsvm scales eᵀα to νn
        return beta, capped


