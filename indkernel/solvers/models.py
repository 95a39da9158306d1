"""The cvxpy models (:mod:`formulations`) of each problem type, for the methods that solve them: the
direct SDP (``eq:kern_learn`` as its max-min model) and the exchange method's master
(``eq:SIQCLP_master``). The problem types themselves import no cvxpy."""

from __future__ import annotations

from collections.abc import Callable

import formulations

from ..core import ComponentwiseSVMProblem, OneClassProblem, PerturbSVMProblem, SVMProblem, SVRProblem
from ..core.problem import IndefiniteProblem

MAXMIN: dict[type, Callable] = {
    SVMProblem: lambda p: formulations.maxmin_sdp(p.K0, p.y, p.C, p.rho),
    PerturbSVMProblem: lambda p: formulations.perturb_maxmin(p.K0, p.y, p.C, p.rho),
    ComponentwiseSVMProblem: lambda p: formulations.penalized_maxmin_sdp(p.K0, p.y, p.C, p.h),
    SVRProblem: lambda p: formulations.svr_maxmin_sdp(p.K0, p._target, p.C, p.rho, p.epsilon),
    OneClassProblem: lambda p: formulations.one_class_maxmin_sdp(p.K0, p.nu, p.rho),
}
SIQCLP: dict[type, Callable] = {
    SVMProblem: lambda p, kernels, factors: formulations.siqclp_master(p.K0, p.y, p.C, p.rho, kernels, factors),
    ComponentwiseSVMProblem: lambda p, kernels, factors: formulations.penalized_siqclp_master(
        p.K0, p.y, p.C, p.h, kernels, factors),
    SVRProblem: lambda p, kernels, factors: formulations.svr_siqclp_master(
        p.K0, p._target, p.C, p.rho, p.epsilon, kernels, factors),
    OneClassProblem: lambda p, kernels, factors: formulations.one_class_siqclp_master(
        p.K0, p.nu, p.rho, kernels, factors),
}


def _factory(table: dict[type, Callable], problem: IndefiniteProblem, what: str) -> Callable:
    for cls in type(problem).__mro__:  # a subclass without its own model uses its parent's
        if cls in table:
            return table[cls]
    raise TypeError(f"{type(problem).__name__} has no {what} model; register one in "
                    f"indkernel.solvers.models.{'MAXMIN' if what == 'max-min' else 'SIQCLP'}")


def maxmin_model(problem: IndefiniteProblem) -> formulations.Formulation:
    """The problem's max-min model: its optimum is ``p*`` (``formulations.maxmin_sdp`` and its variants)."""
    return _factory(MAXMIN, problem, "max-min")(problem)


def siqclp_model(problem: IndefiniteProblem, kernels, factors=None) -> formulations.Formulation:
    """The SIQCLP master with one cut per PSD kernel (``eq:SIQCLP_master``)."""
    return _factory(SIQCLP, problem, "SIQCLP")(problem, kernels, factors)
