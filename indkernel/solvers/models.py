"""The cvxpy models (:mod:`formulations`) of each problem type, for the methods that solve them: the
direct SDP (``eq:kern_learn`` as its max-min model) and the exchange method's master
(``eq:SIQCLP_master``). The problem types themselves import no cvxpy."""

from __future__ import annotations

from collections.abc import Callable

import formulations

from ..core.machines import EpsilonInsensitive, Hinge, OneClass, SquaredHinge
from ..core.penalties import Componentwise, Frobenius, Mercer
from ..core.problem import IndefiniteProblem

#: The max-min model of each (machine, penalty) pair (a penalty without its own model uses its
#: parent's: the Mercer penalty is the Frobenius one on a PSD K0).
MAXMIN: dict[tuple[type, type], Callable] = {
    (Hinge, Frobenius): lambda p: formulations.maxmin_sdp(p.K0, p.machine.y, p.machine.C, p.rho),
    (Hinge, Mercer): lambda p: formulations.perturb_maxmin(p.K0, p.machine.y, p.machine.C, p.rho),
    (Hinge, Componentwise): lambda p: formulations.penalized_maxmin_sdp(p.K0, p.machine.y, p.machine.C, p.penalty.h),
    (EpsilonInsensitive, Frobenius): lambda p: formulations.svr_maxmin_sdp(
        p.K0, p.machine.target, p.machine.C, p.rho, p.machine.epsilon),
    (OneClass, Frobenius): lambda p: formulations.one_class_maxmin_sdp(p.K0, p.machine.nu, p.rho),
    (SquaredHinge, Frobenius): lambda p: formulations.maxmin_sdp(p.K0, p.machine.y, p.machine.C, p.rho, "squared_hinge"),
    (SquaredHinge, Mercer): lambda p: formulations.perturb_maxmin(p.K0, p.machine.y, p.machine.C, p.rho, "squared_hinge"),
    (SquaredHinge, Componentwise): lambda p: formulations.penalized_maxmin_sdp(
        p.K0, p.machine.y, p.machine.C, p.penalty.h, "squared_hinge"),
}
#: The exchange method's master of each pair.
SIQCLP: dict[tuple[type, type], Callable] = {
    (Hinge, Frobenius): lambda p, kernels, factors: formulations.siqclp_master(
        p.K0, p.machine.y, p.machine.C, p.rho, kernels, factors),
    (Hinge, Componentwise): lambda p, kernels, factors: formulations.penalized_siqclp_master(
        p.K0, p.machine.y, p.machine.C, p.penalty.h, kernels, factors),
    (EpsilonInsensitive, Frobenius): lambda p, kernels, factors: formulations.svr_siqclp_master(
        p.K0, p.machine.target, p.machine.C, p.rho, p.machine.epsilon, kernels, factors),
    (OneClass, Frobenius): lambda p, kernels, factors: formulations.one_class_siqclp_master(
        p.K0, p.machine.nu, p.rho, kernels, factors),
}


#: The time-limit setting of each conic solver, so a solve ends with the run's time_limit.
TIME_LIMIT_SETTINGS = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}


def time_limit(solver: str, seconds: float | None) -> dict:
    """The keyword that gives ``solver`` at most ``seconds`` (None: no limit; a solver without such
    a setting: nothing)."""
    if seconds is None or solver not in TIME_LIMIT_SETTINGS:
        return {}
    return {TIME_LIMIT_SETTINGS[solver]: max(seconds, 1e-3)}


def _lookup(table: dict[tuple[type, type], Callable], problem: IndefiniteProblem) -> Callable | None:
    machine = type(problem.machine)
    for penalty in type(problem.penalty).__mro__:
        if (machine, penalty) in table:
            return table[machine, penalty]
    return None


def model_refusal(problem: IndefiniteProblem, what: str) -> str | None:
    """Why the problem has no ``what`` model (``"max-min"`` or ``"SIQCLP"``), or None."""
    if _lookup(MAXMIN if what == "max-min" else SIQCLP, problem) is not None:
        return None
    return (f"the pair ({type(problem.machine).__name__}, {type(problem.penalty).__name__}) has no {what} model; "
            f"register one in indkernel.solvers.models.{'MAXMIN' if what == 'max-min' else 'SIQCLP'}, or use 'newton', "
            "'apg' or 'pg'")


def _factory(table: dict[tuple[type, type], Callable], problem: IndefiniteProblem, what: str) -> Callable:
    found = _lookup(table, problem)
    if found is None:
        raise TypeError(model_refusal(problem, what))
    return found


def maxmin_model(problem: IndefiniteProblem) -> formulations.Formulation:
    """The problem's max-min model: its optimum is ``p*`` (``formulations.maxmin_sdp`` and its variants)."""
    return _factory(MAXMIN, problem, "max-min")(problem)


def siqclp_model(problem: IndefiniteProblem, kernels, factors=None) -> formulations.Formulation:
    """The SIQCLP master with one cut per PSD kernel (``eq:SIQCLP_master``)."""
    return _factory(SIQCLP, problem, "SIQCLP")(problem, kernels, factors)
