"""The master problem of the exchange method for the SIQCLP ``eq:SIQCLP`` (``eq:SIQCLP_master``),
for each machine."""

from __future__ import annotations

import cvxpy as cp

from . import machines, penalties
from ._base import Formulation
from .machines import Machine, _square, _vector, psd_factor
from .penalties import Penalty


def siqclp_model(machine: Machine, penalty: Penalty, kernels, factors=None) -> Formulation:
    """The SIQCLP master of any (machine, penalty) pair (``eq:SIQCLP_master``): maximize ``t`` over
    the machine's set with one cut ``t <= ℓ(α) - ½‖L_iᵀu‖² + penalty(K_i)`` per PSD kernel
    ``K_i = L_iL_iᵀ`` (:meth:`formulations.penalties.Penalty.kernel_term`).

    Each cut is an upper bound on ``f(α) = min_{K ⪰ 0}(...)``, so the value is ``>= p*``, with
    equality when the cuts include ``K*(α*)``. Variables ``alpha``, ``t``; the machine's and the
    penalty's parameters. The cuts are the last ``len(kernels)`` of ``problem.constraints``.

    Parameters
    ----------
    kernels : sequence of (n, n) PSD arrays, at least one.
    factors : sequence of (n, r_i) arrays with ``K_i = L_iL_iᵀ``, optional
        Precomputed factors (a loop over masters computes each once); by default from the
        positive eigenpairs of each kernel.
    """
    if len(kernels) == 0:
        raise ValueError("kernels must hold at least one PSD kernel (the exchange method starts from (K0)_+)")
    if factors is None:
        factors = [psd_factor(K, f"kernels[{i}]") for i, K in enumerate(kernels)]
    if len(factors) != len(kernels):
        raise ValueError(f"got {len(factors)} factors for {len(kernels)} kernels")
    t = cp.Variable(name="t")
    cuts = [t <= machine.linear - 0.5 * cp.sum_squares(L.T @ machine.u) + penalty.kernel_term(_square(K, f"kernels[{i}]"))
            for i, (K, L) in enumerate(zip(kernels, factors, strict=True))]
    problem = cp.Problem(cp.Maximize(t), machine.constraints + cuts)
    return Formulation(problem, {"alpha": machine.alpha, "t": t}, {**machine.parameters, **penalty.parameters})


def siqclp_master(K0, y, C, rho, kernels, factors=None) -> Formulation:
    """maximize ``t`` over ``α ∈ A`` with one cut per PSD kernel ``K_i``:
    ``t <= eᵀα - ½‖L_iᵀ(Yα)‖² + ρ‖K_i - K0‖²_F`` (factor form ``K_i = L_iL_iᵀ``).

    Each cut is an upper bound on ``f(α) = min_{K ⪰ 0}(...)``, so the value is ``>= p*``, with
    equality when the cuts include ``K*(α*)``. Variables ``alpha``, ``t``; parameters ``C``, ``rho``.
    ``kernels`` and ``factors`` as :func:`siqclp_model`.
    """
    K0 = _square(K0, "K0")
    return siqclp_model(machines.svm(_vector(y, K0.shape[0], "y"), C), penalties.Frobenius(K0, rho), kernels, factors)


def svr_siqclp_master(K0, y, C, rho, epsilon, kernels, factors=None) -> Formulation:
    """The SVR's master (``eq:kern_learn_SVR``): cuts ``t <= yᵀα - ε‖α‖₁ - ½‖L_iᵀα‖² + ρ‖K_i - K0‖²_F``."""
    K0 = _square(K0, "K0")
    return siqclp_model(machines.svr(_vector(y, K0.shape[0], "y"), C, epsilon), penalties.Frobenius(K0, rho), kernels,
                        factors)


def one_class_siqclp_master(K0, nu, rho, kernels, factors=None) -> Formulation:
    """The one-class master (``eq:kern_learn_1class_SVM``): cuts ``t <= -½‖L_iᵀα‖² + ρ‖K_i - K0‖²_F``."""
    K0 = _square(K0, "K0")
    return siqclp_model(machines.one_class(K0.shape[0], nu), penalties.Frobenius(K0, rho), kernels, factors)


def penalized_siqclp_master(K0, y, C, h, kernels, factors=None) -> Formulation:
    """The master with componentwise penalties ``H = hhᵀ`` (``eq:kern_learn_pen``): cuts
    ``t <= eᵀα - ½‖L_iᵀ(Yα)‖² + Σ_jk h_jh_k (K_i - K0)²_jk``. Parameter ``C``."""
    K0 = _square(K0, "K0")
    return siqclp_model(machines.svm(_vector(y, K0.shape[0], "y"), C), penalties.Componentwise(K0, h), kernels, factors)
