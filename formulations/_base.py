"""The object every factory returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp


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

    def solve(self, **kwargs) -> float:
        """Solve (keywords go to ``cvxpy.Problem.solve``) and return the optimal value.

        Raises RuntimeError unless the solver reports an optimal (possibly inaccurate) solution,
        also when the solver panics (Clarabel's Rust ``PanicException`` is not an ``Exception``).
        """
        try:
            self.problem.solve(**kwargs)
        except Exception:
            raise
        except BaseException as exc:
            if type(exc).__name__ != "PanicException":
                raise  # KeyboardInterrupt, SystemExit
            raise RuntimeError(f"the solver panicked: {exc}") from exc
        if self.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"the solver ended with status {self.problem.status!r}")
        return float(self.problem.value)
