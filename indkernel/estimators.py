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

import warnings
from functools import cached_property
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data
from tqdm.auto import tqdm

from . import multiclass, progress
from ._validation import check_kernel, check_memory, check_two_samples, sample_class_weights
from .one_class_problem import OneClassProblem
from .proxy import (
    EighProxy,
    MercerProxy,
    RankOneProxy,
    blas_thread_count,
    decompose_concurrently,
    make_oracle,
    psd_part,
)
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
        check_memory(X.shape[0], type(self).__name__)
        self.shape_fit_ = (X.shape[0], X.shape[0])
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

    def _solve(self, problems: list, tasks: list | None = None) -> None:
        """Solve each binary problem (one for a regression, one-class or two-class machine), and
        set the fitted attributes from the certified solutions: one row of ``dual_coef_`` and one
        entry of ``intercept_`` per problem; the certified bounds, status and iteration count are
        scalars for one problem and arrays (one per problem, in task order) otherwise."""
        n = self.shape_fit_[0]
        tasks = tasks or [multiclass.BinaryTask(np.arange(n), np.empty(0), type(self).__name__)]
        coefficients, intercepts, results = np.zeros((len(problems), n)), np.zeros(len(problems)), []
        oracles = [oracle for oracle in {id(p.oracle): p.oracle for p in problems}.values() if isinstance(oracle, EighProxy)]
        if len(oracles) == 1:  # the one O(n³) step, shown (and cached) before the iterations
            _decompose(oracles[0], "K0", self.verbose, leave=True)
        elif oracles:  # one per one-vs-one pair
            with tqdm(total=len(oracles), desc="eigendecompositions", disable=not self.verbose, leave=False) as bar:
                decompose_concurrently(oracles, lambda: bar.update(1))
        for k, (problem, task) in enumerate(tqdm(list(zip(problems, tasks, strict=True)), desc="binary problems",
                                                 disable=not self.verbose or len(problems) == 1)):
            result = self._solve_one(problem, task.name if len(problems) > 1 else None)
            coefficients[k, task.rows] = problem.dual_coef(result.alpha)
            intercepts[k] = self._intercept(problem.certify(result.alpha).intercept)
            results.append(result)
        self.support_ = np.flatnonzero(np.any(coefficients != 0, axis=0))
        self.dual_coef_ = coefficients[:, self.support_]
        self.intercept_ = intercepts

        def each(name: str):
            values = np.array([getattr(r, name) for r in results])
            return values[0].item() if len(results) == 1 else values

        self.result_ = results[0] if len(results) == 1 else results
        self.n_iter_ = each("iterations")
        self.lower_bound_, self.upper_bound_, self.gap_ = each("lower"), each("upper"), each("gap")
        self.status_ = each("status")
        self._fitted_problems, self._task_rows = problems, [task.rows for task in tasks]

    def _solve_one(self, problem, name: str | None):
        """solve, its ConvergenceWarning naming the binary problem when there are several."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = solve(problem, self.method, tol=self.tol, absolute=self.absolute, max_iter=self.max_iter,
                           verbose=self.verbose and name is None)
        for warning in caught:
            message = str(warning.message)
            if name is not None and issubclass(warning.category, ConvergenceWarning):
                message = f"{name}: {message}"
            warnings.warn(message, warning.category, stacklevel=4)
        return result

    @cached_property
    def proxy_kernel_(self) -> np.ndarray | list:
        """The learned kernel ``K*(α)`` of the fit (``eq:kstar``), an (n, n) array formed on first
        request (O(n³); ``fit`` itself never forms it). With several binary problems, a list of
        their kernels (on each problem's rows), k n² numbers."""
        check_is_fitted(self)
        kernels = [problem.proxy_kernel(result.alpha) for problem, result in zip(self._fitted_problems, self._results, strict=True)]
        return kernels[0] if len(kernels) == 1 else kernels

    @property
    def _results(self) -> list:
        return self.result_ if isinstance(self.result_, list) else [self.result_]

    def _check_targets(self, y) -> None:
        """Reject targets this machine cannot fit (before any work on X)."""

    @staticmethod
    def _intercept(offset: float) -> float:
        return offset

    # ----- decisions -------------------------------------------------------------------
    def _decisions(self, X) -> np.ndarray:
        """(m, number of binary problems): each problem's decision ``k β + b`` at the test points,
        with the test×train similarities k of the chosen rule (module docstring)."""
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
            return cross[:, self.support_] @ self.dual_coef_.T + self.intercept_
        columns = []
        for problem, result, oracle, intercept in zip(self._fitted_problems, self._results,
                                                      self._transductive_oracles(cross, among), self.intercept_, strict=True):
            beta = problem.dual_coef(result.alpha)
            columns.append(transductive_decision(oracle, beta, problem.rho) + intercept)
        return np.column_stack(columns)

    def _transductive_oracles(self, cross: np.ndarray, among: np.ndarray):
        """Each fitted problem's oracle on its rows and the test points, decomposed: the problems on
        all training rows share one; one-vs-one pairs each have their own, made and decomposed as
        many at a time as BLAS has threads (:func:`indkernel.proxy.decompose_concurrently`), so
        only that many (pair + test)-sized matrices are alive at once."""
        problems, rows = self._fitted_problems, self._task_rows
        if rows[0].size == self.shape_fit_[0]:
            oracle = RankOneProxy(full_matrix(problems[0].K0, cross, among))
            _decompose(oracle, "the train + test similarities", self.verbose, leave=True)
            yield from [oracle] * len(problems)
            return
        width = blas_thread_count()
        with tqdm(total=len(problems), desc="eigendecompositions of the train + test similarities",
                  disable=not self.verbose, leave=False) as bar:
            for start in range(0, len(problems), width):
                oracles = [RankOneProxy(full_matrix(problem.K0, cross[:, r], among))
                           for problem, r in zip(problems[start:start + width], rows[start:start + width], strict=True)]
                decompose_concurrently(oracles, lambda: bar.update(1))
                yield from oracles

    def _raw_decision(self, X) -> np.ndarray:
        return self._decisions(X)[:, 0]


def _decompose(oracle: EighProxy, what: str, verbose: bool, leave: bool) -> None:
    """Compute (and cache) the oracle's one eigendecomposition, shown as a progress line."""
    size = len(oracle.K0)
    with progress.step(f"eigendecomposition of {what} ({size}×{size})", verbose, leave=leave):
        oracle.spectrum  # noqa: B018


def full_matrix(K0: np.ndarray, cross: np.ndarray, among: np.ndarray) -> np.ndarray:
    """The (train + test) similarity matrix ``[[K0, crossᵀ], [cross, among]]`` (``among`` symmetrized)."""
    return np.block([[K0, cross.T], [cross, (among + among.T) / 2]])


def transductive_decision(oracle: RankOneProxy, beta: np.ndarray, rho: float) -> np.ndarray:
    """``ss:interpretation``: the test×train block of ``[[K0 + ββᵀ/(4ρ), crossᵀ], [cross, among]]_+``
    times β. That matrix is the full one, F (the ``oracle``'s), plus ``σuuᵀ`` with ``u = [β; 0]``, so
    the product is ``(K*u)`` of the rank-one update of F's eigendecomposition, test rows: O((n+m)²)
    once F is decomposed, and problems on the same training rows share that decomposition."""
    u = np.concatenate([beta, np.zeros(len(oracle.K0) - len(beta))])
    return oracle(u, rho).Ku[len(beta):]


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
    method : str, default "newton"
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
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
        With more than two classes: one-vs-rest (k problems sharing one eigendecomposition of
        K0; ``decision_function`` is (m, k)) or one-vs-one (a problem per pair on its rows,
        prediction by votes; (m, k(k-1)/2) as scikit-learn's SVC). Unlike SVC, where this only
        reshapes, here it chooses the training strategy too (:mod:`indkernel.multiclass`).
        One-vs-one fits faster (its problems are smaller; ``figures/multiclass_profile.py``
        times both); its transductive rule decomposes one matrix per pair.
    verbose : bool, default False
        Progress bars while solving (one per binary problem for two classes, one over the
        problems for more).

    Attributes
    ----------
    classes_ : (k,) the labels; for two, ``classes_[1]`` is the positive class.
    support_ : indices of the training points with ``α_i > 0`` in some binary problem.
    dual_coef_ : (n_problems, n_SV) array, ``y_i α_i`` of each binary problem (0 off its support
        or rows); n_problems is 1 for two classes, k for one-vs-rest, k(k-1)/2 for one-vs-one.
    intercept_ : (n_problems,) array, the exactly optimal intercept of each certified primal point.
    lower_bound_, upper_bound_, gap_ : certified ``lower <= p* <= upper`` and their difference
        (floats for two classes, else (n_problems,) arrays in the order of the problems).
    status_ : str (or array), ``"optimal"`` exactly when the certified gap met ``tol``; a problem
        that did not warns ``ConvergenceWarning`` naming its classes.
    n_iter_ : int (or array), the iterations of each problem.
    proxy_kernel_ : (n, n) array K* (a list, one per problem), formed on first access.
    result_ : :class:`indkernel.SolveResult` (a list, one per problem).

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
        "decision_function_shape": [StrOptions(set(multiclass.SHAPES))],
    }

    def __init__(self, C=1.0, rho=1.0, *, kernel="precomputed", class_weight=None, method="newton", tol=1e-6,
                 absolute=False, max_iter=None, test_kernel="inductive", decision_function_shape="ovr",
                 verbose=False):
        self.C = C
        self.rho = rho
        self.kernel = kernel
        self.class_weight = class_weight
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.decision_function_shape = decision_function_shape
        self.verbose = verbose

    def fit(self, X, y):
        """Fit on the train×train similarity (or features, with a callable kernel) and labels ``y``
        (two classes or more: one binary problem per class, or per pair with
        ``decision_function_shape="ovo"``, see :mod:`indkernel.multiclass`)."""
        self._validate_params()
        K0, y = self._train_similarity(X, y)
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes; y has one: {self.classes_.tolist()}")
        tasks = multiclass.binary_tasks(y, self.classes_, self.decision_function_shape)
        C, class_weight = self.C, self.class_weight
        if len(tasks) > 1 and isinstance(class_weight, dict):  # per sample: the binary labels are not the classes
            C, class_weight = self.C * sample_class_weights(class_weight, index, self.classes_), None
        shared = None
        if len(tasks) > 1 and self.decision_function_shape == "ovr":  # one K0 and one oracle for every problem
            K0 = check_kernel(K0)
            K0.setflags(write=False)
            shared = self._shared_oracle(K0)
        problems = [self._problem(K0 if task.rows.size == len(y) else K0[np.ix_(task.rows, task.rows)], task.labels,
                                  C if np.ndim(C) == 0 else C[task.rows], class_weight, shared) for task in tasks]
        self._solve(problems, tasks)
        return self

    def _problem(self, K0, y, C, class_weight, oracle):
        """The binary problem of one task; ``oracle``: the one shared by every task on all of K0, or None."""
        return SVMProblem(K0, y, C, self.rho, class_weight=class_weight,
                          oracle="rank-one" if oracle is None else oracle)

    def _shared_oracle(self, K0):
        """The oracle of K0 that every one-vs-rest problem uses (its eigendecomposition is computed
        once, on first use)."""
        return make_oracle("rank-one", K0)

    def _check_targets(self, y) -> None:
        check_classification_targets(y)

    def decision_function(self, X) -> np.ndarray:
        """Two classes: ``Σ_i y_iα_i K(x, x_i) + b``, positive means ``classes_[1]``. More: (m, k)
        decisions of the one-vs-rest problems, or (m, k(k-1)/2) of the pairs with
        ``decision_function_shape="ovo"`` (as scikit-learn's SVC). X as for :meth:`predict`."""
        return self._decide(X)[0]

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarities ``X`` (or features, with a callable kernel)."""
        return self._decide(X)[1]

    def _decide(self, X) -> tuple[np.ndarray, np.ndarray]:
        return multiclass.decide(self._decisions(X), self.classes_, self.decision_function_shape)


class PerturbSVC(IndefiniteSVC):
    """PerturbSVM (``eq:learn-mercer``): an SVM on a Mercer (PSD) kernel that learns the perturbed
    kernel ``K0 + (Yα)(Yα)ᵀ/(4ρ)`` (``eq:kstar_psd``) with a fourth-order penalty on the support
    vectors; no eigendecomposition per iteration. An indefinite K0 is refused (use
    :class:`IndefiniteSVC`).

    Parameters and attributes as :class:`IndefiniteSVC`. The test rule does not matter here: the
    rank-one update vanishes off the training block and nothing needs clipping, so both rules give
    ``K0(x, X_train) β + b``; the paper's "only the support vectors are perturbed".
    """

    def _problem(self, K0, y, C, class_weight, oracle):
        return PerturbSVMProblem(K0, y, C, self.rho, class_weight=class_weight, oracle=oracle)

    def _shared_oracle(self, K0):
        """K0 checked (and clipped) once for every one-vs-rest problem (:func:`indkernel.proxy.psd_part`)."""
        return MercerProxy(*psd_part(K0))


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

    def __init__(self, C=1.0, rho=1.0, epsilon=0.1, *, kernel="precomputed", method="newton", tol=1e-6,
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
        self._solve([SVRProblem(K0, y, self.C, self.rho, self.epsilon)])
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

    def __init__(self, nu=0.5, rho=1.0, *, kernel="precomputed", method="newton", tol=1e-6, absolute=False,
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
        self._solve([OneClassProblem(K0, self.nu, self.rho)])
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
