"""The binary SVM with an indefinite kernel (``eq:kern_learn``), the paper's main problem."""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from ._validation import check_binary_labels, check_kernel, check_positive_scalar, penalty_vector
from .intercept import best_hinge_intercept
from .problem import IndefiniteProblem, libsvm_quietly

#: libsvm stopping tolerance and iteration cap for the certificate refinement; at tighter
#: tolerances libsvm sometimes cycles (DESIGN.md), and any iterate gives a valid bound.
REFINE_TOL = 1e-8
REFINE_MAX_ITER = 100_000


class SVMProblem(IndefiniteProblem):
    """``max_{α ∈ A} min_{K ⪰ 0} eᵀα - ½(Yα)ᵀK(Yα) + ρ‖K - K0‖²_F`` (``eq:kern_learn``).

    ``A = {α : yᵀα = 0, 0 <= α <= C}``.

    Parameters
    ----------
    K0 : (n, n) array_like
        Symmetric similarity matrix, indefinite allowed.
    y : (n,) array_like
        Labels with exactly two distinct values (numbers or strings); ``classes[1]`` maps to
        +1 and ``classes[0]`` to -1, as in scikit-learn.
    C : float or (n,) array_like, default 1.0
        Misclassification penalty, per sample if a vector.
    rho : float, default 1.0
        Penalty on ``‖K - K0‖²_F``; large ρ keeps the proxy kernel near ``(K0)_+``.
    class_weight : None, "balanced" or dict
        Multiplies C per class; ``"balanced"`` weights as the authors' reference code does
        (C for the positive class, ``C * n_pos / n_neg`` for the negative one).
    symmetrize : bool, default False
        Accept a non-symmetric K0 and use ``(K0 + K0ᵀ)/2``.
    oracle : str, default "rank-one"
        How the proxy kernel is computed (:mod:`indkernel.proxy`): ``"rank-one"`` updates the
        fixed eigendecomposition of K0 in O(n²) per point; ``"eigh"`` decomposes
        ``K0 + uuᵀ/(4ρ)`` afresh (O(n³)), for checking.

    Examples
    --------
    >>> p = SVMProblem(K0, y, C=10.0, rho=1.0)                 # doctest: +SKIP
    >>> alpha = p.project(np.full(p.n, 5.0))                   # doctest: +SKIP
    >>> p.objective(alpha), p.gradient(alpha), p.certify(alpha).gap   # doctest: +SKIP
    """

    def __init__(self, K0, y, C=1.0, rho=1.0, *, class_weight=None, symmetrize: bool = False,
                 oracle: str = "rank-one"):
        K0 = check_kernel(K0, symmetrize=symmetrize)
        self.y, self.classes = check_binary_labels(y, K0.shape[0])
        self.C = penalty_vector(C, self.y, self.classes, class_weight)
        rho = check_positive_scalar(rho, "rho", "the penalty on ||K - K0||_F^2 in eq:kern_learn")
        super().__init__(K0, rho, oracle)
        self._a, self._b, self._lo, self._hi = self.y, 0.0, np.zeros(self.n), self.C

    def to_labels(self, signs) -> np.ndarray:
        """Map ±1 (or any signed scores) back to the original labels: ``> 0`` is ``classes[1]``."""
        return self.classes[(np.asarray(signs) > 0).astype(int)]

    def _u(self, alpha):
        return self.y * alpha

    _u_adjoint = _u  # Y is diagonal and symmetric

    def _linear(self, alpha):
        return float(np.sum(alpha))

    def _linear_gradient(self, alpha):
        return np.ones_like(alpha)

    def _primal_loss(self, decision):
        return best_hinge_intercept(decision, self.y, self.C)

    def _refined_beta(self, K):
        svc = SVC(C=1.0, kernel="precomputed", tol=REFINE_TOL, max_iter=REFINE_MAX_ITER)
        libsvm_quietly(svc, K, self.y, sample_weight=self.C)  # libsvm's C_i = C * weight_i
        beta = np.zeros(self.n)
        beta[svc.support_] = svc.dual_coef_[0]  # y_i α_i, sign +1 for classes_[1] = +1
        return beta
