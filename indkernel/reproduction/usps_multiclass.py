"""Ten-class USPS on the standard 7291/2007 split: an experiment beyond the paper.

Indefinite SVM, one-vs-rest (ten binary problems sharing one eigendecomposition of K0) and
one-vs-one (45 problems, each on its pair's rows; :mod:`indkernel.estimators.multiclass`), against denoise,
flip, shift and the plain SVM (libsvm's one-vs-one), on the tangent distance and Simpson
similarities; test error, fit time and peak memory.

Protocol. The similarity over all 9298 images is computed once. Each method's parameters (C; ρ
for Indefinite SVM; γ of the tangent distance) are chosen by 3-fold cross-validation (accuracy)
on a random :data:`SELECT_SIZE`-point subset of the training images; the method is then refit on
the whole training set and tested once on the 2007 test images. Indefinite SVM is solved to a
certified relative gap of :data:`FIT_TOL` and tested with each rule for new points (raw,
consistent and the paper's transductive one, which needs the test×test similarities), each rule
cross-validated with itself (every grid point fitted once per fold and scored by every rule:
:func:`indkernel.reproduction.rule_comparison.cross_validate_rules`). As
a check of the similarities against the literature, the one-nearest-neighbour errors with the
same tangent distance and with the Euclidean distance, which have published values
(:data:`PUBLISHED`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn import model_selection  # through its module: the API docs' autosummary scans imported classes
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score

from .. import datasets, kernels
from .._files import write_csv, write_text
from .._progress import tqdm
from ..estimators.baselines import SpectrumSVC
from ..estimators.indefinite import IndefiniteSVC
from .measure import measure
from .parts import read_part
from .protocol import best_similarity
from .rule_comparison import MAIN_RULES, cross_validate_rules

SIMILARITIES = ("TD", "SS")
#: The files :func:`write` writes into its folder at the end (``indkernel tables`` replaces them only
#: with ``--force``; the split files of a stopped run are resumed).
OUTPUTS = ("usps_multiclass.csv", "usps_multiclass.md")
#: Images in the standard training part (the rest of the 9298, 2007, are the test part).
TRAIN_IMAGES = 7291
#: Training images the parameters are chosen on (3-fold cross-validation).
SELECT_SIZE = 1000
#: The certified relative gap each Indefinite SVM fit is solved to.
FIT_TOL = 1e-3
C_GRID, RHO_GRID, TD_GAMMAS = [1.0, 10.0, 100.0], [1.0, 100.0, 1e4], [0.01, 0.03, 0.1]
QUICK: dict[str, Any] = dict(train=300, test=200, select=150, C=[1.0, 10.0], rho=[100.0], gammas=[0.03])
#: Published ten-class test errors (%) on this split, by (similarity, method): 1-NN with tangent
#: distance (Simard, LeCun & Denker 1993) and with the Euclidean distance, as quoted by Hastie,
#: Tibshirani & Friedman, The Elements of Statistical Learning, 2nd ed., Table 13.1.
PUBLISHED = {("TD", "1-NN"): 2.6, ("Euclidean", "1-NN"): 5.5}
#: The Indefinite SVM rows: their method names and multiclass strategies (``multi_class``).
INDEFINITE = {"Indefinite SVM": "ovo", "Indefinite SVM (ovr)": "ovr"}


def methods(C_grid, rho_grid, indefinite=INDEFINITE) -> list[tuple[str, object, dict]]:
    """``(name, estimator, grid)`` of the compared methods (Indefinite SVM: the strategies of ``indefinite``)."""
    spectral = [(name, SpectrumSVC(spectrum), {"C": C_grid}) for name, spectrum in
                (("Denoise", "denoise"), ("Flip", "flip"), ("Shift", "shift"), ("SVM", "none"))]
    return spectral + [(name, IndefiniteSVC(tol=FIT_TOL, multi_class=strategy), {"C": C_grid, "rho": rho_grid})
                       for name, strategy in indefinite.items()]


@dataclass
class Data:
    """The images of both parts and, per similarity, its full matrices by parameter description."""

    n_train: int
    y_train: np.ndarray
    y_test: np.ndarray
    matrices: dict[str, dict[str, Callable[[], np.ndarray]]]  # similarity -> {parameters: full matrix}
    distances: dict[str, np.ndarray]  # "TD" / "Euclidean": (n_test, n_train) squared distances


def load(similarities=SIMILARITIES, *, quick: bool = False, n_train: int | None = None, data_dir=None,
         verbose: bool = True, seed: int = 0) -> Data:
    """The standard split (``n_train``: a random subset of the training images; quick: the first
    images of each part) and the similarity matrices over all images, train rows first."""
    if n_train is not None and not 10 <= n_train <= TRAIN_IMAGES:
        raise ValueError(f"n_train must be between 10 and {TRAIN_IMAGES} training images; got {n_train}")
    X_train, y_train = datasets.load_usps(None, data_dir, split="train")
    X_test, y_test = datasets.load_usps(None, data_dir, split="test")
    if n_train is not None and not quick:
        keep = np.sort(np.random.default_rng(seed).choice(len(y_train), n_train, replace=False))
        X_train, y_train = X_train[keep], y_train[keep]
    if quick:
        X_train, y_train, X_test, y_test = (X_train[:QUICK["train"]], y_train[:QUICK["train"]],
                                            X_test[:QUICK["test"]], y_test[:QUICK["test"]])
    X, n = np.vstack([X_train, X_test]), len(y_train)
    matrices: dict[str, dict[str, Callable[[], np.ndarray]]] = {}
    distances = {"Euclidean": kernels._squared_distances(X[n:], X[:n])}
    if "TD" in similarities:
        squared = kernels.tangent_distances(X, verbose=verbose)
        distances["TD"] = squared[n:, :n]
        gammas = QUICK["gammas"] if quick else TD_GAMMAS
        matrices["TD"] = {f"gamma={g:g}": partial(_tangent_similarity, squared, g) for g in gammas}
    if "SS" in similarities:
        matrices["SS"] = {"simpson": partial(kernels.simpson, X)}
    return Data(n, y_train, y_test, matrices, distances)


def _tangent_similarity(squared: np.ndarray, gamma: float) -> np.ndarray:
    """``exp(-γd²)`` from the squared tangent distances."""
    return np.exp(-gamma * squared)


def run(similarities=SIMILARITIES, *, quick: bool = False, n_train: int | None = None, data_dir=None,
        n_jobs: int | None = 2, verbose: bool = True, seed: int = 0, indefinite=INDEFINITE) -> pd.DataFrame:
    """One row per (similarity, method, test rule): the chosen parameters, the test error (%), the fit
    time (s), the peak resident memory of the process during the fit (GB), and for the transductive
    rule the time of the prediction; plus the 1-NN rows and the published errors beside them."""
    data = load(similarities, quick=quick, n_train=n_train, data_dir=data_dir, verbose=verbose, seed=seed)
    n = data.n_train
    select = np.sort(np.random.default_rng(seed).choice(n, min(QUICK["select"] if quick else SELECT_SIZE, n),
                                                        replace=False))
    C_grid, rho_grid = (QUICK["C"], QUICK["rho"]) if quick else (C_GRID, RHO_GRID)
    rows = [_nearest_neighbour(data, kind) for kind in data.distances]
    jobs = [(kind, method) for kind in data.matrices for method in methods(C_grid, rho_grid, indefinite)]
    for kind, (name, estimator, grid) in tqdm(jobs, desc="ten-class USPS", disable=not verbose):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if isinstance(estimator, IndefiniteSVC):
                chosen = cross_validate_rules(estimator, grid, data.matrices[kind], data.y_train, select,
                                              cv=model_selection.StratifiedKFold(3), score=accuracy_score, rules=MAIN_RULES,
                                              n_jobs=n_jobs)
            else:
                chosen = {"—": best_similarity(estimator, grid, data.matrices[kind], data.y_train, select, cv=3,
                                               n_jobs=n_jobs)[:3]}
        fitted: dict = {}
        for rule, (_, similarity, parameters) in chosen.items():
            described = _describe(parameters) + ("" if len(data.matrices[kind]) == 1 else f", {similarity}")
            if described not in fitted:
                model = clone(estimator).set_params(**parameters)
                fitted[described] = model, _fit(model, data.matrices[kind][similarity](), data, verbose)
            model, row = fitted[described]
            row = dict(row, similarity=kind, method=name, parameters=described)
            rows.append(_test(model, rule, data.matrices[kind][similarity](), data, row))
    table = pd.DataFrame(rows)
    table["published"] = [np.nan if quick or n_train else PUBLISHED.get((s, m), np.nan)
                          for s, m in zip(table.similarity, table.method, strict=True)]
    return table


def _fit(model, full: np.ndarray, data: Data, verbose: bool) -> dict:
    """Fit ``model`` on the training block of ``full`` (timed, peak memory sampled): the row's fit columns."""
    n = data.n_train
    train = np.ascontiguousarray(full[:n, :n])
    indefinite = isinstance(model, IndefiniteSVC)
    if indefinite:
        model.set_params(verbose=verbose)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the table says whether every problem was certified
        fitted = measure(partial(model.fit, train, data.y_train))
    del train
    row = dict(fit_s=fitted.seconds, peak_GB=_gigabytes(fitted.peak_bytes))
    if indefinite:
        row["certified"] = bool(np.all(model.status_ == "optimal"))
    return row


def _test(model, rule: str, full: np.ndarray, data: Data, row: dict) -> dict:
    """Test ``model`` with ``rule`` (an Indefinite SVM rule, or "—" for a baseline's own): the row,
    with the time and peak memory of the prediction for the transductive rule."""
    n = data.n_train
    if rule != "transductive":
        if rule != "—":
            model.set_params(test_kernel=rule)
        return dict(row, rule=rule, test_error=_error(model.predict(full[n:, :n]), data.y_test))
    predicted = measure(partial(model.set_params(test_kernel="transductive").predict, full[n:]))
    return dict(row, rule=rule, test_error=_error(predicted.value, data.y_test), predict_s=predicted.seconds,
                predict_peak_GB=_gigabytes(predicted.peak_bytes))


def _describe(parameters: dict) -> str:
    return ", ".join(f"{key}={value:g}" for key, value in sorted(parameters.items()))


def _nearest_neighbour(data: Data, kind: str) -> dict:
    nearest = np.argmin(data.distances[kind], axis=1)
    return dict(similarity=kind, method="1-NN", rule="—", parameters="",
                test_error=_error(data.y_train[nearest], data.y_test))


def _error(predicted: np.ndarray, truth: np.ndarray) -> float:
    return float(100.0 * np.mean(predicted != truth))


def _gigabytes(value: int | None) -> float:
    return np.nan if value is None else value / 1e9


def write(out, *, quick: bool = False, n_train: int | None = None, data_dir=None, n_jobs: int | None = 2,
          verbose: bool = True, similarities=SIMILARITIES, splits: int | None = None) -> dict:
    """Run :func:`run` and write ``usps_multiclass.csv`` and ``usps_multiclass.md`` (the table with
    the command and its run time) into ``out``; return the table and the markdown.

    ``splits`` (with ``n_train``): repeat over that many random training subsets (seeds 0, 1, ...),
    each written to ``split-<seed>.csv`` as it finishes and reused by a later run into the same
    ``out`` (so a stopped run resumes); the markdown then gives mean ± sd and each method's paired
    difference to denoise (:func:`split_markdown`). Over splits Indefinite SVM runs its default
    one-vs-one only (one-vs-rest costs 7-8 times its fit, ``figures/multiclass_profile.py``)."""
    if splits is not None and not (n_train and not quick):
        raise ValueError("--splits with --multiclass repeats over random training subsets: pass --n-train N")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    command = ("indkernel tables --multiclass" + (" --quick" if quick else "")
               + (f" --n-train {n_train}" if n_train and not quick else "")
               + ("" if tuple(similarities) == SIMILARITIES else " --similarities " + " ".join(similarities))
               + ("" if splits is None else f" --splits {splits}"))
    options = dict(quick=quick, n_train=n_train, data_dir=data_dir, n_jobs=n_jobs, verbose=verbose)
    if splits is None:
        started = time.perf_counter()
        table = run(similarities, **options)
        minutes = (time.perf_counter() - started) / 60
        body = to_markdown(table)
    else:
        parts = []
        for seed in range(splits):
            path = out / f"split-{seed}.csv"
            part = read_part(path, ("split", "split_minutes", "method"), keep_default_na=False, na_values=[""])
            if part is None:
                started = time.perf_counter()
                part = run(similarities, seed=seed, indefinite={"Indefinite SVM": "ovo"}, **options)
                part = part.assign(split=seed, split_minutes=(time.perf_counter() - started) / 60)
                write_csv(path, part)
                part = read_part(path, ("split",), keep_default_na=False, na_values=[""])  # as a resumed run reads it
            parts.append(part)
        table = pd.concat(parts, ignore_index=True)
        minutes = float(table.groupby("split").split_minutes.first().sum())
        body = split_markdown(table)
    write_csv(out / "usps_multiclass.csv", table)
    markdown = (f"Made by `{command}` in {minutes:.1f} minutes (n_jobs={n_jobs}); "
                f"{_data_sizes(quick, n_train, splits)}.\n\n" + body)
    write_text(out / "usps_multiclass.md", markdown + "\n")
    return dict(table=table, markdown=markdown)


def split_markdown(table: pd.DataFrame) -> str:
    """Test error mean ± sd over the splits per (similarity, method, rule), and the paired
    difference to denoise on the same similarity (bold where the paired t-test gives p <
    :data:`indkernel.reproduction.experiments.SIGNIFICANCE`)."""
    from .experiments import paired

    lines = ["| similarity | method | test rule | test error % | − denoise (p) | fit s |",
             "| --- | --- | --- | ---: | ---: | ---: |"]
    for (kind, method, rule), group in table.groupby(["similarity", "method", "rule"], sort=False):
        errors = group.set_index("split").test_error
        denoise = table[(table.similarity == kind) & (table.method == "Denoise")].set_index("split").test_error
        cell = "—"
        if method != "Denoise" and len(denoise):
            test = paired(errors, denoise)
            p_value = "—" if np.isnan(test["p_value"]) else f"{test['p_value']:.3f}"
            cell = f"{test['mean_difference']:+.2f} ({p_value})"
            cell = f"**{cell}**" if test["significant"] else cell
        fit = group.fit_s.mean() if "fit_s" in group else np.nan
        lines.append(f"| {kind} | {method} | {rule} | {errors.mean():.2f} ± {errors.std():.2f} | {cell} | "
                     f"{'' if pd.isna(fit) else f'{fit:.1f}'} |")
    return "\n".join(lines)


def _data_sizes(quick: bool, n_train: int | None, splits: int | None = None) -> str:
    if splits is not None:
        return f"{splits} random subsets of {n_train} training images of the 7291, all 2007 test images"
    if quick:
        return f"quick: the first {QUICK['train']} training and {QUICK['test']} test images"
    if n_train:
        return f"{n_train} random training images of the 7291, all 2007 test images"
    return "7291 training and 2007 test images"


def to_markdown(table: pd.DataFrame) -> str:
    """The table as markdown: test error with the published value in parentheses where there is one."""
    lines = ["| similarity | method | test rule | parameters | test error % | fit s | peak GB (fit) | certified |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | --- |"]
    for row in table.itertuples():
        error = f"{row.test_error:.2f}" + ("" if np.isnan(row.published) else f" ({row.published:g})")
        fit = "" if pd.isna(getattr(row, "fit_s", np.nan)) else f"{row.fit_s:.1f}"
        peak = "" if pd.isna(getattr(row, "peak_GB", np.nan)) else f"{row.peak_GB:.2f}"
        if row.rule == "transductive" and not pd.isna(row.predict_s):
            fit += f" (+{row.predict_s:.1f} predict)"
        flag = getattr(row, "certified", np.nan)
        certified = "" if pd.isna(flag) else ("yes" if flag else "no")
        lines.append(f"| {row.similarity} | {row.method} | {row.rule} | {row.parameters} | {error} | {fit} | {peak} "
                     f"| {certified} |")
    return "\n".join(lines)
