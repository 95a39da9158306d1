"""Cross-validation of C and ρ along a warm-started path, in the manner of ``LogisticRegressionCV``.

:class:`IndefiniteSVCCV` scores the same grid as ``GridSearchCV(IndefiniteSVC(...), {"C": Cs,
"rho": rhos})`` but, on each fold, fits the grid points in order with one estimator whose
``warm_start`` starts every fit from the previous certified solution scaled into the new box
(``figures/warm_starts.py`` measures what that saves); the fold's K0 is decomposed once (the
store of spectra, :mod:`indkernel.core.spectrum_cache`). Every fit is certified as a cold one would be.
"""

from __future__ import annotations

from numbers import Integral

import joblib
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.metaestimators import _safe_split
from sklearn.utils.validation import check_is_fitted

from .indefinite import IndefiniteSVC


class IndefiniteSVCCV(ClassifierMixin, BaseEstimator):
    """:class:`indkernel.IndefiniteSVC` with C and ρ chosen by cross-validation along a
    warm-started path (``eq:kern_learn`` at every grid point).

    Parameters
    ----------
    estimator : IndefiniteSVC, optional
        The template (its other parameters: kernel, class_weight, method, tol, ...); default
        ``IndefiniteSVC()``.
    Cs, rhos : sequences of positive floats (rhos may include ``np.inf``: the clipped kernel)
        The grid, scored in the order of ``GridSearchCV`` over ``{"C": Cs, "rho": rhos}`` (C outer,
        ρ inner), which is also each fold's path; ties go to the first point, as there.
    cv : int, cross-validation generator or iterable, default 5
        As ``GridSearchCV`` (stratified folds for an int).
    scoring : str or callable, optional
        As ``GridSearchCV``; default the estimator's accuracy.
    n_jobs : int, optional
        Folds run in parallel (joblib).
    refit : bool, default True
        Fit ``best_estimator_`` on all the data with the chosen C and ρ.

    Attributes
    ----------
    best_params_ : dict, ``{"C": ..., "rho": ...}``.
    best_score_ : float, its mean cross-validated score.
    cv_results_ : dict with ``params``, ``mean_test_score``, ``std_test_score`` and
        ``split<k>_test_score``, in the order of ``GridSearchCV``'s.
    best_estimator_ : IndefiniteSVC fitted on all the data (with ``refit``).
    classes_ : the labels.
    """

    _parameter_constraints: dict = {
        "estimator": [IndefiniteSVC, None],
        "Cs": ["array-like"],
        "rhos": ["array-like"],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "n_jobs": [Integral, None],
        "refit": ["boolean"],
    }

    def __init__(self, estimator=None, *, Cs=(0.1, 1.0, 10.0, 100.0), rhos=(0.1, 1.0, 10.0, 100.0), cv=5,
                 scoring=None, n_jobs=None, refit=True):
        self.estimator = estimator
        self.Cs = Cs
        self.rhos = rhos
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._template().kernel == "precomputed"
        return tags

    def _template(self) -> IndefiniteSVC:
        return IndefiniteSVC() if self.estimator is None else self.estimator

    def _grid(self) -> list[dict]:
        grid = []
        for name, values in (("Cs", self.Cs), ("rhos", self.rhos)):
            values = np.asarray(values, dtype=float)
            allowed = values > 0 if name == "rhos" else np.isfinite(values) & (values > 0)  # rho = inf: (K0)_+
            if values.ndim != 1 or values.size == 0 or not np.all(allowed):
                limit = " (rho may be inf: the clipped kernel)" if name == "rhos" else ""
                raise ValueError(f"{name} must be a non-empty sequence of positive finite numbers{limit}; "
                                 f"got {getattr(self, name)!r}")
            grid.append(values)
        return [{"C": float(C), "rho": float(rho)} for C in grid[0] for rho in grid[1]]

    def fit(self, X, y):
        """Score every (C, ρ) on every fold along the warm-started path, choose the best mean
        score, and refit it on all of ``X`` (the train×train similarity, or features with a
        callable kernel) and ``y``."""
        self._validate_params()
        grid = self._grid()
        template = self._template()
        X, y = np.asarray(X), np.asarray(y)
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y))
        scorer = check_scoring(template, scoring=self.scoring)
        scores = np.array(joblib.Parallel(n_jobs=self.n_jobs)(
            joblib.delayed(_path_scores)(template, X, y, train, test, grid, scorer) for train, test in folds))
        mean = scores.mean(axis=0)
        best = int(np.flatnonzero(mean == mean.max())[0])
        self.cv_results_ = {"params": grid, "mean_test_score": mean, "std_test_score": scores.std(axis=0),
                            **{f"split{k}_test_score": fold for k, fold in enumerate(scores)}}
        self.best_params_, self.best_score_ = grid[best], float(mean[best])
        self.classes_ = np.unique(y)
        if self.refit:
            self.best_estimator_ = clone(template).set_params(**self.best_params_).fit(X, y)
        return self

    def _fitted(self) -> IndefiniteSVC:
        check_is_fitted(self, "best_estimator_", msg="IndefiniteSVCCV was fitted with refit=False (or not fitted): "
                                                     "there is no best_estimator_ to predict with")
        return self.best_estimator_

    def decision_function(self, X) -> np.ndarray:
        """``best_estimator_.decision_function(X)``."""
        return self._fitted().decision_function(X)

    def predict(self, X) -> np.ndarray:
        """``best_estimator_.predict(X)``."""
        return self._fitted().predict(X)


def _path_scores(template: IndefiniteSVC, X, y, train, test, grid: list[dict], scorer) -> np.ndarray:
    """The scores of one fold: the grid in order, each fit warm from the previous one."""
    model = clone(template).set_params(warm_start=True)
    X_train, y_train = _safe_split(model, X, y, train)
    X_test, y_test = _safe_split(model, X, y, test, train)
    return np.array([scorer(model.set_params(**params).fit(X_train, y_train), X_test, y_test) for params in grid])
