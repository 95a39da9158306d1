"""Which conic solvers can actually solve here, and how to ask them for accuracy."""

from __future__ import annotations

from functools import cache
from typing import Any

import cvxpy as cp
import numpy as np

#: The default solver, and the second opinion.
DEFAULT_SOLVER = "CLARABEL"
SECOND_OPINION = "SCS"

#: Settings for accurate solves, per solver (used by the cross-checks and the size table).
ACCURATE: dict[str, dict[str, Any]] = {
    "CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, tol_ktratio=1e-8, max_iter=500),
    "SCS": dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200_000),
    "MOSEK": dict(),
}

CANDIDATES = ("CLARABEL", "SCS", "MOSEK")

#: The time-limit setting of each conic solver (seconds; MOSEK's is one of its parameters).
TIME_LIMIT_SETTINGS = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}


class OutOfTime(RuntimeError):
    """The time budget of a solve ran out before its solver started (while cvxpy compiled the model)."""


def time_limit_options(solver: str, seconds: float | None) -> dict:
    """The options that give ``solver`` at most ``seconds`` (None: no limit; a solver without such
    a setting: none). Raises :class:`OutOfTime` if no time is left."""
    if seconds is None:
        return {}
    if not seconds > 0:
        raise OutOfTime("no time left for the solver once cvxpy had compiled the model")
    if solver == "MOSEK":
        return {"mosek_params": {"MSK_DPAR_OPTIMIZER_MAX_TIME": float(seconds)}}
    return {TIME_LIMIT_SETTINGS[solver]: float(seconds)} if solver in TIME_LIMIT_SETTINGS else {}


def reference_solver() -> str:
    """The solver of reference solves: MOSEK where it is installed and licensed, else Clarabel."""
    return "MOSEK" if "MOSEK" in available_solvers() else DEFAULT_SOLVER


@cache
def available_solvers() -> tuple[str, ...]:
    """The candidate solvers that solve a tiny SDP correctly here, probed once and cached.

    A solver counts only if it is installed *and* returns the right answer: MOSEK without a
    license raises at solve time and is left out (cvxpy's own ``is_mosek_available`` idea).
    """
    X = cp.Variable((2, 2), symmetric=True)
    probe = cp.Problem(cp.Minimize(cp.trace(X)), [X >> 0, X[0, 1] == 1])  # optimum 2 at [[1,1],[1,1]]
    usable = []
    for name in CANDIDATES:
        if name not in cp.installed_solvers():
            continue
        try:
            probe.solve(solver=name)
        except Exception:  # a missing license, a broken install: not usable here, whatever the cause
            continue
        if probe.status == cp.OPTIMAL and np.isclose(probe.value, 2.0, rtol=1e-4):
            usable.append(name)
    return tuple(usable)
