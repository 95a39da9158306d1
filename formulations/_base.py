"""The object every factory returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from .solvers import time_limit_options

#: SCS's status after it caught SIGINT: its interrupt listener takes Ctrl-C from Python, and cvxpy
#: reports the status as a failure (``SolverError``), so the status is read before cvxpy maps it.
SCS_INTERRUPTED = -5


@dataclass(frozen=True)
class Formulation:
    """A cvxpy model, built and never solved.

    Attributes
    ----------
    problem : cvxpy.Problem
    variables : dict of name -> cvxpy.Variable
    parameters : dict of name -> cvxpy.Parameter (set ``.value`` and re-solve the same model)
    """

    problem: cp.Problem
    variables: dict[str, cp.Variable]
    parameters: dict[str, cp.Parameter] = field(default_factory=dict)

    def solve(self, *, budget: Callable[[], float | None] | None = None, **kwargs) -> float:
        """Solve (keywords go to ``cvxpy.Problem.solve``) and return the optimal value.

        ``budget()``, if given, is asked for the seconds left once cvxpy has compiled the model
        (None: no limit), and the solver gets them through its own time limit
        (:func:`formulations.solvers.time_limit_options`); with none left the solver never starts
        (:class:`formulations.solvers.OutOfTime`). So a caller's limit is overrun by one
        compilation at most, not by the compilation and a whole solve.

        Raises RuntimeError unless the solver reports an optimal (possibly inaccurate) solution,
        also when the solver panics (Clarabel's Rust ``PanicException`` is not an ``Exception``);
        KeyboardInterrupt when the user interrupts the solver (SCS included, which catches Ctrl-C).
        One limit is SCS's own: during its setup (its factorization, before its first iteration)
        SCS takes SIGINT and forgets it when its iterations start, so a Ctrl-C there is lost and
        a second one is needed.
        """
        try:
            self._solve(budget=budget, **kwargs)
        except Exception:
            raise
        except BaseException as exc:
            if type(exc).__name__ != "PanicException":
                raise  # KeyboardInterrupt, SystemExit
            raise RuntimeError(f"the solver panicked: {exc}") from exc
        if self.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"the solver ended with status {self.problem.status!r}")
        return float(self.problem.value)

    def solution(self, name: str) -> np.ndarray:
        """The value of the variable ``name`` after :meth:`solve`; RuntimeError before."""
        value = self.variables[name].value
        if value is None:
            raise RuntimeError(f"the variable {name!r} has no value: solve the model first")
        return np.asarray(value)

    def _solve(self, solver=None, verbose: bool = False, budget=None, **options) -> None:
        if solver != cp.SCS and budget is None:
            self.problem.solve(solver=solver, verbose=verbose, **options)
            return
        data, chain, inverse = self.problem.get_problem_data(solver, solver_opts=options)
        if budget is not None:  # in place: the inverse data keeps this dict, as cvxpy's own solve does
            options.update(time_limit_options(chain.solver.name(), budget()))
        raw = chain.solve_via_data(self.problem, data, verbose=verbose, solver_opts=options)
        if chain.solver.name() == cp.SCS:  # its raw answer is a dict with SCS's own status
            info = raw.get("info", {})
            if info.get("status_val", info.get("statusVal")) == SCS_INTERRUPTED:
                raise KeyboardInterrupt("interrupted inside SCS")
        self.problem.unpack_results(raw, chain, inverse)
