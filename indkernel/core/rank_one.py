"""Eigenpairs of ``diag(d) + ρzzᵀ`` in O(n²): the rank-one update of section "Computing proxy kernels".

Steps (Golub 1973; Bunch, Nielsen & Sorensen 1978; Li 1993; Gu & Eisenstat 1994; as LAPACK's
divide and conquer does them in ``dlaed2/3/4``):

1. **Deflation.** With ``‖z‖ = 1`` and ``tol = 8 eps max(max|d|, ρ)``: a component with
   ``ρ|z_i| <= tol`` leaves ``(d_i, e_i)`` an eigenpair; two poles with ``|(d_q - d_p) c s| <= tol``
   after the Givens rotation that zeroes ``z_p`` leave ``(c²d_p + s²d_q, e_p)`` one. The remaining
   poles are strictly increasing and their ``z`` components are not small.
2. **Secular equation** ``f(λ) = 1/ρ + Σ z_i²/(d_i - λ) = 0``, solved for ``(diag(d) + ρzzᵀ)/s``
   with ``s`` the power of 2 that brings ``max(|d|, ρ)`` near 1 (exact; keeps ``1/(d - λ)³`` in
   range): one root in each ``(d_j, d_{j+1})`` and one in ``(d_K, d_K + ρ]``, so interlacing holds
   by construction. Each root is kept as ``λ_j = d_o + τ_j`` from its nearer pole ``d_o``, so every
   difference ``d_i - λ_j = (d_i - d_o) - τ_j`` has high relative accuracy. The zero finder
   follows LAPACK's ``dlaed4``: a first evaluation at the middle of the interval picks the
   nearer pole; each step then solves a local model of f, O(1) to solve: the two poles that
   bracket the root exactly, and the remaining poles of each side as one pole each (the next
   one out), weighted to match their value, slope and curvature (Gragg's osculating fit;
   Li's "middle way", slopes only, when that fit gives a negative weight). It converges
   cubically (3.5 evaluations of f per root on average, see ``RankOneEigen.evaluations``), is
   safeguarded by a bracket (bisection whenever a step leaves it) and stops by ``dlaed4``'s
   rounding-error bound on f.
3. **Gu–Eisenstat.** The computed roots are the exact eigenvalues of ``diag(d) + ρẑẑᵀ`` with
   ``ẑ_i² = -(d_i - λ_i) Π_{j≠i} (d_i - λ_j)/(d_i - d_j) / ρ`` (Löwner); its eigenvectors
   ``ẑ / (d - λ_j)``, normalized, are orthogonal to working precision. The product is
   accumulated while the roots are found, from the reciprocals ``1/(d - λ_j)`` of each root's
   last evaluation (no division, no K×K array), and eigenvectors are formed only for the
   eigenvalues asked for.

Why numba and not LAPACK's ``dlaed4`` (reached through ``scipy.linalg.cython_lapack``): ``dlaed4``
is scalar code called once per root, and the K×K differences it returns had to be stored and
read twice more (Löwner, eigenvectors); the results page's oracle benchmark compares the two.
Compiled here, the sums over the poles run in SIMD
(their terms share a sign, so their order is free; one division per term is the limit), the
roots are split between threads, the Löwner product is fused into the root loop, and the
eigenvector sums the oracle needs are formed column by column without storing a column block.
Numba compiles once per machine (``cache=True``); the only new dependency is numba itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from .._progress import if_slow
from .projection import compile_projection, read_only

EPS = float(np.finfo(np.float64).eps)
#: Zero-finder steps per root before giving up (bisection alone halves the bracket each step).
MAX_STEPS = 100
#: Middle-way steps on a step's local model of f (:func:`_model_root`). The model only steers the
#: next evaluation of f, which decides convergence: three steps take as few evaluations per root as
#: solving the model to the last bit (3.5-3.7 on USPS Simpson kernels of 100 to 1000 points) and the
#: secular equation 5-17 % less time at 250-500 points (``oracle_benchmark.stages`` in figures/).
MODEL_STEPS = 3
#: The sums of the secular function: reassociation lets them run in SIMD (all terms of one sum
#: have the same sign, so any order has the same error bound). Only these sums use it.
_SUMS = {"reassoc", "contract"}


class SecularEquationError(RuntimeError):
    """The zero finder did not converge for a root."""


@numba.njit(cache=True, error_model="numpy", fastmath=_SUMS)
def _pole_sums(p, z2, tau, start, stop, near_end_last):
    """``Σ z_i²/(p_i - τ)``, its derivative ``Σ z_i²/(p_i - τ)²`` and half second derivative
    ``Σ z_i²/(p_i - τ)³`` over ``start <= i < stop``, and ``dlaed4``'s bound on the rounding error
    of summing from the far end to the near one (the sum of the partial sums' magnitudes: each
    term counted once per partial sum it is in).

    The loop stores nothing: one that also stored ``1/(p_i - τ)`` got LLVM's runtime overlap
    checks of that array against ``p`` and ``z²``, which chose the vector or the scalar order of
    the sums by the arrays' addresses, so a root differed in its last bit from one call to the
    next (numba 0.68)."""
    p, z2 = p[start:stop], z2[start:stop]  # (slices from 0 let LLVM vectorize)
    count = p.size
    first, slope = (count, -1) if near_end_last else (1, 1)
    s = ds = dds = e = 0.0
    for i in range(count):
        q = 1.0 / (p[i] - tau)
        term = z2[i] * q
        s += term
        ds += term * q
        dds += term * q * q
        e += term * (first + slope * i)
    return s, ds, dds, abs(e)


@numba.njit(cache=True, error_model="numpy")
def _reciprocals(p, tau, q):
    """``q = 1/(p - τ)``: what the Löwner product needs of a root's last evaluation."""
    for i in range(p.size):
        q[i] = 1.0 / (p[i] - tau)


@numba.njit(cache=True, error_model="numpy")
def _quadratic_root(c, a, b, low, high):
    """The root of ``c x² - a x + b = 0`` in ``(low, high)`` (the smaller one if both are), else NaN."""
    if c == 0.0:
        candidates = (b / a if a != 0.0 else np.nan, np.nan)
    else:
        q = a + np.copysign(np.sqrt(abs(a * a - 4.0 * b * c)), a)
        candidates = (2.0 * b / q if q != 0.0 else np.nan, q / (2.0 * c))
    best = np.nan
    for x in candidates:
        if low < x < high and (np.isnan(best) or abs(x) < abs(best)):
            best = x
    return best


@numba.njit(cache=True, error_model="numpy")
def _two_pole_step(w, slope_left, slope_right, dl, dr, low, high):
    """Li's middle way: the step η to the root, in ``(low, high)``, of ``c + s_l/(dl - η) +
    s_r/(dr - η)``, each side of a sum of poles replaced by its nearest pole (at distance ``dl``,
    ``dr``) with the weight that matches that side's slope; ``c`` matches the value ``w``."""
    return _quadratic_root(w - dl * slope_left - dr * slope_right,
                           (dl + dr) * w - dl * dr * (slope_left + slope_right), dl * dr * w, low, high)


@numba.njit(cache=True, error_model="numpy")
def _pole(weight, distance, x):
    """``weight/(distance - x)`` and its slope (0 for a missing pole: weight 0, distance ∞)."""
    if weight == 0.0:
        return 0.0, 0.0
    q = 1.0 / (distance - x)
    return weight * q, weight * q * q


@numba.njit(cache=True, error_model="numpy")
def _model_root(c, w_far_left, a_far_left, w_left, a_left, w_right, a_right, w_far_right, a_far_right,
                pole_low, pole_high, low, high):
    """The root in ``(low, high)`` of the local model ``m(x) = c + Σ w_k/(a_k - x)`` of f (weights
    >= 0, so m increases between its poles): at most ``MODEL_STEPS`` middle-way steps on m itself,
    bracketed. O(1)."""
    x = 0.0
    for _ in range(MODEL_STEPS):
        t1, s1 = _pole(w_far_left, a_far_left, x)
        t2, s2 = _pole(w_left, a_left, x)
        t3, s3 = _pole(w_right, a_right, x)
        t4, s4 = _pole(w_far_right, a_far_right, x)
        m = c + t1 + t2 + t3 + t4
        if abs(m) <= 4.0 * EPS * (abs(c) + abs(t1) + abs(t2) + abs(t3) + abs(t4)):
            return x  # m is zero to its own rounding
        if m < 0:
            low = max(low, x)
        else:
            high = min(high, x)
        step = x + _two_pole_step(m, s1 + s2, s3 + s4, a_left - x, a_right - x, pole_low - x, pole_high - x)
        if not low < step < high:
            step = 0.5 * (low + high)
        if step == x or not abs(step - x) > 2.0 * EPS * abs(step):
            return step
        x = step
    return x


@numba.njit(cache=True, error_model="numpy")
def _find_root(d, z2, rho, j, p, q):
    """Root ``j`` of ``f(λ) = 1/ρ + Σ z_i²/(d_i - λ)`` (strictly increasing d, ``Σ z_i² = 1``) as
    ``(o, τ, evaluations of f)`` with ``λ_j = d_o + τ``; the work arrays (length K) are left holding
    ``p = d - d_o`` and ``q = 1/(p - τ)``. ``o = -1`` if the zero finder did not converge.

    Each step solves a local model of f: the two poles bracketing the root exact, and each side's
    remaining poles replaced by their nearest one, weighted to match the rest's value, slope and
    curvature (Gragg's osculating fit; each side's own slope, Li's middle way, when that fit
    gives a negative weight). The first evaluation, at the middle of the interval (beyond the
    last pole: at ρ/2), also decides which half holds the root and so its nearer pole."""
    K = d.size
    if K == 1:
        p[0], q[0] = 0.0, -1.0 / (rho * z2[0])
        return 0, rho * z2[0], 0
    last = j == K - 1
    left = K - 2 if last else j
    right = left + 1
    rho_inv = 1.0 / rho
    origin = K - 1 if last else left
    shift = d[origin]
    for i in range(K):
        p[i] = d[i] - shift
    half = 0.5 * rho if last else 0.5 * (d[right] - d[left])
    tau, lower, upper = half, 0.0, 0.0
    for count in range(MAX_STEPS):
        psi, dpsi, d2psi, e_psi = _pole_sums(p, z2, tau, 0, left, True)
        phi, dphi, d2phi, e_phi = _pole_sums(p, z2, tau, right + 1, K, False)
        al, ar = p[left] - tau, p[right] - tau
        ql, qr = 1.0 / al, 1.0 / ar
        tl, tr = z2[left] * ql, z2[right] * qr
        w = rho_inv + psi + tl + phi + tr
        if count == 0:
            lower, upper = (0.0, half) if w >= 0 else (half, 2.0 * half)
        else:
            slopes = dpsi + dphi + tl * ql + tr * qr
            bound = 8.0 * (phi + tr - psi - tl) + e_psi + e_phi + 2.0 * rho_inv + 3.0 * (abs(tl) + abs(tr)) \
                + abs(tau) * slopes
            if abs(w) <= EPS * bound:
                _reciprocals(p, tau, q)
                return origin, tau, count + 1
            if w <= 0:
                lower = max(lower, tau)
            else:
                upper = min(upper, tau)
        # the rest of each side as one pole, next beyond the bracketing ones
        a = p[left - 1] - tau if left >= 1 else np.inf
        b = p[right + 1] - tau if right + 1 < K else np.inf
        u, v = dpsi, dphi
        if left >= 1 and right + 1 < K:
            fit = ((d2psi + d2phi) * b - dpsi - dphi) * a / (b - a)
            if 0 < fit < dpsi + dphi:
                u, v = fit, dpsi + dphi - fit
        c = w - tl - tr - (u * a if left >= 1 else 0.0) - (v * b if right + 1 < K else 0.0)
        pole_low, pole_high = (ar, np.inf) if last else (al, ar)
        eta = _model_root(c, u * a * a if left >= 1 else 0.0, a, z2[left], al, z2[right], ar,
                          v * b * b if right + 1 < K else 0.0, b, pole_low, pole_high,
                          max(pole_low, lower - tau), min(pole_high, upper - tau))
        step = tau + eta
        if count == 0 and not last and w < 0:  # the root is nearer d_right: measure from there
            origin, shift = right, d[right]
            for i in range(K):
                p[i] = d[i] - shift
            tau, step, lower, upper = tau - 2.0 * half, step - 2.0 * half, -half, 0.0
        if not lower < step < upper:
            step = 0.5 * (lower + upper)
        if step == tau:
            _reciprocals(p, tau, q)
            return origin, tau, count + 1
        tau = step
    return -1, tau, MAX_STEPS


# The threaded functions below (``parallel=True``) hold their ``prange`` loop and nothing else
# numba would spread over its threads: an array expression there (``np.zeros``, a sum) is one more
# launch of numba's thread pool, so their arrays are made and summed by these; and given one
# thread they run the loop's body in the calling thread, with no launch at all. Small problems
# run on one thread (:func:`indkernel.core.threads.threads_for`); there the launches had taken a
# quarter of an oracle point's time (n = 50 to 250).
@numba.njit(cache=True, error_model="numpy")
def _zeros(shape):
    return np.zeros(shape)


@numba.njit(cache=True, error_model="numpy")
def _roots_workspace(z, chunks):
    """z², the chunks' partial products (ones) and their counts (failures, evaluations) for
    :func:`_secular_roots`."""
    return z * z, np.ones((chunks, z.size)), np.zeros((chunks, 2), np.int64)


@numba.njit(cache=True, error_model="numpy")
def _total(parts):
    """The sum over the first axis (over the threads' parts)."""
    return parts.sum(axis=0)


@numba.njit(cache=True, error_model="numpy")
def _roots_of_chunk(d, z2, rho, origin, tau, product, start, stop, counts):
    """Roots ``start`` to ``stop - 1`` of :func:`_secular_roots`, their factors multiplied into
    ``product``; ``counts``: (failures, evaluations) added."""
    K = d.size
    p, q = np.empty(K), np.empty(K)
    for j in range(start, stop):
        o, t, count = _find_root(d, z2, rho, j, p, q)
        counts[1] += count
        if o < 0:
            counts[0] += 1
            continue
        origin[j], tau[j] = o, t
        own, dj = product[j], d[j]
        for i in range(K):
            product[i] *= (d[i] - dj) * q[i]
        product[j] = own * q[j]


@numba.njit(cache=True, error_model="numpy")
def _selected_roots(d, z2, rows, rho):
    """Roots ``rows`` of :func:`_find_root` as ``(origin, τ)``, origin -1 for a root not found: the
    device route's last few roots (:class:`indkernel.core.device_oracle.SecularRoots`)."""
    K = d.size
    p, q = np.empty(K), np.empty(K)
    origin, tau = np.empty(rows.size, np.int64), np.empty(rows.size)
    for k in range(rows.size):
        origin[k], tau[k], _ = _find_root(d, z2, rho, rows[k], p, q)
    return origin, tau


@numba.njit(cache=True, error_model="numpy", parallel=True)
def _secular_roots(d, z, rho, origin, tau, threads):
    """All roots (into ``origin``, ``τ``) and the Löwner vector ẑ, accumulated root by root.

    Returns ``(ẑ, failures, evaluations of f)``. The product is kept inverted, ``R_i = Π_{j≠i} (d_i - d_j) / Π_j
    (d_i - λ_j)``, so each root multiplies by ``(d_i - d_j) q_i`` with the ``q = 1/(d - λ_j)`` of
    its last evaluation: no division. The roots are split into one contiguous chunk per thread,
    each with its own partial product (bounded by interlacing: no over- or underflow)."""
    K = d.size
    chunks = min(threads, K)
    z2, inverse, counts = _roots_workspace(z, chunks)
    if chunks == 1:
        _roots_of_chunk(d, z2, rho, origin, tau, inverse[0], 0, K, counts[0])
    else:
        for c in numba.prange(chunks):
            _roots_of_chunk(d, z2, rho, origin, tau, inverse[c], c * K // chunks, (c + 1) * K // chunks, counts[c])
    failures, evaluations = _total(counts)
    return _loewner_vector(z, rho, inverse), failures, evaluations


@numba.njit(cache=True, error_model="numpy")
def _loewner_vector(z, rho, inverse):
    """ẑ from the partial products of :func:`_secular_roots` (one row per chunk)."""
    z_hat = np.empty(z.size)
    for i in range(z.size):
        total = 1.0
        for c in range(inverse.shape[0]):
            total *= inverse[c, i]
        z_hat[i] = np.copysign(np.sqrt(max(-1.0 / total, 0.0) / rho), z[i])
    return z_hat


@numba.njit(cache=True, error_model="numpy")
def _column(d, z_hat, o, t, out):
    """Eigenvector ``ẑ / (d - λ)`` for ``λ = d_o + τ`` into ``out``, unnormalized; returns its norm."""
    do = d[o]
    for i in range(d.size):
        out[i] = z_hat[i] / ((d[i] - do) - t)
    return np.sqrt(_dot(out, out))


@numba.njit(cache=True, error_model="numpy", fastmath=_SUMS)
def _dot(a, b):
    """``aᵀb``, in SIMD."""
    s = 0.0
    for i in range(a.size):
        s += a[i] * b[i]
    return s


@numba.njit(cache=True, error_model="numpy")
def _unit_column(d, z_hat, origin, tau, j, out):
    """The normalized eigenvector of root j into ``out``."""
    norm = _column(d, z_hat, origin[j], tau[j], out)
    for i in range(out.size):
        out[i] /= norm


@numba.njit(cache=True, error_model="numpy", parallel=True)
def _eigenvectors(d, z_hat, origin, tau, roots, threads):
    """Normalized eigenvectors for the roots ``roots``, as an (m, K) array (one row each)."""
    X = np.empty((roots.size, d.size))
    if threads == 1:
        for k in range(roots.size):
            _unit_column(d, z_hat, origin, tau, roots[k], X[k])
    else:
        for k in numba.prange(roots.size):
            _unit_column(d, z_hat, origin, tau, roots[k], X[k])
    return X


@numba.njit(cache=True, error_model="numpy")
def _vectors(source, n, kept, poles, z_hat, origin, tau, rotations, threads):
    """The (n, m) orthonormal eigenvectors (Fortran order) of the eigenvalues whose ``source``
    (:class:`RankOneEigen`'s) is given: the roots' from the Löwner vector, a deflated one a unit
    vector, both rotated back."""
    if kept.size == n:  # nothing deflated, nothing rotated: one array, no copy
        return _eigenvectors(poles, z_hat, origin, tau, source, threads).T
    roots = np.flatnonzero(source >= 0)
    rows = _eigenvectors(poles, z_hat, origin, tau, source[roots], threads)
    X = np.zeros((source.size, n))  # one row per vector; transposed on return
    for k in range(roots.size):
        for i in range(kept.size):
            X[roots[k], kept[i]] = rows[k, i]
    for k in range(source.size):
        if source[k] < 0:
            X[k, -1 - source[k]] = 1.0
    return _unrotate(X.T, rotations)


@numba.njit(cache=True, error_model="numpy")
def _sums_of_chunk(d, z_hat, origin, tau, roots, lam, z, r, start, stop, sums):
    """The terms ``start`` to ``stop - 1`` of :func:`_eigenvector_sums` added to ``sums`` (3, K)."""
    w = np.empty(d.size)
    t, x, y = sums[0], sums[1], sums[2]
    for k in range(start, stop):
        j = roots[k]
        norm = _column(d, z_hat, origin[j], tau[j], w)
        a, b = lam[k] * _dot(w, z) / (norm * norm), r[k] / norm
        for i in range(d.size):
            t[i] += a * w[i]
            x[i] += b * w[i]
            y[i] += lam[k] * b * w[i]


@numba.njit(cache=True, error_model="numpy", parallel=True)
def _eigenvector_sums(d, z_hat, origin, tau, roots, lam, z, r, threads):
    """With ``W`` the normalized eigenvectors of ``roots`` (never stored) and ``Λ = diag(lam)``:
    ``(WΛWᵀz, Wr, WΛr)``, one column at a time, the columns split between threads."""
    K, m = d.size, roots.size
    chunks = max(min(threads, m), 1)
    sums = _zeros((chunks, 3, K))
    if chunks == 1:
        _sums_of_chunk(d, z_hat, origin, tau, roots, lam, z, r, 0, m, sums[0])
    else:
        for c in numba.prange(chunks):
            _sums_of_chunk(d, z_hat, origin, tau, roots, lam, z, r, c * m // chunks, (c + 1) * m // chunks, sums[c])
    total = _total(sums)
    return total[0], total[1], total[2]


@numba.njit(cache=True, error_model="numpy", parallel=True, fastmath=_SUMS)
def transposed_product(V: np.ndarray, u: np.ndarray, threads: int) -> np.ndarray:
    """``Vᵀu`` for a Fortran-ordered V (its columns contiguous), one dot product per column, on
    numba's threads (``threads == 1``: in the calling thread).

    The rank-one oracle's products with ``V0`` are done here rather than by BLAS: between them
    run numba's threads, and BLAS threads left spinning after a product slowed those down
    several-fold."""
    VT = V.T
    out = np.empty(VT.shape[0])
    if threads == 1:
        for j in range(VT.shape[0]):
            out[j] = _dot(VT[j], u)
    else:
        for j in numba.prange(VT.shape[0]):
            out[j] = _dot(VT[j], u)
    return out


@numba.njit(cache=True, error_model="numpy")
def _columns_sum(VT, s, start, stop, part):
    """``part += Σ_j s_j V[:, j]`` over the columns ``start`` to ``stop - 1``."""
    for j in range(start, stop):
        column, sj = VT[j], s[j]
        for i in range(part.size):
            part[i] += sj * column[i]


@numba.njit(cache=True, error_model="numpy", parallel=True)
def product(V: np.ndarray, s: np.ndarray, threads: int) -> np.ndarray:
    """``Vs`` for a Fortran-ordered V: each thread sums its share of the scaled columns."""
    VT = V.T
    m, n = VT.shape
    chunks = max(min(threads, m), 1)
    parts = _zeros((chunks, n))
    if chunks == 1:
        _columns_sum(VT, s, 0, m, parts[0])
    else:
        for c in numba.prange(chunks):
            _columns_sum(VT, s, c * m // chunks, (c + 1) * m // chunks, parts[c])
    return _total(parts)


@numba.njit(cache=True, error_model="numpy")
def _deflate(d, z, rho, tol):
    """Deflation (step 1) in place on ``d`` and the unit ``z``: returns the mask of deflated
    components and the Givens rotations ``(p, q, c, s)`` applied, in order."""
    n = d.size
    small = rho * np.abs(z) <= tol
    rotations = np.empty((n, 4))
    count = 0
    p = -1  # the previous kept component
    for q in range(n):
        if small[q]:
            continue
        if p >= 0 and d[q] - d[p] <= 2.0 * tol:  # |(d_q - d_p) c s| <= tol needs a gap <= 2 tol
            tau = np.hypot(z[p], z[q])
            c, s = z[q] / tau, z[p] / tau
            if abs((d[q] - d[p]) * c * s) <= tol:
                d[p], d[q] = c * c * d[p] + s * s * d[q], s * s * d[p] + c * c * d[q]
                z[p], z[q] = 0.0, tau
                small[p] = True
                rotations[count, 0], rotations[count, 1], rotations[count, 2], rotations[count, 3] = p, q, c, s
                count += 1
        p = q
    return small, rotations[:count]


@numba.njit(cache=True, error_model="numpy")
def _rotate(X, rotations):
    """Rows of X into the deflated coordinates, ``x' = Gx`` (the rotations in order)."""
    for k in range(rotations.shape[0]):
        p, q, c, s = int(rotations[k, 0]), int(rotations[k, 1]), rotations[k, 2], rotations[k, 3]
        for i in range(X.shape[1]):
            xp, xq = X[p, i], X[q, i]
            X[p, i], X[q, i] = c * xp - s * xq, s * xp + c * xq
    return X


@numba.njit(cache=True, error_model="numpy")
def _unrotate(X, rotations):
    """Rows of X back to the caller's coordinates, ``x = Gᵀx'`` (the rotations undone in reverse)."""
    for k in range(rotations.shape[0] - 1, -1, -1):
        p, q, c, s = int(rotations[k, 0]), int(rotations[k, 1]), rotations[k, 2], rotations[k, 3]
        for i in range(X.shape[1]):
            xp, xq = X[p, i], X[q, i]
            X[p, i], X[q, i] = c * xp + s * xq, -s * xp + c * xq
    return X


@numba.njit(cache=True, error_model="numpy")
def _deflated(d, z, rho):
    """Step 1 and the scaling of step 2 for ``diag(d) + ρzzᵀ``: ``(d, z, small, rotations, kept,
    poles, w, ρ', scale)`` with d and the unit z deflated in place (copies), the mask and the
    rotations of :func:`_deflate`, the kept indices, and the secular equation of the kept part:
    poles ``d[kept]/scale``, unit ``w`` and ``ρ'`` (``scale`` the power of 2 that makes the
    largest of |d| and ρ about 1). The zero finder of either route (this module's, or
    :mod:`indkernel.core.device_oracle`'s on an array namespace) runs between this and
    :func:`_assembled`."""
    d, z = d.copy(), z.copy()
    n = d.size
    norm = np.sqrt(np.sum(z * z))
    rho = rho * norm * norm
    if norm > 0:
        z /= norm
    tol = 8 * EPS * max(np.max(np.abs(d)) if n else 0.0, rho)
    small, rotations = _deflate(d, z, rho, tol)
    kept = np.flatnonzero(~small)
    scale, poles, w = 1.0, np.zeros(0), np.zeros(0)
    if kept.size:
        w = z[kept]  # the zero finder wants a unit vector: fold the norm lost to deflation into ρ
        w_norm = np.sqrt(np.sum(w * w))
        rho *= w_norm * w_norm
        # the secular equation of (diag(d) + ρwwᵀ)/scale, scale a power of 2 (exact) making the
        # largest of |d| and ρ about 1: the sums' powers of 1/(d - λ) neither over- nor underflow
        scale = math.ldexp(1.0, math.frexp(max(np.max(np.abs(d[kept])), rho))[1])
        poles, w = d[kept] / scale, w / w_norm
    return d, norm * z, small, rotations, kept, poles, w, rho / scale, scale


@numba.njit(cache=True, error_model="numpy")
def _assembled(d, small, kept, poles, origin, tau, scale):
    """``(values, source)``: the eigenvalues ascending, the roots ``scale(poles[origin] + τ)`` (root
    j in ``(d_j, d_{j+1})``) merged with the deflated ``d_i``, and each one's source (the root's
    index, or ``-1 - i`` for a deflated component)."""
    values, source = scale * (poles[origin] + tau), np.arange(kept.size)
    if kept.size < d.size:
        deflated = np.flatnonzero(small)
        values = np.concatenate((values, d[deflated]))
        source = np.concatenate((source, -1 - deflated))
        order = np.argsort(values, kind="mergesort")
        values, source = values[order], source[order]
    return values, source


@numba.njit(cache=True, error_model="numpy")
def _decomposition(d, z, rho, threads):
    """Steps 1-3 for ``diag(d) + ρzzᵀ`` (what :func:`rank_one_eigen` returns, as arrays):
    ``(values, source, kept, poles, ẑ, origin, τ, z rotated, rotations, evaluations, failures)``
    (the fields of :class:`RankOneEigen`; ``failures``: roots the zero finder missed)."""
    d, z, small, rotations, kept, poles, w, rho, scale = _deflated(d, z, rho)
    origin, tau = np.zeros(kept.size, np.int64), np.zeros(kept.size)
    z_hat, failures, evaluations = np.zeros(0), 0, 0
    if kept.size:
        z_hat, failures, evaluations = _secular_roots(poles, w, rho, origin, tau, threads)
    values, source = _assembled(d, small, kept, poles, origin, tau, scale)
    return values, source, kept, poles, z_hat, origin, tau, z, rotations, evaluations, failures


@numba.njit(cache=True, error_model="numpy")
def _selected_sums(source, lam, kept, poles, z_hat, origin, tau, rotations, s, r, threads):
    """``(WΛWᵀs, Wr, WΛr)`` for the eigenvectors W of the eigenvalues ``lam`` (their ``source``
    entries), s in the deflated coordinates (:meth:`RankOneEigen.eigenvector_sums`); the results
    in the caller's."""
    if kept.size == s.size:  # nothing deflated (the common case)
        return _eigenvector_sums(poles, z_hat, origin, tau, source, lam, s, r, threads)
    roots = np.flatnonzero(source >= 0)
    t, x, y = _eigenvector_sums(poles, z_hat, origin, tau, source[roots], lam[roots], s[kept], r[roots], threads)
    return _with_deflated(source, lam, kept, rotations, s, r, t, x, y)


@numba.njit(cache=True, error_model="numpy")
def _with_deflated(source, lam, kept, rotations, s, r, t, x, y):
    """The sums of :func:`_selected_sums` from those ``(t, x, y)`` over the roots (on the kept
    components): the deflated components' unit vectors added, the rotations undone."""
    n = s.size
    sums = np.zeros((n, 3))
    for k in range(kept.size):
        sums[kept[k], 0], sums[kept[k], 1], sums[kept[k], 2] = t[k], x[k], y[k]
    for k in range(source.size):
        if source[k] < 0:  # the unit vector e_i of a deflated component
            i = -1 - source[k]
            sums[i, 0] += lam[k] * s[i]
            sums[i, 1] += r[k]
            sums[i, 2] += lam[k] * r[k]
    _unrotate(sums, rotations)
    return sums[:, 0].copy(), sums[:, 1].copy(), sums[:, 2].copy()


@numba.njit(cache=True, error_model="numpy")
def _backward_error(d, z, sigma, r, x, y):
    """Relative eigen-residual ``‖A'x - WΛr‖`` and orthogonality ``|‖x‖² - ‖r‖²| = |rᵀ(WᵀW - I)r|``
    of the eigenvectors W used, along the random combination ``x = Wr`` (``y = WΛr``,
    ``A' = diag(d) + σzzᵀ``), the larger of the two: O(n), and a bad column shows with
    probability one. NaN (a failed update) compares false with every tolerance."""
    if r.size == 0:
        return 0.0
    scale = max(np.max(np.abs(d)), sigma * np.sum(z * z), np.finfo(np.float64).tiny)
    zx = np.sum(z * x)
    residual = np.sqrt(np.sum((d * x + sigma * zx * z - y) ** 2))
    rr = np.sum(r * r)
    first, second = residual / (scale * np.sqrt(rr)), abs(np.sum(x * x) - rr) / rr
    if np.isnan(first) or np.isnan(second):
        return np.nan
    return max(first, second)


@numba.njit(cache=True, error_model="numpy")
def _point(d, V0, u, rho, probe, threads):
    """The rank-one oracle's point at u in one call (:func:`rank_one_point`): ``z = V0ᵀu``, the
    decomposition of ``diag(d) + σzzᵀ`` (``σ = 1/(4ρ)``), the sums over the eigenvectors of its
    smaller side, the check along ``probe``, ``K*u`` and φ."""
    sigma = 1.0 / (4.0 * rho)
    z = transposed_product(V0, u, threads)
    decomposition = _decomposition(d, z, sigma, threads)
    values, source, kept, poles, z_hat, origin, tau, z_rotated, rotations, _, failures = decomposition
    n = u.size
    if failures:
        return decomposition, z, False, np.zeros(n), np.nan, np.nan, np.nan
    negative = values < 0
    count = np.sum(negative)
    use_negative = count <= n - count
    side = np.flatnonzero(negative if use_negative else ~negative)
    r = probe[: side.size]
    t, x, y = _selected_sums(source[side], values[side], kept, poles, z_hat, origin, tau, rotations, z_rotated, r,
                             threads)
    backward = _backward_error(d, z, sigma, r, x, y)
    uu = np.sum(u * u)
    if use_negative:  # K*u = Au - A_-u
        Ku = product(V0, d * z - t, threads) + sigma * uu * u
    else:
        Ku = product(V0, t, threads)
    lowest = values[negative]
    value = -0.5 * np.sum(z * (d * z)) - sigma * uu * uu / 4.0 + rho * np.sum(lowest * lowest)
    return decomposition, z, use_negative, Ku, value, np.sum(np.abs(d) * (z * z)), backward


@dataclass
class RankOneEigen:
    """Eigendecomposition of ``diag(d) + ρzzᵀ`` (all eigenvalues; eigenvectors, or the sums the
    oracle needs of them, on request).

    Attributes
    ----------
    values : (n,) array, ascending.
    evaluations : evaluations of the secular function over all roots (a diagnostic: about 3.5
        per root; bisection alone would need about 50).
    """

    values: np.ndarray
    evaluations: int
    _source: np.ndarray          # per sorted eigenvalue: root index (>= 0) or -1 - deflated index
    _kept: np.ndarray            # indices of the non-deflated poles
    _poles: np.ndarray           # d on the kept poles, divided by a power of 2
    _z_hat: np.ndarray           # Löwner vector on the kept poles (up to scale)
    _origin: np.ndarray          # root j = (_poles[_origin[j]] + _tau[j]) times that power of 2
    _tau: np.ndarray
    _z: np.ndarray               # the caller's z, rotated as deflation did
    _rotations: np.ndarray       # rows (p, q, c, s), in the order applied

    @property
    def n(self) -> int:
        return self.values.size

    def vectors(self, select, threads: int | None = None) -> np.ndarray:
        """Orthonormal eigenvectors (n, m) for the eigenvalues ``values[select]`` (mask or indices), on
        ``threads`` numba threads (default: ``numba.get_num_threads()``)."""
        threads = numba.get_num_threads() if threads is None else threads
        return _vectors(self._source[select], self.n, self._kept, self._poles, self._z_hat, self._origin, self._tau,
                        self._rotations, threads)

    def eigenvector_sums(self, select, r: np.ndarray, z: np.ndarray | None = None, threads: int | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For ``W = vectors(select)``, ``Λ = diag(values[select])`` and a vector ``r`` (length m):
        ``(WΛWᵀz, Wr, WΛr)`` in O(nm), never forming W; ``z`` is the update's own vector unless
        another is given (then ``WΛWᵀz`` is a product with the selected part of the matrix)."""
        z = self._z if z is None else _rotate(np.array(z, dtype=np.float64).reshape(-1, 1), self._rotations)[:, 0]
        return _selected_sums(self._source[select], self.values[select], self._kept, self._poles, self._z_hat,
                              self._origin, self._tau, self._rotations, z, np.asarray(r, dtype=np.float64),
                              numba.get_num_threads() if threads is None else threads)


_compiled = False
#: Functions that compile what the solvers run on the oracle's arrays (their compiled line searches:
#: they register them here, as the core imports no solver); :func:`compile_oracle` calls them.
WARM_UPS: list[Callable[[], None]] = []


def compile_oracle() -> None:
    """Compile the functions above, once per process, for the array types the oracle passes them.

    Numba compiles at a function's first call (on a new install, for all of them on 2 cores:
    2-3 minutes with numba 0.68, 2 with its floor 0.63; later, loading numba's on-disk cache: 0.5-3 s). :func:`indkernel.solve` calls this
    before its clock starts, so ``time_limit`` counts the solve and not the compiler. The small
    update below takes every path: a deflated component, a rotation, a root, the vectors and
    sums with and without deflation, and the products with a writable and a read-only ``V0``
    and a contiguous and a strided vector, a whole point (:func:`rank_one_point`); the
    projection onto A (:mod:`indkernel.core.projection`) that every solver's step calls, and the
    Hessian products and direction of Newton's method (:mod:`indkernel.core.curvature`), the
    certificate's best offsets (:func:`indkernel.core.intercept.minimize_piecewise_linear`) and the
    solvers' compiled line searches (:data:`WARM_UPS`).
    """
    global _compiled
    if _compiled:
        return
    with if_slow("compiling the rank-one oracle (numba; once after installing, a few minutes)"):
        _compile()
    _compiled = True


def _compile() -> None:
    """Call every compiled function of the oracle once (:func:`compile_oracle`)."""
    for d, z in (([0.0, 0.0, 1.0, 2.0], [1.0, 1.0, 0.0, 1.0]), ([0.0, 1.0], [1.0, 1.0])):
        eigen = rank_one_eigen(np.array(d), np.array(z), 1.0)
        everything = np.ones(eigen.n, dtype=bool)
        eigen.vectors(everything)
        eigen.eigenvector_sums(everything, np.ones(eigen.n))
        eigen.eigenvector_sums(everything, np.ones(eigen.n), np.ones(eigen.n))
    writable = np.asfortranarray(np.eye(2))
    frozen = writable.copy(order="F")
    frozen.flags.writeable = False
    for V in (writable, frozen):
        for u in (np.ones(2), np.ones(4)[::2], read_only(np.ones(2))):  # contiguous, strided and read-only
            transposed_product(V, u, 1)
            product(V, u, 1)
    rank_one_point(np.array([-1.0, 1.0]), writable, np.array([1.0, 2.0]), 1.0, np.ones(2), 1)
    # the device route's host steps (indkernel.core.device_oracle), on the writable arrays it passes
    d, z, small, rotations, kept, poles, _, _, scale = _deflated(np.array([0.0, 0.0, 1.0]), np.ones(3), 1.0)
    values, source = _assembled(d, small, kept, poles, np.zeros(kept.size, np.int64), np.zeros(kept.size), scale)
    x = _with_deflated(source, values, kept, rotations, z, np.ones(3), np.ones(kept.size), np.ones(kept.size),
                       np.ones(kept.size))[1]
    _backward_error(d, z, 1.0, np.ones(3), x, x)
    _rotate(np.ones((3, 1)), rotations)
    _selected_roots(poles, np.ones(kept.size) / kept.size, np.arange(kept.size), 1.0)
    compile_projection()  # every solver's step
    from .curvature import compile_curvature  # (it imports this module)
    from .intercept import minimize_piecewise_linear, primal_terms  # (not members of this module's API page)

    compile_curvature()  # Newton's Hessian products
    minimize_piecewise_linear(np.ones(2), np.array([1.0, -1.0]), np.ones(2))  # the certificate's offsets
    for kind in range(3):  # and the machines' losses there (Machine.compiled_loss)
        primal_terms((kind, np.array([1.0, -1.0]), np.ones(2), 0.0, 1.0), np.zeros(2), 0.0)
    for warm_up in WARM_UPS:  # the solvers' compiled searches
        warm_up()


def rank_one_eigen(d: np.ndarray, z: np.ndarray, rho: float) -> RankOneEigen:
    """Eigenvalues (and eigenvectors on request) of ``diag(d) + ρzzᵀ`` for ascending d and ρ >= 0.

    O(n²) time, O(n) memory; see the module docstring for the method.

    Raises
    ------
    SecularEquationError
        If the zero finder fails (callers fall back to a dense ``eigh``).
    """
    decomposition = _decomposition(np.ascontiguousarray(d, dtype=np.float64), np.ascontiguousarray(z, dtype=np.float64),
                                   float(rho), numba.get_num_threads())
    return _eigen(decomposition)


def _eigen(decomposition) -> RankOneEigen:
    """The :class:`RankOneEigen` of :func:`_decomposition`'s arrays; SecularEquationError if a root failed."""
    values, source, kept, poles, z_hat, origin, tau, z, rotations, evaluations, failures = decomposition
    if failures:
        raise SecularEquationError(f"the zero finder did not converge for {failures} of {kept.size} roots")
    return RankOneEigen(values, int(evaluations), source, kept, poles, z_hat, origin, tau, z, rotations)


@dataclass(frozen=True)
class RankOnePoint:
    """What the rank-one oracle needs at one u (:func:`rank_one_point`)."""

    eigen: RankOneEigen
    z: np.ndarray              # V0ᵀu
    use_negative: bool         # whether the sums ran over the negative eigenvalues (else the others)
    Ku: np.ndarray             # K*u
    value: float               # φ(u)
    magnitude: float           # uᵀ|K0|u
    backward: float            # the measured relative backward error (:func:`_backward_error`)


def rank_one_point(d: np.ndarray, V0: np.ndarray, u: np.ndarray, rho: float, probe: np.ndarray,
                   threads: int) -> RankOnePoint:
    """The rank-one oracle's work at u for ``K0 = V0 diag(d) V0ᵀ`` and ``A = K0 + σuuᵀ`` (``σ = 1/(4ρ)``),
    in one compiled call: the decomposition of ``diag(d) + σzzᵀ`` (``z = V0ᵀu``), ``K*u = Au - A_-u``
    (or ``A_+u``, from the side with fewer eigenvectors), ``φ(u) = -½zᵀdiag(d)z - σ‖u‖⁴/4 +
    ρ‖A_-‖²_F``, and the check of the eigenvectors used along the first entries of ``probe``
    (length n), on at most ``threads`` numba threads.

    Raises
    ------
    SecularEquationError
        If the zero finder fails (the oracle falls back to a dense ``eigh``).
    """
    # one compiled version for every caller, the compiled line searches included (they form u and
    # the probe themselves: writable); the spectrum is read-only
    d, V0 = read_only(d), read_only(V0)
    u, probe = (np.array(v, dtype=np.float64) for v in (u, probe))
    decomposition, z, use_negative, Ku, value, magnitude, backward = _point(d, V0, u, float(rho), probe, threads)
    return RankOnePoint(_eigen(decomposition), z, bool(use_negative), Ku, float(value), float(magnitude),
                        float(backward))
