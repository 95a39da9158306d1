"""The certificate (the docs' mathematics page, "the certified duality gap"): the bracket ``lower <= p* <= upper`` that
``problem.certify(alpha)`` returns, and the algorithm that computes it for any problem type from
the oracle's point: the lower bound ``f(α)``, the weak-duality upper bound of the machine on
``K*(α)`` at a primal point, the better point found by solving the machine on the fixed ``K*(α)``
(:mod:`indkernel.core.fixed_kernel`), and their round-off allowances. The free bound also runs as
compiled code (:func:`free_certificate`, by the same functions), inside Newton's compiled iterations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np
from numba.extending import register_jitable

from .._validation import safe_norm
from .compiled_objective import compiled_dual_term, example, trial_gradient, trial_value
from .fixed_kernel import fixed_kernel_bound
from .intercept import HINGE, primal_terms
from .projection import bound_excess
from .proxy import ROUNDOFF_FACTOR, UNIT_ROUNDOFF, ProxyPoint, roundoff_allowances
from .rank_one import WARM_UPS

#: Largest violation of ``A`` (relative to the box size) that ``certify`` accepts as round-off.
FEASIBILITY_TOL = 1e-9
#: The cheap ``"refined"`` bound: the tight bound's solver with this budget (rounds, CG steps per round).
REFINED_ROUNDS, REFINED_CG_STEPS = 3, 20
#: The bounds ``certify`` offers, cheapest first.
BOUNDS = ("free", "refined", "tight")


class Interval:
    """Anything with certified ``lower <= p* <= upper``: its gap."""

    lower: float
    upper: float

    @property
    def gap(self) -> float:
        """``upper - lower >= p* - lower >= 0``."""
        return self.upper - self.lower


class Bracket(Interval):
    """A certified interval of the paper's problem, with the scale of its objective: its gap,
    absolute and relative."""

    scale: float

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
        The intercept ``b`` of the primal point that gives ``upper`` (exactly optimal for it).
    alpha_intercept : float
        The exactly optimal intercept for α's own coefficients ``dual_coef(α)`` (the free bound's
        primal point): the offset of the decision function ``K*(α)·dual_coef(α) + b`` at α.
    source : str
        ``"free"`` when the bound comes from ``β = Yα`` itself; ``"refined"`` or ``"tight"`` when
        the machine's dual on the fixed kernel ``K*(α)`` (:mod:`indkernel.core.fixed_kernel`, a
        few or as many O(n²) Newton–CG rounds as tightness needs) gave a smaller one.
    scale : float
        ``|ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)``, the denominator of :attr:`relative_gap`.
    allowance : float
        The round-off allowance by which ``lower`` and ``upper`` were widened, together: the
        smallest gap that floating point can certify at this α.
    natural_gap_floor : float
        ``q(x) - q(α)`` at the best dual point x of the machine on ``K*(α)``: a lower bound on the
        exact natural gap ``U*(α) - f(α)`` (the paper's stopping criterion), so
        ``gap / natural_gap_floor`` bounds how far this certificate is from the tightest one at α.
        0 for the free bound.
    dual_point : (dim,) array or None
        That dual point x (None for the free bound): where a run's next bound, at a nearby α,
        goes on from (``certify(..., start=)``).
    """

    lower: float
    upper: float
    intercept: float
    source: str = "free"
    scale: float = 0.0
    allowance: float = 0.0
    natural_gap_floor: float = 0.0
    alpha_intercept: float = 0.0
    dual_point: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return (f"lower {self.lower:.10g}  upper {self.upper:.10g}  gap {self.gap:.3e} "
                f"(relative {self.relative_gap:.3e}, {self.source} certificate)")

    def __repr__(self) -> str:
        return (f"Certificate(lower={self.lower:.10g}, upper={self.upper:.10g}, gap={self.gap:.3g}, "
                f"relative_gap={self.relative_gap:.3g}, source={self.source!r})")


def certify(problem, alpha: np.ndarray, *, bound: str = "tight", target: float = 0.0, budget=None,
            start: np.ndarray | None = None) -> Certificate:
    """The bracket at a feasible α of ``problem`` (:meth:`indkernel.core.problem.IndefiniteProblem.certify`,
    which checks α and ``bound``; the solvers call this on their own iterates, with the absolute
    gap they are content with as ``target``, ``budget()``, the seconds left: the bound's solve
    fits in them and ends with the best bound found so far, a valid one, once they are spent, and
    ``start``, the dual point of their previous bound, for this one to go on from)."""
    violation = problem.feasible.violation(alpha)
    if violation > FEASIBILITY_TOL:
        raise ValueError(
            f"alpha is not in the feasible set A (violation {violation:.3g} relative to the box); "
            "the bounds hold only for feasible points: certify problem.project(alpha) instead"
        )
    point = problem._point(alpha)  # (α checked by the caller)
    dual_term = problem.machine.dual_term(alpha)
    lower = dual_term + point.value
    gradient = problem.machine.dual_term_gradient(alpha) - problem.oracle_u_adjoint(point.Ku)
    lower_error = problem.objective_roundoff(alpha) + infeasibility_allowance(
        problem.feasible.distance_bound(alpha), float(np.linalg.norm(gradient)), problem.curvature_estimate())
    upper, upper_error, offset = primal_bound(problem, point, point.u, point.Ku, point.Ku_error)
    own_offset, source, gain, dual_point = offset, "free", 0.0, None
    if bound != "free":
        given = (problem, alpha, point, lower, upper + upper_error, lower_error + upper_error, target)
        if bound == "tight":
            found = fixed_kernel_bound(*given, budget=budget, formed=getattr(problem.oracle, "formed_kernel", True),
                                       start=start)
        else:
            found = fixed_kernel_bound(*given, max_rounds=REFINED_ROUNDS, cg_steps=REFINED_CG_STEPS, formed=False,
                                       budget=budget, start=start)
        gain, dual_point = found.gain, found.x
        if found.v is not point.u:  # K·v afresh: the search's accumulated products drift beyond one product's error
            refined = primal_bound(problem, point, found.v, point.multiply(found.v),
                                   point.product_error * safe_norm(found.v))
            if refined[0] + refined[1] < upper + upper_error:
                (upper, upper_error, offset), source = refined, bound
    uKu = float(point.u @ point.Ku)  # = βᵀK*β with β = dual_coef(α), in either space
    scale = abs(dual_term) + 0.5 * max(abs(uKu), point.uK0u_magnitude)
    return Certificate(lower=float(lower - lower_error), upper=float(upper + upper_error),
                       intercept=float(offset + problem.machine.offset_shift), source=source, scale=float(scale),
                       allowance=float(lower_error + upper_error), natural_gap_floor=float(gain), dual_point=dual_point,
                       alpha_intercept=float(own_offset + problem.machine.offset_shift))


@register_jitable
def infeasibility_allowance(distance: float, gradient_norm: float, curvature: float) -> float:
    """What α's round-off distance d to A can add to ``f(α)``: f is concave, so near the nearest
    point p of A, ``f(p) >= f(α) - (‖∇f(α)‖ + curvature·d)·d``. Clipping α into the box moves it by
    the excess e and the residual of ``aᵀα = b`` by at most ``‖a‖·‖e‖``, so
    ``d <= |aᵀα - b|/‖a‖ + 2‖e‖`` (:meth:`indkernel.core.feasible_set.FeasibleSet.distance_bound`)."""
    return distance * (gradient_norm + curvature * distance)


@register_jitable
def objective_roundoff(dim: int, magnitude: float, value_error: float) -> float:
    """:meth:`IndefiniteProblem.objective_roundoff <indkernel.core.problem.IndefiniteProblem.objective_roundoff>`
    of f's sums of ``magnitude`` (ℓ's terms, ``|φ|`` and the oracle's ``value_error``)."""
    return ROUNDOFF_FACTOR * dim * UNIT_ROUNDOFF * 2 * magnitude + value_error


@register_jitable
def upper_allowance(dim: int, value: float, value_error: float, uKu: float, vKv_magnitude: float, loss_magnitude: float,
                    upper: float, Ku_error: float, u_norm: float, Kv_error: float, v_norm: float, weights_norm: float,
                    clipping: float) -> float:
    """The round-off allowance of :func:`primal_bound`'s upper bound: ``γ = ROUNDOFF_FACTOR·dim·u`` times
    the magnitude of its sums, the oracle's errors in φ, K*u and K*v (``weights_norm``: the
    loss's weights times the penalty's largest scale), and the penalty's ``clipping`` allowance."""
    gamma = ROUNDOFF_FACTOR * dim * UNIT_ROUNDOFF
    return (gamma * (abs(value) + value_error + 0.5 * abs(uKu) + vKv_magnitude + loss_magnitude + abs(upper))
            + value_error + 0.5 * Ku_error * u_norm + Kv_error * (0.5 * v_norm + weights_norm) + clipping)


def primal_bound(problem, point: ProxyPoint, v: np.ndarray, Kv: np.ndarray, Kv_error: float) -> tuple[float, float, float]:
    """``(upper, allowance, offset)`` at the primal point v (the oracle's space) with the computed
    ``Kv ≈ K̃*v`` (``‖Kv - K̃*v‖ <= Kv_error``): ``φ + ½uᵀK̃*u + ½vᵀKv + loss(decision)``; the
    allowance (:func:`upper_allowance`) also holds what the penalty's change of K0 can add to ``p*`` (the Mercer penalty's
    clip, :meth:`indkernel.core.penalties.Penalty.clipping_allowance`)."""
    max_scale = 1.0 if problem.penalty.scale is None else float(np.max(problem.penalty.scale))
    decision = Kv if problem.penalty.scale is None else problem.penalty.scale * Kv  # K*β in the original space
    loss, offset, loss_magnitude, weights = problem.machine.primal_terms(decision, max_scale * Kv_error)
    uKu, vKv = float(point.u @ point.Ku), float(v @ Kv)
    upper = point.value + 0.5 * uKu + 0.5 * vKv + loss
    allowance = upper_allowance(problem.dim, point.value, point.value_error, uKu, float(np.abs(v) @ np.abs(Kv)),
                                loss_magnitude, upper, point.Ku_error, float(np.linalg.norm(point.u)), Kv_error,
                                safe_norm(v), max_scale * safe_norm(weights),
                                problem.penalty.clipping_allowance(float(point.u @ point.u)))
    return float(upper), float(allowance), float(offset)


@numba.njit(cache=True, error_model="numpy")
def free_certificate(objective, data, x, gradient, record):
    """``(lower, upper, allowance, scale, intercept)`` of :func:`certify`'s free bound at the feasible x
    (``gradient``: ∇f(x)), whose oracle point compiled code computed (``record``,
    :func:`indkernel.core.compiled_objective.trial_value`),
    on the problem's compiled objective and ``data`` (:attr:`IndefiniteProblem.compiled_certificate
    <indkernel.core.problem.IndefiniteProblem.compiled_certificate>`): the same bounds and allowances
    by the same functions (:func:`~indkernel.core.proxy.roundoff_allowances`, :func:`objective_roundoff`,
    :func:`infeasibility_allowance`, :func:`upper_allowance`, :func:`indkernel.core.intercept.primal_terms`)."""
    _, _, rho, _, _, _, n, quadratic, linear, a, b, lo, hi, _, _ = objective
    frobenius, norm, curvature, scale, max_scale, loss_data, offset_shift = data
    u, decomposition, _, _, Ku, value, magnitude, backward = record
    values = decomposition[0]
    uu = np.dot(u, u)
    value_error, product_error, _ = roundoff_allowances(n, frobenius, norm, 1.0 / (4.0 * rho), uu, rho,
                                                        values[values < 0], magnitude, 4 * np.sqrt(n) * backward)
    u_norm = np.sqrt(uu)
    Ku_error = product_error * u_norm
    dual_term, dual_magnitude = compiled_dual_term(linear, quadratic, x)
    _, excess, residual = bound_excess(x, a, b, lo, hi)
    distance = residual / np.sqrt(np.dot(a, a)) + 2 * excess
    lower_error = (objective_roundoff(x.size, dual_magnitude + abs(value) + value_error, value_error)
                   + infeasibility_allowance(distance, np.sqrt(np.dot(gradient, gradient)), curvature))
    loss, offset, loss_magnitude, weights = primal_terms(loss_data, scale * Ku, max_scale * Ku_error)
    uKu = np.dot(u, Ku)
    upper = value + uKu + loss
    upper_error = upper_allowance(x.size, value, value_error, uKu, np.dot(np.abs(u), np.abs(Ku)), loss_magnitude, upper,
                                  Ku_error, u_norm, Ku_error, u_norm, max_scale * np.sqrt(np.dot(weights, weights)), 0.0)
    return (dual_term + value - lower_error, upper + upper_error, lower_error + upper_error,
            abs(dual_term) + 0.5 * max(abs(uKu), magnitude), offset + offset_shift)


def free_row_certificate(row) -> Certificate:
    """The certificate of a row of :func:`free_certificate` (lower, upper, allowance, scale, intercept)."""
    lower, upper, allowance, scale, intercept = (float(value) for value in row)
    return Certificate(lower=lower, upper=upper, intercept=intercept, scale=scale, allowance=allowance,
                       alpha_intercept=intercept)


def compiled_free_bound(problem, alpha: np.ndarray) -> Certificate | None:
    """:func:`certify`'s free bound at a solver's feasible α by compiled code, in one call (:func:`_free_bound_at`), the
    oracle's point kept by the problem (:meth:`IndefiniteProblem.adopt
    <indkernel.core.problem.IndefiniteProblem.adopt>`), where the problem has a compiled form and keeps
    no point at α yet (with one, Python's sums cost less); None there, and where the rank-one check
    failed (Python's oracle then falls back to eigh)."""
    data = getattr(problem, "compiled_certificate", None)
    if data is None or problem.kept_point(alpha) is not None:
        return None
    ok, row, record = _free_bound_at(problem.compiled_objective, data, problem.oracle.draw_probe(problem.n), alpha)
    if not ok:
        return None
    problem.adopt(alpha, record)
    return free_row_certificate(row)


@register_jitable(error_model="numpy")
def checked_point(objective, data, probe, x):
    """``(f(x), its rounding, ok, the oracle's record, ∇f(x), the row of free_certificate)`` at the
    feasible x, in compiled code: the rank-one point (:func:`indkernel.core.compiled_objective.trial_value`,
    ``ok`` its check) and its free bound (NaNs where the check failed)."""
    value, noise, ok, record = trial_value(objective, probe, x)
    gradient = trial_gradient(objective, x, record)
    row = free_certificate(objective, data, x, gradient, record) if ok else (np.nan, np.nan, np.nan, np.nan, np.nan)
    return value, noise, ok, record, gradient, row


@numba.njit(cache=True, error_model="numpy")
def _free_bound_at(objective, data, probe, x):
    """``(ok, the row of free_certificate, the oracle's record)`` at the feasible x (:func:`checked_point`)."""
    _, _, ok, record, _, row = checked_point(objective, data, probe, x)
    return ok, row, record


def _compile_free_bound() -> None:
    """Compile :func:`_free_bound_at` (within :func:`indkernel.core.rank_one.compile_oracle`)."""
    _free_bound_at(example(), example_certificate(), np.ones(2), np.array([0.25, 0.25]))


def example_certificate() -> tuple:
    """Data of :func:`free_certificate` with the types of :attr:`IndefiniteProblem.compiled_certificate
    <indkernel.core.problem.IndefiniteProblem.compiled_certificate>`, for two variables: to compile on."""
    return 1.0, 1.0, 1.0, np.ones(2), 1.0, (HINGE, np.array([1.0, -1.0]), np.ones(2), 0.0, 1.0), 0.0


WARM_UPS.append(_compile_free_bound)
