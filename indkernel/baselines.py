"""The baselines of the paper's experiments (section ``s:num-res``), as estimators on precomputed
similarities with the interface of :class:`indkernel.IndefiniteSVC` (``fit(K_train, y)``,
``predict(K_test)`` with the test×train rows, ``decision_function``, ``score``).

- :class:`SpectrumSVC`: ``"denoise"`` clips the negative eigenvalues of K0, ``"flip"`` takes
  their absolute values, ``"shift"`` adds ``-λ_min`` to all (Wu, Chang & Zhang 2005). Each is a
  linear map of the training kernel, ``K̃ = K0 P`` (``P = V diag(f(λ)/λ) Vᵀ``: the projection on the
  positive eigenvectors for denoise, ``V sign(Λ) Vᵀ`` for flip), or ``K0 + |λ_min| I`` for shift;
  the consistent test-time counterpart applies the same map to the test rows, ``k̃ = k P``
  (Chen et al. 2009), and leaves them as they are for shift (only the diagonal moved). libsvm
  then solves the SVM on ``K̃``.
- :class:`ModSVC`: Lin & Lin (2003), the kernel only in the separation constraints, the
  identity in the objective: ``min ½‖α‖² + Σ C_i ξ_i`` s.t. ``y_i(Σ_j α_j y_j K0_ij + b) >= 1 - ξ_i``,
  ``α, ξ >= 0``; a convex QP for any K0, solved through cvxpy.
- ``SpectrumSVC(spectrum="none")``: libsvm's SVC on the indefinite K0 itself, the paper's plain
  "SVM" column (libsvm converges to a stationary point of the nonconvex dual, with no optimality
  guarantee).

``class_weight`` is the same for all of them as for :class:`indkernel.IndefiniteSVC`.
"""

from __future__ import annotations

from numbers import Real

import cvxpy as cp
import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

import formulations

from ._validation import check_binary_labels, check_binary_targets, check_kernel, check_two_samples, penalty_vector

TRANSFORMS = ("none", "denoise", "flip", "shift")


class _PrecomputedBinaryClassifier(ClassifierMixin, BaseEstimator):
    """Validation shared by the baselines: a square training similarity and two classes."""

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        tags.classifier_tags.multi_class = False
        return tags

    def _validate_training(self, X, y):
        self._validate_params()
        K, y = validate_data(self, X, y, dtype=np.float64)
        check_two_samples(K.shape[0], type(self).__name__)
        check_binary_targets(y, type(self).__name__)
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"{type(self).__name__} takes the square train×train similarity matrix; got shape {K.shape}")
        y_pm, self.classes_ = check_binary_labels(y, K.shape[0])
        return check_kernel(K, name="X"), y_pm, penalty_vector(self.C, y_pm, self.classes_, self.class_weight)

    def _test_rows(self, X) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarity rows ``X``."""
        decision = self.decision_function(X)
        return self.classes_[(decision > 0).astype(int)]


class SpectrumSVC(_PrecomputedBinaryClassifier):
    """libsvm's SVM on a spectrum-transformed similarity (module docstring).

    Parameters
    ----------
    spectrum : {"none", "denoise", "flip", "shift"}, default "denoise"
        The transformation of K0's eigenvalues.
    C : float, default 1.0; class_weight : None, "balanced" or dict (as :class:`indkernel.IndefiniteSVC`).

    Attributes
    ----------
    classes_, svc_ (the fitted libsvm SVC), test_map_ ((n, n) array P with ``k̃ = k P``, or None for
    shift and none).
    """

    _parameter_constraints = {**_PrecomputedBinaryClassifier._parameter_constraints,
                              "spectrum": [StrOptions(set(TRANSFORMS))]}

    def __init__(self, spectrum="denoise", C=1.0, *, class_weight=None):
        self.spectrum = spectrum
        self.C = C
        self.class_weight = class_weight

    def fit(self, X, y):
        K, y_pm, C = self._validate_training(X, y)
        K_fit, self.test_map_ = spectrum_transform(K, self.spectrum)
        self.svc_ = SVC(C=1.0, kernel="precomputed").fit(K_fit, y_pm, sample_weight=C)
        return self

    def decision_function(self, X) -> np.ndarray:
        K = self._test_rows(X)
        return self.svc_.decision_function(K if self.test_map_ is None else K @ self.test_map_)


def spectrum_transform(K0: np.ndarray, transform: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(K̃, P)``: the transformed training kernel and the map of the test rows (None: unchanged)."""
    if transform == "none":
        return K0, None
    values, vectors = scipy.linalg.eigh(K0)
    if transform == "shift":
        return K0 + max(-values[0], 0.0) * np.eye(len(K0)), None
    factors = (values > 0).astype(float) if transform == "denoise" else np.sign(values)
    P = (vectors * factors) @ vectors.T
    K = (vectors * (values * factors)) @ vectors.T
    return (K + K.T) / 2, P


class ModSVC(_PrecomputedBinaryClassifier):
    """Lin & Lin (2003): ``min ½‖α‖² + Σ C_i ξ_i`` s.t. ``y_i(Σ_j α_j y_j K0_ij + b) >= 1 - ξ_i``,
    ``α, ξ >= 0`` (module docstring); convex for any K0. Solved by cvxpy (Clarabel).

    Parameters
    ----------
    C : float, default 1.0; class_weight : as :class:`indkernel.IndefiniteSVC`.
    solver : str, default ``formulations.DEFAULT_SOLVER``.

    Attributes
    ----------
    classes_, dual_coef_ ((1, n): ``α_j y_j``), intercept_ ((1,)).
    """

    _parameter_constraints = {**_PrecomputedBinaryClassifier._parameter_constraints, "solver": [str]}

    def __init__(self, C=1.0, *, class_weight=None, solver=formulations.DEFAULT_SOLVER):
        self.C = C
        self.class_weight = class_weight
        self.solver = solver

    def fit(self, X, y):
        if self.solver not in cp.installed_solvers():
            raise ValueError(f"solver={self.solver!r} is not an installed cvxpy solver; choose one of "
                             f"{sorted(cp.installed_solvers())}")
        K, y_pm, C = self._validate_training(X, y)
        n = len(y_pm)
        alpha, b, slack = cp.Variable(n, nonneg=True), cp.Variable(), cp.Variable(n, nonneg=True)
        margins = cp.multiply(y_pm, K @ cp.multiply(y_pm, alpha) + b)
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(alpha) + C @ slack), [margins >= 1 - slack])
        problem.solve(solver=self.solver)
        if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            raise RuntimeError(f"the Mod SVM QP ended with status {problem.status!r} ({self.solver})")
        self.dual_coef_ = (y_pm * alpha.value)[None, :]
        self.intercept_ = np.array([float(b.value)])
        return self

    def decision_function(self, X) -> np.ndarray:
        return self._test_rows(X) @ self.dual_coef_[0] + self.intercept_[0]
