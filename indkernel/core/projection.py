"""Exact Euclidean projection onto a box cut by one hyperplane.

Every feasible set of the paper has this shape: the SVM set ``A = {yᵀα = 0, 0 <= α <= C}``
(``alg:proj_grad``, step 2), the SVR set ``{eᵀα = 0, -C <= α <= C}`` and the one-class set
``{eᵀα = 1, 0 <= α <= 1/(νn)}``. Every solver projects at each step (a projected search several
times), so the projection is compiled (numba): on small problems its binary search of small
NumPy calls cost half as much as a rank-one oracle call (the profile ``figures/small_fits.py`` prints).
"""

from __future__ import annotations

import numba
import numpy as np

EPS = np.finfo(np.float64).eps


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
    x, a, lo, hi = (read_only(v) for v in (x, a, lo, hi))
    z, empty, g_min, g_max = _project(x, a, float(b), lo, hi)
    if empty:
        raise ValueError(
            f"the feasible set is empty: aᵀz ranges over [{g_min:.6g}, {g_max:.6g}] on the box, "
            f"which does not contain b = {float(b):.6g}"
        )
    return z


def read_only(v) -> np.ndarray:
    """A read-only float64 view of v, C-contiguous unless it is a Fortran-ordered matrix: one compiled
    version of a function for every caller (the feasible set's arrays and the stored spectra are
    read-only, a caller's point is not)."""
    v = np.asarray(v, dtype=np.float64)
    fortran = v.flags.f_contiguous and v.ndim == 2
    if not v.flags.writeable and (fortran or v.flags.c_contiguous):
        return v
    v = (v if fortran else np.ascontiguousarray(v)).view()
    v.flags.writeable = False
    return v


def compile_projection() -> None:
    """Compile (or load from numba's cache) the projection and the feasibility measure before a
    solve's clock starts."""
    x, a, lo, hi = (read_only(v) for v in (np.ones(2), np.ones(2), np.zeros(2), np.ones(2)))
    project_box_hyperplane(x, a, 1.0, lo, hi)
    bound_excess(x, a, 1.0, lo, hi)


@numba.njit(cache=True, error_model="numpy")
def _clipped_sum(x, a, lo, hi, lam):
    """``g(λ) = aᵀclip(x - λa, lo, hi)``."""
    total = 0.0
    for i in range(x.size):
        total += a[i] * min(max(x[i] - lam * a[i], lo[i]), hi[i])
    return total


@numba.njit(cache=True, error_model="numpy")
def _enforce_equality(z, a, b, lo, hi):
    """Remove the round-off residual ``aᵀz - b`` of a point of the box in place, keeping it in the box.

    Where ``x`` is far larger than the box, ``x - λa`` cancels and the clipped point can miss the
    hyperplane by far more than round-off (``x = 1e20·e`` with ``a = (1, -1, 1)`` and ``C = 1``
    clips to ``(1, 0, 1)``, ``aᵀz = 2``). The residual is removed along ``a`` on the free
    coordinates; if they cannot absorb it, every coordinate moves toward the bound that reduces
    the residual, in proportion to its room. Two passes leave ``|aᵀz - b|`` at the round-off of
    the sum ``aᵀz`` itself.
    """
    n = z.size
    shifted = np.empty(n)
    for _ in range(2):
        residual, magnitude = -b, abs(b)
        for i in range(n):
            residual += a[i] * z[i]
            magnitude += abs(a[i] * z[i])
        if abs(residual) <= 4 * EPS * magnitude:
            return  # the round-off of the sum itself: nothing left to correct
        free_norm = 0.0
        for i in range(n):
            if lo[i] < z[i] < hi[i]:
                free_norm += a[i] * a[i]
        if free_norm > 0.0:
            moved = -b
            for i in range(n):
                shifted[i] = z[i]
                if lo[i] < z[i] < hi[i]:
                    shifted[i] = min(max(z[i] - residual * a[i] / free_norm, lo[i]), hi[i])
                moved += a[i] * shifted[i]
            if abs(moved) < abs(residual):
                z[:] = shifted
                continue
        # room of each coordinate to lower (residual > 0) or raise aᵀz, and the move that uses it
        total = 0.0
        for i in range(n):
            toward = lo[i] if a[i] * residual > 0 else hi[i]
            total += abs(a[i] * (z[i] - toward))
        if total == 0.0:
            return
        share = min(abs(residual) / total, 1.0)
        for i in range(n):
            toward = lo[i] if a[i] * residual > 0 else hi[i]
            z[i] = min(max(z[i] + share * (toward - z[i]), lo[i]), hi[i])


@numba.njit(cache=True, error_model="numpy")
def _project(x, a, b, lo, hi):
    """``(z, empty, g_min, g_max)`` of :func:`project_box_hyperplane`: ``empty`` says the set is empty
    (then z is not the projection), ``[g_min, g_max]`` is the range of aᵀz over the box."""
    n = x.size
    # the range of aᵀz over the box from the box itself: g at the outer breakpoints can miss it
    # where x - λa cancels (coordinates 1e17 apart against a box of 1)
    g_max, g_min, reach = 0.0, 0.0, 0.0
    for i in range(n):
        g_max += max(a[i] * lo[i], a[i] * hi[i])
        g_min += min(a[i] * lo[i], a[i] * hi[i])
        reach += abs(a[i]) * max(abs(lo[i]), abs(hi[i]))
    slack = 1e-12 * max(1.0, abs(b), reach)
    if not (g_min - slack <= b <= g_max + slack):
        return np.empty(0), True, g_min, g_max
    breakpoints = np.empty(2 * n)
    for i in range(n):
        breakpoints[i], breakpoints[n + i] = (x[i] - hi[i]) / a[i], (x[i] - lo[i]) / a[i]
    breakpoints.sort()
    left, right = 0, 2 * n - 1
    while right - left > 1:  # invariant: g(t[left]) >= b >= g(t[right])
        mid = (left + right) // 2
        if _clipped_sum(x, a, lo, hi, breakpoints[mid]) >= b:
            left = mid
        else:
            right = mid
    t_left, t_right = breakpoints[left], breakpoints[right]
    middle = 0.5 * (t_left + t_right)
    fixed_part, free_part, free_norm = 0.0, 0.0, 0.0
    for i in range(n):
        m = x[i] - middle * a[i]
        if lo[i] < m < hi[i]:
            free_part += a[i] * x[i]
            free_norm += a[i] * a[i]
        else:
            fixed_part += a[i] * min(max(m, lo[i]), hi[i])
    lam = t_left  # no free coordinate: g is flat, equal to b, on this piece, so any λ in it is exact
    if t_right > t_left and free_norm > 0.0:
        lam = min(max((fixed_part + free_part - b) / free_norm, t_left), t_right)
    z = np.empty(n)
    for i in range(n):
        z[i] = min(max(x[i] - lam * a[i], lo[i]), hi[i])
    _enforce_equality(z, a, b, lo, hi)
    return z, False, g_min, g_max


@numba.njit(cache=True, error_model="numpy")
def bound_excess(x, a, b, lo, hi):
    """``(e_max, ‖e‖₂, |aᵀx - b|)`` for the excess ``e = max(lo - x, 0) + max(x - hi, 0)`` of x
    over the box, in one pass (what :meth:`FeasibleSet.violation
    <indkernel.core.feasible_set.FeasibleSet.violation>` and ``distance_bound`` need); the norm
    scaled by the largest entry, so its squares do not overflow."""
    largest, residual = 0.0, -b
    for i in range(x.size):
        largest = max(largest, lo[i] - x[i], x[i] - hi[i])
        residual += a[i] * x[i]
    total = 0.0
    if largest > 0.0:
        for i in range(x.size):
            excess = max(lo[i] - x[i], 0.0) + max(x[i] - hi[i], 0.0)
            total += (excess / largest) ** 2
    return largest, largest * np.sqrt(total), abs(residual)
