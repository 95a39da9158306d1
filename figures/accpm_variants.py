"""ACCPM's variants against the authors' iterations and the projected gradient's time
==================================================================================

The problems the authors' Matlab code was run on under Octave, beside this project: USPS 3 vs 5,
Simpson kernel, random subsets of n points drawn with ``default_rng(n)``, C = 10 with the authors'
class weights, ρ = 1 and 10 (``figures/tight_certificate.py`` builds them). Each method runs to a
certified absolute gap of 1e-2 with a check every 10 iterations, as the authors' code does, in one
process: first the paper's projected gradient (the time ACCPM is held to: 5x), then each variant
of the analytic center cutting plane method (options of ``solve(problem, "accpm", ...)``):

- the centering: ``"cg"`` (Newton–CG stopped at ``λ²/2 <= LOOSE_CENTERING_TOL``, the authors'
  way, the default) or ``"newton"`` (exact Newton steps to ``λ² <= 1e-9``);
- the paper's neutral cuts or deep (objective) cuts; the analytic or the proximal center (μ = 1);
  the m-ellipsoid elimination of redundant cuts;
- what each check certifies: the mean of the last centers (the default) or the best center
  (``average=0``, "best center").

Per problem and variant: iterations, seconds, the ratio to the projected gradient's seconds, the
authors' iterations, the status. Writes ``accpm_variants.csv`` beside this file.

    INDKERNEL_DATA=<data directory> python figures/accpm_variants.py [--sizes 100 200 500] [--repeats 2]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from tight_certificate import problem

from indkernel import solve
from indkernel.solvers.accpm import PAPER

HERE = Path(__file__).resolve().parent

#: The authors' ACCPM iterations to an absolute 1e-2 (their code under Octave, a check every 10).
AUTHORS = {(100, 1.0): 250, (100, 10.0): 200, (200, 1.0): 460, (500, 1.0): 1290, (500, 10.0): 1320}
VARIANTS = {
    "paper, exact centers": dict(PAPER, center="newton"),
    "paper": PAPER,
    "paper + m-ellipsoid": dict(PAPER, drop_redundant=True),
    "deep cuts": dict(PAPER, deep_cuts=True),
    "proximal μ=1": dict(PAPER, proximal=1.0),
    "deep + proximal μ=1 (default)": {},
    "deep + proximal μ=1, best center": dict(average=0),
    "paper, best center": dict(PAPER, average=0),
    "deep + proximal μ=1, exact centers": dict(center="newton"),
}
SETTING = dict(tol=1e-2, absolute=True, time_limit=60.0)


def timed(p, method: str, **options):
    start = time.perf_counter()
    result = solve(p, method, **SETTING, **options)
    return result, time.perf_counter() - start


def rows(n: int, rho: float, repeats: int) -> list[dict]:
    p = problem(n, rho)
    solve(p, "pg", max_iter=3)
    solve(p, "accpm", max_iter=3)  # compiled code and the oracle's setup, untimed
    found = []
    for repeat in range(repeats):
        _, pg_seconds = timed(p, "pg", max_iter=5000)
        for name, options in VARIANTS.items():
            result, seconds = timed(p, "accpm", max_iter=3000, **options)
            found.append({"n": n, "rho": rho, "repeat": repeat, "variant": name, "iterations": result.iterations,
                          "seconds": seconds, "x pg time": seconds / pg_seconds, "pg seconds": pg_seconds,
                          "authors": AUTHORS.get((n, rho)), "status": result.status, "gap": result.gap})
            print(f"n={n} rho={rho:g} {name}: {result.iterations} iterations, {seconds:.2f} s "
                  f"({seconds / pg_seconds:.1f}x pg), {result.status}", flush=True)
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--repeats", type=int, default=2, help="timings per variant (iterations do not vary)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", ConvergenceWarning)
    table = pd.DataFrame([row for n in args.sizes for rho in (1.0, 10.0) for row in rows(n, rho, args.repeats)])
    table.to_csv(HERE / "accpm_variants.csv", index=False)
    summary = table.groupby(["n", "rho", "variant"], sort=False).agg(
        iterations=("iterations", "first"), authors=("authors", "first"), seconds_min=("seconds", "min"),
        seconds_max=("seconds", "max"), pg_ratio_min=("x pg time", "min"), pg_ratio_max=("x pg time", "max"),
        status=("status", "first"))
    print(summary.to_string(float_format=lambda x: f"{x:.3g}"))


if __name__ == "__main__":
    main()
