"""The one-class SVM with an indefinite kernel (``eq:kern_learn_1class_SVM``)."""

from __future__ import annotations

from .machines import OneClass
from .namespace import checked_kernel
from .penalties import Frobenius
from .problem import IndefiniteProblem
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
        K0, like = checked_kernel(K0, symmetrize=symmetrize)  # another namespace's array: checked, and solved, on its device
        machine = OneClass(nu, K0.shape[0])
        self.nu, self.bound = machine.nu, machine.bound
        self._compose_checked(K0, machine, Frobenius(rho), oracle, like)
