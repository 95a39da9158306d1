"""The experimental protocol of the paper (section ``s:num-res``), through scikit-learn.

A random train/test split of the paper's sizes; 5-fold cross-validation on the training part over
C, ρ (and the other estimator parameters) and over the similarity's own parameters, scored by
the average of accuracy and recall; refit on the whole training part with the best parameters;
one test on the held-out part. Metrics: accuracy ``(TP + TN)/N``, recall ``TP/(TP + FN)`` of the
positive class, and their average.

The similarity's parameters cannot go through ``GridSearchCV`` with a precomputed kernel, so the
search runs once per similarity matrix (each computed once on all points, train and test) and the
best cross-validated score over all of them wins.

**Parallel and distributed.** ``n_jobs`` goes to ``GridSearchCV`` (joblib). The same grid runs on
a Dask or Ray cluster through joblib's backends, with no change here::

    from joblib import parallel_config
    from dask.distributed import Client             # or: from ray.util.joblib import register_ray
    client = Client("scheduler-address:8786")       # register_ray(); backend="ray"
    with parallel_config(backend="dask"):
        result = select_and_test(IndefiniteSVC(), grid, similarities, y, split, n_jobs=-1)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone
from sklearn.metrics import accuracy_score, make_scorer, recall_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split


def performance(y_true, y_pred, positive) -> dict[str, float]:
    """Accuracy, recall of ``positive`` and their average, in percent (``table:gen_performance``)."""
    accuracy = 100.0 * accuracy_score(y_true, y_pred)
    recall = 100.0 * recall_score(y_true, y_pred, pos_label=positive)
    return dict(accuracy=accuracy, recall=recall, average=(accuracy + recall) / 2)


def average_scorer(positive):
    """The cross-validation score of the paper: ``(accuracy + recall) / 2``, as a scikit-learn scorer."""
    return make_scorer(lambda y_true, y_pred: performance(y_true, y_pred, positive)["average"])


@dataclass(frozen=True)
class Split:
    """Indices of a random train/test split."""

    train: np.ndarray
    test: np.ndarray


def random_split(y, train_size: int, seed: int = 0) -> Split:
    """A random split with ``train_size`` training points (the paper's sizes, e.g. 767 of 1540)."""
    indices = np.arange(len(y))
    train, test = train_test_split(indices, train_size=train_size, random_state=seed, shuffle=True)
    return Split(np.sort(train), np.sort(test))


@dataclass
class Outcome:
    """What one method achieved on one data set."""

    test: dict[str, float]
    cv_score: float
    params: dict
    similarity: str
    seconds: float
    fitted: object = field(repr=False, default=None)


def best_similarity(estimator, param_grid: Mapping, similarities: Mapping[str, Callable[[], np.ndarray]], y,
                    rows: np.ndarray, *, cv, scoring=None, n_jobs: int | None = None) -> tuple[float, str, dict, np.ndarray]:
    """Cross-validate ``estimator`` over ``param_grid`` on the ``rows`` of each similarity matrix
    (each computed once, ``y`` the labels of all points); the best ``(score, name, params, full
    matrix)`` over all of them."""
    best: tuple | None = None
    for name, similarity in similarities.items():
        K = similarity()
        search = GridSearchCV(clone(estimator), param_grid, scoring=scoring, cv=cv, n_jobs=n_jobs, refit=False)
        search.fit(K[np.ix_(rows, rows)], np.asarray(y)[rows])
        if best is None or search.best_score_ > best[0]:
            best = (search.best_score_, name, search.best_params_, K)
    if best is None:
        raise ValueError("no similarity to select from: the similarity grid is empty")
    return best


def select_and_test(estimator, param_grid: Mapping, similarities: Mapping[str, Callable[[], np.ndarray]], y,
                    split: Split, *, positive, folds: int = 5, n_jobs: int | None = None, seed: int = 0,
                    transductive: bool = False) -> Outcome:
    """Cross-validate ``estimator`` over ``param_grid`` and over the similarity matrices, refit the
    best on the training part and test it once.

    Parameters
    ----------
    estimator : a classifier on precomputed similarities (``fit(K_train, y)``, ``predict(K_test)``).
    param_grid : dict of parameter lists for ``GridSearchCV``.
    similarities : mapping from a description of the similarity's parameters to a function that
        returns the full (N, N) matrix over all points (called once each).
    y : (N,) labels; split : :class:`Split`; positive : the label whose recall counts.
    transductive : bool
        Cross-validate with the estimator's own rule (a fold's validation points have no test×test
        block in ``GridSearchCV``), then refit with ``test_kernel="transductive"`` and test with the
        rows of the full matrix: the paper's heuristic (``ss:interpretation``). Else the
        test×train block. :func:`indkernel.reproduction.rule_comparison.cross_validate_rules` cross-validates
        each rule with itself, the transductive one included.
    """
    y = np.asarray(y)
    started = time.perf_counter()
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    y_train = y[split.train]
    score, name, params, K = best_similarity(estimator, param_grid, similarities, y, split.train, cv=cv,
                                             scoring=average_scorer(positive), n_jobs=n_jobs)
    model = clone(estimator).set_params(**params, **({"test_kernel": "transductive"} if transductive else {}))
    model.fit(K[np.ix_(split.train, split.train)], y_train)
    columns = np.concatenate([split.train, split.test]) if transductive else split.train
    predicted = model.predict(K[np.ix_(split.test, columns)])
    return Outcome(performance(y[split.test], predicted, positive), float(score), params, name,
                   time.perf_counter() - started, model)
