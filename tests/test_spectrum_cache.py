"""The store of K0's spectra shared by the fits of a grid (indkernel.core.spectrum_cache)."""

import pickle

import numpy as np
import pytest
import scipy.linalg
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from indkernel import IndefiniteSVC
from indkernel.core import proxy, spectrum_cache
from indkernel.core.spectrum_cache import SPECTRA, SpectrumCache
from indkernel.kernels import simpson


@pytest.fixture
def digits_pair():
    from sklearn.datasets import load_digits

    X, y = load_digits(n_class=2, return_X_y=True)
    return simpson(X[:120]), y[:120]


@pytest.fixture
def eigh_calls(monkeypatch):
    """The sizes of the matrices scipy's eigh decomposes (the oracles' single-decomposition route)."""
    calls, original = [], scipy.linalg.eigh
    monkeypatch.setattr(proxy.scipy.linalg, "eigh", lambda A, *a, **k: calls.append(A.shape[0]) or original(A, *a, **k))
    return calls


def _fits(K, y, grid):
    return [IndefiniteSVC(C=C, rho=rho, tol=1e-6).fit(K, y) for C, rho in grid]


GRID = [(1.0, 1.0), (10.0, 1.0), (10.0, 100.0)]


def test_a_grid_on_one_matrix_decomposes_it_once_and_gives_the_same_fits(digits_pair, eigh_calls):
    K, y = digits_pair
    cached = _fits(K, y, GRID)
    assert eigh_calls == [len(y)] and (SPECTRA.hits, SPECTRA.misses) == (2, 1)
    spectrum_cache.set_budget(0)
    fresh = _fits(K, y, GRID)
    assert len(eigh_calls) == 1 + len(GRID) and len(SPECTRA) == 0
    for a, b in zip(cached, fresh, strict=True):
        np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
        np.testing.assert_array_equal(a.test_coef_, b.test_coef_)
        assert a.lower_bound_ == b.lower_bound_ and a.upper_bound_ == b.upper_bound_


def test_the_key_is_the_content_so_a_matrix_changed_in_place_is_decomposed_again(digits_pair, eigh_calls):
    K, y = digits_pair
    K = K.copy()
    IndefiniteSVC(tol=1e-6).fit(K, y)
    K[0, 0] += 1.0
    model = IndefiniteSVC(tol=1e-6).fit(K, y)
    assert len(eigh_calls) == 2
    d, _ = proxy.RankOneProxy(K).spectrum
    np.testing.assert_allclose(d, scipy.linalg.eigvalsh(K), atol=1e-12 * np.abs(d).max())
    assert model.upper_bound_ >= model.lower_bound_


def test_spectra_handed_out_are_read_only(digits_pair):
    K, _ = digits_pair
    d, V = proxy.RankOneProxy(K).spectrum
    with pytest.raises(ValueError, match="read-only"):
        d[0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        V[0, 0] = 0.0


def test_grid_search_decomposes_each_fold_once_and_matches_the_uncached_search(digits_pair, eigh_calls):
    K, y = digits_pair
    grid = {"C": [1.0, 10.0], "rho": [1.0, 100.0]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    cached = GridSearchCV(IndefiniteSVC(tol=1e-6), grid, cv=cv).fit(K, y)
    assert len(eigh_calls) == 3 + 1  # each fold once, then the refit on every row
    spectrum_cache.set_budget(0)
    fresh = GridSearchCV(IndefiniteSVC(tol=1e-6), grid, cv=cv).fit(K, y)
    assert len(eigh_calls) == 4 + 3 * 4 + 1
    np.testing.assert_array_equal(cached.cv_results_["mean_test_score"], fresh.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(cached.best_estimator_.dual_coef_, fresh.best_estimator_.dual_coef_)


def test_grid_search_on_two_worker_processes_gives_the_sequential_results(digits_pair):
    K, y = digits_pair
    grid = {"C": [1.0, 10.0], "rho": [1.0, 100.0]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    sequential = GridSearchCV(IndefiniteSVC(tol=1e-6), grid, cv=cv).fit(K, y)
    parallel = GridSearchCV(IndefiniteSVC(tol=1e-6), grid, cv=cv, n_jobs=2).fit(K, y)
    np.testing.assert_array_equal(sequential.cv_results_["mean_test_score"], parallel.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(sequential.best_estimator_.dual_coef_, parallel.best_estimator_.dual_coef_)


def test_one_vs_one_pairs_are_taken_from_the_store_on_a_refit(monkeypatch):
    from sklearn.datasets import load_digits

    X, y = load_digits(n_class=3, return_X_y=True)
    K, y = simpson(X[:150]), y[:150]
    first = IndefiniteSVC(C=10.0, tol=1e-6).fit(K, y)
    calls = []
    monkeypatch.setattr(np.linalg, "eigh", lambda A: calls.append(A.shape[0]) or pytest.fail("decomposed again"))
    second = IndefiniteSVC(C=10.0, tol=1e-6).fit(K, y)
    assert calls == []
    np.testing.assert_array_equal(first.dual_coef_, second.dual_coef_)


def test_a_spectrum_is_kept_per_routine(digits_pair):
    K, _ = digits_pair
    store, calls = SpectrumCache(), []

    def decompose(name):
        return lambda A: calls.append(name) or scipy.linalg.eigh(A)

    store.get(K, "syevr", decompose("syevr"))
    store.get(K, "syevd", decompose("syevd"))
    store.get(K.copy(), "syevr", decompose("syevr"))
    assert calls == ["syevr", "syevd"] and len(store) == 2


def test_the_budget_evicts_the_least_recently_used_and_skips_what_alone_exceeds_it():
    rng = np.random.default_rng(0)
    matrices = [rng.standard_normal((20, 20)) for _ in range(4)]
    matrices = [(A + A.T) / 2 for A in matrices]
    one = 20 * 8 + 20 * 20 * 8  # bytes of one spectrum
    store = SpectrumCache(budget=2 * one)
    for A in matrices[:2]:
        store.get(A, "syevr", scipy.linalg.eigh)
    store.get(matrices[0], "syevr", scipy.linalg.eigh)  # the first is now the most recent
    store.get(matrices[2], "syevr", scipy.linalg.eigh)  # evicts the second
    assert store.size == 2 * one
    assert store.lookup(store.key(matrices[1], "syevr")) is None
    assert store.lookup(store.key(matrices[0], "syevr")) is not None
    store.set_budget(one - 1)
    assert len(store) == 0
    misses = store.misses
    store.get(matrices[3], "syevr", scipy.linalg.eigh)
    assert len(store) == 0 and store.misses == misses  # not even looked up: it could not be kept


@pytest.mark.parametrize("budget", [-1, 1.5, "1GB", True, None])
def test_a_bad_budget_is_refused_naming_it(budget):
    with pytest.raises(ValueError, match="budget must be a number of bytes >= 0"):
        spectrum_cache.set_budget(budget)


def test_a_fitted_model_pickles_without_the_store(digits_pair):
    K, y = digits_pair
    model = IndefiniteSVC(tol=1e-6).fit(K, y)
    assert len(pickle.dumps(model)) < K.nbytes / 4
