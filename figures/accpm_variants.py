"""ACCPM at its best beside the paper's
====================================

Which version of the analytic center cutting plane method (``alg:accpm``) reaches the best
certified gap per second, on the setting of the convergence figure: USPS 3 vs 5 (the embedded
digits with ``--digits``), Simpson kernel, C = 10, ρ = 1, random subsets of n = 100 points.

Variants (options of ``solve(problem, "accpm", ...)``): the paper's (neutral cuts, the cut limit
by relevance: ``indkernel.solvers.accpm.PAPER``); deep (objective) cuts; the m-ellipsoid elimination of
redundant cuts; the proximal analytic center with weight μ; and their combinations. Each run
goes for ``--iterations`` iterations (every center certified, refined as in the figure) or until
its certified relative gap is 1e-10. Per variant, the median over ``--runs`` subsets of: the
certified relative gap after 2 s and at the end, the seconds to reach 1e-2, 1e-4 and 1e-6 (blank
where a run did not), seconds per iteration, and the most cuts held.

    python figures/accpm_variants.py [--runs 5] [--iterations 500] [--n 100] [--digits]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem, solve
from indkernel.datasets import load_digits_pair, load_usps
from indkernel.kernels import simpson
from indkernel.solvers.accpm import PAPER

VARIANTS = {
    "paper": PAPER,
    "deep cuts": dict(PAPER, deep_cuts=True),
    "m-ellipsoid": dict(PAPER, drop_redundant=True),
    "deep + m-ellipsoid": dict(deep_cuts=True, proximal=0.0, drop_redundant=True),
    "proximal μ=1": dict(PAPER, proximal=1.0),
    "proximal μ=10": dict(PAPER, proximal=10.0),
    "deep + proximal μ=1 (default)": dict(PAPER, deep_cuts=True, proximal=1.0),
    "deep + proximal μ=10": dict(PAPER, deep_cuts=True, proximal=10.0),
}
TARGETS = (1e-2, 1e-4, 1e-6)
BUDGET = 2.0


def subsets(n: int, runs: int, digits: bool):
    X, y = load_digits_pair(3, 5) if digits else load_usps(pair=(3, 5))
    for run in range(runs):
        pick = np.random.default_rng(run).choice(len(y), n, replace=False)
        yield SVMProblem(simpson(X[pick]), y[pick], C=10.0, rho=1.0)


def summary(result) -> dict:
    history = result.history
    relative = history.gap / history.scale
    row = {"gap at end": float(relative.iloc[-1]),
           f"gap after {BUDGET:g} s": float(relative[history.time <= BUDGET].min()),
           "s per iteration": result.seconds / max(result.iterations, 1),
           "most cuts": result.details.get("most_cuts", 0)}
    for target in TARGETS:
        hit = history.time[relative <= target]
        row[f"s to {target:g}"] = float(hit.iloc[0]) if len(hit) else np.nan
    return row


def table(n: int, runs: int, iterations: int, digits: bool) -> pd.DataFrame:
    rows = []
    for run, problem in enumerate(subsets(n, runs, digits)):
        solve(problem, "accpm", max_iter=3)  # compiled code and the oracle's setup, untimed
        for name, options in VARIANTS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                result = solve(problem, "accpm", tol=1e-10, max_iter=iterations, bound="refined", **options)
            rows.append(dict(variant=name, run=run, status=result.status, **summary(result)))
        print(f"subset {run + 1} of {runs} done", flush=True)
    frame = pd.DataFrame(rows)
    medians = frame.drop(columns=["run", "status"]).groupby("variant", sort=False).median()
    medians["reached 1e-6"] = frame.groupby("variant", sort=False)["s to 1e-06"].apply(lambda s: f"{s.notna().sum()}/{runs}")
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--digits", action="store_true", help="the embedded digits instead of USPS")
    args = parser.parse_args()
    medians = table(args.n, args.runs, args.iterations, args.digits)
    print(medians.to_string(float_format=lambda x: f"{x:.3g}"))


if __name__ == "__main__":
    main()
