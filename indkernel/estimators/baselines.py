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
- :class:`KreinSVC`: the Krein-space SVM (Loosli, Canu & Ong 2016), which is flip with the
  consistent map: train on ``|K0|``, score new points by their raw rows with the weights mapped
  back by ``U sign(Λ) Uᵀ``.
- :class:`ModSVC`: Lin & Lin (2003), the kernel only in the separation constraints, the
  identity in the objective: ``min ½‖α‖² + Σ C_i ξ_i`` s.t. ``y_i(Σ_j α_j y_j K0_ij + b) >= 1 - ξ_i``,
  ``α, ξ >= 0``; a convex QP for any K0, solved by its dual with the project's projected Newton
  (:mod:`indkernel.core.mod_svm`, certified), or as a QP through cvxpy (``solver=``).
- :class:`OneNormSVC`: the 1-norm SVM on the raw similarity (Mangasarian 2000), ``min ‖β‖₁ +
  Σ C_i ξ_i`` s.t. ``y_i((K0β)_i + b) >= 1 - ξ_i``: a linear program for any K0, solved by HiGHS
  and certified by LP duality (:mod:`indkernel.core.one_norm`); new points by their raw rows.
- :class:`KreinLeastSquaresClassifier`: least squares in the Krein space with separate
  regularizers on the positive and negative parts over a hypersphere (Oglic & Gärtner 2018),
  solved globally on K0's eigendecomposition (:mod:`indkernel.core.krein_least_squares`); one
  target vector per class, new points by their raw rows.
- Chen, Garcia, Gupta, Rahimi & Cazzanti (JMLR 2009)'s baselines: :class:`SimilarityFeaturesSVC`
  (a linear SVM on the similarities as features) and :class:`SimilarityKNN` (k nearest
  neighbours by similarity).
- ``SpectrumSVC(spectrum="none")``: libsvm's SVC on the indefinite K0 itself, the paper's plain
  "SVM" column (libsvm converges to a stationary point of the nonconvex dual, with no optimality
  guarantee).

``class_weight`` is the same for all of them as for :class:`indkernel.IndefiniteSVC`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import cvxpy as cp
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

import formulations

from .._validation import (
    CLASS_WEIGHT_RULES,
    check_binary_labels,
    check_kernel,
    check_two_samples,
    penalty_vector,
    sample_class_weights,
)
from ..core.krein_least_squares import solve_krein_least_squares
from ..core.mod_svm import ModSVMDual
from ..core.namespace import checked_kernel, foreign_namespace, to_numpy
from ..core.one_norm import solve_one_norm_svm
from ..core.proxy import eigendecomposition
from ..solvers.projected_newton import projected_newton
from ..solvers.tracking import Run
from . import multiclass

TRANSFORMS = ("none", "denoise", "flip", "shift")
#: Projected Newton on a Mod SVM dual: its iterations at most, and the iterations without halving
#: the certified gap before the dual QP gives it a new start (from the active-set start the tables'
#: problems certify 1e-8 within 60, most within 30; low-rank kernels and the sigmoid sets at C = 100
#: stall; a window of 15 or 30 made the tables' sigmoid fits no faster).
NEWTON_CAP, NEWTON_STALL = 200, 60
#: The statuses of a run certified as far as floating point allows ("roundoff": as tight as it can be).
CERTIFIED = ("optimal", "roundoff")


class _PrecomputedClassifier(ClassifierMixin, BaseEstimator):
    """What the baselines share: a square training similarity, any number of classes, and
    ``decision_function_shape`` (:mod:`indkernel.estimators.multiclass`)."""

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions(set(CLASS_WEIGHT_RULES)), dict, None],
        "decision_function_shape": [StrOptions(set(multiclass.SHAPES))],
    }

    #: Whether fit works on a kernel of another namespace on its device (else on its host copy).
    _on_device = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        return tags

    def _validate_training(self, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(K, y, index)``: the checked kernel and labels, and each label's position in ``classes_``
        (K on its device for an array of another namespace: checked there, :func:`checked_kernel`)."""
        self._validate_params()
        device_K = None
        if foreign_namespace(X) is not None:
            X, device_K = checked_kernel(X, name="X")
            y = to_numpy(y) if foreign_namespace(y) is not None else y
        K, y = validate_data(self, X, y, dtype=np.float64)
        check_two_samples(K.shape[0], type(self).__name__)
        check_classification_targets(y)
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"{type(self).__name__} takes the square train×train similarity matrix; got shape {K.shape}")
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes; y has one: {self.classes_.tolist()}")
        return (device_K if device_K is not None and self._on_device else check_kernel(K, name="X")), y, index

    def _test_rows(self, X) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, to_numpy(X) if foreign_namespace(X) is not None else X, dtype=np.float64, reset=False)


class _LibsvmOnMappedKernel(_PrecomputedClassifier):
    """libsvm's SVC on a kernel made from the training similarity, ``K̃ = K0 M`` (or K0 shifted),
    with new rows mapped the same way, ``k̃ = k M`` (``M`` = ``test_map_``; None: rows as they are)."""

    _parameter_constraints = {**_PrecomputedClassifier._parameter_constraints,
                              "tol": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, C=1.0, *, tol=1e-3, class_weight=None, decision_function_shape="ovr"):
        self.C = C
        self.tol = tol
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape

    def _kernel_and_map(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        raise NotImplementedError

    def fit(self, X, y):
        K, y, index = self._validate_training(X, y)
        weights = self.C * sample_class_weights(self.class_weight, index, self.classes_)
        K_fit, self.test_map_ = self._kernel_and_map(K)
        self.svc_ = SVC(C=1.0, kernel="precomputed", tol=self.tol,
                        decision_function_shape=self.decision_function_shape).fit(K_fit, y, sample_weight=weights)
        return self

    def _transformed(self, X) -> np.ndarray:
        K = self._test_rows(X)
        return K if self.test_map_ is None else K @ self.test_map_

    def decision_function(self, X) -> np.ndarray:
        """libsvm's decision values on the mapped test rows; for two classes positive means ``classes_[1]``."""
        K = self._transformed(X)
        return self.svc_.decision_function(K)

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarity rows ``X``."""
        K = self._transformed(X)
        return self.svc_.predict(K)


class SpectrumSVC(_LibsvmOnMappedKernel):
    """libsvm's SVM on a spectrum-transformed similarity (module docstring); more than two
    classes as libsvm does them (one-vs-one, ``decision_function_shape`` as in SVC).

    Parameters
    ----------
    spectrum : {"none", "denoise", "flip", "shift"}, default "denoise"
        The transformation of K0's eigenvalues.
    C : float, default 1.0; class_weight : None, "balanced", "authors" or dict (as :class:`indkernel.IndefiniteSVC`).
    tol : float, default 1e-3
        libsvm's stopping tolerance, as ``SVC``'s.
    decision_function_shape : {"ovr", "ovo"}, default "ovr"; as scikit-learn's SVC.

    Attributes
    ----------
    classes_, svc_ (the fitted libsvm SVC), test_map_ ((n, n) array P with ``k̃ = k P``, or None for
    shift and none).
    """

    _on_device = True  # the spectrum's transform on K0's device (:func:`spectrum_transform`), libsvm on the host

    _parameter_constraints = {**_LibsvmOnMappedKernel._parameter_constraints,
                              "spectrum": [StrOptions(set(TRANSFORMS))]}

    def __init__(self, spectrum="denoise", C=1.0, *, tol=1e-3, class_weight=None, decision_function_shape="ovr"):
        self.spectrum = spectrum
        self.C = C
        self.tol = tol
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape

    def _kernel_and_map(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return spectrum_transform(K, self.spectrum)


class KreinSVC(_LibsvmOnMappedKernel):
    """The Krein-space SVM (KSVM; Loosli, Canu & Ong, IEEE TPAMI 2016): with ``K0 = U Λ Uᵀ``, an
    SVM is trained on ``|K0| = U|Λ|Uᵀ`` (the flipped spectrum, a PSD kernel) and its weights
    ``α∘y`` are mapped back to the Krein space, ``α̃ = U sign(Λ) Uᵀ (α∘y)``, so a new point is
    scored by its raw similarity row, ``kᵀα̃ + b``. That is ``SpectrumSVC("flip")`` with the
    consistent test-time map ``k̃ = k U sign(Λ) Uᵀ`` (Chen et al. 2009), named as the field cites
    it; more than two classes by libsvm's one-vs-one problems on the one flipped kernel.

    Parameters
    ----------
    C : float, default 1.0; tol : float, default 1e-3 (libsvm's, as ``SVC``'s);
    class_weight, decision_function_shape : as :class:`indkernel.IndefiniteSVC`.

    Attributes
    ----------
    classes_, svc_ (libsvm's SVC on ``|K0|``), test_map_ (``U sign(Λ) Uᵀ``).
    """

    _on_device = True  # the spectrum's transform on K0's device (:func:`spectrum_transform`), libsvm on the host

    def _kernel_and_map(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return spectrum_transform(K, "flip")


def spectrum_transform(K0: np.ndarray, transform: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(K̃, P)``: the transformed training kernel and the map of the test rows (None: unchanged).
    K0's eigendecomposition comes from the process's store of spectra, so the fits of a grid on one
    fold, and the three spectrum baselines on it, decompose it once."""
    xp = foreign_namespace(K0)
    if xp is not None:  # on K0's device (a GPU's), then to the host for libsvm
        return _transform_on_device(xp, K0, transform)
    if transform == "none":
        return K0, None
    values, vectors = eigendecomposition(K0)
    if transform == "shift":
        return K0 + max(-values[0], 0.0) * np.eye(len(K0)), None
    factors = (values > 0).astype(float) if transform == "denoise" else np.sign(values)
    P = (vectors * factors) @ vectors.T
    K = (vectors * (values * factors)) @ vectors.T
    return (K + K.T) / 2, P


def _transform_on_device(xp, K0, transform: str) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`spectrum_transform` of an array of another namespace: the eigendecomposition and the
    two products on its device, the results copied to the host."""
    if transform in ("none", "shift"):
        K = to_numpy(K0, copy=True)
        return (K, None) if transform == "none" else spectrum_transform(K, transform)
    values, vectors = xp.linalg.eigh(K0)
    factors = xp.astype(values > 0, values.dtype) if transform == "denoise" else xp.sign(values)
    P = to_numpy((vectors * factors) @ vectors.T)
    K = to_numpy((vectors * (values * factors)) @ vectors.T)
    return (K + K.T) / 2, P


class _OneVsOneLinear(_PrecomputedClassifier):
    """What :class:`ModSVC` and :class:`OneNormSVC` share: a binary problem per pair of classes
    (one for two classes), each giving weights w over its rows and an offset b, and a new point's
    decision ``kᵀw + b`` from its raw similarity row, combined as ``SVC`` combines pairs."""

    def _fit_pairs(self, K: np.ndarray, y: np.ndarray, index: np.ndarray, solve) -> list:
        """Solve each pair's problem, ``solve(K_pair, y_pm, C) -> (w, b, extra)``, into
        ``_weights`` ((n_problems, n)) and ``_offsets``; returns the extras."""
        tasks = multiclass.binary_tasks(y, self.classes_, "ovo")
        weights = sample_class_weights(self.class_weight, index, self.classes_)
        self._weights, self._offsets, extras = np.zeros((len(tasks), len(y))), np.zeros(len(tasks)), []
        for k, task in enumerate(tasks):
            y_pm, classes = check_binary_labels(task.labels, len(task.rows))
            C = (penalty_vector(self.C, y_pm, classes, self.class_weight) if self.class_weight == "authors"
                 else self.C * weights[task.rows])
            self._weights[k, task.rows], self._offsets[k], extra = solve(K[np.ix_(task.rows, task.rows)], y_pm, C)
            extras.append(extra)
        return extras

    def _decide(self, X) -> tuple[np.ndarray, np.ndarray]:
        decisions = self._test_rows(X) @ self._weights.T + self._offsets
        return multiclass.decide(decisions, self.classes_, "ovo", self.decision_function_shape)

    def decision_function(self, X) -> np.ndarray:
        """Two classes: positive means ``classes_[1]``; more: as :meth:`indkernel.IndefiniteSVC.decision_function`."""
        return self._decide(X)[0]

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarity rows ``X``."""
        return self._decide(X)[1]


class ModSVC(_OneVsOneLinear):
    """Lin & Lin (2003): ``min ½‖α‖² + Σ C_i ξ_i`` s.t. ``y_i(Σ_j α_j y_j K0_ij + b) >= 1 - ξ_i``,
    ``α, ξ >= 0`` (module docstring); convex for any K0. More than two classes by one-vs-one
    problems, ``decision_function_shape`` as in ``SVC`` (:mod:`indkernel.estimators.multiclass`).

    Parameters
    ----------
    C : float, default 1.0; class_weight, decision_function_shape : as :class:`indkernel.IndefiniteSVC`.
    solver : str, default "newton"
        ``"newton"``: the dual ``max eᵀλ - ½‖(Mλ)₊‖²`` over the SVM's set (M = YK0Y) by an
        active-set start through libsvm and the projected Newton method, certified to ``tol``
        (:mod:`indkernel.core.mod_svm`); where Newton stalls, from the solution of the dual QP
        (:func:`formulations.mod_svm_dual`) instead. Or an installed cvxpy solver (``"CLARABEL"``,
        ``"SCS"``...): the primal QP as it is (:func:`formulations.mod_svm_primal`).
    tol : float, default 1e-8
        With ``"newton"``: the certified duality gap of each binary problem, relative to the
        λ-dependent size of its dual (about the accuracy of the conic solvers' defaults).

    Attributes
    ----------
    classes_, dual_coef_ ((n_problems, n): ``α_j y_j`` of each binary problem), intercept_ ((n_problems,)),
    gap_ ((n_problems,): the certified gap of each problem with ``"newton"``, NaN with a cvxpy solver).
    """

    _parameter_constraints = {**_PrecomputedClassifier._parameter_constraints, "solver": [str],
                              "tol": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, C=1.0, *, class_weight=None, decision_function_shape="ovr", solver="newton", tol=1e-8):
        self.C = C
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape
        self.solver = solver
        self.tol = tol

    def fit(self, X, y):
        if self.solver != "newton" and self.solver not in cp.installed_solvers():
            raise ValueError(f"solver={self.solver!r} is neither 'newton' nor an installed cvxpy solver; choose one of "
                             f"{['newton', *sorted(cp.installed_solvers())]}")
        K, y, index = self._validate_training(X, y)
        gaps = self._fit_pairs(K, y, index, self._solve_dual if self.solver == "newton" else self._solve_qp)
        self.dual_coef_, self.intercept_, self.gap_ = self._weights, self._offsets, np.array(gaps)
        return self

    def _solve_dual(self, K: np.ndarray, y_pm: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, float, float]:
        """``(α ∘ y, b, gap)`` of the binary problem by its dual (:class:`indkernel.core.mod_svm.ModSVMDual`):
        projected Newton from the active-set start; where it stalls short of tol (``NEWTON_STALL``: the
        faces of the box slow to settle, on kernels of low numerical rank at large C), the dual QP
        through the default conic solver at its accurate settings gives a λ that most often certifies
        tol as it is, and projected Newton goes on from it where not. The α returned is the primal point of the smallest
        certified upper bound; a ConvergenceWarning if even the polished λ misses tol."""
        dual = ModSVMDual(K, y_pm, C)

        def newton_from(start: np.ndarray) -> Run:
            run = Run(dual, "newton", tol=self.tol, max_iter=NEWTON_CAP, bound="free")
            projected_newton(dual, run, alpha0=start, fallback=False, stall_window=NEWTON_STALL)
            return run

        run = newton_from(dual.active_set_start())
        if run.status not in CERTIFIED:
            model = formulations.mod_svm_dual(K, y_pm, C)
            model.solve(solver=formulations.DEFAULT_SOLVER, **formulations.ACCURATE[formulations.DEFAULT_SOLVER])
            run = newton_from(model.solution("lambda"))
        result = run.result(warn=False)
        if result.status not in CERTIFIED:
            warnings.warn(f"ModSVC: the Mod SVM dual stopped short of tol={self.tol:g} ({result.status}: certified "
                          f"gap {result.gap:.3g}), also from the dual QP's solution by {formulations.DEFAULT_SOLVER}",
                          ConvergenceWarning, stacklevel=3)
        _, alpha, b = dual.best_primal  # within the certified gap of the optimum
        return y_pm * alpha, b, result.gap

    def _solve_qp(self, K: np.ndarray, y_pm: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, float, float]:
        """``(α ∘ y, b, NaN)`` of the binary primal QP through cvxpy and the estimator's solver."""
        model = formulations.mod_svm_primal(K, y_pm, C)
        model.solve(solver=self.solver)
        return y_pm * model.solution("alpha"), float(model.solution("b")), np.nan


class OneNormSVC(_OneVsOneLinear):
    """The 1-norm SVM on the raw similarity (Mangasarian 2000): ``min ‖β‖₁ + Σ C_i ξ_i`` s.t.
    ``y_i((K0β)_i + b) >= 1 - ξ_i``, ``ξ >= 0``, a linear program for any K0 solved by HiGHS,
    its optimum certified by LP duality (:mod:`indkernel.core.one_norm`). New points are scored
    by their raw similarity rows, ``kᵀβ + b``: the map of training. The ℓ1 norm makes β sparse.
    More than two classes by one-vs-one problems, ``decision_function_shape`` as in ``SVC``.

    Parameters
    ----------
    C : float, default 1.0; class_weight, decision_function_shape : as :class:`indkernel.IndefiniteSVC`.

    Attributes
    ----------
    classes_; support_ (the training points with ``β_j ≠ 0`` in some binary problem, ordered by
    class, then index, as ``SVC``'s), n_support_, dual_coef_ (the weights β on the support in
    ``SVC``'s layout and signs), intercept_ (as ``SVC``'s); bounds_ ((n_problems, 2): each LP's
    certified bracket ``lower <= p* <= upper``), gap_ (their widths).
    """

    def __init__(self, C=1.0, *, class_weight=None, decision_function_shape="ovr"):
        self.C = C
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape

    def fit(self, X, y):
        K, y, index = self._validate_training(X, y)
        self.bounds_ = np.array(self._fit_pairs(K, y, index, _one_norm_pair))
        self.gap_ = self.bounds_[:, 1] - self.bounds_[:, 0]
        support = np.flatnonzero(np.any(self._weights != 0, axis=0))
        self.support_, self.dual_coef_, self.intercept_ = multiclass.libsvm_layout(
            support, self._weights[:, support], self._offsets, index, len(self.classes_), "ovo")
        self.n_support_ = np.bincount(index[self.support_], minlength=len(self.classes_)).astype(np.int32)
        return self


def _one_norm_pair(K: np.ndarray, y_pm: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, float, tuple[float, float]]:
    """``(β, b, (lower, upper))`` of one binary 1-norm SVM."""
    solution = solve_one_norm_svm(K, y_pm, C)
    return solution.beta, solution.intercept, (solution.lower, solution.upper)


class KreinLeastSquaresClassifier(_PrecomputedClassifier):
    """Least squares in a Krein space (Oglic & Gärtner, "Learning in reproducing kernel Kreĭn
    spaces", ICML 2018): ``min (1/n)‖K0α - t‖² + λ₊‖f₊‖² + λ₋‖f₋‖²`` over functions
    ``f = Σ α_j k(x_j, ·)`` on the hypersphere ``‖f₊‖² + ‖f₋‖² = r²`` of the associated Hilbert
    space, solved to its global optimum on K0's eigendecomposition (one secular equation,
    :mod:`indkernel.core.krein_least_squares`), the optimum bracketed by duality. The targets are
    ±1 for two classes (``classes_[1]`` positive) and one ±1 column per class for more (predict
    the largest), centred, their mean the intercept. New points are scored by their raw rows,
    ``kᵀα + b``: the map of training. On the sphere only ``λ₋ - λ₊`` and r shape the solution.

    Parameters
    ----------
    lambda_positive, lambda_negative : float >= 0, default 1.0
        λ₊ and λ₋, the regularizers of the positive and negative parts.
    radius : float > 0, default 1.0
        r, the norm of f in the associated Hilbert space.

    Attributes
    ----------
    classes_; coef_ ((n_targets, n): α per target column), intercept_ ((n_targets,)); bounds_
    ((n_targets, 2): each problem's bracket ``lower <= p* <= upper``), gap_ (their widths).
    """

    _parameter_constraints = {"lambda_positive": [Interval(Real, 0, None, closed="left")],
                              "lambda_negative": [Interval(Real, 0, None, closed="left")],
                              "radius": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, lambda_positive=1.0, lambda_negative=1.0, *, radius=1.0):
        self.lambda_positive = lambda_positive
        self.lambda_negative = lambda_negative
        self.radius = radius

    def fit(self, X, y):
        K, y, index = self._validate_training(X, y)
        targets = np.where(index[:, None] == np.arange(len(self.classes_)), 1.0, -1.0)
        if len(self.classes_) == 2:
            targets = targets[:, 1:]
        self.intercept_ = targets.mean(axis=0)
        values, vectors = eigendecomposition(K)
        solutions = [solve_krein_least_squares(values, vectors, column - mean, lambda_positive=self.lambda_positive,
                                               lambda_negative=self.lambda_negative, radius=self.radius)
                     for column, mean in zip(targets.T, self.intercept_, strict=True)]
        self.coef_ = np.array([solution.alpha for solution in solutions])
        self.bounds_ = np.array([(solution.lower, solution.upper) for solution in solutions])
        self.gap_ = self.bounds_[:, 1] - self.bounds_[:, 0]
        return self

    def decision_function(self, X) -> np.ndarray:
        """``kᵀα + b`` per target: (n_test,) for two classes (positive means ``classes_[1]``),
        else (n_test, n_classes)."""
        decisions = self._test_rows(X) @ self.coef_.T + self.intercept_  # rows first: their fitted check
        return decisions[:, 0] if len(self.classes_) == 2 else decisions

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarity rows ``X``."""
        decisions = self.decision_function(X)
        if decisions.ndim == 1:
            return self.classes_[(decisions > 0).astype(int)]
        return self.classes_[decisions.argmax(axis=1)]


class SimilarityFeaturesSVC(_LibsvmOnMappedKernel):
    """The SVM on similarities as features (Chen, Garcia, Gupta, Rahimi & Cazzanti, JMLR 2009):
    each point is described by its similarities to the training points, the row ``K0[i, :]``,
    and a linear SVM is trained on these features, i.e. libsvm on the PSD kernel ``K0 K0ᵀ``; a new
    point's features are its row k, its kernel row ``k K0ᵀ``. Convex for any K0; more than two
    classes as libsvm does them. Parameters as :class:`KreinSVC`'s.

    Attributes
    ----------
    classes_, svc_ (libsvm's SVC on ``K0 K0ᵀ``), test_map_ (``K0ᵀ``: a new row's kernel row is ``k K0ᵀ``).
    """

    def _kernel_and_map(self, K: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return K @ K.T, K.T


class SimilarityKNN(_PrecomputedClassifier):
    """k nearest neighbours by similarity (the k-NN baseline of Chen et al., JMLR 2009): a point
    takes the majority label of the ``n_neighbors`` training points most similar to it. Through
    scikit-learn's ``KNeighborsClassifier`` on precomputed distances ``max(row) - row`` (each row's
    order of similarity, as distances >= 0; ties as scikit-learn breaks them).

    Parameters
    ----------
    n_neighbors : int, default 5

    Attributes
    ----------
    classes_, knn_ (the fitted ``KNeighborsClassifier``).
    """

    _parameter_constraints = {"n_neighbors": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, n_neighbors=5):
        self.n_neighbors = n_neighbors

    def fit(self, X, y):
        K, y, _ = self._validate_training(X, y)
        if self.n_neighbors > len(y):
            raise ValueError(f"n_neighbors={self.n_neighbors} exceeds the {len(y)} training points; pass at most "
                             f"{len(y)}")
        self.knn_ = KNeighborsClassifier(n_neighbors=self.n_neighbors, metric="precomputed").fit(_as_distances(K), y)
        return self

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarity rows ``X``."""
        distances = _as_distances(self._test_rows(X))
        return self.knn_.predict(distances)

    def predict_proba(self, X) -> np.ndarray:
        """The fraction of the neighbours in each class of ``classes_``."""
        distances = _as_distances(self._test_rows(X))
        return self.knn_.predict_proba(distances)


def _as_distances(similarities: np.ndarray) -> np.ndarray:
    """Each row's similarities as distances ``max(row) - row``: the same order, nonnegative."""
    return similarities.max(axis=1, keepdims=True) - similarities
