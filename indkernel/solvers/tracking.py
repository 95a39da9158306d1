"""Book-keeping shared by every solver: certify, keep the best bounds, record, decide when to stop.

A method only moves α; :class:`Run` turns each point it offers into certified bounds (the best
lower bound with its α, the smallest valid upper bound), a history row, a progress report and
the stop decision (certified gap within tolerance, ``max_iter`` or ``time_limit``).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numba.extending import register_jitable
from sklearn.exceptions import ConvergenceWarning

from .._progress import tqdm
from .._validation import check_positive_scalar
from ..core.certificate import BOUNDS, Certificate
from ..core.feasible_set import FeasibleSet
from .result import SolveResult

#: Where the round-off allowance alone exceeds the target, a gap within this many allowances ends
#: the run (status "roundoff") once the iterates stall: the objective values a method compares are
#: as noisy as that.
ROUNDOFF_MULTIPLE = 4


@register_jitable
def gap_measure(gap: float, scale: float, allowance: float, absolute: bool) -> float:
    """:attr:`Run.gap_measure` of a bracket with this gap, scale and round-off allowance (compiled
    loops stop on it too)."""
    if gap <= 0 or absolute:
        return gap
    if scale > 0:
        return gap / scale
    return 0.0 if gap <= ROUNDOFF_MULTIPLE * allowance else np.inf


@register_jitable
def near_roundoff(gap: float, allowance: float, target: float) -> bool:
    """Whether a bracket is as close as round-off lets it be: its allowance reaches the target and its gap is
    within ``ROUNDOFF_MULTIPLE`` allowances (a run whose points stall there ends "roundoff")."""
    return allowance >= target and gap <= ROUNDOFF_MULTIPLE * allowance


class SolveError(RuntimeError):
    """A run ended before it had certified any point, so there is no solution to return."""


class _Silent:
    """The progress reporter that reports nothing (so loops carry no ``if verbose`` branches)."""

    def update(self, n=1):
        pass

    def set_postfix_str(self, s):
        pass

    def close(self):
        pass


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def iteration_cap(max_iter, default: int) -> int | None:
    """``max_iter`` as :func:`indkernel.solve` takes it, decoded once: None is the method's
    ``default``, -1 no limit (returned as None), else a positive integer."""
    if max_iter is None:
        return default
    if isinstance(max_iter, (int, np.integer)) and not isinstance(max_iter, bool) and max_iter == -1:
        return None
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, -1 (no limit) or None (the method's default); "
                         f"got {max_iter!r}")
    return int(max_iter)


@dataclass(frozen=True)
class CheckState:
    """What a ``callback`` of :func:`indkernel.solve` is given after each certified check (as
    ``scipy.optimize``'s ``intermediate_result``).

    Attributes
    ----------
    iteration : int, the iterations behind the point (0: the start), as the history's column.
    seconds : float, since the call.
    alpha : (n,) array, the point just certified (a copy: the callback may keep it).
    certificate : Certificate, that point's own bracket (``certificate.lower`` is f(alpha) less its
        round-off allowance).
    lower, upper : float, the run's certified bracket so far (the best of every check).
    gap : float, ``upper - lower``.
    relative_gap : float, the gap as ``tol`` measures it (relative unless ``absolute=True``).
    label : str or None, the problem's name (a binary problem of a multiclass fit).
    """

    iteration: int
    seconds: float
    alpha: np.ndarray
    certificate: Certificate
    lower: float
    upper: float
    gap: float
    relative_gap: float
    label: str | None = None


class Certifiable(Protocol):
    """What a run needs of its problem: an :class:`indkernel.IndefiniteProblem`, or another concave
    maximization over a box cut by a hyperplane with a certificate of its own (the Mod SVM's dual,
    :class:`indkernel.core.mod_svm.ModSVMDual`)."""

    @property
    def feasible(self) -> FeasibleSet: ...

    @property
    def oracle(self) -> object: ...  # its ``fallbacks`` are counted, if it has any

    def objective_at(self, alpha: np.ndarray) -> float: ...

    def certify_iterate(self, alpha: np.ndarray, bound: str, target: float, budget=None, start=None) -> Certificate: ...


class Run:
    """One solver run on one problem.

    Parameters
    ----------
    problem : Certifiable (an IndefiniteProblem)
    method : str, the method's name (for the result and messages).
    tol : float
        Target on the certified gap, relative to the best point's scale unless ``absolute=True``
        (:meth:`target` is the absolute gap that meets it).
    max_iter : int or None, the iteration cap (None: no limit; :func:`iteration_cap` decodes ``solve``'s).
    time_limit : float or None, seconds.
    bound : str
        The bound of the run's checks (:meth:`IndefiniteProblem.certify`): ``"free"``,
        ``"refined"`` or ``"tight"``. A run that does not converge with it ends with the tight one.
    verbose : bool, a tqdm progress bar.
    label : str or None, a name of the problem for the bar and the ConvergenceWarning.
    callback : callable or None
        ``callback(state)`` after each certified check, ``state`` a :class:`CheckState`; a true
        return value ends the run (status ``"callback"``) unless the check already ended it.
    """

    def __init__(self, problem: Certifiable, method: str, *, tol: float = 1e-6, absolute: bool = False,
                 max_iter: int | None = 1000, time_limit: float | None = None, bound: str = "tight",
                 verbose: bool = False, label: str | None = None,
                 callback: Callable[[CheckState], object] | None = None):
        self.problem, self.method = problem, method
        self.tol = check_positive_scalar(tol, "tol", "the tolerance on the certified gap")
        self.absolute = bool(absolute)
        self.max_iter = None if max_iter is None else _positive_int(max_iter, "max_iter")
        self.time_limit = None if time_limit is None else check_positive_scalar(
            time_limit, "time_limit", "seconds before the run stops")
        if bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS} (the bound of each check, cheapest first); got {bound!r}")
        self.bound = bound
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be a function of one argument (the state after each check) or None; "
                            f"got {type(callback).__name__}")
        self.callback = callback
        #: The certificate of the best α (the run's ``alpha``).
        self.certificate: Certificate | None = None
        self._tight = False
        self._dual_point: np.ndarray | None = None  # of the last refined or tight bound (``_certify``)
        self.alpha: np.ndarray | None = None
        self.lower, self.upper, self.scale, self.allowance = -np.inf, np.inf, 0.0, 0.0
        self._lower_allowance = self._upper_allowance = 0.0
        self.status: str | None = None
        self.reason: str | None = None
        self.iteration = self.completed = 0
        self._rows: list[tuple] = []
        self.details: dict = {}
        self._fallbacks = getattr(problem.oracle, "fallbacks", 0)
        self.label = label
        # no total: the bar counts iterations and shows the certified gap, not an estimate to max_iter
        self._reporter = tqdm(desc=label or method, unit=" it", leave=False) if verbose else _Silent()
        self._start = time.perf_counter()
        #: Seconds of the setup before the first iteration (the oracle's eigendecomposition of K0).
        self.setup_seconds = 0.0

    # ----- the loop -------------------------------------------------------------------------
    def iterations(self):
        """Yield 0, 1, 2, ... until the run has converged or hit ``max_iter`` or ``time_limit``; a
        second loop over the same run (a method that hands over to another) goes on counting.

        A point certified during iteration k is the result of k + 1 steps, and the history labels
        it so; one certified before the loop is the start, iteration 0."""
        k = self.completed
        while self.status is None:
            self.iteration = k  # after the loop: the number of iterations done
            if self.max_iter is not None and k >= self.max_iter:
                self._stop("max_iter", f"stopped at max_iter={self.max_iter} before the certified gap reached tol")
            elif self.out_of_time:
                self._stop("time_limit", f"stopped at time_limit={self.time_limit:g} s before the certified gap reached tol"
                           + self._time_spent())
            else:
                self.completed = k + 1
                yield k
                k += 1
                self._reporter.update()

    def observe(self, alpha: np.ndarray, bound: str | None = None) -> bool:
        """Certify the feasible ``alpha`` (with ``bound``, default the run's), keep the best bounds,
        record a history row.

        Returns True once the run is over: the certified gap is within tolerance (status
        ``"optimal"``), only round-off keeps it above (``"roundoff"``), or the point or its
        certificate is not finite (``"numerical_error"``).
        """
        if not self.finite(alpha, "the iterate"):
            return True
        bound = self.bound if bound is None else bound
        return self._record(self._certify(alpha, bound), alpha, bound == "tight")

    def observe_certified(self, alpha: np.ndarray, certificate: Certificate, clock: float) -> bool:
        """:meth:`observe` of a point that compiled code certified already (with the run's free bound)
        when ``time.perf_counter()`` read ``clock``; the same bookkeeping and stop decision."""
        if not self.finite(alpha, "the iterate"):
            return True
        return self._record(certificate, alpha, False, clock - self._start)

    def goal(self) -> tuple:
        """What a compiled loop needs to stop where :meth:`observe` would end the run on a converged
        gap, and to hand back to Python near round-off: ``(tol, absolute, lower, upper, scale, the
        allowances of the points that give lower and upper)``."""
        return (float(self.tol), self.absolute, float(self.lower), float(self.upper), float(self.scale),
                float(self._lower_allowance), float(self._upper_allowance))

    def check(self, alpha: np.ndarray) -> bool:
        """:meth:`observe` with the run's bound, escalated to the tight one wherever that could end
        the run: where the cheaper certificate falls short of the tolerance but its proven floor on
        the exact natural gap (``Certificate.natural_gap_floor``) leaves room for it. So a check
        stops where a tight check would, at the cheaper bound's price elsewhere."""
        if not self.finite(alpha, "the iterate"):
            return True
        certificate, tight = self._certify(alpha, self.bound), self.bound == "tight"
        if not tight and self.bound != "free":
            # the gap the run accepts, whichever of the best α and this one gives the scale
            room = self.target(max(self.scale, certificate.scale))
            short = min(self.upper, certificate.upper) - max(self.lower, certificate.lower) > room
            # the tight bound at α is at least f(α) + the floor, the lower bound then at least f(α)'s
            floor = self.problem.objective_at(alpha) + certificate.natural_gap_floor - max(self.lower, certificate.lower)
            if short and floor <= room:
                certificate, tight = self._certify(alpha, "tight"), True
        return self._record(certificate, alpha, tight)

    def _certify(self, alpha: np.ndarray, bound: str, warm: bool = True):
        """The certificate at α, its bound solved no further than the gap above f(α) that would end
        the run (the tolerance above the best lower bound so far), going on (``warm``) from the
        dual point of the run's last refined or tight bound: near the maximizer at α too, it proves
        a natural gap above the tolerance (no escalation to the tight bound) for the price of one
        product with K*(α), and a tight check often without the formed kernel's solves."""
        target = 0.0
        if bound != "free" and (self.absolute or self.scale > 0):  # (the free bound solves nothing)
            target = self.target() + max(self.lower - self.problem.objective_at(alpha), 0.0)
        budget = None if self.time_limit is None else self.seconds_left
        certificate = self.problem.certify_iterate(alpha, bound, target, budget, self._dual_point if warm else None)
        if certificate.dual_point is not None:
            self._dual_point = certificate.dual_point
        return certificate

    def _record(self, certificate: Certificate, alpha: np.ndarray, tight: bool, seconds: float | None = None) -> bool:
        """Keep the certificate's bounds if they are better, add a history row (at ``seconds``, default
        now), decide the stop."""
        if not self.finite(np.array([certificate.lower, certificate.upper]), "the certificate"):
            return True
        again = self.alpha is not None and np.array_equal(alpha, self.alpha)
        previous_lower, first = self.lower, not self._rows
        if certificate.lower > self.lower or again:
            # the same α certified again (a tighter bound) keeps the better of its two lower bounds:
            # the rank-one oracle's allowance is measured along a random probe, so it varies
            self.lower = max(certificate.lower, self.lower if again else -np.inf)
            self.alpha, self.scale = np.array(alpha, copy=True), certificate.scale
            self.certificate, self._tight, self._lower_allowance = certificate, tight, certificate.allowance
        if certificate.upper <= self.upper:
            self.upper, self._upper_allowance = certificate.upper, certificate.allowance
        # the round-off of the bracket: of the points that give its ends, not of the last one
        self.allowance = max(self._lower_allowance, self._upper_allowance)
        # one row per iteration (the number of steps behind the point): its last check's best bracket
        row = (self.completed, self.seconds if seconds is None else seconds, self.lower, self.upper,
               self.upper - self.lower, self.scale)
        if self._rows and self._rows[-1][0] == self.completed:
            self._rows[-1] = row
        else:
            self._rows.append(row)
        self._reporter.set_postfix_str(f"gap {self.upper - self.lower:.2e}")
        kind = "absolute" if self.absolute else "relative"
        if self.converged:  # certified: this overrides a max_iter or time_limit stop
            self.status, self.reason = "optimal", f"certified {kind} gap {self.gap_measure:.2e} <= tol={self.tol:g}"
        elif near_roundoff(self.upper - self.lower, self.allowance, self.target()) \
                and self._stalled(first, self.lower - previous_lower):
            self.status, self.reason = "roundoff", (
                f"the certified {kind} gap {self.gap_measure:.2e} cannot reach tol={self.tol:g} in floating point: "
                f"the gap {self.upper - self.lower:.3g} is within {ROUNDOFF_MULTIPLE} times the floating-point allowance "
                f"{self.allowance:.3g} "
                f"(scale of the objective {self.scale:.3g}); pass absolute=True with tol >= "
                f"{self.upper - self.lower:.2g}, or rescale K0")
        if self.callback is not None and self._callback_stops(certificate, alpha):
            self._stop("callback", f"stopped by the callback after the check at iteration {self.completed}")
        return self.status is not None

    def _callback_stops(self, certificate: Certificate, alpha: np.ndarray) -> bool:
        assert self.callback is not None
        state = CheckState(iteration=self.completed, seconds=self.seconds, alpha=np.array(alpha, copy=True),
                           certificate=certificate, lower=float(self.lower), upper=float(self.upper),
                           gap=float(self.upper - self.lower), relative_gap=float(self.gap_measure), label=self.label)
        return bool(self.callback(state))

    def _stalled(self, first: bool, gain: float) -> bool:
        """Whether round-off can be blamed for the gap: the last point gained no more than the
        allowance over the best before it, or no iteration is left. Not at a run's first point
        (unless it is its only one): far from the optimum the allowance grows with the objective's
        size (the squared hinge's start at C = 1e4 has f = -1e18), and the iterations shrink both."""
        no_more = self.max_iter is not None and self.iteration + 1 >= self.max_iter
        return no_more or (not first and gain <= self.allowance)

    def finite(self, values, what: str) -> bool:
        """True if every value is finite; otherwise end the run (status ``"numerical_error"``)."""
        if np.all(np.isfinite(values)):
            return True
        self._stop("numerical_error", f"{what} became NaN or infinite at iteration {self.iteration}: the "
                   "problem's scale overflows floating point (rescale K0, C or rho)")
        return False

    @property
    def out_of_time(self) -> bool:
        """True once ``time_limit`` has passed (for a method's inner loops)."""
        return self.seconds_left() < 0

    def seconds_left(self) -> float:
        """Seconds until ``time_limit`` (inf without one; negative once past it)."""
        return np.inf if self.time_limit is None else self.time_limit - self.seconds

    def stop_for_time(self) -> bool:
        """In a method's inner loop: end the run at ``time_limit``; True if it ended."""
        if self.out_of_time:
            self._stop("time_limit", f"stopped at time_limit={self.time_limit:g} s inside iteration {self.iteration}"
                       + self._time_spent())
        return self.status is not None

    def _time_spent(self) -> str:
        """What the clock counted: the run so far, and the setup when it alone took the time."""
        text = f" ({self.seconds:.3g} s since the call"
        if self.time_limit is not None and self.setup_seconds > self.time_limit:
            text += (f"; the setup alone, the eigendecomposition of K0, took {self.setup_seconds:.3g} s: time_limit "
                     "counts it but cannot interrupt it")
        return text + ")"

    def fail(self, status: str, reason: str) -> None:
        """End the run for a method-specific reason (a solver failure, a stall)."""
        self._stop(status, reason)

    # ----- state ----------------------------------------------------------------------------
    @property
    def seconds(self) -> float:
        return time.perf_counter() - self._start

    @property
    def remaining(self) -> float | None:
        """Seconds left before ``time_limit`` (None without one), for methods that call a solver
        which takes a time limit of its own."""
        return None if self.time_limit is None else max(self.time_limit - self.seconds, 0.0)

    def target(self, scale: float | None = None) -> float:
        """The absolute gap the run is content with: ``tol``, or for a relative gap ``tol`` times
        ``scale`` (default: the scale ``|ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)`` of the best α,
        ``Certificate.scale``). Every method's stopping test and inner tolerance derive from it."""
        return self.tol if self.absolute else self.tol * (self.scale if scale is None else scale)

    @property
    def gap_measure(self) -> float:
        """The gap, relative to ``scale`` unless absolute. Where the α-dependent part is identically
        0 (α = 0) a relative gap has nothing to be relative to: a bracket exact to round-off (within
        ``ROUNDOFF_MULTIPLE`` allowances: p* = f(0) to the last digits) counts as 0, any other as inf."""
        return self._measure(self.upper - self.lower, self.scale, self.allowance)

    def _measure(self, gap: float, scale: float, allowance: float) -> float:
        """:attr:`gap_measure` of a bracket with this gap, scale and round-off allowance."""
        return gap_measure(gap, scale, allowance, self.absolute)

    @property
    def converged(self) -> bool:
        return self.gap_measure <= self.tol

    def _snap(self) -> None:
        """The optimal α with its coordinates at round-off distance from a bound set to the bound
        (:meth:`indkernel.core.feasible_set.FeasibleSet.snapped`), if the snapped point's own
        certificate keeps the run within the tolerance: it becomes the result, its lower bound
        ``f(α)`` (round-off below the best seen), so the support is libsvm's, not every coordinate
        that round-off left at 1e-16."""
        assert self.alpha is not None
        snapped = self.problem.feasible.snapped(self.alpha)
        if snapped is None:
            return
        certificate = self._certify(snapped, "free")
        upper, scale = min(self.upper, certificate.upper), certificate.scale
        if upper - certificate.lower <= self.target(scale):
            self.alpha, self.lower, self.upper, self.scale = snapped, certificate.lower, upper, scale
            self.certificate = certificate  # the history keeps the best bounds seen: no row

    def _settle_at_snapped_point(self) -> None:
        """A run that ended short of tol (its method failed or stalled) where its best α is within
        round-off of a bound, so the α-dependent scale nearly vanishes there (ACCPM's centers
        approaching α = 0, where ε holds every target in the SVR's tube): the snapped point's own
        tight certificate, if it meets tol alone, becomes the result ("optimal")."""
        assert self.alpha is not None
        snapped = self.problem.feasible.snapped(self.alpha)
        if snapped is None:
            return
        certificate = self._certify(snapped, "tight")
        measure = self._measure(min(self.upper, certificate.upper) - certificate.lower, certificate.scale,
                                certificate.allowance)
        if measure <= self.tol:
            self.alpha, self.scale, self.certificate = snapped, certificate.scale, certificate
            self.lower, self.upper = certificate.lower, min(self.upper, certificate.upper)
            self.allowance = certificate.allowance
            self.status, self.reason = "optimal", (
                f"certified {'absolute' if self.absolute else 'relative'} gap {measure:.2e} <= tol={self.tol:g} at the "
                f"best point with its coordinates at round-off from a bound set to the bound (the method: {self.reason})")

    def _stop(self, status: str, reason: str) -> None:
        if self.status is None:
            self.status, self.reason = status, reason

    def result(self, warn: bool = True) -> SolveResult:
        """The result. A run that did not converge with its checks' bound (and has time left: the
        tight bound's solve also ends with the time limit, with its best bound so far) gets
        the tight certificate at its best α (:meth:`IndefiniteProblem.certify`, ``bound="tight"``), which may
        end it "optimal" after all (a history row where it tightens the bracket); not after a
        callback's stop. A ConvergenceWarning if still short (unless ``warn=False``: a caller with
        its own message, or a callback's stop, which the caller asked for)."""
        if self.alpha is not None and not self._tight and not self.out_of_time and \
                self.status not in ("optimal", "numerical_error", "time_limit", "callback"):
            stop, upper, rows = (self.status, self.reason), self.upper, list(self._rows)
            self.status = None  # the tight check decides anew; its bounds only add to the run's
            self._record(self._certify(self.alpha, "tight", warm=False), self.alpha, True)  # certify's own
            if self.upper == upper:
                self._rows = rows  # nothing gained: the history as it was
            if self.status != "optimal":
                self.status, self.reason = stop
                self._settle_at_snapped_point()
        if self.status == "optimal":
            self._snap()
        self._reporter.close()
        if self.alpha is None:
            raise SolveError(f"{self.method} stopped before its first certified point ({self.status}): {self.reason}")
        if self.status not in ("optimal", "callback") and warn:  # a callback's stop is the caller's own
            warnings.warn(f"{self.label + ': ' if self.label else ''}{self.method}: {self.reason}; gap {self.upper - self.lower:.3e} "
                          "(raise max_iter or time_limit, or loosen tol)", ConvergenceWarning, stacklevel=3)
        assert self.status is not None and self.reason is not None  # iterations() always ends with a stop
        return SolveResult(alpha=self.alpha, lower=float(self.lower), upper=float(self.upper), status=self.status,
                           stop_reason=self.reason, iterations=self.completed, seconds=self.seconds,
                           _history_rows=list(self._rows), method=self.method,
                           fallbacks=getattr(self.problem.oracle, "fallbacks", 0) - self._fallbacks,
                           details=self.details, scale=float(self.scale), certificate=self.certificate)
