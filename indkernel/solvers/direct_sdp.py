"""The max-min problem solved directly as the SDP of ``formulations`` (for small n)."""

from __future__ import annotations

import formulations

from ..core.problem import IndefiniteProblem
from .models import maxmin_model, solve_quietly
from .tracking import Run

#: Above this size the SDP route is refused: the model grows as n², the interior-point work as n⁶
#: (``figures/formulation_sizes.py`` times it).
SDP_MAX_N = 100


def refusal(problem: IndefiniteProblem, max_n: int = SDP_MAX_N) -> str | None:
    """Why the SDP route will not run on ``problem`` (checked before any work), or None."""
    if problem.n > max_n:
        return (f"the SDP route is refused above n = {max_n} (here n = {problem.n}): its model has n² variables "
                "and takes minutes at n = 100; use method='apg' (certified, O(n²) per iteration) or pass max_n= "
                "to insist")
    return None


def direct_sdp(problem: IndefiniteProblem, run: Run, *, solver: str = formulations.DEFAULT_SOLVER,
               max_n: int = SDP_MAX_N) -> None:
    """Solve the problem's own max-min model (:func:`indkernel.solvers.models.maxmin_model`: ``formulations.maxmin_sdp``
    for the SVM, its SVR / one-class / componentwise counterparts, PerturbSVM's conic quartic) with a
    conic solver and certify its α; where that solve fails or its α does not certify to ``tol``, the
    second-opinion solver (``formulations.SECOND_OPINION``) solves it again and the run keeps the
    better bracket (``details["sdp_solver"]`` names the solver of the last certified α).

    cvxpy's "Solution may be inaccurate" (the conic solver stopped short of its tolerances) is not
    shown: the certificate at the solution's α decides the status, as for every method.

    One "iteration" after the start every method shares (``problem.initial_point()``, certified
    as iteration 0). Raises ValueError above ``max_n`` samples, naming a first-order method.
    """
    reason = refusal(problem, max_n)
    if reason is not None:
        raise ValueError(reason)
    if run.observe(problem.initial_point()):  # the start every method shares, iteration 0
        return
    for _ in run.iterations():
        failures, tried = [], []
        for attempt in dict.fromkeys((solver, formulations.SECOND_OPINION)):
            if run.out_of_time:
                break
            model = maxmin_model(problem)
            try:  # the conic solver gets the time left once compiled: its solve cannot be interrupted from outside
                value = solve_quietly(model, solver=attempt, budget=lambda: run.remaining,
                                      **formulations.ACCURATE.get(attempt, {}))
            except Exception as exc:  # a conic solver failure: the next solver, or the run's end
                failures.append(f"the SDP solve failed with {attempt}: {exc}")
                continue
            tried.append(attempt)
            run.details.update(sdp_value=value, sdp_solver=attempt)
            if run.observe(problem.from_model(model.solution("alpha"))):
                return
        if not tried and run.out_of_time:
            run.fail("time_limit", f"stopped at time_limit={run.time_limit:g} s inside the SDP solve: "
                                   + "; ".join(failures))
        elif not tried:
            run.fail("failed", "; ".join(failures))
        else:
            run.fail("inaccurate", f"the {' and '.join(tried)} solutions certify only to a gap of "
                                   f"{run.upper - run.lower:.3e}")
        return
