"""IndefiniteSVCCV against GridSearchCV over IndefiniteSVC: the same grid, order, scores and choice,
each fold's path warm-started; bad input named."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold

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
