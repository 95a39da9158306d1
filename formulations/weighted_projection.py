"""The weighted projection on the PSD cone behind componentwise penalties (proof of ``th:kstar_pen``)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ._base import Formulation
from .machines import _square


def weighted_projection(B, H) -> Formulation:
    """minimize ``Σ_ij H_ij (K_ij - B_ij)²`` over ``K ⪰ 0``, for any nonnegative symmetric ``H``.

    For ``H = hhᵀ`` (``W = diag(h)``, h > 0) the answer is ``W^{-1/2}(W^{1/2}BW^{1/2})_+W^{-1/2}``
    (``eq:kstar_pen``); for ``H = ρeeᵀ`` it is ``B_+`` (``eq:kstar``). When ``B = K0 + ¼vvᵀ`` with
    ``v = W⁻¹Yα`` and a PSD ``K0``, ``B`` is already PSD, so ``K* = K0 + ¼(W⁻¹Yα)(W⁻¹Yα)ᵀ``: the
    paper's ``eq:kstar_pen_psd`` prints ``W^{-1/2}`` where this model (and the tests) give ``W⁻¹``.

    Variable ``K``; parameter ``H``.
    """
    B = _square(B, "B")
    H = _square(H, "H")
    if H.shape != B.shape or np.any(H < 0):
        raise ValueError(f"H must be a nonnegative symmetric matrix of B's shape {B.shape}")
    H_param = cp.Parameter(H.shape, nonneg=True, name="H", value=H)
    K = cp.Variable(B.shape, PSD=True, name="K")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(H_param, cp.square(K - B)))))
    return Formulation(problem, {"K": K}, {"H": H_param})


def projection_model(penalty, u) -> Formulation:
    """The inner minimization ``min_{K ⪰ 0} -½uᵀKu + penalty(K)`` of any penalty at a fixed ``u``,
    as the weighted projection of ``B = K0 + (uuᵀ)/(4H)`` (entrywise, ``H`` the penalty's
    weights; :meth:`formulations.penalties.Penalty.inner_target`): its ``K`` is the proxy kernel
    ``K*`` that ``eq:kstar`` and ``eq:kstar_pen`` give in closed form. Variable ``K``; parameter ``H``."""
    return weighted_projection(penalty.inner_target(u), penalty.weights)
