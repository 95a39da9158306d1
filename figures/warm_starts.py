"""Warm starts along the tables' grids: what a neighbour's solution saves projected Newton
=======================================================================================

On the first cross-validation fold of each data set's first split (the tables' protocol: the
authors' class weights, certified to the tables' relative gap 1e-4), every point of the tables'
grid (C × ρ, 4 × 4) is solved twice by projected Newton: cold, from the paper's C/2
(:meth:`IndefiniteProblem.initial_point`), and warm, from the certified solution of its
neighbour on the path (the previous ρ at the same C; for the first ρ of a C, the previous C's
first point), scaled into the new box and projected onto the feasible set
(:meth:`IndefiniteProblem.rescaled`, as ``warm_start=True`` does). The two solves of a
point run back to back in alternating order, on the same problem (K0 decomposed once before);
the script prints per data set the Newton iterations and seconds of both over the grid (the
first point of the path, which has no neighbour, left out of both), medians over ``--repeats``,
checks that the two certified brackets of every point meet, and writes the rows to
``figures/warm_starts.csv``::

    INDKERNEL_DATA=<data directory> python figures/warm_starts.py [--repeats 3] [--datasets ...]

Without a data directory it runs on the embedded digits 3 vs 5 (``main(quick=True)``: a 2 × 2
grid, the test suite's check that the script runs).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import model_selection  # through its module: the gallery's API links scan imported classes
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem, solve
from indkernel.reproduction import experiments

DATASETS = ["USPS-3-5-SS", "USPS-3-5-TD1", "diabetes-sig", "german-sig", "a1a-sig"]
OUT = Path(__file__).with_name("warm_starts.csv")


def fold_problem(name: str) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """``(description, K0, y, class weights)``: the first fold's training block of the first split,
    with the data set's first similarity of the grid."""
    data = experiments.load(name)
    similarity, make = next(iter(data.similarities.items()))
    train = data.split.train
    y = np.where(data.y[train] == data.positive, 1.0, -1.0)
    fold = next(model_selection.StratifiedKFold(5, shuffle=True, random_state=0).split(train, y))[0]
    K0 = np.ascontiguousarray(make()[np.ix_(train[fold], train[fold])])
    y = y[fold]
    weights = np.where(y > 0, 1.0, np.sum(y > 0) / np.sum(y < 0))  # the authors' class weights
    return f"{name} {similarity}", K0, y, weights


def path(Cs, rhos) -> list[tuple[float, float]]:
    """The grid in path order: ρ increasing at each C, the Cs increasing."""
    return [(C, rho) for C in Cs for rho in rhos]


def compare(K0, y, weights, Cs, rhos, repeats: int) -> dict:
    """Iterations and seconds (medians over ``repeats``) of the cold and warm solves over the path,
    its first point left out."""
    seconds = {"cold": [], "warm": []}
    iterations = {"cold": 0, "warm": 0}
    disjoint = 0  # points whose two certified brackets do not meet: both cannot hold p*
    for repeat in range(repeats):
        spent = dict.fromkeys(seconds, 0.0)
        alpha = upper = None  # the previous point's certified solution and upper bounds
        for k, (C, rho) in enumerate(path(Cs, rhos)):
            problem = SVMProblem(K0, y, C * weights, rho)
            problem.oracle.prepare()
            starts = {"cold": None, "warm": None if alpha is None else problem.rescaled(alpha, upper)}
            solved = {}
            for start in (list(starts) if (k + repeat) % 2 == 0 else list(starts)[::-1]):
                began = time.perf_counter()
                solved[start] = solve(problem, "newton", tol=experiments.FIT_TOL, alpha0=starts[start])
                if alpha is not None:
                    spent[start] += time.perf_counter() - began
                    if repeat == 0:
                        iterations[start] += solved[start].iterations
            disjoint += max(solved[s].lower for s in solved) > min(solved[s].upper for s in solved)
            alpha, upper = solved["warm"].alpha, problem.feasible.hi
        for start in seconds:
            seconds[start].append(spent[start])
    return dict(cold_iterations=iterations["cold"], warm_iterations=iterations["warm"],
                cold_seconds=float(np.median(seconds["cold"])), warm_seconds=float(np.median(seconds["warm"])),
                disjoint_brackets=disjoint)


def main(repeats: int = 3, names=DATASETS, *, quick: bool = False, out: Path = OUT) -> pd.DataFrame:
    Cs, rhos = (experiments.QUICK_C_GRID, [1.0, 10.0]) if quick else (experiments.C_GRID, experiments.RHO_GRID)
    if quick or not os.environ.get("INDKERNEL_DATA"):
        names = ["digits-3-5-SS"]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # "roundoff" fits: the same for both starts
        for name in names:
            description, K0, y, weights = fold_problem(name)
            row = dict(data=description, n=len(y), points=len(Cs) * len(rhos) - 1,
                       **compare(K0, y, weights, Cs, rhos, repeats))
            row["iteration_ratio"] = row["warm_iterations"] / row["cold_iterations"]
            row["time_ratio"] = row["warm_seconds"] / row["cold_seconds"]
            rows.append(row)
            print(f"{description:>28} n={len(y):4d}: cold {row['cold_iterations']:4d} its {row['cold_seconds']:6.2f} s, "
                  f"warm {row['warm_iterations']:4d} its {row['warm_seconds']:6.2f} s "
                  f"({row['iteration_ratio']:.2f}x its, {row['time_ratio']:.2f}x time)", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(out, index=False, float_format="%.3f")
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Projected Newton cold and warm along the tables' grids.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    arguments = parser.parse_args()
    main(arguments.repeats, arguments.datasets)
