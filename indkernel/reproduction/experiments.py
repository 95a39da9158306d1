"""The paper's tables (section ``s:num-res``): data sets with their similarities, the methods, the
protocol, and the paper's own numbers to print beside ours.

``table:data_stats`` (sizes, λ_min and λ_max of the full kernels), ``table:gen_performance``
(denoise, flip, shift, Mod SVM, SVM and Indefinite SVM on indefinite similarities) and
``table:gen_performance_perturbSVM`` (SVM and PerturbSVM on linear and Gaussian kernels of USPS,
unperturbed and noisy). ``figures/tables.py`` runs them; ``quick=True`` runs every step on small
subsets with small grids (for the tests and a first look).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import scipy.stats
from sklearn.base import clone
from sklearn.preprocessing import StandardScaler

from .. import datasets, kernels
from .._files import write_csv, write_text
from .._progress import tqdm
from ..core.rank_one import compile_oracle
from ..estimators.baselines import SpectrumSVC
from ..estimators.indefinite import PerturbSVC
from ..estimators.registry import C_GRID, FIT_TOL, QUICK_C_GRID, QUICK_RHO_GRID, RHO_GRID
from ..estimators.registry import METHODS as REGISTRY
from ..solvers.tracking import _positive_int
from .measure import cores
from .protocol import Split, performance, random_split, select_and_test

#: table:data_stats of the paper: (# train, # test, λ_min, λ_max).
PAPER_STATS = {
    "USPS-3-5-SS": (767, 773, -70.00, 903.94), "USPS-3-5-TD1": (767, 773, -0.31, 764.72),
    "USPS-4-6-SS": (829, 857, -74.38, 819.36), "USPS-4-6-TD1": (829, 857, -0.72, 771.07),
    "diabetes-sig": (384, 384, -0.65, 211.62), "german-sig": (500, 500, -928.10, 8.50),
    "a1a-sig": (803, 802, -0.01, 84.44),
}
METHODS = ("Denoise", "Flip", "Shift", "Mod SVM", "SVM", "Indefinite SVM")
#: table:gen_performance of the paper: accuracy, recall, average per data set and method.
PAPER_PERFORMANCE = {
    "USPS-3-5-SS": [(95.47, 94.50, 94.98), (95.21, 94.50, 94.86), (93.27, 94.98, 94.12), (96.12, 96.17, 96.15),
                    (69.47, 67.94, 68.71), (95.73, 97.13, 96.43)],
    "USPS-3-5-TD1": [(98.58, 98.56, 98.57), (98.45, 98.33, 98.39), (98.58, 98.56, 98.57), (98.19, 97.85, 98.02),
                     (98.58, 98.56, 98.57), (98.45, 98.33, 98.39)],
    "USPS-4-6-SS": [(98.60, 99.32, 98.96), (98.25, 99.32, 98.79), (96.73, 96.61, 96.67), (98.60, 99.32, 98.96),
                    (84.36, 81.72, 83.04), (98.25, 99.77, 99.01)],
    "USPS-4-6-TD1": [(99.30, 99.77, 99.54), (99.30, 99.77, 99.54), (99.18, 99.55, 99.37), (99.18, 99.55, 99.37),
                     (99.30, 99.77, 99.54), (99.30, 99.77, 99.54)],
    "diabetes-sig": [(74.48, 78.40, 76.44), (74.74, 76.80, 75.77), (76.56, 89.60, 83.08), (76.04, 78.40, 77.22),
                     (73.70, 76.40, 75.05), (77.08, 89.20, 83.14)],
    "german-sig": [(70.40, 78.00, 74.20), (70.40, 78.00, 74.20), (75.60, 46.67, 61.13), (72.60, 66.00, 69.30),
                   (69.40, 80.00, 74.70), (62.80, 85.33, 74.07)],
    "a1a-sig": [(74.06, 87.31, 80.69), (76.18, 87.82, 82.00), (75.69, 87.31, 81.50), (78.55, 89.34, 83.95),
                (75.69, 87.82, 81.75), (82.92, 81.73, 82.32)],
}
#: table:gen_performance_perturbSVM: (SVM, PerturbSVM) unperturbed then noisy, each (acc, recall, avg).
PAPER_PERTURB = {
    "USPS-3-5-linear": [(96.25, 95.69, 95.97), (96.12, 95.93, 96.03), (90.27, 90.00, 90.14), (93.16, 92.87, 93.01)],
    "USPS-4-6-linear": [(99.07, 99.10, 99.08), (99.07, 99.32, 99.19), (97.39, 97.34, 97.36), (97.97, 98.13, 98.05)],
    "USPS-3-5-gaussian": [(97.67, 98.09, 97.88), (97.54, 97.37, 97.46), (92.11, 91.27, 91.69), (93.57, 92.89, 93.23)],
    "USPS-4-6-gaussian": [(99.18, 99.55, 99.37), (99.30, 99.55, 99.42), (98.00, 98.15, 98.08), (97.99, 98.19, 98.09)],
}
MEASURES = ("accuracy", "recall", "average")
PERFORMANCE_SETS = ["USPS-3-5-SS", "USPS-3-5-TD1", "USPS-4-6-SS", "USPS-4-6-TD1", "diabetes-sig", "german-sig",
                    "a1a-sig"]
PERTURB_SETS = ["USPS-3-5-linear", "USPS-4-6-linear", "USPS-3-5-gaussian", "USPS-4-6-gaussian"]
DIGITS_PERFORMANCE_SETS = ["digits-3-5-SS", "digits-3-5-TD1", "digits-4-6-SS"]
DIGITS_PERTURB_SETS = ["digits-3-5-linear", "digits-3-5-gaussian"]
#: The paper's training sizes (table:data_stats); the rest of each data set is the test part.
TRAIN_SIZES = {"USPS-3-5": 767, "USPS-4-6": 829, "diabetes": 384, "german": 500, "a1a": 803}

TD_GAMMAS, GAUSSIAN_GAMMAS = [0.01, 0.03, 0.1], [0.005, 0.02, 0.05]
SIGMOID_GRID = [(scale, r) for scale in (0.1, 1.0) for r in (-1.0, 0.0, 1.0)]  # a = scale / p
#: Points kept per data set in quick mode (half train, half test).
QUICK_SIZE = 120
#: Random splits of the whole protocol by default: ``indkernel tables`` (full) and ``--quick``.
SPLITS = {"full": 10, "quick": 2}
#: A paired difference across splits counts as significant below this p-value (two-sided t-test).
SIGNIFICANCE = 0.05


@dataclass
class DataSet:
    """One row group of the tables: points, labels, which label is positive, the split, and the
    similarity matrices (over all points) to cross-validate over, by description."""

    name: str
    X: np.ndarray
    y: np.ndarray
    positive: object
    split: Split
    similarities: dict[str, Callable[[], np.ndarray]]


def _cached(function: Callable[[], np.ndarray]) -> Callable[[], np.ndarray]:
    return lru_cache(maxsize=1)(function)


def _tangent_kernel(distances: Callable[[], np.ndarray], gamma: float) -> np.ndarray:
    """``exp(-γd²)`` from the squared tangent distances."""
    return np.exp(-gamma * distances())


def _usps_or_digits(source: str, pair: tuple[int, int], data_dir):
    return datasets.load_digits_pair(*pair) if source == "digits" else datasets.load_usps(pair, data_dir)


def _subset(X, y, size: int, seed: int):
    if size >= len(y):
        return X, y
    pick = np.sort(np.random.default_rng(seed).choice(len(y), size, replace=False))
    return X[pick], y[pick]


def _similarities(kind: str, X: np.ndarray, quick: bool) -> dict[str, Callable[[], np.ndarray]]:
    if kind == "SS":
        return {"simpson": _cached(lambda: kernels.simpson(X))}
    if kind == "TD1":
        distances = _cached(lambda: kernels.tangent_distances(X))
        gammas = TD_GAMMAS[:2] if quick else TD_GAMMAS
        return {f"gamma={g:g}": _cached(partial(_tangent_kernel, distances, g)) for g in gammas}
    if kind == "linear":
        return {"linear": _cached(lambda: kernels.linear(X))}
    if kind == "gaussian":
        gammas = GAUSSIAN_GAMMAS[:2] if quick else GAUSSIAN_GAMMAS
        return {f"gamma={g:g}": _cached(partial(kernels.gaussian, X, gamma=g)) for g in gammas}
    if kind == "sig":
        grid = SIGMOID_GRID[:2] if quick else SIGMOID_GRID
        return {f"a={s:g}/p, r={r:g}": _cached(partial(kernels.sigmoid, X, a=s / X.shape[1], r=r)) for s, r in grid}
    raise ValueError(f"unknown similarity {kind!r}")


def load(name: str, *, quick: bool = False, data_dir=None, seed: int = 0, noisy: bool = False) -> DataSet:
    """The data set of a table row, e.g. ``"USPS-3-5-SS"``, ``"a1a-sig"``, ``"USPS-4-6-gaussian"`` (or
    ``"digits-3-5-SS"``: the embedded digits, no data directory needed).

    The split has the paper's training size (half the points in quick mode, on a subset of
    :data:`QUICK_SIZE`). UCI features other than a1a's binary ones are standardized with the
    training part's statistics before the sigmoid. ``noisy=True`` adds uniform noise in [-1, 1]
    to every pixel of the [-1, 1] images and maps them back to [0, 1] (``table:gen_performance_perturbSVM``).
    """
    parts = name.split("-")
    source, kind = parts[0], parts[-1]
    rng_seed = seed + 1
    if source in ("USPS", "digits"):
        pair = (int(parts[1]), int(parts[2]))
        X, y = _usps_or_digits(source, pair, data_dir)
        positive = pair[0]
    elif source in ("diabetes", "german", "a1a"):
        X, y = datasets.LOADERS[source](data_dir)
        positive = {"diabetes": 1, "german": 2, "a1a": 1}[source]
    else:
        raise ValueError(f"unknown data set {name!r}; e.g. USPS-3-5-SS, USPS-4-6-TD1, diabetes-sig, german-sig, "
                         "a1a-sig, USPS-3-5-linear, USPS-3-5-gaussian, digits-3-5-SS")
    if quick:
        X, y = _subset(X, y, QUICK_SIZE, rng_seed)
    base = "-".join(parts[:-1])
    split = random_split(y, len(y) // 2 if quick else TRAIN_SIZES.get(base, len(y) // 2), seed)
    if noisy:
        noise = np.random.default_rng(rng_seed).uniform(-1.0, 1.0, X.shape)
        X = ((2.0 * X - 1.0) + noise + 2.0) / 4.0
    if kind == "sig" and source != "a1a":
        X = StandardScaler().fit(X[split.train]).transform(X)
    return DataSet(name, X, y, positive, split, _similarities(kind, X, quick))


def _grids(quick: bool) -> tuple[list, list]:
    return (QUICK_C_GRID, QUICK_RHO_GRID) if quick else (C_GRID, RHO_GRID)


def gen_performance_methods(quick: bool):
    """``(name, estimator, grid)`` for ``table:gen_performance``, from the registry
    (:mod:`indkernel.estimators.registry`); every method weights the classes as the authors' code
    (``class_weight="authors"``: C for the positive class, C·n₊/n₋ for the other). Indefinite SVM
    classifies new points with its default rule (``test_kernel="consistent"``), in the
    cross-validation as in the test."""
    return [(name, REGISTRY[name].estimator(class_weight="authors"), REGISTRY[name].param_grid(quick))
            for name in METHODS]


def gen_performance(names, *, methods=METHODS, quick: bool = False, data_dir=None, n_jobs=None, seed: int = 0,
                    progress=None):
    """``table:gen_performance`` (the rows of ``methods``) and ``table:data_stats`` (made with
    Indefinite SVM's chosen similarity, so empty without it): two long DataFrames."""
    rows, stats = [], []
    for name in names:
        data = load(name, quick=quick, data_dir=data_dir, seed=seed)
        for method, estimator, grid in gen_performance_methods(quick):
            if method not in methods:
                continue
            outcome = select_and_test(estimator, grid, data.similarities, data.y, data.split,
                                      positive=data.positive, n_jobs=n_jobs, seed=seed)
            rows.append(dict(dataset=name, method=method, **outcome.test, cv_score=outcome.cv_score,
                             similarity=outcome.similarity, params=_describe(outcome.params),
                             seconds=outcome.seconds))
            if method == "Indefinite SVM":
                stats.append(_spectrum_row(data, outcome.similarity))
            if progress is not None:
                progress(f"{name}: {method}")
    return pd.DataFrame(rows), pd.DataFrame(stats)


def _describe(params: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in sorted(params.items()))


def _spectrum_row(data: DataSet, similarity: str) -> dict:
    """Sizes and the extreme eigenvalues of the full kernel (train and test together), for the
    similarity parameters that Indefinite SVM's cross-validation chose (as the paper reports)."""
    values = np.linalg.eigvalsh(data.similarities[similarity]())
    return dict(dataset=data.name, train=len(data.split.train), test=len(data.split.test), similarity=similarity,
                lambda_min=values[0], lambda_max=values[-1])


def gen_performance_perturb(names, *, quick: bool = False, data_dir=None, n_jobs=None, seed: int = 0,
                            progress=None) -> pd.DataFrame:
    """``table:gen_performance_perturbSVM``: SVM and PerturbSVM, unperturbed (cross-validated) and
    noisy (trained with the unperturbed data's best parameters, as the paper)."""
    Cs, rhos = _grids(quick)
    methods = [("SVM", SpectrumSVC("none", class_weight="authors"), {"C": Cs}),
               ("PerturbSVM", PerturbSVC(class_weight="authors", tol=FIT_TOL), {"C": Cs, "rho": rhos})]
    rows = []
    for name in names:
        clean = load(name, quick=quick, data_dir=data_dir, seed=seed)
        noisy = load(name, quick=quick, data_dir=data_dir, seed=seed, noisy=True)
        for method, estimator, grid in methods:
            outcome = select_and_test(estimator, grid, clean.similarities, clean.y, clean.split,
                                      positive=clean.positive, n_jobs=n_jobs, seed=seed)
            rows.append(dict(dataset=name, data="unperturbed", method=method, **outcome.test,
                             similarity=outcome.similarity, params=_describe(outcome.params)))
            K = noisy.similarities[outcome.similarity]()
            train, test = noisy.split.train, noisy.split.test
            model = clone(estimator).set_params(**outcome.params).fit(K[np.ix_(train, train)], noisy.y[train])
            scores = performance(noisy.y[test], model.predict(K[np.ix_(test, train)]), noisy.positive)
            rows.append(dict(dataset=name, data="noisy", method=method, **scores, similarity=outcome.similarity,
                             params=_describe(outcome.params)))
            if progress is not None:
                progress(f"{name}: {method}")
    return pd.DataFrame(rows)


def performance_markdown(table: pd.DataFrame) -> str:
    """``table:gen_performance`` as markdown: ours (mean ± sd over the splits of its ``split``
    column), then the paper's in parentheses, marked ✓ inside the range of our splits, ✗ outside."""
    lines = ["| data set | measure | " + " | ".join(METHODS) + " |", "|" + " --- |" * (2 + len(METHODS))]
    for name, group in table.groupby("dataset", sort=False):
        paper = PAPER_PERFORMANCE.get(name)
        for m, measure in enumerate(MEASURES):
            cells = [_split_cell(group.loc[group.method == method, measure], paper[k][m] if paper else None)
                     for k, method in enumerate(METHODS)]
            lines.append(f"| {name} | {measure} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def perturb_markdown(table: pd.DataFrame) -> str:
    """``table:gen_performance_perturbSVM`` as markdown: ours (paper's), as :func:`performance_markdown`."""
    columns = [("unperturbed", "SVM"), ("unperturbed", "PerturbSVM"), ("noisy", "SVM"), ("noisy", "PerturbSVM")]
    lines = ["| data set | measure | " + " | ".join(f"{m} ({d})" for d, m in columns) + " |",
             "|" + " --- |" * (2 + len(columns))]
    for name, group in table.groupby("dataset", sort=False):
        paper = PAPER_PERTURB.get(name)
        for m, measure in enumerate(MEASURES):
            cells = [_split_cell(group.loc[(group.data == data) & (group.method == method), measure],
                                 paper[k][m] if paper else None) for k, (data, method) in enumerate(columns)]
            lines.append(f"| {name} | {measure} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _split_cell(values: pd.Series, paper) -> str:
    """One value as ``_cell``; several (one per split) as ``mean ± sd``, the paper's value marked
    ✓ if it lies within our smallest and largest, ✗ if not."""
    if len(values) <= 1:
        return _cell(values.iloc[0] if len(values) else None, paper)
    text = f"{values.mean():.2f} ± {values.std():.2f}"
    if paper is None:
        return text
    return f"{text} ({paper:.2f} {'✓' if values.min() <= paper <= values.max() else '✗'})"


def paired_comparison(performance: pd.DataFrame, perturb: pd.DataFrame | None = None,
                      measure: str = "average") -> pd.DataFrame:
    """Per data set, Indefinite SVM against each baseline (and PerturbSVM against the SVM, on
    unperturbed and noisy data) over the splits: the mean and standard deviation of the paired
    difference of ``measure`` and the two-sided paired t-test's p-value (NaN with one split or
    where every difference is zero), significant below :data:`SIGNIFICANCE`."""
    pairs = [(name, "Indefinite SVM", baseline, group.pivot(index="split", columns="method", values=measure))
             for name, group in performance.groupby("dataset", sort=False) for baseline in METHODS[:-1]]
    if perturb is not None:
        pairs += [(f"{name} ({data})", "PerturbSVM", "SVM", group.pivot(index="split", columns="method", values=measure))
                  for (name, data), group in perturb.groupby(["dataset", "data"], sort=False)]
    return pd.DataFrame([dict(dataset=name, method=method, baseline=baseline, **paired(wide[method], wide[baseline]))
                         for name, method, baseline, wide in pairs])


def paired(ours: pd.Series, theirs: pd.Series) -> dict:
    """The paired difference ``ours - theirs`` over the splits (aligned on their index): its count,
    mean and standard deviation, the two-sided paired t-test's p-value (NaN with one split or where
    every difference is the same) and whether it is below :data:`SIGNIFICANCE`."""
    difference = ours - theirs
    p_value = np.nan
    if len(difference) > 1 and difference.std() > 0:
        p_value = float(scipy.stats.ttest_rel(ours, theirs).pvalue)
    return dict(splits=len(difference), mean_difference=difference.mean(), sd=difference.std(), p_value=p_value,
                significant=bool(p_value < SIGNIFICANCE))


def comparison_markdown(comparison: pd.DataFrame) -> str:
    """The paired comparison as markdown, significant differences in bold."""
    lines = ["| data set | method − baseline | mean difference | sd | p (paired t) |", "|" + " --- |" * 5]
    for row in comparison.itertuples():
        difference = f"{row.mean_difference:+.2f}"
        if row.significant:
            difference = f"**{difference}**"
        p_value = "—" if np.isnan(row.p_value) else f"{row.p_value:.3f}"
        lines.append(f"| {row.dataset} | {row.method} − {row.baseline} | {difference} | {row.sd:.2f} | {p_value} |")
    return "\n".join(lines)


def stats_markdown(stats: pd.DataFrame) -> str:
    """``table:data_stats`` as markdown: ours (paper's)."""
    lines = ["| data set | # train | # test | λ_min | λ_max | similarity (chosen by CV) |", "|" + " --- |" * 6]
    for row in stats.itertuples():
        paper = PAPER_STATS.get(row.dataset)
        cells = [_cell(row.train, paper[0] if paper else None, "d"), _cell(row.test, paper[1] if paper else None, "d"),
                 _cell(row.lambda_min, paper[2] if paper else None), _cell(row.lambda_max, paper[3] if paper else None)]
        lines.append(f"| {row.dataset} | " + " | ".join(cells) + f" | {row.similarity} |")
    return "\n".join(lines)


def _cell(ours, paper, fmt: str = ".2f") -> str:
    text = "—" if ours is None else format(ours, fmt)
    return text if paper is None else f"{text} ({format(paper, fmt)})"


def one_split(seed: int, *, performance_sets, perturb_sets, quick: bool, data_dir, n_jobs, progress=None,
              methods=METHODS) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The whole protocol (split, cross-validation, refit, test) on the split ``seed`` of every data
    set: the performance (of ``methods``), data-stats and perturbation tables, each with a ``split`` column."""
    options = dict(quick=quick, data_dir=data_dir, n_jobs=n_jobs, seed=seed, progress=progress)
    performance, stats = gen_performance(performance_sets, methods=methods, **options)
    perturb = gen_performance_perturb(perturb_sets, **options)
    return performance.assign(split=seed), stats.assign(split=seed), perturb.assign(split=seed)


def previous_run(out: Path, mode: str) -> str:
    """What the last whole run of this mode in ``out`` took (from its ``runs.csv``), for the line a
    run prints first; "" where there is none."""
    try:
        runs = pd.read_csv(Path(out) / "runs.csv")
        whole = runs[(runs["mode"] == mode) & (runs["datasets"] == "all") & (runs.get("methods", "all") == "all")]
        run = whole.iloc[-1]
    except (OSError, ValueError, KeyError, IndexError, pd.errors.ParserError):
        return ""
    return (f" (a whole run, `{run['command']}`, took {float(run['minutes']):.0f} minutes on "
            f"{run.get('cores', '?')} cores with n_jobs={run['n_jobs']})")


def over_splits(one: Callable, splits: int, *, n_jobs, quiet: bool, what: str, steps: int, before: str = "") -> list:
    """``[one(seed, n_jobs=..., progress=...) for seed in range(splits)]``, after a line saying what
    runs (and ``before``: what an earlier run took). With one split its fits run in parallel
    (``n_jobs``) under a progress bar of ``steps`` steps; with several, the splits do (joblib, each
    split's fits on one process), under a bar of splits."""
    parallel = 1 if splits == 1 else min(splits, joblib.effective_n_jobs(n_jobs))
    if not quiet:
        print(f"{what}: {splits} split(s), {parallel} at a time{before}", flush=True)
    compile_oracle()  # before the bar (and for the workers, which load its cache): the estimate is the fits' alone
    if splits == 1:
        bar = tqdm(total=steps, disable=quiet, desc=what)

        def progress(step: str) -> None:
            bar.set_postfix_str(step)
            bar.update()

        parts = [one(0, n_jobs=n_jobs, progress=progress)]
        bar.close()
        return parts
    jobs = joblib.Parallel(n_jobs=parallel, return_as="generator_unordered")(
        joblib.delayed(one)(seed, n_jobs=1) for seed in range(splits))
    return list(tqdm(jobs, total=splits, disable=quiet, desc=f"{what} (splits)"))


def write_tables(out, *, quick: bool = False, digits: bool = False, n_jobs: int | None = 2, data_dir=None,
                 quiet: bool = False, performance_sets=None, perturb_sets=None, splits: int | None = None,
                 datasets=None, methods=None) -> dict:
    """Run the three tables over ``splits`` random splits (default :data:`SPLITS`) and write
    ``data_stats.csv``, ``gen_performance.csv``, ``gen_performance_perturbSVM.csv`` (one row per
    split), ``paired_comparison.csv``, ``runs.csv`` (the commands that made them) and ``tables.md``
    (mean ± sd with the paper's numbers in parentheses, the paired comparison, the commands and
    their run times) into ``out``; return the DataFrames and the markdown.

    ``datasets`` (names from either table) reruns only those rows, ``methods`` (names from
    :data:`METHODS`) only those methods' cells of ``table:gen_performance`` (and ``table:data_stats``
    with Indefinite SVM; no row of the perturbation table): the others are kept from the tables
    already in ``out``, which must have been made in the same mode with as many splits (checked
    before any work), so one data set or one method can be redone after a change. The protocol is
    seeded per split, so a kept cell is the one a whole rerun would give.

    With one split the cross-validation fits run in parallel (``n_jobs``); with several, the
    splits do (joblib, each split's fits on one process). The first line printed says what the
    last whole run into ``out`` took (:func:`previous_run`).
    """
    out = Path(out)
    mode = "quick" if quick else "full"
    splits = SPLITS[mode] if splits is None else splits
    splits = _positive_int(splits, "splits")
    every = (DIGITS_PERFORMANCE_SETS + DIGITS_PERTURB_SETS) if digits else (PERFORMANCE_SETS + PERTURB_SETS)
    if performance_sets is None:
        performance_sets = DIGITS_PERFORMANCE_SETS if digits else PERFORMANCE_SETS
    if perturb_sets is None:
        perturb_sets = DIGITS_PERTURB_SETS if digits else PERTURB_SETS
    earlier = None
    if datasets is not None:
        datasets = _known_names(datasets, every, "datasets")
        performance_sets = [name for name in performance_sets if name in datasets]
        perturb_sets = [name for name in perturb_sets if name in datasets]
    if methods is not None:
        methods = _known_names(methods, list(METHODS), "methods")
        perturb_sets = []
    chosen = METHODS if methods is None else methods
    if datasets is not None or methods is not None:
        earlier = _earlier_tables(out, mode, digits, splits)
    started = time.perf_counter()
    parts = over_splits(partial(one_split, performance_sets=performance_sets, perturb_sets=perturb_sets, quick=quick,
                                data_dir=data_dir, methods=chosen),
                        splits, n_jobs=n_jobs, quiet=quiet, what="tables", before=previous_run(out, mode),
                        steps=len(chosen) * len(performance_sets) + 2 * len(perturb_sets))
    tables = [pd.concat(frames, ignore_index=True) for frames in zip(*parts, strict=True)]
    minutes = (time.perf_counter() - started) / 60
    command = ("indkernel tables" + (" --quick" if quick else "") + (" --digits" if digits else "")
               + f" --splits {splits}" + ("" if datasets is None else " --datasets " + " ".join(datasets))
               + ("" if methods is None else " --methods " + " ".join(shlex.quote(name) for name in methods)))
    runs = pd.DataFrame([dict(command=command, mode=mode, digits=digits, splits=splits, minutes=round(minutes, 1),
                              n_jobs=n_jobs, cores=cores(), datasets="all" if datasets is None else " ".join(datasets),
                              methods="all" if methods is None else ", ".join(methods))])
    if earlier is not None:
        tables = _merged(earlier[:3], tables, performance_sets, perturb_sets, chosen)
        runs = pd.concat([earlier[3].assign(methods=earlier[3].get("methods", "all"), cores=earlier[3].get("cores", "?")),
                          runs], ignore_index=True)
    rank = {name: k for k, name in enumerate([*every, *METHODS])}
    performance, stats, perturb = (table.sort_values(columns, key=lambda c: c if c.name == "split" else c.map(rank),
                                                     kind="stable")
                                   for table, columns in zip(tables, (["split", "dataset", "method"],
                                                                      ["split", "dataset"], ["split", "dataset"]),
                                                             strict=True))
    comparison = paired_comparison(performance, perturb)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in zip(OUTPUTS[:-1], (stats, performance, perturb, comparison, runs), strict=True):
        write_csv(out / name, frame)
    over = (f"mean ± standard deviation over {splits} random splits, the paper's number in parentheses, "
            "✓ where it lies within the range of our splits and ✗ where not" if splits > 1
            else "our numbers, the paper's in parentheses")
    markdown = "\n\n".join([
        f"{_provenance(runs)}: {over}. Protocol per "
        "split: a random split of the paper's sizes, 5-fold cross-validation on the training part over C, ρ and "
        "the similarity's parameters scored by (accuracy + recall)/2, refit, one test; every fit weights the "
        f"classes as the authors' code; Indefinite SVM and PerturbSVM are solved to a certified relative gap of "
        f"{FIT_TOL:g}, and Indefinite SVM classifies new points with its consistent rule (`k0(x)ᵀPβ + b`), in the "
        "cross-validation as in the test.",
        "### table:data_stats\n\n(the first split's chosen similarity)\n\n" + stats_markdown(stats[stats.split == 0]),
        "### table:gen_performance\n\n" + performance_markdown(performance),
        "### table:gen_performance_perturbSVM\n\n" + perturb_markdown(perturb),
        f"### Paired comparison over the splits\n\n(accuracy + recall)/2 of the method minus the baseline's; in "
        f"bold where the two-sided paired t-test gives p < {SIGNIFICANCE:g}.\n\n" + comparison_markdown(comparison),
    ])
    write_text(out / "tables.md", markdown + "\n")
    return dict(performance=performance, stats=stats, perturb=perturb, comparison=comparison, markdown=markdown)


#: The files :func:`write_tables` writes into its folder, the markdown last (``indkernel tables``
#: replaces them only with ``--force``).
OUTPUTS = ("data_stats.csv", "gen_performance.csv", "gen_performance_perturbSVM.csv", "paired_comparison.csv",
           "runs.csv", "tables.md")
#: The tables' files that ``write_tables(datasets=...)`` merges with.
TABLE_FILES = ("gen_performance.csv", "data_stats.csv", "gen_performance_perturbSVM.csv", "runs.csv")


def _known_names(names, every: list[str], argument: str) -> list[str]:
    """``names`` as a list of distinct names from ``every``, or a ValueError naming the argument and the choices."""
    names = [names] if isinstance(names, str) else list(names)
    unknown = [name for name in names if name not in every]
    if not names or unknown or len(set(names)) < len(names):
        raise ValueError(f"{argument} must be distinct names among {', '.join(every)}; got {names!r}")
    return names


def _merged(earlier, tables, performance_sets, perturb_sets, methods) -> list[pd.DataFrame]:
    """The earlier performance, data-stats and perturbation tables with the rerun's rows in place
    of theirs: the cells of ``methods`` on ``performance_sets`` (the data-stats rows with Indefinite
    SVM's), the rows of ``perturb_sets``."""
    (performance, stats, perturb), (new_performance, new_stats, new_perturb) = earlier, tables
    redone = performance.dataset.isin(performance_sets) & performance.method.isin(methods)
    restated = stats.dataset.isin(performance_sets if "Indefinite SVM" in methods else [])
    return [_stacked(performance[~redone], new_performance), _stacked(stats[~restated], new_stats),
            _stacked(perturb[~perturb.dataset.isin(perturb_sets)], new_perturb)]


def _stacked(kept: pd.DataFrame, rerun: pd.DataFrame) -> pd.DataFrame:
    """``kept`` then ``rerun``; a rerun without rows of this table (no Indefinite SVM: no data-stats
    row) leaves the kept columns' types as they were (an empty frame's columns would turn the
    integers to floats)."""
    return pd.concat([kept, rerun] if len(rerun) else [kept], ignore_index=True)


def _earlier_tables(out: Path, mode: str, digits: bool, splits: int) -> tuple[pd.DataFrame, ...]:
    """The tables in ``out`` that a rerun of some data sets completes; a ValueError (before any
    work) if they are missing or were made in another mode or with another number of splits."""
    missing = [name for name in TABLE_FILES if not (out / name).is_file()]
    if missing:
        raise ValueError(f"--datasets and --methods rerun part of the tables in --out={out}, but it has no "
                         f"{', '.join(missing)}: run the whole tables into it first")
    *tables, runs = (pd.read_csv(out / name) for name in TABLE_FILES)
    made = runs.iloc[0]
    if (made["mode"], bool(made["digits"]), int(made["splits"])) != (mode, digits, splits):
        raise ValueError(f"the tables in --out={out} were made by `{made['command']}`; rerun their rows with the "
                         f"same mode, data and --splits {int(made['splits'])}")
    return (*tables, runs)


def _provenance(runs: pd.DataFrame) -> str:
    """'Made by `command` in m minutes ...', then the data sets each later command reran."""
    first, *later = runs.itertuples()
    text = f"Made by `{first.command}` in {first.minutes:.1f} minutes on {first.cores} cores (n_jobs={first.n_jobs})"
    for run in later:
        sets = "every data set" if run.datasets == "all" else run.datasets.replace(" ", ", ")
        part = f"the rows of {sets}" if run.methods == "all" else f"the {run.methods} cells of {sets}"
        text += f"; {part} rerun by `{run.command}` in {run.minutes:.1f} minutes on {run.cores} cores (n_jobs={run.n_jobs})"
    return text

