"""Cross-validation of C and ρ along a warm-started path, in the manner of ``LogisticRegressionCV``.

:class:`IndefiniteSVCCV` scores the same grid as ``GridSearchCV(IndefiniteSVC(...), {"C": Cs,
"rho": rhos})`` but, on each fold, fits the grid points in order with one estimator whose
``warm_start`` starts every fit from the previous certified solution scaled into the new box
(``figures/warm_starts.py`` measures what that saves); the fold's K0 is decomposed once (the
store of spectra, :mod:`indkernel.core.spectrum_cache`). Every fit is certified as a cold one would be.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import joblib
import numpy as np
import scipy.stats
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _raise_for_params,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.metaestimators import _safe_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_method_params, _check_sample_weight, check_is_fitted, validate_data

from .._validation import check_memory
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
    error_score : "raise" or float, default np.nan
        As ``GridSearchCV``: the score of a grid point whose fit fails on a fold (with a
        ``FitFailedWarning``), or "raise" to raise; a point with a NaN score ranks last.

    Attributes
    ----------
    best_params_ : dict, ``{"C": ..., "rho": ...}``; ``best_index_`` its position in the grid.
    best_score_ : float, its mean cross-validated score.
    cv_results_ : dict with ``GridSearchCV``'s keys, in its order: ``params``, ``param_C``,
        ``param_rho``, ``split<k>_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score``, ``mean_fit_time``, ``std_fit_time``, ``mean_score_time``,
        ``std_score_time``.
    best_estimator_ : IndefiniteSVC fitted on all the data (with ``refit``).
    classes_ : the labels; ``n_features_in_`` as scikit-learn's estimators.
    """

    _parameter_constraints: dict = {
        "estimator": [IndefiniteSVC, None],
        "Cs": ["array-like"],
        "rhos": ["array-like"],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "n_jobs": [Integral, None],
        "refit": ["boolean"],
        "error_score": [StrOptions({"raise"}), Real],
    }

    def __init__(self, estimator=None, *, Cs=(0.1, 1.0, 10.0, 100.0), rhos=(0.1, 1.0, 10.0, 100.0), cv=5,
                 scoring=None, n_jobs=None, refit=True, error_score=np.nan):
        self.estimator = estimator
        self.Cs = Cs
        self.rhos = rhos
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.error_score = error_score

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

    def fit(self, X, y, sample_weight=None, **params):
        """Score every (C, ρ) on every fold along the warm-started path, choose the best mean
        score, and refit it on all of ``X`` (the train×train similarity, or features with a
        callable kernel) and ``y``; ``sample_weight`` goes to every fit (each fold's rows of it).

        With scikit-learn's metadata routing enabled, ``params`` (``groups`` for the splitter, and
        ``sample_weight`` too for a scorer that requests it) go where they are requested, as with
        ``GridSearchCV``; without it, folds and scores use no metadata and ``params`` is refused."""
        _raise_for_params(params, self, "fit")
        self._validate_params()
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        # the refit on all of X is the largest fit: refuse now, not after the folds' minutes of work
        check_memory(X.shape[0], f"{type(self).__name__}'s refit on n={X.shape[0]} training points")
        weights = None if sample_weight is None else _check_sample_weight(sample_weight, X, dtype=np.float64)
        kept = np.unique(y if weights is None else y[weights > 0])
        if kept.size < 2:  # before any fold: every fit would fail
            raise ValueError(f"{type(self).__name__} needs at least two classes with positive sample weight; y has "
                             f"one class: {kept.tolist()}")
        grid = self._grid()
        template = self._template()
        split_params, score_params = {}, {}
        if _routing_enabled():
            routed = process_routing(self, "fit", sample_weight=sample_weight, **params)
            split_params, score_params = routed.splitter.split, routed.scorer.score
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y, **split_params))
        scorer = check_scoring(template, scoring=self.scoring)
        outcomes = joblib.Parallel(n_jobs=self.n_jobs)(
            joblib.delayed(_path_scores)(template, X, y, weights, train, test, grid, scorer, self.error_score,
                                         _check_method_params(X, score_params, test))
            for train, test in folds)
        scores, fit_times, score_times = (np.array([outcome[k] for outcome in outcomes]) for k in range(3))
        mean = scores.mean(axis=0)
        if np.all(np.isnan(mean)):
            raise ValueError("every fit failed on some fold (every grid point scored NaN); pass error_score='raise' "
                             "to see the error")
        order = np.where(np.isnan(mean), -np.inf, mean)  # as GridSearchCV's: NaN last, ties share the lower rank
        ranks = scipy.stats.rankdata(-order, method="min").astype(np.int32)
        best = int(np.argmax(order))  # the first of the best
        self.cv_results_ = {
            "params": grid,
            "param_C": np.ma.MaskedArray([p["C"] for p in grid], mask=False, dtype=object),
            "param_rho": np.ma.MaskedArray([p["rho"] for p in grid], mask=False, dtype=object),
            **{f"split{k}_test_score": fold for k, fold in enumerate(scores)},
            "mean_test_score": mean, "std_test_score": scores.std(axis=0), "rank_test_score": ranks,
            "mean_fit_time": fit_times.mean(axis=0), "std_fit_time": fit_times.std(axis=0),
            "mean_score_time": score_times.mean(axis=0), "std_score_time": score_times.std(axis=0),
        }
        self.best_index_, self.best_params_, self.best_score_ = best, grid[best], float(mean[best])
        self.classes_ = np.unique(y)
        if self.refit:
            self.best_estimator_ = clone(template).set_params(**self.best_params_).fit(X, y, sample_weight=weights)
        return self

    def get_metadata_routing(self) -> MetadataRouter:
        """Where ``fit``'s metadata go under scikit-learn's metadata routing: ``sample_weight`` to
        every fit (this estimator's own), the splitter's (``groups``) to ``cv``, the scorer's to
        ``scoring``."""
        return (MetadataRouter(owner=type(self).__name__)
                .add_self_request(self)
                .add(splitter=check_cv(self.cv), method_mapping=MethodMapping().add(caller="fit", callee="split"))
                .add(scorer=check_scoring(self._template(), scoring=self.scoring),
                     method_mapping=MethodMapping().add(caller="fit", callee="score")))

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


def _path_scores(template: IndefiniteSVC, X, y, weights, train, test, grid: list[dict], scorer,
                 error_score, score_params: dict) -> tuple[list, list, list]:
    """The scores of one fold, and the seconds of each fit and score: the grid in order, each fit
    warm from the previous one (after a failed fit, the next starts cold)."""
    model = clone(template).set_params(warm_start=True)
    X_train, y_train = _safe_split(model, X, y, train)
    X_test, y_test = _safe_split(model, X, y, test, train)
    fit_weights = None if weights is None else weights[train]
    scores, fit_times, score_times = [], [], []
    for params in grid:
        start = time.perf_counter()
        try:
            model.set_params(**params).fit(X_train, y_train, sample_weight=fit_weights)
        except Exception as error:
            if error_score == "raise":
                raise
            warnings.warn(f"the fit at {params} failed on a fold ({type(error).__name__}: {error}); its score is "
                          f"error_score={error_score}", FitFailedWarning, stacklevel=2)
            model = clone(template).set_params(warm_start=True)
            fit_times.append(time.perf_counter() - start)
            scores.append(float(error_score))
            score_times.append(0.0)
            continue
        fit_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        scores.append(scorer(model, X_test, y_test, **score_params))
        score_times.append(time.perf_counter() - start)
    return scores, fit_times, score_times
