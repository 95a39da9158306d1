"""The 1-norm SVM on a raw similarity (Mangasarian's linear program), for any symmetric K.

``min ‖β‖₁ + Σ C_i ξ_i`` s.t. ``y_i((Kβ)_i + b) >= 1 - ξ_i``, ``ξ >= 0``: a linear program
whatever K's spectrum, and new points are scored by their raw rows, ``kᵀβ + b``. Its dual:
``max Σ λ_i`` s.t. ``0 <= λ <= C``, ``Σ λ_i y_i = 0``, ``|Kᵀ(λ∘y)| <= 1``.
"""

from __future__ import annotations

import cvxpy as cp

from ._base import Formulation
from .machines import _square, _vector, _vector_parameter


def one_norm_svm(K, y, C) -> Formulation:
    """The 1-norm SVM's linear program; variables ``beta``, ``b``, ``xi``; parameter ``C``."""
    K = _square(K, "K")
    y = _vector(y, len(K), "y")
    C = _vector_parameter(C, len(y), "C")
    beta, b, xi = cp.Variable(len(y)), cp.Variable(), cp.Variable(len(y), nonneg=True)
    margins = cp.multiply(y, K @ beta + b)
    problem = cp.Problem(cp.Minimize(cp.norm1(beta) + C @ xi), [margins >= 1 - xi])
    return Formulation(problem, {"beta": beta, "b": b, "xi": xi}, {"C": C})


def one_norm_svm_dual(K, y, C) -> Formulation:
    """Its dual ``max Σ λ`` over ``0 <= λ <= C``, ``yᵀλ = 0``, ``|Kᵀ(λ∘y)| <= 1``; variable ``lambda``."""
    K = _square(K, "K")
    y = _vector(y, len(K), "y")
    C = _vector_parameter(C, len(y), "C")
    lam = cp.Variable(len(y), nonneg=True)
    constraints = [lam <= C, y @ lam == 0, cp.abs(K.T @ cp.multiply(y, lam)) <= 1]
    return Formulation(cp.Problem(cp.Maximize(cp.sum(lam)), constraints), {"lambda": lam}, {"C": C})
