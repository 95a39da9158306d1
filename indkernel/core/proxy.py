"""The proxy kernel oracle: the inner minimization of ``eq:kern_learn`` in closed form.

For ``u = Yα`` (or ``u = α`` for SVR and one-class) and ``A = K0 + σuuᵀ`` with ``σ = 1/(4ρ)``,
Theorem ``th:kstar`` gives the minimizer ``K* = A_+`` (``eq:kstar``) and, expanding the minimum
(the docs' mathematics page), its value::

    φ(u) = min_{K ⪰ 0} -½uᵀKu + ρ‖K - K0‖²_F = -½uᵀK0u - ‖u‖⁴/(16ρ) + ρ‖A_-‖²_F,

with gradient ``∇φ(u) = -K*u`` and ``K*u = Au - A_-u``. Only the *negative* eigenpairs of ``A``
are needed. An oracle maps ``(u, ρ)`` to a :class:`ProxyPoint`; every problem type and solver talks
to the kernel only through it, so the dense ``eigh`` oracle here and a rank-one update of the
fixed decomposition of ``K0`` (section "Computing proxy kernels") are interchangeable.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from concurrent import futures
from functools import cache, cached_property

import numpy as np
import scipy.linalg
from numba.extending import register_jitable

from . import rank_one, threads
from .curvature import DividedDifferences, RankOneCurvature, rank_one_curvature
from .spectrum_cache import SPECTRA
from .threads import blas_thread_count, blas_threads, threads_for

#: Unit round-off of float64, and the factor ``p(n) = ROUNDOFF_FACTOR·n`` taken for LAPACK's
#: backward error ``‖E‖_F <= p(n)·u·‖A‖_F`` of a symmetric eigendecomposition (LAPACK documents
#: ``p(n)`` as "a modestly growing function of n").
UNIT_ROUNDOFF = np.finfo(float).eps / 2
ROUNDOFF_FACTOR = 8.0


class ProxyPoint:
    """The proxy kernel ``K* = (K0 + σuuᵀ)_+`` at one ``u``, and what the solvers need of it.

    Attributes
    ----------
    u : (n,) array
    Ku : (n,) array, ``K* u`` (the gradient of φ is ``-Ku``).
    value : float, ``φ(u)``.
    value_error, Ku_error : float
        Bounds on the round-off in ``value`` and in ``‖Ku‖₂`` (:func:`roundoff_allowances`).
    product_error : float
        A bound on ``‖multiply(v) - K*v‖₂ / ‖v‖₂`` for any v (``Ku_error = product_error·‖u‖``).
    kernel_error : float
        A bound on ``‖K̃ - K*‖_F`` for the computed kernel K̃ (the backward error of the
        eigendecomposition: the projection onto the PSD cone is nonexpansive).
    uK0u_magnitude : float
        ``uᵀ|K0|u`` with ``|K0|`` the kernel with its eigenvalues taken in absolute value: the
        size of the kernel's part of φ along u, whatever the signs (for the relative gap's scale).
    project_positive : callable
        ``v ↦ Pv`` with ``P = Q diag(λ⁺/λ) Qᵀ`` (``A = Q diag(λ) Qᵀ``), the orthogonal projector
        onto the positive eigenspace of A, so that ``K* = A P``: the map of the consistent test
        rule (:meth:`indkernel.core.problem.IndefiniteProblem.consistent_coef`). O(n²) per product,
        plus O(nm) once to form the m eigenvectors of the smaller side.
    """

    __slots__ = ("u", "Ku", "value", "value_error", "product_error", "Ku_error", "kernel_error", "uK0u_magnitude",
                 "multiply", "project_positive", "_make_kernel", "_kernel", "_make_curvature")

    def __init__(self, u: np.ndarray, Ku: np.ndarray, value: float, make_kernel: Callable[[], np.ndarray],
                 multiply: Callable[[np.ndarray], np.ndarray], errors: tuple[float, float, float] = (0.0, 0.0, 0.0),
                 uK0u_magnitude: float = 0.0,
                 make_curvature: Callable[[], Callable[[np.ndarray], np.ndarray]] | None = None,
                 project_positive: Callable[[np.ndarray], np.ndarray] | None = None):
        self.u, self.Ku, self.value, self.uK0u_magnitude = u, Ku, value, uK0u_magnitude
        self.value_error, self.product_error, self.kernel_error = errors
        self.Ku_error = self.product_error * float(np.linalg.norm(u))
        #: ``multiply(v)``: the product ``K*v`` from the factors, O(n²), never forming K*.
        self.multiply = multiply
        self.project_positive = project_positive if project_positive is not None else _unavailable_projector
        self._make_kernel = make_kernel
        self._kernel: np.ndarray | None = None
        self._make_curvature = make_curvature

    def kernel(self) -> np.ndarray:
        """The (n, n) matrix ``K*`` itself (``eq:kstar``), formed on first request only."""
        if self._kernel is None:
            self._kernel = self._make_kernel()
        return self._kernel

    def curvature(self) -> Callable[[np.ndarray], np.ndarray]:
        """The operator ``v ↦ J v`` with ``J = d(K*(u)u)/du`` (so ``∇²φ(u) = -J``): O(n²) to build
        (:class:`indkernel.core.curvature.DividedDifferences`), O(n²) per product. It holds an n×n array of its
        own (the rank-one oracle's eigenvectors W), freed with the operator: the point keeps none."""
        if self._make_curvature is None:
            raise NotImplementedError("this oracle does not provide second derivatives")
        return self._make_curvature()


def _unavailable_projector(v: np.ndarray) -> np.ndarray:
    raise NotImplementedError("this oracle does not provide the projector onto the positive eigenspace")


def _projector(vectors: np.ndarray, positive: bool) -> Callable[[np.ndarray], np.ndarray]:
    """``v ↦ Pv`` for the projector P onto the positive eigenspace, from the orthonormal
    eigenvectors of one side only: the positive ones (``P = VVᵀ``), or the others
    (``P = I - VVᵀ``), whichever are fewer."""
    if positive:
        return lambda v: vectors @ (vectors.T @ v)
    return lambda v: v - vectors @ (vectors.T @ v)


@register_jitable
def roundoff_allowances(n: int, K0_frobenius: float, K0_norm: float, sigma: float, uu: float, rho: float,
                        neg_values: np.ndarray, uK0u_magnitude: float, backward: float = 0.0) -> tuple[float, float, float]:
    """``(value_error, product_error, kernel_error)``: bounds on the round-off of one oracle point.

    The computed eigenpairs are exact for some ``Ã = A + E`` with ``‖E‖_F <= δ = γ(‖K0‖_F + σ‖u‖²)``,
    ``γ = max(ROUNDOFF_FACTOR·n·u, backward)`` (``backward``: a measured relative backward error,
    from the rank-one update's residual check). ``X ↦ X_±`` are projections onto convex cones, so
    nonexpansive: ``‖Ã_+ - A_+‖_F <= δ``, hence ``‖δ(K*v)‖ <= δ‖v‖`` for any v and
    ``|‖Ã_-‖² - ‖A_-‖²| <= δ(2‖A_-‖ + δ)``. The sums add ``γ`` times the magnitude of their terms
    (for a product, ``γ(‖K0‖₂ + σ‖u‖²)‖v‖``).
    """
    gamma = max(ROUNDOFF_FACTOR * n * UNIT_ROUNDOFF, backward)
    delta = gamma * (K0_frobenius + sigma * uu)
    negative = np.sum(neg_values * neg_values)
    value_error = (gamma * (0.5 * uK0u_magnitude + sigma * uu * uu / 4 + rho * negative)
                   + rho * delta * (2 * np.sqrt(negative) + delta))
    product_error = delta + gamma * (K0_norm + sigma * uu)
    return float(value_error), float(product_error), float(delta)


def clipped_allowances(n: int, K0_frobenius: float, K0_norm: float, uu: float,
                       uK0u_magnitude: float, backward: float = 0.0) -> tuple[float, float, float]:
    """:func:`roundoff_allowances` of a point at ρ = ∞: ``K̃ = (K0 + E)_+`` with ``‖E‖_F <= δ =
    γ‖K0‖_F`` is within δ of ``(K0)_+``, so ``-½uᵀK̃u`` within ``½δ‖u‖²`` of φ, besides the sums'
    ``γ = max(ROUNDOFF_FACTOR·n·u, backward)`` times their magnitude."""
    gamma = max(ROUNDOFF_FACTOR * n * UNIT_ROUNDOFF, backward)
    delta = gamma * K0_frobenius
    return float(0.5 * (gamma * uK0u_magnitude + delta * uu)), float(delta + gamma * K0_norm), float(delta)


class EighProxy:
    """Proxy oracle by a dense symmetric eigendecomposition of ``A = K0 + σuuᵀ`` per point.

    Costs O(n³) per point (the full decomposition: LAPACK's partial one, the eigenpairs with
    ``λ <= 0`` only, was slower).
    The decomposition of ``K0`` itself is computed once, on first use, and cached (for ``‖K0‖₂``
    and ``uᵀ|K0|u``).
    """

    name = "eigh"

    def __init__(self, K0: np.ndarray):
        self.K0 = K0

    @cached_property
    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """``(d, V)`` with ``K0 = V diag(d) Vᵀ``, eigenvalues ascending (read-only arrays); on one
        BLAS thread below :data:`indkernel.core.threads.EIGH_THREADS_FROM` rows. Taken from, or kept in, the process's
        store of spectra (:mod:`indkernel.core.spectrum_cache`), so the fits of a grid on one fold
        decompose its K0 once."""
        return eigendecomposition(self.K0)

    @property
    def norm(self) -> float:
        """``‖K0‖₂``."""
        return float(np.abs(self.spectrum[0]).max())

    def prepare(self) -> None:
        """Compute the one-time setup now (the eigendecomposition of K0), not at the first point."""
        self.spectrum  # noqa: B018 (a cached property)

    @cached_property
    def frobenius(self) -> float:
        """``‖K0‖_F``."""
        return float(np.linalg.norm(self.K0))

    def clipped(self, u: np.ndarray) -> ProxyPoint:
        """The point at ρ = ∞ (``ss:interpretation``): ``K* = (K0)_+`` whatever u, and
        ``φ(u) = -½uᵀ(K0)_+u``, the constant ``ρ‖(K0)_-‖²_F`` (infinite) dropped; the consistent
        rule's P projects onto K0's positive eigenspace. From K0's cached decomposition, O(n²)."""
        d, V = self.spectrum
        d_plus, z = np.maximum(d, 0.0), V.T @ u
        Ku, uu = V @ (d_plus * z), float(u @ u)
        value, magnitude = -0.5 * float(z @ (d_plus * z)), float(np.abs(d) @ (z * z))
        errors = clipped_allowances(u.size, self.frobenius, self.norm, uu, magnitude)
        positive = d > 0
        few = positive.sum() <= positive.size // 2
        side = V[:, positive if few else ~positive]

        def multiply(v: np.ndarray) -> np.ndarray:
            return V @ (d_plus * (V.T @ v))

        def make_kernel() -> np.ndarray:
            K = (V * d_plus) @ V.T
            return (K + K.T) / 2

        return ProxyPoint(u, Ku, value, make_kernel, multiply, errors, magnitude, lambda: multiply,
                          _projector(side, few))

    def __call__(self, u: np.ndarray, rho: float) -> ProxyPoint:
        if rho == np.inf:
            return self.clipped(u)
        sigma = 1.0 / (4.0 * rho)
        A = self.K0 + sigma * np.outer(u, u)
        values, vectors = scipy.linalg.eigh(A)
        negative = values < 0
        neg_values, neg_vectors = values[negative], vectors[:, negative]
        K0u = self.K0 @ u
        uu = u @ u
        A_neg_u = neg_vectors @ (neg_values * (neg_vectors.T @ u))
        Ku = K0u + sigma * uu * u - A_neg_u
        value = -0.5 * (u @ K0u) - sigma * uu * uu / 4.0 + rho * (neg_values @ neg_values)
        d, V0 = self.spectrum
        magnitude = float(np.abs(d) @ (V0.T @ u) ** 2)  # uᵀ|K0|u
        errors = roundoff_allowances(u.size, self.frobenius, self.norm, sigma, uu, rho, neg_values, magnitude)

        def make_kernel() -> np.ndarray:
            K = A - (neg_vectors * neg_values) @ neg_vectors.T
            return (K + K.T) / 2

        def multiply(v: np.ndarray) -> np.ndarray:
            return self.K0 @ v + sigma * (u @ v) * u - neg_vectors @ (neg_values * (neg_vectors.T @ v))

        def make_curvature() -> Callable[[np.ndarray], np.ndarray]:
            middle = DividedDifferences(values, vectors.T @ u, sigma)
            return lambda v: vectors @ middle(vectors.T @ v)

        positive = values > 0
        few = positive.sum() <= positive.size // 2
        project = _projector(vectors[:, positive if few else ~positive], few)
        return ProxyPoint(u, Ku, float(value), make_kernel, multiply, errors, magnitude, make_curvature, project)


def decompose_concurrently(oracles: Sequence[EighProxy], done: Callable[[], object] = lambda: None) -> None:
    """Compute (and cache) several oracles' eigendecompositions, as many at a time as BLAS has
    threads, each on one thread (with one BLAS thread, in the calling thread); ``done()`` after each.

    For the one-vs-one pairs: their matrices (a few hundred rows at n = 2000) are too small for
    BLAS's threads to pay, but two decompositions at once nearly halve the time. They run in
    numpy's ``eigh`` (LAPACK's syevd, which releases the GIL, as scipy's wrapper does not; its
    2n² workspace is small at these sizes), the vectors stored Fortran-ordered as scipy's, for the
    rank-one oracle's column products. One oracle's spectrum stays scipy's (:attr:`EighProxy.spectrum`).
    The threads are started once and kept (:func:`_decomposers`): started for each call, they cost a
    small multiclass fit about what running two decompositions at once saves it.
    """
    pending = [oracle for oracle in oracles if "spectrum" not in vars(oracle)]
    if not pending:
        return
    workers = min(blas_thread_count(), len(pending))
    matrices = [oracle.K0 for oracle in pending]
    with blas_threads(1):
        spectra = map(_cached_syevd, matrices) if workers <= 1 else _decomposers(workers).map(_cached_syevd, matrices)
        for oracle, spectrum in zip(pending, spectra, strict=True):
            oracle.spectrum = spectrum
            done()


@cache
def _decomposers(workers: int) -> futures.ThreadPoolExecutor:
    """The process's pool of ``workers`` threads for :func:`decompose_concurrently`, started on first use
    (a forked child starts its own: the parent's threads are not in it)."""
    return futures.ThreadPoolExecutor(workers, thread_name_prefix="indkernel-eigh")


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_decomposers.cache_clear)


def eigendecomposition(K0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(d, V)`` with ``K0 = V diag(d) Vᵀ``, eigenvalues ascending (LAPACK's syevr through scipy;
    read-only arrays), from the process's store of spectra or computed and kept there: every fit on
    one matrix, an Indefinite SVM's and the spectrum baselines' alike, decomposes it once."""
    return SPECTRA.get(K0, "syevr", _scipy_eigh)


def _scipy_eigh(K0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with blas_threads(1 if K0.shape[0] < threads.EIGH_THREADS_FROM else None):
        return scipy.linalg.eigh(K0)


def _numpy_eigh(K0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, vectors = np.linalg.eigh(K0)
    return values, np.asfortranarray(vectors)


def _cached_syevd(K0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return SPECTRA.get(K0, "syevd", _numpy_eigh)


class RankOneProxy(EighProxy):
    """Proxy oracle by the rank-one update of the fixed ``K0 = V0 diag(d) V0ᵀ``: O(n²) per point.

    With ``z = V0ᵀu`` the eigenpairs of ``A = V0 (diag(d) + σzzᵀ) V0ᵀ`` come from
    :func:`indkernel.core.rank_one.rank_one_eigen`. Only two products with ``V0`` touch n×n memory
    (``z = V0ᵀu`` and ``K*u = V0 t``); ``uᵀK0u = zᵀdiag(d)z``, and ``K*u = Au - A_-u`` needs only the
    negative eigenpairs (or ``A_+u`` from the positive ones, whichever side has fewer vectors).
    Every point starts from the same ``(V0, d)``, so errors never accumulate. A cheap check
    (eigen-residual and orthogonality of the vectors used, along a random combination) sends a
    failed point to the dense ``eigh`` oracle; ``fallbacks`` counts those points.
    """

    name = "rank-one"
    #: Relative eigen-residual or loss of orthogonality above which a point falls back to ``eigh``.
    CHECK_TOL = 1e-10

    def __init__(self, K0: np.ndarray):
        super().__init__(K0)
        self.fallbacks = 0
        self._probe = np.random.default_rng(0)

    def __call__(self, u: np.ndarray, rho: float) -> ProxyPoint:
        if rho == np.inf:
            return self.clipped(u)
        return self._update(u, rho, threads_for(u.size))

    def draw_probe(self, n: int, count: int | None = None) -> np.ndarray:
        """The random vector (n standard normals, from this oracle's own generator) along which a
        point's eigenvectors are checked; ``count`` of them, one per row."""
        return self._probe.standard_normal(n if count is None else (count, n))

    def _update(self, u: np.ndarray, rho: float, threads: int) -> ProxyPoint:
        """The point at ``u``; it and the closures it returns run on at most ``threads`` numba threads
        (each compiled call is given the count: one runs in the calling thread)."""
        d, V0 = self.spectrum
        try:
            found = rank_one.rank_one_point(d, V0, u, rho, self.draw_probe(u.size), threads)
        except rank_one.SecularEquationError:
            return self._fall_back(u, rho)
        if not found.backward <= self.CHECK_TOL:
            return self._fall_back(u, rho)
        return self._from_found(u, rho, threads, found)

    def adopt(self, u: np.ndarray, rho: float, found: rank_one.RankOnePoint) -> ProxyPoint:
        """The point at u from the update that compiled code did there (:func:`indkernel.core.rank_one._point`,
        its check passed), as if computed here."""
        return self._from_found(u, rho, threads_for(u.size), found)

    def _from_found(self, u: np.ndarray, rho: float, threads: int, found: rank_one.RankOnePoint) -> ProxyPoint:
        """The point at u from the update's results; it and its closures run on at most ``threads``
        numba threads."""
        d, V0 = self.spectrum
        sigma = 1.0 / (4.0 * rho)
        eigen, z, use_negative = found.eigen, found.z, found.use_negative
        negative = eigen.values < 0
        side = negative if use_negative else ~negative
        values = eigen.values[side]

        def make_kernel() -> np.ndarray:
            Y = V0 @ eigen.vectors(side, threads)
            K = (Y * values) @ Y.T
            if use_negative:
                K = self.K0 + sigma * np.outer(u, u) - K
            return (K + K.T) / 2

        def multiply(v: np.ndarray) -> np.ndarray:
            """``K*v = V0 t``: ``t = WΛWᵀs`` (or ``A's - WΛWᵀs``) with ``s = V0ᵀv``, in V0 coordinates."""
            s = rank_one.transposed_product(V0, v, threads)
            t = eigen.eigenvector_sums(side, np.zeros(values.size), s, threads)[0]
            if use_negative:
                t = d * s + sigma * (z @ s) * z - t
            return rank_one.product(V0, t, threads)

        def make_curvature() -> Callable[[np.ndarray], np.ndarray]:
            """In ``V0 W`` coordinates, ``W`` the eigenvectors of ``diag(d) + σzzᵀ`` (one more n×n
            array, O(n²) to form); each product two passes over V0 and two over W."""
            W = eigen.vectors(slice(None), threads)
            return RankOneCurvature(rank_one_curvature(V0, eigen.values, W, z, sigma, threads))

        def project_positive(v: np.ndarray) -> np.ndarray:
            """``Pv = V0 (W_+W_+ᵀ) V0ᵀv`` (or ``I - W_≤0W_≤0ᵀ`` inside), forming the eigenvectors
            W of the smaller side (O(nm)) on each call."""
            positive = eigen.values > 0
            few = positive.sum() <= positive.size // 2
            s = rank_one.transposed_product(V0, v, threads)
            t = _projector(eigen.vectors(positive if few else ~positive, threads), few)(s)
            return rank_one.product(V0, t, threads)

        # the measured error along one random direction, taken to a Frobenius norm (x4 for the draw)
        errors = roundoff_allowances(u.size, self.frobenius, self.norm, sigma, float(u @ u), rho, eigen.values[negative],
                                     found.magnitude, 4 * np.sqrt(u.size) * found.backward)
        return ProxyPoint(u, found.Ku, found.value, make_kernel, multiply, errors, found.magnitude, make_curvature,
                          project_positive)

    def _fall_back(self, u: np.ndarray, rho: float) -> ProxyPoint:
        self.fallbacks += 1
        return EighProxy.__call__(self, u, rho)


class MercerProxy:
    """Proxy oracle for a PSD ``K0`` (PerturbSVM, ``eq:learn-mercer``): ``K* = K0 + σuuᵀ``
    (``eq:kstar_psd``) is already PSD, so ``φ(u) = -½uᵀK0u - ‖u‖⁴/(16ρ)`` and
    ``K*u = K0u + σ‖u‖²u``: one product with K0 per point, no eigendecomposition. The caller
    guarantees K0 ⪰ 0 (:func:`psd_part`). The consistent test rule's projector is the identity:
    a Mercer kernel's rows ``k0(x) = Φφ(x)`` lie in the range of ``K0 = ΦΦᵀ``, where P acts as I.
    """

    name = "mercer"

    def __init__(self, K0: np.ndarray, norm: float, clipped: tuple[float, float] = (0.0, 0.0)):
        self.K0, self.norm = K0, norm  # norm: ‖K0‖₂, known from the PSD check
        self.frobenius = float(np.linalg.norm(K0))
        #: ``(‖N‖₂, ‖N‖_F)`` of the negative part N that :func:`psd_part` clipped from the caller's K0
        self.clipped = clipped

    def clipping_allowance(self, uu: float, rho: float) -> float:
        """What clipping the caller's K0 to ``(K0)_+ = K0 + N`` adds to an upper bound at a point
        with ``‖u‖² = uu``: the bound comes from the PSD kernel ``K = (K0)_+ + σuuᵀ``, and for the
        caller's K0 its penalty is ``ρ‖K - K0‖²_F = ρ‖K - (K0)_+‖²_F + 2ρσ uᵀNu + ρ‖N‖²_F`` with
        ``2ρσ = ½``, so ``p*(K0)`` is at most the clipped problem's bound plus
        ``½‖N‖₂·uu + ρ‖N‖²_F``. At ρ = ∞ both problems are the machine on ``(K0)_+``: 0. 0 for a PSD K0."""
        spectral, frobenius = self.clipped
        return 0.0 if rho == np.inf else 0.5 * spectral * uu + rho * frobenius ** 2

    def __call__(self, u: np.ndarray, rho: float) -> ProxyPoint:
        sigma = 1.0 / (4.0 * rho)
        K0u, uu = self.K0 @ u, u @ u
        uK0u = float(u @ K0u)  # = uᵀ|K0|u, K0 being PSD
        value = -0.5 * uK0u - sigma * uu * uu / 4.0
        # ρ = 0: φ has no ρ‖A_-‖² term to round (ρ = ∞ gives σ = 0, K* = K0)
        errors = roundoff_allowances(u.size, self.frobenius, self.norm, sigma, uu, 0.0, np.empty(0), abs(uK0u))
        return ProxyPoint(u, K0u + sigma * uu * u, float(value), lambda: self.K0 + sigma * np.outer(u, u),
                          lambda v: self.K0 @ v + sigma * (u @ v) * u, errors, abs(uK0u),
                          lambda: lambda v: self.K0 @ v + sigma * (uu * v + 2 * (u @ v) * u), np.array)


#: Negative eigenvalues down to ``-PSD_TOL·‖K0‖₂`` are taken for the noise of a Mercer kernel
#: computed in low precision (a Gram matrix computed in float32 has about 1e-8 relative) and
#: clipped; the certified upper bounds pay for the clip (:meth:`MercerProxy.clipping_allowance`).
PSD_TOL = 1e-6
#: A clip is warned about beyond what computing a Gram matrix in float64 leaves: each entry within
#: about ``COMPUTED_KERNEL_FACTOR·u`` of its value (distances by ``‖x‖² + ‖y‖² - 2⟨x, y⟩`` lose
#: digits: scikit-learn's Gaussian Gram matrices have eigenvalues near -1e-13·‖K0‖₂ at n = 30), so
#: its eigenvalues within n times that.
COMPUTED_KERNEL_FACTOR = 1e3


def psd_part(K0: np.ndarray) -> tuple[np.ndarray, float, tuple[float, float]]:
    """``(K, ‖K‖₂, (‖N‖₂, ‖N‖_F))`` with ``K = K0`` if it is PSD, else ``K = (K0)_+ = K0 + N`` if
    its negative eigenvalues are small (above ``-PSD_TOL·‖K0‖₂``), N the clipped negative part; a
    ValueError pointing to the indefinite-kernel problem otherwise. The problem is then solved on
    ``(K0)_+``, and its certified upper bounds are widened so they hold for the K0 given; a clip
    beyond the round-off of a Gram matrix computed in float64 (``COMPUTED_KERNEL_FACTOR·n·u·‖K0‖₂``)
    is warned about."""
    values = scipy.linalg.eigvalsh(K0)
    lowest, norm = float(values[0]), float(np.abs(values).max())
    if lowest >= 0:
        return K0, norm, (0.0, 0.0)
    if lowest < -PSD_TOL * norm:
        raise ValueError(
            f"K0 is not positive semidefinite (smallest eigenvalue {lowest:.3g}, largest {values[-1]:.3g}); "
            "PerturbSVM (eq:learn-mercer) needs a Mercer kernel: use SVMProblem / IndefiniteSVC for indefinite K0"
        )
    negative = values[values < 0]
    if lowest < -COMPUTED_KERNEL_FACTOR * K0.shape[0] * UNIT_ROUNDOFF * norm:
        warnings.warn(f"K0 has {negative.size} negative eigenvalue(s), the smallest {lowest:.3g} ({lowest / norm:.2g} of "
                      "‖K0‖₂), beyond a float64 Gram matrix's round-off: PerturbSVM solves on (K0)_+ and widens its certified upper bounds by "
                      "what the clip can change; use SVMProblem / IndefiniteSVC to solve on K0 itself", stacklevel=3)
    d, V = scipy.linalg.eigh(K0)
    K = (V * np.maximum(d, 0.0)) @ V.T
    return (K + K.T) / 2, norm, (float(-lowest), float(np.linalg.norm(negative)))


#: A proxy-kernel oracle: ``oracle(u, rho)`` is the point of ``K0 + uuᵀ/(4ρ)``.
Oracle = Callable[[np.ndarray, float], ProxyPoint]

#: Oracles by name; a problem takes ``oracle=<name>``.
ORACLES = {EighProxy.name: EighProxy, RankOneProxy.name: RankOneProxy}


def make_oracle(name, K0: np.ndarray):
    """The oracle called ``name`` on ``K0`` (or a ready oracle), else a ValueError listing the
    known names."""
    if not isinstance(name, str):
        if not callable(name):
            raise TypeError(f"oracle must be one of {sorted(ORACLES)} or an oracle object; got {name!r}")
        return name
    if name not in ORACLES:
        raise ValueError(f"oracle must be one of {sorted(ORACLES)}; got {name!r}")
    return ORACLES[name](K0)
