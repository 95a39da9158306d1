"""The master problem of the exchange method for the SIQCLP ``eq:SIQCLP`` (``eq:SIQCLP_master``)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from . import machines
from ._base import Formulation
from .machines import _square, _vector, psd_factor


def siqclp_master(K0, y, C, rho, kernels, factors=None) -> Formulation:
    """maximize ``t`` over ``α ∈ A`` with one cut per PSD kernel ``K_i``:
    ``t <= eᵀα - ½‖L_iᵀ(Yα)‖² + ρ‖K_i - K0‖²_F`` (factor form ``K_i = L_iL_iᵀ``).

    Each cut is an upper bound on ``f(α) = min_{K ⪰ 0}(...)``, so the value is ``>= p*``, with
    equality when the cuts include ``K*(α*)``. Variables ``alpha``, ``t``; parameters ``C``, ``rho``.

    Parameters
    ----------
    kernels : sequence of (n, n) PSD arrays, at least one.
    factors : sequence of (n, r_i) arrays with ``K_i = L_iL_iᵀ``, optional
        Precomputed factors (a loop over masters computes each once); by default from the
        positive eigenpairs of each kernel.
    """
    K0 = _square(K0, "K0")
    if len(kernels) == 0:
        raise ValueError("kernels must hold at least one PSD kernel (the exchange method starts from (K0)_+)")
    machine = machines.svm(_vector(y, K0.shape[0], "y"), C)
    rho_param = cp.Parameter(nonneg=True, name="rho", value=float(rho))
    t = cp.Variable(name="t")
    cuts = []
    if factors is None:
        factors = [psd_factor(K, f"kernels[{i}]") for i, K in enumerate(kernels)]
    if len(factors) != len(kernels):
        raise ValueError(f"got {len(factors)} factors for {len(kernels)} kernels")
    for i, (K, L) in enumerate(zip(kernels, factors)):
        K = _square(K, f"kernels[{i}]")
        cuts.append(t <= machine.linear - 0.5 * cp.sum_squares(L.T @ machine.u) + rho_param * np.sum((K - K0) ** 2))
    problem = cp.Problem(cp.Maximize(t), machine.constraints + cuts)
    return Formulation(problem, {"alpha": machine.alpha, "t": t}, {**machine.parameters, "rho": rho_param})
