"""A projected Newton method: Newton–CG on the face found by a gradient projection step."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np
from numba.extending import register_jitable

from .._validation import check_nonnegative_scalar, check_positive_scalar
from ..core.certificate import checked_point, example_certificate, free_certificate, free_row_certificate
from ..core.compiled_objective import example, no_record, trial_gradient, trial_hessian, trial_project, trial_value
from ..core.curvature import hessian_product
from ..core.projection import read_only
from ..core.rank_one import WARM_UPS
from ..core.tangent_cg import newton_direction
from ..core.threads import blas_threads
from .accelerated_gradient import (
    ACCEPTED,
    CHECK_FAILED,
    MAX_BACKTRACKS,
    _backtracking,
    _ended,
    accelerated_gradient,
    backtracking,
)
from .tracking import Run, _positive_int, gap_measure, near_roundoff

#: The projected search computes no point whose first-order loss exceeds this many times the
#: rounding allowed at the current point (:func:`_downhill`).
DOWNHILL_NOISE = 4.0


@dataclass(frozen=True)
class NewtonSearch:
    """The line searches' settings of :func:`projected_newton` (its documented options)."""

    armijo: float
    gradient_armijo: float
    extrapolate: float
    max_halvings: int
    max_doublings: int


def projected_newton(problem, run: Run, *, cg_steps: int = 50, armijo: float = 1e-4, gradient_armijo: float = 0.1,
                     extrapolate: float = 1.1, max_halvings: int = 4, max_doublings: int = 20, shift: float = 1e-8,
                     alpha0=None, fallback: bool = True, stall_window: int | None = None) -> None:
    """Maximize the concave f over A by projected Newton steps with the exact Hessian.

    Each iteration (Moré & Toraldo's gradient-projection-then-subspace scheme, with Bertsekas'
    projected search):

    1. **Face.** A gradient projection step ``x_c = p_A(x + ∇f(x)/L)``, L from the curvature
       along the last step (Barzilai–Borwein; the first from one Hessian–vector product) and
       backtracking to Armijo's sufficient ascent (``gradient_armijo``): it guarantees ascent
       and picks the face (the variables at their bounds stay there for this iteration).
    2. **Newton direction** on the free variables of ``x_c``, in the hyperplane ``aᵀδ = 0``:
       truncated conjugate gradients on ``(-∇²f(x_c) + μI)δ = ∇f(x_c)``, each step one
       Hessian–vector product (:meth:`IndefiniteProblem.hessian`, Daleckii–Krein divided
       differences from the eigendecomposition of ``A = K0 + uuᵀ/(4ρ)`` the oracle already has;
       O(n²)), to a relative residual ``min(½, √(‖r‖/‖r₀‖))`` (superlinear near the optimum),
       inside a trust radius (Steihaug: CG stops where it leaves the sphere). The radius starts
       at the box's diagonal, doubles after a full step that reached it and shrinks to the
       accepted length after a shortened one: far from the optimum, where nearly every variable
       is free, the unconstrained Newton step leaves the box by orders of magnitude. After the
       run's first step, if its search extrapolated (the quartic far from the optimum gained more
       than the model), the radius is twice that direction's length: from the point the
       extrapolation reached, the next direction at the box's diagonal had overshot a hundredfold
       and cost three trial points to cut back (on four-class digit problems a quarter of all
       trial points went to such cuts).
       The whole direction is one compiled call (:func:`indkernel.core.tangent_cg.steihaug`) where
       the Hessian has a compiled form (the rank-one oracle); the same function runs in Python on
       the Hessian operator of any other oracle.
    3. **Projected search** ``x(t) = p_A(x_c + tδ)``: t = 1; doubled while f keeps growing if the
       full step gained more than the quadratic model predicted (the quartic ``-‖u‖⁴/(16ρ)`` far
       from the optimum), or shortened until Armijo's condition holds (up to the rounding of the
       comparison, :meth:`IndefiniteProblem.objective_noise`): each time to the longest step that
       passes the test on the quadratic through ``f(x_c)``, the slope ``gᵀδ`` and the value that
       failed, kept within ``[t/10, t/2]`` (halving where that quadratic is mild; a Newton step
       far too long, as the second one from the start can be, is cut short in a few tries where
       halving gave up); if no t passes, the iterate is ``x_c``. A point where the projection
       bends the path downhill at first order (beyond rounding) cannot pass and costs no oracle
       call.

    Every iterate is certified, by default with the free bound only (:class:`indkernel.solvers.registry.Method`), and the result with the tight one.
    With the rank-one oracle on a bounded set, the free bound and no time limit, whole batches of
    iterations, each certified, run as one compiled call (:func:`_iterate`): no Python per iteration
    but the run's record of each certified point.
    The Hessian of the negative eigen-directions of A (where K* is singular) comes from their
    coupling with the positive ones through u, so Newton's system is well posed where the
    frozen-kernel system is not; a tiny shift μ guards the rest.

    Parameters
    ----------
    cg_steps : int, default 50
        Conjugate-gradient steps (Hessian–vector products) per Newton direction at most.
    armijo : float, default 1e-4
        Sufficient ascent (Armijo) of the projected search along the Newton step.
    gradient_armijo : float, default 0.1
        Sufficient ascent of the gradient projection step, instead of the accelerated method's
        majorization (about ½ where nothing is projected): it keeps the longer Barzilai–Borwein
        steps the majorization would halve.
    extrapolate : float, default 1.1
        A full Newton step that gains more than this multiple of the quadratic model's prediction
        is doubled while f keeps growing (at most ``max_doublings`` times).
    max_halvings, max_doublings : int, default 4 and 20
        Shortenings of the Newton step (each to between a tenth and a half of the last try) before
        the search gives up and keeps the gradient projection point (a step that must shrink more
        is not worth its oracle calls), and doublings at most.
    shift : float, default 1e-8
        The shift μ of ``(-∇²f + μI)δ = ∇f`` as a fraction of the local curvature (along the last
        step, the gradient projection step's L): it keeps conjugate gradients defined where the
        Hessian is singular and changes no useful step. (A fraction of the curvature over the whole
        box, as before, was 1e3 times the Hessian near the optimum of a badly scaled problem: the
        Newton steps became gradient steps of 1e-8, 695 iterations where 10 do.)
    alpha0 : array, optional
        Starting point (projected onto A); default ``problem.initial_point()``.
    fallback : bool, default True
        What the stall rule (``stall_window``) does: go on with the accelerated projected gradient
        from the best point; False: end the run there (status ``"stalled"``), for a caller with
        another route (the Mod SVM baseline's QP).
    stall_window : int, optional
        The iterations without halving the certified gap that count as a stall (20 was the
        default); None (default): no stall rule, Newton runs to its tolerance, round-off,
        ``max_iter`` or ``time_limit``. The free bound's gap can stay put for tens of iterations
        while Newton is still settling the face (per-point weights over six orders of magnitude);
        on ``figures/newton_stress.py`` most runs the hand-over to apg took ended at their
        iteration or time cap, where Newton alone ends them "optimal" or "roundoff".
    """
    cg_steps = _positive_int(cg_steps, "cg_steps")
    search = NewtonSearch(
        armijo=_fraction(armijo, "armijo"), gradient_armijo=_fraction(gradient_armijo, "gradient_armijo"),
        extrapolate=check_positive_scalar(extrapolate, "extrapolate", "the gain ratio above which a step is extended"),
        max_halvings=_positive_int(max_halvings, "max_halvings"),
        max_doublings=_positive_int(max_doublings, "max_doublings"))
    shift = check_nonnegative_scalar(shift, "shift", "the Hessian shift as a fraction of the curvature")
    if stall_window is not None:
        stall_window = _positive_int(stall_window, "stall_window")
    x = problem.initial_point() if alpha0 is None else problem.project(alpha0)
    prepare = getattr(problem.oracle, "prepare", None)
    if prepare is not None:
        prepare()  # the eigendecomposition of K0, on every BLAS thread
    # then BLAS on one thread: the products run on numba's threads, which BLAS threads left
    # spinning after a call slow down (``python figures/certified_speed.py --threads`` measures the rule)
    with blas_threads(1):
        _iterate(problem, run, x, cg_steps, search, shift, fallback, stall_window)


def _fraction(value, name: str) -> float:
    value = check_positive_scalar(value, name, "a sufficient-ascent fraction")
    if value >= 1:
        raise ValueError(f"{name} must be in (0, 1) (the fraction of the predicted ascent a step must gain); got {value!r}")
    return value



def _iterate(problem, run: Run, x: np.ndarray, cg_steps: int, search: NewtonSearch, shift: float,
             fallback: bool = True, stall_window: int | None = None) -> None:
    """The loop of :func:`projected_newton` from the feasible start x, certified first
    (``stall_window``: the optional stall rule). Each iteration is one call of :func:`_iteration`.
    Where the problem has a compiled objective and certificate and the run checks with the free
    bound and has no time limit (compiled code reads no clock to stop), the start is certified
    and its first step's curvature measured in one compiled call (:func:`_compiled_start`) and the
    iterations run compiled in batches
    (:func:`_compiled_run`: each certified there, the batch ending where the run's gap is within
    tol or near round-off), the run recording each certified point as it would its own
    (:meth:`Run.observe_certified <indkernel.solvers.tracking.Run.observe_certified>`) and the problem
    keeping the last point's oracle (:meth:`IndefiniteProblem.adopt
    <indkernel.core.problem.IndefiniteProblem.adopt>`); otherwise, and for an iteration that compiled
    code could not take (a rank-one check failed: the oracle then falls back to ``eigh``), Python
    runs :func:`_iteration` on the problem's methods."""
    feasible = problem.feasible
    data = getattr(problem, "compiled_certificate", None)  # (the Mod SVM's dual has none)
    compiled = problem.compiled_objective if data is not None and run.time_limit is None and run.bound == "free" \
        else None
    curvature = problem.curvature_estimate()
    settings = (cg_steps, float(shift), search.gradient_armijo, search.armijo, search.extrapolate, search.max_halvings,
                search.max_doublings, curvature * 1e-12, float(feasible.diameter),
                read_only(feasible.a), read_only(feasible.lo), read_only(feasible.hi))
    radius = feasible.diameter  # the trust radius of the Newton step: the diagonal of the box holding the optimum
    start = None if compiled is None else _compiled_start(compiled, data, problem.oracle.draw_probe(problem.n), x,
                                                          curvature, settings[7])
    if start is not None and start[0]:
        _, row, f_x, noise, g, L = start
        if run.observe_certified(x, free_row_certificate(row), time.perf_counter()):
            return
    else:  # by Python (also where the rank-one check failed at x: the oracle falls back to eigh there)
        if run.observe(x):
            return
        f_x, noise, g = problem.objective_at(x), problem.objective_noise(x), problem.gradient_at(x)
        L = max(_curvature_along_gradient(problem, x), settings[7])
    state = (x, f_x, noise, g, L, x, g, radius, 0.0)
    gaps = [run.upper - run.lower]
    pending: list = []  # the compiled batch's certified points not yet recorded
    batch = FIRST_BATCH
    for _ in run.iterations():
        if not pending:
            if not run.finite(np.append(state[3], state[1]), "the objective or gradient"):
                return
            if compiled is not None:
                steps = batch if run.max_iter is None else min(batch, run.max_iter - run.iteration)
                probes = problem.oracle.draw_probe(problem.n, steps)
                state_after, record, points, rows, clock = _compiled_run(compiled, data, probes, state, settings,
                                                                         run.goal())
                if len(rows):
                    problem.adopt(points[-1], record)
                    state, pending = state_after, list(zip(points, rows, clock, strict=True))
                batch = min(2 * batch, LARGEST_BATCH)
        if pending:
            point, row, clock = pending.pop(0)
            if run.observe_certified(point, free_row_certificate(row), float(clock)):
                return
        else:
            found, status, _ = _iteration(problem, None, run, state, settings)
            if status != ACCEPTED:
                _ended(run, status, found[0], found[1], found[4])
                return
            state = found
            if run.observe(state[0]):
                return
        gaps.append(run.upper - run.lower)
        if stall_window is not None and len(gaps) > stall_window and not gaps[-1] <= 0.5 * gaps[-1 - stall_window]:
            if not fallback:
                run.fail("stalled", f"the certified gap did not halve in {stall_window} iterations")
                return
            run.details["fallback"] = f"apg from iteration {run.iteration + 1}: the gap did not halve in {stall_window}"
            if run.bound == "free":
                run.bound = "refined"  # apg's own checks
            accelerated_gradient(problem, run, alpha0=run.alpha)
            return


#: The iterations of the first compiled batch (:func:`_compiled_run`), doubled for each next one up to the largest.
FIRST_BATCH, LARGEST_BATCH = 8, 64


@numba.njit(cache=True, error_model="numpy")
def _compiled_start(objective, data, probe, x, curvature, curvature_floor):
    """The start of a compiled run at the feasible x, in one call: ``(ok, the free certificate's row,
    f(x), its rounding, ∇f(x), the first step's L)``, L as :func:`_curvature_along_gradient` measures
    it (one Hessian–vector product; ``curvature`` where the gradient has no part within the
    hyperplane) and at least ``curvature_floor``. ``ok`` is False where the rank-one check
    failed (Python then starts the run)."""
    value, noise, ok, record, g, row = checked_point(objective, data, probe, x)
    if not ok:
        return False, row, value, noise, g, np.nan
    a = objective[9]
    tangent = g - a * (np.dot(a, g) / np.dot(a, a))
    gg = np.dot(tangent, tangent)
    if gg > 0:
        curvature = -np.dot(tangent, hessian_product(trial_hessian(objective, x, record), tangent)) / gg
    return True, row, value, noise, g, max(curvature, curvature_floor)


@numba.njit(cache=True, error_model="numpy")
def _compiled_run(objective, data, probes, state, settings, goal):
    """Up to ``len(probes)`` iterations of :func:`_iteration` on a compiled objective, each point
    certified by the free bound (:func:`indkernel.core.certificate.free_certificate` on ``data``):
    ``(state, record of the last point, points, certificates, clock)``, one row per iteration (lower,
    upper, allowance, scale, intercept) and its ``time.perf_counter()``. The batch ends where the
    run's bracket (``goal``, :meth:`Run.goal <indkernel.solvers.tracking.Run.goal>`, updated as the run
    would) is within tol or as close as round-off lets it be (the run's own rules decide there,
    :func:`~indkernel.solvers.tracking.near_roundoff`), at a non-finite value, or before an iteration that compiled code cannot take
    (Python then runs it)."""
    tol, absolute, lower, upper, scale, lower_allowance, upper_allowance = goal
    steps = probes.shape[0]
    points, rows, clock = np.empty((steps, state[0].size)), np.empty((steps, 5)), np.empty(steps)
    record = no_record()
    k = 0
    while k < steps and np.isfinite(state[1]) and np.all(np.isfinite(state[3])):
        found, status, found_record = _iteration(objective, probes[k], None, state, settings)
        if status != ACCEPTED:
            break
        state, record = found, found_record
        certificate = free_certificate(objective, data, state[0], state[3], record)
        with numba.objmode(now="float64"):
            now = time.perf_counter()
        points[k], clock[k] = state[0], now
        for i in range(5):
            rows[k, i] = certificate[i]
        k += 1
        if certificate[0] > lower:
            lower, scale, lower_allowance = certificate[0], certificate[3], certificate[2]
        if certificate[1] <= upper:
            upper, upper_allowance = certificate[1], certificate[2]
        allowance = max(lower_allowance, upper_allowance)
        if gap_measure(upper - lower, scale, allowance, absolute) <= tol \
                or near_roundoff(upper - lower, allowance, tol if absolute else tol * scale):
            break
    return state, record, points[:k], rows[:k], clock[:k]


@register_jitable(error_model="numpy")
def _iteration(problem, probe, run, state, settings):
    """One iteration of :func:`projected_newton` from ``state = (x, f(x), its rounding, ∇f(x), the
    last L, the previous iterate and its gradient, the trust radius, the first direction's residual
    (0 before it))``: ``(state after, status, record)``, status as
    :func:`indkernel.solvers.accelerated_gradient.backtracking`'s (``CHECK_FAILED``: a rank-one check
    failed, run it again by Python; on another failure the state holds the failed try's point,
    value and L) and the record of the new point for :meth:`IndefiniteProblem.adopt
    <indkernel.core.problem.IndefiniteProblem.adopt>`. ``problem``, ``probe`` and ``run`` as
    :func:`indkernel.core.compiled_objective.trial_value` and :func:`~indkernel.core.compiled_objective.stop_for_time`
    take them; ``settings``: the options, L's floor, the box's diameter and the set's a, lo, hi."""
    cg_steps, shift, gradient_armijo, armijo, extrapolate, max_halvings, max_doublings, L_floor, diameter, a, lo, hi \
        = settings
    x, f_x, noise_x, g, L, previous_x, previous_g, radius, first_residual = state
    s = x - previous_x
    ss = np.dot(s, s)
    if ss > 0:  # 1/L from the curvature along the last step (Barzilai–Borwein)
        L = max(-np.dot(s, g - previous_g) / ss, L_floor)
    # 1. the gradient projection step, L by backtracking
    x_c, f_c, L, status, record, noise_c = backtracking(problem, probe, run, x, f_x, g, noise_x, L, gradient_armijo,
                                                        True, MAX_BACKTRACKS)
    if status != ACCEPTED:
        return (x_c, f_c, noise_c, g, L, x, g, radius, first_residual), status, record
    # 2. the Newton direction on the face of x_c
    g_c = trial_gradient(problem, x_c, record)
    direction, residual = newton_direction(trial_hessian(problem, x_c, record), g_c,
                                           np.flatnonzero((x_c > lo) & (x_c < hi)), a, shift * L, radius, cg_steps,
                                           first_residual)
    first = first_residual == 0.0  # the run's first Newton direction
    if first:
        first_residual = residual
    # 3. the projected search along p_A(x_c + tδ)
    t = 0.0
    if np.any(direction != 0.0):
        point, value, t, ok, found, noise = _search(problem, probe, x_c, f_c, g_c, direction, noise_c, armijo,
                                                    extrapolate, max_halvings, max_doublings)
        if not ok:
            return (x_c, f_c, noise_c, g_c, L, x, g, radius, first_residual), CHECK_FAILED, record
        if t > 0:
            x_c, f_c, noise_c, record = point, value, noise, found
            g_c = trial_gradient(problem, x_c, record)
    length = np.sqrt(np.dot(direction, direction))
    if first and t > 1.0:  # the first step had to be extrapolated: the next is held to twice its direction
        radius = 2 * length
    else:
        radius = max(radius, 2 * t * length) if t >= 1.0 else max(t, 1 / 16) * length
    if radius == 0.0:  # no direction (no free variable): start the next one from the box again
        radius = diameter
    return (x_c, f_c, noise_c, g_c, L, x, g, radius, first_residual), ACCEPTED, record


@register_jitable(error_model="numpy")
def _search(problem, probe, x, f_x, g, direction, noise_x, armijo, extrapolate, max_halvings, max_doublings):
    """``(x(t), f(x(t)), t, ok, record, noise)`` of the projected search ``x(t) = p_A(x + tδ)`` from x
    (the rounding of f(x) ``noise_x``; of f(x(t)) ``noise``); t = 0 if no step passes Armijo's test;
    ``ok`` False where a trial point's oracle check failed (compiled code; the iteration is then run
    again by Python). ``problem`` and ``probe`` as
    :func:`indkernel.core.compiled_objective.trial_value` takes them."""
    t = 1.0
    point, value, accepted, ok, record, noise = _trial(problem, probe, x, f_x, g, direction, t, noise_x, armijo)
    if not ok:
        return x, f_x, 0.0, False, record, noise_x
    if accepted:
        # the quadratic model predicts the gain ½gᵀδ (CG's iterates satisfy δᵀBδ = gᵀδ); a gain
        # beyond ``extrapolate`` times that says the curvature falls along δ (the quartic far from
        # the optimum): extrapolate while f keeps growing, else the step is Newton's
        if value - f_x < extrapolate * 0.5 * np.dot(g, direction):
            return point, value, t, True, record, noise
        for _ in range(max_doublings):
            farther, farther_value, farther_accepted, ok, farther_record, farther_noise = _trial(
                problem, probe, x, f_x, g, direction, 2 * t, noise_x, armijo)
            if not ok:
                return x, f_x, 0.0, False, record, noise_x
            if not (farther_accepted and farther_value > value):
                return point, value, t, True, record, noise
            point, value, t, record, noise = farther, farther_value, 2 * t, farther_record, farther_noise
        return point, value, t, True, record, noise
    slope = np.dot(g, direction)
    for _ in range(max_halvings):
        t = _backtrack(t, slope, f_x, value, armijo)
        point, value, accepted, ok, record, noise = _trial(problem, probe, x, f_x, g, direction, t, noise_x, armijo)
        if not ok:
            return x, f_x, 0.0, False, record, noise_x
        if accepted:
            return point, value, t, True, record, noise
    return x, f_x, 0.0, True, record, noise_x


@register_jitable(error_model="numpy")
def _trial(problem, probe, x, f_x, g, direction, t, noise_x, armijo):
    """``(p, f(p), accepted, ok, record, noise)`` at ``p = p_A(x + tδ)``: Armijo's test up to the rounding
    of both values (f(p)'s: ``noise``); a point the projection bends downhill (:func:`_downhill`) is
    failed without its oracle call (f = -inf, an empty record)."""
    point = trial_project(problem, x + t * direction)
    slope = np.dot(g, point - x)
    if _downhill(slope, noise_x, armijo):
        return point, -np.inf, False, True, no_record(), 0.0
    value, noise, ok, record = trial_value(problem, probe, point)
    return point, value, value >= f_x + armijo * slope - noise_x - noise, ok, record, noise


@register_jitable
def _backtrack(t: float, slope: float, f_x: float, value: float, armijo: float) -> float:
    """The next step after t failed: the longest step that passes Armijo's test on the quadratic
    through ``f(x)``, the slope ``gᵀδ`` at 0 and the value at t, kept within ``[t/10, t/2]`` (t/2
    where the value is unknown). Where that quadratic's maximizer is at least t/4 this is the
    halving; a step far too long is cut by up to ten at each try."""
    drop = f_x + slope * t - value  # b·t² of the model f_x + slope·s - b·s²
    if not (np.isfinite(value) and drop > 0 and slope > 0):
        return t / 2
    longest = (1 - armijo) * slope * t * t / drop  # m(s) >= f_x + armijo·slope·s up to here
    return min(max(longest, t / 10), t / 2)


@register_jitable
def _downhill(slope: float, noise: float, armijo: float) -> bool:
    """Whether a point that the projected path reaches at first-order change ``slope = gᵀ(p - x)``
    is taken as failed without its oracle call: f is concave, so ``f(p) <= f(x) + slope``, and
    Armijo's test needs ``f(p) >= f(x) + μ·slope`` less the rounding of f at both points
    (``noise`` at x, about as much at p). Where the projection bends the path downhill by more
    than a few times that, no value of f at p can pass; within it (the last iterations at
    C = 1e6 end on such steps) the point is computed."""
    return (1.0 - armijo) * slope < -DOWNHILL_NOISE * noise


def _compile_searches() -> None:
    """Compile the iteration and the gradient step on a compiled objective (within
    :func:`indkernel.core.rank_one.compile_oracle`)."""
    problem, x, g = example(), np.array([0.25, 0.25]), np.array([1.0, 1.0])
    a, lo, hi = problem[9], problem[11], problem[12]
    settings = (2, 1e-8, 0.1, 1e-4, 1.1, 4, 20, 1e-12, 1.0, a, lo, hi)
    _compiled_run(problem, example_certificate(), np.ones((2, 2)), (x, 0.0, 1e-15, g, 1.0, x, g, 1.0, 0.0), settings,
                  (1e-6, False, -np.inf, np.inf, 0.0, 0.0, 0.0))
    _compiled_start(problem, example_certificate(), np.ones(2), x, 1.0, 1e-12)
    _backtracking(problem, np.ones(2), None, x, 0.0, g, 1e-15, 1.0, 0.1, True, 2)


WARM_UPS.append(_compile_searches)


def _curvature_along_gradient(problem, x) -> float:
    """``-ĝᵀ∇²f(x)ĝ / ĝᵀĝ`` for the gradient ĝ within the hyperplane: the first step's 1/L (one
    Hessian–vector product; backtracking corrects it)."""
    a = problem.feasible.a
    g = problem.gradient_at(x)
    g = g - a * (float(a @ g) / float(a @ a))
    gg = float(g @ g)
    return -float(g @ (problem.hessian_at(x) @ g)) / gg if gg > 0 else problem.curvature_estimate()
