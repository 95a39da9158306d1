"""The min-max primal ``eq:kern_learn_hard``, made solvable by dualizing the inner QP
(``eq:svm_dual`` / ``eq:kern_learn_dual``), for each machine."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from . import machines
from ._base import Formulation
from .machines import Machine, _square, _vector


def _primal(machine: Machine, K0: np.ndarray, rho=None, H=None) -> Formulation:
    """minimize over ``K ⪰ 0`` and the multipliers of the inner QP (ν for the equality, ``m_hi``,
    ``m_lo >= 0`` for the bounds, ``|s| <= ε`` for the ℓ1 term):
    ``½ (d∘z)ᵀK⁻¹(d∘z) + νb + hi_rhsᵀm_hi - lo_rhsᵀm_lo + penalty(K)`` with
    ``z = c - s - νa - hi_coef∘m_hi + lo_coef∘m_lo``; ``matrix_frac`` carries ``xᵀK⁻¹x``. The
    penalty is ``ρ‖K - K0‖²_F`` (ρ a parameter), or ``Σ H_ij (K_ij - K0_ij)²`` for a given H."""
    n = K0.shape[0]
    K = cp.Variable((n, n), PSD=True, name="K")
    if H is None:
        rho_param = cp.Parameter(nonneg=True, name="rho", value=float(rho))
        penalty, penalty_parameters = rho_param * cp.sum_squares(K - K0), {"rho": rho_param}
    else:
        penalty, penalty_parameters = cp.sum_squares(cp.multiply(np.sqrt(H), K - K0)), {}
    nu = cp.Variable(name="nu")
    m_hi = cp.Variable(n, nonneg=True, name="m_hi")
    m_lo = cp.Variable(n, nonneg=True, name="m_lo")
    variables = {"K": K, "nu": nu, "m_hi": m_hi, "m_lo": m_lo}
    z = machine.c - nu * machine.a - cp.multiply(machine.hi_coef, m_hi) + cp.multiply(machine.lo_coef, m_lo)
    constraints = []
    if machine.epsilon is not None:
        variables["s"] = s = cp.Variable(n, name="s")
        z = z - s
        constraints.append(cp.abs(s) <= machine.epsilon)
    objective = (0.5 * cp.matrix_frac(cp.multiply(machine.d, z), K) + nu * machine.b
                 + cp.sum(cp.multiply(machine.hi_rhs, m_hi)) - cp.sum(cp.multiply(machine.lo_rhs, m_lo))
                 + penalty)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    return Formulation(problem, variables, {**machine.parameters, **penalty_parameters})


def minmax_primal(K0, y, C, rho) -> Formulation:
    """Binary SVM: ``min_{K ⪰ 0} max_{α ∈ A} eᵀα - ½(Yα)ᵀK(Yα) + ρ‖K - K0‖²_F`` (``eq:kern_learn_hard``).

    The optimal ``K`` is the proxy kernel ``K*`` (``eq:kstar``); the optimum equals that of
    :func:`maxmin_sdp` (strong duality). Measured: Clarabel ends
    "optimal_inaccurate", agreeing to about 1e-7; SCS is unreliable on this form (up to 12 % off
    at n = 40). Variables ``K``, ``nu``, ``m_hi`` (multipliers of α <= C), ``m_lo`` (of α >= 0);
    parameters ``C``, ``rho``. For a PSD ``K0`` this is also PerturbSVM's primal.
    """
    K0 = _square(K0, "K0")
    return _primal(machines.svm(_vector(y, K0.shape[0], "y"), C), K0, rho)


def svr_minmax_primal(K0, y, C, rho, epsilon) -> Formulation:
    """SVR: ``min_{K ⪰ 0} max_α yᵀα - ε‖α‖₁ - ½αᵀKα + ρ‖K - K0‖²_F`` (``eq:kern_learn_SVR``).

    Adds the variable ``s`` (``|s| <= ε``, the dual of the ℓ1 term); parameters ``C``, ``epsilon``, ``rho``.
    """
    K0 = _square(K0, "K0")
    return _primal(machines.svr(_vector(y, K0.shape[0], "y"), C, epsilon), K0, rho)


def one_class_minmax_primal(K0, nu, rho) -> Formulation:
    """One-class: ``min_{K ⪰ 0} max_α -½αᵀKα + ρ‖K - K0‖²_F`` (``eq:kern_learn_1class_SVM``).

    Here ``nu`` (the variable) is the multiplier of ``eᵀα = 1``; the parameter is ``nu`` too.
    """
    K0 = _square(K0, "K0")
    return _primal(machines.one_class(K0.shape[0], nu), K0, rho)


def penalized_minmax_primal(K0, y, C, H) -> Formulation:
    """Binary SVM with componentwise penalties (``eq:kern_learn_pen``):
    ``min_{K ⪰ 0} max_{α ∈ A} eᵀα - ½(Yα)ᵀK(Yα) + Σ_ij H_ij (K_ij - K0_ij)²`` for any symmetric
    ``H >= 0`` (entrywise), not only the rank-one ``H = hhᵀ`` of ``th:kstar_pen``; so it checks the
    closed form independently. Variables as :func:`minmax_primal`; parameter ``C``.
    """
    K0 = _square(K0, "K0")
    H = _square(H, "H")
    if H.shape != K0.shape or np.any(H < 0):
        raise ValueError(f"H must be a nonnegative symmetric matrix of K0's shape {K0.shape}")
    return _primal(machines.svm(_vector(y, K0.shape[0], "y"), C), K0, H=H)
