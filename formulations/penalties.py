"""The three penalties on the learned kernel in one shape, shared by every model.

A penalty says what it adds to each model of the paper, whatever the machine
(:mod:`formulations.machines`):

- ``maxmin_term(u)``: the inner minimum ``φ(u) = min_{K ⪰ 0} -½uᵀKu + penalty(K)`` as a concave
  cvxpy expression of the machine's ``u`` with its own variables and constraints (the max-min model,
  ``eq:kern_learn``);
- ``kernel_term(K)``: ``penalty(K)`` of a kernel, a cvxpy expression for a variable K (the min-max
  model, ``eq:kern_learn_hard``) or a number for an array (a cut of the SIQCLP master,
  ``eq:SIQCLP_master``);
- ``weights``: H with ``penalty(K) = Σ_ij H_ij (K - K0)²_ij``, so the inner minimizer is the
  weighted projection of ``B = K0 + (uuᵀ)/(4H)`` (entrywise) onto the PSD cone
  (:func:`formulations.projection_model`, proof of ``th:kstar_pen``).

The penalties: :class:`Frobenius` ``ρ‖K - K0‖²_F`` (``eq:kern_learn``), :class:`Componentwise`
``Σ h_ih_j (K_ij - K0_ij)²`` (``eq:kern_learn_pen``), :class:`Mercer` the Frobenius penalty on a PSD
K0 (PerturbSVM, ``eq:learn-mercer``), whose inner minimum needs no semidefinite variable.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property

import cvxpy as cp
import numpy as np

from .machines import _square, penalty_weights, psd_factor


@dataclass(frozen=True)
class Term:
    """What a penalty adds to the max-min model: the concave expression ``φ(u)``, its constraints,
    its own variables and parameters by name."""

    expression: cp.Expression
    constraints: list
    variables: dict
    parameters: dict


def _sdp_term(K0: np.ndarray, u: cp.Expression, rho, parameters: dict) -> Term:
    """``ρ‖K0‖²_F - ρ‖P‖²_F`` over ``P ⪰ 0`` with ``[[P - K0, u], [uᵀ, 4ρ]] ⪰ 0``, i.e.
    ``P ⪰ K0 + uuᵀ/(4ρ)`` (Schur complement); as ``min{‖P‖_F : P ⪰ 0, P ⪰ X} = ‖X_+‖_F`` this is
    ``φ(u)`` of ``eq:kern_learn_eig``, and P at the optimum is the proxy kernel ``K*`` (``eq:kstar``)."""
    n = K0.shape[0]
    P = cp.Variable((n, n), symmetric=True, name="P")
    column = cp.reshape(u, (n, 1), order="F")
    schur = cp.bmat([[P - K0, column], [column.T, cp.reshape(4 * rho, (1, 1), order="F")]])
    # ‖P‖²_F of vec(P): cp.sum_squares of the symmetric=True variable itself is wrong in cvxpy 1.4.0
    # to 1.9.2 (which pip still resolves); the square of its norm is right but solved less
    # accurately (SCS 2e-4 off p* = 0 at ρ = 1e5, where this form is 1e-6 off as before)
    expression = rho * (np.sum(K0 * K0) - cp.sum_squares(cp.vec(P, order="F")))
    return Term(expression, [P >> 0, schur >> 0], {"P": P}, parameters)


class Penalty(ABC):
    """A penalty on the learned kernel (see the module docstring).

    Attributes
    ----------
    K0 : (n, n) array, the symmetric similarity matrix.
    weights : (n, n) array, H with ``penalty(K) = Σ_ij H_ij (K - K0)²_ij``.
    parameters : dict of name -> cvxpy.Parameter (ρ for the Frobenius and Mercer penalties).
    """

    K0: np.ndarray
    parameters: dict

    @property
    @abstractmethod
    def weights(self) -> np.ndarray:
        """H with ``penalty(K) = Σ_ij H_ij (K - K0)²_ij``."""

    @abstractmethod
    def maxmin_term(self, u: cp.Expression) -> Term:
        """``φ(u)`` with its variables and constraints, for the max-min model."""

    @abstractmethod
    def kernel_term(self, K):
        """``penalty(K)``: a cvxpy expression for a cvxpy K, a number (times the parameters) for an array."""

    def inner_target(self, u: np.ndarray) -> np.ndarray:
        """``B = K0 + (uuᵀ)/(4H)`` entrywise: ``-½uᵀKu + Σ H_ij (K - K0)²_ij`` is
        ``Σ H_ij (K - B)²_ij`` plus a constant, so the inner minimizer is the weighted projection of B."""
        u = np.asarray(u, dtype=float)
        return self.K0 + np.outer(u, u) / (4 * self.weights)


class Frobenius(Penalty):
    """``ρ‖K - K0‖²_F`` (``eq:kern_learn``); ρ is the parameter ``rho``.

    Parameters
    ----------
    K0 : (n, n) symmetric array; rho : float > 0.
    """

    def __init__(self, K0, rho):
        self.K0 = _square(K0, "K0")
        rho = float(rho)
        if not (np.isfinite(rho) and rho > 0):
            raise ValueError(f"rho must be positive and finite for a conic model; got {rho!r}")
        self.rho = cp.Parameter(nonneg=True, name="rho", value=rho)
        self.parameters = {"rho": self.rho}

    @property
    def weights(self):
        return np.full(self.K0.shape, float(np.asarray(self.rho.value)))

    def maxmin_term(self, u):
        return _sdp_term(self.K0, u, self.rho, self.parameters)

    def kernel_term(self, K):
        if isinstance(K, cp.Expression):
            return self.rho * cp.sum_squares(K - self.K0)
        return self.rho * float(np.sum((np.asarray(K) - self.K0) ** 2))


class Weighted(Penalty):
    """``Σ_ij H_ij (K_ij - K0_ij)²`` for any nonnegative symmetric H: the min-max model, the cuts
    and the weighted projection take it as written; only the rank-one ``H = hhᵀ`` has the closed
    inner minimum of the max-min model (:class:`Componentwise`).

    Parameters
    ----------
    K0 : (n, n) symmetric array; H : (n, n) nonnegative symmetric array.
    """

    def __init__(self, K0, H):
        self.K0 = _square(K0, "K0")
        self._weights = _square(H, "H")
        if self._weights.shape != self.K0.shape or np.any(self._weights < 0):
            raise ValueError(f"H must be a nonnegative symmetric matrix of K0's shape {self.K0.shape}")
        self.parameters = {}

    @property
    def weights(self):
        return self._weights

    def maxmin_term(self, u):
        raise NotImplementedError("the inner minimum has a closed form only for a rank-one H = hh^T: use "
                                  "Componentwise(K0, h)")

    def kernel_term(self, K):
        if isinstance(K, cp.Expression):
            return cp.sum_squares(cp.multiply(np.sqrt(self.weights), K - self.K0))
        return float(np.sum(self.weights * (np.asarray(K) - self.K0) ** 2))


class Componentwise(Weighted):
    """``Σ_ij h_ih_j (K_ij - K0_ij)²`` (``eq:kern_learn_pen`` with ``H = hhᵀ``).

    With ``W = diag(h)``: ``Σ h_ih_j (K - K0)²_ij = ‖W^{1/2}(K - K0)W^{1/2}‖²_F``, so substituting
    ``K̃ = W^{1/2}KW^{1/2}`` gives the Frobenius penalty with ``ρ = 1``, kernel ``W^{1/2}K0W^{1/2}``
    and ``u`` scaled by ``W^{-1/2}``: the max-min model's ``P`` is ``W^{1/2}K*W^{1/2}``
    (``th:kstar_pen``). The min-max model takes the penalty as written, so the two check this
    derivation against each other.

    Parameters
    ----------
    K0 : (n, n) symmetric array; h : (n,) positive weights.
    """

    def __init__(self, K0, h):
        K0 = _square(K0, "K0")
        self.h = penalty_weights(h, K0.shape[0])
        super().__init__(K0, np.outer(self.h, self.h))

    def maxmin_term(self, u):
        root = np.sqrt(self.h)
        return _sdp_term(self.K0 * np.outer(root, root), cp.multiply(1 / root, u), 1.0, {})


class Mercer(Frobenius):
    """``ρ‖K - K0‖²_F`` on a PSD K0 (PerturbSVM, ``eq:learn-mercer``): ``K* = K0 + uuᵀ/(4ρ)`` is
    already PSD, so ``φ(u) = -½‖L0ᵀu‖² - ‖u‖⁴/(16ρ)`` with ``K0 = L0L0ᵀ``: no semidefinite variable.
    The quartic term is kept DPP through ``t >= ‖u‖²`` and the rotated cone ``t² <= 16ρ w``. Its
    min-max model and cuts are the Frobenius penalty's. The max-min term raises ValueError if K0
    is not PSD."""

    @cached_property
    def factor(self) -> np.ndarray:
        """``L0`` with ``K0 = L0L0ᵀ`` (:func:`formulations.machines.psd_factor`)."""
        return psd_factor(self.K0, "K0")

    def maxmin_term(self, u):
        t, w = cp.Variable(name="t"), cp.Variable(name="w")
        quartic = [t >= cp.sum_squares(u), cp.SOC(16 * self.rho + w, cp.hstack([2 * t, 16 * self.rho - w]))]
        return Term(-0.5 * cp.sum_squares(self.factor.T @ u) - w, quartic, {}, self.parameters)
