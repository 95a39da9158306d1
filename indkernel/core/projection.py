"""Exact Euclidean projection onto a box cut by one hyperplane.

Every feasible set of the paper has this shape: the SVM set ``A = {yᵀα = 0, 0 <= α <= C}``
(``alg:proj_grad``, step 2), the SVR set ``{eᵀα = 0, -C <= α <= C}`` and the one-class set
``{eᵀα = 1, 0 <= α <= 1/(νn)}``.
"""

from __future__ import annotations

import numpy as np


def project_box_hyperplane(x: np.ndarray, a: np.ndarray, b: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Project ``x`` onto ``{z : aᵀz = b, lo <= z <= hi}`` exactly, in O(n log n).

    The KKT conditions give ``z(λ) = clip(x - λa, lo, hi)`` for the multiplier λ of the
    hyperplane; ``g(λ) = aᵀz(λ)`` is continuous, piecewise linear and nonincreasing with
    breakpoints ``(x - hi)/a`` and ``(x - lo)/a``. After sorting them, a binary search
    (each probe an exact O(n) evaluation of g) finds the piece where ``g = b``; on that piece
    the free coordinates give λ in closed form.

    Parameters
    ----------
    x : (n,) array, the point to project.
    a : (n,) array, nonzero entries (the labels y for the SVM set).
    b : float, right-hand side.
    lo, hi : (n,) arrays with ``lo <= hi`` (equal bounds are allowed).

    Returns
    -------
    z : (n,) array, the projection.

    Raises
    ------
    ValueError
        If the set is empty (``b`` outside the range of ``aᵀz`` over the box).
    """
    breakpoints = np.sort(np.concatenate(((x - hi) / a, (x - lo) / a)))

    def g(lam: float) -> float:
        return float(a @ np.clip(x - lam * a, lo, hi))

    left, right = 0, breakpoints.size - 1
    # the range of aᵀz over the box from the box itself: g at the outer breakpoints can miss it
    # where x - λa cancels (coordinates 1e17 apart against a box of 1)
    g_max, g_min = float(np.maximum(a * lo, a * hi).sum()), float(np.minimum(a * lo, a * hi).sum())
    slack = 1e-12 * max(1.0, abs(b), float(np.abs(a) @ np.maximum(np.abs(lo), np.abs(hi))))
    if not g_min - slack <= b <= g_max + slack:
        raise ValueError(
            f"the feasible set is empty: aᵀz ranges over [{g_min:.6g}, {g_max:.6g}] on the box, "
            f"which does not contain b = {b:.6g}"
        )
    while right - left > 1:  # invariant: g(t[left]) >= b >= g(t[right])
        mid = (left + right) // 2
        if g(breakpoints[mid]) >= b:
            left = mid
        else:
            right = mid
    t_left, t_right = breakpoints[left], breakpoints[right]
    middle = x - 0.5 * (t_left + t_right) * a
    free = (middle > lo) & (middle < hi)
    if t_right > t_left and np.any(free):
        fixed_part = a[~free] @ np.clip(middle[~free], lo[~free], hi[~free])
        lam = (fixed_part + a[free] @ x[free] - b) / (a[free] @ a[free])
        lam = min(max(lam, t_left), t_right)
    else:  # no free coordinate: g is flat, equal to b, on this piece, so any λ in it is exact
        lam = t_left
    return enforce_equality(np.clip(x - lam * a, lo, hi), a, b, lo, hi)


def enforce_equality(z: np.ndarray, a: np.ndarray, b: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Remove the round-off residual ``aᵀz - b`` of a point of the box, keeping it in the box.

    Where ``x`` is far larger than the box, ``x - λa`` cancels and the clipped point can miss the
    hyperplane by far more than round-off (``x = 1e20·e`` with ``a = (1, -1, 1)`` and ``C = 1``
    clips to ``(1, 0, 1)``, ``aᵀz = 2``). The residual is removed along ``a`` on the free
    coordinates; if they cannot absorb it, every coordinate moves toward the bound that reduces
    the residual, in proportion to its room. Two passes leave ``|aᵀz - b|`` at the round-off of
    the sum ``aᵀz`` itself.
    """
    for _ in range(2):
        residual = float(a @ z) - b
        if abs(residual) <= 4 * np.finfo(float).eps * (float(np.abs(a) @ np.abs(z)) + abs(b)):
            break  # the round-off of the sum itself: nothing left to correct
        free = (z > lo) & (z < hi)
        if np.any(free):
            shifted = z.copy()
            shifted[free] -= residual * a[free] / (a[free] @ a[free])
            shifted = np.clip(shifted, lo, hi)
            if abs(float(a @ shifted) - b) < abs(residual):
                z = shifted
                continue
        # room of each coordinate to lower (residual > 0) or raise aᵀz, and the move that uses it
        toward = np.where(a * residual > 0, lo, hi)
        room = np.abs(a * (z - toward))
        total = room.sum()
        if total == 0.0:
            break
        z = np.clip(z + min(abs(residual) / total, 1.0) * (toward - z), lo, hi)
    return z
