"""Exactly optimal offsets: the intercept (or threshold) that minimizes a machine's primal loss.

The certificate (:mod:`indkernel.core.certificate`) bounds each machine's primal at ``β`` with the *best* offset; every
loss here is a convex piecewise-linear function of that offset, so its minimum sits at a
breakpoint found by sorting (:func:`minimize_piecewise_linear`).
"""

from __future__ import annotations

import numba
import numpy as np

from .projection import read_only

EPS = np.finfo(np.float64).eps


def minimize_piecewise_linear(t: np.ndarray, s: np.ndarray, w: np.ndarray, c: float = 0.0) -> tuple[float, float]:
    """Minimize ``F(b) = c·b + Σ_j w_j max(0, s_j (b - t_j))`` over b; O(m log m).

    Parameters
    ----------
    t : (m,) breakpoints; s : (m,) signs ±1; w : (m,) weights >= 0; c : linear coefficient.

    Left of every breakpoint the slope is ``c - Σ_{s=-1} w_j``; each breakpoint raises it by
    ``w_j``, so the minimum is at the first sorted breakpoint where the slope turns >= 0 (a
    weighted quantile). Needs ``c - Σ_{s=-1} w <= 0 <= c + Σ_{s=+1} w`` (F bounded below).

    Where the minimizers form an interval (every term at a bound: an SVM or SVR with no free
    support vector), b is its middle, as libsvm takes it; an end of the interval can put every
    point on one side of the decision.

    Returns
    -------
    (F_min, b) : the minimal value and a minimizer.
    """
    value, b = _minimize_piecewise_linear(read_only(t), read_only(s), read_only(w), float(c))  # one compiled version
    return float(value), float(b)


@numba.njit(cache=True, error_model="numpy")
def _piecewise_linear(t, s, w, c, b):
    """``F(b)`` of :func:`minimize_piecewise_linear`, and the magnitude of its terms."""
    value, magnitude = c * b, abs(c * b)
    for j in range(t.size):
        value += w[j] * max(0.0, s[j] * (b - t[j]))
        magnitude += w[j] * abs(b - t[j])
    return value, magnitude


@numba.njit(cache=True, error_model="numpy")
def _minimize_piecewise_linear(t, s, w, c):
    """:func:`minimize_piecewise_linear`, compiled: ``(F_min, b)``."""
    order = np.argsort(t, kind="mergesort")
    falling = 0.0
    for j in range(t.size):
        if s[j] < 0:
            falling += w[j]
    k = np.searchsorted(np.cumsum(w[order]), falling - c)
    # Round-off in the cumulative sum can shift k by one where the slope is ~0, so the window of
    # three breakpoints holds the minimizers' interval; values within F's round-off count as equal.
    # b = 0 joins them (inside a flat stretch, as for an SVR whose tube holds every target).
    window = order[max(k - 1, 0): k + 2]
    candidates = np.zeros(window.size + 1)
    candidates[1:] = t[window]
    values, largest = np.empty(candidates.size), 0.0
    for i in range(candidates.size):
        values[i], magnitude = _piecewise_linear(t, s, w, c, candidates[i])
        largest = max(largest, magnitude)
    tolerance = values.min() + 4 * t.size * EPS * largest
    low, high = np.inf, -np.inf
    for i in range(candidates.size):
        if values[i] <= tolerance:
            low, high = min(low, candidates[i]), max(high, candidates[i])
    b = 0.5 * (low + high)
    return _piecewise_linear(t, s, w, c, b)[0], b


#: The machines with compiled primal terms (:func:`primal_terms`), as their ``kind``.
HINGE, EPSILON_INSENSITIVE, ONE_CLASS = 0, 1, 2


def active_terms(margin: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """``magnitude`` where a loss term ``max(0, margin)`` may be nonzero in exact arithmetic, else 0:
    a margin below ``-1e-8·magnitude`` is negative whatever its round-off, and its term is exactly
    0 (the round-off allowance of a loss counts only the other terms)."""
    return np.where(margin >= -1e-8 * magnitude, magnitude, 0.0)


@numba.njit(cache=True, error_model="numpy")
def _active(margin: float, magnitude: float) -> float:
    """:func:`active_terms` of one term."""
    return magnitude if margin >= -1e-8 * magnitude else 0.0


def hinge_loss(decision: np.ndarray, y: np.ndarray, C: np.ndarray, b: float) -> float:
    """``Σ C_i max(0, 1 - y_i (decision_i + b))``."""
    return float(C @ np.maximum(0.0, 1.0 - y * (decision + b)))


@numba.njit(cache=True, error_model="numpy")
def hinge_terms(decision, y, C):
    """``(loss, b, magnitude, weights)`` of the weighted hinge loss of the SVM at its best intercept b
    (term i is ``C_i max(0, -y_i (b - t_i))`` with breakpoint ``t_i = y_i - decision_i``; needs both
    classes): the sum of the absolute values of its terms, and the weights w with
    ``|loss(d + δ) - loss(d)| <= Σ w_i|δ_i|`` (C)."""
    b = _minimize_piecewise_linear(y - decision, -y, C, 0.0)[1]
    loss, magnitude = 0.0, 0.0
    for i in range(decision.size):
        margin = 1.0 - y[i] * (decision[i] + b)
        loss += C[i] * max(margin, 0.0)
        magnitude += C[i] * _active(margin, 1.0 + abs(decision[i]) + abs(b))
    return loss, b, magnitude, C


def best_hinge_intercept(decision: np.ndarray, y: np.ndarray, C: np.ndarray) -> tuple[float, float]:
    """Minimize the weighted hinge loss of the SVM over the intercept ``b`` (:func:`hinge_terms`).

    Returns
    -------
    (loss, b) : the minimal loss and an intercept attaining it.
    """
    decision, y, C = (np.array(v, dtype=np.float64) for v in (decision, y, C))
    loss, b, _, _ = hinge_terms(decision, y, C)
    return float(loss), float(b)


def squared_hinge_loss(decision: np.ndarray, y: np.ndarray, C: np.ndarray, b: float) -> float:
    """``Σ C_i max(0, 1 - y_i (decision_i + b))²``, the squared-hinge (L2) SVM loss."""
    return float(C @ np.maximum(0.0, 1.0 - y * (decision + b)) ** 2)


def best_squared_hinge_intercept(decision: np.ndarray, y: np.ndarray, C: np.ndarray) -> tuple[float, float]:
    """Minimize :func:`squared_hinge_loss` over the intercept b; needs both classes.

    Term i is ``C_i max(0, -y_i(b - t_i))²`` with ``t_i = y_i - decision_i``: F is convex and
    piecewise quadratic, its slope ``2Σ_active C_i (b - t_i)`` nondecreasing. A binary search over
    the sorted breakpoints (each probe an exact O(n) slope) finds the piece where the slope
    crosses 0, and there ``b = Σ_active C_i t_i / Σ_active C_i``.

    Returns ``(loss, b)``.
    """
    t = y - decision

    def active(b: float) -> np.ndarray:
        return -y * (b - t) > 0

    def slope(b: float) -> float:
        on = active(b)
        return float(C[on] @ (b - t[on]))

    ends = np.sort(t)
    if slope(ends[0]) >= 0:
        left, right, probe = -np.inf, ends[0], ends[0] - 1.0
    elif slope(ends[-1]) <= 0:
        left, right, probe = ends[-1], np.inf, ends[-1] + 1.0
    else:
        low, high = 0, ends.size - 1  # invariant: slope(ends[low]) < 0 < slope(ends[high])
        while high - low > 1:
            mid = (low + high) // 2
            if slope(ends[mid]) <= 0:
                low = mid
            else:
                high = mid
        left, right = ends[low], ends[high]
        probe = 0.5 * (left + right)
    on = active(probe)  # the terms active on the piece
    b = float(np.clip(C[on] @ t[on] / np.sum(C[on]), left, right))
    return squared_hinge_loss(decision, y, C, b), b


def epsilon_insensitive_loss(decision: np.ndarray, y: np.ndarray, C: np.ndarray, epsilon: float, b: float) -> float:
    """``Σ C_i max(0, |y_i - decision_i - b| - ε)``, the SVR loss (``eq:gen_perf_meas_SVR``)."""
    return float(C @ np.maximum(0.0, np.abs(y - decision - b) - epsilon))


@numba.njit(cache=True, error_model="numpy")
def svr_terms(decision, y, C, epsilon):
    """``(loss, b, magnitude, weights)`` of the ε-insensitive loss at its best intercept b, as
    :func:`hinge_terms`: with ``r = y - decision`` each term is ``C_i max(0, b - r_i - ε) +
    C_i max(0, r_i - ε - b)`` (for ε >= 0 at most one is positive)."""
    n = decision.size
    t, s, w = np.empty(2 * n), np.empty(2 * n), np.empty(2 * n)
    for i in range(n):
        r = y[i] - decision[i]
        t[i], t[n + i], s[i], s[n + i], w[i], w[n + i] = r + epsilon, r - epsilon, 1.0, -1.0, C[i], C[i]
    b = _minimize_piecewise_linear(t, s, w, 0.0)[1]
    loss, magnitude = 0.0, 0.0
    for i in range(n):
        margin = abs(y[i] - decision[i] - b) - epsilon
        loss += C[i] * max(margin, 0.0)
        magnitude += C[i] * _active(margin, abs(y[i]) + abs(decision[i]) + abs(b) + epsilon)
    return loss, b, magnitude, C


def best_svr_intercept(decision: np.ndarray, y: np.ndarray, C: np.ndarray, epsilon: float) -> tuple[float, float]:
    """Minimize the ε-insensitive loss over the intercept b (:func:`svr_terms`).

    Returns ``(loss, b)``.
    """
    decision, y, C = (np.array(v, dtype=np.float64) for v in (decision, y, C))
    loss, b, _, _ = svr_terms(decision, y, C, float(epsilon))
    return float(loss), float(b)


def one_class_loss(decision: np.ndarray, bound: float, offset: float) -> float:
    """``-ρ' + bound·Σ max(0, ρ' - decision_i)`` at the threshold ``ρ' = offset``: the one-class
    primal's loss (Schölkopf et al. 2001) with ``bound = 1/(νn)``."""
    return float(-offset + bound * np.sum(np.maximum(0.0, offset - decision)))


@numba.njit(cache=True, error_model="numpy")
def one_class_terms(decision, bound):
    """``(loss, ρ', magnitude, weights)`` of the one-class loss at its best threshold ρ', as
    :func:`hinge_terms`. It is the dual of ``max{-decisionᵀα : eᵀα = 1, 0 <= α <= bound}``
    (``eq:gen_perf_meas_1class_svm``), so its minimum is that linear program's value; needs
    ``bound·n >= 1``."""
    weights = np.full(decision.size, bound)
    offset = _minimize_piecewise_linear(decision, np.ones(decision.size), weights, -1.0)[1]
    loss, magnitude = -offset, abs(offset)
    for i in range(decision.size):
        loss += bound * max(offset - decision[i], 0.0)
        magnitude += bound * _active(offset - decision[i], abs(decision[i]) + abs(offset))
    return loss, offset, magnitude, weights


def best_one_class_offset(decision: np.ndarray, bound: float) -> tuple[float, float]:
    """Minimize :func:`one_class_loss` over the threshold ``ρ'`` (:func:`one_class_terms`).

    Returns ``(loss, ρ')``; a point x is an inlier when ``decision(x) - ρ' >= 0``.
    """
    loss, offset, _, _ = one_class_terms(np.array(decision, dtype=np.float64), float(bound))
    return float(loss), float(offset)


@numba.njit(cache=True, error_model="numpy")
def primal_terms(loss, decision, decision_error):
    """``(loss, offset, magnitude, weights)`` at the best offset of the machine ``loss = (kind, labels,
    C, ε, bound)`` (:meth:`indkernel.core.machines.Machine.compiled_loss`): :func:`hinge_terms`,
    :func:`svr_terms` or :func:`one_class_terms` (their weights do not depend on ``decision_error``)."""
    kind, labels, C, epsilon, bound = loss
    if kind == HINGE:
        return hinge_terms(decision, labels, C)
    if kind == EPSILON_INSENSITIVE:
        return svr_terms(decision, labels, C, epsilon)
    return one_class_terms(decision, bound)
