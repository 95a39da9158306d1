"""One fit against denoise's, from small to large problems, in both thread settings
================================================================================

A default ``IndefiniteSVC(C=10, rho=1)`` fit against a ``SpectrumSVC("denoise", C=10)`` fit, the
two alternating in one process, each repetition on a new random subset (so no stored spectrum
helps either side): USPS 3 vs 5 with the Simpson similarity at n = 50 … 2000 (the embedded
digits 3 vs 5 up to 360 without a data directory) and the embedded digits 0-3 (four classes, six
one-vs-one problems). Every case runs twice: in this process (its default threads) and in a
one-thread child process (``OMP_NUM_THREADS=1`` and the like, as every joblib or Dask worker of a
grid search runs). Prints the medians and the ratio per case, writes ``figures/small_fits.csv``,
and ends with a profile of the default fit at the smallest size: where its time goes::

    INDKERNEL_DATA=<data directory> python figures/small_fits.py [--repeats 7]

``main(quick=True)`` runs two small cases with 2 repetitions (the test suite's check that the
script runs). The goals it measures: a default fit within 2x of denoise's at n = 50 … 250 and
within 3x on the four-class set, in both thread settings (at n >= 500 a fit already costs about
denoise's: the goal there is to stay so).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning

from indkernel import IndefiniteSVC, SpectrumSVC
from indkernel.core import spectrum_cache
from indkernel.kernels import simpson

SIZES = (50, 120, 250, 500, 1000, 2000)
OUT = Path(__file__).with_name("small_fits.csv")
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS", "BLIS_NUM_THREADS")
#: The goals: the largest ratio to denoise's fit for a binary fit up to this many points, and for the four-class fit.
GOAL_SMALL_N, GOAL_BINARY, GOAL_MULTICLASS = 250, 2.0, 3.0


def _pools() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The images each case draws its subsets from, by case family."""
    pools = {}
    if os.environ.get("INDKERNEL_DATA"):
        from indkernel.datasets import load_usps

        X, y = load_usps((3, 5), split="train")
        X_test, y_test = load_usps((3, 5), split="test")
        pools["USPS 3-5 SS"] = np.vstack([X, X_test]), np.concatenate([y, y_test])
    else:
        X, y = load_digits(return_X_y=True)
        keep = (y == 3) | (y == 5)
        pools["digits 3-5 SS"] = X[keep] / 16, y[keep]
    X, y = load_digits(return_X_y=True)
    keep = y < 4
    pools["digits 0-3 SS (4 classes)"] = X[keep] / 16, y[keep]
    return pools


def cases(quick: bool) -> list[tuple[str, int]]:
    """``(family, n)`` of every case."""
    pools = _pools()
    if quick:
        return [(next(iter(pools)), 50), ("digits 0-3 SS (4 classes)", 120)]
    binary = next(iter(pools))
    limit = len(pools[binary][1])
    return [(binary, n) for n in SIZES if n <= limit] + [("digits 0-3 SS (4 classes)", 200)]


def _one(estimator, X: np.ndarray, y: np.ndarray, n: int, seed: int) -> float:
    rows = np.random.default_rng(seed).choice(len(y), n, replace=False)
    K = simpson(X[rows])
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(K, y[rows])
    return time.perf_counter() - start


def measure(case_list, repeats: int) -> list[dict]:
    """The medians of each case in this process, the two fits alternating on the same subsets."""
    spectrum_cache.set_budget(0)  # every fit decomposes its own K0, as a first fit does
    pools, rows = _pools(), []
    for family, n in case_list:
        X, y = pools[family]
        _one(IndefiniteSVC(C=10, rho=1), X, y, n, 0), _one(SpectrumSVC("denoise", C=10), X, y, n, 0)  # warm-up
        ours, theirs = [], []
        for seed in range(1, repeats + 1):
            ours.append(_one(IndefiniteSVC(C=10, rho=1), X, y, n, seed))
            theirs.append(_one(SpectrumSVC("denoise", C=10), X, y, n, seed))
        rows.append(dict(case=family, n=n, indefinite_ms=1e3 * float(np.median(ours)),
                         denoise_ms=1e3 * float(np.median(theirs)),
                         ratio_min=float(np.min(np.array(ours) / np.array(theirs))),
                         ratio_max=float(np.max(np.array(ours) / np.array(theirs)))))
        rows[-1]["ratio"] = rows[-1]["indefinite_ms"] / rows[-1]["denoise_ms"]
    return rows


def profile(family: str, n: int, top: int = 12) -> str:
    """The functions that take most of a default fit's own time (ten fits on one subset)."""
    X, y = _pools()[family]
    rows = np.random.default_rng(99).choice(len(y), n, replace=False)
    K, labels = simpson(X[rows]), y[rows]
    IndefiniteSVC(C=10, rho=1).fit(K, labels)
    recorder = cProfile.Profile()
    recorder.enable()
    for _ in range(10):
        IndefiniteSVC(C=10, rho=1).fit(K, labels)
    recorder.disable()
    text = io.StringIO()
    pstats.Stats(recorder, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


def goals(table: pd.DataFrame) -> str:
    """How far each goal is: the cases it covers, how many meet it, the largest ratio among them."""
    multiclass = table.case.str.contains("classes")
    lines = []
    for name, goal, covered in ((f"binary, n <= {GOAL_SMALL_N}", GOAL_BINARY, ~multiclass & (table.n <= GOAL_SMALL_N)),
                                ("four classes", GOAL_MULTICLASS, multiclass)):
        ratios = table.ratio[covered]
        if len(ratios):
            lines.append(f"goal {goal:g}x ({name}): met in {int((ratios <= goal).sum())} of {len(ratios)} cases, "
                         f"largest ratio {ratios.max():.2f}")
    return "\n".join(lines)


def main(repeats: int = 7, *, quick: bool = False, out: Path | None = OUT, show_profile: bool = True) -> pd.DataFrame:
    case_list = cases(quick)
    repeats = 2 if quick else repeats
    frames = [pd.DataFrame(measure(case_list, repeats)).assign(threads="default")]
    child = subprocess.run([sys.executable, __file__, "--child", json.dumps(case_list), "--repeats", str(repeats)],
                           env={**os.environ, **dict.fromkeys(ONE_THREAD, "1")}, capture_output=True, text=True,
                           check=True)
    frames.append(pd.DataFrame(json.loads(child.stdout.splitlines()[-1])).assign(threads="one"))
    table = pd.concat(frames, ignore_index=True)
    columns = ["case", "n", "threads", "indefinite_ms", "denoise_ms", "ratio", "ratio_min", "ratio_max"]
    table = table[columns].round({"indefinite_ms": 2, "denoise_ms": 2, "ratio": 2, "ratio_min": 2, "ratio_max": 2})
    print(table.to_string(index=False))
    print(goals(table))
    if out is not None:
        table.to_csv(out, index=False)
    if show_profile:
        family, n = case_list[0]
        print(f"\nprofile of the default fit ({family}, n = {n}; ten fits, own time):")
        print(profile(family, n))
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="One Indefinite SVM fit against one denoise fit, side by side.")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the one-thread process: JSON cases in, rows out
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure([tuple(case) for case in json.loads(args.child)], args.repeats)))
    else:
        main(args.repeats)
