"""Any number of classes: agreement with libsvm at large ρ on a PSD kernel (one-vs-one against
SVC in both decision shapes, one-vs-rest against OneVsRestClassifier(SVC)), one
eigendecomposition for every one-vs-rest problem, per-problem certificates and warnings, class
weights, grid search, pickling, baselines."""

import itertools
import multiprocessing
import os
import pickle
import threading
import warnings

import numpy as np
import pytest
import scipy.linalg
import threadpoolctl
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC

from indkernel import IndefiniteSVC, PerturbSVC
from indkernel.core import proxy, spectrum_cache, threads
from indkernel.core.proxy import RankOneProxy
from indkernel.estimators.baselines import ModSVC, SpectrumSVC, spectrum_transform
from indkernel.kernels import simpson


@pytest.fixture
def problems(monkeypatch):
    """The binary problems of the next fits, as the estimator builds them (it keeps none)."""
    from indkernel.estimators.base import BaseIndefiniteMachine

    captured, solve = [], BaseIndefiniteMachine._solve
    monkeypatch.setattr(BaseIndefiniteMachine, "_solve",
                        lambda self, problems, tasks: captured.extend(problems) or solve(self, problems, tasks))
    return captured


@pytest.fixture(scope="module")
def four_digits():
    """Digits 0-3, 160 training and 80 test points."""
    X, y = load_digits(return_X_y=True)
    keep = np.flatnonzero(y < 4)
    pick = np.random.default_rng(0).permutation(keep)[:240]
    X, y = X[pick] / 16.0, y[pick]
    return X[:160], y[:160], X[160:], y[160:]


def _gaussian(X, Z=None):
    return rbf_kernel(X, Z, gamma=0.02)


@pytest.mark.parametrize("cls", [IndefiniteSVC, PerturbSVC])
def test_large_rho_on_a_psd_kernel_is_libsvm_one_vs_one_and_one_vs_rest(cls, four_digits):
    X, y, X_test, _ = four_digits
    K, K_test = _gaussian(X), _gaussian(X_test, X)
    for shape, width in (("ovo", 6), ("ovr", 4)):  # one-vs-one training, SVC's two shapes
        ovo = cls(C=1.0, rho=1e8, tol=1e-9, decision_function_shape=shape).fit(K, y)
        svc = SVC(C=1.0, kernel="precomputed", tol=1e-10, decision_function_shape=shape).fit(K, y)
        assert ovo.decision_function(K_test).shape == (len(X_test), width)
        np.testing.assert_allclose(ovo.decision_function(K_test), svc.decision_function(K_test), atol=1e-4)
        assert np.array_equal(ovo.predict(K_test), svc.predict(K_test))
        ties = cls(C=1.0, rho=1e8, tol=1e-9, break_ties=True).fit(K, y)
        svc_ties = SVC(C=1.0, kernel="precomputed", tol=1e-10, break_ties=True).fit(K, y)
        assert np.array_equal(ties.predict(K_test), svc_ties.predict(K_test))

    ovr = cls(C=1.0, rho=1e8, tol=1e-9, multi_class="ovr").fit(K, y)
    reference = OneVsRestClassifier(SVC(C=1.0, kernel="precomputed", tol=1e-10)).fit(K, y)
    assert ovr.decision_function(K_test).shape == (len(X_test), 4)
    np.testing.assert_allclose(ovr.decision_function(K_test), reference.decision_function(K_test), atol=1e-4)
    assert np.array_equal(ovr.predict(K_test), reference.predict(K_test))


def test_one_vs_one_votes_break_ties_as_libsvm():
    """Three classes, one vote each: libsvm predicts the first class; break_ties the largest
    confidence (decision values as SVC's one-vs-one columns: positive for the pair's first class)."""
    from indkernel.estimators import multiclass

    ours = np.array([[0.5, -0.2, 0.9]])  # pairs (0,1), (0,2), (1,2); positive: the second class wins
    _, label = multiclass.decide(ours, np.array([10, 20, 30]), "ovo")
    _, tied = multiclass.decide(ours, np.array([10, 20, 30]), "ovo", break_ties=True)
    assert label[0] == 10 and tied[0] == 30  # 1 vote each; summed confidences 0.3 (class 0), -1.4, +1.1


def test_one_vs_rest_problems_share_one_eigendecomposition(four_digits, monkeypatch, problems):
    X, y, X_test, y_test = four_digits
    K = simpson(X)
    sizes = []
    original = scipy.linalg.eigh
    monkeypatch.setattr(scipy.linalg, "eigh", lambda A, *args, **kwargs: sizes.append(len(A)) or
                        original(A, *args, **kwargs))
    model = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6, multi_class="ovr").fit(K, y)
    assert sizes == [len(y)]  # one decomposition of K0 for four problems
    assert len(problems) == 4 and len({id(problem.oracle) for problem in problems}) == 1
    assert np.all(model.status_ == "optimal") and np.all(model.gap_ >= 0)
    assert model.gap_.shape == model.n_iter_.shape == model.intercept_.shape == (4,)
    assert np.all(model.lower_bound_ <= model.upper_bound_)
    assert model.dual_coef_.shape == (4, len(model.support_))
    assert model.score(simpson(X_test, X), y_test) > 0.9
    # each one-vs-rest problem is the binary fit of its class against the rest
    binary = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6).fit(K, y == 2)
    assert abs(binary.lower_bound_[0] - model.lower_bound_[2]) <= 1e-5 * abs(binary.lower_bound_[0])


def test_one_vs_rest_problems_share_one_frozen_copy_of_K0(four_digits, problems):
    """k one-vs-rest problems hold one validated K0 between them (not k copies); the caller's
    matrix is neither shared nor frozen."""
    X, y, _, _ = four_digits
    K = simpson(X)
    IndefiniteSVC(C=10.0, rho=1.0, tol=1e-3, multi_class="ovr").fit(K, y)
    shared = problems[0].K0
    assert all(problem.K0 is shared for problem in problems)
    assert problems[0].oracle.K0 is shared and not shared.flags.writeable
    assert not np.shares_memory(shared, K) and K.flags.writeable
    np.testing.assert_array_equal(shared, (K + K.T) / 2)


def _clipped_test_block(full: np.ndarray, beta: np.ndarray, rows: np.ndarray, rho: float) -> np.ndarray:
    """The paper's transductive heuristic written out densely: the training block of the full
    matrix on ``rows`` updated by ββᵀ/(4ρ), the whole clipped, its test×train block times β."""
    n = len(full) - 80
    keep = np.concatenate([rows, np.arange(n, len(full))])
    updated = full[np.ix_(keep, keep)].copy()
    updated[:len(rows), :len(rows)] += np.outer(beta, beta) / (4 * rho)
    values, vectors = np.linalg.eigh(updated)
    return ((vectors * np.maximum(values, 0)) @ vectors.T)[len(rows):, :len(rows)] @ beta


@pytest.mark.parametrize("strategy", ["ovr", "ovo"])
def test_transductive_decisions_are_the_dense_heuristic(strategy, four_digits, monkeypatch):
    """Each problem's transductive decision is the rank-one update of the full matrix's one
    eigendecomposition: one-vs-rest problems share it (one eigh for four), one-vs-one pairs each
    decompose their own rows; against the dense heuristic per problem."""
    X, y, X_test, _ = four_digits
    full = simpson(np.vstack([X, X_test]))
    n = len(y)
    model = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6, test_kernel="transductive", multi_class=strategy,
                          decision_function_shape=strategy).fit(full[:n, :n], y)
    sizes = []
    for module in (scipy.linalg, np.linalg):  # one decomposition alone is scipy's, several numpy's
        monkeypatch.setattr(module, "eigh", lambda A, *args, original=module.eigh, **kwargs: sizes.append(len(A)) or
                            original(A, *args, **kwargs))
    decisions = model.decision_function(full[n:])
    monkeypatch.undo()
    columns = []
    for beta, rows, b in zip(model._betas(), model._task_rows, model._intercepts, strict=True):  # each task's own signs
        columns.append(_clipped_test_block(full, beta[rows], rows, 1.0) + b)
    expected = np.column_stack(columns)
    if strategy == "ovr":
        assert sizes == [n + 80]
    else:
        assert sorted(sizes) == sorted(len(rows) + 80 for rows in model._task_rows)
        expected = -expected  # SVC's one-vs-one columns are positive for the pair's first class
    np.testing.assert_allclose(decisions, expected, atol=1e-8 * np.abs(expected).max())


def test_one_vs_one_solves_each_pair_on_its_rows(four_digits, problems):
    X, y, X_test, y_test = four_digits
    model = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6).fit(simpson(X), y)
    assert [problem.n for problem in problems] == [
        int(np.sum((y == i) | (y == j))) for i in range(4) for j in range(i + 1, 4)]
    assert model.score(simpson(X_test, X), y_test) > 0.9
    transductive = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6, kernel=simpson, test_kernel="transductive").fit(X, y)
    assert transductive.score(X_test, y_test) > 0.9


def test_one_vs_one_pairs_are_decomposed_concurrently_on_one_blas_thread_each(four_digits, monkeypatch, problems):
    """The pairs' eigendecompositions (numpy's syevd, two at a time) are their K0's, as scipy's
    route gives them, each pair's fit is the binary fit on its rows, and BLAS's threads are restored."""
    X, y, _, _ = four_digits
    K = simpson(X)
    threads_inside, original = [], np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda A: threads_inside.append(threads.blas_thread_count()) or original(A))
    before = threads.blas_thread_count()
    model = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6).fit(K, y)
    assert threads_inside == [1] * 6 and threads.blas_thread_count() == before
    for problem, rows, lower in zip(list(problems), model._task_rows, model.lower_bound_, strict=True):
        d, V = problem.oracle.spectrum
        assert V.flags.f_contiguous
        np.testing.assert_allclose(d, scipy.linalg.eigvalsh(problem.K0), atol=1e-12 * np.abs(d).max())
        np.testing.assert_allclose((V * d) @ V.T, problem.K0, atol=1e-12 * np.abs(d).max())
        binary = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6).fit(K[np.ix_(rows, rows)], y[rows])
        assert abs(binary.lower_bound_[0] - lower) <= 1e-5 * abs(lower)


def test_already_decomposed_oracles_are_not_decomposed_again(four_digits):
    X, y, _, _ = four_digits
    oracles = [RankOneProxy(simpson(X[y == c])) for c in range(3)]
    first = oracles[0].spectrum
    calls = []
    proxy.decompose_concurrently(oracles, lambda: calls.append(1))
    assert oracles[0].spectrum is first and len(calls) == 2
    proxy.decompose_concurrently(oracles, lambda: calls.append(1))
    assert len(calls) == 2


def _decomposition_threads(oracles, monkeypatch) -> list[str]:
    """The names of the threads that decompose ``oracles`` (:func:`proxy.decompose_concurrently`; none
    from the store of spectra)."""
    spectrum_cache.clear()
    names, original = [], np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda A: names.append(threading.current_thread().name) or original(A))
    proxy.decompose_concurrently(oracles)
    monkeypatch.undo()
    return names


def test_the_decompositions_run_on_threads_kept_for_the_next_call_or_on_the_callers_alone(four_digits, monkeypatch):
    X, y, _, _ = four_digits
    blocks = [simpson(X[(y == a) | (y == b)]) for a, b in itertools.combinations(range(4), 2)]
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if threads.blas_thread_count() != 2:
            pytest.skip("BLAS does not take two threads here")
        first = _decomposition_threads([RankOneProxy(K) for K in blocks[:3]], monkeypatch)
        second = _decomposition_threads([RankOneProxy(K) for K in blocks[3:]], monkeypatch)
    assert len(first) == len(second) == 3 and all(name.startswith("indkernel-eigh") for name in first + second)
    alive = {thread.name for thread in threading.enumerate()}
    assert set(first + second) <= alive and len(set(first + second)) <= 2  # kept, and no more than two
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        alone = _decomposition_threads([RankOneProxy(K) for K in blocks[:2]], monkeypatch)
    assert alone == [threading.current_thread().name] * 2


def _decompose_in_child(blocks, queue) -> None:
    spectrum_cache.clear()  # (the parent's store came with the fork)
    oracles = [RankOneProxy(K) for K in blocks]
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        proxy.decompose_concurrently(oracles)
    queue.put([oracle.spectrum[0] for oracle in oracles])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_process_decomposes_on_threads_of_its_own(four_digits):
    """The parent's kept threads are not in a forked child (a pool that counted them would wait forever)."""
    X, y, _, _ = four_digits
    blocks = [simpson(X[(y == a) | (y == b)]) for a, b in itertools.combinations(range(4), 2)][:2]
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if threads.blas_thread_count() != 2:
            pytest.skip("BLAS does not take two threads here")
        spectrum_cache.clear()
        proxy.decompose_concurrently([RankOneProxy(K) for K in blocks])  # the parent's threads, idle now
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (Python >= 3.12 on forking a threaded process)
        child = context.Process(target=_decompose_in_child, args=(blocks, queue))
        child.start()
    try:
        values = queue.get(timeout=60)
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0
    for d, K in zip(values, blocks, strict=True):
        np.testing.assert_allclose(d, scipy.linalg.eigvalsh(K), atol=1e-12 * np.abs(d).max())


def test_an_uncertified_problem_warns_naming_its_class(four_digits):
    X, y, _, _ = four_digits
    labels = np.array(["zero", "one", "two", "three"])[y]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-9, max_iter=2, multi_class="ovr").fit(simpson(X), labels)
        IndefiniteSVC(C=10.0, rho=1.0, tol=1e-9, max_iter=2).fit(simpson(X), labels)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 4 + 6 and all(m.startswith("class '") for m in messages)
    assert any("class 'two' against the rest" in m for m in messages[:4])
    assert any("class 'zero' against class 'two'" in m for m in messages[4:])
    assert list(model.classes_) == sorted(set(labels)) and set(model.status_) == {"max_iter"}


def test_class_weights_per_class(four_digits, problems):
    X, y, _, _ = four_digits
    IndefiniteSVC(C=2.0, tol=1e-4, class_weight={1: 3.0, 3: 0.5}, multi_class="ovr").fit(simpson(X), y)
    expected = 2.0 * np.select([y == 1, y == 3], [3.0, 0.5], 1.0)
    for problem in problems:
        np.testing.assert_array_equal(problem.C, expected)
    problems.clear()
    IndefiniteSVC(C=2.0, tol=1e-4, class_weight="authors", multi_class="ovr").fit(simpson(X), y)
    first = problems[0]  # class 0 (+1) against the rest (-1): C·n_pos/n_neg for the rest
    n_pos = np.sum(y == 0)
    np.testing.assert_allclose(first.C, np.where(y == 0, 2.0, 2.0 * n_pos / (len(y) - n_pos)))


def test_grid_search_and_pickling(four_digits):
    X, y, X_test, y_test = four_digits
    K, K_test = simpson(X), simpson(X_test, X)
    grid = GridSearchCV(IndefiniteSVC(tol=1e-4), {"C": [1.0, 10.0], "multi_class": ["ovr", "ovo"]},
                        cv=3, n_jobs=2).fit(K, y)
    assert grid.best_score_ > 0.9 and grid.score(K_test, y_test) > 0.9
    model = grid.best_estimator_
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(K_test), model.predict(K_test))
    np.testing.assert_array_equal(clone.gap_, model.gap_)
    assert len(model.proxy_kernel_) == len(model.intercept_) == (6 if model.multi_class == "ovo" else 4)


def test_baselines_take_any_number_of_classes(four_digits):
    X, y, X_test, y_test = four_digits
    K, K_test = simpson(X), simpson(X_test, X)
    denoise = SpectrumSVC("denoise", C=10.0).fit(K, y)
    K_fit, P = spectrum_transform(K, "denoise")
    libsvm = SVC(C=10.0, kernel="precomputed").fit(K_fit, y)
    np.testing.assert_array_equal(denoise.predict(K_test), libsvm.predict(K_test @ P))
    assert denoise.decision_function(K_test).shape == (len(X_test), 4)
    mod = ModSVC(C=10.0, decision_function_shape="ovo").fit(K, y)
    assert mod.dual_coef_.shape == (6, len(y)) and mod.decision_function(K_test).shape == (len(X_test), 6)
    assert mod.score(K_test, y_test) > 0.8


def test_a_fit_that_will_not_fit_in_memory_is_refused_before_any_work(monkeypatch):
    import indkernel._validation as validation

    monkeypatch.setattr(validation, "available_memory", lambda: 2**30)  # 1 GiB
    with pytest.raises(MemoryError, match=r"n=10000 .* needs about 3.7 GiB \(5 10000×10000 float64 arrays.*1.0 GiB"):
        validation.check_memory(10_000, "IndefiniteSVC on n=10000 training points")
    calls = []
    with pytest.raises(MemoryError, match="IndefiniteSVC on n=20000"):
        IndefiniteSVC(kernel=lambda A, B: calls.append(1)).fit(np.zeros((20_000, 1)), np.arange(20_000) % 3)
    assert calls == []  # refused before the kernel was computed


def test_the_consistent_rule_classifies_what_the_raw_rows_could_not():
    """scikit-learn's check_classifiers_train, measured: three blobs with the sigmoid kernel at
    ρ = 1. The one-vs-rest problems fit K* exactly, but the raw indefinite K0 rows classify the
    training points poorly (libsvm's own one-vs-rest on that K0 too); the consistent rule, which
    scores with the learned kernel's map, classifies them with either strategy."""
    from sklearn.datasets import make_blobs
    from sklearn.metrics.pairwise import sigmoid_kernel
    from sklearn.preprocessing import StandardScaler
    from sklearn.utils import shuffle

    X, y = make_blobs(n_samples=300, random_state=0)
    X, y = shuffle(X, y, random_state=7)
    X = StandardScaler().fit_transform(X)
    K = sigmoid_kernel(X)
    ovr = IndefiniteSVC(tol=1e-4, multi_class="ovr", test_kernel="raw").fit(K, y)
    on_proxy = np.column_stack([K_star[:, ovr.support_] @ beta + b for K_star, beta, b in
                                zip(ovr.proxy_kernel_, ovr.dual_coef_, ovr.intercept_, strict=True)])
    assert np.mean(ovr.classes_[on_proxy.argmax(axis=1)] == y) == 1.0
    assert ovr.score(K, y) < 0.4  # 0.31 when written
    assert 0.55 < OneVsRestClassifier(SVC(kernel="precomputed")).fit(K, y).score(K, y) < 0.75  # 0.64
    for strategy in ("ovr", "ovo"):
        assert IndefiniteSVC(tol=1e-4, multi_class=strategy).fit(K, y).score(K, y) > 0.85  # 0.93 and 0.92 when written


def test_one_vs_one_coefficients_in_libsvms_layout_give_the_decisions(four_digits):
    """Read as scikit-learn reads ``SVC``'s packed ``dual_coef_`` (pair (i, j): class i's support
    vectors in row j - 1, class j's in row i; positive for class i), the coefficients and
    intercepts give the pairwise decisions, raw and consistent (``test_coef_`` in the same signs);
    the support is ordered by class."""
    X, y, X_test, _ = four_digits
    full = simpson(np.vstack([X, X_test]))
    n = len(y)
    for rule in ("raw", "consistent"):
        model = IndefiniteSVC(C=10.0, rho=1.0, tol=1e-6, test_kernel=rule, decision_function_shape="ovo").fit(full[:n, :n], y)
        assert model.dual_coef_.shape == (3, len(model.support_)) and model.intercept_.shape == (6,)
        assert np.all(np.diff(np.searchsorted(model.classes_, y[model.support_])) >= 0)
        K_test = full[n:, :n]
        decisions = model.decision_function(K_test)
        if rule == "consistent":
            np.testing.assert_allclose(decisions, K_test @ model.test_coef_.T + model.intercept_, atol=1e-10)
            continue
        sv_class = np.searchsorted(model.classes_, y[model.support_])
        for pair, (i, j) in enumerate(itertools.combinations(range(4), 2)):
            first, second = model.support_[sv_class == i], model.support_[sv_class == j]
            expected = (K_test[:, first] @ model.dual_coef_[j - 1, sv_class == i]
                        + K_test[:, second] @ model.dual_coef_[i, sv_class == j] + model.intercept_[pair])
            np.testing.assert_allclose(decisions[:, pair], expected, atol=1e-10)
