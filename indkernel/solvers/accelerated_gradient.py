"""An accelerated projected gradient method: no step size to tune."""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import register_jitable

from .._validation import check_positive_scalar
from ..core.compiled_objective import no_record, stop_for_time, trial_project, trial_value
from .tracking import Run

#: Doublings of L in one backtracking search before the run stops (2^200 times the estimate).
MAX_BACKTRACKS = 200


def accelerated_gradient(problem, run: Run, *, lipschitz: float | None = None, alpha0=None) -> None:
    """FISTA (Beck & Teboulle 2009) for the concave maximization over A, with backtracking on the
    Lipschitz estimate L and adaptive restart (O'Donoghue & Candès 2015).

    Each iteration takes ``x⁺ = p_A(y + ∇f(y)/L)`` from the extrapolated point y, doubling L
    until ``f(x⁺) >= f(y) + ∇f(y)ᵀ(x⁺ - y) - L/2 ‖x⁺ - y‖²`` (each try is one O(n²) oracle
    call with the rank-one update), then lets L shrink by 10 % so it tracks the local curvature.
    The momentum restarts whenever the step goes against the gradient
    (``∇f(y)ᵀ(x⁺ - x) < 0``). Every iterate x⁺ is certified.

    Parameters
    ----------
    lipschitz : float, optional
        Initial L; default ``problem.curvature_estimate()`` (``‖K0‖₂ + ‖C‖²/(4ρ)`` for the SVM)
        scaled down by 100 (backtracking corrects it).
    """
    x = problem.initial_point() if alpha0 is None else problem.project(alpha0)
    if lipschitz is None:
        L = problem.curvature_estimate() / 100
    else:
        L = check_positive_scalar(lipschitz, "lipschitz", "the initial Lipschitz estimate")
    L_floor = problem.curvature_estimate() * 1e-12  # L → 0 would overflow the step y + ∇f/L
    if run.observe(x):
        return
    y, momentum, f_x = x, 1.0, problem.objective_at(x)
    for _ in run.iterations():
        f_y, g_y = problem.objective_at(y), problem.gradient_at(y)
        if not run.finite(np.append(g_y, f_y), "the objective or gradient"):
            return
        found = gradient_projection_step(problem, run, y, f_y, g_y, L)
        if found is None:
            return
        x_new, f_new, L = found
        if run.observe(x_new):
            return
        if g_y @ (x_new - x) < 0 or f_new < f_x:  # adaptive restart
            momentum_next, y = 1.0, x_new
        else:
            momentum_next = (1 + np.sqrt(1 + 4 * momentum ** 2)) / 2
            y = x_new + (momentum - 1) / momentum_next * (x_new - x)  # f is defined off A too
        x, f_x, momentum, L = x_new, f_new, momentum_next, max(0.9 * L, L_floor)


def gradient_projection_step(problem, run: Run, y: np.ndarray, f_y: float, g_y: np.ndarray, L: float,
                             armijo: float | None = None):
    """``(x⁺, f(x⁺), L)`` with ``x⁺ = p_A(y + ∇f(y)/L)``, doubling L until
    ``f(x⁺) >= f(y) + ∇f(y)ᵀ(x⁺ - y) - L/2 ‖x⁺ - y‖²`` (the majorization the accelerated method
    needs) or, given ``armijo = μ``, until Armijo's ``f(x⁺) >= f(y) + μ ∇f(y)ᵀ(x⁺ - y)`` (enough
    for a projected Newton face), up to the rounding of the comparison
    (:meth:`IndefiniteProblem.objective_noise`); None
    once the run has ended (a non-finite value, ``time_limit``, or ``MAX_BACKTRACKS`` doublings).
    Each try is one oracle call. The tries (:func:`backtracking`) run compiled on the problem's
    compiled objective (its accepted point kept by the problem, :meth:`IndefiniteProblem.adopt
    <indkernel.core.problem.IndefiniteProblem.adopt>`) where it has one and the run has no time
    limit (compiled code reads no clock); by Python otherwise, and again where a try's rank-one
    check failed."""
    options = (float(problem.objective_noise(y)), float(L), 0.0 if armijo is None else float(armijo),
               armijo is not None, MAX_BACKTRACKS)
    compiled = getattr(problem, "compiled_objective", None) if run.time_limit is None else None
    if compiled is not None:
        probe = problem.oracle.draw_probe(problem.n)
        x_new, f_new, L, status, record, _ = _backtracking(compiled, probe, None, y, float(f_y), g_y, *options)
        if status == ACCEPTED:
            problem.adopt(x_new, record)
            return x_new, problem.objective_at(x_new), L  # (ℓ summed as everywhere else)
        if status != CHECK_FAILED:
            return _ended(run, status, x_new, f_new, L)
    x_new, f_new, L, status, _, _ = backtracking(problem, None, run, y, f_y, g_y, *options)
    return (x_new, f_new, L) if status == ACCEPTED else _ended(run, status, x_new, f_new, L)


#: How :func:`_backtracking` ended.
ACCEPTED, STEP_NOT_FINITE, VALUE_NOT_FINITE, OUT_OF_TIME, TOO_MANY, CHECK_FAILED = range(6)


def _ended(run: Run, status: int, trial: np.ndarray, value: float, L: float) -> None:
    """End the run as :func:`_backtracking`'s ``status`` says (the last try's point and value)."""
    if status == STEP_NOT_FINITE:
        run.finite(trial, "the gradient step")
    elif status == VALUE_NOT_FINITE:
        run.finite(value, "the objective")
    elif status == TOO_MANY:
        run.fail("numerical_error", f"backtracking doubled L {MAX_BACKTRACKS} times without an ascent step "
                 f"(L = {L:.3g}): the objective is not smooth at this scale")
    return None  # OUT_OF_TIME: the run stopped itself


@register_jitable(error_model="numpy")
def backtracking(problem, probe, run, y, f_y, g_y, noise_y, L, armijo, use_armijo, tries):
    """The tries of :func:`gradient_projection_step`: ``(x⁺, f(x⁺), L, status, record, noise)`` (the
    status codes above; on a failed try its point and value; ``noise``: the rounding of f(x⁺),
    :meth:`IndefiniteProblem.objective_noise <indkernel.core.problem.IndefiniteProblem.objective_noise>`).
    ``problem``, ``probe`` as :func:`indkernel.core.compiled_objective.trial_value` takes them; ``run``
    as :func:`indkernel.core.compiled_objective.stop_for_time` does. Python runs it on a problem; compiled
    code (:func:`_backtracking`, Newton's iteration) on a compiled objective."""
    record, noise = no_record(), 0.0
    for _ in range(tries):
        trial = y + g_y / L
        if not np.all(np.isfinite(trial)):
            return trial, f_y, L, STEP_NOT_FINITE, record, noise
        if stop_for_time(run):
            return trial, f_y, L, OUT_OF_TIME, record, noise
        x_new = trial_project(problem, trial)
        step = x_new - y
        f_new, noise, ok, record = trial_value(problem, probe, x_new)
        if not ok:
            return x_new, f_new, L, CHECK_FAILED, record, noise
        if not np.isfinite(f_new):
            return x_new, f_new, L, VALUE_NOT_FINITE, record, noise
        gain = armijo * np.dot(g_y, step) if use_armijo else np.dot(g_y, step) - 0.5 * L * np.dot(step, step)
        if f_new >= f_y + gain - noise_y - noise:
            return x_new, f_new, L, ACCEPTED, record, noise
        L *= 2.0
    return y, f_y, L, TOO_MANY, record, noise


#: :func:`backtracking` compiled, on a compiled objective.
_backtracking = numba.njit(cache=True, error_model="numpy")(backtracking)
