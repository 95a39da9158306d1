"""Where projected Newton starts: C/2, zero or libsvm's solution on K0
======================================================================

Projected Newton's iterations and seconds to a certified relative gap (1e-3, ``IndefiniteSVC``'s
setting in the tables, and 1e-6) from three starting points, on SVM problems of every kind of
similarity the tables use: the paper's C/2 (:meth:`IndefiniteProblem.initial_point`), zero, and
libsvm's solution on K0 itself (an SVM on the indefinite matrix, solved as if it were a kernel;
its own time is added). One process; the eigendecomposition of K0 is done once per problem,
before the timed solves; medians of ``--repeats`` runs.

    INDKERNEL_DATA=<data directory> python figures/starting_points.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from indkernel import SVMProblem, solve
from indkernel.reproduction.experiments import load


def problems():
    """``(name, K0, y, C, rho)``: the training part of the tables' first split, one similarity each."""
    for name, similarity, C, rho in (("USPS-3-5-SS", "simpson", 10.0, 1.0), ("USPS-3-5-SS", "simpson", 100.0, 0.1),
                                     ("USPS-3-5-TD1", "gamma=0.03", 10.0, 100.0),
                                     ("german-sig", "a=0.1/p, r=-1", 10.0, 1.0),
                                     ("diabetes-sig", "a=1/p, r=0", 1.0, 1.0)):
        data = load(name)
        train = data.split.train
        K = data.similarities[similarity]()[np.ix_(train, train)]
        y = np.where(data.y[train] == data.positive, 1.0, -1.0)
        yield f"{name} {similarity} C={C:g} ρ={rho:g}", np.ascontiguousarray(K), y, C, rho


def libsvm_start(K0: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """α of libsvm's SVM on K0 (loosely solved: a starting point)."""
    machine = SVC(kernel="precomputed", C=C, tol=1e-2).fit(K0, y)
    alpha = np.zeros(len(y))
    alpha[machine.support_] = np.abs(machine.dual_coef_[0])
    return alpha


#: α0 for ``solve`` from (K0, y, C): None is the paper's C/2 (the problem's initial point).
STARTS = {"C/2": lambda K0, y, C: None, "zero": lambda K0, y, C: np.zeros(len(y)), "libsvm": libsvm_start}


def table(repeats: int) -> pd.DataFrame:
    rows = []
    for name, K0, y, C, rho in problems():
        problem = SVMProblem(K0, y, C, rho)
        problem.oracle.prepare()
        for tol in (1e-3, 1e-6):
            for start in STARTS:
                seconds, iterations, statuses = [], [], set()
                for _ in range(repeats):
                    begin = time.perf_counter()
                    result = solve(problem, "newton", tol=tol, alpha0=STARTS[start](K0, y, C))
                    seconds.append(time.perf_counter() - begin)
                    iterations.append(result.iterations)
                    statuses.add(result.status)
                rows.append(dict(problem=name, n=len(y), tol=tol, start=start, seconds=np.median(seconds),
                                 iterations=int(np.median(iterations)), status="/".join(sorted(statuses))))
        print(pd.DataFrame(rows[-6:]).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    frame = table(args.repeats)
    wide = frame.pivot_table(index=["problem", "tol"], columns="start", values="seconds", sort=False)
    print((wide.div(wide["C/2"], axis=0)).round(2).to_string())
