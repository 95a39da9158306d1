"""The natural upper bound at any α (the docs' mathematics page, "the certified duality gap"; the paper's stopping
criterion): the machine's dual on the *fixed* PSD kernel ``K = K*(α)``,

    U*(α) = max_{x ∈ A} q(x) + ρ‖K - K0‖²_F,   q(x) = ℓ(x) - ½u(x)ᵀK u(x),

solved by gradient projection and Newton–CG on the face it finds (Moré & Toraldo's GPCG for a
bound- and hyperplane-constrained QP), every product with K in factored form (O(n²),
``ProxyPoint.multiply``), warm-started at α itself (or, in a run, at the dual point of its
previous bound where q is larger there: near this maximizer too). The bound is never the dual value: each point
``β = u(x)`` (and each Newton point before its projection) is scored by the machine's *primal*
at its best offset (:func:`indkernel.core.certificate.primal_bound`), a true upper bound whatever
the accuracy of x.

The dual side proves how tight that is: ``q(x) - q(α) <= U*(α) - f(α)`` for every feasible x (f(α)
is the dual at x = α on the same kernel, Danskin), so once ``upper - f(α) <= TIGHTNESS·(q(x) -
q(α))`` the certified gap is at most ``TIGHTNESS`` times the exact natural gap, and the solve stops.

Where Newton–CG's face identification is slow (hundreds of variables to move to their bounds
near the optimum: rounds that stall say so, ``ROUND_PROGRESS``), the
machine is solved on the formed K* (O(n³) once): libsvm at a loose
tolerance (``LIBSVM_TOLERANCE``, at most ``LIBSVM_CAP`` iterations per variable: SMO finds the face
fast), then, where its point polished still leaves the bound unproven, the machine's dual QP by
the exact solves (``EXACT_SOLVES``): HiGHS's active-set method
(:func:`indkernel.solvers.active_set_qp.dual_qp_point`), and an interior-point method (Clarabel,
:func:`indkernel.solvers.models.dual_qp_point`) where that falls short; each point scored the same
way. Both reach the natural gap to their tolerances whatever the degeneracy, where libsvm at tight
tolerances crawls on the flat directions of a singular K*(α): at the projected gradient's late
iterates on USPS 3 vs 5 (K*(α) of rank about 200 of 500) libsvm at 1e-7 stopped at ten million
iterations after seconds with a bound several times the natural gap, where HiGHS's point is
within 1.05 of it (``figures/tight_certificate.py``, part 3). With a time budget the libsvm call is capped by what
part of the seconds left allows at its measured rate (one call of libsvm cannot be interrupted:
at C >= 1e4 closing certificates overran a run's time limit by seconds,
``figures/newton_stress.py``) and the exact solves get the seconds left as their time limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import safe_norm
from .proxy import ProxyPoint
from .tangent_cg import on_hyperplane, tangent_cg

#: Stop once the certified gap is proven within this multiple of the exact natural gap.
TIGHTNESS = 1.25
#: Conjugate-gradient steps per round at most, and the relative residual that ends them.
CG_STEPS, CG_RESIDUAL = 50, 1e-6
#: Halvings of the projected Newton step (and doublings of the gradient step's L) at most.
MAX_HALVINGS = 30
#: A gap within this many round-off allowances is noise: nothing to prove (the solvers' "roundoff" stop).
NOISE_MULTIPLE = 4
#: Newton–CG rounds at most (from each point: the start, each formed solve's).
NEWTON_ROUNDS = 4
#: Before a formed solve, the rounds go on only while each cuts the bound's distance from its proof
#: (``gap / gain``, which ``TIGHTNESS`` ends) below this fraction of the last round's: on the
#: maximizer's face they do, off it they stall. Of the ten tight searches the rounds ended in runs of
#: pg (n = 100 … 500) and ACCPM (n = 100, 200) on USPS 3 vs 5 (ρ = 0.1, 1, 10; absolute 0.1 … 0.001),
#: the rule keeps nine (37 → 3.3 → proven, 71 → 3.9 → 1.1 → proven); at pg's checks at n = 500 the
#: rounds ended none and took 28–33 % of the searches' time (100 → 95 → 91 → 89), where the next
#: solve's point is time better spent.
ROUND_PROGRESS = 0.5
#: libsvm's tolerance on the formed kernel and its cap in iterations per variable; under a time
#: budget a first call of at most ``LIBSVM_PROBE`` iterations per variable measures libsvm's rate, and
#: a second, where the first stopped at its cap, gets what ``LIBSVM_TIME_SHARE`` of the seconds left
#: allows (:func:`_libsvm_beta`).
LIBSVM_TOLERANCE, LIBSVM_CAP, LIBSVM_PROBE, LIBSVM_TIME_SHARE = 1e-3, 100, 20, 0.5
#: The exact solves of the machine on a formed kernel after libsvm's, in turn, each ``solve(problem,
#: K, budget) -> x`` (a point of A, or None where it fails or no time is left): HiGHS's active-set
#: method and the interior-point method, registered by :mod:`indkernel.solvers.models` (the core
#: imports no QP solver).
EXACT_SOLVES: list[Callable[..., np.ndarray | None]] = []


@dataclass(frozen=True)
class FixedKernelBound:
    """What :func:`fixed_kernel_bound` found.

    Attributes
    ----------
    v : (dim of u,) array, the best primal point β in the oracle's space (``u(α)`` if nothing beat it).
    gain : float
        ``q(x) - q(α) >= 0`` at the best dual point x: a lower bound on the exact natural gap
        ``U*(α) - f(α)`` (up to round-off).
    x : (dim,) array, that dual point (α if nothing beat it): a start for the next bound at a nearby α.
    """

    v: np.ndarray
    gain: float
    x: np.ndarray


class _Search:
    """The solve of ``max_{x ∈ A} q(x)``: the current point (x, v = u(x), Kv), its gain
    ``q(x) - q(α)``, the best dual point so far (``best_x``, its gain ``gain``) and the best primal
    point (``best`` its bound with its round-off); ``bound``: the current point's own."""

    def __init__(self, problem, point: ProxyPoint, alpha: np.ndarray, free_bound: float):
        from .certificate import primal_bound  # the certificate imports this module

        self.problem, self.point, self._primal_bound = problem, point, primal_bound
        self.machine = problem.machine
        self.q_alpha = self.machine.dual_term(alpha) - 0.5 * float(point.u @ point.Ku)
        self.best_v, self.best, self.bound, self.gain = point.u, free_bound, free_bound, 0.0
        self.x, self.v, self.Kv, self.best_x = alpha, point.u, point.Ku, alpha
        self.g = self.machine.dual_term_gradient(alpha) - problem.oracle_u_adjoint(point.Ku)
        self.L, self.curvature = problem.curvature_estimate(), 0.0
        self.diagonal = problem.feasible.diameter or 1.0

    def move_to(self, x: np.ndarray, v: np.ndarray, Kv: np.ndarray) -> None:
        """Make the feasible x (with ``v = u(x)``, ``Kv = Kv``) the current point; score it."""
        self.x, self.v, self.Kv = x, v, Kv
        self.g = self.machine.dual_term_gradient(x) - self.problem.oracle_u_adjoint(Kv)
        gain = self.machine.dual_term(x) - 0.5 * float(v @ Kv) - self.q_alpha
        if gain > self.gain:
            self.gain, self.best_x = gain, x
        self.score(v, Kv)

    def score(self, v: np.ndarray, Kv: np.ndarray) -> None:
        """Keep v if its primal bound (with its round-off) is the best so far."""
        with np.errstate(over="ignore", invalid="ignore"):  # a Newton point of a vanishing kernel: huge
            error = self.point.product_error * safe_norm(v)
            bound = sum(self._primal_bound(self.problem, self.point, v, Kv, error)[:2])
        self.bound = bound
        if bound < self.best:
            self.best_v, self.best = v, bound

    def step(self, d: np.ndarray) -> float:
        """Move by d if q grows (exactly: ``gᵀd - ½(Ud)ᵀK(Ud) - ½dᵀDd``); the growth (<= 0: not moved)."""
        w = self.problem.oracle_u(d)
        Kw = self.point.multiply(w)
        dKd = float(w @ Kw) + self._quadratic(d)
        change = float(self.g @ d) - 0.5 * dKd
        if change > 0.0:
            self.move_to(self.x + d, self.v + w, self.Kv + Kw)
            dd = float(d @ d)
            self.curvature = dKd / dd if dd > 0 else 0.0
        return change

    def _quadratic(self, d: np.ndarray) -> float:
        """``dᵀDd`` of ℓ's quadratic part (0 for a linear ℓ)."""
        return 0.0 if self.machine.curvature is None else float(self.machine.curvature @ (d * d))

    def gradient_projection(self) -> bool:
        """``p_A(x + g/L)``, doubling L until q grows (it picks the face), the next L from the
        curvature along the step (Barzilai–Borwein); False if x is stationary."""
        # a step longer than the box's diagonal only overflows (a vanishing kernel has L ~ 0)
        self.L = max(self.L, float(np.linalg.norm(self.g)) / self.diagonal)
        for _ in range(MAX_HALVINGS):
            d = self.problem.feasible.project(self.x + self.g / self.L) - self.x
            if not float(self.g @ d) > 0:
                return False
            if self.step(d) > 0:
                self.L = max(self.curvature, 1e-12 * self.problem.curvature_estimate())
                return True
            self.L *= 2.0
        return False

    def newton(self, cg_steps: int) -> None:
        """Newton–CG on the free variables of x, in the hyperplane (its point scored as it is,
        off the box), then the projected search ``p_A(x + tδ)``, t = 1, ½, ..."""
        problem, point = self.problem, self.point
        feasible = problem.feasible
        free = (self.x > feasible.lo) & (self.x < feasible.hi)
        if np.count_nonzero(free) < 2:
            return
        project = on_hyperplane(feasible.a[free])
        step_vector = np.zeros(problem.dim)

        quadratic = None if self.machine.curvature is None else self.machine.curvature[free]

        def system(direction: np.ndarray):
            step_vector[free] = direction  # below the product's round-off the curvature is noise
            w = problem.oracle_u(step_vector)
            Kw = self.point.multiply(w)
            product = problem.oracle_u_adjoint(Kw)[free]
            if quadratic is not None:
                product = product + quadratic * direction
            return product, point.product_error * float(w @ w), (w, Kw)

        residual = project(self.g[free])
        cg_target = CG_RESIDUAL * float(np.linalg.norm(residual))
        delta = np.zeros(problem.dim)
        v, Kv = self.v, self.Kv
        for step, direction, (w, Kw), residual_norm in tangent_cg(system, residual, project, cg_steps):
            delta[free] += step * direction
            v, Kv = v + step * w, Kv + step * Kw
            if residual_norm <= cg_target:
                break
        if not np.any(delta):
            return
        self.score(v, Kv)  # the primal bound holds for any β
        t = 1.0
        for _ in range(MAX_HALVINGS):
            if self.step(feasible.project(self.x + t * delta) - self.x) > 0:
                return
            t /= 2


def fixed_kernel_bound(problem, alpha: np.ndarray, point: ProxyPoint, lower: float, free_bound: float,
                       floor: float, target: float = 0.0, *, max_rounds: int = NEWTON_ROUNDS, cg_steps: int = CG_STEPS,
                       formed: bool = True, budget=None, start: np.ndarray | None = None) -> FixedKernelBound:
    """The smallest primal bound found on ``max_{x ∈ A} q(x)`` from x = α (module docstring):
    Newton–CG rounds, then (``formed=True``) libsvm and the exact solves on the formed K*,
    each of their points polished by Newton–CG rounds (before the next solve only while they make
    progress, ``ROUND_PROGRESS``), until the bound is proven within ``TIGHTNESS`` of the natural gap
    or within ``target`` of ``f(α)``.

    Parameters
    ----------
    lower : float, ``f(α)`` (the dual at α, up to the constant penalty).
    free_bound : float, the primal bound at ``β = u(α)`` with its round-off allowance.
    floor : float
        The round-off allowance of the bracket: a gap within it needs no proof of tightness.
    target : float
        A gap above ``f(α)`` the caller is content with (a solver's tolerance): no need to prove
        more; where the natural gap may be below it, tightness is proven to a tenth of
        ``TIGHTNESS - 1`` so that the bound reaches it too.
    max_rounds, cg_steps : int
        The Newton–CG budget (rounds from each point); the cheap ``"refined"`` certificate is a few
        rounds of few steps without the formed kernel's solves.
    formed : bool
        Whether the machine may be solved on the formed K* (not for an oracle whose K* lives on a device).
    budget : callable, optional
        ``budget()``: the seconds left (a run's time limit); at 0 or below the search ends with
        the best bound so far, and the formed kernel's solves are capped to fit in it (module docstring).
    start : (dim,) array, optional
        A point of A to go on from where q is larger than at α: the dual point of the bound at
        a nearby α (a run's previous check), near this one's maximizer too.
    """
    search = _Search(problem, point, alpha, free_bound)
    if start is not None:
        search.step(start - alpha)  # moves there only if q grows

    def tight() -> bool:  # good enough, or proven tight (where the target may still be reached: tighter), or no time
        if budget is not None and budget() <= 0:
            return True
        gap, gain = search.best - lower, search.gain
        if gap <= max(target, NOISE_MULTIPLE * floor):
            return True
        return gap <= (TIGHTNESS if gain > target else 1.0 + (TIGHTNESS - 1.0) / 10) * gain + floor

    def polish(solve_next: bool) -> None:
        distance = np.inf
        for _ in range(max_rounds):
            if tight() or not search.gradient_projection():
                return
            search.newton(cg_steps)
            last, distance = distance, (search.best - lower) / search.gain if search.gain > 0 else np.inf
            if solve_next and not distance < ROUND_PROGRESS * last:
                return  # stalled: off the maximizer's face

    solves = (_libsvm_point, *EXACT_SOLVES) if formed else ()
    polish(bool(solves))
    if solves and not tight():
        K = problem.proxy_kernel(alpha)
        for k, solve in enumerate(solves):
            x = solve(problem, K, budget)
            if x is None:
                continue
            v = problem.oracle_u(x)
            search.move_to(x, v, search.point.multiply(v))
            polish(k < len(solves) - 1)
            if tight():
                break
    return FixedKernelBound(v=search.best_v, gain=float(search.gain), x=search.best_x)


def _libsvm_point(problem, K: np.ndarray, budget) -> np.ndarray | None:
    """libsvm's solution on K at ``LIBSVM_TOLERANCE``, onto A; None where libsvm refuses
    (non-finite coefficients at extreme ν or C)."""
    try:
        beta = _libsvm_beta(problem, K, budget)
    except ValueError:
        return None
    return problem.from_dual_coef(beta)


def _libsvm_beta(problem, K: np.ndarray, budget) -> np.ndarray:
    """libsvm's β on K at ``LIBSVM_TOLERANCE``, whose point is to find the face
    (``figures/formed_solves.py``): at most 16 iterations per point in every check of pg, apg and
    ACCPM on USPS, a median of 26 in the stress family's closing certificates, where at C >= 1e4
    with spread weights it reached 100 per point in 16 checks, up to a million iterations (up to
    2.6 s at n = 300), and the interior-point solve ran after it all the same in 11 of them (with
    a million iterations as the cap): so it stops at ``LIBSVM_CAP`` iterations per variable.
    Under a budget, a first call runs at most ``LIBSVM_PROBE`` iterations per variable; where it
    stops there, libsvm runs again with the cap that ``LIBSVM_TIME_SHARE`` of the seconds left
    allows at the rate the probe measured (at most the cap)."""
    cap = LIBSVM_CAP * problem.dim
    if budget is None:
        return problem.machine.libsvm_beta(K, LIBSVM_TOLERANCE, cap)[0]
    probe = min(cap, LIBSVM_PROBE * problem.dim)
    started = time.perf_counter()
    beta, capped = problem.machine.libsvm_beta(K, LIBSVM_TOLERANCE, probe)
    if capped:
        rate = probe / max(time.perf_counter() - started, 1e-9)  # iterations per second
        retry = min(cap, int(LIBSVM_TIME_SHARE * rate * budget()))
        if retry > probe:
            beta, _ = problem.machine.libsvm_beta(K, LIBSVM_TOLERANCE, retry)
    return beta
