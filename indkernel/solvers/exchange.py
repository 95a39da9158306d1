"""The exchange method for the semi-infinite program ``eq:SIQCLP`` (``alg:exchange``, Chen & Ye 2008)."""

from __future__ import annotations

import numpy as np

import formulations

from .._validation import check_nonnegative_scalar, check_positive_scalar
from ..core.problem import IndefiniteProblem
from .mkl_master import MKLMaster
from .models import siqclp_model, solve_quietly
from .tracking import Run, _positive_int

#: The exchange method's masters: ``"conic"`` the QCLP through cvxpy (the paper's route, with MOSEK
#: there), ``"mkl"`` the regularized MKL route by cutting planes and libsvm (:mod:`indkernel.solvers.mkl_master`).
MASTERS = ("conic", "mkl")


def exchange(problem: IndefiniteProblem, run: Run, *, master: str = "conic", solver: str = formulations.DEFAULT_SOLVER,
             inactive_tol: float = 1e-7, stall_rounds: int = 50, stall_shrink: float = 0.1, mkl_tol: float = 1e-2,
             mkl_steps: int = 100, mkl_points: int = 50, mkl_box: float = 0.25) -> None:
    """Solve the SIQCLP master ``eq:SIQCLP_master`` over a growing set of kernels (``alg:exchange``).

    Starts from ``K_1 = K*(0)`` (``(K0)_+`` for the plain problems); each round solves the
    master for ``(t_i, α_i)``, adds the cut of ``K_{i+1} = K*(α_i)`` and drops cuts whose
    multiplier is below ``inactive_tol`` (the newest is always kept).

    ``master="conic"`` (default) builds the QCLP in cvxpy each round (:func:`indkernel.solvers.models.siqclp_model`)
    and solves it with ``solver`` at its default accuracy (at tight settings Clarabel fails on the
    nearly parallel cuts of late rounds), a failed master retried with the second-opinion solver:
    the paper's route, which used MOSEK. ``master="mkl"`` solves the master as regularized
    multiple kernel learning (:class:`indkernel.solvers.mkl_master.MKLMaster`: cutting planes in the
    kernel weights, one libsvm solve each, warm from round to round), the route the paper
    suggests: from n = 100 on its rounds cost 2-12x less (the results page's timing figure, which uses
    it); below, and at tight tolerances, the conic master is faster and more accurate.

    In exact arithmetic the master value ``t_i`` bounds ``p*`` from above, so the method's own
    stopping value is ``t_i - f(α_i)`` (``details["exchange_gap"]``, per round in
    ``details["exchange_gaps"]``). It is an *uncertified estimate*: a master solved to finite
    accuracy can put ``t_i`` below ``f(α_i)`` (a negative own gap). The status rests
    only on indkernel's certificate at ``α_i``, which lags behind the own gap: a master value
    accurate to ε places α_i only to about √ε, so the rounds go on after the own gap is within
    tolerance. When, in addition, the certified gap has not shrunk by ``stall_shrink`` over the
    last ``stall_rounds`` rounds, the masters' accuracy is the limit and the run stops with
    status ``"inaccurate"``.

    Parameters
    ----------
    master : {"conic", "mkl"}, default "conic"
    solver : str, default ``formulations.DEFAULT_SOLVER``
        The conic master's cvxpy solver.
    inactive_tol : float, default 1e-7
        Cuts whose multiplier is at most this are dropped.
    stall_rounds, stall_shrink : int and float, default 50 and 0.1
        The stall test above. It is not a rate: the certificate closes in steps, with plateaus of
        25-50 rounds between them (random n = 30, ρ = 0.1 in the slow suite certifies 1e-5 at
        round 707, its own gap within tol since round 560).
    mkl_tol, mkl_steps : float and int, default 1e-2 and 100
        The MKL master's tolerance as a fraction of the run's target gap, and its inner libsvm
        solves at most per master.
    mkl_points, mkl_box : int and float, default 50 and 0.25
        The MKL master's inner points kept at most and its first box half-width
        (:class:`indkernel.solvers.mkl_master.MKLMaster`).
    """
    if master not in MASTERS:
        raise ValueError(f"master must be one of {MASTERS}; got {master!r}")
    inactive_tol = check_nonnegative_scalar(inactive_tol, "inactive_tol", "the multiplier below which a cut is dropped")
    stall_rounds = _positive_int(stall_rounds, "stall_rounds")
    stall_shrink = check_positive_scalar(stall_shrink, "stall_shrink", "the fraction the gap must shrink by")
    mkl_tol = check_positive_scalar(mkl_tol, "mkl_tol", "the MKL master's tolerance relative to the run's")
    mkl_steps = _positive_int(mkl_steps, "mkl_steps")
    mkl_points = _positive_int(mkl_points, "mkl_points")
    mkl_box = check_positive_scalar(mkl_box, "mkl_box", "the MKL master's first box half-width")
    first = problem.proxy_kernel(np.zeros(problem.dim))
    solve_master = (_mkl_rounds(run, mkl_tol, mkl_steps, MKLMaster(problem, max_points=mkl_points, box=mkl_box))
                    if master == "mkl"
                    else _conic_rounds(problem, run, solver))
    own_gaps = run.details.setdefault("exchange_gaps", [])
    certified_gaps = []
    keep: list[int] = []
    new = first
    if run.observe(problem.initial_point()):  # the start every method shares, iteration 0
        return
    for _ in run.iterations():
        solved = solve_master(keep, new)
        if solved is None:
            return
        t, alpha, multipliers = solved
        own_gaps.append(t - problem.objective_at(alpha))
        run.details["exchange_gap"] = own_gaps[-1]
        own_converged = own_gaps[-1] <= run.target()
        if run.observe(alpha):
            return
        certified_gaps.append(run.upper - run.lower)
        if own_converged and len(certified_gaps) > stall_rounds and \
                certified_gaps[-1] > (1 - stall_shrink) * certified_gaps[-1 - stall_rounds]:
            run.fail("inaccurate", f"the master's own gap is within tol, but the certified gap "
                     f"{certified_gaps[-1]:.3g} has not shrunk by {stall_shrink:.0%} in {stall_rounds} rounds: "
                     "the masters are solved only to finite accuracy (pass a larger tol, or use method='newton')")
            return
        keep = [i for i, m in enumerate(multipliers[:-1]) if m > inactive_tol] + [len(multipliers) - 1]
        new = problem.proxy_kernel(alpha)


def _mkl_rounds(run: Run, mkl_tol: float, mkl_steps: int, mkl: MKLMaster):
    """``solve_master(keep, new)`` by :class:`MKLMaster`: ``(t, α, multipliers)``, or None once the run ended."""

    def solve_master(keep: list[int], new: np.ndarray):
        mkl.set_kernels(keep, new)
        try:
            tol = mkl_tol * run.target(max(run.scale, 1.0))
            return mkl.solve(tol, mkl_steps, stop=lambda: run.out_of_time)
        except ValueError as exc:  # libsvm refused (non-finite data)
            run.fail("failed", f"the SIQCLP master failed: {exc}")
            return None

    return solve_master


def _conic_rounds(problem: IndefiniteProblem, run: Run, solver: str):
    """``solve_master(keep, new)`` by a cvxpy model per round: ``(t, α, multipliers)``, or None once the run ended."""
    kernels: list[np.ndarray] = []
    factors: list[np.ndarray] = []

    def solve_master(keep: list[int], new: np.ndarray):
        kernels[:] = [kernels[i] for i in keep] + [new]
        factors[:] = [factors[i] for i in keep] + [formulations.psd_factor(new)]
        if run.stop_for_time():  # the factor is O(n³): no model is built after the time is up
            return None
        model = siqclp_model(problem, kernels, factors)
        try:
            t = _solve_master(model, solver, lambda: run.remaining)
        except Exception as exc:  # a conic solver failure ends the run with its reason
            if run.remaining == 0.0:
                run.fail("time_limit", f"stopped at time_limit={run.time_limit:g} s inside a master solve")
            else:
                run.fail("failed", f"the SIQCLP master failed: {exc}")
            return None
        multipliers = np.array([np.ravel(c.dual_value)[0] for c in model.problem.constraints[-len(kernels):]])
        return t, problem.from_model(model.solution("alpha")), multipliers

    return solve_master


def _solve_master(model, solver: str, budget) -> float:
    """The master's value by ``solver``, else by the second opinion; each gets the seconds
    ``budget()`` leaves once its model is compiled."""
    try:
        return solve_quietly(model, solver=solver, budget=budget)
    except formulations.OutOfTime:
        raise
    except Exception:
        if solver == formulations.SECOND_OPINION:
            raise
        second = formulations.SECOND_OPINION
        return solve_quietly(model, solver=second, budget=budget, **formulations.ACCURATE[second])
