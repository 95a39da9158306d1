"""The cvxpy models (:mod:`formulations`) of each problem, composed from its machine's entry
(:meth:`indkernel.core.machines.Machine.model_spec`) and its penalty's
(:meth:`indkernel.core.penalties.Penalty.model_spec`): the max-min model (``eq:kern_learn``), solved by
the direct SDP route and by ``indkernel.verify``; the min-max model (``eq:kern_learn_hard``); the
machine's dual QP on a fixed kernel (its maximizer is the tight certificate's exact solve); the
exchange method's master (``eq:SIQCLP_master``). Every (machine, penalty) pair of the toolkit has
each of them; the problem types themselves import no cvxpy.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

import formulations

from ..core import fixed_kernel
from ..core.problem import IndefiniteProblem
from . import active_set_qp


def solve_quietly(model: formulations.Formulation, **options) -> float:
    """``model.solve(**options)`` without cvxpy's "Solution may be inaccurate" warning (the solver
    stopped short of its tolerances, status "optimal_inaccurate"): wherever a model is solved here,
    the certificate at its α (or the bracket built from its answer) decides, whatever its accuracy."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
        return model.solve(**options)


def machine_entry(problem: IndefiniteProblem) -> formulations.machines.Machine:
    """The problem's machine in :mod:`formulations.machines` (named by :meth:`Machine.model_spec
    <indkernel.core.machines.Machine.model_spec>`)."""
    name, arguments = problem.machine.model_spec()
    return getattr(formulations.machines, name)(*arguments)


def penalty_entry(problem: IndefiniteProblem) -> formulations.penalties.Penalty:
    """The problem's penalty in :mod:`formulations.penalties` (named by :meth:`Penalty.model_spec
    <indkernel.core.penalties.Penalty.model_spec>`)."""
    name, arguments = problem.penalty.model_spec(problem.K0)
    return getattr(formulations.penalties, name)(*arguments)


def _entries(problem: IndefiniteProblem):
    """The problem's machine and penalty entries of :mod:`formulations`."""
    return machine_entry(problem), penalty_entry(problem)


def model_refusal(problem: IndefiniteProblem, what: str = "conic") -> str | None:
    """Why the problem has no ``what`` model (a machine or penalty without a :mod:`formulations`
    entry, or ρ = ∞), or None."""
    try:
        _entries(problem)
    except NotImplementedError as exc:
        return f"the problem has no {what} model: {exc}; use 'newton', 'apg' or 'pg'"
    return None


def maxmin_model(problem: IndefiniteProblem) -> formulations.Formulation:
    """The problem's max-min model: its optimum is ``p*`` (:func:`formulations.maxmin_model`)."""
    return formulations.maxmin_model(*_entries(problem))


def minmax_model(problem: IndefiniteProblem) -> formulations.Formulation:
    """The problem's min-max model: its optimum is ``p*`` and its ``K`` the proxy kernel
    (:func:`formulations.minmax_model`)."""
    return formulations.minmax_model(*_entries(problem))


def dual_qp_model(problem: IndefiniteProblem, K: np.ndarray) -> formulations.Formulation:
    """The problem's machine on the fixed PSD kernel K (:func:`formulations.dual_qp_model`): its
    value plus ``problem.kernel_penalty(K)`` bounds ``p*`` from above."""
    return formulations.dual_qp_model(machine_entry(problem), K)


#: The exact solve's solver and its settings: Clarabel with QDLDL for its KKT systems, 2.4-2.7x
#: faster there than faer and than Clarabel's default ("auto", as slow as faer here) at n = 200 and
#: 500, the same at 100 (``python figures/tight_certificate.py --parts 3``).
EXACT_SOLVER, EXACT_SOLVE_SETTINGS = formulations.solvers.DEFAULT_SOLVER, {"direct_solve_method": "qdldl"}


def dual_qp_point(problem: IndefiniteProblem, K: np.ndarray, budget=None) -> np.ndarray | None:
    """The maximizer of the problem's machine on the fixed PSD kernel K (:func:`dual_qp_model`) by
    Clarabel, an interior-point method (``EXACT_SOLVE_SETTINGS``), within ``budget()`` seconds,
    onto A; None where the solver fails or no time is left. The tight certificate's exact solve
    (:data:`indkernel.core.fixed_kernel.EXACT_SOLVES`): its point is scored by the primal, so an
    inaccurate answer still gives a valid bound."""
    try:
        model = dual_qp_model(problem, K)
        solve_quietly(model, solver=EXACT_SOLVER, budget=budget, **EXACT_SOLVE_SETTINGS)
    except (NotImplementedError, RuntimeError, cp.error.SolverError):
        return None  # a machine without a cvxpy model; the solver's failure or panic; no time left (OutOfTime)
    return problem.from_model(model.solution("alpha"))


#: the exact solves in turn: HiGHS's active-set method, then the interior-point method where it falls short
fixed_kernel.EXACT_SOLVES.extend([active_set_qp.dual_qp_point, dual_qp_point])


def siqclp_model(problem: IndefiniteProblem, kernels, factors=None) -> formulations.Formulation:
    """The SIQCLP master with one cut per PSD kernel (:func:`formulations.siqclp_model`)."""
    machine, penalty = _entries(problem)
    return formulations.siqclp_model(machine, penalty, kernels, factors)
