"""The max-min problem (``eq:kern_learn`` and its SVR, one-class, Mercer and componentwise
counterparts)."""

from __future__ import annotations

import dataclasses

import cvxpy as cp
import numpy as np

from . import machines
from ._base import Formulation
from .machines import Machine, _square, _vector, penalty_weights, psd_factor


def _rho_parameter(rho) -> cp.Parameter:
    return cp.Parameter(nonneg=True, name="rho", value=float(rho))


def _sdp(machine: Machine, K0: np.ndarray, rho) -> Formulation:
    """maximize ``ℓ(α) + ρ‖K0‖²_F - ρ‖P‖²_F`` over the machine's set and ``P ⪰ 0`` with
    ``[[P - K0, u], [uᵀ, 4ρ]] ⪰ 0``, i.e. ``P ⪰ K0 + uuᵀ/(4ρ)`` (Schur complement); as
    ``min{‖P‖_F : P ⪰ 0, P ⪰ X} = ‖X_+‖_F`` this is ``ℓ(α) + min_{K ⪰ 0} -½uᵀKu + ρ‖K - K0‖²_F``."""
    n = K0.shape[0]
    rho_param = _rho_parameter(rho)
    P = cp.Variable((n, n), symmetric=True, name="P")
    u = cp.reshape(machine.u, (n, 1), order="F")
    schur = cp.bmat([[P - K0, u], [u.T, cp.reshape(4 * rho_param, (1, 1), order="F")]])
    # ‖P‖²_F of vec(P): cp.sum_squares of the symmetric=True variable itself is wrong in cvxpy 1.4.0
    # to 1.9.2 (which pip still resolves); the square of its norm is right but solved less
    # accurately (SCS 2e-4 off p* = 0 at ρ = 1e5, where this form is 1e-6 off as before)
    objective = cp.Maximize(machine.linear + rho_param * (np.sum(K0 * K0) - cp.sum_squares(cp.vec(P, order="F"))))
    problem = cp.Problem(objective, machine.constraints + [P >> 0, schur >> 0])
    return Formulation(problem, {"alpha": machine.alpha, "P": P}, {**machine.parameters, "rho": rho_param})


def maxmin_sdp(K0, y, C, rho, loss: str = "hinge") -> Formulation:
    """Binary SVM, ``eq:kern_learn`` in eigenvalue form (``eq:kern_learn_eig``) as an SDP.

    Its optimum is the paper's ``p*``; ``P`` at the optimum is the proxy kernel ``K*`` (``eq:kstar``).
    Measured: accurate with Clarabel (0.1 s at n = 20, 1.7 s at 40, 107 s at 100) and
    with SCS (2 s at n = 100, agreeing to 1e-12).

    Parameters
    ----------
    K0 : (n, n) symmetric array; y : (n,) ±1; C : float or (n,); rho : float > 0.
    loss : "hinge" (default) or "squared_hinge" (the L2 SVM: ``ℓ = eᵀα - ¼Σα_i²/C_i``, ``α >= 0``).

    Returns
    -------
    Formulation with variables ``alpha`` (n,), ``P`` (n, n); parameters ``C`` (n,) (``D = 1/(2C)``
    for the squared hinge), ``rho``.
    """
    K0 = _square(K0, "K0")
    return _sdp(machines.binary(_vector(y, K0.shape[0], "y"), C, loss), K0, rho)


def svr_maxmin_sdp(K0, y, C, rho, epsilon) -> Formulation:
    """SVR with an indefinite kernel (``eq:kern_learn_SVR``, ``eq:kern_learn_eig_SVR``) as an SDP.

    ``y`` are real targets. Variables ``alpha``, ``P``; parameters ``C``, ``epsilon``, ``rho``.
    """
    K0 = _square(K0, "K0")
    return _sdp(machines.svr(_vector(y, K0.shape[0], "y"), C, epsilon), K0, rho)


def one_class_maxmin_sdp(K0, nu, rho) -> Formulation:
    """One-class SVM with an indefinite kernel (``eq:kern_learn_1class_SVM``) as an SDP.

    Variables ``alpha``, ``P``; parameters ``nu``, ``rho``.
    """
    K0 = _square(K0, "K0")
    return _sdp(machines.one_class(K0.shape[0], nu), K0, rho)


def perturb_maxmin(K0, y, C, rho, loss: str = "hinge") -> Formulation:
    """PerturbSVM (``eq:learn-mercer``) for a PSD ``K0``: maximize
    ``eᵀα - ½‖L0ᵀu‖² - ‖u‖⁴/(16ρ)`` with ``K0 = L0L0ᵀ``; no semidefinite variable at all.

    The quartic term is kept DPP through ``t >= ‖u‖²`` and the rotated cone ``t² <= 16ρ w``.
    Its min-max primal and its dual QP are those of the binary SVM (:func:`minmax_primal`,
    :func:`dual_qp`) on the PSD ``K0``, since there ``K* = K0 + uuᵀ/(4ρ)`` is already PSD.

    Variables ``alpha``; parameters ``C`` (``D`` for ``loss="squared_hinge"``), ``rho``. Raises
    ValueError if K0 is not PSD.
    """
    K0 = _square(K0, "K0")
    L0 = psd_factor(K0, "K0")
    machine = machines.binary(_vector(y, K0.shape[0], "y"), C, loss)
    rho_param = _rho_parameter(rho)
    t, w = cp.Variable(name="t"), cp.Variable(name="w")
    quartic = [t >= cp.sum_squares(machine.u),
               cp.SOC(16 * rho_param + w, cp.hstack([2 * t, 16 * rho_param - w]))]
    objective = cp.Maximize(machine.linear - 0.5 * cp.sum_squares(L0.T @ machine.u) - w)
    problem = cp.Problem(objective, machine.constraints + quartic)
    return Formulation(problem, {"alpha": machine.alpha}, {**machine.parameters, "rho": rho_param})


def penalized_maxmin_sdp(K0, y, C, h, loss: str = "hinge") -> Formulation:
    """Binary SVM with componentwise penalties ``H = hhᵀ`` (``eq:kern_learn_pen``) as an SDP.

    With ``W = diag(h)``: ``Σ h_ih_j (K - K0)²_ij = ‖W^{1/2}(K - K0)W^{1/2}‖²_F``, so substituting
    ``K̃ = W^{1/2}KW^{1/2}`` gives the plain problem with ``ρ = 1``, kernel ``W^{1/2}K0W^{1/2}`` and
    ``u = W^{-1/2}Yα``: its ``P`` is ``W^{1/2}K*W^{1/2}`` (``th:kstar_pen``). This derivation is
    checked against :func:`penalized_minmax_primal`, which takes the penalty as written.

    Variables ``alpha``, ``P``; parameter ``C`` (``D`` for ``loss="squared_hinge"``).
    """
    K0 = _square(K0, "K0")
    n = K0.shape[0]
    root = np.sqrt(penalty_weights(h, n))
    machine = machines.binary(_vector(y, n, "y"), C, loss)
    machine = dataclasses.replace(machine, d=machine.d / root)
    model = _sdp(machine, K0 * np.outer(root, root), 1.0)
    return Formulation(model.problem, model.variables, machine.parameters)
