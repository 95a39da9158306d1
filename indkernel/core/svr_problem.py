"""Support vector regression with an indefinite kernel (``eq:kern_learn_SVR``)."""

from __future__ import annotations

from .machines import EpsilonInsensitive
from .namespace import checked_kernel
from .penalties import Frobenius
from .problem import IndefiniteProblem
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
        K0, like = checked_kernel(K0, symmetrize=symmetrize)  # another namespace's array: checked, and solved, on its device
        machine = EpsilonInsensitive(y, C, epsilon, K0.shape[0])
        self.y, self.C, self.epsilon = machine.y, machine.C, machine.epsilon
        self._compose_checked(K0, machine, Frobenius(rho), oracle, like)
