"""scikit-learn estimators over the problem types: fit on an indefinite similarity, predict, certify.

Each estimator takes ``kernel="precomputed"`` (``fit(K_train, y)`` with the n×n train×train
similarity matrix, ``predict(K_test)`` with the m×n test×train one) or a callable
``kernel(X, Y) -> similarity matrix`` on raw features. ``fit`` solves the problem with any
method of :func:`indkernel.solve` and keeps the certified bounds (``lower_bound_``,
``upper_bound_``, ``gap_``) beside scikit-learn's fitted attributes.

**Test rules.** The proxy kernel K* exists only on the training points, so a new point needs a
rule (``test_kernel``):

- ``"consistent"`` (the default): the row of K* that the learned kernel gives a point without a
  dual variable. With ``A = K0 + ββᵀ/(4ρ) = Q diag(λ) Qᵀ`` at the solution and the projector
  ``P = Q diag(λ⁺/λ) Qᵀ`` onto its positive eigenspace, ``K* = AP`` (``eq:kstar``), so a training
  row of K* is the row of A times P; a new point's row of A is its raw similarities ``k0(x)``,
  and its decision ``k0(x)ᵀw + b`` with ``w = Pβ`` (``test_coef_``), formed once at fit from the
  rank-one oracle's eigenvectors (:meth:`indkernel.core.problem.IndefiniteProblem.consistent_coef`).
  O(n) per point, each point on its own; ``w`` is dense, so every training point is in the
  expansion. On the training rows it differs from the fitted decisions ``K*β`` by the rank-one
  term ``(βᵀPβ)β/(4ρ)`` alone.
- ``"raw"``: ``k0(x)ᵀβ + b``, the raw similarities to the support vectors, which the learned
  kernel never saw (the rule of the authors' code; ``"inductive"`` is its deprecated name).
- ``"transductive"``: the paper's heuristic (section ``ss:interpretation``): form the full
  (train + test) similarity matrix, replace its train block by ``K0 + ββᵀ/(4ρ)``, clip the
  negative eigenvalues of the whole matrix, and classify with its test×train block. It needs the
  test×test similarities and decomposes an (n+m)×(n+m) matrix, and each prediction depends on the
  whole test batch. With ``kernel="precomputed"`` pass ``predict`` the test rows of the full
  matrix, shape (m, n + m): columns ``[:n]`` against the training points, ``[n:]`` among the
  test points. With a callable kernel the estimator computes both blocks itself.

The default was chosen by held-out accuracy over the paper's data sets (``indkernel rules``).

**Intercept.** ``intercept_`` is the offset of the certified primal point: the exactly optimal
``b`` for ``β = dual_coef`` on the proxy kernel K* (:mod:`indkernel.core.intercept`), so on the
training points ``decision = K*β + b`` is the very primal solution whose value, with the solver's
objective, brackets ``p*`` within the free gap. The reference code instead averages over
"free" support vectors of K0 with a threshold of 1e-3, which depends on the threshold and on
a kernel the solution was not trained on; at an exact optimum on K* both agree wherever free
support vectors exist.

**What a fitted model keeps.** What prediction needs: ``support_``, ``dual_coef_``,
``test_coef_``, ``intercept_`` (and ``X_fit_`` with a callable kernel), the results and
bounds. The training similarity is referenced in memory for ``proxy_kernel_`` and pickled only
with ``test_kernel="transductive"``, whose predictions need it.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_array, check_is_fitted, validate_data
from tqdm.auto import tqdm

from .._validation import check_kernel, check_memory, check_two_samples, sample_class_weights
from ..core.one_class_problem import OneClassProblem
from ..core.proxy import (
    EighProxy,
    MercerProxy,
    RankOneProxy,
    decompose_concurrently,
    make_oracle,
    psd_part,
)
from ..core.svm_problem import LOSSES, PerturbSVMProblem, SVMProblem
from ..core.svr_problem import SVRProblem
from ..core.threads import blas_thread_count
from ..solvers.registry import METHODS, method_options, solve
from . import multiclass, progress

TEST_KERNELS = ("consistent", "raw", "transductive")


class _IndefiniteKernelMachine(BaseEstimator):
    """What the four estimators share: kernel handling, solving, fitted attributes, decisions."""

    _proxy_kernels: list | None = None  # proxy_kernel_'s cache, reset by every fit

    _parameter_constraints: dict = {
        "rho": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],  # inf: K* = (K0)_+
        "kernel": [StrOptions({"precomputed"}), callable],
        "method": [StrOptions(set(METHODS))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "absolute": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1}), None],
        "test_kernel": [StrOptions({*TEST_KERNELS, "inductive"}, deprecated={"inductive"})],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def __getstate__(self) -> dict:
        """Pickle what prediction needs: the training similarity only for the transductive rule."""
        state = dict(super().__getstate__())  # a copy: the live model keeps its attributes
        if self._rule() != "transductive":
            state.pop("_K0", None)
        state.pop("_proxy_kernels", None)
        state.pop("_warm_state", None)
        return state

    def _rule(self) -> str:
        return "raw" if self.test_kernel == "inductive" else self.test_kernel

    # ----- fitting ---------------------------------------------------------------------
    def _train_similarity(self, X, y=None, sample_weight=None, *, requires_y: bool = True):
        """Validate the training input; return ``(K0, y, weights)`` (weights: ``sample_weight``
        as an (n,) array, ones by default) and remember what predict needs."""
        if self.test_kernel == "inductive":
            warnings.warn("test_kernel='inductive' is renamed 'raw' (the raw similarity rows); the default is now "
                          "'consistent'", FutureWarning, stacklevel=3)
        if not requires_y:
            X = validate_data(self, X, dtype=np.float64)
        elif y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=not isinstance(self, ClassifierMixin))
        check_two_samples(X.shape[0], type(self).__name__)
        self._check_targets(y)
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if np.count_nonzero(weights) < 2:
            raise ValueError(f"sample_weight must give at least two samples a positive weight (a weight of 0 leaves "
                             f"the sample out); got {np.count_nonzero(weights)}")
        check_memory(X.shape[0], f"{type(self).__name__} on n={X.shape[0]} training points")
        self.shape_fit_ = (X.shape[0], X.shape[0])
        self._fit_rho, self._proxy_kernels = self.rho, None
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"with kernel='precomputed', fit takes the square train×train similarity matrix; "
                                 f"got shape {X.shape}")
            self._K0 = _owned(X)
            return self._K0, y, weights
        self.X_fit_ = _owned(X)
        return self._similarity(self.X_fit_, self.X_fit_, "kernel(X_train, X_train)"), y, weights

    def _similarity(self, X, Y, what: str) -> np.ndarray:
        K = check_array(self.kernel(X, Y), dtype=np.float64, ensure_all_finite=True, input_name=what)
        if K.shape != (X.shape[0], Y.shape[0]):
            raise ValueError(f"{what} must return a ({X.shape[0]}, {Y.shape[0]}) similarity matrix; got {K.shape}")
        return K

    def _training_similarity(self) -> np.ndarray:
        """K0 of the fit: kept (precomputed) or computed again from ``X_fit_`` (callable)."""
        if self.kernel != "precomputed":
            return self._similarity(self.X_fit_, self.X_fit_, "kernel(X_train, X_train)")
        if getattr(self, "_K0", None) is None:
            raise AttributeError(f"this {type(self).__name__} was unpickled without its training similarity (a model "
                                 "keeps it only with test_kernel='transductive'); refit it to form the proxy kernel or "
                                 "to use the transductive rule")
        return self._K0

    def _solve(self, problems: list, tasks: list[multiclass.BinaryTask]) -> None:
        """Solve each binary problem (one for a regression, one-class or two-class machine), and
        set the fitted attributes from the certified solutions: one row of ``dual_coef_``,
        ``test_coef_`` and one entry of ``intercept_`` per problem; the certified bounds, status
        and iteration count are scalars for one problem and arrays (one per problem, in task
        order) otherwise."""
        n = self.shape_fit_[0]
        coefficients, test_coef = np.zeros((len(problems), n)), np.zeros((len(problems), n))
        intercepts, results = np.zeros(len(problems)), []
        oracles = [oracle for oracle in {id(p.oracle): p.oracle for p in problems}.values() if isinstance(oracle, EighProxy)]
        if len(oracles) == 1:  # the one O(n³) step, shown (and cached) before the iterations
            _decompose(oracles[0], "K0", bool(self.verbose), leave=True)
        elif oracles:  # one per one-vs-one pair
            with tqdm(total=len(oracles), desc="eigendecompositions", disable=not self.verbose, leave=False) as bar:
                decompose_concurrently(oracles, lambda: bar.update(1))
        starts = self._warm_starts(problems, tasks)
        for k, (problem, task) in enumerate(tqdm(list(zip(problems, tasks, strict=True)), desc="binary problems",
                                                 disable=not self.verbose or len(problems) == 1)):
            result = self._solve_one(problem, task.name if len(problems) > 1 else None, starts[k])
            coefficients[k, task.rows] = problem.dual_coef(result.alpha)
            intercepts[k] = self._intercept(result.certificate.alpha_intercept)  # the offset for these coefficients
            test_coef[k, task.rows] = problem.consistent_coef(result.alpha)
            results.append(result)
        self.support_ = np.flatnonzero(np.any(coefficients != 0, axis=0))
        self.dual_coef_ = coefficients[:, self.support_]
        self.test_coef_ = test_coef
        self.intercept_ = intercepts

        def each(name: str):
            values = np.array([getattr(r, name) for r in results])
            return values[0].item() if len(results) == 1 else values

        self.result_ = results[0] if len(results) == 1 else results
        self.n_iter_ = each("iterations")
        self.lower_bound_, self.upper_bound_, self.gap_ = each("lower"), each("upper"), each("gap")
        self.status_ = each("status")
        self._task_rows = [task.rows for task in tasks]
        self._warm_state = [(task.rows, problem.feasible.reach, result.alpha)
                            for problem, task, result in zip(problems, tasks, results, strict=True)]

    def _warm_starts(self, problems: list, tasks: list[multiclass.BinaryTask]) -> list:
        """With ``warm_start`` and a previous fit of the same problems (the same rows each, for a
        method that takes a start), each problem's previous α scaled into its new box (each
        coordinate by the ratio of the upper bounds: C, or 1/(νn)) and projected onto its
        feasible set; else None (the method's own start, C/2)."""
        previous = getattr(self, "_warm_state", None) if self.warm_start else None
        if previous is None or len(previous) != len(problems) or "alpha0" not in method_options(self.method):
            return [None] * len(problems)
        return [problem.rescaled(alpha, upper) if np.array_equal(rows, task.rows) else None
                for problem, task, (rows, upper, alpha) in zip(problems, tasks, previous, strict=True)]

    def _solve_one(self, problem, name: str | None, start=None):
        """solve (from ``start`` if given), its ConvergenceWarning naming the binary problem when
        there are several (no warnings filter is touched: fits may run in several threads)."""
        options = {} if start is None else {"alpha0": start}
        return solve(problem, self.method, tol=self.tol, absolute=self.absolute, max_iter=self.max_iter,
                     verbose=bool(self.verbose) and name is None, label=name, **options)

    @property
    def proxy_kernel_(self) -> np.ndarray | list:
        """The learned kernel ``K*`` of the current fit (``eq:kstar``), an (n, n) array formed on
        first request by a dense eigendecomposition (O(n³); ``fit`` itself never forms it). With
        several binary problems, a list of their kernels (on each problem's rows)."""
        check_is_fitted(self)
        kernels = self._proxy_kernels
        if kernels is None:
            K0, betas = self._training_similarity(), self._betas()
            kernels = [self._kernel_oracle(_rows_of(K0, rows))(beta[rows], self._fit_rho).kernel()
                       for rows, beta in zip(self._task_rows, betas, strict=True)]
            self._proxy_kernels = kernels
        return kernels[0] if len(kernels) == 1 else kernels

    def _kernel_oracle(self, K0: np.ndarray):
        """A dense oracle of the learned kernel on one problem's rows (for ``proxy_kernel_``)."""
        return EighProxy(K0)

    def _betas(self) -> np.ndarray:
        """(n_problems, n): each problem's β on all training points (0 off its support)."""
        betas = np.zeros((len(self.dual_coef_), self.shape_fit_[0]))
        betas[:, self.support_] = self.dual_coef_
        return betas

    def _check_targets(self, y) -> None:
        """Reject targets this machine cannot fit (before any work on X)."""

    @staticmethod
    def _intercept(offset: float) -> float:
        return offset

    # ----- decisions -------------------------------------------------------------------
    def _decisions(self, X) -> np.ndarray:
        """(m, number of binary problems): each problem's decision at the test points, by the
        rule ``test_kernel`` (module docstring)."""
        check_is_fitted(self)
        rule, n = self._rule(), self.shape_fit_[0]
        columns = self.support_ if rule == "raw" else slice(None)
        if self.kernel == "precomputed":
            X = check_array(X, dtype=np.float64, input_name="X")
            width = n + X.shape[0] if rule == "transductive" else n
            if X.shape[1] != width:
                what = ("the test rows of the full (train + test) similarity matrix, shape (n_test, n_train + n_test)"
                        if rule == "transductive" else "the test×train similarity matrix, shape (n_test, n_train)")
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {width} features "
                                 f"as input: with kernel='precomputed' and test_kernel={self.test_kernel!r}, pass {what}")
            cross, among = X[:, :n][:, columns], X[:, n:]
        else:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            cross = self._similarity(X, self.X_fit_[columns], "kernel(X_test, X_train)")
            among = self._similarity(X, X, "kernel(X_test, X_test)") if rule == "transductive" else X[:, :0]
        if rule == "raw":
            return cross @ self.dual_coef_.T + self.intercept_
        if rule == "consistent":
            return cross @ self.test_coef_.T + self.intercept_
        return self._transductive_decisions(cross, among)

    def _transductive_decisions(self, cross: np.ndarray, among: np.ndarray) -> np.ndarray:
        """The transductive rule's decisions (module docstring), from the test×train and test×test blocks."""
        n, m = self.shape_fit_[0], len(among)
        check_memory(n + m, f"the transductive rule on {n} training and {m} test points", 3,
                     "predict in smaller batches, or use test_kernel='consistent'")
        if m > 1:  # symmetric as K0 must be: an asymmetric block would be averaged silently
            among = check_kernel(among, name="the test×test block X[:, n_train:]")
        K0, decisions = self._training_similarity(), []
        for rows, oracle, beta, intercept in zip(self._task_rows, self._transductive_oracles(K0, cross, among),
                                                 self._betas(), self.intercept_, strict=True):
            decisions.append(transductive_decision(oracle, beta[rows], self._fit_rho) + intercept)
        return np.column_stack(decisions)

    def _transductive_oracles(self, K0: np.ndarray, cross: np.ndarray, among: np.ndarray):
        """Each fitted problem's oracle on its rows and the test points, decomposed: the problems on
        all training rows share one; one-vs-one pairs each have their own, made and decomposed as
        many at a time as BLAS has threads (:func:`indkernel.core.proxy.decompose_concurrently`), so
        only that many (pair + test)-sized matrices are alive at once."""
        rows = self._task_rows
        if rows[0].size == self.shape_fit_[0]:
            oracle = RankOneProxy(full_matrix(K0, cross, among))
            _decompose(oracle, "the train + test similarities", bool(self.verbose), leave=True)
            yield from [oracle] * len(rows)
            return
        width = blas_thread_count()
        with tqdm(total=len(rows), desc="eigendecompositions of the train + test similarities",
                  disable=not self.verbose, leave=False) as bar:
            for start in range(0, len(rows), width):
                oracles = [RankOneProxy(full_matrix(_rows_of(K0, r), cross[:, r], among)) for r in rows[start:start + width]]
                decompose_concurrently(oracles, lambda: bar.update(1))
                yield from oracles

    def _single_decision(self, X) -> np.ndarray:
        return self._decisions(X)[:, 0]


def _owned(array: np.ndarray) -> np.ndarray:
    """A read-only copy the fitted model owns: overwriting the caller's buffer after ``fit`` must
    not change the model's predictions."""
    array = np.array(array, dtype=np.float64, copy=True)
    array.setflags(write=False)
    return array


def _rows_of(K0: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The block of K0 on ``rows`` (K0 itself when they are all of its rows)."""
    return K0 if rows.size == len(K0) else K0[np.ix_(rows, rows)]


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
    """SVM classification with an indefinite kernel (Luss & d'Aspremont, ``eq:kern_learn``), with
    the contract of scikit-learn's ``SVC``.

    Learns the proxy kernel ``K* = (K0 + (Yα)(Yα)ᵀ/(4ρ))_+`` (``eq:kstar``) jointly with the SVM.

    Parameters
    ----------
    C : float, default 1.0
        Misclassification penalty (per sample: times ``sample_weight`` and the class weight).
    rho : float, default 1.0
        Penalty on ``‖K - K0‖²_F``; large ρ approaches the SVM on the clipped ``(K0)_+``.
    kernel : "precomputed" or callable, default "precomputed"
        A callable maps ``(X, Y)`` to their similarity matrix (for instance
        ``indkernel.kernels.simpson``).
    class_weight : None, "balanced" or dict
        As :class:`indkernel.SVMProblem` (``"balanced"`` as the authors' reference code).
    loss : {"hinge", "squared_hinge"}, default "hinge"
        As ``LinearSVC``: the paper's SVM, or the squared-hinge (L2) SVM, whose primal charges
        ``C_i max(0, 1 - y_i f(x_i))²`` (its dual set is unbounded: method "accpm" refuses it).
    method : str, default "newton"
        Any method of :func:`indkernel.solve`.
    tol : float, default 1e-6
        Target certified gap, relative to the α-dependent scale of the objective
        (:attr:`indkernel.Certificate.relative_gap`) unless ``absolute=True``.
    absolute : bool, default False
        Measure ``tol`` against the gap itself.
    max_iter : int, optional
        Iteration cap (the method's default if None, no limit if -1, as ``SVC``); hitting it
        warns ``ConvergenceWarning``.
    test_kernel : {"consistent", "raw", "transductive"}, default "consistent"
        How new points are scored (see :mod:`indkernel.estimators`).
    multi_class : {"ovo", "ovr"}, default "ovo"
        The training strategy with more than two classes (:mod:`indkernel.estimators.multiclass`):
        one-vs-one as ``SVC`` (a problem per pair on its rows, prediction by votes), or
        one-vs-rest (k problems on all rows sharing one eigendecomposition of K0).
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
        The shape of ``decision_function`` only, as ``SVC``: one-vs-one training gives
        (m, k(k-1)/2) pairwise decisions with ``"ovo"`` or (m, k) votes with confidences with
        ``"ovr"``; one-vs-rest training gives (m, k) margins (``"ovr"`` only).
    break_ties : bool, default False
        As ``SVC``: with one-vs-one and ``decision_function_shape="ovr"``, predict the largest
        ``decision_function`` (votes, then confidences) instead of libsvm's first most-voted class.
    verbose : int or bool, default 0
        Progress bars while solving (one per binary problem for two classes, one over the
        problems for more).
    warm_start : bool, default False
        Start each binary problem of the next ``fit`` from this fit's certified solution, scaled
        into the new box and projected onto the feasible set, as scikit-learn's ``warm_start``:
        for a path of C and ρ on the same training data (``figures/warm_starts.py``: 11–22 %
        fewer Newton iterations along the tables' grids). Methods "newton", "apg" and "pg" only
        (the others ignore it); the result is certified either way.

    Attributes
    ----------
    classes_ : (k,) the labels; for two, ``classes_[1]`` is the positive class.
    support_ : indices of the training points with ``α_i > 0`` in some binary problem.
    dual_coef_ : (n_problems, n_SV) array, ``y_i α_i`` of each binary problem (0 off its support
        or rows); n_problems is 1 for two classes, k(k-1)/2 for one-vs-one, k for one-vs-rest.
    test_coef_ : (n_problems, n) array, ``w = Pβ`` of each problem: the consistent rule scores
        ``K0(x, X_train) w + b``.
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
        "loss": [StrOptions(set(LOSSES))],
        "multi_class": [StrOptions(set(multiclass.STRATEGIES))],
        "decision_function_shape": [StrOptions(set(multiclass.SHAPES))],
        "break_ties": ["boolean"],
    }

    def __init__(self, C=1.0, *, rho=1.0, kernel="precomputed", class_weight=None, loss="hinge", method="newton",
                 tol=1e-6, absolute=False, max_iter=None, test_kernel="consistent", multi_class="ovo",
                 decision_function_shape="ovr", break_ties=False, verbose=0, warm_start=False):
        self.C = C
        self.rho = rho
        self.kernel = kernel
        self.class_weight = class_weight
        self.loss = loss
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.multi_class = multi_class
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.verbose = verbose
        self.warm_start = warm_start

    def fit(self, X, y, sample_weight=None):
        """Fit on the train×train similarity (or features, with a callable kernel) and labels ``y``
        (two classes or more: see ``multi_class``); ``sample_weight`` multiplies C per sample, as
        ``SVC`` (a sample of weight 0 is left out of the problems)."""
        self._validate_params()
        K0, y, weights = self._train_similarity(X, y, sample_weight)
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes; y has one: {self.classes_.tolist()}")
        rows = np.flatnonzero(weights > 0)
        if np.unique(index[rows]).size < len(self.classes_):
            raise ValueError("sample_weight must give every class a sample of positive weight; class(es) "
                             f"{sorted(set(self.classes_.tolist()) - set(y[rows].tolist()))} have none")
        multiclass.check_contract(self.multi_class, self.decision_function_shape, self.break_ties,
                                  len(self.classes_), type(self).__name__)
        tasks = multiclass.binary_tasks(y, self.classes_, self.multi_class, rows)
        C, class_weight = self.C * weights, self.class_weight
        if len(tasks) > 1 and isinstance(class_weight, dict):  # per sample: the binary labels are not the classes
            C, class_weight = C * sample_class_weights(class_weight, index, self.classes_), None
        K_rows, shared = _rows_of(K0, rows), None
        if len(tasks) > 1 and self.multi_class == "ovr":  # one K0 and one oracle for every problem
            K_rows = check_kernel(K_rows)
            K_rows.setflags(write=False)
            shared = self._shared_oracle(K_rows)
        problems = [self._problem(K_rows if task.rows.size == rows.size else _rows_of(K0, task.rows), task.labels,
                                  C[task.rows], class_weight, shared) for task in tasks]
        self._solve(problems, tasks)
        return self

    def _problem(self, K0, y, C, class_weight, oracle):
        """The binary problem of one task; ``oracle``: the one shared by every task on all of K0, or None."""
        return SVMProblem(K0, y, C, self.rho, class_weight=class_weight, loss=self.loss,
                          oracle="rank-one" if oracle is None else oracle)

    def _shared_oracle(self, K0):
        """The oracle of K0 that every one-vs-rest problem uses (its eigendecomposition is computed
        once, on first use)."""
        return make_oracle("rank-one", K0)

    def _check_targets(self, y) -> None:
        check_classification_targets(y)

    def decision_function(self, X) -> np.ndarray:
        """Two classes: ``k(x)ᵀw + b`` of the test rule, positive means ``classes_[1]``. More: as
        ``SVC`` (``decision_function_shape``), or the (m, k) margins of one-vs-rest training. X
        as for :meth:`predict`."""
        return self._decide(X)[0]

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarities ``X`` (or features, with a callable kernel)."""
        return self._decide(X)[1]

    def _decide(self, X) -> tuple[np.ndarray, np.ndarray]:
        return multiclass.decide(self._decisions(X), self.classes_, self.multi_class, self.decision_function_shape,
                                 self.break_ties)


class PerturbSVC(IndefiniteSVC):
    """PerturbSVM (``eq:learn-mercer``): an SVM on a Mercer (PSD) kernel that learns the perturbed
    kernel ``K0 + (Yα)(Yα)ᵀ/(4ρ)`` (``eq:kstar_psd``) with a fourth-order penalty on the support
    vectors; no eigendecomposition per iteration. An indefinite K0 is refused (use
    :class:`IndefiniteSVC`).

    Parameters and attributes as :class:`IndefiniteSVC`. The raw and consistent rules coincide
    here (``test_coef_ = dual_coef``): the rank-one update vanishes off the training block and
    nothing needs clipping, so both give ``K0(x, X_train) β + b``; the paper's "only the support
    vectors are perturbed".
    """

    def _problem(self, K0, y, C, class_weight, oracle):
        return PerturbSVMProblem(K0, y, C, self.rho, class_weight=class_weight, loss=self.loss, oracle=oracle)

    def _shared_oracle(self, K0):
        """K0 checked (and clipped) once for every one-vs-rest problem (:func:`indkernel.core.proxy.psd_part`)."""
        return MercerProxy(*psd_part(K0))

    def _kernel_oracle(self, K0: np.ndarray):
        return MercerProxy(*psd_part(K0))


class IndefiniteSVR(RegressorMixin, _IndefiniteKernelMachine):
    """ε-insensitive support vector regression with an indefinite kernel (``eq:kern_learn_SVR``).

    Learns ``K* = (K0 + ααᵀ/(4ρ))_+`` (``eq:kstar_SVR``). Parameters as :class:`IndefiniteSVC`
    (no ``class_weight`` or multiclass options), plus

    epsilon : float >= 0, default 0.1
        Half-width of the tube within which errors cost nothing.

    Attributes as :class:`IndefiniteSVC`, with ``dual_coef_`` holding α on the support and
    ``test_coef_`` its consistent rule's ``w = Pα``.
    """

    _parameter_constraints = {
        **_IndefiniteKernelMachine._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, C=1.0, *, rho=1.0, epsilon=0.1, kernel="precomputed", method="newton", tol=1e-6,
                 absolute=False, max_iter=None, test_kernel="consistent", verbose=0, warm_start=False):
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
        self.warm_start = warm_start

    def fit(self, X, y, sample_weight=None):
        """Fit on the train×train similarity (or features) and real targets ``y``; ``sample_weight``
        multiplies C per sample (weight 0 leaves the sample out)."""
        self._validate_params()
        K0, y, weights = self._train_similarity(X, y, sample_weight)
        rows = np.flatnonzero(weights > 0)
        task = multiclass.BinaryTask(rows, y[rows], type(self).__name__)
        self._solve([SVRProblem(_rows_of(K0, rows), y[rows], self.C * weights[rows], self.rho, self.epsilon)], [task])
        return self

    def predict(self, X) -> np.ndarray:
        """``k(x)ᵀw + b`` of the test rule for the test×train similarities ``X``."""
        return self._single_decision(X)


class IndefiniteOneClassSVM(OutlierMixin, _IndefiniteKernelMachine):
    """One-class SVM (novelty detection) with an indefinite kernel (``eq:kern_learn_1class_SVM``).

    Learns ``K* = (K0 + ααᵀ/(4ρ))_+`` with ``eᵀα = 1, 0 <= α <= 1/(νn)``. Parameters as
    :class:`IndefiniteSVC` (no ``C``, ``class_weight`` or multiclass options), plus

    nu : float in (0, 1], default 0.5
        An upper bound on the fraction of training points outside the estimated support.

    Attributes as :class:`IndefiniteSVC` (``dual_coef_`` holds α on the support), plus
    ``offset_``: the threshold r of the certified primal point; ``decision_function = score_samples - offset_``.
    Like scikit-learn's ``OneClassSVM`` it has no ``score``; ``predict`` gives +1 (inlier) or -1.
    ``sample_weight`` is accepted for the scikit-learn signature; only its zeros act (they leave
    samples out), since the paper's one-class problem has no per-sample bound.
    """

    _parameter_constraints = {
        **_IndefiniteKernelMachine._parameter_constraints,
        "nu": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, *, nu=0.5, rho=1.0, kernel="precomputed", method="newton", tol=1e-6, absolute=False,
                 max_iter=None, test_kernel="consistent", verbose=0, warm_start=False):
        self.nu = nu
        self.rho = rho
        self.kernel = kernel
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.verbose = verbose
        self.warm_start = warm_start

    def fit(self, X, y=None, sample_weight=None):
        """Fit on the train×train similarity (or features); ``y`` is ignored."""
        self._validate_params()
        K0, _, weights = self._train_similarity(X, sample_weight=sample_weight, requires_y=False)
        rows = np.flatnonzero(weights > 0)
        task = multiclass.BinaryTask(rows, np.ones(rows.size), type(self).__name__)
        self._solve([OneClassProblem(_rows_of(K0, rows), self.nu, self.rho)], [task])
        self.offset_ = -self.intercept_[0]
        return self

    @staticmethod
    def _intercept(offset: float) -> float:
        return -offset  # the certificate's offset is the threshold r: decision = Kα - r

    def decision_function(self, X) -> np.ndarray:
        """``k(x)ᵀw - r`` of the test rule: positive for inliers."""
        return self._single_decision(X)

    def score_samples(self, X) -> np.ndarray:
        """``k(x)ᵀw``, the unshifted score."""
        return self.decision_function(X) + self.offset_

    def predict(self, X) -> np.ndarray:
        """+1 for inliers (``decision_function >= 0``), -1 for outliers."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
