"""The solves on the formed kernel inside tight checks: libsvm's calls and the exact solves
=========================================================================================

Where a tight check's Newton–CG rounds leave the bound unproven, it solves the machine on the
formed K*(α): libsvm at 1e-3 (capped at ``LIBSVM_CAP`` iterations per variable), then the exact
solves, HiGHS's active-set method and the interior-point method where that falls short
(:mod:`indkernel.core.fixed_kernel`). This script records every such call — libsvm's
iterations per training point (the SVR has two variables per point: its cap is 200 per point),
seconds and whether it stopped at a cap (a budgeted run's first call stops at ``LIBSVM_PROBE``
per variable); each exact solve's seconds — in two families:

* the stress family's closing certificates at C >= 1e4 with spread weights
  (``figures/newton_stress.py``: the hinge, squared-hinge and SVR machines, every penalty,
  n = 50 and 300, two seeds; Newton under its 20 s limit);
* the checks of the projected gradient, the accelerated gradient and ACCPM to a relative 1e-6
  on USPS 3 vs 5 subsets (Simpson, C = 10, ρ = 0.1, 1, 10; under a 15 s limit).

It prints, per family and solve, the calls, their seconds, the median and largest iterations
per point and how many stopped at their cap, and the checks where libsvm's call ran to
``LIBSVM_CAP`` per point or past it, with what ran after it (``--uncapped``: with a cap a
hundred times higher)::

    INDKERNEL_DATA=<data directory> python figures/formed_solves.py [--sizes 100 200 400 767] [--uncapped]

``main(quick=True)`` runs a few small problems of each family (the test suite's check).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem, solve
from indkernel.core import fixed_kernel, machines
from indkernel.core.rank_one import compile_oracle
from indkernel.kernels import simpson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import newton_stress  # noqa: E402  (the family's problems)

SIZES = (100, 200, 400)
#: libsvm's cap per point in the library: the calls at or past it are listed (also with ``--uncapped``).
LISTED = fixed_kernel.LIBSVM_CAP
#: The exact solves' names, in the order of ``fixed_kernel.EXACT_SOLVES``.
EXACT_NAMES = ("active set", "interior point")


@contextmanager
def recorded(events: list):
    """Every libsvm call (``("libsvm", tol, iterations per point, seconds, capped)``) and every
    exact solve (``(its name, seconds)``) inside the block, appended to ``events``."""
    real_fit, real_solves = machines.libsvm_fit, list(fixed_kernel.EXACT_SOLVES)

    def fit(estimator, max_iter, *args, **kwargs):
        started = time.perf_counter()
        capped = real_fit(estimator, max_iter, *args, **kwargs)
        points = len(args[1])
        events.append(("libsvm", estimator.tol, int(np.max(estimator.n_iter_)) / points,
                       time.perf_counter() - started, capped))
        return capped

    def timed(solve_exactly: Callable, name: str) -> Callable:
        def exact(*args, **kwargs):
            started = time.perf_counter()
            found = solve_exactly(*args, **kwargs)
            events.append((name, time.perf_counter() - started))
            return found
        return exact

    machines.libsvm_fit = fit
    named = zip(real_solves, EXACT_NAMES, strict=True)
    fixed_kernel.EXACT_SOLVES[:] = [timed(solve_exactly, name) for solve_exactly, name in named]
    try:
        yield events
    finally:
        machines.libsvm_fit = real_fit
        fixed_kernel.EXACT_SOLVES[:] = real_solves


def runs(quick: bool, sizes) -> list[tuple[str, str, Callable]]:
    """``(family, label, run)``: each run solves one problem with its method."""
    found = []
    stress_sizes, seeds = ((10,), 1) if quick else ((50, 300), 2)
    for machine in ("hinge", "squared_hinge", "svr"):
        for penalty in newton_stress.PENALTIES:
            for n in stress_sizes:
                for scale in (1e4, 1e6):
                    for seed in range(seeds):
                        problem = newton_stress.problem(machine, penalty, n, scale, True, seed)
                        found.append(("stress family", f"{machine} {penalty} n={n} C={scale:g} seed={seed}",
                                      lambda problem=problem: solve(problem, "newton",
                                                                    time_limit=newton_stress.TIME_LIMIT)))
    if os.environ.get("INDKERNEL_DATA"):
        from indkernel.datasets import load_usps

        (X, y), family = load_usps((3, 5), split="train"), "USPS checks"
    else:
        from indkernel.datasets import load_digits_pair

        (X, y), family = load_digits_pair(3, 5), "digits checks"
    for n in (40,) if quick else sizes:
        rows = np.random.default_rng(0).choice(len(y), n, replace=False)
        for rho in (1.0,) if quick else (0.1, 1.0, 10.0):
            for method in ("pg", "apg", "accpm"):
                found.append((family, f"{method} n={n} rho={rho:g}",
                              lambda rows=rows, rho=rho, method=method: solve(
                                  SVMProblem(simpson(X[rows]), y[rows], C=10.0, rho=rho), method, tol=1e-6,
                                  time_limit=15.0)))
    return found


def main(quick: bool = False, sizes=SIZES) -> pd.DataFrame:
    compile_oracle()
    calls, stopped = [], []
    for family, label, run in runs(quick, sizes):
        events: list = []
        with recorded(events), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            run()
        for k, event in enumerate(events):
            if event[0] == "libsvm":
                _, tol, per_point, seconds, capped = event
                calls.append(dict(family=family, run=label, solve=f"libsvm {tol:g}", per_point=per_point,
                                  seconds=seconds, capped=capped))
                if per_point >= LISTED:
                    after = [f"{e[0]} {e[1]:g}" if e[0] == "libsvm" else e[0] for e in events[k + 1:k + 3]]
                    stopped.append(f"{label}: {per_point:.0f} per point in {seconds:.2f} s, then "
                                   f"{', '.join(after) or 'nothing (the check ended)'}")
            else:
                calls.append(dict(family=family, run=label, solve=event[0], per_point=np.nan,
                                  seconds=event[1], capped=False))
    table = pd.DataFrame(calls, columns=["family", "run", "solve", "per_point", "seconds", "capped"])
    summary = table.groupby(["family", "solve"]).agg(calls=("seconds", "size"), seconds=("seconds", "sum"),
                                                     median_per_point=("per_point", "median"),
                                                     max_per_point=("per_point", "max"), stopped_at_cap=("capped", "sum"))
    print(summary.round(3).to_string())
    print(f"\nlibsvm's calls at {LISTED} iterations per point or more:")
    print("\n".join(stopped) or "none")
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="the USPS subsets' sizes")
    parser.add_argument("--uncapped", action="store_true", help="libsvm's cap a hundred times higher")
    args = parser.parse_args()
    if args.uncapped:
        fixed_kernel.LIBSVM_CAP *= 100
    main(sizes=args.sizes)
