"""What scoring new points costs with each rule
=============================================

IndefiniteSVC's rules for new points side by side in one process. USPS 3 vs 5 with the Simpson similarity at the tables' split (767 training, 773 test images;
the embedded digits 3 vs 5 without a data directory), C = 10, ρ = 1. Prints, per rule and batch
size m, the seconds of ``predict`` (min–max over the repeats) and the ratio to the consistent
rule, the seconds that forming ``w = Pβ`` adds to ``fit``, and each fitted model's pickled bytes
against K0's (only the transductive rule keeps K0)::

    INDKERNEL_DATA=<data directory> python figures/predict_cost.py [--repeats 3]

The consistent and raw rules cost one (m, n) product (O(n) per point, each point on its own);
the transductive rule decomposes an (n + m)×(n + m) matrix per batch.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np

from indkernel import IndefiniteSVC, SVMProblem, datasets, kernels, solve
from indkernel.core import spectrum_cache
from indkernel.reproduction.protocol import random_split

BATCHES = (1, 10, 100, 773)
RULES = ("consistent", "raw", "transductive")


def main(repeats: int = 3) -> None:
    if os.environ.get("INDKERNEL_DATA"):
        X, y = datasets.load_usps((3, 5))
        split, what = random_split(y, 767, seed=0), "USPS 3 vs 5"
    else:
        X, y = datasets.load_digits_pair(3, 5)
        split, what = random_split(y, len(y) // 2, seed=0), "digits 3 vs 5"
    K = kernels.simpson(X)
    train, test = split.train, split.test
    K_train = np.ascontiguousarray(K[np.ix_(train, train)])
    print(f"{what}, Simpson: {len(train)} training points, C = 10, rho = 1")
    problem = SVMProblem(K_train, y[train], C=10.0, rho=1.0)
    alpha = solve(problem, "newton", tol=1e-6).alpha
    coef_seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        problem.consistent_coef(alpha)
        coef_seconds.append(time.perf_counter() - start)
    fit_seconds, models = [], {}
    for rule in RULES:
        spectrum_cache.clear()  # each fit decomposes K0 itself
        start = time.perf_counter()
        models[rule] = IndefiniteSVC(C=10.0, rho=1.0, test_kernel=rule).fit(K_train, y[train])
        fit_seconds.append(time.perf_counter() - start)
    print(f"fit {min(fit_seconds):.3f}-{max(fit_seconds):.3f} s, of which w = P beta "
          f"{min(coef_seconds):.4f}-{max(coef_seconds):.4f} s")
    print(f"pickled model, kB (K0: {K_train.nbytes / 1e3:.0f}): "
          + ", ".join(f"{rule} {len(pickle.dumps(model)) / 1e3:.0f}" for rule, model in models.items()))
    print(f"{'m':>5} " + " ".join(f"{rule:>24}" for rule in RULES))
    for m in BATCHES:
        rows = test[:m]
        cells, consistent = [], None
        for rule in RULES:
            columns = np.concatenate([train, rows]) if rule == "transductive" else train
            X_test = np.ascontiguousarray(K[np.ix_(rows, columns)])
            seconds = []
            for _ in range(repeats):
                start = time.perf_counter()
                models[rule].predict(X_test)
                seconds.append(time.perf_counter() - start)
            consistent = min(seconds) if rule == "consistent" else consistent
            cells.append(f"{min(seconds):.2e}-{max(seconds):.2e} ({min(seconds) / consistent:6.0f}x)")
        print(f"{m:>5} " + " ".join(f"{cell:>24}" for cell in cells), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The seconds of predict with each rule for new points.")
    parser.add_argument("--repeats", type=int, default=3)
    main(parser.parse_args().repeats)
