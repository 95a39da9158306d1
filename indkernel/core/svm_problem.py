"""The binary SVM with an indefinite kernel (``eq:kern_learn``), the paper's main problem, and its
two variants: PerturbSVM for Mercer kernels and componentwise penalties."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from .machines import Hinge, SquaredHinge
from .namespace import checked_kernel
from .penalties import Componentwise, Frobenius, Mercer, Penalty
from .problem import IndefiniteProblem
from .proxy import MercerProxy, Oracle

#: The binary machines by the name of their loss (as scikit-learn's ``LinearSVC(loss=...)``).
LOSSES: dict[str, type[Hinge]] = {"hinge": Hinge, "squared_hinge": SquaredHinge}


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
    class_weight : None, "balanced", "authors" or dict
        Multiplies C per class: ``"balanced"`` as scikit-learn (``n / (2 n_c)``); ``"authors"`` as
        the authors' reference code (C for the positive class, ``C * n_pos / n_neg`` for the
        negative one).
    symmetrize : bool, default False
        Accept a non-symmetric K0 and use ``(K0 + K0ᵀ)/2``.
    loss : {"hinge", "squared_hinge"}, default "hinge"
        The machine: the paper's SVM, or the squared-hinge (L2) SVM, whose dual adds
        ``-¼Σα_i²/C_i`` and drops the upper bound α <= C (:class:`indkernel.core.machines.SquaredHinge`).
    oracle : str, default "rank-one"
        How the proxy kernel is computed (:mod:`indkernel.core.proxy`): ``"rank-one"`` updates the
        fixed eigendecomposition of K0 in O(n²) per point; ``"eigh"`` decomposes
        ``K0 + uuᵀ/(4ρ)`` afresh (O(n³)), for checking.

    Examples
    --------
    >>> from indkernel.datasets import load_digits_pair
    >>> from indkernel.kernels import simpson
    >>> X, y = load_digits_pair(3, 5)
    >>> p = SVMProblem(simpson(X[:40]), y[:40], C=10.0, rho=1.0)
    >>> alpha = p.project(np.full(p.n, 5.0))
    >>> f, g, c = p.objective(alpha), p.gradient(alpha), p.certify(alpha)
    >>> bool(c.lower <= f <= c.upper), g.shape
    (True, (40,))
    """

    def __init__(self, K0, y, C=1.0, rho=1.0, *, class_weight=None, symmetrize: bool = False, loss: str = "hinge",
                 oracle: str | Oracle = "rank-one"):
        self._compose(K0, y, C, class_weight, symmetrize, loss, lambda n: Frobenius(rho), oracle)

    def _compose(self, K0, y, C, class_weight, symmetrize, loss, make_penalty: Callable[[int], Penalty], oracle) -> None:
        """Validate K0, the loss and the labels, then compose the machine with ``make_penalty(n)``."""
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {sorted(LOSSES)} (the SVM's hinge or its square); got {loss!r}")
        K0, like = checked_kernel(K0, symmetrize=symmetrize)  # another namespace's array: checked, and solved, on its device
        machine = LOSSES[loss](y, C, class_weight, K0.shape[0])
        penalty = make_penalty(K0.shape[0])
        self.y, self.classes, self.C = machine.y, machine.classes, machine.C
        self._compose_checked(K0, machine, penalty, oracle, like)

    def to_labels(self, signs) -> np.ndarray:
        """Map ±1 (or any signed scores) back to the original labels: ``> 0`` is ``classes[1]``."""
        return cast(Hinge, self.machine).to_labels(signs)


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

    def __init__(self, K0, y, C=1.0, rho=1.0, *, class_weight=None, symmetrize: bool = False, loss: str = "hinge",
                 oracle: MercerProxy | None = None):
        self._compose(K0, y, C, class_weight, symmetrize, loss, lambda n: Mercer(rho, oracle), None)


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
    class_weight, symmetrize, loss, oracle : as :class:`SVMProblem`.
    """

    def __init__(self, K0, y, C=1.0, h=None, *, class_weight=None, symmetrize: bool = False, loss: str = "hinge",
                 oracle: str | Oracle = "rank-one"):
        self._compose(K0, y, C, class_weight, symmetrize, loss, lambda n: Componentwise(h, n), oracle)

    @property
    def h(self) -> np.ndarray:
        """The penalty weights h (read-only)."""
        return cast(Componentwise, self.penalty).h
