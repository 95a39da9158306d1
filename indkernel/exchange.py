"""The exchange method for the semi-infinite program ``eq:SIQCLP`` (``alg:exchange``, Chen & Ye 2008)."""

from __future__ import annotations

import numpy as np

import formulations

from .problem import IndefiniteProblem
from .tracking import Run


def exchange(problem: IndefiniteProblem, run: Run, *, solver: str = formulations.DEFAULT_SOLVER,
             inactive_tol: float = 1e-7) -> None:
    """Solve the SIQCLP master ``eq:SIQCLP_master`` over a growing set of kernels (``alg:exchange``).

    Starts from ``K_1 = K*(0)`` (``(K0)_+`` for the plain problems); each round solves the
    problem's master (``problem.siqclp_model``, cvxpy) for ``(t_i, α_i)``, adds the
    cut of ``K_{i+1} = K*(α_i)`` and drops cuts whose multiplier is below ``inactive_tol`` (the
    newest is always kept). The masters are solved at the solver's default accuracy (at tight
    settings Clarabel fails on the nearly parallel cuts of late rounds); a failed master is
    retried with the second-opinion solver.

    In exact arithmetic the master value ``t_i`` bounds ``p*`` from above, so the method's own
    stopping value is ``t_i - f(α_i)`` (``details["exchange_gap"]``, per round in
    ``details["exchange_gaps"]``). It is an *uncertified estimate*: a master solved to the conic
    solver's accuracy can put ``t_i`` below ``f(α_i)`` (a negative own gap). The status rests
    only on indkernel's certificate at ``α_i``. When the own gap is within tolerance and the certified gap has not halved over
    the last ``STALL_ROUNDS`` rounds, the masters' accuracy is the limit and the run stops with
    status ``"inaccurate"``.
    """
    kernels = [problem.proxy_kernel(np.zeros(problem.dim))]
    factors = [formulations.psd_factor(kernels[0])]
    own_gaps = run.details.setdefault("exchange_gaps", [])
    certified_gaps = []
    for _ in run.iterations():
        model = problem.siqclp_model(kernels, factors)
        try:
            t = _solve_master(model, solver, run.remaining)
        except Exception as exc:  # a conic solver failure ends the run with its reason
            if run.remaining == 0.0:
                run.fail("time_limit", f"stopped at time_limit={run.time_limit:g} s inside a master solve")
            else:
                run.fail("failed", f"the SIQCLP master failed: {exc}")
            return
        alpha = problem.from_model(model.variables["alpha"].value)
        own_gaps.append(t - problem.objective(alpha))
        run.details["exchange_gap"] = own_gaps[-1]
        own_converged = own_gaps[-1] <= run.tol * max(run.denominator, abs(t) if run.absolute else 0.0)
        if run.observe(alpha):
            return
        certified_gaps.append(run.upper - run.lower)
        if own_converged and len(certified_gaps) > STALL_ROUNDS and \
                certified_gaps[-1] > 0.5 * certified_gaps[-1 - STALL_ROUNDS]:
            run.fail("inaccurate", f"the master's own gap is within tol, but the certified gap {certified_gaps[-1]:.3g} "
                     f"has not halved in {STALL_ROUNDS} rounds: the masters are solved only to {solver}'s "
                     "accuracy (pass a larger tol, or use method='apg')")
            return
        multipliers = np.array([np.ravel(c.dual_value)[0] for c in model.problem.constraints[3:]])
        active = [i for i, m in enumerate(multipliers[:-1]) if m > inactive_tol] + [len(kernels) - 1]
        kernels, factors = [kernels[i] for i in active], [factors[i] for i in active]
        kernels.append(problem.proxy_kernel(alpha))
        factors.append(formulations.psd_factor(kernels[-1]))


#: Rounds over which the certified gap must halve once the own gap is within tol.
STALL_ROUNDS = 50

#: The time-limit setting of each conic solver, so a master solve ends with the run's time_limit.
TIME_LIMIT_SETTINGS = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}


def _solve_master(model, solver: str, seconds: float | None) -> float:
    try:
        return model.solve(solver=solver, **_time_limit(solver, seconds))
    except Exception:
        if solver == formulations.SECOND_OPINION:
            raise
        second = formulations.SECOND_OPINION
        return model.solve(solver=second, **formulations.ACCURATE[second], **_time_limit(second, seconds))


def _time_limit(solver: str, seconds: float | None) -> dict:
    if seconds is None or solver not in TIME_LIMIT_SETTINGS:
        return {}
    return {TIME_LIMIT_SETTINGS[solver]: max(seconds, 1e-3)}
