"""The baselines against their definitions (section s:num-res)."""

import numpy as np
import pytest
import scipy.optimize
from problems import random_indefinite, random_psd
from sklearn.svm import SVC
from sklearn_checks import parametrize_with_checks

from indkernel.estimators.baselines import ModSVC, SpectrumSVC, spectrum_transform


def _eig(K):
    return np.linalg.eigh(K)


@pytest.mark.parametrize("transform", ["denoise", "flip", "shift", "none"])
def test_a_psd_matrix_is_left_alone(transform):
    K, _ = random_psd(15, 0)
    np.testing.assert_allclose(spectrum_transform(K, transform)[0], K, atol=1e-12)


def test_spectra_and_consistent_test_maps():
    """denoise gives (K0)_+, flip |K0|, shift K0 - λ_min I; the test map sends the training rows
    of K0 to the rows of the transformed kernel (so a training point treated as a test point is
    classified with the kernel it was trained on)."""
    K, _ = random_indefinite(20, 1)
    lam, V = _eig(K)
    expected = {"denoise": (V * np.maximum(lam, 0)) @ V.T, "flip": (V * np.abs(lam)) @ V.T,
                "shift": K - lam[0] * np.eye(20)}
    for transform, K_expected in expected.items():
        K_fit, P = spectrum_transform(K, transform)
        np.testing.assert_allclose(K_fit, K_expected, atol=1e-12)
        if P is not None:
            np.testing.assert_allclose(K @ P, K_expected, atol=1e-12)
        assert np.linalg.eigvalsh(K_fit)[0] > -1e-10


def test_spectrum_svc_is_libsvm_on_the_transformed_kernel():
    K, y = random_indefinite(30, 2)
    K_test = random_indefinite(30, 3)[0][:7]
    model = SpectrumSVC("denoise", C=2.0).fit(K, y)
    K_plus, P = spectrum_transform(K, "denoise")
    reference = SVC(C=2.0, kernel="precomputed").fit(K_plus, y)
    np.testing.assert_allclose(model.decision_function(K_test), reference.decision_function(K_test @ P), atol=1e-9)
    plain = SpectrumSVC("none", C=2.0).fit(K, y)
    np.testing.assert_allclose(plain.decision_function(K_test),
                               SVC(C=2.0, kernel="precomputed").fit(K, y).decision_function(K_test), atol=1e-9)


def test_mod_svm_against_a_general_purpose_solver():
    """The Lin & Lin QP solved by Clarabel and by scipy's SLSQP on the same definition."""
    K, y = random_indefinite(12, 4)
    C = 0.7
    model = ModSVC(C=C).fit(K, y)
    n = len(y)

    def objective(v):
        return 0.5 * v[:n] @ v[:n] + C * v[n + 1:].sum()

    constraints = [{"type": "ineq", "fun": lambda v: y * (K @ (y * v[:n]) + v[n]) - 1 + v[n + 1:]}]
    bounds = [(0, None)] * n + [(None, None)] + [(0, None)] * n
    best = scipy.optimize.minimize(objective, np.ones(2 * n + 1), bounds=bounds, constraints=constraints,
                                   method="SLSQP", options=dict(ftol=1e-12, maxiter=1000))
    alpha = np.abs(model.dual_coef_[0])
    slack = np.maximum(0, 1 - y * (K @ model.dual_coef_[0] + model.intercept_[0]))
    assert objective(np.concatenate([alpha, model.intercept_, slack])) == pytest.approx(best.fun, rel=1e-6)


def test_mod_svm_and_class_weights():
    K, y = random_indefinite(16, 5)
    labels = np.where(y > 0, "pos", "neg")
    model = ModSVC(C=1.0, class_weight="balanced").fit(K, labels)
    assert set(model.predict(K)) <= {"pos", "neg"} and list(model.classes_) == ["neg", "pos"]


@parametrize_with_checks([SpectrumSVC(), SpectrumSVC("flip"), ModSVC()])
def test_sklearn_conventions(estimator, check):
    check(estimator)
