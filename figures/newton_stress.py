"""How many iterations the default method takes on hard problems
===============================================================

Projected Newton (``solve``'s default) on a stress family of every (machine × penalty) pair: the
hinge, squared-hinge, ε-insensitive and one-class machines with the Frobenius, Mercer and
componentwise penalties, random K0 (a symmetric Gaussian matrix, a Gaussian Gram matrix for the
Mercer penalty), n from 2 to 300, C from 1e-4 to 1e6 (ν from 0.01 to 0.9 for the one-class
machine), per-point weights of C (or of the componentwise h) spread over six orders of magnitude
or none, at the default relative tol 1e-6. Prints the distribution of Newton's iterations per pair
and over all, how many runs needed more than 12, fell back to apg or did not end "optimal", and
writes one row per run to ``figures/newton_stress.csv``; ``--results`` writes the table of that
CSV into the docs' results page (no rerun)::

    python figures/newton_stress.py [--seeds 2]
    python figures/newton_stress.py --results

``main(quick=True)`` runs a few small problems (the test suite's check that the script runs).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from tqdm import tqdm

from indkernel import IndefiniteProblem, solve
from indkernel.core import Componentwise, EpsilonInsensitive, Frobenius, Hinge, Mercer, OneClass
from indkernel.core.machines import SquaredHinge
from indkernel.core.rank_one import compile_oracle
from indkernel.reproduction.report import update_marked_block

OUT = Path(__file__).with_name("newton_stress.csv")
RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results.md"
MACHINES = ("hinge", "squared_hinge", "svr", "one-class")
PENALTIES = ("frobenius", "mercer", "componentwise")
SIZES = (2, 10, 50, 300)
CS = (1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6)
NUS = (0.01, 0.1, 0.3, 0.5, 0.7, 0.9)  # the one-class machine's counterpart of the six C values
#: The guide's promise: at most this many Newton iterations.
PROMISE = 12
#: Seconds a run may take (a run that needs more is counted by its status, "time_limit").
TIME_LIMIT = 20.0


def problem(machine: str, penalty: str, n: int, scale: float, spread: bool, seed: int) -> IndefiniteProblem:
    """One problem of the family (``scale``: C, or ν for the one-class machine; ``spread``: weights
    over six orders of magnitude)."""
    rng = np.random.default_rng(seed)
    if penalty == "mercer":
        Z = rng.standard_normal((n, 3))
        K0 = np.exp(-0.5 * np.sum((Z[:, None] - Z[None]) ** 2, axis=-1))
    else:
        A = rng.standard_normal((n, n))
        K0 = (A + A.T) / 2
    weights = 10.0 ** rng.uniform(-3, 3, n) if spread else np.ones(n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    made = {"hinge": lambda: Hinge(y, scale * weights, None, n),
            "squared_hinge": lambda: SquaredHinge(y, scale * weights, None, n),
            "svr": lambda: EpsilonInsensitive(rng.standard_normal(n), scale * weights, 0.1, n),
            "one-class": lambda: OneClass(scale, n)}[machine]()
    on_kernel = {"frobenius": lambda: Frobenius(1.0), "mercer": lambda: Mercer(1.0),
                 "componentwise": lambda: Componentwise(weights if machine == "one-class" else rng.uniform(0.5, 2.0, n),
                                                        n)}[penalty]()
    return IndefiniteProblem(K0, made, on_kernel)


def main(seeds: int = 2, quick: bool = False, out: Path = OUT) -> pd.DataFrame:
    sizes, scales = ((2, 10), (1e-4, 1.0, 1e6)) if quick else (SIZES, None)
    cases = []
    for machine, penalty in itertools.product(MACHINES, PENALTIES):
        grid = scales or (NUS if machine == "one-class" else CS)
        if quick and machine == "one-class":
            grid = (0.1, 0.5)
        cases += [(machine, penalty, n, scale, spread, seed)
                  for n, scale, spread, seed in itertools.product(sizes, grid, (False, True), range(1 if quick else seeds))
                  if machine != "one-class" or n * scale >= 1]  # ν·n >= 1 for a nonempty set
    rows = []
    compile_oracle()  # the compiler's seconds (after an install) are no run's
    for machine, penalty, n, scale, spread, seed in tqdm(cases, desc="newton on the stress family", disable=quick):
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # counted below, by status
            result = solve(problem(machine, penalty, n, scale, spread, seed), "newton", time_limit=TIME_LIMIT)
        rows.append(dict(machine=machine, penalty=penalty, n=n, scale=scale, spread=spread, seed=seed,
                         iterations=result.iterations, status=result.status, fallback="fallback" in result.details,
                         seconds=time.perf_counter() - started))
    table = pd.DataFrame(rows)
    table.to_csv(out, index=False)
    print(summary_markdown(table))
    over = table[table.iterations > PROMISE]
    if len(over):
        print(over.sort_values("iterations", ascending=False).head(15).to_string(index=False))
    return table


def summary_markdown(table: pd.DataFrame) -> str:
    """Per (machine, penalty): runs, the median, 90th percentile and largest number of Newton
    iterations, how many took more than ``PROMISE`` and how many did not end "optimal"; then the
    same over all runs, with the statuses and the longest run's seconds."""
    lines = [f"| machine | penalty | runs | median | 90th percentile | max | more than {PROMISE} | not optimal |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (machine, penalty), group in table.groupby(["machine", "penalty"]):
        its = group.iterations
        lines.append(f"| {machine} | {penalty} | {len(group)} | {its.median():g} | {its.quantile(0.9):.3g} | {its.max()} "
                     f"| {int((its > PROMISE).sum())} | {int((group.status != 'optimal').sum())} |")
    statuses = table.status[table.status != "optimal"].value_counts()
    its = table.iterations
    lines.append(f"\nAll {len(table)} runs: median {its.median():g}, 90th percentile {its.quantile(0.9):.3g}, "
                 f"99th {its.quantile(0.99):.4g}, max {its.max()}; more than {PROMISE}: {int((its > PROMISE).sum())}; "
                 f"handed over to apg: {int(table.fallback.sum())}; not optimal: {int(statuses.sum())} ("
                 + ", ".join(f"{count} {status}" for status, count in statuses.items())
                 + f"); the longest run {table.seconds.max():.1f} s (the cap: {TIME_LIMIT:g} s).")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2, help="random problems per setting (default 2)")
    parser.add_argument("--results", action="store_true", help="write the table of the CSV into docs/results.md, no rerun")
    arguments = parser.parse_args()
    if arguments.results:
        update_marked_block(RESULTS, "newton-stress", summary_markdown(pd.read_csv(OUT)),
                            "python figures/newton_stress.py --results")
    else:
        main(arguments.seeds)
