"""The master problem of the exchange method for the SIQCLP ``eq:SIQCLP`` (``eq:SIQCLP_master``),
for each machine."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from . import machines
from ._base import Formulation
from .machines import Machine, _square, _vector, penalty_weights, psd_factor


def _master(machine: Machine, K0: np.ndarray, kernels, factors, rho=None, h=None) -> Formulation:
    """maximize ``t`` over the machine's set with ``t <= ℓ(α) - ½‖L_iᵀu‖² + penalty(K_i)`` per kernel;
    the penalty is ``ρ‖K_i - K0‖²_F`` (ρ a parameter) or ``Σ h_jh_k (K_i - K0)²_jk``."""
    if len(kernels) == 0:
        raise ValueError("kernels must hold at least one PSD kernel (the exchange method starts from (K0)_+)")
    if factors is None:
        factors = [psd_factor(K, f"kernels[{i}]") for i, K in enumerate(kernels)]
    if len(factors) != len(kernels):
        raise ValueError(f"got {len(factors)} factors for {len(kernels)} kernels")
    parameters = dict(machine.parameters)
    if h is None:
        parameters["rho"] = rho_param = cp.Parameter(nonneg=True, name="rho", value=float(rho))
    t = cp.Variable(name="t")
    cuts = []
    for i, (K, L) in enumerate(zip(kernels, factors, strict=True)):
        K = _square(K, f"kernels[{i}]")
        distance = np.sum((K - K0) ** 2) if h is None else np.sum(np.outer(h, h) * (K - K0) ** 2)
        penalty = rho_param * distance if h is None else distance
        cuts.append(t <= machine.linear - 0.5 * cp.sum_squares(L.T @ machine.u) + penalty)
    problem = cp.Problem(cp.Maximize(t), machine.constraints + cuts)
    return Formulation(problem, {"alpha": machine.alpha, "t": t}, parameters)


def siqclp_master(K0, y, C, rho, kernels, factors=None) -> Formulation:
    """maximize ``t`` over ``α ∈ A`` with one cut per PSD kernel ``K_i``:
    ``t <= eᵀα - ½‖L_iᵀ(Yα)‖² + ρ‖K_i - K0‖²_F`` (factor form ``K_i = L_iL_iᵀ``).

    Each cut is an upper bound on ``f(α) = min_{K ⪰ 0}(...)``, so the value is ``>= p*``, with
    equality when the cuts include ``K*(α*)``. Variables ``alpha``, ``t``; parameters ``C``, ``rho``.
    The machine's constraints come first in ``problem.constraints`` (three of them), then the cuts.

    Parameters
    ----------
    kernels : sequence of (n, n) PSD arrays, at least one.
    factors : sequence of (n, r_i) arrays with ``K_i = L_iL_iᵀ``, optional
        Precomputed factors (a loop over masters computes each once); by default from the
        positive eigenpairs of each kernel.
    """
    K0 = _square(K0, "K0")
    return _master(machines.svm(_vector(y, K0.shape[0], "y"), C), K0, kernels, factors, rho=rho)


def svr_siqclp_master(K0, y, C, rho, epsilon, kernels, factors=None) -> Formulation:
    """The SVR's master (``eq:kern_learn_SVR``): cuts ``t <= yᵀα - ε‖α‖₁ - ½‖L_iᵀα‖² + ρ‖K_i - K0‖²_F``."""
    K0 = _square(K0, "K0")
    return _master(machines.svr(_vector(y, K0.shape[0], "y"), C, epsilon), K0, kernels, factors, rho=rho)


def one_class_siqclp_master(K0, nu, rho, kernels, factors=None) -> Formulation:
    """The one-class master (``eq:kern_learn_1class_SVM``): cuts ``t <= -½‖L_iᵀα‖² + ρ‖K_i - K0‖²_F``."""
    K0 = _square(K0, "K0")
    return _master(machines.one_class(K0.shape[0], nu), K0, kernels, factors, rho=rho)


def penalized_siqclp_master(K0, y, C, h, kernels, factors=None) -> Formulation:
    """The master with componentwise penalties ``H = hhᵀ`` (``eq:kern_learn_pen``): cuts
    ``t <= eᵀα - ½‖L_iᵀ(Yα)‖² + Σ_jk h_jh_k (K_i - K0)²_jk``. Parameter ``C``."""
    K0 = _square(K0, "K0")
    h = penalty_weights(h, K0.shape[0])
    return _master(machines.svm(_vector(y, K0.shape[0], "y"), C), K0, kernels, factors, h=h)
