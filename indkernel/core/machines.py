"""The machines: what a loss brings to ``eq:kern_learn``.

Every problem is ``max_{x ∈ A} ℓ(x) + φ(u(x))`` (:mod:`indkernel.core.problem`); a machine supplies
the feasible set A, its dual term ℓ (a linear part and, for the squared hinge, ``-½xᵀDx`` with D
diagonal), the linear map u of the rank-one update (and its adjoint),
and, for the certificate, its primal loss at the exactly optimal offset and libsvm's solution on a
fixed PSD kernel (the independent cross-check). A new loss is one class here:

- :class:`Hinge`: the binary SVM, ``ℓ = eᵀα``, ``u = Yα``, ``A = {yᵀα = 0, 0 <= α <= C}``;
- :class:`EpsilonInsensitive`: the SVR (``eq:kern_learn_SVR``) on the split ``x = (α⁺, α⁻)``;
- :class:`OneClass`: the one-class SVM (``eq:kern_learn_1class_SVM``);
- :class:`SquaredHinge`: the squared-hinge (L2) SVM, ``ℓ = eᵀα - ¼Σα_i²/C_i`` on
  ``{yᵀα = 0, α >= 0}`` (unbounded above).
"""

from __future__ import annotations

import threading
import warnings
from abc import ABC, abstractmethod
from functools import cached_property

import numpy as np
from sklearn.svm import SVC, SVR, OneClassSVM

from .._validation import (
    check_binary_labels,
    check_nonnegative_scalar,
    check_nu,
    check_vector,
    penalty_vector,
    per_sample_penalty,
)
from .feasible_set import FeasibleSet
from .intercept import EPSILON_INSENSITIVE, HINGE, ONE_CLASS, best_squared_hinge_intercept, primal_terms


class Machine(ABC):
    """A loss of ``eq:kern_learn``'s family on n training points.

    Attributes
    ----------
    n : int, the number of training points; dim : int, the number of variables x.
    feasible : :class:`indkernel.core.feasible_set.FeasibleSet`, the set A.
    curvature : None, or the (dim,) diagonal of D >= 0 in ℓ's quadratic part ``-½xᵀDx`` (None: ℓ is linear).
    offset_shift : float, what the certificate's intercept adds to the internal offset.
    equation : str, the paper's label of the problem (for messages).
    box_name : str, what bounds the box (for messages).
    """

    n: int
    dim: int
    feasible: FeasibleSet
    curvature: np.ndarray | None = None
    offset_shift: float = 0.0
    equation: str = "eq:kern_learn"
    box_name: str = "C"

    @abstractmethod
    def u(self, x: np.ndarray) -> np.ndarray:
        """The vector ``u(x)`` of the rank-one update (a linear map); also the machine's
        decision coefficients β (``dual_coef``)."""

    @abstractmethod
    def u_adjoint(self, g: np.ndarray) -> np.ndarray:
        """The adjoint of u: maps a gradient in u to a gradient in x."""

    def u_map(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(rows, signs)``, both (dim,): u as data for compiled code, ``u_i = Σ_{rows[j] = i} signs[j]·x_j``
        (each variable enters one entry of u); None for a map of another form (the solvers then call
        :meth:`u` and :meth:`u_adjoint`)."""
        return None

    def u_extent(self) -> np.ndarray:
        """The largest ``|u_i|`` over the box that holds the maximizers (for a diagonal map
        ``u = d∘x``: ``|d|`` times the box)."""
        return np.abs(self.u(self.feasible.extent))

    @abstractmethod
    def linear(self, x: np.ndarray) -> float:
        """The linear part of the dual term ℓ(x)."""

    @abstractmethod
    def linear_gradient(self, x: np.ndarray) -> np.ndarray:
        """The gradient of the linear part (constant)."""

    def dual_term(self, x: np.ndarray) -> float:
        """ℓ(x): the linear part and ``-½xᵀDx``."""
        value = self.linear(x)
        return value if self.curvature is None else value - 0.5 * float(self.curvature @ (x * x))

    def dual_term_gradient(self, x: np.ndarray) -> np.ndarray:
        """∇ℓ(x)."""
        gradient = self.linear_gradient(x)
        return gradient if self.curvature is None else gradient - self.curvature * x

    def dual_term_magnitude(self, x: np.ndarray) -> float:
        """The sum of the absolute values of ℓ's terms at x (its round-off scale)."""
        magnitude = float(np.abs(self.linear_gradient(x)) @ np.abs(x))
        return magnitude if self.curvature is None else magnitude + 0.5 * float(self.curvature @ (x * x))

    def start(self) -> np.ndarray:
        """The solvers' default starting point in A (the middle of the box that holds the maximizers)."""
        return self.feasible.start()

    def primal_loss(self, decision: np.ndarray) -> tuple[float, float]:
        """``(loss, offset)``: the primal loss of decision values ``Kβ``, minimized over the offset."""
        loss, offset, _, _ = self.primal_terms(decision, 0.0)
        return loss, offset

    def primal_terms(self, decision: np.ndarray, decision_error: float) -> tuple[float, float, float, np.ndarray]:
        """``(loss, offset, magnitude, weights)``: :meth:`primal_loss`, the sum of the absolute values of
        the loss's terms, and weights w with ``|loss(d + δ) - loss(d)| <= Σ w_i|δ_i|`` for every
        ``|δ_i| <= decision_error`` (the round-off allowance). By the compiled functions of
        :meth:`compiled_loss` (:func:`indkernel.core.intercept.primal_terms`), which compiled code calls too."""
        loss = self.compiled_loss
        if loss is None:
            raise NotImplementedError(f"{type(self).__name__} must define primal_terms or compiled_loss")
        found = primal_terms(loss, np.array(decision, dtype=np.float64), float(decision_error))
        return float(found[0]), float(found[1]), float(found[2]), found[3]

    @cached_property
    def compiled_loss(self) -> tuple | None:
        """The loss as data for compiled code, ``(kind, labels, C, ε, bound)`` of
        :func:`indkernel.core.intercept.primal_terms`, or None (then :meth:`primal_terms` is the machine's own)."""
        return None

    @abstractmethod
    def libsvm_beta(self, K: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, bool]:
        """``(β, capped)``: β of libsvm's machine on the PSD kernel K at its stopping tolerance
        ``tol``, and whether it stopped at ``max_iter`` instead (-1: no cap)."""

    def model_spec(self) -> tuple[str, tuple]:
        """``(name, arguments)``: this machine's entry in the cvxpy models, the factory
        ``formulations.machines.<name>(*arguments)``, which :mod:`indkernel.solvers.models` composes
        with a penalty's into each model of the paper (the core imports no cvxpy). A machine
        without one has no conic route (``NotImplementedError``)."""
        raise NotImplementedError(f"{type(self).__name__} has no cvxpy model: add its entry to formulations.machines "
                                  "and name it in its model_spec() method")

    def from_model(self, alpha: np.ndarray) -> np.ndarray:
        """The variables x (before projection onto A) of a ``formulations`` model's ``alpha``."""
        return alpha

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in self._summary().items())})"

    def _summary(self) -> dict:
        """What the machine's repr shows (its parameters)."""
        return {"n": self.n}

    def from_dual_coef(self, beta: np.ndarray) -> np.ndarray:
        """The variables x (before projection onto A) whose coefficients u(x) are β."""
        return self.from_model(beta)


#: ``warnings.catch_warnings`` saves and restores the process's filters: two threads inside it at
#: once can leave the other's filter installed, so the blocks that silence libsvm take turns.
_FILTERS = threading.Lock()


def libsvm_fit(estimator, max_iter: int, *args, **kwargs) -> bool:
    """Fit a scikit-learn libsvm estimator (built with ``max_iter``); True if it stopped at that cap
    (read from ``n_iter_``, not from the warning, which the caller hears from
    :meth:`indkernel.core.problem.IndefiniteProblem.libsvm_dual_coef` instead)."""
    from sklearn.exceptions import ConvergenceWarning

    # with random_state None, fit draws libsvm's seed from numpy's global stream (the seed only
    # shuffles for probability estimates): a fixed one leaves the caller's stream as it was
    estimator.random_state = 0
    with _FILTERS, warnings.catch_warnings():  # the filters are the process's: one thread at a time
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(*args, **kwargs)
    return max_iter > 0 and int(np.max(estimator.n_iter_)) >= max_iter


def summarize(values: np.ndarray) -> str:
    """A per-sample parameter in a few characters: its value if constant, else its range."""
    low, high = float(np.min(values)), float(np.max(values))
    return f"{low:g}" if low == high else f"[{low:g}, {high:g}]"


def _compiled_loss(kind: int, labels: np.ndarray, C: np.ndarray, epsilon: float = 0.0, bound: float = 0.0) -> tuple:
    """:attr:`Machine.compiled_loss` of fresh writable arrays (one compiled version for every machine)."""
    return kind, np.array(labels, dtype=np.float64), np.array(C, dtype=np.float64), float(epsilon), float(bound)


def _dense_beta(n: int, support: np.ndarray, coef: np.ndarray) -> np.ndarray:
    beta = np.zeros(n)
    beta[support] = coef
    return beta


class Hinge(Machine):
    """The binary SVM: ``max eᵀα - ½(Yα)ᵀK(Yα)`` over ``A = {yᵀα = 0, 0 <= α <= C}``; its primal
    ``½βᵀKβ + Σ C_i max(0, 1 - y_i((Kβ)_i + b))`` at ``β = Yα``.

    Parameters
    ----------
    y : (n,) labels with exactly two distinct values; ``classes[1]`` maps to +1.
    C : float or (n,) array, the misclassification penalty.
    class_weight : None, "balanced" (scikit-learn's), "authors" (the authors' rule) or dict, multiplies C per class.
    n : int, the number of training points (K0's size).
    """

    box_name = "C (with class_weight)"

    def __init__(self, y, C, class_weight, n: int):
        self.n = self.dim = n
        self.y, self.classes = check_binary_labels(y, n)
        self.C = penalty_vector(C, self.y, self.classes, class_weight)
        self.feasible = FeasibleSet(self.y, 0.0, np.zeros(n), self.C)

    def to_labels(self, signs) -> np.ndarray:
        """Map ±1 (or any signed scores) back to the original labels: ``> 0`` is ``classes[1]``."""
        return self.classes[(np.asarray(signs) > 0).astype(int)]

    def _summary(self):
        return {"n": self.n, "C": summarize(self.C), "classes": self.classes.tolist()}

    def u(self, x):
        return self.y * x

    u_adjoint = u  # a diagonal map

    def u_map(self):
        return np.arange(self.n), self.y

    def linear(self, x):
        return float(np.sum(x))

    def linear_gradient(self, x):
        return np.ones_like(x)

    @cached_property
    def compiled_loss(self):
        return _compiled_loss(HINGE, self.y, self.C)

    def libsvm_beta(self, K, tol, max_iter):
        svc = SVC(C=1.0, kernel="precomputed", tol=tol, max_iter=max_iter)
        capped = libsvm_fit(svc, max_iter, K, self.y, sample_weight=self.C)  # libsvm's C_i = C * weight_i
        return _dense_beta(self.n, svc.support_, svc.dual_coef_[0]), capped  # y_i α_i, +1 for classes[1]

    def from_dual_coef(self, beta):
        return self.y * beta  # β = Yα

    def model_spec(self):
        return "svm", (self.y, self.C)


class SquaredHinge(Hinge):
    """The squared-hinge (L2) SVM: its primal ``½βᵀKβ + Σ C_i max(0, 1 - y_i((Kβ)_i + b))²`` at
    ``β = Yα``, its dual ``max eᵀα - ¼Σα_i²/C_i - ½(Yα)ᵀK(Yα)`` over ``A = {yᵀα = 0, α >= 0}``
    (the hinge dual on ``K + diag(1/(2C))`` with no upper bound: ``D = diag(1/(2C))``).

    A is unbounded, but every maximizer of ``ℓ(α) + φ(u(α))`` (any penalty, any fixed PSD kernel)
    lies in the box ``α_i <= 2C_i + 2√(C_i ΣC)``: ``φ(u) <= φ(0)`` (the kernel at u = 0 is PSD), so
    ``f(α) >= f(0)`` needs ``Σ_j (α_j - α_j²/(4C_j)) >= 0``, and each other term is at most ``C_j``.
    That box (``feasible.reach``) scales the checks and steps; the start is the projection of C.
    Parameters as :class:`Hinge`.
    """

    curvature: np.ndarray

    def __init__(self, y, C, class_weight, n: int):
        super().__init__(y, C, class_weight, n)  # labels and C; the set is replaced
        self.curvature = 1.0 / (2.0 * self.C)
        reach = 2.0 * self.C + 2.0 * np.sqrt(self.C * np.sum(self.C))
        self.feasible = FeasibleSet(self.y, 0.0, np.zeros(n), np.full(n, np.inf), reach)

    def start(self):
        return self.feasible.project(self.C.copy())

    def model_spec(self):
        return "squared_hinge_svm", (self.y, self.C)

    compiled_loss = None  # (its own primal terms, in Python: its set is unbounded, so no compiled iteration runs on it)

    def primal_terms(self, decision, decision_error):
        loss, offset = best_squared_hinge_intercept(decision, self.y, self.C)
        margin = 1.0 - self.y * (decision + offset)
        scale, positive = 1.0 + np.abs(decision) + abs(offset), np.maximum(margin, 0.0)
        terms = np.where(margin >= -1e-8 * scale, (positive + scale) ** 2, 0.0)  # see active_terms
        # |(m + δ)₊² - m₊²| <= |δ|(2m₊ + |δ|)
        return loss, offset, float(self.C @ terms), self.C * (2.0 * positive + decision_error)

    def libsvm_beta(self, K, tol, max_iter):
        # the hinge SVM on K + D with a box that never binds (the reach holds its maximizers too)
        svc = SVC(C=1.0, kernel="precomputed", tol=tol, max_iter=max_iter)
        augmented = K + np.diag(self.curvature)
        capped = libsvm_fit(svc, max_iter, augmented, self.y, sample_weight=self.feasible.reach)
        return _dense_beta(self.n, svc.support_, svc.dual_coef_[0]), capped


class EpsilonInsensitive(Machine):
    """The SVR (``eq:kern_learn_SVR``): ``max yᵀα - ε‖α‖₁ - ½αᵀKα`` over ``eᵀα = 0, -C <= α <= C``.

    The ℓ1 term is made smooth as libsvm does: the variables are ``x = (α⁺, α⁻)`` in ``[0, C]^{2n}``
    with ``eᵀα⁺ = eᵀα⁻`` and ``α = α⁺ - α⁻``, so ``-ε‖α‖₁`` becomes the linear ``-ε eᵀ(α⁺ + α⁻)``
    (equal at the optimum, where ``α⁺_iα⁻_i = 0``); ``dim`` is 2n and ``u(x) = α``. The primal is
    ``½βᵀKβ + Σ C_i max(0, |y_i - (Kβ)_i - b| - ε)`` at ``β = α``.

    The targets are centered inside (``target = y - mean(y)``): on A, ``eᵀα = 0`` makes ``yᵀα``
    blind to a shift, and the intercept absorbs the mean, so the problem is the same; but ``yᵀα``
    with ``y + 1e6`` would multiply the round-off of ``eᵀα`` by 1e6 (the intercept is given for
    the original y through ``offset_shift``).
    """

    equation = "eq:kern_learn_SVR"
    box_name = "C"

    def __init__(self, y, C, epsilon, n: int):
        self.n, self.dim = n, 2 * n
        self.y = check_vector(y, n, "y")
        self.offset_shift = float(np.mean(self.y))
        self.target = self.y - self.offset_shift
        self.C = per_sample_penalty(C, n, "the SVR penalty on errors outside the tube")
        self.epsilon = check_nonnegative_scalar(epsilon, "epsilon", "the half-width of the SVR's insensitive tube")
        self.feasible = FeasibleSet(np.concatenate([np.ones(n), -np.ones(n)]), 0.0, np.zeros(2 * n),
                                    np.concatenate([self.C, self.C]))

    def _summary(self):
        return {"n": self.n, "C": summarize(self.C), "epsilon": f"{self.epsilon:g}"}

    def u(self, x):
        return x[: self.n] - x[self.n:]

    def u_adjoint(self, g):
        return np.concatenate([g, -g])

    def u_map(self):
        rows = np.arange(self.n)
        return np.concatenate([rows, rows]), np.concatenate([np.ones(self.n), -np.ones(self.n)])

    def u_extent(self):
        """``|α_i| <= max(α⁺_i, α⁻_i) <= C_i`` (u of the box's corner would cancel to 0)."""
        return self.C

    def start(self):
        """``α⁺ = α⁻ = 0``: the u of the box's middle (``α⁺ = α⁻ = C/2``, u = 0) with no common part
        (``min(α⁺_i, α⁻_i) = 0``, as at the optimum). A common part leaves u alone but costs its
        digits: at C = 7.2e5 the split variables near 3.6e5 hold u = α⁺ - α⁻ only to 6e-11, and
        with ε = 0 the loss ``C·|y - K*u - b|`` of the certificate then cannot close below 5e-3."""
        return np.zeros(self.dim)

    def linear(self, x):
        return float(self.target @ self.u(x) - self.epsilon * np.sum(x))

    def linear_gradient(self, x):
        return np.concatenate([self.target - self.epsilon, -self.target - self.epsilon])

    @cached_property
    def compiled_loss(self):
        return _compiled_loss(EPSILON_INSENSITIVE, self.target, self.C, self.epsilon)

    def libsvm_beta(self, K, tol, max_iter):
        svr = SVR(C=1.0, epsilon=self.epsilon, kernel="precomputed", tol=tol, max_iter=max_iter)
        capped = libsvm_fit(svr, max_iter, K, self.target, sample_weight=self.C)
        return _dense_beta(self.n, svr.support_, svr.dual_coef_[0]), capped

    def from_model(self, alpha):
        return np.concatenate([np.maximum(alpha, 0.0), np.maximum(-alpha, 0.0)])

    def model_spec(self):
        return "svr", (self.target, self.C, self.epsilon)


class OneClass(Machine):
    """The one-class SVM (``eq:kern_learn_1class_SVM``): ``max -½αᵀKα`` over
    ``eᵀα = 1, 0 <= α <= 1/(νn)``; its primal (Schölkopf et al. 2001)
    ``½βᵀKβ - r + Σ max(0, r - (Kβ)_i)/(νn)`` at ``β = α`` with the best threshold r (a point x is
    an inlier when ``Σ_j α_j K(x, x_j) >= r``; the certificate's intercept is r)."""

    equation = "eq:kern_learn_1class_SVM"
    box_name = "1/(nu·n)"

    def __init__(self, nu, n: int):
        self.n = self.dim = n
        self.nu = check_nu(nu)
        self.bound = 1.0 / (self.nu * n)
        self.feasible = FeasibleSet(np.ones(n), 1.0, np.zeros(n), np.full(n, self.bound))

    def _summary(self):
        return {"n": self.n, "nu": f"{self.nu:g}"}

    def u(self, x):
        return x

    u_adjoint = u

    def u_map(self):
        return np.arange(self.n), np.ones(self.n)

    def linear(self, x):
        return 0.0

    def linear_gradient(self, x):
        return np.zeros_like(x)

    @cached_property
    def compiled_loss(self):
        return _compiled_loss(ONE_CLASS, np.zeros(self.n), np.full(self.n, self.bound), bound=self.bound)

    def model_spec(self):
        return "one_class", (self.n, self.nu)

    def libsvm_beta(self, K, tol, max_iter):
        model = OneClassSVM(nu=self.nu, kernel="precomputed", tol=tol, max_iter=max_iter)
        capped = libsvm_fit(model, max_iter, K)
        return _dense_beta(self.n, model.support_, model.dual_coef_[0] / (self.nu * self.n)), capped  # eᵀα = νn in libsvm
