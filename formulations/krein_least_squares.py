"""Least squares in a Krein space over a hypersphere (Oglic & Gärtner 2018), as a semidefinite
program whose optimum is the nonconvex problem's.

``min (1/n)‖Kα - t‖² + λ₊ αᵀK₊α + λ₋ αᵀK₋α`` s.t. ``αᵀ|K|α = r²`` (``K₊``, ``K₋`` the positive and
negative parts of K, ``|K| = K₊ + K₋``). Lifted to ``Z = [[X, α], [αᵀ, 1]] ⪰ 0`` with ``X`` in
place of ``ααᵀ``, it is a linear SDP; for one quadratic equality constraint with ``|K|`` definite
the S-lemma makes this relaxation exact (its optimum is the problem's, attained at rank one).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ._base import Formulation
from .machines import _square, _vector


def krein_least_squares_sdp(K, t, lambda_positive: float, lambda_negative: float, radius: float) -> Formulation:
    """The lifted SDP; variables ``Z`` ((n+1, n+1)) and ``alpha`` (equal to its last column's first n entries)."""
    K = _square(K, "K")
    n = len(K)
    t = _vector(t, n, "t")
    values, vectors = np.linalg.eigh(K)
    positive = (vectors * np.maximum(values, 0)) @ vectors.T
    negative = (vectors * np.maximum(-values, 0)) @ vectors.T
    quadratic = K @ K / n + lambda_positive * positive + lambda_negative * negative
    Z, alpha = cp.Variable((n + 1, n + 1), PSD=True), cp.Variable(n)
    X = Z[:n, :n]
    objective = cp.trace(quadratic @ X) - 2 * (K @ t / n) @ alpha + float(t @ t) / n
    constraints = [Z[:n, n] == alpha, Z[n, n] == 1, cp.trace((positive + negative) @ X) == radius ** 2]
    return Formulation(cp.Problem(cp.Minimize(objective), constraints), {"Z": Z, "alpha": alpha}, {})
