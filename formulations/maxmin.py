"""The max-min problem (``eq:kern_learn`` and its SVR, one-class, Mercer and componentwise
counterparts)."""

from __future__ import annotations

import cvxpy as cp

from . import machines, penalties
from ._base import Formulation
from .machines import Machine, _square, _vector
from .penalties import Penalty


def maxmin_model(machine: Machine, penalty: Penalty) -> Formulation:
    """The max-min model of any (machine, penalty) pair (``eq:kern_learn`` and its counterparts):
    maximize ``ℓ(α) + φ(u(α))`` over the machine's set, with the penalty's inner minimum ``φ``
    (:meth:`formulations.penalties.Penalty.maxmin_term`: an SDP in ``P`` for the Frobenius and
    componentwise penalties, a conic quartic for the Mercer one). Its optimum is ``p*``.

    Variables ``alpha`` (and ``P`` for the semidefinite terms); the machine's and the penalty's parameters.
    """
    term = penalty.maxmin_term(machine.u)
    problem = cp.Problem(cp.Maximize(machine.linear + term.expression), machine.constraints + term.constraints)
    return Formulation(problem, {"alpha": machine.alpha, **term.variables}, {**machine.parameters, **term.parameters})


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
    return maxmin_model(machines.binary(_vector(y, K0.shape[0], "y"), C, loss), penalties.Frobenius(K0, rho))


def svr_maxmin_sdp(K0, y, C, rho, epsilon) -> Formulation:
    """SVR with an indefinite kernel (``eq:kern_learn_SVR``, ``eq:kern_learn_eig_SVR``) as an SDP.

    ``y`` are real targets. Variables ``alpha``, ``P``; parameters ``C``, ``epsilon``, ``rho``.
    """
    K0 = _square(K0, "K0")
    return maxmin_model(machines.svr(_vector(y, K0.shape[0], "y"), C, epsilon), penalties.Frobenius(K0, rho))


def one_class_maxmin_sdp(K0, nu, rho) -> Formulation:
    """One-class SVM with an indefinite kernel (``eq:kern_learn_1class_SVM``) as an SDP.

    Variables ``alpha``, ``P``; parameters ``nu``, ``rho``.
    """
    K0 = _square(K0, "K0")
    return maxmin_model(machines.one_class(K0.shape[0], nu), penalties.Frobenius(K0, rho))


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
    return maxmin_model(machines.binary(_vector(y, K0.shape[0], "y"), C, loss), penalties.Mercer(K0, rho))


def penalized_maxmin_sdp(K0, y, C, h, loss: str = "hinge") -> Formulation:
    """Binary SVM with componentwise penalties ``H = hhᵀ`` (``eq:kern_learn_pen``) as an SDP.

    With ``W = diag(h)``: ``Σ h_ih_j (K - K0)²_ij = ‖W^{1/2}(K - K0)W^{1/2}‖²_F``, so substituting
    ``K̃ = W^{1/2}KW^{1/2}`` gives the plain problem with ``ρ = 1``, kernel ``W^{1/2}K0W^{1/2}`` and
    ``u = W^{-1/2}Yα``: its ``P`` is ``W^{1/2}K*W^{1/2}`` (``th:kstar_pen``). This derivation is
    checked against :func:`penalized_minmax_primal`, which takes the penalty as written.

    Variables ``alpha``, ``P``; parameter ``C`` (``D`` for ``loss="squared_hinge"``).
    """
    K0 = _square(K0, "K0")
    return maxmin_model(machines.binary(_vector(y, K0.shape[0], "y"), C, loss), penalties.Componentwise(K0, h))
