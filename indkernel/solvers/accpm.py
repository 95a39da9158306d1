"""The analytic center cutting plane method (``alg:accpm``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from .tracking import Run, _positive_int

CENTERS = ("cg", "newton", "cvxpy")


class CenteringError(RuntimeError):
    """The analytic center could not be computed (the localization set lost its interior)."""


def box_center(a, b, lo, hi, iterations: int = 200) -> np.ndarray:
    """The analytic center of ``{aᵀx = b, lo <= x <= hi}``, where ACCPM starts.

    Stationarity gives each coordinate in closed form from the multiplier ν of the equality:
    ``x_i = lo_i + w_i θ(ν a_i w_i)`` with ``w = hi - lo`` and ``θ(c) = 2/(2 + c + √(4 + c²))``
    (the root in (0, 1) of ``cθ² - (2 + c)θ + 1 = 0``); ``aᵀx(ν)`` decreases in ν, so ν is found
    by bisection.
    """
    w = hi - lo

    def x_of(nu):
        c = nu * a * w
        return lo + w * 2.0 / (2.0 + c + np.sqrt(4.0 + c * c))

    low, high = -1.0, 1.0
    for _ in range(2100):  # 2^2100 overflows: a set without interior never brackets ν
        if a @ x_of(low) >= b and a @ x_of(high) <= b:
            break
        low, high = 2.0 * low if a @ x_of(low) < b else low, 2.0 * high if a @ x_of(high) > b else high
    else:
        raise CenteringError("the set {aᵀx = b, lo <= x <= hi} has no interior (the equality meets only its boundary)")
    for _ in range(iterations):
        middle = 0.5 * (low + high)
        if a @ x_of(middle) > b:
            low = middle
        else:
            high = middle
    return x_of(0.5 * (low + high))


#: The centering as the authors' code does it: at most 30 Newton steps, each by Jacobi-preconditioned
#: conjugate gradients to a relative residual of 0.1 in at most ⌈0.1n⌉ products (and at least
#: ``CG_LEAST``: with one or two at n < 20 the centers drift onto the cuts), stopped once half
#: the squared Newton decrement is at most ``LOOSE_CENTERING_TOL``: measured with ``python
#: figures/accpm_variants.py`` and values from 0.01 (the authors') to 1, about 0.3 took the fewest
#: centers to a certified 1e-2 on every problem, and tighter centers only near the optimum took more.
#: Where the localization set is thin (near an optimum on a face of the box) a loose center can
#: land next to a cut: a center whose smallest slack is below ``THIN`` times its largest is
#: centered on exactly (``EXACT``: Newton steps through the Hessian's Cholesky factor). (The
#: tolerance, ``CG_LEAST`` and ``THIN`` were measured before the CG step kept to the hyperplane.)
CENTERING_STEPS, LOOSE_CENTERING_TOL, THIN = 30, 0.3, 1e-9
EXACT: dict[str, Any] = dict(tol=1e-9, max_steps=200)
CG_RESIDUAL, CG_FRACTION, CG_LEAST = 0.1, 0.1, 10
#: Loose centers give way to exact ones where over this many checks, or n centers if that is more,
#: the lower bound stopped rising (by less than the gap the run accepts) and the certified gap
#: did not halve: on random problems of n = 20 and 30 the loose centers' upper bound stalled near
#: a relative 1e-5. (A cutting plane method gains its digits over rounds of about n centers: over
#: a fixed 200 centers at n = 500 the gap of an absolute 1e-2 looked stalled where it was not.)
STALL_CHECKS = 20
#: The centers a check averages, as a fraction of n (at least ``check_every``): see ``average``.
AVERAGE_FRACTION = 0.2


def _hessian(G, weights, diagonal) -> np.ndarray:
    """``Gᵀ diag(weights) G + diag(diagonal)``: the barrier's Hessian from its cut and box parts."""
    hessian = (G.T * weights) @ G
    hessian[np.diag_indices_from(hessian)] += diagonal
    return hessian


def _newton_center(x, a, lo, hi, G, h, *, tol=LOOSE_CENTERING_TOL, max_steps=CENTERING_STEPS, cg_steps=None,
                   proximal=0.0, anchor=None, stop=None) -> np.ndarray:
    """Newton's method for ``min φ(x) = -Σ log(hi - x) - Σ log(x - lo) - Σ log(h - Gx) + (μ/2)‖x - x̂‖²``
    s.t. ``aᵀx = b`` (a of unit norm; μ = ``proximal``, x̂ = ``anchor``; μ = 0: the analytic
    center), from a strictly feasible x with ``aᵀx = b``, stopped once ``λ²/2 <= tol`` (λ the
    Newton decrement) or after ``max_steps``. The step minimizes φ's quadratic model on ``aᵀΔ = 0``:
    exactly through the Hessian's Cholesky factor (``cg_steps=None``) or, as the authors' code,
    by at most ``cg_steps`` preconditioned conjugate gradients (:func:`_cg_step`, O(mn) each);
    a backtracking search keeps x strictly inside and φ decreasing. ``stop()`` (the run's time
    limit) is asked before every step after the first: a run ends between Newton steps."""
    for step_count in range(max_steps):
        if step_count and stop is not None and stop():
            return x
        up, down, cut = hi - x, x - lo, h - G @ x
        gradient = 1 / up - 1 / down + G.T @ (1 / cut)
        diagonal, weights = 1 / up ** 2 + 1 / down ** 2, 1 / cut ** 2
        if proximal and anchor is not None:  # no anchor before the first certified point
            gradient += proximal * (x - anchor)
            diagonal += proximal
        if cg_steps is None:
            factor = scipy.linalg.cho_factor(_hessian(G, weights, diagonal))
            solved_a, solved_g = scipy.linalg.cho_solve(factor, a), scipy.linalg.cho_solve(factor, gradient)
            step = -(solved_g - solved_a * (a @ solved_g) / (a @ solved_a))
        else:
            step = _cg_step(gradient, diagonal, G, weights, a, cg_steps)
        decrement = max(-float(gradient @ step), 0.0)  # λ²
        if decrement <= 2 * tol:
            return x
        x = _search(x, step, decrement, (up, down, cut), G, lambda y: _barrier(y, lo, hi, G, h, proximal, anchor))
    return x


def _cg_step(gradient, diagonal, G, weights, a, steps):
    """Projected preconditioned CG for ``min ½ΔᵀHΔ + gᵀΔ`` s.t. ``aᵀΔ = 0`` (``H = diag +
    Gᵀ diag(weights) G``, a of unit norm), with the Jacobi preconditioner M projected in M's metric
    so that every iterate keeps ``aᵀΔ = 0``; stopped at a relative residual of ``CG_RESIDUAL`` or
    after ``steps`` products. Every iterate is a descent direction."""
    inverse = 1 / (diagonal + (G * G).T @ weights)
    inverse_a = inverse * a
    inverse_aa = float(a @ inverse_a)

    def precondition(r):
        """The residual less its part along a (the constraint's multiplier, which the projected
        preconditioner ignores) and its preconditioned projection: resetting the residual keeps it
        small, so the projection does not cancel a large multiple of a (Gould, Hribar & Nocedal 2001)."""
        r = r - a * (inverse_a @ r) / inverse_aa
        return r, inverse * r

    step = np.zeros_like(gradient)
    residual, z = precondition(gradient)
    direction, rz = -z, float(residual @ z)
    target = CG_RESIDUAL ** 2 * rz
    for _ in range(steps):
        product = diagonal * direction + G.T @ (weights * (G @ direction))
        curvature = float(direction @ product)
        if not curvature > 0:
            break
        length = rz / curvature
        step = step + length * direction
        residual, z = precondition(residual + length * product)
        rz, previous = float(residual @ z), rz
        if rz <= target:
            break
        direction = -z + (rz / previous) * direction
    return step - a * (a @ step)  # aᵀΔ = 0 also to round-off, which the products would accumulate


def _search(x, step, decrement, slacks, G, barrier):
    """x + tΔ with the damped Newton length ``t = 1/(1 + λ)`` (1 once λ < 1/4), at most 0.99 of
    the way to the boundary, halved until the barrier decreases by at least ``t·λ²/4``."""
    up, down, cut = slacks
    rates = np.concatenate([-step, step, -(G @ step)])
    shrinking = rates < 0
    reach = float(np.min(-np.concatenate(slacks)[shrinking] / rates[shrinking], initial=np.inf))
    t = min(1.0 if decrement < 0.0625 else 1.0 / (1.0 + np.sqrt(decrement)), 0.99 * reach)
    value = barrier(x)
    for _ in range(60):
        candidate = x + t * step
        if barrier(candidate) <= value - 0.25 * t * decrement:
            return candidate
        t *= 0.5
    return x


def _stalled(checks: list[tuple[float, float]], room: float, horizon: int) -> bool:
    """True if over the last ``horizon`` checks (lower bound, gap) the lower bound rose by less
    than ``room`` (the gap the run accepts) and the gap did not halve."""
    if len(checks) <= horizon:
        return False
    (lower_then, gap_then), (lower, gap) = checks[-1 - horizon], checks[-1]
    return lower - lower_then < room and not gap <= 0.5 * gap_then


def _thin(x, lo, hi, G, h) -> bool:
    """True if x's smallest slack is below ``THIN`` times its largest (a loose center next to a cut)."""
    slacks = np.concatenate([hi - x, x - lo, h - G @ x])
    return bool(slacks.min() < THIN * slacks.max())


def _barrier(x, lo, hi, G, h, proximal, anchor) -> float:
    """φ at x (+inf outside the set)."""
    slacks = np.concatenate([hi - x, x - lo, h - G @ x])
    if not slacks.min() > 0:
        return np.inf
    value = -float(np.sum(np.log(slacks)))
    if proximal and anchor is not None:
        value += 0.5 * proximal * float((x - anchor) @ (x - anchor))
    return value


def _cvxpy_center(x, a, b, lo, hi, G, h):
    """The reference: the ``formulations`` analytic-center model, shifted so the equality is aᵀx = 0."""
    import formulations

    n = x.size
    G_all, h_all = np.vstack([np.eye(n), -np.eye(n), G]), np.concatenate([hi, -lo, h])
    shift = a * b / (a @ a)  # aᵀ shift = b
    model = formulations.analytic_center(G_all, h_all - G_all @ shift, a)
    model.solve(solver=formulations.DEFAULT_SOLVER, **formulations.ACCURATE[formulations.DEFAULT_SOLVER])
    center = model.variables["x"].value + shift
    if not _barrier(center, lo, hi, G, h, 0.0, None) < np.inf:
        raise CenteringError("the cvxpy analytic center is not strictly inside the localization set")
    return center


#: A full set of cuts is pruned to make room for up to ``check_every`` new ones, at most this
#: fraction (its inverse) of the cuts: the relevance costs a Cholesky factor of the n×n barrier
#: Hessian, which pruned one cut per center made the dearest step of every center once the cuts
#: were full.
PRUNE_EVERY_FRACTION = 20

#: Added to the unit diagonal of the scaled barrier Hessian before the relevance's Cholesky factor.
RELEVANCE_RIDGE = 1e-12

#: The paper's ACCPM (``alg:accpm``, the authors' code): neutral cuts through each analytic
#: center and the cut limit by relevance only; ``solve(problem, "accpm", **PAPER)``.
PAPER: dict[str, Any] = dict(deep_cuts=False, proximal=0.0, drop_redundant=False)


def accpm(problem, run: Run, *, center: str = "cg", check_every: int = 10, max_constraints: int | None = None,
          deep_cuts: bool = True, proximal: float = 1.0, drop_redundant: bool = False,
          average: int | None = None) -> None:
    """Analytic center cutting plane method (``alg:accpm``).

    The localization set starts as ``A = {aᵀx = b, lo <= x <= hi}`` (2n inequalities and the
    equality, which the Newton step keeps exactly rather than by a barrier). At each center
    ``x_k`` a cut keeps the half where f can still exceed the best value found: the neutral cut
    ``∇f(x_k)ᵀ(x - x_k) >= 0`` of the paper, or with ``deep_cuts`` the objective cut
    ``∇f(x_k)ᵀ(x - x_k) >= f_best - f(x_k)`` (valid because f is concave: ``f(x) <= f(x_k) +
    ∇f(x_k)ᵀ(x - x_k)``; ``f_best`` the certified lower bound, so round-off cannot make it too
    deep), its depth capped so that the ray along the gradient still enters the new set.

    As in the authors' code, every center raises the lower bound (f there, with the free upper
    bound beside it); every ``check_every``-th center the mean of the last ``average`` centers,
    projected onto A, is certified with the run's bound (:meth:`Run.check`), and the cuts are
    pruned. (The authors' code certifies the last center; earlier releases, the best one.) The
    centers circle the optimum, so their mean is mostly nearer to it than the best of them, and
    the upper bound ``U*(α)`` shrinks with the distance to α*, not with its square as f does: on
    USPS 3 vs 5 at n = 500 (the authors' problems) the mean's certificate reaches the paper's
    absolute 1e-2 in fewer centers than the authors' code, where the best center's stalled above
    it (``figures/accpm_variants.py``, variants "… best center"). Cuts are pruned: with
    ``drop_redundant`` those that the m-ellipsoid around the center proves redundant (the set lies
    in ``{y : ‖y - x‖_H <= m}``, H the barrier's Hessian and m the number of inequalities, so a
    cut with ``m·√(gᵀH⁻¹g) <= h - gᵀx`` never binds; exact at an analytic center), then, above
    ``max_constraints`` inequalities, those of least relevance ``gⱼᵀH⁻¹gⱼ / (hⱼ - gⱼᵀx)²``. With
    ``proximal = μ > 0`` the center is the proximal analytic center, the minimizer of the barrier
    plus ``(μ/2)‖x - x̂‖²`` with x̂ the best point so far (proximal ACCPM), where the ellipsoid rule
    does not hold (the two are refused together).

    The paper's step 3 limits the *constraints* to 3n; the authors' code counts only the cuts
    against it (3n cuts, so 5n inequalities with the box). Here every inequality counts, box
    included. With a limit of 3n (n cuts) the method stalls: measured, the certified gap stayed at
    1.2e-2 on a digits problem with n = 20 and at 4.7e-4 on a random one with n = 15 through 1500
    iterations, while 4n converged and 5n converged faster. The default is therefore 5n
    inequalities, the reference code's effective total: at most 3n cuts.

    The method runs in the box's own coordinates ``t = (x - lo)/(hi - lo) ∈ [0, 1]ⁿ``, with the
    equality and every cut scaled to unit norm: the centers are the same points as in x (an
    analytic center does not depend on how its constraints are scaled), but the arithmetic no
    longer depends on the scale of C, so a box of 1e60 centers as well as a box of 1.

    Parameters
    ----------
    center : "cg" (default), "newton" or "cvxpy"
        How each center is computed: as the authors' code, loosely (at most
        :data:`CENTERING_STEPS` Newton steps, each by preconditioned conjugate gradients, stopped
        at ``λ²/2 <= LOOSE_CENTERING_TOL``), which reaches the paper's accuracy (an absolute 1e-2)
        in fewer centers than the authors' code; where the loose centers stall (the lower bound
        stops rising and the gap stops shrinking over :data:`STALL_CHECKS` checks or n centers: small problems
        whose optimum lies on a face of the box, near a relative 1e-5) the rest are exact; by exact
        Newton steps to ``λ² <= 1e-9`` (``EXACT``: robust, but 2-3x the centers and each dearer);
        or by the ``formulations`` model (the reference; analytic centers only, ``proximal = 0``).
    check_every : int, default 10
        Certify every this many centers with the run's bound.
    max_constraints : int, optional, default 5n
        Inequalities kept, the 2n box constraints included.
    deep_cuts : bool, default True
        Objective cuts at ``f_best`` instead of the paper's neutral cuts.
    proximal : float, default 1
        The weight μ of the proximal term, in the box's coordinates (0: the analytic center).
    drop_redundant : bool, default False
        Drop the cuts that the m-ellipsoid proves redundant (analytic centers only: with ``proximal=0``).
    average : int, optional, default ⌈n/5⌉ (at least ``check_every``)
        The centers whose mean each check certifies; 0 certifies the best center instead.

    The defaults are the variant that reached a certified gap fastest in
    ``python figures/accpm_variants.py``. ``**PAPER`` selects the paper's method.
    """
    if center not in CENTERS:
        raise ValueError(f"center must be one of {CENTERS}; got {center!r}")
    check_every = _positive_int(check_every, "check_every")
    if average is not None and average != 0:
        average = _positive_int(average, "average")
    proximal = float(proximal)
    if not (np.isfinite(proximal) and proximal >= 0):
        raise ValueError(f"proximal must be a finite weight >= 0 (0: the analytic center); got {proximal!r}")
    if proximal and (center == "cvxpy" or drop_redundant):
        raise ValueError(f"{'center=cvxpy' if center == 'cvxpy' else 'drop_redundant=True'} needs analytic "
                         "centers; pass proximal=0 with it")
    feasible = problem.feasible
    a, b, origin, top = feasible.a, feasible.b, feasible.lo, feasible.hi
    n, width = problem.dim, top - origin
    a, b = a * width, b - a @ origin  # aᵀx = b in t = (x - origin)/width
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(a)
    lo, hi = np.zeros(n), np.ones(n)
    max_cuts = (5 * n if max_constraints is None else max_constraints) - 2 * n
    if max_cuts < 1:
        raise ValueError(f"max_constraints must exceed the 2n = {2 * n} box constraints; got {max_constraints}")
    batch = max(1, min(check_every, max_cuts // PRUNE_EVERY_FRACTION))  # new cuts between two prunings
    newton: dict[str, Any] = (dict(cg_steps=max(int(np.ceil(CG_FRACTION * n)), CG_LEAST), tol=LOOSE_CENTERING_TOL)
                              if center == "cg" else EXACT)
    G, h, checks, checked = np.empty((0, n)), np.empty(0), [], np.empty(0)
    window = max(int(np.ceil(AVERAGE_FRACTION * n)), check_every) if average is None else average
    recent = np.empty((window, n))  # the last centers, a ring
    horizon = max(STALL_CHECKS, int(np.ceil(n / check_every)))
    if run.observe(problem.initial_point()):  # the start every method shares, iteration 0; the centers follow
        return
    try:
        x = box_center(a, b, lo, hi)
    except CenteringError as exc:
        run.fail("failed", str(exc))
        return
    for k in run.iterations():
        try:
            if center == "cvxpy":
                x = _cvxpy_center(x, a, b, lo, hi, G, h)
            else:
                anchor = _best_t(run, origin, width)
                x = _newton_center(x, a, lo, hi, G, h, proximal=proximal, anchor=anchor, stop=lambda: run.out_of_time,
                                   **newton)
                if center == "cg" and _thin(x, lo, hi, G, h):
                    x = _newton_center(x, a, lo, hi, G, h, proximal=proximal, anchor=anchor,
                                       stop=lambda: run.out_of_time, **EXACT)
            if not _barrier(x, lo, hi, G, h, 0.0, None) < np.inf:
                raise CenteringError("the center is not strictly inside the localization set")
        except (np.linalg.LinAlgError, ValueError, CenteringError) as exc:
            run.fail("failed", f"the analytic center failed ({exc}); the localization set may have no interior left")
            return
        alpha = problem.feasible.project(origin + width * x)  # the centering keeps aᵀx = b only up to round-off
        if run.observe(alpha, "free"):
            return
        # what the cut needs of this center, before a check moves the oracle to another point
        g = problem.gradient_at(alpha) * width  # the gradient in t
        gain = run.lower - problem.objective_at(alpha) - problem.objective_roundoff(alpha)  # f_best - f(x_k), less round-off
        check = k % check_every == 0
        if window:
            recent[k % window] = alpha
        if check:
            candidate = run.alpha if not window else problem.feasible.project(recent[:min(k + 1, window)].mean(axis=0))
            if candidate is not None and not np.array_equal(candidate, checked):  # the same point: the same bound
                checked = candidate
                if run.check(checked):
                    return
            if newton is not EXACT:
                checks.append((run.lower, run.upper - run.lower))
                if _stalled(checks, run.target(), horizon):
                    newton = EXACT
                    run.details["exact_centers_from"] = k
        norm = float(np.linalg.norm(g))
        g = g / norm if norm > 0 else g
        direction = g - a * (a @ g)  # the gradient within the hyperplane
        if not np.any(direction):
            run.fail("stalled", "the gradient is orthogonal to A at the center: no cut can be placed")
            return
        if G.shape[0] and ((check and drop_redundant) or G.shape[0] >= max_cuts):
            try:
                relevance = cut_relevance(G, h, x, lo, hi)
            except (np.linalg.LinAlgError, ValueError) as exc:
                run.fail("failed", f"the barrier's Hessian at the center is singular or not finite ({exc})")
                return
            if drop_redundant:
                keep = ~redundant(relevance, 2 * n + G.shape[0])
                G, h, relevance = G[keep], h[keep], relevance[keep]
            if G.shape[0] >= max_cuts:  # drop the least relevant cuts, keeping room for the next few
                keep = np.sort(np.argsort(relevance)[G.shape[0] - max_cuts + batch:])
                G, h = G[keep], h[keep]
        # the nearest other constraint along the gradient from x, then the new cut and a strictly
        # feasible start between the two
        rows = np.vstack([np.eye(n), -np.eye(n), G])
        slack, rate = np.concatenate([hi - x, x - lo, h - G @ x]), rows @ direction
        reach = np.min(slack[rate > 0] / rate[rate > 0])
        depth = 0.0
        if deep_cuts and norm > 0:  # the gain in t's unit cut
            depth = min(max(gain, 0.0) / norm, 0.5 * reach * float(g @ direction))
        G, h = np.vstack([G, -g]), np.append(h, -g @ x - depth)
        run.details["most_cuts"] = max(run.details.get("most_cuts", 0), G.shape[0])
        x = x + 0.5 * (depth / float(g @ direction) + reach) * direction


def cut_relevance(G: np.ndarray, h: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``gⱼᵀH⁻¹gⱼ / (hⱼ - gⱼᵀx)²`` of each cut ``gⱼᵀy <= hⱼ`` at x, H the barrier's Hessian: the
    squared reach of the Dikin ellipsoid towards the cut. H is factored after scaling it to a unit
    diagonal and adding ``RELEVANCE_RIDGE``: near the optimum the localization set is thin (slacks
    of 1e-9) and H singular to float64, and a ranking needs no more digits."""
    hessian = _hessian(G, 1 / (h - G @ x) ** 2, 1 / (hi - x) ** 2 + 1 / (x - lo) ** 2)
    scale = 1 / np.sqrt(np.diag(hessian))
    scaled_hessian = hessian * np.outer(scale, scale)
    scaled_hessian[np.diag_indices_from(scaled_hessian)] += RELEVANCE_RIDGE
    factor = scipy.linalg.cho_factor(scaled_hessian)
    scaled = G.T * scale[:, None]
    return np.einsum("ij,ji->i", scaled.T, scipy.linalg.cho_solve(factor, scaled)) / (h - G @ x) ** 2


def redundant(relevance: np.ndarray, m: int) -> np.ndarray:
    """The cuts that the m-ellipsoid proves redundant at an analytic center of m inequalities: the
    set lies within ``{y : ‖y - x‖_H <= m}``, so a cut with ``m²·relevance <= 1`` never binds."""
    return relevance * m * m <= 1


def _best_t(run: Run, origin: np.ndarray, width: np.ndarray) -> np.ndarray | None:
    """The best point so far in the box's coordinates (the proximal center's anchor)."""
    return None if run.alpha is None else (run.alpha - origin) / width
