"""ρ = ∞, the limit of ``ss:interpretation``: the machine on the clipped kernel (K0)_+, certified."""

import warnings

import numpy as np
import pytest
import scipy.linalg
from problems import TIGHT_CLARABEL, digits_simpson, random_indefinite, random_psd
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, SVR, OneClassSVM

import formulations
from indkernel import (
    IndefiniteOneClassSVM,
    IndefiniteSVC,
    IndefiniteSVR,
    OneClassProblem,
    PerturbSVC,
    PerturbSVMProblem,
    SVMProblem,
    SVRProblem,
    solve,
)
from indkernel.solvers import METHODS

INF = np.inf
#: The certified relative gap each method is run to (the paper's projected gradient, with its
#: t/(k+1) steps, is slow near the optimum: it gets a looser one, as in test_solvers).
TOL = {"newton": 1e-7, "apg": 1e-7, "pg": 1e-4, "accpm": 1e-7}


def clipped(K0):
    d, V = scipy.linalg.eigh(K0)
    K = (V * np.maximum(d, 0.0)) @ V.T
    return (K + K.T) / 2


def svr_data(n, seed):
    K0, _ = random_indefinite(n, seed)
    return K0, np.random.default_rng(seed).normal(size=n)


@pytest.mark.parametrize("method", [m for m, record in METHODS.items() if not record.needs_finite_rho])
@pytest.mark.parametrize("kind", ["svm", "svr", "one-class", "perturb"])
def test_every_method_certifies_the_clipped_kernels_qp(kind, method):
    """p* at ρ = ∞ is the machine's dual QP on (K0)_+ (cvxpy): every method's bracket holds it."""
    n, seed = 16, 3
    if kind == "svm":
        K0, y = random_indefinite(n, seed)
        problem, model = SVMProblem(K0, y, C=2.0, rho=INF), formulations.dual_qp(clipped(K0), y * 1.0, 2.0)
    elif kind == "perturb":
        K0, y = random_psd(n, seed)
        problem, model = PerturbSVMProblem(K0, y, C=2.0, rho=INF), formulations.dual_qp(K0, y * 1.0, 2.0)
    elif kind == "svr":
        K0, t = svr_data(n, seed)
        problem = SVRProblem(K0, t, C=2.0, rho=INF, epsilon=0.1)
        model = formulations.svr_dual_qp(clipped(K0), problem.y, 2.0, 0.1)
    else:
        K0, _ = random_indefinite(n, seed)
        problem, model = OneClassProblem(K0, nu=0.3, rho=INF), formulations.one_class_dual_qp(clipped(K0), 0.3)
    p_star = model.solve(**TIGHT_CLARABEL)
    result = solve(problem, method, tol=TOL[method], max_iter=20_000)
    assert result.status == "optimal", result.stop_reason
    slack = 1e-8 * max(1.0, abs(p_star))  # Clarabel's own accuracy
    assert result.lower - slack <= p_star <= result.upper + slack
    assert result.gap <= TOL[method] * result.scale


def test_decisions_match_libsvm_on_the_clipped_kernel():
    """The estimators at ρ = ∞ decide as scikit-learn's machines on (K0)_+ (within 1e-6), on new
    points too: their similarities k0(x) become Pk0(x), P the projector onto K0's positive
    eigenspace (``K0 P = (K0)_+``), the consistent rule's map."""
    K0_all, y_all = random_indefinite(40, 4)
    K0, y, cross = K0_all[:30, :30], y_all[:30], K0_all[30:, :30]
    d, V = scipy.linalg.eigh(K0)
    P = V[:, d > 0] @ V[:, d > 0].T
    K = clipped(K0)
    ours = IndefiniteSVC(C=2.0, rho=INF, tol=1e-10).fit(K0, y)
    theirs = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K, y)
    np.testing.assert_allclose(ours.decision_function(K0), theirs.decision_function(K), atol=1e-6)
    np.testing.assert_allclose(ours.decision_function(cross), theirs.decision_function(cross @ P), atol=1e-6)
    t = np.random.default_rng(4).normal(size=30)
    ours = IndefiniteSVR(C=2.0, rho=INF, epsilon=0.1, tol=1e-10).fit(K0, t)
    theirs = SVR(kernel="precomputed", C=2.0, epsilon=0.1, tol=1e-10).fit(K, t)
    np.testing.assert_allclose(ours.predict(K0), theirs.predict(K), atol=1e-6)
    K0, _ = digits_simpson(30, 4)  # a random K0 puts every point on the one-class boundary
    K = clipped(K0)
    ours = IndefiniteOneClassSVM(nu=0.3, rho=INF, tol=1e-10).fit(K0)
    theirs = OneClassSVM(kernel="precomputed", nu=0.3, tol=1e-10).fit(K)
    # libsvm scales the one-class dual by νn: its decision is νn times ours
    np.testing.assert_allclose(ours.decision_function(K0) * 0.3 * 30, theirs.decision_function(K), atol=1e-6)
    K0_psd, y_psd = random_psd(30, 4)
    ours = PerturbSVC(C=2.0, rho=INF, tol=1e-10).fit(K0_psd, y_psd)
    theirs = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K0_psd, y_psd)
    np.testing.assert_allclose(ours.decision_function(K0_psd), theirs.decision_function(K0_psd), atol=1e-6)


def test_rho_1e8_approaches_the_limit():
    """At ρ = 1e8 the proxy kernel is within ‖u‖²/(4ρ) of (K0)_+, the objective the limit's plus
    ρ‖(K0)_-‖², and the solution optimal for ρ = ∞ to within its certified gap."""
    K0, y = random_indefinite(30, 4)
    limit, large = SVMProblem(K0, y, C=2.0, rho=INF), SVMProblem(K0, y, C=2.0, rho=1e8)
    alpha = limit.project(np.random.default_rng(0).uniform(0, 2.0, 30))
    u = y * alpha
    np.testing.assert_allclose(large.proxy_kernel(alpha), limit.proxy_kernel(alpha), rtol=0,
                               atol=u @ u / 4e8 + 1e-12 * np.abs(K0).max() * 30)
    constant = 1e8 * np.sum(np.minimum(scipy.linalg.eigvalsh(K0), 0.0) ** 2)
    assert abs(large.objective(alpha) - constant - limit.objective(alpha)) <= large.objective_roundoff(alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # ρ = 1e8 certifies only to its round-off
        near = solve(large, "newton", tol=1e-9)
    best = solve(limit, "newton", tol=1e-10)
    assert best.lower - near.gap <= limit.objective(near.alpha) <= best.upper
    assert np.linalg.norm(near.alpha - best.alpha) <= 1e-2 * np.linalg.norm(best.alpha)


def test_objective_forms_agree_and_the_conic_routes_refuse():
    K0, y = random_indefinite(12, 1)
    problem = SVMProblem(K0, y, C=2.0, rho=INF)
    alpha = problem.initial_point()
    reference = alpha.sum() - 0.5 * (y * alpha) @ clipped(K0) @ (y * alpha)
    for form in ("negative-part", "eigenvalue", "proxy"):
        assert problem.objective(alpha, form=form) == pytest.approx(reference, rel=1e-12)
    np.testing.assert_allclose(problem.smoothed_gradient(alpha, 1e-3), problem.gradient(alpha), atol=1e-10)
    for method in ("sdp", "exchange"):
        with pytest.raises(ValueError, match=f"method '{method}' needs a finite rho.*'newton'"):
            solve(problem, method)


@pytest.mark.parametrize("rho", [0.0, -1.0, -INF, np.nan])
def test_a_bad_rho_names_the_limit(rho):
    K0, y = random_indefinite(8, 0)
    with pytest.raises(ValueError, match="rho must be a positive finite number.*rho=np.inf"):
        SVMProblem(K0, y, rho=rho)


def test_a_rho_grid_ends_at_infinity():
    """``IndefiniteSVCCV`` warm-starts along a ρ grid ending at ∞; the limit's mean score is
    ``cross_val_score``'s for the estimator at ρ = ∞."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from indkernel import IndefiniteSVCCV

    K0, y = digits_simpson(60, 1)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    search = IndefiniteSVCCV(IndefiniteSVC(tol=1e-8), Cs=[1.0], rhos=[1.0, INF], cv=folds).fit(K0, y)
    assert [params["rho"] for params in search.cv_results_["params"]] == [1.0, INF]
    alone = cross_val_score(IndefiniteSVC(C=1.0, rho=INF, tol=1e-8), K0, y, cv=folds)
    assert search.cv_results_["mean_test_score"][1] == pytest.approx(alone.mean(), abs=1e-12)


def test_balanced_class_weights_are_scikit_learns():
    """``class_weight="balanced"`` means ``SVC``'s ``n / (k n_c)`` over all classes: at ρ = ∞ on a PSD
    kernel (K* = K0) the decisions are ``SVC(class_weight="balanced")``'s on breast cancer (binary,
    unequal classes) and on iris with one class thinned (three classes); "authors" is another rule."""
    from sklearn.datasets import load_breast_cancer, load_iris
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X[:150])
    K, y = rbf_kernel(X, gamma=0.02), y[:150]
    ours = IndefiniteSVC(C=2.0, rho=INF, tol=1e-9, class_weight="balanced").fit(K, y)
    theirs = SVC(kernel="precomputed", C=2.0, tol=1e-10, class_weight="balanced").fit(K, y)
    np.testing.assert_allclose(ours.decision_function(K), theirs.decision_function(K), atol=1e-6)
    authors = IndefiniteSVC(C=2.0, rho=INF, tol=1e-9, class_weight="authors").fit(K, y)
    assert np.max(np.abs(authors.decision_function(K) - theirs.decision_function(K))) > 1e-3
    X, y = load_iris(return_X_y=True)
    keep = np.flatnonzero((y != 2) | (np.arange(len(y)) % 3 == 0))  # classes of 50, 50 and 17
    K, y = rbf_kernel(StandardScaler().fit_transform(X[keep]), gamma=0.5), y[keep]
    ours = IndefiniteSVC(C=2.0, rho=INF, tol=1e-9, class_weight="balanced").fit(K, y)
    theirs = SVC(kernel="precomputed", C=2.0, tol=1e-10, class_weight="balanced").fit(K, y)
    np.testing.assert_array_equal(ours.predict(K), theirs.predict(K))
    np.testing.assert_allclose(ours.decision_function(K), theirs.decision_function(K), atol=1e-6)


@pytest.mark.parametrize("rho", [1e8, INF])
def test_at_the_limit_the_fit_is_svcs_attribute_by_attribute(rho):
    """On a PSD kernel at ρ → ∞ the fit is ``SVC``'s: the same support (round-off left at the
    bounds is snapped, certified after), the same support counts per class, class weights, fit
    status, decisions within 1e-6, and the coefficients and intercepts in libsvm's layout and signs
    (iris: three one-vs-one pairs packed in two rows): breast cancer (300 standardized rows, RBF)
    and iris."""
    from sklearn.datasets import load_breast_cancer, load_iris
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    cancer = rbf_kernel(StandardScaler().fit_transform(X[:300]), gamma=1 / 30), y[:300]
    X, y = load_iris(return_X_y=True)
    iris = rbf_kernel(StandardScaler().fit_transform(X), gamma=0.5), y
    for (K, labels), weight in ((cancer, None), (cancer, "balanced"), (iris, None)):
        theirs = SVC(kernel="precomputed", C=1.0, tol=1e-10, class_weight=weight).fit(K, labels)
        ours = IndefiniteSVC(C=1.0, rho=rho, tol=1e-9, class_weight=weight).fit(K, labels)
        np.testing.assert_array_equal(ours.support_, theirs.support_)
        np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
        assert ours.dual_coef_.shape == theirs.dual_coef_.shape
        np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, atol=1e-5)
        np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-6)
        np.testing.assert_allclose(ours.class_weight_, theirs.class_weight_, rtol=1e-12)
        assert ours.fit_status_ == theirs.fit_status_ == 0 and ours.support_vectors_.shape == (0, 0)
        np.testing.assert_allclose(ours.decision_function(K), theirs.decision_function(K), atol=1e-6)
    apg = IndefiniteSVC(C=1.0, rho=rho, tol=1e-8, method="apg").fit(*cancer)
    assert set(apg.support_) == set(SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(*cancer).support_)
