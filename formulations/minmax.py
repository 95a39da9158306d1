"""The min-max primal ``eq:kern_learn_hard``, made solvable by dualizing the inner QP
(``eq:svm_dual`` / ``eq:kern_learn_dual``), for each machine."""

from __future__ import annotations

import cvxpy as cp

from . import machines, penalties
from ._base import Formulation
from .machines import Machine, _square, _vector
from .penalties import Penalty


def minmax_model(machine: Machine, penalty: Penalty) -> Formulation:
    """The min-max model of any (machine, penalty) pair (``eq:kern_learn_hard``, made solvable by
    dualizing the inner QP: ``eq:svm_dual`` / ``eq:kern_learn_dual``).

    Minimize over ``K ⪰ 0`` and the multipliers of the inner QP (ν for the equality, ``m_hi``,
    ``m_lo >= 0`` for the bounds, ``|s| <= ε`` for the ℓ1 term):
    ``½ (d∘z)ᵀ(K + D)⁻¹(d∘z) + νb + hi_rhsᵀm_hi - lo_rhsᵀm_lo + penalty(K)`` with
    ``z = c - s - νa - hi_coef∘m_hi + lo_coef∘m_lo`` and D the machine's curvature (the squared
    hinge's ``diag(1/(2C))``: ``Σ D_iα_i² = (d∘α)ᵀD(d∘α)`` as ``d_i² = 1``); ``matrix_frac`` carries
    ``xᵀ(K + D)⁻¹x``. The penalty is taken as written (:meth:`formulations.penalties.Penalty.kernel_term`),
    so this model checks the max-min model's closed forms. The optimal ``K`` is the proxy kernel
    ``K*``; the optimum equals the max-min model's (strong duality).

    Variables ``K``, ``nu``, ``m_hi``, ``m_lo`` (and ``s`` for the SVR); the machine's and the
    penalty's parameters.
    """
    n = penalty.K0.shape[0]
    K = cp.Variable((n, n), PSD=True, name="K")
    nu = cp.Variable(name="nu")
    m_lo = cp.Variable(n, nonneg=True, name="m_lo")
    variables = {"K": K, "nu": nu, "m_lo": m_lo}
    z = machine.c - nu * machine.a + cp.multiply(machine.lo_coef, m_lo)
    objective = nu * machine.b - cp.sum(cp.multiply(machine.lo_rhs, m_lo)) + penalty.kernel_term(K)
    if machine.hi_coef is not None:
        variables["m_hi"] = m_hi = cp.Variable(n, nonneg=True, name="m_hi")
        z = z - cp.multiply(machine.hi_coef, m_hi)
        objective = objective + cp.sum(cp.multiply(machine.hi_rhs, m_hi))
    constraints = []
    if machine.epsilon is not None:
        variables["s"] = s = cp.Variable(n, name="s")
        z = z - s
        constraints.append(cp.abs(s) <= machine.epsilon)
    kernel = K if machine.curvature is None else K + cp.diag(machine.curvature)
    objective = objective + 0.5 * cp.matrix_frac(cp.multiply(machine.d, z), kernel)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    return Formulation(problem, variables, {**machine.parameters, **penalty.parameters})


def minmax_primal(K0, y, C, rho) -> Formulation:
    """Binary SVM: ``min_{K ⪰ 0} max_{α ∈ A} eᵀα - ½(Yα)ᵀK(Yα) + ρ‖K - K0‖²_F`` (``eq:kern_learn_hard``).

    The optimal ``K`` is the proxy kernel ``K*`` (``eq:kstar``); the optimum equals that of
    :func:`maxmin_sdp` (strong duality). Measured: Clarabel ends
    "optimal_inaccurate", agreeing to about 1e-7; SCS is unreliable on this form (up to 12 % off
    at n = 40). Variables ``K``, ``nu``, ``m_hi`` (multipliers of α <= C), ``m_lo`` (of α >= 0);
    parameters ``C``, ``rho``. For a PSD ``K0`` this is also PerturbSVM's primal.
    """
    K0 = _square(K0, "K0")
    return minmax_model(machines.svm(_vector(y, K0.shape[0], "y"), C), penalties.Frobenius(K0, rho))


def svr_minmax_primal(K0, y, C, rho, epsilon) -> Formulation:
    """SVR: ``min_{K ⪰ 0} max_α yᵀα - ε‖α‖₁ - ½αᵀKα + ρ‖K - K0‖²_F`` (``eq:kern_learn_SVR``).

    Adds the variable ``s`` (``|s| <= ε``, the dual of the ℓ1 term); parameters ``C``, ``epsilon``, ``rho``.
    """
    K0 = _square(K0, "K0")
    return minmax_model(machines.svr(_vector(y, K0.shape[0], "y"), C, epsilon), penalties.Frobenius(K0, rho))


def one_class_minmax_primal(K0, nu, rho) -> Formulation:
    """One-class: ``min_{K ⪰ 0} max_α -½αᵀKα + ρ‖K - K0‖²_F`` (``eq:kern_learn_1class_SVM``).

    Here ``nu`` (the variable) is the multiplier of ``eᵀα = 1``; the parameter is ``nu`` too.
    """
    K0 = _square(K0, "K0")
    return minmax_model(machines.one_class(K0.shape[0], nu), penalties.Frobenius(K0, rho))


def penalized_minmax_primal(K0, y, C, H) -> Formulation:
    """Binary SVM with componentwise penalties (``eq:kern_learn_pen``):
    ``min_{K ⪰ 0} max_{α ∈ A} eᵀα - ½(Yα)ᵀK(Yα) + Σ_ij H_ij (K_ij - K0_ij)²`` for any symmetric
    ``H >= 0`` (entrywise), not only the rank-one ``H = hhᵀ`` of ``th:kstar_pen``; so it checks the
    closed form independently. Variables as :func:`minmax_primal`; parameter ``C``.
    """
    K0 = _square(K0, "K0")
    return minmax_model(machines.svm(_vector(y, K0.shape[0], "y"), C), penalties.Weighted(K0, H))
