"""Exactly optimal intercepts: the offset that minimizes a convex piecewise-linear loss.

The certificate of DESIGN.md bounds the SVM primal at ``β`` with the *best* intercept ``b``;
the loss is piecewise linear in ``b``, so the minimum sits at a breakpoint found by sorting.
"""

from __future__ import annotations

import numpy as np


def hinge_loss(decision: np.ndarray, y: np.ndarray, C: np.ndarray, b: float) -> float:
    """``Σ C_i max(0, 1 - y_i (decision_i + b))``."""
    return float(C @ np.maximum(0.0, 1.0 - y * (decision + b)))


def best_hinge_intercept(decision: np.ndarray, y: np.ndarray, C: np.ndarray) -> tuple[float, float]:
    """Minimize the weighted hinge loss over the intercept ``b``; O(n log n).

    Term i has its breakpoint at ``t_i = y_i - decision_i``; the slope of the sum is
    ``-Σ_{y=+1} C_i`` left of every breakpoint and grows by ``C_i`` at each one, so the minimum
    is at the first breakpoint where the cumulative weight reaches ``Σ_{y=+1} C_i`` (a weighted
    median). Needs both classes in ``y``.

    Returns
    -------
    (loss, b) : the minimal loss and an intercept attaining it.
    """
    breakpoints = y - decision
    order = np.argsort(breakpoints, kind="stable")
    k = int(np.searchsorted(np.cumsum(C[order]), C[y > 0].sum()))
    # Round-off in the cumulative sum can shift k by one where the slope is ~0; the
    # neighbours then have the same loss up to round-off, so take the best of the three.
    candidates = breakpoints[order[max(k - 1, 0): k + 2]]
    losses = [hinge_loss(decision, y, C, b) for b in candidates]
    best = int(np.argmin(losses))
    return losses[best], float(candidates[best])
