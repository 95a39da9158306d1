"""The base of the Indefinite SVM estimators (as ``sklearn.svm._base``): the similarity
(precomputed, a kernel by name as ``SVC``'s, or a callable), validation, the solve of each binary
problem, the fitted attributes and the decisions by the rule for new points (:mod:`indkernel.estimators.rules`). The estimators
themselves are in :mod:`indkernel.estimators.indefinite`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_array, check_is_fitted, validate_data

from .._progress import tqdm
from .._validation import check_memory, check_symmetric, check_two_samples
from ..core.namespace import CheckedOnDevice, checked_kernel, device_of, foreign_namespace, to_numpy
from ..core.proxy import EighProxy, RankOneProxy, decompose_concurrently
from ..core.rank_one import compile_oracle
from ..kernels import NAMED_KERNELS, by_name
from ..solvers.registry import METHODS, method_options, solve
from . import multiclass, progress
from .rules import RULES, TestRule


class BaseIndefiniteMachine(BaseEstimator):
    """What the four estimators share: kernel handling, solving, fitted attributes, decisions by
    the rule ``test_kernel`` (:mod:`indkernel.estimators.rules`).

    ``_one_problem``: the estimator always solves one problem (regression, one-class), so its
    bounds, status and iteration count are scalars; a classifier's are arrays, one entry per binary
    problem, whatever the number of classes (as ``SVC``'s ``n_iter_``).
    """

    _one_problem = True

    _proxy_kernels: list | None = None  # proxy_kernel_'s cache, reset by every fit

    _parameter_constraints: dict = {
        "rho": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],  # inf: K* = (K0)_+
        "kernel": [StrOptions({"precomputed", *NAMED_KERNELS}), callable],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "absolute": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), Options(Integral, {-1}), None],
        "test_kernel": [StrOptions({*RULES, "inductive"}, deprecated={"inductive"})],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "callback": [callable, None],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def __getstate__(self) -> dict:
        """Pickle what prediction needs: the training similarity only for the transductive rule."""
        state = dict(super().__getstate__())  # a copy: the live model keeps its attributes
        if not self._rule().keeps_training_similarity:
            state.pop("_K0", None)
        state.pop("_proxy_kernels", None)
        state.pop("_warm_state", None)
        return state

    def _rule(self) -> TestRule:
        return RULES["raw" if self.test_kernel == "inductive" else self.test_kernel]

    # ----- fitting ---------------------------------------------------------------------
    def _train_similarity(self, X, y=None, sample_weight=None, *, requires_y: bool = True):
        """Validate the training input; return ``(K0, y, weights)`` (weights: ``sample_weight``
        as an (n,) array, ones by default) and remember what predict needs."""
        if self.test_kernel == "inductive":
            warnings.warn("test_kernel='inductive' is renamed 'raw' (the raw similarity rows); the default is now "
                          "'consistent'", FutureWarning, stacklevel=3)
        on_device = foreign_namespace(X) is not None  # a torch or CuPy array, say: the problems are solved there
        if on_device:
            if self.kernel != "precomputed":
                raise ValueError(f"{type(self).__name__} takes an array of another namespace than NumPy's (a GPU's) as the "
                                 "precomputed train×train similarity: pass kernel='precomputed', or NumPy features")
            X, device_X = checked_kernel(X, name="X")  # square, finite and symmetric, checked there
            y, sample_weight = (to_numpy(v) if foreign_namespace(v) is not None else v for v in (y, sample_weight))
        if not requires_y:
            X = validate_data(self, X, dtype=np.float64)
        elif y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=not isinstance(self, ClassifierMixin))
        check_two_samples(X.shape[0], type(self).__name__)
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if np.count_nonzero(weights) < 2:
            raise ValueError(f"sample_weight must give at least two samples a positive weight (a weight of 0 leaves "
                             f"the sample out); got {np.count_nonzero(weights)}")
        self._check_targets(y, weights)
        check_memory(X.shape[0], f"{type(self).__name__} on n={X.shape[0]} training points")
        self.shape_fit_ = (X.shape[0], X.shape[0])
        self._fit_rho, self._proxy_kernels = self.rho, None
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"with kernel='precomputed', fit takes the square train×train similarity matrix; "
                                 f"got shape {X.shape}")
            if on_device:  # (its host copy is the model's own, read-only; the problems check it no more)
                self._K0 = X
                return CheckedOnDevice(X, device_X), y, weights
            check_symmetric(X, "X", "with kernel='precomputed' X is the train×train similarity matrix: if "
                         "it holds features instead, pass kernel='rbf' (or another kernel by name, or a callable); "
                         "if it is a similarity, symmetrize it first, (X + X.T) / 2")
            self._K0 = _owned(X)
            return self._K0, y, weights
        self.X_fit_ = _owned(X)
        self._gamma = _gamma_value(self.gamma, self.X_fit_)
        return self._similarity(self.X_fit_, self.X_fit_, "kernel(X_train, X_train)"), y, weights

    def _similarity(self, X, Y, what: str) -> np.ndarray:
        kernel = self.kernel if callable(self.kernel) else by_name(self.kernel, gamma=self._gamma, coef0=self.coef0,
                                                                   degree=self.degree)
        K = check_array(kernel(X, Y), dtype=np.float64, ensure_all_finite=True, input_name=what)
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
        set the fitted attributes from the certified solutions: one row of ``dual_coef_`` and one
        entry of ``intercept_`` per problem, the rule's coefficients (``test_coef_``, for the
        consistent rules), and the certified bounds, status and iteration count (``_one_problem``)."""
        n = self.shape_fit_[0]
        coefficients, intercepts, results = np.zeros((len(problems), n)), np.zeros(len(problems)), []
        rule = self._rule()
        rule_coef: np.ndarray | None = None
        compile_oracle()  # before the bars: their estimates are the solves' alone
        oracles = [oracle for oracle in {id(p.oracle): p.oracle for p in problems}.values() if isinstance(oracle, EighProxy)]
        if len(oracles) == 1:  # the one O(n³) step, shown (and cached) before the iterations
            progress.decompose(oracles[0], "K0", bool(self.verbose))
        elif oracles:  # one per one-vs-one pair
            with tqdm(total=len(oracles), desc="eigendecompositions", disable=not self.verbose, leave=False) as bar:
                decompose_concurrently(oracles, lambda: bar.update(1))
        starts = self._warm_starts(problems, tasks)
        for k, (problem, task) in enumerate(tqdm(list(zip(problems, tasks, strict=True)), desc="binary problems",
                                                 disable=not self.verbose or len(problems) == 1)):
            result = self._solve_one(problem, task.name if len(problems) > 1 else None, starts[k])
            coefficients[k, task.rows] = problem.dual_coef(result.alpha)
            intercepts[k] = self._intercept(result.certificate.alpha_intercept)  # the offset for these coefficients
            w = rule.coefficients(problem.oracle, problem.point(result.alpha))
            if w is not None:
                rule_coef = np.zeros((len(problems), n)) if rule_coef is None else rule_coef
                rule_coef[k, task.rows] = w
            results.append(result)
        # the decisions' own coefficients, one row per problem, positive for the task's +1 class;
        # the public attributes (``_publish``) are these, or libsvm's layout for one-vs-one
        self._support = np.flatnonzero(np.any(coefficients != 0, axis=0))
        self._dual_coef, self._intercepts = coefficients[:, self._support], intercepts
        self._coefficients: dict[str, np.ndarray] = {}
        if rule_coef is not None:
            self._coefficients[rule.name] = rule_coef
        self._publish(rule_coef)

        def each(name: str):
            values = np.array([getattr(r, name) for r in results])
            return values[0].item() if self._one_problem else values

        self.result_ = results[0] if self._one_problem else results
        self.n_iter_ = each("iterations")
        self.lower_bound_, self.upper_bound_, self.gap_ = each("lower"), each("upper"), each("gap")
        self.relative_gap_ = each("relative_gap")  # what tol is compared with (unless absolute=True)
        self.status_ = each("status")
        self._task_rows = [task.rows for task in tasks]
        self._warm_state = [(task.rows, problem.feasible.reach, result.alpha)
                            for problem, task, result in zip(problems, tasks, results, strict=True)]

    def _publish(self, rule_coef: np.ndarray | None) -> None:
        """The public ``support_``, ``dual_coef_``, ``intercept_`` and ``test_coef_`` (with a
        consistent rule): the decisions' own coefficients (a classifier changes the layout)."""
        self.support_, self.dual_coef_, self.intercept_ = self._support, self._dual_coef, self._intercepts
        self._publish_test_coef(rule_coef, 1.0)

    def _publish_test_coef(self, rule_coef: np.ndarray | None, sign: float) -> None:
        if rule_coef is not None:
            self.test_coef_ = sign * rule_coef
        elif hasattr(self, "test_coef_"):  # of an earlier fit with another rule
            del self.test_coef_

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
                     verbose=bool(self.verbose) and name is None, label=name, callback=self.callback, **options)

    @property
    def proxy_kernel_(self) -> np.ndarray | list:
        """The learned kernel ``K*`` of the current fit (``eq:kstar``), an (n, n) array formed on
        first request by a dense eigendecomposition (O(n³); ``fit`` itself never forms it). A
        classifier's is a list, one kernel per binary problem (on its rows)."""
        check_is_fitted(self)
        kernels = self._proxy_kernels
        if kernels is None:
            K0, betas = self._training_similarity(), self._betas()
            kernels = [self._kernel_oracle(_rows_of(K0, rows))(beta[rows], self._fit_rho).kernel()
                       for rows, beta in zip(self._task_rows, betas, strict=True)]
            self._proxy_kernels = kernels
        return kernels[0] if self._one_problem else kernels

    def _kernel_oracle(self, K0: np.ndarray):
        """An oracle of the learned kernel on one problem's rows (for ``proxy_kernel_`` and a rule set
        after ``fit``): the rank-one update of K0's spectrum, which the store of spectra keeps
        (:mod:`indkernel.core.spectrum_cache`), so a grid's fits on one fold decompose K0 once."""
        return RankOneProxy(K0)

    def _betas(self) -> np.ndarray:
        """(n_problems, n): each problem's β on all training points (0 off its support)."""
        betas = np.zeros((len(self._dual_coef), self.shape_fit_[0]))
        betas[:, self._support] = self._dual_coef
        return betas

    def _check_targets(self, y, weights: np.ndarray) -> None:
        """Reject targets this machine cannot fit with these sample weights (before any work on X)."""

    @staticmethod
    def _intercept(offset: float) -> float:
        return offset

    def _rule_coefficients(self, rule: TestRule) -> np.ndarray:
        """(n_problems, n): the ``w`` of ``rule`` for each problem: computed at fit for the rule of
        the fit, else now, from the training similarity (an eigendecomposition per problem)."""
        if rule.name not in self._coefficients:
            K0, w = self._training_similarity(), np.zeros((len(self._task_rows), self.shape_fit_[0]))
            for k, (rows, beta) in enumerate(zip(self._task_rows, self._betas(), strict=True)):
                oracle = self._kernel_oracle(_rows_of(K0, rows))
                w[k, rows] = rule.coefficients(oracle, oracle(beta[rows], self._fit_rho))
            self._coefficients[rule.name] = w
        return self._coefficients[rule.name]

    # ----- decisions -------------------------------------------------------------------
    def _decisions(self, X) -> np.ndarray:
        """(m, number of binary problems): each problem's decision at the test points, by the
        rule ``test_kernel`` (:mod:`indkernel.estimators.rules`). A precomputed X of another
        namespace (a GPU's) is multiplied there by the linear rules' coefficients; the public
        methods return X's namespace."""
        check_is_fitted(self)
        rule, n = self._rule(), self.shape_fit_[0]
        columns = self._support if rule.support_only else slice(None)
        xp = foreign_namespace(X)
        if xp is not None and (self.kernel != "precomputed" or rule.needs_test_block):
            X, xp = to_numpy(X), None  # features, or the transductive rule: decided on the host
        if xp is not None:
            self._check_width(tuple(X.shape), n, rule)
            if not bool(xp.all(xp.isfinite(X))):
                raise ValueError("X contains NaN or inf; remove or impute those entries first")
            cross = xp.take(X, xp.asarray(self._support, device=device_of(X)), axis=1) if rule.support_only else X
            return to_numpy(rule.decide(self, cross, np.empty((X.shape[0], 0))))
        if self.kernel == "precomputed":
            X = check_array(X, dtype=np.float64, input_name="X")
            self._check_width(X.shape, n, rule)
            cross, among = X[:, :n][:, columns], X[:, n:]
        else:
            X = validate_data(self, X, dtype=np.float64, reset=False)
            cross = self._similarity(X, self.X_fit_[columns], "kernel(X_test, X_train)")
            among = self._similarity(X, X, "kernel(X_test, X_test)") if rule.needs_test_block else X[:, :0]
        return rule.decide(self, cross, among)

    def _check_width(self, shape: tuple, n: int, rule: TestRule) -> None:
        """A precomputed X has a column per training point (and per test point, for the transductive rule)."""
        width = n + shape[0] if rule.needs_test_block else n
        if len(shape) != 2 or shape[1] != width:
            what = ("the test rows of the full (train + test) similarity matrix, shape (n_test, n_train + n_test)"
                    if rule.needs_test_block else "the test×train similarity matrix, shape (n_test, n_train)")
            raise ValueError(f"X has {shape[-1]} features, but {type(self).__name__} is expecting {width} features "
                             f"as input: with kernel='precomputed' and test_kernel={self.test_kernel!r}, pass {what}")

    def _single_decision(self, X) -> np.ndarray:
        return self._decisions(X)[:, 0]


def _gamma_value(gamma, X: np.ndarray) -> float:
    """γ as ``SVC`` sets it at fit: ``"scale"`` 1 / (p·Var(X)) (1 for constant X), ``"auto"`` 1 / p."""
    if gamma == "scale":
        variance = float(X.var())
        return 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
    return 1.0 / X.shape[1] if gamma == "auto" else float(gamma)


def _owned(array: np.ndarray) -> np.ndarray:
    """A read-only copy the fitted model owns: overwriting the caller's buffer after ``fit`` must
    not change the model's predictions."""
    array = np.array(array, dtype=np.float64, copy=True)
    array.setflags(write=False)
    return array


def _rows_of(K0, rows: np.ndarray):
    """The block of K0 on ``rows`` (K0 itself when they are all of its rows), a NumPy array or a
    :class:`indkernel.core.namespace.CheckedOnDevice`."""
    if rows.size == K0.shape[0]:
        return K0
    return K0.rows(rows) if isinstance(K0, CheckedOnDevice) else K0[np.ix_(rows, rows)]


def in_namespace_of(X, result: np.ndarray):
    """``result`` in the namespace and on the device of the input X (a NumPy result for NumPy X;
    labels that are not numbers stay NumPy)."""
    xp = foreign_namespace(X)
    if xp is None or result.dtype.kind not in "biuf":
        return result
    return xp.asarray(result, device=device_of(X))
