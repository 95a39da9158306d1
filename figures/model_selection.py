"""What model selection costs: Indefinite SVM's grid against denoise's
=====================================================================

``GridSearchCV`` (5 stratified folds, one process) of ``IndefiniteSVC`` over C × ρ (6 × 6, the
default consistent rule, certified to the tables' relative gap 1e-4) against
``SpectrumSVC("denoise")`` over C (6), side by side in one process on each data set: USPS 3 vs 5
with the Simpson similarity on training subsets of n = 200, 500 and 767 (the tables' split), the
embedded digits 0–3 (four classes, 200 points, Simpson: six one-vs-one problems per fit) and the
tables' three sigmoid data sets (their first similarity of the grid). Both grids use the store of
K0's spectra (:mod:`indkernel.core.spectrum_cache`, the default: each fold's K0 decomposed once
for all its grid points, denoise's as Indefinite SVM's); Indefinite SVM's grid also runs without
it (budget 0: once per grid point), :class:`indkernel.IndefiniteSVCCV` scores the same grid on the
same folds along warm-started paths (row ``indefinite, warm path``), and the two searches and the
path run again with ``n_jobs=2`` (two joblib worker processes, one thread each, started and warmed
up before the first measurement), the ratio then to denoise's search with ``n_jobs=2``. Prints,
per data set, each search's seconds (min–max over ``--repeats``), the ratios to denoise, the fits
short of tol (that warned: status ``"roundoff"``, certified as far as floating point allows, short
of 1e-4; the ``n_jobs=2`` searches fit the same problems, whose warnings stay in the workers), and
writes the rows to ``figures/model_selection.csv``. Beside the grids it times single fits on the first fold's
training block (C = ρ = 1, each from scratch, eigendecomposition included: rows ``fit: denoise``
and ``fit: indefinite``, the ratio to denoise's fit) and a grid point: a fit at the grid's first
point (its smallest C and ρ; Indefinite SVM's Newton iterations there printed, summed over the
binary problems), with the fold's spectrum in the store as at every grid point after the fold's
first (rows ``point: denoise`` and ``point: indefinite``). The goal line adds what a grid of 36
fits each as cheap as that one would cost against denoise's six::

    INDKERNEL_DATA=<data directory> python figures/model_selection.py [--repeats 2] [--datasets ...]

Without a data directory it runs on the embedded digits (3 vs 5, and 0–3) only; ``main(quick=True)``
on digits 3 vs 5 with a 2 × 2 grid (the test suite's check that the script runs).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import model_selection  # through its module: the gallery's API links scan imported classes
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning

from indkernel import IndefiniteSVC, IndefiniteSVCCV, SpectrumSVC
from indkernel.core import spectrum_cache
from indkernel.kernels import simpson
from indkernel.reproduction import experiments

C_GRID = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
#: The goal: the 36-point grid within this multiple of denoise's 6-point grid (a point at denoise's price).
GOAL = 6.0
RHO_GRID = [0.1, 1.0, 10.0, 100.0, 1e3, 1e4]
FOLDS, TOL = 5, experiments.FIT_TOL
USPS_SIZES = (200, 500, 767)
MULTICLASS_SIZE = 200
MULTICLASS = f"digits-0-3-SS-n{MULTICLASS_SIZE}"
SIGMOID_SETS = ("diabetes-sig", "german-sig", "a1a-sig")
DATASETS = [f"USPS-3-5-SS-n{n}" for n in USPS_SIZES] + [MULTICLASS, *SIGMOID_SETS]
#: The parallel searches' workers (joblib's processes, one thread each).
PARALLEL = 2
OUT = Path(__file__).with_name("model_selection.csv")


def problems(names, quick: bool = False) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(description, K_train, y_train)`` of each benchmarked data set."""
    if quick or not os.environ.get("INDKERNEL_DATA"):
        data = experiments.load("digits-3-5-SS")
        binary = [_training_block("digits 3-5 SS", data, len(data.split.train))]
        return binary if quick else binary + [_four_digits()]
    chosen = []
    for name in names:
        if name == MULTICLASS:
            chosen.append(_four_digits())
        elif name.startswith("USPS"):
            size = int(name.split("-n")[1])
            chosen.append(_training_block(name, experiments.load("USPS-3-5-SS"), size))
        else:
            data = experiments.load(name)
            chosen.append(_training_block(name, data, len(data.split.train)))
    return chosen


def _training_block(name: str, data, size: int):
    rows = data.split.train[np.random.default_rng(0).permutation(len(data.split.train))[:size]]
    rows = np.sort(rows)
    K = next(iter(data.similarities.values()))()
    return name, np.ascontiguousarray(K[np.ix_(rows, rows)]), data.y[rows]


def _four_digits():
    """``MULTICLASS_SIZE`` random points of the embedded digits 0–3 (four classes) with the Simpson similarity."""
    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 4)
    rows = np.sort(np.random.default_rng(0).choice(keep, MULTICLASS_SIZE, replace=False))
    return MULTICLASS, simpson(X[rows] / 16.0), y[rows]


def timed_search(estimator, grid: dict, K: np.ndarray, y: np.ndarray, n_jobs: int = 1) -> tuple[float, int]:
    """Seconds of the grid search (no refit) and the number of its fits that warned of no
    certificate to tol (in this process)."""
    cv = model_selection.StratifiedKFold(FOLDS, shuffle=True, random_state=0)
    return _timed(model_selection.GridSearchCV(estimator, grid, cv=cv, refit=False, n_jobs=n_jobs), K, y)


def timed_path(estimator, Cs, rhos, K: np.ndarray, y: np.ndarray, n_jobs: int = 1) -> tuple[float, int]:
    """Seconds of :class:`indkernel.IndefiniteSVCCV` on the same folds and grid (no refit), and
    its fits that warned of no certificate to tol (in this process)."""
    cv = model_selection.StratifiedKFold(FOLDS, shuffle=True, random_state=0)
    return _timed(IndefiniteSVCCV(estimator, Cs=Cs, rhos=rhos, cv=cv, refit=False, n_jobs=n_jobs), K, y)


def _timed(search, K: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        search.fit(K, y)
        seconds = time.perf_counter() - start
    return seconds, sum(issubclass(w.category, ConvergenceWarning) for w in caught)


def timed_fits(K: np.ndarray, y: np.ndarray, repeats: int, *, C: float = 1.0, rho: float = 1.0, kind: str = "fit",
               stored: bool = False) -> tuple[dict[str, list[float]], int]:
    """Seconds of single fits at (C, ρ) on the first fold's training block, denoise's and Indefinite
    SVM's alternately, ``max(repeats, 3)`` of each (rows ``<kind>: denoise`` and ``<kind>: indefinite``):
    each from scratch (the store emptied: its eigendecomposition included, as denoise's), or with
    ``stored`` the block's spectrum in the store, as every grid point after the fold's first has it
    (an untimed round first puts it there); and Indefinite SVM's Newton iterations there (summed over
    its binary problems)."""
    cv = model_selection.StratifiedKFold(FOLDS, shuffle=True, random_state=0)
    rows = next(cv.split(K, y))[0]
    K_fold, y_fold = np.ascontiguousarray(K[np.ix_(rows, rows)]), y[rows]
    fits = {f"{kind}: denoise": SpectrumSVC("denoise", C=C, class_weight="authors"),
            f"{kind}: indefinite": IndefiniteSVC(C=C, rho=rho, class_weight="authors", tol=TOL)}
    seconds: dict[str, list[float]] = {name: [] for name in fits}
    for round_ in range(max(repeats, 3) + stored):
        for name, estimator in fits.items():
            if not stored:
                spectrum_cache.clear()
            start = time.perf_counter()
            estimator.fit(K_fold, y_fold)
            if not stored or round_ > 0:
                seconds[name].append(time.perf_counter() - start)
    return seconds, int(np.sum(fits[f"{kind}: indefinite"].n_iter_))


def main(repeats: int = 2, names=DATASETS, *, quick: bool = False, out: Path = OUT) -> pd.DataFrame:
    Cs, rhos = (C_GRID[2:4], RHO_GRID[:2]) if quick else (C_GRID, RHO_GRID)
    indefinite = IndefiniteSVC(class_weight="authors", tol=TOL)
    denoise = SpectrumSVC("denoise", class_weight="authors")
    store, parallel = spectrum_cache.DEFAULT_BUDGET, f", n_jobs={PARALLEL}"
    searches = {  # name: (the search, the store's budget)
        "denoise": (partial(timed_search, denoise, {"C": Cs}), store),
        "indefinite": (partial(timed_search, indefinite, {"C": Cs, "rho": rhos}), store),
        "indefinite, no store": (partial(timed_search, indefinite, {"C": Cs, "rho": rhos}), 0),
        "indefinite, warm path": (partial(timed_path, indefinite, Cs, rhos), store),
        "denoise" + parallel: (partial(timed_search, denoise, {"C": Cs}, n_jobs=PARALLEL), store),
        "indefinite" + parallel: (partial(timed_search, indefinite, {"C": Cs, "rho": rhos}, n_jobs=PARALLEL), store),
        "indefinite, warm path" + parallel: (partial(timed_path, indefinite, Cs, rhos, n_jobs=PARALLEL), store),
    }
    data = problems(names, quick)
    _, K, y = data[0]
    timed_search(indefinite, {"C": Cs[:1], "rho": rhos[:1]}, K, y, n_jobs=PARALLEL)  # the workers started and warm
    rows = []
    for name, K, y in data:
        seconds: dict[str, list[float]] = {search: [] for search in searches}
        short = dict.fromkeys(seconds, 0)
        for _ in range(repeats):
            for search, (timed, budget) in searches.items():
                spectrum_cache.clear()
                spectrum_cache.set_budget(budget)
                elapsed, warned = timed(K, y)
                seconds[search].append(elapsed)
                short[search] = max(short[search], warned)
        spectrum_cache.set_budget(spectrum_cache.DEFAULT_BUDGET)
        fits, _ = timed_fits(K, y, repeats)
        points, iterations = timed_fits(K, y, repeats, C=Cs[0], rho=rhos[0], kind="point", stored=True)
        seconds.update(fits | points)
        short.update(dict.fromkeys(fits | points, 0))
        print(f"{name:>18} n={len(y):4d} the grid's first point (C={Cs[0]:g}, rho={rhos[0]:g}): {iterations} Newton "
              "iteration(s)", flush=True)
        for search, values in seconds.items():
            baseline = (f"{search.split(':')[0]}: denoise" if ":" in search
                        else "denoise" + (parallel if parallel in search else ""))
            ratios = np.array(values) / np.array(seconds[baseline])
            rows.append(dict(data=name, n=len(y), search=search, seconds_min=min(values), seconds_max=max(values),
                             ratio_min=ratios.min(), ratio_max=ratios.max(), fits_short_of_tol=short[search]))
            print(f"{name:>18} n={len(y):4d} {search:>32}: {min(values):7.2f}-{max(values):7.2f} s, "
                  f"{ratios.min():6.1f}-{ratios.max():6.1f}x denoise, {short[search]} fits short of tol", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(out, index=False, float_format="%.3f")
    print(goal(table))
    return table


def goal(table: pd.DataFrame) -> str:
    """How far the goal is: Indefinite SVM's 36-point grid within ``GOAL``x denoise's 6-point grid
    (a grid point at denoise's price), per data set and search, the worst repeat; and the floor
    under it: six times the ratio of a fit at the grid's first point to denoise's (36 such fits
    against denoise's six)."""
    grids = table[table.search.str.startswith("indefinite")]
    met = grids[grids.ratio_max <= GOAL]
    floor = table[table.search == "point: indefinite"]
    return (f"goal {GOAL:g}x denoise's grid: met by {len(met)} of {len(grids)} (data set, search) pairs; "
            f"the ratios range over {grids.ratio_min.min():.1f}-{grids.ratio_max.max():.1f}x; 36 fits at the grid's "
            f"first point would cost {6 * floor.ratio_min.min():.1f}-{6 * floor.ratio_max.max():.1f}x denoise's grid")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="GridSearchCV of Indefinite SVM against denoise, side by side.")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--datasets", nargs="+", default=DATASETS,
                        help=f"USPS-3-5-SS-n<size>, {MULTICLASS} and/or diabetes-sig german-sig a1a-sig")
    arguments = parser.parse_args()
    main(arguments.repeats, arguments.datasets)
