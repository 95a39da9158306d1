"""The dual QP of each machine for a fixed PSD kernel (``eq:gen_perf_meas`` and counterparts)."""

from __future__ import annotations

import cvxpy as cp

from . import machines
from ._base import Formulation
from .machines import Machine, _vector, psd_factor


def dual_qp_model(machine: Machine, K) -> Formulation:
    """The dual QP of any machine on a fixed PSD kernel K: ``max ℓ(α) - ½‖Lᵀu(α)‖²`` over the
    machine's set, with ``K = LLᵀ`` from its positive eigenpairs (valid for a singular K). Its value
    plus ``penalty(K)`` is the min-max model's objective at K, an upper bound on ``p*``. Variable
    ``alpha``; the machine's parameters."""
    L = psd_factor(K, "K")
    objective = cp.Maximize(machine.linear - 0.5 * cp.sum_squares(L.T @ machine.u))
    return Formulation(cp.Problem(objective, machine.constraints), {"alpha": machine.alpha}, machine.parameters)


def dual_qp(K, y, C, loss: str = "hinge") -> Formulation:
    """``ω_C(K) = max_{α ∈ A} eᵀα - ½(Yα)ᵀK(Yα)`` for a PSD K (``eq:gen_perf_meas``); with
    ``loss="squared_hinge"`` the L2 SVM's ``max_{yᵀα = 0, α >= 0} eᵀα - ¼Σα_i²/C_i - ½(Yα)ᵀK(Yα)``.

    K enters through its factor ``L`` (``K = LLᵀ``, positive eigenpairs only), so the model stays
    valid when K is singular. Variable ``alpha``; parameter ``C`` (``D = 1/(2C)`` for the squared
    hinge). This is also the dual QP of PerturbSVM for a fixed kernel.
    """
    return dual_qp_model(machines.binary(_vector(y, len(K), "y"), C, loss), K)


def svr_dual_qp(K, y, C, epsilon) -> Formulation:
    """``max_{eᵀα = 0, |α| <= C} yᵀα - ε‖α‖₁ - ½αᵀKα`` (``eq:gen_perf_meas_SVR``); parameters ``C``, ``epsilon``."""
    return dual_qp_model(machines.svr(_vector(y, len(K), "y"), C, epsilon), K)


def one_class_dual_qp(K, nu) -> Formulation:
    """``max_{eᵀα = 1, 0 <= α <= 1/(νn)} -½αᵀKα`` (``eq:gen_perf_meas_1class_svm``); parameter ``nu``."""
    return dual_qp_model(machines.one_class(len(K), nu), K)
