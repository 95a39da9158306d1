"""An accelerated projected gradient method: no step size to tune."""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_scalar
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
    Each try is one oracle call."""
    noise_y = problem.objective_noise(y)
    for _ in range(MAX_BACKTRACKS):
        trial = y + g_y / L
        if not run.finite(trial, "the gradient step") or run.stop_for_time():
            return None
        x_new = problem.feasible.project(trial)
        step = x_new - y
        f_new = problem.objective_at(x_new)
        if not run.finite(f_new, "the objective"):
            return None
        gain = armijo * (g_y @ step) if armijo is not None else g_y @ step - 0.5 * L * (step @ step)
        if f_new >= f_y + gain - noise_y - problem.objective_noise(x_new):
            return x_new, f_new, L
        L *= 2.0
    run.fail("numerical_error", f"backtracking doubled L {MAX_BACKTRACKS} times without an ascent step "
             f"(L = {L:.3g}): the objective is not smooth at this scale")
    return None
