"""Each method's time to compare's tolerance on the built-in problem, beside its cap
===================================================================================

:func:`indkernel.compare` runs each method from the shared start to ``COMPARE_TOL`` (1e-4) with a
time cap of its own (``COMPARE_TIME_LIMITS``), sized from this measurement: on the built-in
problem of ``indkernel compare`` (scikit-learn's digits 3 vs 5, 365 points, Simpson kernel,
C = 10, ρ = 1), each method solved alone ``--repeats`` times with a measuring limit of five times
its cap. Prints each method's seconds (min and max), iterations and status, its cap and the ratio
cap / slowest run (at least 1 for the default methods: each finishes within its cap), and the
default call's total cap (under a minute); writes ``figures/compare_caps.csv``::

    python figures/compare_caps.py [--repeats 3]

``main(quick=True)`` runs a 60-point subset once, each method for a sixth of its cap (the test
suite's check that the script runs).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem, solve
from indkernel.datasets import load_digits_pair
from indkernel.kernels import simpson
from indkernel.solvers.registry import COMPARE_TIME_LIMITS, COMPARE_TOL, COMPARED, refusal

OUT = Path(__file__).with_name("compare_caps.csv")
#: The measuring limit, in caps: a method slower than this is reported at it ("time_limit"); the
#: quick run's is a sixth of a cap.
MEASURING_LIMIT = 5.0
QUICK_LIMIT = 1 / 6


def built_in_problem(n: int | None = None) -> SVMProblem:
    """``indkernel compare``'s problem without DATA (its first ``n`` points, if given)."""
    X, y = load_digits_pair(3, 5)
    X, y = (X, y) if n is None else (X[:n], y[:n])
    return SVMProblem(simpson(X), y, C=10.0, rho=1.0)


def main(repeats: int = 3, *, quick: bool = False, out: Path | None = OUT) -> pd.DataFrame:
    problem = built_in_problem(60 if quick else None)
    solve(problem, "newton")  # compiled code and the spectrum loaded: every timed run is the method's
    rows = []
    for method, cap in COMPARE_TIME_LIMITS.items():
        reason = refusal(problem, method)
        if reason is not None:
            rows.append(dict(method=method, default=method in COMPARED, cap=cap, status="refused", repeat=0,
                             seconds=float("nan"), iterations=0, relative_gap=float("nan")))
            continue
        for repeat in range(1 if quick else repeats):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # a method short of tol says so in its row
                result = solve(problem, method, tol=COMPARE_TOL, time_limit=(QUICK_LIMIT if quick else MEASURING_LIMIT) * cap)
            rows.append(dict(method=method, default=method in COMPARED, cap=cap, status=result.status, repeat=repeat,
                             seconds=result.seconds, iterations=result.iterations, relative_gap=result.relative_gap))
    table = pd.DataFrame(rows)
    summary = table.groupby("method", sort=False).agg(
        default=("default", "first"), cap=("cap", "first"), seconds_min=("seconds", "min"),
        seconds_max=("seconds", "max"), iterations=("iterations", "max"),
        reached=("status", lambda s: int((s == "optimal").sum())), runs=("status", "size"))
    summary["cap_over_slowest"] = summary.cap / summary.seconds_max
    print(f"n = {problem.n}, tol = {COMPARE_TOL:g} (relative), {1 if quick else repeats} repeat(s)")
    print(summary.to_string(float_format=lambda v: f"{v:.3g}"))
    total = summary.cap[summary.default].sum()
    print(f"the default call's caps add up to {total:g} s; every default method reached tol within its cap: "
          f"{bool(((summary.reached == summary.runs) & (summary.cap_over_slowest >= 1))[summary.default].all())}")
    if out is not None:
        table.to_csv(out, index=False)
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    main(parser.parse_args().repeats)
