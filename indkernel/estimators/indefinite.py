"""scikit-learn estimators over the problem types: fit on an indefinite similarity, predict, certify.

Each estimator takes ``kernel="precomputed"`` (``fit(K_train, y)`` with the n×n train×train
similarity matrix, ``predict(K_test)`` with the m×n test×train one), a kernel by name as
``SVC``'s (``kernel="rbf"``, or the paper's ``"simpson"`` and ``"tangent"``) or a callable
``kernel(X, Y) -> similarity matrix`` on raw features. ``fit`` solves the problem with any
method of :func:`indkernel.solve` and keeps the certified bounds (``lower_bound_``,
``upper_bound_``, ``gap_``) beside scikit-learn's fitted attributes.

**Test rules.** The proxy kernel K* exists only on the training points, so a new point needs a
rule (``test_kernel``): ``"consistent"`` (the default), ``"raw"``, ``"transductive"`` (the
paper's heuristic) and two variants for the study, in :mod:`indkernel.estimators.rules`.

**Intercept.** ``intercept_`` is the offset of the certified primal point: the exactly optimal
``b`` for ``β = dual_coef`` on the proxy kernel K* (:mod:`indkernel.core.intercept`), so on the
training points ``decision = K*β + b`` is the very primal solution whose value, with the solver's
objective, brackets ``p*`` within the free gap. The reference code instead averages over
"free" support vectors of K0 with a threshold of 1e-3, which depends on the threshold and on
a kernel the solution was not trained on; at an exact optimum on K* both agree wherever free
support vectors exist.

**What a fitted model keeps.** What prediction needs: ``support_``, ``dual_coef_``,
``test_coef_`` (the consistent rules), ``intercept_`` (and ``X_fit_`` with a kernel on features),
the results and bounds. The training similarity is referenced in memory for ``proxy_kernel_`` and pickled only
with ``test_kernel="transductive"``, whose predictions need it.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets

from .._validation import CLASS_WEIGHT_RULES, check_kernel, sample_class_weights
from ..core.device_oracle import NO_MERCER_ROUTE, DeviceRankOneProxy
from ..core.namespace import CheckedOnDevice
from ..core.one_class_problem import OneClassProblem
from ..core.proxy import MercerProxy, make_oracle, psd_part
from ..core.svm_problem import LOSSES, PerturbSVMProblem, SVMProblem
from ..core.svr_problem import SVRProblem
from . import multiclass
from .base import BaseIndefiniteMachine, _rows_of, in_namespace_of


class IndefiniteSVC(ClassifierMixin, BaseIndefiniteMachine):
    """SVM classification with an indefinite kernel (Luss & d'Aspremont, ``eq:kern_learn``), with
    the contract of scikit-learn's ``SVC``.

    Learns the proxy kernel ``K* = (K0 + (Yα)(Yα)ᵀ/(4ρ))_+`` (``eq:kstar``) jointly with the SVM.

    Parameters
    ----------
    C : float, default 1.0
        Misclassification penalty (per sample: times ``sample_weight`` and the class weight).
    rho : float, default 1.0
        Penalty on ``‖K - K0‖²_F``; large ρ approaches the SVM on the clipped ``(K0)_+``.
    kernel : {"precomputed", "linear", "poly", "rbf", "sigmoid", "simpson", "tangent"} or callable, default "precomputed"
        ``"precomputed"``: ``fit`` takes the train×train similarity. A name: ``fit`` takes features
        and the kernel is scikit-learn's (as ``SVC``'s) or one of the paper's similarities
        (:func:`indkernel.kernels.by_name`). A callable maps ``(X, Y)`` to their similarity matrix
        (for instance ``indkernel.kernels.simpson``).
    gamma : "scale", "auto" or float > 0, default "scale"
        As ``SVC``: the width of ``"rbf"`` and ``"tangent"``, the slope of ``"poly"`` and
        ``"sigmoid"``; ``"scale"`` is 1 / (n_features · X.var()), ``"auto"`` 1 / n_features.
    coef0 : float, default 0.0
        The offset of ``"poly"`` and ``"sigmoid"``.
    degree : int, default 3
        The degree of ``"poly"``.
    class_weight : None, "balanced", "authors" or dict
        As ``SVC`` (``"balanced"``: ``n / (k n_c)`` over all k classes); ``"authors"`` as the
        authors' reference code (:class:`indkernel.SVMProblem`), balancing each binary problem.
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
    test_kernel : {"consistent", "raw", "transductive", "consistent-K0", "consistent-flip"}, default "consistent"
        How new points are scored (:mod:`indkernel.estimators.rules`; the last two are the rule
        study's variants). Set after ``fit``, a rule computes what it needs on first use.
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
    callback : callable, optional
        Passed to :func:`indkernel.solve` for each binary problem: ``callback(state)`` after every
        certified check (``state.label`` names the binary problem when there are several); a true
        return value ends that problem's run (status ``"callback"``).

    Attributes
    ----------
    classes_ : (k,) the labels; for two, ``classes_[1]`` is the positive class.
    support_ : indices of the training points with ``α_i > 0`` in some binary problem (coordinates
        that round-off left at a bound are set to it when that keeps the fit certified, so the
        support is libsvm's), ordered by class (then index) as ``SVC``'s; ``n_support_`` their
        number per class; ``support_vectors_`` their features with a kernel by name, else empty,
        as ``SVC``'s.
    class_weight_ : (k,) array, the weight of each class's C; ``fit_status_`` 0 if every problem
        is certified optimal, else 1.
    dual_coef_ : ``y_i α_i`` on the support. Two classes: (1, n_SV), the decision positive for
        ``classes_[1]``. One-vs-one on k > 2 classes: (k - 1, n_SV) in ``SVC``'s (libsvm's) layout
        and signs, pair (i, j) positive for class i. One-vs-rest: (k, n_SV), row c positive for
        class c. 0 off a problem's support or rows.
    test_coef_ : (n_problems, n) array, with a consistent rule: the ``w`` of each problem's
        decision ``K0(x, X_train) w + intercept_`` (``w = Pβ`` for ``"consistent"``), in the signs
        of ``intercept_``.
    intercept_ : (n_problems,) array, the exactly optimal intercept of each certified primal point
        (one-vs-one on k > 2 classes: ``SVC``'s signs, pair (i, j) positive for class i).
    lower_bound_, upper_bound_, gap_ : (n_problems,) arrays, certified ``lower <= p* <= upper`` and
        their difference, the absolute gap, for each problem (in the order of the problems), as
        ``SVC``'s ``n_iter_`` whatever the number of classes.
    relative_gap_ : (n_problems,) array, ``gap_`` over the α-dependent scale of the objective
        (:attr:`indkernel.Certificate.relative_gap`): what ``tol`` is compared with, unless
        ``absolute=True`` (then ``gap_`` is).
    status_ : (n_problems,) array of str, ``"optimal"`` exactly when the certified gap met ``tol``;
        a problem that did not warns ``ConvergenceWarning`` naming its classes.
    n_iter_ : (n_problems,) array, the iterations of each problem.
    proxy_kernel_ : list of (n_rows, n_rows) arrays, K* of each problem (on its rows), formed on
        first access.
    result_ : list of :class:`indkernel.SolveResult`, one per problem.

    Examples
    --------
    >>> from indkernel import IndefiniteSVC
    >>> from indkernel.datasets import load_digits_pair
    >>> from indkernel.kernels import simpson
    >>> X, y = load_digits_pair(3, 5)
    >>> model = IndefiniteSVC(C=10, rho=1).fit(simpson(X[:200]), y[:200])
    >>> str(model.status_[0]), round(model.score(simpson(X[200:], X[:200]), y[200:]), 2)
    ('optimal', 0.98)
    """

    _one_problem = False
    _parameter_constraints = {
        **BaseIndefiniteMachine._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions(set(CLASS_WEIGHT_RULES)), dict, None],
        "loss": [StrOptions(set(LOSSES))],
        "multi_class": [StrOptions(set(multiclass.STRATEGIES))],
        "decision_function_shape": [StrOptions(set(multiclass.SHAPES))],
        "break_ties": ["boolean"],
    }

    def __init__(self, C=1.0, *, rho=1.0, kernel="precomputed", gamma="scale", coef0=0.0,
                 degree=3, class_weight=None, loss="hinge", method="newton",
                 tol=1e-6, absolute=False, max_iter=None, test_kernel="consistent", multi_class="ovo",
                 decision_function_shape="ovr", break_ties=False, verbose=0, warm_start=False,
                 callback=None):
        self.C = C
        self.rho = rho
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
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
        self.callback = callback

    def fit(self, X, y, sample_weight=None):
        """Fit on the train×train similarity (or features, with a kernel on them) and labels ``y``
        (two classes or more: see ``multi_class``); ``sample_weight`` multiplies C per sample, as
        ``SVC`` (a sample of weight 0 is left out of the problems)."""
        self._validate_params()
        K0, y, weights = self._train_similarity(X, y, sample_weight)
        self.classes_, index = np.unique(y, return_inverse=True)
        rows = np.flatnonzero(weights > 0)
        tasks = multiclass.binary_tasks(y, self.classes_, self.multi_class, rows)
        C, class_weight = self.C * weights, self.class_weight
        if len(tasks) > 1 and class_weight != "authors" and class_weight is not None:  # per sample, over all classes
            C, class_weight = C * sample_class_weights(class_weight, index, self.classes_), None
        K_rows, shared = _rows_of(K0, rows), None
        if len(tasks) > 1 and self.multi_class == "ovr":  # one K0 and one oracle for every problem
            if not isinstance(K_rows, CheckedOnDevice):  # (one checked there already)
                K_rows = check_kernel(K_rows)
                K_rows.setflags(write=False)
            shared = self._shared_oracle(K_rows)
        problems = [self._problem(K_rows if task.rows.size == rows.size else _rows_of(K0, task.rows), task.labels,
                                  C[task.rows], class_weight, shared) for task in tasks]
        self._class_index = index
        self._solve(problems, tasks)
        # SVC's bookkeeping: support vectors per class, the class weights, 0 for a certified fit
        self.n_support_ = np.bincount(index[self.support_], minlength=len(self.classes_)).astype(np.int32)
        named = isinstance(self.kernel, str) and self.kernel != "precomputed"  # as SVC: empty with a callable one
        self.support_vectors_ = self.X_fit_[self.support_] if named else np.empty((0, 0))
        weights_of = sample_class_weights(self.class_weight, index[rows], self.classes_)
        self.class_weight_ = np.array([weights_of[np.flatnonzero(index[rows] == k)[0]] for k in range(len(self.classes_))])
        self.fit_status_ = int(not np.all(self.status_ == "optimal"))
        return self

    def _publish(self, rule_coef):
        """``SVC``'s layout and signs (:func:`indkernel.estimators.multiclass.libsvm_layout`)."""
        self.support_, self.dual_coef_, self.intercept_ = multiclass.libsvm_layout(
            self._support, self._dual_coef, self._intercepts, self._class_index, len(self.classes_), self.multi_class)
        pairs_flipped = len(self.classes_) > 2 and self.multi_class == "ovo"
        self._publish_test_coef(rule_coef, -1.0 if pairs_flipped else 1.0)

    def _problem(self, K0, y, C, class_weight, oracle):
        """The binary problem of one task; ``oracle``: the one shared by every task on all of K0, or None."""
        return SVMProblem(K0, y, C, self.rho, class_weight=class_weight, loss=self.loss,
                          oracle="rank-one" if oracle is None else oracle)

    def _shared_oracle(self, K0):
        """The oracle of K0 that every one-vs-rest problem uses (its eigendecomposition is computed
        once, on first use); on its device for a similarity of another namespace."""
        if isinstance(K0, CheckedOnDevice):
            return DeviceRankOneProxy(K0.host, K0.device)
        return make_oracle("rank-one", K0)

    def _check_targets(self, y, weights: np.ndarray) -> None:
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes; y has one: {classes.tolist()}")
        missing = sorted(set(classes.tolist()) - set(y[weights > 0].tolist()))
        if missing:
            raise ValueError(f"sample_weight must give every class a sample of positive weight; class(es) {missing} "
                             "have none")
        multiclass.check_contract(self.multi_class, self.decision_function_shape, self.break_ties, len(classes),
                                  type(self).__name__)

    def decision_function(self, X) -> np.ndarray:
        """Two classes: ``k(x)ᵀw + b`` of the test rule, positive means ``classes_[1]``. More: as
        ``SVC`` (``decision_function_shape``), or the (m, k) margins of one-vs-rest training. X
        as for :meth:`predict`."""
        return in_namespace_of(X, self._decide(X)[0])

    def predict(self, X) -> np.ndarray:
        """Labels for the test×train similarities ``X`` (or features, with a kernel on them); for X
        of another namespace (a torch array, say), numeric labels in that namespace, on X's device."""
        return in_namespace_of(X, self._decide(X)[1])

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
        if isinstance(K0, CheckedOnDevice):
            raise ValueError(NO_MERCER_ROUTE)
        return MercerProxy(*psd_part(K0))

    def _kernel_oracle(self, K0: np.ndarray):
        return MercerProxy(*psd_part(K0))


class IndefiniteSVR(RegressorMixin, BaseIndefiniteMachine):
    """ε-insensitive support vector regression with an indefinite kernel (``eq:kern_learn_SVR``).

    Learns ``K* = (K0 + ααᵀ/(4ρ))_+`` (``eq:kstar_SVR``). Parameters as :class:`IndefiniteSVC`
    (no ``class_weight`` or multiclass options), plus

    epsilon : float >= 0, default 0.1
        Half-width of the tube within which errors cost nothing.

    Attributes as :class:`IndefiniteSVC`, with ``dual_coef_`` holding α on the support and
    ``test_coef_`` its consistent rule's ``w = Pα``; one problem, so the bounds, gaps, status and
    iterations are scalars, ``result_`` one result and ``proxy_kernel_`` one array.
    """

    _parameter_constraints = {
        **BaseIndefiniteMachine._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, C=1.0, *, rho=1.0, epsilon=0.1, kernel="precomputed", gamma="scale", coef0=0.0,
                 degree=3, method="newton", tol=1e-6, absolute=False, max_iter=None, test_kernel="consistent", verbose=0, warm_start=False,
                 callback=None):
        self.C = C
        self.rho = rho
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

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


class IndefiniteOneClassSVM(OutlierMixin, BaseIndefiniteMachine):
    """One-class SVM (novelty detection) with an indefinite kernel (``eq:kern_learn_1class_SVM``).

    Learns ``K* = (K0 + ααᵀ/(4ρ))_+`` with ``eᵀα = 1, 0 <= α <= 1/(νn)``. Parameters as
    :class:`IndefiniteSVC` (no ``C``, ``class_weight`` or multiclass options), plus

    nu : float in (0, 1], default 0.5
        An upper bound on the fraction of training points outside the estimated support.

    Attributes as :class:`IndefiniteSVC` (``dual_coef_`` holds α on the support; one problem, so
    scalars as :class:`IndefiniteSVR`'s), plus
    ``offset_``: the threshold r of the certified primal point; ``decision_function = score_samples - offset_``.
    Like scikit-learn's ``OneClassSVM`` it has no ``score``; ``predict`` gives +1 (inlier) or -1.
    ``sample_weight`` is accepted for the scikit-learn signature; only its zeros act (they leave
    samples out), since the paper's one-class problem has no per-sample bound.
    """

    _parameter_constraints = {
        **BaseIndefiniteMachine._parameter_constraints,
        "nu": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, *, nu=0.5, rho=1.0, kernel="precomputed", gamma="scale", coef0=0.0, degree=3,
                 method="newton", tol=1e-6, absolute=False, max_iter=None, test_kernel="consistent", verbose=0, warm_start=False,
                 callback=None):
        self.nu = nu
        self.rho = rho
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.method = method
        self.tol = tol
        self.absolute = absolute
        self.max_iter = max_iter
        self.test_kernel = test_kernel
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

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
