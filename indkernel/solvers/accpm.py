"""The analytic center cutting plane method (``alg:accpm``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from .tracking import Run

CENTERS = ("newton", "cvxpy")


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


def _barrier_hessian(x, lo, hi, G, h):
    """Slacks ``(hi - x, x - lo, h - Gx)`` and the Hessian of the log barrier at x."""
    up, down, cut = hi - x, x - lo, h - G @ x
    hessian = (G.T * (1 / cut ** 2)) @ G
    hessian[np.diag_indices_from(hessian)] += 1 / up ** 2 + 1 / down ** 2
    return up, down, cut, hessian


def _newton_center(x, a, lo, hi, G, h, tol=1e-9, max_steps=200, proximal=0.0, anchor=None):
    """Damped Newton for ``min -Σ log(hi - x) - Σ log(x - lo) - Σ log(h - Gx) + (μ/2)‖x - x̂‖²``
    s.t. ``aᵀx = b`` (μ = ``proximal``, x̂ = ``anchor``; μ = 0: the analytic center), from a
    strictly feasible x with ``aᵀx = b``; the equality is kept by the KKT step
    ``Δ = -H⁻¹(∇ + νa)``, ``ν = -aᵀH⁻¹∇ / aᵀH⁻¹a``. Returns the center and the Cholesky factor of
    the barrier's Hessian there (for the relevance of the cuts)."""
    for _ in range(max_steps):
        up, down, cut, hessian = _barrier_hessian(x, lo, hi, G, h)
        gradient = 1 / up - 1 / down + G.T @ (1 / cut)
        if proximal and anchor is not None:  # no anchor before the first certified point
            gradient += proximal * (x - anchor)
            hessian[np.diag_indices_from(hessian)] += proximal
        factor = scipy.linalg.cho_factor(hessian)
        solved_a, solved_g = scipy.linalg.cho_solve(factor, a), scipy.linalg.cho_solve(factor, gradient)
        step = -(solved_g - solved_a * (a @ solved_g) / (a @ solved_a))
        decrement = float(np.sqrt(max(-gradient @ step, 0.0)))
        if decrement ** 2 <= tol:
            return x, factor
        t = 1.0 if decrement < 0.25 else 1.0 / (1.0 + decrement)  # stays strictly feasible
        x = x + t * step
    return x, factor


def _cvxpy_center(x, a, b, lo, hi, G, h):
    """The reference: the ``formulations`` analytic-center model, shifted so the equality is aᵀx = 0."""
    import formulations

    n = x.size
    G_all, h_all = np.vstack([np.eye(n), -np.eye(n), G]), np.concatenate([hi, -lo, h])
    shift = a * b / (a @ a)  # aᵀ shift = b
    model = formulations.analytic_center(G_all, h_all - G_all @ shift, a)
    model.solve(solver=formulations.DEFAULT_SOLVER, **formulations.ACCURATE[formulations.DEFAULT_SOLVER])
    center = model.variables["x"].value + shift
    # the Hessian at the answer, for the relevance measure
    up, down, cut, hessian = _barrier_hessian(center, lo, hi, G, h)
    if min(up.min(), down.min(), cut.min(initial=np.inf)) <= 0:
        raise CenteringError("the cvxpy analytic center is not strictly inside the localization set")
    return center, scipy.linalg.cho_factor(hessian)


#: The paper's ACCPM (``alg:accpm``, the authors' code): neutral cuts through each analytic
#: center and the cut limit by relevance only; ``solve(problem, "accpm", **PAPER)``.
PAPER: dict[str, Any] = dict(deep_cuts=False, proximal=0.0, drop_redundant=False)


def accpm(problem, run: Run, *, center: str = "newton", max_constraints: int | None = None, deep_cuts: bool = True,
          proximal: float = 1.0, drop_redundant: bool = False) -> None:
    """Analytic center cutting plane method (``alg:accpm``), every center certified.

    The localization set starts as ``A = {aᵀx = b, lo <= x <= hi}`` (2n inequalities and the
    equality, which the Newton step keeps exactly rather than by a barrier). At each center
    ``x_k`` a cut keeps the half where f can still exceed the best value found: the neutral cut
    ``∇f(x_k)ᵀ(x - x_k) >= 0`` of the paper, or with ``deep_cuts`` the objective cut
    ``∇f(x_k)ᵀ(x - x_k) >= f_best - f(x_k)`` (valid because f is concave: ``f(x) <= f(x_k) +
    ∇f(x_k)ᵀ(x - x_k)``; ``f_best`` the certified lower bound, so round-off cannot make it too
    deep), its depth capped so that the ray along the gradient still enters the new set.
    ``drop_redundant`` removes, after each centering, the cuts that the m-ellipsoid around the
    analytic center proves redundant (the authors' rule: the set lies in ``{y : ‖y - x‖_H <= m}``,
    H the barrier's Hessian and m the number of inequalities, so a cut with
    ``m·√(gᵀH⁻¹g) <= h - gᵀx`` never binds); with ``proximal = μ > 0`` the center is the
    proximal analytic center, the minimizer of the barrier plus ``(μ/2)‖x - x̂‖²`` with x̂ the best
    point so far (proximal ACCPM), where the ellipsoid rule does not hold (the two are refused together).
    When there are more than ``max_constraints`` inequalities, the cuts of least relevance
    ``a_jᵀH⁻¹a_j / (b_j - a_jᵀx)²`` are dropped.

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
    center : "newton" (default) or "cvxpy"
        The analytic center by damped Newton steps, or by the ``formulations`` model (reference;
        analytic centers only, ``proximal = 0``).
    max_constraints : int, optional, default 5n
        Inequalities kept, the 2n box constraints included.
    deep_cuts : bool, default True
        Objective cuts at ``f_best`` instead of the paper's neutral cuts.
    proximal : float, default 1
        The weight μ of the proximal term, in the box's coordinates (0: the analytic center).
    drop_redundant : bool, default False
        Drop the cuts that the m-ellipsoid proves redundant (analytic centers only: with ``proximal=0``).

    The defaults are the variant that reached a certified gap fastest in
    ``python figures/accpm_variants.py`` (deep cuts and the proximal center, μ = 1); the
    m-ellipsoid rule dropped few cuts there and cost time. ``**PAPER`` selects the paper's method.
    """
    if center not in CENTERS:
        raise ValueError(f"center must be one of {CENTERS}; got {center!r}")
    proximal = float(proximal)
    if not (np.isfinite(proximal) and proximal >= 0):
        raise ValueError(f"proximal must be a finite weight >= 0 (0: the analytic center); got {proximal!r}")
    if proximal and (center == "cvxpy" or drop_redundant):
        raise ValueError(f"{'center=cvxpy' if center == 'cvxpy' else 'drop_redundant=True'} needs analytic "
                         "centers; pass proximal=0 with it")
    a, b, origin, top = problem.feasible_set
    n, width = problem.dim, top - origin
    a, b = a * width, b - a @ origin  # aᵀx = b in t = (x - origin)/width
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(a)
    lo, hi = np.zeros(n), np.ones(n)
    max_cuts = (5 * n if max_constraints is None else max_constraints) - 2 * n
    if max_cuts < 1:
        raise ValueError(f"max_constraints must exceed the 2n = {2 * n} box constraints; got {max_constraints}")
    G, h = np.empty((0, n)), np.empty(0)
    try:
        x = box_center(a, b, lo, hi)
    except CenteringError as exc:
        run.fail("failed", str(exc))
        return
    for _ in run.iterations():
        try:
            if center == "newton":
                x, factor = _newton_center(x, a, lo, hi, G, h, proximal=proximal, anchor=_best_t(run, origin, width))
            else:
                x, factor = _cvxpy_center(x, a, b, lo, hi, G, h)
            if not np.all(np.isfinite(x)):
                raise CenteringError("the Newton steps left the finite numbers")
        except (np.linalg.LinAlgError, ValueError, CenteringError) as exc:
            run.fail("failed", f"the analytic center failed ({exc}); the localization set may have no interior left")
            return
        alpha = problem._project(origin + width * x)  # the centering keeps aᵀx = b only up to round-off
        if run.observe(alpha):
            return
        g = problem._gradient(alpha) * width  # the gradient in t
        norm = float(np.linalg.norm(g))
        g = g / norm if norm > 0 else g
        direction = g - a * (a @ g) / (a @ a)  # the gradient within the hyperplane
        if not np.any(direction):
            run.fail("stalled", "the gradient is orthogonal to A at the center: no cut can be placed")
            return
        if G.shape[0] and (drop_redundant or G.shape[0] >= max_cuts):
            relevance = cut_relevance(G, h, x, factor)
            if drop_redundant:
                keep = ~redundant(relevance, 2 * n + G.shape[0])
                G, h, relevance = G[keep], h[keep], relevance[keep]
            if G.shape[0] >= max_cuts:  # drop the least relevant cuts, keeping room for the new one
                keep = np.sort(np.argsort(relevance)[G.shape[0] - max_cuts + 1:])
                G, h = G[keep], h[keep]
        # the nearest other constraint along the gradient from x, then the new cut and a strictly
        # feasible start between the two
        rows = np.vstack([np.eye(n), -np.eye(n), G])
        slack, rate = np.concatenate([hi - x, x - lo, h - G @ x]), rows @ direction
        reach = np.min(slack[rate > 0] / rate[rate > 0])
        depth = 0.0
        if deep_cuts and norm > 0:  # f_best - f(x_k), less the round-off of f(x_k), in t's unit cut
            gain = run.lower - problem._objective(alpha) - problem.objective_roundoff(alpha)
            depth = min(max(gain, 0.0) / norm, 0.5 * reach * float(g @ direction))
        G, h = np.vstack([G, -g]), np.append(h, -g @ x - depth)
        run.details["most_cuts"] = max(run.details.get("most_cuts", 0), G.shape[0])
        x = x + 0.5 * (depth / float(g @ direction) + reach) * direction


def cut_relevance(G: np.ndarray, h: np.ndarray, x: np.ndarray, factor) -> np.ndarray:
    """``gⱼᵀH⁻¹gⱼ / (hⱼ - gⱼᵀx)²`` of each cut ``gⱼᵀy <= hⱼ`` at x, H (its Cholesky ``factor``) the
    barrier's Hessian: the squared reach of the Dikin ellipsoid towards the cut."""
    return np.einsum("ij,ji->i", G, scipy.linalg.cho_solve(factor, G.T)) / (h - G @ x) ** 2


def redundant(relevance: np.ndarray, m: int) -> np.ndarray:
    """The cuts that the m-ellipsoid proves redundant at an analytic center of m inequalities: the
    set lies within ``{y : ‖y - x‖_H <= m}``, so a cut with ``m²·relevance <= 1`` never binds."""
    return relevance * m * m <= 1


def _best_t(run: Run, origin: np.ndarray, width: np.ndarray) -> np.ndarray | None:
    """The best point so far in the box's coordinates (the proximal center's anchor)."""
    return None if run.alpha is None else (run.alpha - origin) / width
