"""Every method of the registry on a user's similarity matrix, under the protocol of Chen, Garcia,
Gupta, Rahimi & Cazzanti (JMLR 2009): random stratified train/test splits (80/20, 20 of them by
default); on each, every method's parameters chosen by stratified cross-validation on the
training part (accuracy), the best refitted on the whole training part and tested once on the
held-out points (their rows against the training points). The table: each method's test error
(mean ± sd over the splits), the best marked, and each method paired against the best over the
splits (two-sided paired t-test).

Each split is written to its own part file as it finishes (``parts/split-<k>.csv``), so a stopped
run resumes where it stopped, and a rerun with more methods or splits computes only what is new.
The folder remembers the data and settings it was made with (``benchmark.json``): a run on
other data or settings is refused there.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import model_selection  # through its module: the API docs' autosummary scans imported classes

from .._files import write_csv, write_text
from .._progress import tqdm
from .._validation import check_kernel
from ..core.rank_one import compile_oracle
from ..estimators.registry import BENCHMARK_METHODS, METHODS, known_methods
from ..solvers.tracking import _positive_int
from .experiments import paired
from .parts import read_part

#: Chen et al.'s protocol: splits, the held-out fraction, the inner cross-validation's folds.
SPLITS, TEST_SIZE, FOLDS = 20, 0.2, 5
#: The columns of a part file (one split, one row per method).
PART_COLUMNS = ("split", "method", "error", "cv_accuracy", "params", "seconds")
#: The files a finished run writes into its folder.
OUTPUTS = ("benchmark.csv", "summary.csv", "benchmark.md")


@dataclass
class BenchmarkResult:
    """``runs`` (one row per split and method), ``summary`` (one row per method) and ``markdown``."""

    runs: pd.DataFrame
    summary: pd.DataFrame
    markdown: str


def benchmark(K, y, *, methods=None, splits: int = SPLITS, test_size: float = TEST_SIZE, folds: int = FOLDS,
              quick: bool = False, out=None, n_jobs: int | None = None, seed: int = 0,
              quiet: bool = False) -> BenchmarkResult:
    """Run ``methods`` (names of :data:`indkernel.estimators.registry.METHODS`; default
    :data:`~indkernel.estimators.registry.BENCHMARK_METHODS`) on the similarity ``K`` ((n, n),
    symmetric) with labels ``y`` over ``splits`` random stratified splits (module docstring).

    ``quick``: each method's small grid (a first look). ``out``: a folder for the part files and
    the tables (``benchmark.csv``, ``summary.csv``, ``benchmark.md``); a run into a folder that
    holds parts of the same data and settings reuses them. ``n_jobs`` goes to ``GridSearchCV``.
    Every argument is checked before any fit.
    """
    K = check_kernel(K, name="K")
    y = np.asarray(y)
    names = known_methods(BENCHMARK_METHODS if methods is None else methods)
    splits, folds = _positive_int(splits, "splits"), _positive_int(folds, "folds")
    if folds < 2:
        raise ValueError(f"folds must be at least 2 (cross-validation holds out one fold in turn); got {folds}")
    _check_labels(y, len(K), test_size, folds)
    folder = None if out is None else _claim(Path(out), K, y, dict(test_size=test_size, folds=folds, quick=quick,
                                                                   seed=seed))
    compile_oracle()  # before the bar: its estimate is the fits' alone
    parts = []
    with tqdm(total=splits * len(names), disable=quiet, desc="benchmark") as bar:
        for split in range(splits):
            path = None if folder is None else folder / "parts" / f"split-{split}.csv"
            kept = None if path is None else read_part(path, PART_COLUMNS)
            done = {} if kept is None else {row.method: row._asdict() for row in kept.itertuples(index=False)}
            rows = []
            for name in names:
                bar.set_postfix_str(f"split {split + 1}: {name}")
                rows.append(done.pop(name) if name in done else
                            _one(name, K, y, split, seed=seed, test_size=test_size, folds=folds, quick=quick,
                                 n_jobs=n_jobs))
                bar.update()
                if path is not None:  # after every method: a stopped run loses one fit's grid at most
                    write_csv(path, pd.DataFrame(rows + list(done.values()), columns=list(PART_COLUMNS)))
            parts.append(pd.DataFrame(rows, columns=list(PART_COLUMNS)))
    runs = pd.concat(parts, ignore_index=True)
    summary = summarize(runs)
    markdown = summary_markdown(summary, splits=splits, folds=folds, test_size=test_size, n=len(y), quick=quick)
    if folder is not None:
        for name, frame in zip(OUTPUTS[:2], (runs, summary), strict=True):
            write_csv(folder / name, frame)
        write_text(folder / OUTPUTS[2], markdown + "\n")
    return BenchmarkResult(runs, summary, markdown)


def _check_labels(y: np.ndarray, n: int, test_size: float, folds: int) -> None:
    if y.ndim != 1 or len(y) != n:
        raise ValueError(f"y must hold one label per row of K ({n}); got shape {y.shape}")
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be a fraction between 0 and 1 (Chen et al.: 0.2); got {test_size!r}")
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"y has one class ({classes.tolist()}); a classifier needs at least two")
    smallest = int(np.floor(counts.min() * (1 - test_size)))
    if smallest < folds:
        raise ValueError(f"the smallest class ({classes[counts.argmin()]!r}, {counts.min()} points) leaves about "
                         f"{smallest} training points per split, fewer than folds={folds}: give fewer folds or more "
                         "points of that class")


def _fingerprint(K: np.ndarray, y: np.ndarray, settings: dict) -> dict:
    digest = hashlib.sha256(np.ascontiguousarray(K).tobytes())
    digest.update(json.dumps([str(label) for label in y]).encode())
    return dict(data=digest.hexdigest(), n=len(y), **settings)


def _claim(folder: Path, K: np.ndarray, y: np.ndarray, settings: dict) -> Path:
    """The folder, made if missing and marked with the data and settings; a ValueError if it holds
    a benchmark of other data or settings (whose parts must not be mixed in)."""
    stamp = _fingerprint(K, y, settings)
    marker = folder / "benchmark.json"
    if marker.is_file():
        try:
            earlier = json.loads(marker.read_text())
        except (OSError, ValueError):
            earlier = None
        if earlier != stamp:
            raise ValueError(f"out: {folder} holds a benchmark of other data or settings ({marker}); give another "
                             "folder, or delete it to start again")
    (folder / "parts").mkdir(parents=True, exist_ok=True)
    write_text(marker, json.dumps(stamp, indent=1) + "\n")
    return folder


def _one(name: str, K: np.ndarray, y: np.ndarray, split: int, *, seed: int, test_size: float, folds: int,
         quick: bool, n_jobs) -> dict:
    """One method on one split: the cross-validated choice, the refit, the test error in percent."""
    started = time.perf_counter()
    train, test = model_selection.train_test_split(np.arange(len(y)), test_size=test_size, stratify=y,
                                                   random_state=seed + split)
    method = METHODS[name]
    folding = model_selection.StratifiedKFold(folds, shuffle=True, random_state=seed + split)
    search = model_selection.GridSearchCV(method.estimator(), method.param_grid(quick), scoring="accuracy",
                                          n_jobs=n_jobs, cv=folding)
    search.fit(K[np.ix_(train, train)], y[train])
    accuracy = search.score(K[np.ix_(test, train)], y[test])
    params = ", ".join(f"{key}={value:g}" for key, value in sorted(search.best_params_.items()))
    return dict(split=split, method=name, error=100.0 * (1.0 - accuracy), cv_accuracy=float(search.best_score_),
                params=params, seconds=round(time.perf_counter() - started, 2))


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per method: the test error's mean, sd, min and max over the splits; ``best`` for the lowest
    mean; each method against the best, paired over the splits (the difference in error, its sd
    and the two-sided paired t-test's p-value, :func:`indkernel.reproduction.experiments.paired`)."""
    wide = runs.pivot(index="split", columns="method", values="error")
    order = list(dict.fromkeys(runs.method))
    means = wide[order].mean()
    best = means.idxmin()
    rows = []
    for name in order:
        against = paired(wide[name], wide[best])
        rows.append(dict(method=name, splits=int(wide[name].count()), error_mean=means[name],
                         error_sd=wide[name].std(), error_min=wide[name].min(), error_max=wide[name].max(),
                         best=name == best, difference_to_best=against["mean_difference"],
                         p_value=against["p_value"], worse_than_best=against["significant"],
                         citation=METHODS[name].citation))
    return pd.DataFrame(rows)


def summary_markdown(summary: pd.DataFrame, *, splits: int, folds: int, test_size: float, n: int,
                     quick: bool = False) -> str:
    """The summary as markdown: test error in percent, the best in bold, each method's paired
    difference to the best and its p-value (bold where significant)."""
    grids = "each method's quick grid" if quick else "each method's grid"
    lines = [f"Test error in percent, mean ± sd over {splits} random stratified splits of the {n} points "
             f"({100 * (1 - test_size):.0f}/{100 * test_size:.0f}); parameters by {folds}-fold cross-validation on "
             f"the training part over {grids} (accuracy); the best mean in bold; each method against the best, paired "
             "over the splits (two-sided t-test, bold below 0.05).", "",
             "| method | test error (%) | − best | p (paired t) | cited |", "| --- | --- | --- | --- | --- |"]
    for row in summary.itertuples():
        error = f"{row.error_mean:.2f} ± {row.error_sd:.2f}"
        difference = "—" if row.best else f"{row.difference_to_best:+.2f}"
        p_value = "—" if row.best or np.isnan(row.p_value) else f"{row.p_value:.3f}"
        if row.best:
            error = f"**{error}**"
        elif row.worse_than_best:
            p_value = f"**{p_value}**"
        lines.append(f"| {row.method} | {error} | {difference} | {p_value} | {row.citation} |")
    return "\n".join(lines)
