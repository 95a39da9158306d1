"""Book-keeping shared by every solver: certify, keep the best bounds, record, decide when to stop.

A method only moves α; :class:`Run` turns each point it offers into certified bounds (the best
lower bound with its α, the smallest valid upper bound), a history row, a progress report and
the stop decision (certified gap within tolerance, ``max_iter`` or ``time_limit``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from tqdm.auto import tqdm

from ._validation import check_positive_scalar
from .problem import IndefiniteProblem
from .result import HISTORY_COLUMNS, SolveResult


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


class Run:
    """One solver run on one problem.

    Parameters
    ----------
    problem : IndefiniteProblem
    method : str, the method's name (for the result and messages).
    tol : float
        Target on the certified gap, relative to ``|lower|`` unless ``absolute=True``.
    max_iter : int
    time_limit : float or None, seconds.
    refine_every : int or None
        Refine with libsvm on the proxy kernel at most every this many certificates, once the
        gap is within 100x of the target (and always at the end of a run that has not
        converged); ``None`` never refines.
    verbose : bool, a tqdm progress bar.
    """

    def __init__(self, problem: IndefiniteProblem, method: str, *, tol: float = 1e-6, absolute: bool = False,
                 max_iter: int = 1000, time_limit: float | None = None, refine_every: int | None = 10,
                 verbose: bool = False):
        self.problem, self.method = problem, method
        self.tol = check_positive_scalar(tol, "tol", "the tolerance on the certified gap")
        self.absolute = bool(absolute)
        self.max_iter = _positive_int(max_iter, "max_iter")
        self.time_limit = None if time_limit is None else check_positive_scalar(
            time_limit, "time_limit", "seconds before the run stops")
        self.refine_every = None if refine_every is None else _positive_int(refine_every, "refine_every")
        self.alpha: np.ndarray | None = None
        self.lower, self.upper = -np.inf, np.inf
        self.status = self.reason = None
        self.iteration = self.completed = self._certificates = self._last_refined = 0
        self._rows = []
        self.details: dict = {}
        self._fallbacks = getattr(problem.oracle, "fallbacks", 0)
        self._reporter = tqdm(total=max_iter, desc=method, leave=False) if verbose else _Silent()
        self._start = time.perf_counter()

    # ----- the loop -------------------------------------------------------------------------
    def iterations(self):
        """Yield 0, 1, 2, ... until the run has converged or hit ``max_iter`` or ``time_limit``."""
        k = 0
        while self.status is None:
            self.iteration = k  # after the loop: the number of iterations done
            if k >= self.max_iter:
                self._stop("max_iter", f"stopped at max_iter={self.max_iter} before the certified gap reached tol")
            elif self.time_limit is not None and self.seconds > self.time_limit:
                self._stop("time_limit", f"stopped at time_limit={self.time_limit:g} s before the certified gap reached tol")
            else:
                self.completed = k + 1
                yield k
                k += 1
                self._reporter.update()

    def observe(self, alpha: np.ndarray, *, refine: bool | None = None) -> bool:
        """Certify the feasible ``alpha``, keep the best bounds, record a history row.

        Returns True (and sets the status) once the certified gap is within tolerance.
        """
        certificate = self.problem.certify(alpha)
        self._certificates += 1
        if refine or (refine is None and self._refine_now(certificate)):
            certificate = self.problem.certify(alpha, refine=True)  # the oracle's point is cached
            self._last_refined = self._certificates
        if certificate.lower > self.lower:
            self.alpha, self.lower = np.array(alpha, copy=True), certificate.lower
        self.upper = min(self.upper, certificate.upper)
        self._rows.append((self.iteration, self.seconds, self.lower, self.upper, self.upper - self.lower))
        self._reporter.set_postfix_str(f"gap {self.upper - self.lower:.2e}")
        if self.converged:  # certified: this overrides a max_iter or time_limit stop
            kind = "absolute" if self.absolute else "relative"
            self.status, self.reason = "optimal", f"certified {kind} gap {self.gap_measure:.2e} <= tol={self.tol:g}"
        return self.status == "optimal"

    def _refine_now(self, free) -> bool:
        """libsvm costs far more than the free certificate: refine at most every ``refine_every``
        certificates, and only once the gap is within 100x of the target (where the free bound
        lags) or after ``10 * refine_every`` certificates without a refinement."""
        if self.refine_every is None:
            return False
        since = self._certificates - self._last_refined
        lower = max(self.lower, free.lower)
        near = min(self.upper, free.upper) - lower <= 100 * self.tol * (1.0 if self.absolute else abs(lower))
        return since >= self.refine_every and (near or since >= 10 * self.refine_every)

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

    @property
    def gap_measure(self) -> float:
        gap = self.upper - self.lower
        return gap if self.absolute else gap / max(abs(self.lower), np.finfo(float).tiny)

    @property
    def converged(self) -> bool:
        return self.gap_measure <= self.tol

    def _stop(self, status: str, reason: str) -> None:
        if self.status is None:
            self.status, self.reason = status, reason

    def result(self) -> SolveResult:
        """The result; a run that did not converge gets one last refined certificate, and warns."""
        if self.status != "optimal" and self.alpha is not None and self.refine_every is not None:
            self.observe(self.alpha, refine=True)
        self._reporter.close()
        if self.status != "optimal":
            warnings.warn(f"{self.method}: {self.reason}; gap {self.upper - self.lower:.3e} "
                          "(raise max_iter or time_limit, or loosen tol)", ConvergenceWarning, stacklevel=3)
        return SolveResult(alpha=self.alpha, lower=float(self.lower), upper=float(self.upper), status=self.status,
                           stop_reason=self.reason, iterations=self.completed, seconds=self.seconds,
                           history=pd.DataFrame(self._rows, columns=HISTORY_COLUMNS), method=self.method,
                           fallbacks=getattr(self.problem.oracle, "fallbacks", 0) - self._fallbacks,
                           details=self.details)
