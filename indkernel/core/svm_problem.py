"""The binary SVM with an indefinite kernel (``eq:kern_learn``), the paper's main problem, and its
two variants: PerturbSVM for Mercer kernels and componentwise penalties."""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from .._validation import (
    check_binary_labels,
    check_kernel,
    check_rho,
    check_scale,
    check_vector,
    penalty_vector,
    safe_norm,
)
from .intercept import active_terms, best_hinge_intercept
from .problem import IndefiniteProblem, libsvm_fit
from .proxy import MercerProxy, Oracle, psd_part


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
        How the proxy kernel is computed (:mod:`indkernel.core.proxy`): ``"rank-one"`` updates the
        fixed eigendecomposition of K0 in O(n²) per point; ``"eigh"`` decomposes
        ``K0 + uuᵀ/(4ρ)`` afresh (O(n³)), for checking.

    Examples
    --------
    >>> p = SVMProblem(K0, y, C=10.0, rho=1.0)                 # doctest: +SKIP
    >>> alpha = p.project(np.full(p.n, 5.0))                   # doctest: +SKIP
    >>> p.objective(alpha), p.gradient(alpha), p.certify(alpha).gap   # doctest: +SKIP
    """

    def __init__(self, K0, y, C=1.0, rho=1.0, *, class_weight=None, symmetrize: bool = False,
                 oracle: str | Oracle = "rank-one"):
        K0 = self._set_labels(K0, y, C, class_weight, symmetrize)
        rho = check_rho(rho, "the penalty on ||K - K0||_F^2 in eq:kern_learn")
        super().__init__(K0, rho, oracle)
        self._d = self.y
        self._check_scale(box_name="C (with class_weight)")

    def _set_labels(self, K0, y, C, class_weight, symmetrize) -> np.ndarray:
        """Validate; set ``y`` (±1), ``classes``, ``C`` (per sample) and ``A = {yᵀα = 0, 0 <= α <= C}``."""
        K0 = check_kernel(K0, symmetrize=symmetrize)
        self.y, self.classes = check_binary_labels(y, K0.shape[0])
        self.C = penalty_vector(C, self.y, self.classes, class_weight)
        self._a, self._b, self._lo, self._hi = self.y, 0.0, np.zeros(K0.shape[0]), self.C
        return K0

    def to_labels(self, signs) -> np.ndarray:
        """Map ±1 (or any signed scores) back to the original labels: ``> 0`` is ``classes[1]``."""
        return self.classes[(np.asarray(signs) > 0).astype(int)]

    def _u(self, alpha):
        return self._d * alpha

    _u_adjoint = _u  # a diagonal map

    def _linear(self, alpha):
        return float(np.sum(alpha))

    def _linear_gradient(self, alpha):
        return np.ones_like(alpha)

    def _primal_loss(self, decision):
        return best_hinge_intercept(decision, self.y, self.C)

    def _loss_magnitude(self, decision, offset):
        margin = 1.0 - self.y * (decision + offset)
        return float(self.C @ active_terms(margin, 1.0 + np.abs(decision) + abs(offset))), self.C

    def _libsvm_beta(self, K, tol, max_iter):
        svc = SVC(C=1.0, kernel="precomputed", tol=tol, max_iter=max_iter)
        capped = libsvm_fit(svc, max_iter, K, self.y, sample_weight=self.C)  # libsvm's C_i = C * weight_i
        beta = np.zeros(self.n)
        beta[svc.support_] = svc.dual_coef_[0]  # y_i α_i, sign +1 for classes[1] = +1
        return beta, capped

    def from_dual_coef(self, beta):
        """The α (onto A) whose :meth:`dual_coef` is β: ``Yβ``, since β = Yα."""
        return self.from_model(self.y * beta)


class PerturbSVMProblem(SVMProblem):
    """PerturbSVM (``eq:learn-mercer``): the binary problem for a Mercer (PSD) K0.

    There ``K* = K0 + (Yα)(Yα)ᵀ/(4ρ)`` (``eq:kstar_psd``) and
    ``f(α) = eᵀα - ½(Yα)ᵀK0(Yα) - ‖α‖⁴/(16ρ)``: the classic SVM with a fourth-order penalty on
    the support vectors, and no eigendecomposition per point (:class:`indkernel.core.proxy.MercerProxy`).
    Parameters as :class:`SVMProblem`, except ``oracle``: None, or the
    :class:`indkernel.core.proxy.MercerProxy` of another PerturbSVMProblem on the same K0 (the
    one-vs-rest problems of a multiclass fit share its check).

    K0 is checked once (its eigenvalues): negative eigenvalues above ``-PSD_TOL·‖K0‖₂``
    (:data:`indkernel.core.proxy.PSD_TOL`) are round-off and are clipped, so ``K0`` becomes ``(K0)_+``.

    Raises
    ------
    ValueError
        If K0 is indefinite beyond round-off (use :class:`SVMProblem`).
    """

    def __init__(self, K0, y, C=1.0, rho=1.0, *, class_weight=None, symmetrize: bool = False,
                 oracle: MercerProxy | None = None):
        K0 = self._set_labels(K0, y, C, class_weight, symmetrize)
        check_scale(K0, safe_norm(self.C), check_rho(rho, "the penalty"),
                    box="C (with class_weight)")
        if oracle is None:
            oracle = MercerProxy(*psd_part(K0))
        elif not (isinstance(oracle, MercerProxy) and oracle.K0.shape == K0.shape):
            raise TypeError(f"oracle must be None or the MercerProxy of this K0 (shape {K0.shape}); got {oracle!r}")
        super().__init__(oracle.K0, y, C, rho, class_weight=class_weight, oracle=oracle)


class ComponentwiseSVMProblem(SVMProblem):
    """Componentwise penalties (``eq:kern_learn_pen``) with ``H = hhᵀ``:
    ``max_{α ∈ A} min_{K ⪰ 0} eᵀα - ½(Yα)ᵀK(Yα) + Σ_ij h_ih_j (K_ij - K0_ij)²``.

    Theorem ``th:kstar_pen``: with ``W = diag(h)``,
    ``K* = W^{-1/2} (W^{1/2} (K0 + ¼(W⁻¹Yα)(W⁻¹Yα)ᵀ) W^{1/2})_+ W^{-1/2}`` (``eq:kstar_pen``), which
    is the plain proxy kernel of ``W^{1/2}K0W^{1/2}`` at ``ρ = 1`` and ``u = W^{-1/2}Yα``, scaled
    back; so the rank-one update serves it unchanged. ``h = √ρ·e`` recovers ``eq:kern_learn``.
    For PSD K0 the paper's ``eq:kstar_pen_psd`` prints ``W^{-1/2}Yα``; the correct update is
    ``K0 + ¼(W⁻¹Yα)(W⁻¹Yα)ᵀ`` (the weighted-projection SDP confirms it, see ``formulations``).

    Parameters
    ----------
    K0, y, C : as :class:`SVMProblem`.
    h : (n,) array_like of positive numbers
        The penalty weight of each training point; ``(K_ij - K0_ij)²`` is weighed by ``h_ih_j``.
    class_weight, symmetrize, oracle : as :class:`SVMProblem`.
    """

    def __init__(self, K0, y, C=1.0, h=None, *, class_weight=None, symmetrize: bool = False,
                 oracle: str | Oracle = "rank-one"):
        K0 = self._set_labels(K0, y, C, class_weight, symmetrize)
        if h is None:
            raise TypeError("h is required: one positive penalty weight per training point (H = hh^T)")
        self.h = check_vector(h, K0.shape[0], "h")
        if np.any(self.h <= 0):
            raise ValueError(f"h must be positive; h[{int(np.argmin(self.h))}] = {self.h.min():.3g}")
        scale = 1.0 / np.sqrt(self.h)
        IndefiniteProblem.__init__(self, K0, 1.0, oracle, scale=scale)
        self._d = self.y * scale
        self._check_scale(box_name="C (with class_weight) and h", penalty="h", kernel="K0/(√h√hᵀ)")


    def kernel_penalty(self, K):
        """``Σ_jk h_jh_k (K - K0)²_jk`` (``eq:kern_learn_pen``)."""
        return float(np.sum(np.outer(self.h, self.h) * (K - self.K0) ** 2))
