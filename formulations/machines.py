"""The three kernel machines of the paper in one shape, shared by every factory.

Each machine is a dual QP ``max_{α} cᵀα - ε‖α‖₁ - ½Σ D_iα_i² - ½uᵀKu`` with ``u = d∘α`` (``d = y``
for the SVM, ``d = e`` for SVR and one-class; D only for the squared-hinge SVM) over
``{aᵀα = b, lo_coef∘α >= lo_rhs, hi_coef∘α <= hi_rhs}`` (no upper bound for the squared hinge).
Writing the bounds with a coefficient keeps every model DPP: the one-class box
``α <= 1/(νn)`` becomes ``νn α <= 1``, linear in the parameter ν.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np


@dataclass(frozen=True)
class Machine:
    """One machine's dual variable, linear part and feasible set (see the module docstring)."""

    alpha: cp.Variable
    d: np.ndarray
    c: np.ndarray
    a: np.ndarray
    b: float
    lo_coef: object
    lo_rhs: object
    hi_coef: object
    hi_rhs: object
    epsilon: cp.Parameter | None = None
    curvature: cp.Parameter | None = None
    parameters: dict = field(default_factory=dict)

    @property
    def u(self) -> cp.Expression:
        return cp.multiply(self.d, self.alpha)

    @property
    def linear(self) -> cp.Expression:
        """``ℓ(α) = cᵀα - ε‖α‖₁ - ½Σ D_iα_i²``."""
        value = self.c @ self.alpha
        if self.epsilon is not None:
            value = value - self.epsilon * cp.norm1(self.alpha)
        if self.curvature is not None:
            value = value - 0.5 * cp.sum(cp.multiply(self.curvature, cp.square(self.alpha)))
        return value

    @property
    def constraints(self) -> list:
        constraints = [self.a @ self.alpha == self.b, cp.multiply(self.lo_coef, self.alpha) >= self.lo_rhs]
        if self.hi_coef is not None:
            constraints.append(cp.multiply(self.hi_coef, self.alpha) <= self.hi_rhs)
        return constraints


def _vector_parameter(value, n: int, name: str) -> cp.Parameter:
    parameter = cp.Parameter(n, nonneg=True, name=name)
    parameter.value = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    return parameter


def _square(K, name: str) -> np.ndarray:
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square (n, n) matrix; got shape {K.shape}")
    return (K + K.T) / 2


def _vector(v, n: int, name: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.shape != (n,):
        raise ValueError(f"{name} must have length n={n}; got shape {v.shape}")
    return v


def penalty_weights(h, n: int) -> np.ndarray:
    """The per-point weights ``h > 0`` of a rank-one penalty ``H = hhᵀ`` (``eq:kern_learn_pen``)."""
    h = _vector(h, n, "h")
    if not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError("h must be positive and finite (H = hh^T weighs (K_ij - K0_ij)^2 by h_i h_j)")
    return h


def svm(y, C) -> Machine:
    """Binary SVM (``eq:gen_perf_meas``): ``u = Yα``, ``ℓ = eᵀα``, ``yᵀα = 0``, ``0 <= α <= C``."""
    y = np.asarray(y, dtype=float)
    n = y.size
    C_param = _vector_parameter(C, n, "C")
    return Machine(cp.Variable(n, name="alpha"), d=y, c=np.ones(n), a=y, b=0.0, lo_coef=1.0, lo_rhs=0.0,
                   hi_coef=1.0, hi_rhs=C_param, parameters={"C": C_param})


def squared_hinge_svm(y, C) -> Machine:
    """Squared-hinge (L2) SVM: ``u = Yα``, ``ℓ = eᵀα - ¼Σα_i²/C_i``, ``yᵀα = 0``, ``α >= 0``. Its
    parameter is ``D = 1/(2C)`` (DPP needs it linear), not C."""
    y = np.asarray(y, dtype=float)
    n = y.size
    C = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    D_param = _vector_parameter(1.0 / (2.0 * C), n, "D")
    return Machine(cp.Variable(n, name="alpha"), d=y, c=np.ones(n), a=y, b=0.0, lo_coef=1.0, lo_rhs=0.0,
                   hi_coef=None, hi_rhs=None, curvature=D_param, parameters={"D": D_param})


def binary(y, C, loss: str) -> Machine:
    """The binary SVM of ``loss`` (``"hinge"``: :func:`svm`, ``"squared_hinge"``: :func:`squared_hinge_svm`)."""
    if loss == "hinge":
        return svm(y, C)
    if loss == "squared_hinge":
        return squared_hinge_svm(y, C)
    raise ValueError(f"loss must be 'hinge' or 'squared_hinge'; got {loss!r}")


def svr(y, C, epsilon) -> Machine:
    """SVR (``eq:gen_perf_meas_SVR``): ``u = α``, ``ℓ = yᵀα - ε‖α‖₁``, ``eᵀα = 0``, ``-C <= α <= C``."""
    y = np.asarray(y, dtype=float)
    n = y.size
    C_param = _vector_parameter(C, n, "C")
    eps_param = cp.Parameter(nonneg=True, name="epsilon", value=float(epsilon))
    return Machine(cp.Variable(n, name="alpha"), d=np.ones(n), c=y, a=np.ones(n), b=0.0, lo_coef=1.0,
                   lo_rhs=-C_param, hi_coef=1.0, hi_rhs=C_param, epsilon=eps_param,
                   parameters={"C": C_param, "epsilon": eps_param})


def one_class(n: int, nu) -> Machine:
    """One-class SVM (``eq:gen_perf_meas_1class_svm``): ``u = α``, ``ℓ = 0``, ``eᵀα = 1``,
    ``0 <= α <= 1/(νn)`` written as ``νn α <= 1``."""
    nu_param = cp.Parameter(nonneg=True, name="nu", value=float(nu))
    return Machine(cp.Variable(n, name="alpha"), d=np.ones(n), c=np.zeros(n), a=np.ones(n), b=1.0,
                   lo_coef=1.0, lo_rhs=0.0, hi_coef=n * nu_param, hi_rhs=1.0, parameters={"nu": nu_param})


def psd_factor(K, name: str = "K") -> np.ndarray:
    """``L`` with ``K = LLᵀ`` from the positive eigenpairs of a PSD ``K`` (eigenvalues below
    ``1e-12 λ_max`` count as zero), so quadratic forms ``uᵀKu = ‖Lᵀu‖²`` stay valid when K is
    singular. Raises ValueError if K has an eigenvalue below ``-1e-8 λ_max``."""
    lam, V = np.linalg.eigh(_square(K, name))
    top = max(lam.max(), 0.0)
    if lam.min() < -1e-8 * max(top, 1.0):
        raise ValueError(f"{name} must be positive semidefinite; its smallest eigenvalue is {lam.min():.3g}")
    keep = lam > 1e-12 * top
    return V[:, keep] * np.sqrt(lam[keep])
