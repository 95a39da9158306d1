"""The rank-one oracle where K0 lives: any namespace of the Python array API standard (a GPU).

The same mathematics as :class:`indkernel.core.proxy.RankOneProxy` (section "Computing proxy
kernels"): ``K0 = V0 diag(d) V0ᵀ`` once, then at each u the eigenpairs of ``diag(d) + σzzᵀ``
(``z = V0ᵀu``, ``σ = 1/(4ρ)``). What costs O(n²) runs on the array's device, written with the
standard's operations only, so one code serves torch or CuPy on a GPU and, in the tests,
array-api-strict and torch on the CPU:

- the products with ``V0`` (``z = V0ᵀu``, ``K*u = V0 t``);
- the zero finder of the secular equation for all roots at once: each root ``λ_j = d_o + τ_j``
  from its nearer pole (the first evaluation, at the middle of its interval, picks it), Li's
  middle-way step (the two poles that bracket the root exact, each side's others as one pole
  matching its slope) safeguarded by a bracket, until ``|f|`` is within the rounding of its sum
  (``dlaed4``'s bound with the ``log2 K`` of a tree sum) or τ stops moving; the few roots still
  moving once the rest have converged finish on the host, by the CPU route's zero finder;
- the Löwner vector ẑ of Gu and Eisenstat from the roots (a sum of logarithms of the ratios
  ``(d_i - λ_j)/(d_i - d_j)``, no over- or underflow), and the eigenvector sums the oracle needs,
  ``ẑ/(d - λ_j)`` formed a block of rows at a time and never stored whole;
- the products of Newton's Hessian (the divided differences of
  :mod:`indkernel.core.curvature` on the device) and of the consistent rule's projector.

The O(n) bookkeeping stays on the host, in the CPU route's own compiled functions: deflation
and the scaling of the secular equation (:func:`indkernel.core.rank_one._deflated`), the
merge of the roots with the deflated eigenvalues, the deflated part of the sums, the check of
the eigenvectors along a random combination (a point that fails it is decomposed afresh on
the device, as ``RankOneProxy`` falls back to ``eigh``), φ and the round-off allowances. The
solvers see host vectors: a point takes u and returns ``K*u`` as NumPy arrays, so the iteration,
the projection and the certificate are the CPU route's, with every n×n array on the device.

Round-off: the device's eigendecomposition of K0 is measured once, ``‖K0V0 - V0D‖_F`` and
``‖V0ᵀV0 - I‖_F`` (O(n³) in blocks of columns), and its relative backward error enters every
allowance where it exceeds LAPACK's ``ROUNDOFF_FACTOR·n·u`` (:func:`backward_error`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from . import rank_one
from .namespace import device_of, to_numpy
from .proxy import ProxyPoint, clipped_allowances, roundoff_allowances

#: Elements of one block of rows of the (roots × poles) arrays: 256 MiB of float64, so the zero
#: finder's few temporaries stay well under an n×n array at large n.
BLOCK_ELEMENTS = 2**25
#: The zero finder hands its last roots to the host once at most this share of them is still
#: moving: a device step then costs its hundred-odd launches and its wait whatever its rows, and
#: a few roots can take twenty more steps (USPS, n = 2000: all but 0.7 % of the roots converged
#: within seven steps, the last after 28), while the host's zero finder takes O(K) a step a root.
HOST_SHARE = 1 / 32


def backward_error(xp, K0, d, V0) -> float:
    """A bound on the relative backward error of a computed ``K0 ≈ V0 diag(d) V0ᵀ``:
    ``(‖K0V0 - V0D‖_F + ‖K0‖₂‖V0ᵀV0 - I‖_F) / ‖K0‖_F`` (with ``V0 = Q(I + E)``, Q orthogonal and
    ``‖E‖ <= ‖V0ᵀV0 - I‖``, ``K0 - Q D Qᵀ`` is the residual plus terms of ‖K0‖₂ times E), in blocks
    of columns (O(n³), one block of n×b beside the matrices)."""
    n = K0.shape[0]
    block = max(1, min(n, BLOCK_ELEMENTS // max(n, 1)))
    residual = orthogonality = 0.0
    for start in range(0, n, block):
        stop = min(start + block, n)
        columns = V0[:, start:stop]
        R = K0 @ columns - columns * d[start:stop]
        residual += float(xp.sum(R * R))
        del R  # (one block's temporaries at a time)
        G = V0.T @ columns
        rows = xp.arange(start, stop, device=device_of(V0))
        G = G - xp.astype(xp.arange(n, device=device_of(V0))[:, None] == rows[None, :], G.dtype)
        orthogonality += float(xp.sum(G * G))
        del G
    norm, frobenius = float(xp.max(xp.abs(d))), float(xp.sqrt(xp.sum(d * d)))
    if frobenius == 0.0:
        return 0.0
    return (math.sqrt(residual) + norm * math.sqrt(orthogonality)) / frobenius


class SecularRoots:
    """The roots of ``f(λ) = 1/ρ + Σ w_i²/(p_i - λ)`` (strictly increasing poles p, ``Σ w_i² = 1``,
    ρ > 0; NumPy arrays, the work on ``device`` of namespace ``xp``): root j is ``p[origin_j] + τ_j``,
    in ``(p_j, p_{j+1})`` and the last in ``(p_{K-1}, p_{K-1} + ρ]``; ``z_hat`` the Löwner vector;
    ``failures`` the roots not found. The module docstring gives the method."""

    MAX_STEPS = rank_one.MAX_STEPS

    def __init__(self, xp, poles: np.ndarray, w: np.ndarray, rho: float, device=None):
        self.host = (poles, w * w)  # (the host's zero finder takes the last roots)
        self.xp, self.rho = xp, float(rho)
        self.p, w = xp.asarray(poles, device=device), xp.asarray(w, device=device)
        self.K = poles.shape[0]
        self.w2 = w * w
        self.device = device_of(self.p)
        self.block = max(1, min(self.K, BLOCK_ELEMENTS // max(self.K, 1)))
        self.failures = 0
        self.origin, self.tau = self._solve()
        self.z_hat = self._lowner(w)

    def _rows(self, start: int, stop: int):
        return self.xp.arange(start, stop, dtype=self.xp.int64, device=self.device)

    def _from_own_poles(self, origin, tau, poles=None):
        """``p_i - λ_j`` for ``λ_j = p_{origin_j} + τ_j`` (rows) and every pole i, from the root's own
        pole: high relative accuracy (``poles``: the poles placed in other coordinates, :meth:`vectors`)."""
        poles = self.p if poles is None else poles
        return (poles[None, :] - self.xp.take(self.p, origin)[:, None]) - tau[:, None]

    def _pole_sums(self, origin, tau, left):
        """``(ψ, φ, ψ', φ')`` at ``λ_j = p_{origin_j} + τ_j``: the sums of ``w_i²/(p_i - λ_j)`` and of
        ``w_i²/(p_i - λ_j)²`` over the poles ``i <= left_j`` and over the others, a block of rows at a time."""
        xp = self.xp
        columns = xp.arange(self.K, device=self.device)[None, :]
        parts = []
        for start in range(0, origin.shape[0], self.block):
            stop = min(start + self.block, origin.shape[0])
            D = self._from_own_poles(origin[start:stop], tau[start:stop])
            on_left = columns <= left[start:stop][:, None]
            T = self.w2 / D
            psi = xp.sum(xp.where(on_left, T, 0.0), axis=1)
            S = T / D
            dpsi = xp.sum(xp.where(on_left, S, 0.0), axis=1)
            parts.append((psi, xp.sum(T, axis=1) - psi, dpsi, xp.sum(S, axis=1) - dpsi))
            del D, T, S, on_left  # (freed before the next block's: one block's temporaries at a time)
        return parts[0] if len(parts) == 1 else tuple(xp.concat(sums) for sums in zip(*parts, strict=True))

    def _solve(self):
        """``(origin, τ)`` of every root: all roots step together on the device, the rows still moving
        compacted after each step, until at most :data:`HOST_SHARE` of them move; those few finish on
        the host (:func:`indkernel.core.rank_one._selected_roots`)."""
        xp, p, K, rho = self.xp, self.p, self.K, self.rho
        J = self._rows(0, K)
        if K == 1:
            return xp.zeros(1, dtype=xp.int64, device=self.device), rho * self.w2
        last = J == K - 1
        left = xp.where(last, xp.full_like(J, K - 2), J)
        right = left + 1
        gap = xp.take(p, right) - xp.take(p, left)
        half = xp.where(last, xp.full_like(gap, 0.5 * rho), 0.5 * gap)
        # the first evaluation, at the middle of each interval (beyond the last pole: at ρ/2), from
        # the left pole; where the root is nearer the right one, the frame moves there after it
        origin = xp.where(last, right, left)
        tau = half
        lower, upper = xp.zeros_like(tau), 2 * half
        bound_factor = 8.0 + math.log2(K)
        # the rows still moving, compacted after each step (most roots converge in a few steps,
        # so later steps cost a fraction of a pass); the finished ones are set aside
        state = (J, origin, tau, lower, upper, left, last)
        finished = []
        for count in range(self.MAX_STEPS):
            J, origin, tau, lower, upper, left, last = state
            pole_left = xp.take(p, left) - xp.take(p, origin)
            pole_right = xp.take(p, left + 1) - xp.take(p, origin)
            psi, phi, dpsi, dphi = self._pole_sums(origin, tau, left)
            f = 1.0 / rho + psi + phi
            bound = bound_factor * (phi - psi) + 2.0 / rho + xp.abs(tau) * (dpsi + dphi)
            converged = (xp.abs(f) <= rank_one.EPS * bound) & (count > 0)  # (the first point is a midpoint, not a root)
            lower = xp.where(f > 0, lower, xp.maximum(lower, tau))
            upper = xp.where(f <= 0, upper, xp.minimum(upper, tau))
            dl, dr = pole_left - tau, pole_right - tau
            low = xp.where(last, dr, dl)
            high = xp.where(last, xp.full_like(dr, math.inf), dr)
            eta = self._two_pole_step(f, dpsi, dphi, dl, dr, xp.maximum(low, lower - tau),
                                      xp.minimum(high, upper - tau))
            step = tau + eta
            step = xp.where((step > lower) & (step < upper), step, 0.5 * (lower + upper))
            if count == 0:  # measure from the nearer pole: the right one where f < 0 at the middle
                shift = xp.where((~last) & (f < 0), pole_right, xp.zeros_like(f))
                origin = xp.where((~last) & (f < 0), left + 1, origin)
                tau, step, lower, upper = tau - shift, step - shift, lower - shift, upper - shift
            done = converged | (step == tau)
            # one wait for the device a step: how many are done (the moving rows first, then the done)
            order = xp.argsort(xp.astype(done, xp.int8), stable=True)
            moving = J.shape[0] - int(xp.sum(xp.astype(done, xp.int64)))
            finished.append(tuple(xp.take(a, order[moving:]) for a in (J, origin, tau)))
            state = tuple(xp.take(a, order[:moving]) for a in (J, origin, step, lower, upper, left, last))
            if moving <= HOST_SHARE * K:
                break
        else:
            self.failures += moving  # rows that did not converge in MAX_STEPS (their last step kept)
            moving = 0
        J, origin, tau = state[:3]
        if moving:  # the last few rows, each an O(K) loop on the host
            host_origin, host_tau = rank_one._selected_roots(*self.host, to_numpy(J, copy=True), rho)
            self.failures += int(np.count_nonzero(host_origin < 0))
            origin = xp.asarray(np.maximum(host_origin, 0), device=self.device)
            tau = xp.asarray(host_tau, device=self.device)
        finished.append((J, origin, tau))
        order = xp.argsort(xp.concat([part[0] for part in finished]))
        return tuple(xp.take(xp.concat([part[k] for part in finished]), order) for k in (1, 2))

    def _two_pole_step(self, w, slope_left, slope_right, dl, dr, low, high):
        """Li's middle way (:func:`indkernel.core.rank_one._two_pole_step`) for every row: the root
        in ``(low, high)`` of ``c + s_l/(dl - η) + s_r/(dr - η)``, NaN where there is none."""
        xp = self.xp
        c = w - dl * slope_left - dr * slope_right
        a = (dl + dr) * w - dl * dr * (slope_left + slope_right)
        b = dl * dr * w
        root = xp.sqrt(xp.abs(a * a - 4.0 * b * c))
        q = a + xp.where(a >= 0, root, -root)
        safe_q = xp.where(q == 0, 1.0, q)
        safe_c = xp.where(c == 0, 1.0, c)
        safe_a = xp.where(a == 0, 1.0, a)
        first = xp.where(c == 0, xp.where(a == 0, math.nan, b / safe_a), xp.where(q == 0, math.nan, 2.0 * b / safe_q))
        second = xp.where((c == 0) | (q == 0), math.nan, q / (2.0 * safe_c))
        first_in = (first > low) & (first < high)
        second_in = (second > low) & (second < high)
        pick_second = second_in & (~first_in | (xp.abs(second) < xp.abs(first)))
        return xp.where(pick_second, second, xp.where(first_in, first, math.nan))

    def _lowner(self, w):
        """``ẑ_i = sign(w_i) (-Π_j (p_i - λ_j) / Π_{j≠i} (p_i - p_j) / ρ)^½``, as a sum of logarithms."""
        xp = self.xp
        logs = xp.zeros(self.K, dtype=self.p.dtype, device=self.device)
        for start in range(0, self.K, self.block):
            J = self._rows(start, min(start + self.block, self.K))
            D = self.differences_to_roots(J)
            P = self.p[None, :] - xp.take(self.p, J)[:, None]
            P = xp.where(P == 0, 1.0, P)  # the diagonal: (p_i - λ_i) alone
            logs = logs + xp.sum(xp.log(xp.abs(D / P)), axis=0)
            del D, P
        magnitude = xp.sqrt(xp.exp(logs) / self.rho)
        return xp.where(w < 0, -magnitude, magnitude)

    def differences_to_roots(self, J, poles=None):
        """``p_i - λ_j`` for the found roots J (:meth:`_from_own_poles`)."""
        return self._from_own_poles(self.xp.take(self.origin, J), self.xp.take(self.tau, J), poles)

    def sums(self, roots, lam, s, r):
        """``(WΛWᵀs, Wr, WΛr)`` for the normalized eigenvectors W of the roots ``roots`` (indices,
        an integer array of the namespace), never stored whole (:func:`indkernel.core.rank_one._eigenvector_sums`)."""
        xp = self.xp
        t = xp.zeros(self.K, dtype=self.p.dtype, device=self.device)
        x, y = xp.zeros_like(t), xp.zeros_like(t)
        m = roots.shape[0]
        for start in range(0, m, self.block):
            stop = min(start + self.block, m)  # (the standard leaves slices beyond the end unspecified)
            C = self.z_hat[None, :] / self.differences_to_roots(roots[start:stop])
            norm = xp.sqrt(xp.sum(C * C, axis=1))
            lam_J = lam[start:stop]
            a = lam_J * (C @ s) / (norm * norm)
            b = r[start:stop] / norm
            t = t + a @ C
            x = x + b @ C
            y = y + (lam_J * b) @ C
            del C
        return t, x, y

    def vectors(self, roots, *, frame=None, rows: int | None = None):
        """The normalized eigenvectors of the m ``roots`` as the first m rows of a (``rows``, K) array
        of the namespace (``rows`` >= m, default m; the others left for the caller), a block at a time.
        ``frame``: ``(ẑ, p)`` placed in the caller's n coordinates (0 and +∞ on the others) for rows of
        length n instead, zero off those coordinates."""
        xp, m = self.xp, roots.shape[0]
        z_hat, poles = frame if frame is not None else (self.z_hat, self.p)
        X = xp.empty((m if rows is None else rows, z_hat.shape[0]), dtype=self.p.dtype, device=self.device)
        for start in range(0, m, self.block):
            stop = min(start + self.block, m)
            C = z_hat[None, :] / self.differences_to_roots(roots[start:stop], poles)
            X[start:stop, :] = C / xp.sqrt(xp.sum(C * C, axis=1))[:, None]
            del C
        return X


class DeviceRankOneProxy:
    """The rank-one oracle (:class:`indkernel.core.proxy.RankOneProxy`) with K0 and its
    eigendecomposition on the device of ``K0_device`` (any array API namespace): O(n²) per point
    on the device, O(n) on the host (the module docstring).

    Parameters
    ----------
    K0 : (n, n) NumPy array, the validated similarity matrix (the problem's checks run on it).
    K0_device : the same matrix in the caller's namespace, on its device.
    """

    name = "rank-one"
    CHECK_TOL = 1e-10  # as RankOneProxy's
    #: The tight certificate stays with its own O(n²) Newton–CG rounds on the device: it does not
    #: form K* on the host for libsvm and the interior-point solve
    #: (:func:`indkernel.core.fixed_kernel.fixed_kernel_bound`).
    formed_kernel = False

    def __init__(self, K0: np.ndarray, K0_device):
        import array_api_compat

        self.K0 = K0
        self.xp = array_api_compat.array_namespace(K0_device)
        self.K0_device = self.xp.astype(K0_device, self.xp.float64, copy=False)
        self.device = device_of(K0_device)
        self.fallbacks = 0
        self._probe = np.random.default_rng(0)

    def _to_device(self, v: np.ndarray):
        return self.xp.asarray(np.ascontiguousarray(v, dtype=np.float64), device=self.device)

    @cached_property
    def spectrum(self) -> tuple[np.ndarray, Any]:
        """``(d, V0)``: the eigenvalues ascending (NumPy) and the eigenvectors (on the device), with
        the decomposition's backward error measured once (:attr:`measured_backward`)."""
        xp = self.xp
        d, V0 = xp.linalg.eigh(self.K0_device)
        self._measured_backward = backward_error(xp, self.K0_device, d, V0)
        return to_numpy(d, copy=True), V0

    @property
    def measured_backward(self) -> float:
        """The relative backward error of the device's decomposition of K0 (:func:`backward_error`)."""
        self.prepare()
        return self._measured_backward

    def prepare(self) -> None:
        """The eigendecomposition of K0 now, not at the first point."""
        self.spectrum  # noqa: B018 (a cached property)

    @property
    def norm(self) -> float:
        """``‖K0‖₂``."""
        return float(np.abs(self.spectrum[0]).max())

    @cached_property
    def frobenius(self) -> float:
        """``‖K0‖_F``."""
        return float(np.linalg.norm(self.K0))

    def __call__(self, u: np.ndarray, rho: float) -> ProxyPoint:
        """The point of ``K0 + uuᵀ/(4ρ)`` (u a NumPy vector; its products take and give NumPy vectors)."""
        if rho == np.inf:
            return self._clipped(u)
        return self._update(u, rho)

    def _products(self):
        """``(v ↦ V0ᵀv, t ↦ V0t)`` from host vectors to host vectors."""
        V0 = self.spectrum[1]

        def transposed(v):
            return to_numpy(V0.T @ self._to_device(v))

        def product(t):
            return to_numpy(V0 @ self._to_device(t))

        return transposed, product

    def _clipped(self, u: np.ndarray) -> ProxyPoint:
        """The point at ρ = ∞ (:meth:`indkernel.core.proxy.EighProxy.clipped`), from K0's spectrum."""
        d = self.spectrum[0]
        transposed, product = self._products()
        d_plus, z = np.maximum(d, 0.0), transposed(u)
        uu = float(u @ u)
        value, magnitude = -0.5 * float(z @ (d_plus * z)), float(np.abs(d) @ (z * z))
        errors = clipped_allowances(u.size, self.frobenius, self.norm, uu, magnitude, self.measured_backward)

        def multiply(v: np.ndarray) -> np.ndarray:
            return product(d_plus * transposed(v))

        def project_positive(v: np.ndarray) -> np.ndarray:
            return product((d > 0) * transposed(v))

        return ProxyPoint(u, product(d_plus * z), value, lambda: self._formed(d_plus), multiply, errors, magnitude,
                          lambda: multiply, project_positive)

    def _formed(self, middle: np.ndarray) -> np.ndarray:
        """``V0 diag(middle) V0ᵀ`` as a NumPy array (formed on the device)."""
        V0 = self.spectrum[1]
        K = to_numpy((V0 * self._to_device(middle)) @ V0.T)
        return (K + K.T) / 2

    def _update(self, u: np.ndarray, rho: float) -> ProxyPoint:
        xp = self.xp
        d = self.spectrum[0]
        sigma = 1.0 / (4.0 * rho)
        transposed, product = self._products()
        z = transposed(u)
        d_deflated, z_rotated, small, rotations, kept, poles, w, rho_scaled, scale = rank_one._deflated(d, z, sigma)
        roots = SecularRoots(xp, poles, w, rho_scaled, self.device) if kept.size else None
        if roots is not None and roots.failures:
            return self._fall_back(u, rho)
        origin = to_numpy(roots.origin) if roots is not None else np.zeros(0, np.int64)
        tau = to_numpy(roots.tau) if roots is not None else np.zeros(0)
        values, source = rank_one._assembled(d_deflated, small, kept, poles, origin, tau, scale)
        negative = values < 0
        use_negative = int(negative.sum()) <= values.size - int(negative.sum())
        side = np.flatnonzero(negative if use_negative else ~negative)

        def side_sums(select: np.ndarray, lam: np.ndarray, s: np.ndarray, r: np.ndarray):
            """``(WΛWᵀs, Wr, WΛr)`` over the eigenvalues ``values[select]`` (s in the deflated coordinates)."""
            chosen = source[select]
            found = np.flatnonzero(chosen >= 0)
            if roots is None or found.size == 0:
                t = x = y = np.zeros(kept.size)
            else:
                t, x, y = (to_numpy(a) for a in roots.sums(
                    xp.asarray(chosen[found], device=self.device), self._to_device(lam[found]),
                    self._to_device(s[kept]), self._to_device(r[found])))
            return rank_one._with_deflated(chosen, lam, kept, rotations, s, r, t, x, y)

        r = self._probe.standard_normal(u.size)[: side.size]
        t, x, y = side_sums(side, values[side], z_rotated, r)
        found_backward = rank_one._backward_error(d, z, sigma, r, x, y)
        if not found_backward <= self.CHECK_TOL:
            return self._fall_back(u, rho)
        uu = float(u @ u)
        Ku = product(d * z - t) + sigma * uu * u if use_negative else product(t)
        lowest = values[negative]
        value = -0.5 * float(z @ (d * z)) - sigma * uu * uu / 4.0 + rho * float(lowest @ lowest)
        magnitude = float(np.abs(d) @ (z * z))
        backward = max(4 * np.sqrt(u.size) * found_backward, self.measured_backward)
        errors = roundoff_allowances(u.size, self.frobenius, self.norm, sigma, uu, rho, lowest, magnitude, backward)

        def rotated(v: np.ndarray) -> np.ndarray:
            return rank_one._rotate(np.array(v, dtype=np.float64).reshape(-1, 1), rotations)[:, 0]

        def multiply(v: np.ndarray) -> np.ndarray:
            s = transposed(v)
            t = side_sums(side, values[side], rotated(s), np.zeros(side.size))[0]
            return product(d * s + sigma * (z @ s) * z - t if use_negative else t)

        def project_positive(v: np.ndarray) -> np.ndarray:
            positive = np.flatnonzero(values > 0)
            few = positive.size <= values.size // 2
            select = positive if few else np.flatnonzero(~(values > 0))
            s = transposed(v)
            t = side_sums(select, np.ones(select.size), rotated(s), np.zeros(select.size))[0]
            return product(t if few else s - t)

        def make_kernel() -> np.ndarray:
            W, order = self._vectors(roots, source, kept, rotations, side)
            Y = self.spectrum[1] @ W
            K = to_numpy((Y * self._to_device(values[side][order])) @ Y.T)
            if use_negative:
                K = self.K0 + sigma * np.outer(u, u) - K
            return (K + K.T) / 2

        def make_curvature() -> Callable[[np.ndarray], np.ndarray]:
            everything = np.arange(values.size)
            W, order = self._vectors(roots, source, kept, rotations, everything)
            V0 = self.spectrum[1]
            middle = DeviceDividedDifferences(xp, self._to_device(values[order]), W.T @ self._to_device(z), sigma)

            def curvature(v: np.ndarray) -> np.ndarray:
                return to_numpy(V0 @ (W @ middle(W.T @ (V0.T @ self._to_device(v)))))

            return curvature

        return ProxyPoint(u, Ku, float(value), make_kernel, multiply, errors, magnitude, make_curvature,
                          project_positive)

    def _vectors(self, roots, source, kept, rotations, select):
        """``(W, order)``: the orthonormal eigenvectors of ``diag(d) + σzzᵀ`` for the eigenvalues
        ``select`` (indices) as the columns of one (n, m) array on the device, in the order
        ``select[order]`` (the roots' first, then the deflated ones' unit vectors), the rotations undone."""
        xp, n = self.xp, source.size
        chosen = source[select]
        found, deflated = np.flatnonzero(chosen >= 0), np.flatnonzero(chosen < 0)
        if found.size:
            frame = None
            if kept.size < n:  # the roots' vectors on the kept coordinates, zero on the deflated ones
                place = np.full(n, kept.size)
                place[kept] = np.arange(kept.size)
                place = xp.asarray(place, device=self.device)

                def placed(a, other: float):
                    return xp.take(xp.concat((a, xp.full(1, other, dtype=xp.float64, device=self.device))), place)

                frame = (placed(roots.z_hat, 0.0), placed(roots.p, math.inf))
            X = roots.vectors(xp.asarray(chosen[found], device=self.device), frame=frame, rows=chosen.size)
        else:
            X = xp.empty((chosen.size, n), dtype=xp.float64, device=self.device)
        block = max(1, BLOCK_ELEMENTS // max(n, 1))
        for start in range(0, deflated.size, block):  # unit vectors
            units = xp.asarray(-1 - chosen[deflated[start:start + block]], device=self.device)
            X[found.size + start:found.size + start + units.shape[0], :] = xp.astype(
                xp.arange(n, device=self.device)[None, :] == units[:, None], xp.float64)
        for p, q, c, s in rotations[::-1].tolist():  # x = Gᵀx', the rotations undone in reverse
            p, q = int(p), int(q)
            column_p, column_q = X[:, p], X[:, q]
            X[:, p], X[:, q] = c * column_p + s * column_q, -s * column_p + c * column_q
        return X.T, np.concatenate((found, deflated))

    def _fall_back(self, u: np.ndarray, rho: float) -> ProxyPoint:
        """A point from a fresh eigendecomposition of ``A = K0 + σuuᵀ`` on the device."""
        self.fallbacks += 1
        xp = self.xp
        sigma = 1.0 / (4.0 * rho)
        u_device = self._to_device(u)
        A = self.K0_device + sigma * (u_device[:, None] * u_device[None, :])
        values_device, vectors = xp.linalg.eigh(A)
        values = to_numpy(values_device).copy()
        negative = np.flatnonzero(values < 0)
        N = xp.take(vectors, xp.asarray(negative, device=self.device), axis=1)
        lam = self._to_device(values[negative])
        uu = float(u @ u)

        def multiply(v: np.ndarray) -> np.ndarray:
            vd = self._to_device(v)
            return to_numpy(self.K0_device @ vd - N @ (lam * (N.T @ vd))) + sigma * float(u @ v) * u

        K0u = to_numpy(self.K0_device @ u_device)
        value = -0.5 * float(u @ K0u) - sigma * uu * uu / 4.0 + rho * float(values[negative] @ values[negative])
        d, V0 = self.spectrum
        magnitude = float(np.abs(d) @ to_numpy(V0.T @ u_device) ** 2)
        errors = roundoff_allowances(u.size, self.frobenius, self.norm, sigma, uu, rho, values[negative], magnitude,
                                     self.measured_backward)

        def make_kernel() -> np.ndarray:
            K = self.K0 + sigma * np.outer(u, u) - to_numpy((N * lam) @ N.T)
            return (K + K.T) / 2

        def make_curvature() -> Callable[[np.ndarray], np.ndarray]:
            middle = DeviceDividedDifferences(xp, values_device, vectors.T @ u_device, sigma)
            return lambda v: to_numpy(vectors @ middle(vectors.T @ self._to_device(v)))

        def project_positive(v: np.ndarray) -> np.ndarray:
            vd = self._to_device(v)
            return v - to_numpy(N @ (N.T @ vd))

        return ProxyPoint(u, multiply(u), float(value), make_kernel, multiply, errors, magnitude, make_curvature,
                          project_positive)


class DeviceDividedDifferences:
    """:class:`indkernel.core.curvature.DividedDifferences` on an array namespace: ``q ↦ QᵀJQq =
    (λ⁺ + σΓp²) ∘ q + σ p ∘ Γ(p ∘ q)`` with the positive-by-other block G of Γ on the device."""

    def __init__(self, xp, values, p, sigma: float):
        self.xp, self.p, self.sigma = xp, p, float(sigma)
        positive = values > 0
        self.positive = positive
        high, low = values[positive], values[~positive]
        self.G = high[:, None] / (high[:, None] - low[None, :])
        self.diagonal = xp.maximum(values, xp.zeros_like(values)) + self.sigma * self._gamma(p * p)

    def _gamma(self, w):
        """``Γw``: 1 on two positive eigenvalues, G and Gᵀ between the sides, 0 on two others."""
        xp, positive = self.xp, self.positive
        w_high, w_low = w[positive], w[~positive]
        out = xp.zeros_like(w)
        out[positive] = xp.sum(w_high) + self.G @ w_low
        out[~positive] = w_high @ self.G
        return out

    def __call__(self, q):
        """``QᵀJQq``, on the device."""
        return self.diagonal * q + self.sigma * self.p * self._gamma(self.p * q)


#: Why a Mercer kernel's problem (PerturbSVM) is refused on a device array.
NO_MERCER_ROUTE = "PerturbSVM (the Mercer penalty) has no device route yet: pass K0 as a NumPy array"


def device_oracle(K0: np.ndarray, like, penalty, oracle, *, copy: bool = False) -> DeviceRankOneProxy:
    """The oracle of a problem whose K0 came as an array of another namespace: the rank-one oracle
    on its device, on the oracle's kernel K0 (validated, and scaled for a componentwise penalty,
    on the host). ``like``: that kernel on the device already (the validated matrix of
    :func:`indkernel.core.namespace.checked_kernel`), or with ``copy`` an array whose device gets a
    copy of K0.

    Raises
    ------
    ValueError
        For an oracle other than ``"rank-one"``, or the Mercer penalty (PerturbSVM), which have no
        device route: pass a NumPy array for those.
    """
    from .penalties import Mercer

    if isinstance(oracle, DeviceRankOneProxy):  # shared by the problems on one K0 (one-vs-rest)
        return oracle
    if isinstance(penalty, Mercer):
        raise ValueError(NO_MERCER_ROUTE)
    if oracle != "rank-one":
        raise ValueError(f"on a device array the oracle is 'rank-one' (its O(n²) update runs there); got oracle={oracle!r}: "
                         "pass K0 as a NumPy array for the others")
    if copy:
        import array_api_compat

        like = array_api_compat.array_namespace(like).asarray(K0, device=device_of(like), copy=True)
    return DeviceRankOneProxy(K0, like)
