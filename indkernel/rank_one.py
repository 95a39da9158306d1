"""Eigenpairs of ``diag(d) + ρzzᵀ`` in O(n²): the rank-one update of section "Computing proxy kernels".

Steps (Golub 1973; Bunch, Nielsen & Sorensen 1978; Gu & Eisenstat 1994; as LAPACK's divide and
conquer does them in ``dlaed2/3/8/9``):

1. **Deflation.** With ``‖z‖ = 1`` and ``tol = 8 eps max(max|d|, ρ)``: a component with
   ``ρ|z_i| <= tol`` leaves ``(d_i, e_i)`` an eigenpair; two poles with ``|(d_q - d_p) c s| <= tol``
   after the Givens rotation that zeroes ``z_p`` leave ``(c²d_p + s²d_q, e_p)`` one. The remaining
   poles are strictly increasing and their ``z`` components are not small.
2. **Secular equation** ``1 + ρ Σ z_i²/(d_i - λ) = 0``: one root in each ``(d_j, d_{j+1})`` and
   one in ``(d_K, d_K + ρ)`` (interlacing holds by construction), found by LAPACK's ``dlaed4``
   (the rational-interpolation zero finder of divide and conquer), which also returns the
   differences ``d_i - λ_j`` to high relative accuracy.
3. **Gu–Eisenstat.** The computed roots are the exact eigenvalues of ``diag(d) + ρẑẑᵀ`` with
   ``ẑ_i² = Π_j (λ_j - d_i) / (ρ Π_{j≠i} (d_j - d_i))`` (Löwner); its eigenvectors
   ``ẑ / (d - λ_j)``, normalized, are orthogonal to working precision.

Why LAPACK and not numba: ``dlaed4`` is the reference implementation of the zero finder, already
compiled and shipped inside SciPy (reached through ``scipy.linalg.cython_lapack``'s function
pointers), so the project gains no dependency and no JIT warm-up. (Two threads calling it were
slower than one on this 2-core machine, so there is one loop.) LAPACK's own ``dlaed9`` would
also do step 3, but it forms every eigenvector and measured 5x slower than the blocked NumPy
Löwner product below.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

EPS = np.finfo(np.float64).eps
#: Columns per block of the Löwner product (keeps the temporaries in cache).
LOEWNER_BLOCK = 64


@lru_cache(maxsize=None)
def _dlaed4():
    """LAPACK's ``dlaed4(K, I, D, Z, DELTA, RHO, DLAM, INFO)`` as a ctypes function."""
    from scipy.linalg import cython_lapack

    capsule = cython_lapack.__pyx_capi__["dlaed4"]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype, api.PyCapsule_GetName.argtypes = ctypes.c_char_p, [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 8)(address)


class SecularEquationError(RuntimeError):
    """LAPACK's zero finder did not converge for a root."""


def secular_roots(d: np.ndarray, z: np.ndarray, rho: float, out: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """All roots of ``1 + ρ Σ z_i²/(d_i - λ) = 0`` for strictly increasing ``d``, ``‖z‖ = 1``, ρ > 0.

    Returns ``(lam, delta)`` with ``lam`` ascending and ``delta[:, j] = d - lam[j]`` computed by
    ``dlaed4`` to high relative accuracy, a (K, K) Fortran-ordered array (in ``out``, a flat
    float64 buffer of at least K² entries, when given). For K <= 2, ``dlaed4`` returns the
    normalized eigenvectors in ``delta`` instead (LAPACK's convention).
    """
    K = d.size
    d, z = np.ascontiguousarray(d), np.ascontiguousarray(z)
    lam = np.empty(K)
    delta = (np.empty(K * K) if out is None else out[: K * K]).reshape((K, K), order="F")
    dlaed4, column = _dlaed4(), delta.ctypes.data
    K_c, j_c, rho_c = ctypes.c_int(K), ctypes.c_int(), ctypes.c_double(rho)
    root, info = ctypes.c_double(), ctypes.c_int()
    args = [ctypes.byref(K_c), ctypes.byref(j_c), d.ctypes.data, z.ctypes.data, None,
            ctypes.byref(rho_c), ctypes.byref(root), ctypes.byref(info)]
    for j in range(K):
        j_c.value, args[4] = j + 1, column + 8 * K * j
        dlaed4(*args)
        if info.value:
            raise SecularEquationError(f"dlaed4 did not converge for root {j} of {K} (info {info.value})")
        lam[j] = root.value
    return lam, delta


def loewner_vector(d: np.ndarray, delta: np.ndarray, z: np.ndarray, rho: float) -> np.ndarray:
    """Gu–Eisenstat's ẑ: the vector for which the computed roots are exact eigenvalues.

    ``ẑ_i² = -(d_i - λ_i) Π_{j≠i} (d_i - λ_j)/(d_i - d_j) / ρ``; every factor is close to 1 by
    interlacing, so the running product neither overflows nor underflows. Signs follow ``z``.
    """
    K = d.size
    product = np.ones(K)
    for start in range(0, K, LOEWNER_BLOCK):
        block = slice(start, min(start + LOEWNER_BLOCK, K))
        gaps = d[:, None] - d[None, block]
        rows = np.arange(start, block.stop)
        gaps[rows, rows - start] = 1.0  # the j = i factor is d_i - λ_i alone
        product *= np.prod(delta[:, block] / gaps, axis=1)
    return np.copysign(np.sqrt(np.maximum(-product, 0.0) / rho), z)


@dataclass
class RankOneEigen:
    """Eigendecomposition of ``diag(d) + ρzzᵀ`` (all eigenvalues, eigenvectors on request).

    Attributes
    ----------
    values : (n,) array, ascending.
    """

    values: np.ndarray
    _source: np.ndarray          # per sorted eigenvalue: root index (>= 0) or -1 - deflated index
    _kept: np.ndarray            # indices of the non-deflated poles
    _z_hat: np.ndarray | None    # Löwner vector on the kept poles (None for K <= 2)
    _delta: np.ndarray | None
    _rotations: list             # (p, q, c, s) in the order applied
    n: int

    def vectors(self, select: np.ndarray) -> np.ndarray:
        """Orthonormal eigenvectors (n, m) for the eigenvalues ``values[select]`` (mask or indices)."""
        source = self._source[select]
        roots = source >= 0
        S = None
        if roots.any():
            S = self._delta[:, source[roots]]
            if self._z_hat is not None:  # (for K <= 2, dlaed4 returned the eigenvectors themselves)
                np.divide(self._z_hat[:, None], S, out=S)
                S /= np.linalg.norm(S, axis=0)
        if S is not None and roots.all() and self._kept.size == self.n:
            X = S  # nothing deflated: the common case, no copy
        else:
            X = np.zeros((self.n, source.size))
            if S is not None:
                X[np.ix_(self._kept, np.flatnonzero(roots))] = S
            deflated = np.flatnonzero(~roots)
            X[-1 - source[deflated], deflated] = 1.0
        for p, q, c, s in reversed(self._rotations):  # back to the original coordinates: x = Gᵀx'
            X[p], X[q] = c * X[p] + s * X[q], -s * X[p] + c * X[q]
        return X


def rank_one_eigen(d: np.ndarray, z: np.ndarray, rho: float, workspace: np.ndarray | None = None) -> RankOneEigen:
    """Eigenvalues (and eigenvectors on request) of ``diag(d) + ρzzᵀ`` for ascending d and ρ >= 0.

    O(n²) time; see the module docstring for the method. ``workspace``, a flat float64 buffer of
    n² entries, is reused for the (K, K) differences; the result's :meth:`RankOneEigen.vectors`
    reads it, so call that before the buffer's next use.

    Raises
    ------
    SecularEquationError
        If LAPACK's zero finder fails (callers fall back to a dense ``eigh``).
    """
    d, z = np.array(d, dtype=np.float64), np.array(z, dtype=np.float64)
    n = d.size
    norm = float(np.linalg.norm(z))
    rho = rho * norm * norm
    z = z / norm if norm > 0 else z
    tol = 8 * EPS * max(float(np.max(np.abs(d), initial=0.0)), rho)
    small = rho * np.abs(z) <= tol
    rotations = []
    candidates = np.flatnonzero(~small)
    close = np.diff(d[candidates]) <= 2 * tol  # |(d_q - d_p) c s| <= tol needs a gap <= 2 tol
    if close.any():
        for position in np.flatnonzero(close):
            p, q = candidates[position], candidates[position + 1]
            tau = np.hypot(z[p], z[q])
            c, s = z[q] / tau, z[p] / tau
            if abs((d[q] - d[p]) * c * s) <= tol:
                d[p], d[q] = c * c * d[p] + s * s * d[q], s * s * d[p] + c * c * d[q]
                z[p], z[q] = 0.0, tau
                small[p] = True
                rotations.append((p, q, c, s))
    kept = np.flatnonzero(~small)
    if kept.size:
        w = z[kept]  # dlaed4 wants a unit vector: fold the norm lost to deflation into ρ
        w_norm = float(np.linalg.norm(w))
        w, rho_kept = w / w_norm, rho * w_norm * w_norm
        roots, delta = secular_roots(d[kept], w, rho_kept, out=workspace)
        z_hat = loewner_vector(d[kept], delta, w, rho_kept) if kept.size > 2 else None
    else:
        roots, delta, z_hat = np.empty(0), None, None
    deflated = np.flatnonzero(small)
    values = np.concatenate([roots, d[deflated]])
    source = np.concatenate([np.arange(kept.size), -1 - deflated])
    order = np.argsort(values, kind="stable")
    return RankOneEigen(values[order], source[order], kept, z_hat, delta, rotations, n)
