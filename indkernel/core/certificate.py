"""The certificate (DESIGN.md, the free gap): the bracket ``lower <= p* <= upper`` that
``problem.certify(alpha)`` returns, and the algorithm that computes it for any problem type from
the oracle's point: the lower bound ``f(α)``, the weak-duality upper bound of the machine on
``K*(α)`` at a primal point, that point's Newton refinement, and their round-off allowances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import safe_norm
from .proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF, ProxyPoint
from .tangent_cg import on_hyperplane, tangent_cg

#: Largest violation of ``A`` (relative to the box size) that ``certify`` accepts as round-off.
FEASIBILITY_TOL = 1e-9
#: The certificate's Newton refinement: at most this many conjugate-gradient steps per round (one
#: product with K* each), ending early after ``REFINE_PATIENCE`` steps that do not lower the bound.
REFINE_STEPS = 20
REFINE_PATIENCE = 2
#: Rounds of the refinement's active-set loop (a round's point clipped to the box starts the next).
REFINE_ROUNDS = 3
#: Variables within this fraction of the box's width of a bound start the refinement at the bound
#: (an interior-point solution never puts them there exactly).
REFINE_SNAP = 1e-6



class Bracket:
    """Anything with certified ``lower <= p* <= upper``: its gap, absolute and relative."""

    lower: float
    upper: float
    scale: float

    @property
    def gap(self) -> float:
        """``upper - lower >= p* - lower >= 0``."""
        return self.upper - self.lower

    @property
    def relative_gap(self) -> float:
        """``gap / scale``, with ``scale = |ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)`` (``ℓ = eᵀα``, ``u = Yα`` for the SVM): the
        size of the part of the objective that moves with α (``|K0|``: the kernel with its
        eigenvalues in absolute value, so the scale does not vanish where ``K*`` is nearly 0 along
        u). The constant ``ρ‖(K0)_-‖²_F = f(0)``
        is left out of the scale, because a gap small beside it can still leave α far from optimal
        (infinite when ``scale == 0`` and the gap is not).
        """
        if self.gap <= 0:
            return 0.0
        return self.gap / self.scale if self.scale > 0 else float("inf")


@dataclass(frozen=True)
class Certificate(Bracket):
    """Certified bounds on the optimal value ``p*`` of ``eq:kern_learn`` at one feasible α.

    Attributes
    ----------
    lower : float
        ``f(α)``, the objective at the feasible α; ``lower <= p*``.
    upper : float
        A weak-duality bound for the SVM on the proxy kernel ``K*(α)``; ``p* <= upper``.
    intercept : float
        The intercept ``b`` of the SVM primal point that gives ``upper`` (exactly optimal).
    source : str
        ``"free"`` when the bound comes from ``β = Yα`` itself, ``"newton"`` when the
        refinement (Newton-CG steps for the machine on ``K*``, O(n²) each) gave the smaller bound.
    scale : float
        ``|ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)``, the denominator of :attr:`relative_gap`.
    allowance : float
        The round-off allowance by which ``lower`` and ``upper`` were widened, together: the
        smallest gap that floating point can certify at this α.
    """

    lower: float
    upper: float
    intercept: float
    source: str = "free"
    scale: float = 0.0
    allowance: float = 0.0

    def __str__(self) -> str:
        return (f"lower {self.lower:.10g}  upper {self.upper:.10g}  gap {self.gap:.3e} "
                f"(relative {self.relative_gap:.3e}, {self.source} certificate)")


def certify(problem, alpha: np.ndarray, *, refine: bool = True) -> Certificate:
    """The bracket at a feasible α of ``problem`` (:meth:`indkernel.core.problem.IndefiniteProblem.certify`,
    which checks α; the solvers call this on their own iterates)."""
    violation = problem._feasibility_violation(alpha)
    if violation > FEASIBILITY_TOL:
        raise ValueError(
            f"alpha is not in the feasible set A (violation {violation:.3g} relative to the box); "
            "the bounds hold only for feasible points: certify problem.project(alpha) instead"
        )
    point = problem._point(alpha)
    linear = problem._linear(alpha)
    lower = linear + point.value
    distance = abs(float(problem._a @ alpha) - problem._b) / float(np.linalg.norm(problem._a))
    gradient = problem._linear_gradient(alpha) - problem._u_adjoint(point.Ku)
    lower_error = (problem.objective_roundoff(alpha)
                   + distance * (float(np.linalg.norm(gradient)) + problem.curvature_estimate() * distance))
    upper, upper_error, offset = primal_bound(problem, point, point.u, point.Ku, point.Ku_error)
    source = "free"
    if refine:
        v = newton_refinement(problem, alpha, point, gradient)
        if v is not None:
            refined = primal_bound(problem, point, v, point.multiply(v), point.product_error * safe_norm(v))
            if refined[0] + refined[1] < upper + upper_error:
                (upper, upper_error, offset), source = refined, "newton"
    uKu = float(point.u @ point.Ku)  # = βᵀK*β with β = dual_coef(α), in either space
    scale = abs(linear) + 0.5 * max(abs(uKu), point.uK0u_magnitude)
    # below the round-off of the objective's size the α-dependent part is 0 to float64 (at α = 0,
    # say): then the gap is measured against that size, f(α) and its first-order range over the box
    size = abs(lower) + float(np.abs(gradient) @ problem._coordinate_ranges)
    if scale <= ROUNDOFF_FACTOR * problem.dim * UNIT_ROUNDOFF * size:
        scale = size
    return Certificate(lower=float(lower - lower_error), upper=float(upper + upper_error),
                       intercept=float(offset + problem._offset_shift), source=source, scale=float(scale),
                       allowance=float(lower_error + upper_error))


def primal_bound(problem, point: ProxyPoint, v: np.ndarray, Kv: np.ndarray, Kv_error: float) -> tuple[float, float, float]:
    """``(upper, allowance, offset)`` at the primal point v (the oracle's space) with the computed
    ``Kv ≈ K̃*v`` (``‖Kv - K̃*v‖ <= Kv_error``): ``φ + ½uᵀK̃*u + ½vᵀKv + loss(decision)``."""
    gamma = ROUNDOFF_FACTOR * problem.dim * UNIT_ROUNDOFF
    max_scale = 1.0 if problem._scale is None else float(np.max(problem._scale))
    decision = Kv if problem._scale is None else problem._scale * Kv  # K*β in the original space
    loss, offset = problem._primal_loss(decision)
    loss_magnitude, weights = problem._loss_magnitude(decision, offset)
    uKu, vKv = float(point.u @ point.Ku), float(v @ Kv)
    upper = point.value + 0.5 * uKu + 0.5 * vKv + loss
    allowance = (gamma * (abs(point.value) + point.value_error + 0.5 * abs(uKu) + float(np.abs(v) @ np.abs(Kv))
                          + loss_magnitude + abs(upper))
                 + point.value_error + 0.5 * point.Ku_error * float(np.linalg.norm(point.u))
                 + Kv_error * (0.5 * safe_norm(v) + max_scale * safe_norm(weights)))
    return float(upper), float(allowance), float(offset)

def newton_refinement(problem, alpha: np.ndarray, point: ProxyPoint, gradient: np.ndarray) -> np.ndarray | None:
    """A better primal point than ``u(α)`` for the bound: conjugate gradients on Newton's system
    of the machine's dual on the fixed kernel K*, restricted to the free variables
    ``lo < x_i < hi`` and to the hyperplane ``aᵀδ = 0``: ``max_δ gᵀδ - ½(Uδ)ᵀK*(Uδ)`` with
    ``g`` the dual's gradient on K*(α) (at x = α it is ``∇f(α)``, Danskin) and U the map x ↦ u.

    Variables within ``REFINE_SNAP`` of a bound start on it (an interior-point α never puts
    them there). Each CG step is one product ``point.multiply`` (O(n²) in factored form); the
    bound is evaluated at every step and the best point kept (the bound is not the CG model:
    the bounded variables' loss terms move too). A round ends after ``REFINE_PATIENCE`` steps
    without progress or ``REFINE_STEPS`` steps; if its point left the box, it is clipped
    back and another round starts on the new free set (at most ``REFINE_ROUNDS``, an active
    set method). Returns the best v in the oracle's space, or None if nothing beat ``u(α)``.
    """
    lo, hi = problem._lo, problem._hi
    snap = REFINE_SNAP * (hi - lo)
    x = np.where(alpha <= lo + snap, lo, np.where(alpha >= hi - snap, hi, alpha))
    v, Kv = point.u, point.Ku
    best, best_bound = None, sum(primal_bound(problem, point, v, Kv, point.Ku_error)[:2])
    if np.any(x != alpha):
        v = problem._u(x)
        Kv = point.multiply(v)
        gradient = problem._linear_gradient(x) - problem._u_adjoint(Kv)
    for _ in range(REFINE_ROUNDS):
        free = (x > lo) & (x < hi)
        if not free.any():
            break
        project = on_hyperplane(problem._a[free])
        step_vector = np.zeros(problem.dim)

        def newton_system(direction: np.ndarray, free: np.ndarray = free, step_vector: np.ndarray = step_vector):
            step_vector[free] = direction  # the product (U δ)ᵀK*(U ·); below its round-off, noise
            w = problem._u(step_vector)
            Kw = point.multiply(w)
            return problem._u_adjoint(Kw)[free], point.product_error * float(w @ w), (w, Kw)

        round_best, round_bound, stale = (x, v, Kv), np.inf, 0
        for step, direction, (w, Kw), _ in tangent_cg(newton_system, project(gradient[free]), project, REFINE_STEPS):
            x = x.copy()
            x[free] += step * direction
            v, Kv = v + step * w, Kv + step * Kw
            bound = sum(primal_bound(problem, point, v, Kv, 0.0)[:2])
            if bound < round_bound:
                round_best, round_bound, stale = (x, v, Kv), bound, 0
            else:
                stale += 1
                if stale >= REFINE_PATIENCE:
                    break
        x, v, Kv = round_best
        if round_bound < best_bound:
            best, best_bound = v, round_bound
        clipped = np.clip(x, lo, hi)
        if np.array_equal(clipped, x):
            break
        x, v = clipped, problem._u(clipped)
        Kv = point.multiply(v)
        bound = sum(primal_bound(problem, point, v, Kv, 0.0)[:2])
        if bound < best_bound:
            best, best_bound = v, bound
        gradient = problem._linear_gradient(x) - problem._u_adjoint(Kv)
    return best
