"""scikit-learn estimators over the problem types: fit on an indefinite similarity, predict, certify.

Each estimator takes ``kernel="precomputed"`` (``fit(K_train, y)`` with the n×n train×train
similarity matrix, ``predict(K_test)`` with the m×n test×train one) or a callable
``kernel(X, Y) -> similarity matrix`` on raw features. ``fit`` solves the problem with any
method of :func:`indkernel.solve` and keeps the certified bounds (``lower_bound_``,
``upper_bound_``, ``gap_``) beside scikit-learn's fitted attributes.

**Test-time kernel.** The proxy kernel K* exists only on the training points, so a test point
needs a rule:

- ``test_kernel="inductive"`` (the default): the decision is ``K0(x, X_train) β + b``, the test
  similarities as they are. Each test point is classified on its own, as in any scikit-learn
  pipeline, cross-validation or grid search, so it is the default.
- ``test_kernel="transductive"``: the paper's heuristic (section ``ss:interpretation``): form the
  full (train + test) similarity matrix, replace its train block by ``K0 + ββᵀ/(4ρ)``, clip the
  negative eigenvalues of the whole matrix, and classify with its test×train block. It needs the
  test×test similarities and decomposes an (n+m)×(n+m) matrix, and each prediction depends on the
  whole test batch. With ``kernel="precomputed"`` pass ``predict`` the test rows of the full
  matrix, shape (m, n + m): columns ``[:n]`` against the training points, ``[n:]`` among the
  test points. With a callable kernel the estimator computes both blocks itself.

**Intercept.** ``intercept_`` is the offset of the certified primal point: the exactly optimal
``b`` for ``β = dual_coef`` on the proxy kernel K* (:mod:`indkernel.intercept`), so on the
training points ``decision = K*β + b`` is the very primal solution whose value, with the solver's
objective, brackets ``p*`` within the free gap. The reference code instead averages over
"free" support vectors of K0 with a threshold of 1e-3, which depends on the threshold and on
a kernel the solution was not trained on; at an exact optimum on K* both agree wherever free
support vectors exist.
"""

from __future__ import annotations

from functools import cached_property
from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ._validation import check_binary_targets, check_two_samples
from .one_class_problem import OneClassProblem
from .solve import METHODS, solve
from .svm_problem import PerturbSVMProblem, SVMProblem
from .svr_problem import SVRProblem

TEST_KERNELS = ("inductive", "transductive")


class _IndefiniteKernelMachine(BaseEstimator):
    """What the four estimators share: kernel handling, solving, fitted attributes, decisions."""

    _parameter_constraints: dict = {
        "rho": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions({"precomputed"}), callable],
        "method": [StrOptions(set(METHODS))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "absolute": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "test_kernel": [StrOptions(set(TEST_KERNELS))],
        "verbose": ["boolean"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # ----- fitting ---------------------------------------------------------------------
    def _train_similarity(self, X, y=None, *, requires_y: bool = True):
        """Validate the training input; return ``(K0, y)`` and remember what predict needs."""
        if not requires_y:
            X = validate_data(self, X, dtype=np.float64)
        elif y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=not isinstance(self, ClassifierMixin))
        check_two_samples(X.shape[0], type(self).__name__)
        self._check_targets(y)
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"with kernel='precomputed', fit takes the square train×train similarity matrix; "
                                 f"got shape {X.shape}")
            return X, y
        self.X_fit_ = X
        return self._similarity(X, X, "kernel(X_train, X_train)"), y

    def _similarity(self, X, Y, what: str) -> np.ndarray:
        K = check_array(self.kernel(X, Y), dtype=np.float64, ensure_all_finite=True, input_name=what)
        if K.shape != (X.shape[0], Y.shape[0]):
            raise ValueError(f"{what} must return a ({X.shape[0]}, {Y.shape[0]}) similarity matrix; got {K.shape}")
        return K

    def _solve(self, problem) -> None:
        """Solve, and set the fitted attributes from the certified solution."""
        result = solve(problem, self.method, tol=self.tol, absolute=self.absolute, max_iter=self.max_iter,
                       verbose=self.verbose)
        beta = problem.dual_coef(result.alpha)
        certificate = problem.certify(result.alpha)
        self.result_ = result
        self.support_ = np.flatnonzero(beta)
        self.dual_coef_ = beta[self.support_][None, :]
        self.intercept_ = np.array([self._intercept(certificate.intercept)])
        self.n_iter_ = result.iterations
        self.lower_bound_, self.upper_bound_, self.gap_ = result.lower, result.upper, result.gap
        self.status_ = result.status
        self.shape_fit_ = problem.K0.shape
        self._fitted_problem = problem  # for what is formed on demand only: proxy_kernel_, the transductive update

    @cached_property
    def proxy_kernel_(self) -> np.ndarray:
        """The learned kernel ``K*(α)`` of the fit (``eq:kstar``), an (n, n) array formed on first
        request (O(n³); ``fit`` itself never forms it)."""
        check_is_fitted(self)
        return self._fitted_problem.proxy_kernel(self.result_.alpha)

    def _check_targets(self, y) -> None:
        """Reject targets this machine cannot fit (before any work on X)."""

    @staticmethod
    def _intercept(offset: float) -> float:
        return offset

    # ----- decisions -------------------------------------------------------------------
    def _test_similarity(self, X) -> np.ndarray:
        """The test×train block of the kernel the chosen rule classifies with (module docstring)."""
        check_is_fitted(self)
        n = self.shape_fit_[0]
        if self.kernel == "precomputed":
            X = check_array(X, dtype=np.float64, input_name="X")
            width = n if self.test_kernel == "inductive" else n + X.shape[0]
            if X.shape[1] != width:
                what = ("the test×train similarity matrix, shape (n_test, n_train)" if self.test_kernel == "inductive"
                        else "the test rows of the full (train + test) similarity matrix, shape (n_test, n_train + n_test)")
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {width} features "
                                 f"as input: with kernel='precomputed' and test_kernel={self.test_kernel!r}, pass {what}")
            cross, among = X[:, :n], X[:, n:]
        else:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            cross = self._similarity(X, self.X_fit_, "kernel(X_test, X_train)")
            among = self._similarity(X, X, "kernel(X_test, X_test)") if self.test_kernel == "transductive" else None
        if self.test_kernel == "inductive":
            return cross
        return self._transductive_block(cross, among)

    def _transductive_block(self, cross: np.ndarray, among: np.ndarray) -> np.ndarray:
        """``ss:interpretation``: ``[[K0 + ββᵀ/(4ρ), crossᵀ], [cross, among]]_+``, its test×train block."""
        n, beta = self.shape_fit_[0], self._fitted_problem.dual_coef(self.result_.alpha)
        update = self._fitted_problem.K0 + np.outer(beta, beta) / (4 * self._fitted_problem.rho)
        full = np.block([[update, cross.T], [cross, (among + among.T) / 2]])
        values, vectors = scipy.linalg.eigh(full)
        keep = values > 0
        test_rows = vectors[n:, keep] * values[keep]
        return test_rows @ vectors[:n, keep].T

    def _raw_decision(self, X) -> np.ndarray:
        K = self._test_similarity(X)
        return K[:, self.support_] @ self.dual_coef_[0] + self.intercept_[0]


class IndefiniteSVC(ClassifierMixin, _IndefiniteKernelMachine):
    """Binary SVM classification with an indefinite kernel (Luss & d'Aspremont, ``eq:kern_learn``).

    Learns the proxy kernel ``K* = (K0 + (Yα)(Yα)ᵀ/(4ρ))_+`` (``eq:kstar``) jointly with the SVM.

    Parameters
    ----------
    C : float, default 1.0
        Misclassification penalty.
    rho : float, default 1.0
        Penalty on ``‖K - K0‖²_F``; large ρ approaches the SVM on the clipped ``(K0)_+``.
    kernel : "precomputed" or callable, default "precomputed"
        A callable maps ``(X, Y)`` to their similarity matrix (for instance
        ``indkernel.kernels.simpson``).
    class_weight : None, "balanced" or dict
        As :class:`indkernel.SVMProblem` (``"balanced"`` as the authors' reference code).
    method : str, default "apg"
        Any method of :func:`indkernel.solve`.
    tol : float, default 1e-6
        Target certified gap, relative to the α-dependent scale of the objective
        (:attr:`indkernel.Certificate.relative_gap`) unless ``absolute=True``.
    absolute : bool, default False
        Measure ``tol`` against the gap itself.
    max_iter : int, optional
        Iteration cap (the method's default if None); hitting it warns ``ConvergenceWarning``.
    test_kernel : {"inductive", "transductive"}, default "inductive"
        How test points are classified (see :mod:`indkernel.estimators`).
    verbose : bool, default False
        A progress bar while solving.

    Attributes
    ----------
    classes_ : (2,) the labels; ``classes_[1]`` is the positive class.
    support_ : indices of the training points with ``α_i > 0``.
    dual_coef_ : (1, n_SV) array, ``y_i α_i`` on the support.
    intercept_ : (1,) array, the exactly optimal intercept of the certified primal point.
    lower_bound_, upper_bound_, gap_ : certified ``lower <= p* <= upper`` and their difference.
    status_ : str, ``"optimal"`` exactly when the certified gap met ``tol``.
    n_iter_ : int; proxy_kernel_ : (n, n) array, K*; result_ : :class:`indkernel.SolveResult`.

    Examples
    --------
    >>> from indkernel import IndefiniteSVC                         # doctest: +SKIP
    >>> model = IndefiniteSVC(C=10, rho=1).fit(K_train, y_train)     # doctest: +SKIP
    >>> model.gap_, model.score(K_test_train, y_test)               # doctest: +SKIP
    """

    _parameter_constraints = {
        **_IndefiniteKernelMachine._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }
    _problem = SVMProblem

    def __init__(self, C=1.0, rho=1.0, *, kernel="precomputed", class_weight=None, method="apg", tol=1e-6,
                 absolute=False, max_iter=None, test_kernel="inductive", verbose=False):
        self.C = C
        self.rho = rho
        self.kernel = kernel
        self.class_weight = class_weight
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit on the train×train similarity (or features, with a callable kernel) and labels ``y``
        with exactly two classes."""
        self._validate_params()
        K0, y = self._train_similarity(X, y)
        problem = self._problem(K0, y, self.C, self.rho, class_weight=self.class_weight)
        self.classes_ = problem.classes
        self._solve(problem)
        return self

    def _check_targets(self, y) -> None:
        check_binary_targets(y, type(self).__name__)

    def decision_function(self, X) -> np.ndarray:
        """``Σ_i y_iα_i K(x, x_i) + b``; positive means ``classes_[1]``. X as for :meth:`predict`."""
        return self._raw_decision(X)

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarities ``X`` (or features, with a callable kernel)."""
        decision = self.decision_function(X)
        return self.classes_[(decision > 0).astype(int)]


class PerturbSVC(IndefiniteSVC):
    """PerturbSVM (``eq:learn-mercer``): an SVM on a Mercer (PSD) kernel that learns the perturbed
    kernel ``K0 + (Yα)(Yα)ᵀ/(4ρ)`` (``eq:kstar_psd``) with a fourth-order penalty on the support
    vectors; no eigendecomposition per iteration. An indefinite K0 is refused (use
    :class:`IndefiniteSVC`).

    Parameters and attributes as :class:`IndefiniteSVC`. The test rule does not matter here: the
    rank-one update vanishes off the training block and nothing needs clipping, so both rules give
    ``K0(x, X_train) β + b``; the paper's "only the support vectors are perturbed".
    """

    def _problem(self, K0, y, C, rho, *, class_weight):
        return PerturbSVMProblem(K0, y, C, rho, class_weight=class_weight)


class IndefiniteSVR(RegressorMixin, _IndefiniteKernelMachine):
    """ε-insensitive support vector regression with an indefinite kernel (``eq:kern_learn_SVR``).

    Learns ``K* = (K0 + ααᵀ/(4ρ))_+`` (``eq:kstar_SVR``). Parameters as :class:`IndefiniteSVC`
    (no ``class_weight``), plus

    epsilon : float >= 0, default 0.1
        Half-width of the tube within which errors cost nothing.

    Attributes as :class:`IndefiniteSVC`, with ``dual_coef_`` holding α on the support.
    """

    _parameter_constraints = {
        **_IndefiniteKernelMachine._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, C=1.0, rho=1.0, epsilon=0.1, *, kernel="precomputed", method="apg", tol=1e-6,
                 absolute=False, max_iter=None, test_kernel="inductive", verbose=False):
        self.C = C
        self.rho = rho
        self.epsilon = epsilon
        self.kernel = kernel
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.verbose = verbose

    def fit(self, X, y):
        """Fit on the train×train similarity (or features) and real targets ``y``."""
        self._validate_params()
        K0, y = self._train_similarity(X, y)
        self._solve(SVRProblem(K0, y, self.C, self.rho, self.epsilon))
        return self

    def predict(self, X) -> np.ndarray:
        """``Σ_i α_i K(x, x_i) + b`` for the test×train similarities ``X``."""
        return self._raw_decision(X)


class IndefiniteOneClassSVM(OutlierMixin, _IndefiniteKernelMachine):
    """One-class SVM (novelty detection) with an indefinite kernel (``eq:kern_learn_1class_SVM``).

    Learns ``K* = (K0 + ααᵀ/(4ρ))_+`` with ``eᵀα = 1, 0 <= α <= 1/(νn)``. Parameters as
    :class:`IndefiniteSVC` (no ``C``, ``class_weight``), plus

    nu : float in (0, 1], default 0.5
        An upper bound on the fraction of training points outside the estimated support.

    Attributes as :class:`IndefiniteSVC` (``dual_coef_`` holds α on the support), plus
    ``offset_``: the threshold r of the certified primal point; ``decision_function = score_samples - offset_``.
    Like scikit-learn's ``OneClassSVM`` it has no ``score``; ``predict`` gives +1 (inlier) or -1.
    """

    _parameter_constraints = {
        **_IndefiniteKernelMachine._parameter_constraints,
        "nu": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, nu=0.5, rho=1.0, *, kernel="precomputed", method="apg", tol=1e-6, absolute=False,
                 max_iter=None, test_kernel="inductive", verbose=False):
        self.nu = nu
        self.rho = rho
        self.kernel = kernel
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.verbose = verbose

    def fit(self, X, y=None):
        """Fit on the train×train similarity (or features); ``y`` is ignored."""
        self._validate_params()
        K0, _ = self._train_similarity(X, requires_y=False)
        self._solve(OneClassProblem(K0, self.nu, self.rho))
        self.offset_ = -self.intercept_[0]
        return self

    @staticmethod
    def _intercept(offset: float) -> float:
        return -offset  # the certificate's offset is the threshold r: decision = Kα - r

    def decision_function(self, X) -> np.ndarray:
        """``Σ_i α_i K(x, x_i) - r``: positive for inliers."""
        return self._raw_decision(X)

    def score_samples(self, X) -> np.ndarray:
        """``Σ_i α_i K(x, x_i)``, the unshifted score."""
        return self.decision_function(X) + self.offset_

    def predict(self, X) -> np.ndarray:
        """+1 for inliers (``decision_function >= 0``), -1 for outliers."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
