"""IndefiniteSVCCV against GridSearchCV over IndefiniteSVC: the same grid, order, scores and choice,
each fold's path warm-started; bad input named."""

import numpy as np
import pytest
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn_checks import parametrize_with_checks

from indkernel import IndefiniteSVC, IndefiniteSVCCV
from indkernel.datasets import load_digits_pair
from indkernel.kernels import simpson

CS, RHOS = [0.1, 1.0, 10.0], [0.1, 1.0, 100.0]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits_pair(3, 5)
    pick = np.random.default_rng(0).permutation(len(y))[:150]
    return simpson(X[pick]), y[pick]


def test_the_path_scores_and_chooses_as_grid_search(digits, solve_starts):
    """Solved tightly (tol 1e-8), warm and cold fits give the same decisions, so the scores of every
    grid point on every fold equal GridSearchCV's, in its order, and so does the choice; the refit
    model is IndefiniteSVC's at the chosen parameters. Every fit of a fold's path but its first
    starts warm."""
    K, y = digits
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    template = IndefiniteSVC(tol=1e-8)
    grid = GridSearchCV(template, {"C": CS, "rho": RHOS}, cv=cv).fit(K, y)
    solve_starts.clear()  # the grid search's fits
    path = IndefiniteSVCCV(template, Cs=CS, rhos=RHOS, cv=cv).fit(K, y)
    assert path.cv_results_["params"] == list(grid.cv_results_["params"])
    for k in range(3):
        np.testing.assert_array_equal(path.cv_results_[f"split{k}_test_score"], grid.cv_results_[f"split{k}_test_score"])
    assert path.best_params_ == grid.best_params_ and path.best_score_ == grid.best_score_
    assert path.best_index_ == grid.best_index_
    assert set(path.cv_results_) == set(grid.cv_results_)  # GridSearchCV's keys
    np.testing.assert_array_equal(path.cv_results_["rank_test_score"], grid.cv_results_["rank_test_score"])
    for key in ("param_C", "param_rho"):
        assert list(path.cv_results_[key]) == list(grid.cv_results_[key])
    warm = [start is not None for start in solve_starts]
    assert warm == ([False] + [True] * 8) * 3 + [False]  # three warm paths, then the cold refit
    np.testing.assert_array_equal(path.decision_function(K), grid.best_estimator_.decision_function(K))
    assert path.predict(K).tolist() == grid.predict(K).tolist()


def test_folds_in_parallel_give_the_same_scores(digits):
    K, y = digits
    one = IndefiniteSVCCV(IndefiniteSVC(tol=1e-6), Cs=CS[:2], rhos=RHOS[:2], cv=3, refit=False).fit(K, y)
    two = IndefiniteSVCCV(IndefiniteSVC(tol=1e-6), Cs=CS[:2], rhos=RHOS[:2], cv=3, refit=False, n_jobs=2).fit(K, y)
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])
    with pytest.raises(NotFittedError, match="refit=False"):
        one.predict(K)


@pytest.mark.parametrize("params, message", [
    ({"Cs": [1.0, 0.0]}, "Cs must be a non-empty sequence of positive finite numbers"),
    ({"rhos": []}, "rhos must be a non-empty sequence of positive finite numbers"),
    ({"estimator": "svc"}, "estimator"),
])
def test_bad_grids_are_named(digits, params, message):
    K, y = digits
    with pytest.raises((ValueError, TypeError), match=message):
        IndefiniteSVCCV(**params).fit(K, y)


def test_a_failed_fit_scores_error_score_and_ranks_last(digits, monkeypatch):
    """As GridSearchCV: a grid point whose fit fails on a fold scores ``error_score`` (NaN by
    default) with a FitFailedWarning, ranks last and is never chosen; "raise" raises."""
    K, y = digits
    real_fit = IndefiniteSVC.fit

    def failing(self, X, y, sample_weight=None):
        if self.C == 10.0:
            raise ValueError("no such luck")
        return real_fit(self, X, y, sample_weight)

    monkeypatch.setattr(IndefiniteSVC, "fit", failing)
    with pytest.warns(FitFailedWarning, match="no such luck"):
        path = IndefiniteSVCCV(IndefiniteSVC(tol=1e-4), Cs=[1.0, 10.0], rhos=[1.0], cv=3, refit=False).fit(K, y)
    assert np.isnan(path.cv_results_["mean_test_score"][1]) and path.cv_results_["rank_test_score"][1] == 2
    assert path.best_params_ == {"C": 1.0, "rho": 1.0}
    with pytest.raises(ValueError, match="no such luck"):
        IndefiniteSVCCV(IndefiniteSVC(tol=1e-4), Cs=[10.0], rhos=[1.0], cv=3, error_score="raise").fit(K, y)


def test_sample_weight_reaches_every_fit(digits):
    """``sample_weight`` is each fold's rows of it in every fit, and all of it in the refit: the
    refit model is IndefiniteSVC's fitted with those weights."""
    K, y = digits
    weights = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    path = IndefiniteSVCCV(IndefiniteSVC(tol=1e-8), Cs=[1.0], rhos=[1.0], cv=3).fit(K, y, sample_weight=weights)
    alone = IndefiniteSVC(C=1.0, rho=1.0, tol=1e-8).fit(K, y, sample_weight=weights)
    np.testing.assert_array_equal(path.decision_function(K), alone.decision_function(K))
    unweighted = IndefiniteSVCCV(IndefiniteSVC(tol=1e-8), Cs=[1.0], rhos=[1.0], cv=3).fit(K, y)
    assert not np.array_equal(unweighted.decision_function(K), alone.decision_function(K))


def test_metadata_routing_as_grid_search(digits):
    """Under scikit-learn's metadata routing ``groups`` reach the splitter and ``sample_weight`` a
    scorer that requests it, as with GridSearchCV (its fits request the weights too): the same
    weighted scores on the same group folds, the same choice. Without routing, metadata other than
    ``sample_weight`` is refused by name."""
    import sklearn
    from sklearn.metrics import accuracy_score, make_scorer
    from sklearn.model_selection import GroupKFold

    K, y = digits
    weights = np.random.default_rng(5).uniform(0.5, 2.0, len(y))
    groups = np.arange(len(y)) % 5
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_scorer(accuracy_score).set_score_request(sample_weight=True)
        template = IndefiniteSVC(tol=1e-8).set_fit_request(sample_weight=True)
        grid = GridSearchCV(template, {"C": CS[:2], "rho": RHOS[:2]}, cv=GroupKFold(3), scoring=scorer)
        grid.fit(K, y, groups=groups, sample_weight=weights)
        path = IndefiniteSVCCV(template, Cs=CS[:2], rhos=RHOS[:2], cv=GroupKFold(3), scoring=scorer)
        path.fit(K, y, groups=groups, sample_weight=weights)
        plain = make_scorer(accuracy_score).set_score_request(sample_weight=False)
        unweighted = IndefiniteSVCCV(template, Cs=CS[:2], rhos=RHOS[:2], cv=GroupKFold(3), scoring=plain)
        unweighted.fit(K, y, groups=groups, sample_weight=weights)
    for k in range(3):
        np.testing.assert_array_equal(path.cv_results_[f"split{k}_test_score"], grid.cv_results_[f"split{k}_test_score"])
    assert path.best_params_ == grid.best_params_
    assert not np.array_equal(unweighted.cv_results_["mean_test_score"], path.cv_results_["mean_test_score"])
    with pytest.raises(ValueError, match="groups"):
        IndefiniteSVCCV(Cs=[1.0], rhos=[1.0]).fit(K, y, groups=groups)


# scikit-learn's checks fit on a handful of points: its splitter warns that a class has fewer than cv members
@pytest.mark.filterwarnings("ignore:The least populated class in y has only:UserWarning")
@parametrize_with_checks([IndefiniteSVCCV(IndefiniteSVC(tol=1e-4), Cs=[1.0], rhos=[1.0], cv=2)])
def test_sklearn_conventions(estimator, check):
    check(estimator)
