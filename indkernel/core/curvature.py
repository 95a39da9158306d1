"""The second derivative of the proxy kernel's product ``u ↦ K*(u)u``, compiled.

With ``A = K0 + σuuᵀ = Q diag(λ) Qᵀ``, ``p = Qᵀu`` and ``q = Qᵀδ``, the Daleckii–Krein formula for
the derivative of ``X ↦ X_+`` along ``E = σ(δuᵀ + uδᵀ)`` gives, with the divided differences
``Γ_ij = (λ_i⁺ - λ_j⁺)/(λ_i - λ_j)`` (1 on two positive eigenvalues, 0 on two non-positive ones,
``λ_i/(λ_i - λ_j)`` on a positive ``λ_i`` and a non-positive ``λ_j``)::

    Qᵀ J δ = (λ⁺ + σ Γ p²) ∘ q + σ p ∘ Γ(p ∘ q),

a symmetric positive semidefinite operator (φ is concave), so ``∇²φ(u) = -J``. The negative
eigen-directions of A, where K* is singular, get their curvature ``σ Σ_j Γ_ij p_j²`` from the
coupling with the positive ones: a Newton method on f is well posed where one on the frozen
kernel K* is not. Only the positive-by-negative block of Γ is stored, at most n²/4 numbers.

For the rank-one oracle ``Q = V0 W`` (W the eigenvectors of ``diag(d) + σzzᵀ``): a product
(:class:`RankOneCurvature`) is two passes over V0 and two over W, in one compiled call.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from .projection import read_only
from .rank_one import product, transposed_product


class DividedDifferences:
    """``q ↦ QᵀJQq`` (the module docstring) for the eigenvalues λ of A and ``p = Qᵀu``."""

    __slots__ = ("positive", "negative", "G", "diagonal", "p", "sigma")

    def __init__(self, values: np.ndarray, p: np.ndarray, sigma: float):
        self.p, self.sigma = np.ascontiguousarray(p, dtype=np.float64), float(sigma)
        self.positive, self.negative, self.G, self.diagonal = _divided_differences(
            np.ascontiguousarray(values, dtype=np.float64), self.p, self.sigma)

    def __call__(self, q: np.ndarray) -> np.ndarray:
        """``QᵀJQq = (λ⁺ + σΓp²) ∘ q + σ p ∘ Γ(p ∘ q)``; O(n + |positive|·|negative|)."""
        return _apply(self.positive, self.negative, self.G, self.diagonal, self.p, self.sigma,
                      np.ascontiguousarray(q, dtype=np.float64))


@numba.njit(cache=True, error_model="numpy")
def _gamma(positive, negative, G, w):
    """``Γw`` from the positive-by-negative block G of Γ."""
    out = np.empty(w.size)
    total = 0.0
    for i in positive:
        total += w[i]
    for k in range(positive.size):
        s = total
        for m in range(negative.size):
            s += G[k, m] * w[negative[m]]
        out[positive[k]] = s
    for m in range(negative.size):
        s = 0.0
        for k in range(positive.size):
            s += G[k, m] * w[positive[k]]
        out[negative[m]] = s
    return out


@numba.njit(cache=True, error_model="numpy")
def _divided_differences(values, p, sigma):
    """``(positive, negative, G, diagonal)``: the indices of the positive and the other
    eigenvalues, ``G_km = λ_k/(λ_k - λ_m)`` on them, and the diagonal ``λ⁺ + σΓp²``."""
    positive, negative = np.flatnonzero(values > 0), np.flatnonzero(~(values > 0))
    G = np.empty((positive.size, negative.size))
    for k in range(positive.size):
        high = values[positive[k]]
        for m in range(negative.size):
            G[k, m] = high / (high - values[negative[m]])
    diagonal = np.maximum(values, 0.0) + sigma * _gamma(positive, negative, G, p * p)
    return positive, negative, G, diagonal


@numba.njit(cache=True, error_model="numpy")
def _apply(positive, negative, G, diagonal, p, sigma, q):
    """``(λ⁺ + σΓp²) ∘ q + σ p ∘ Γ(p ∘ q)``."""
    return diagonal * q + sigma * p * _gamma(positive, negative, G, p * q)


@numba.njit(cache=True, error_model="numpy")
def _rank_one_product(V0, W, positive, negative, G, diagonal, p, sigma, v, threads):
    """:class:`RankOneCurvature`'s product on the arrays of its divided differences."""
    q = transposed_product(W, transposed_product(V0, v, threads), threads)
    return product(V0, product(W, _apply(positive, negative, G, diagonal, p, sigma, q), threads), threads)


@numba.njit(cache=True, error_model="numpy")
def rank_one_curvature(V0, values, W, z, sigma, threads):
    """The arrays of :class:`RankOneCurvature` for ``A = V0 (diag(d) + σzzᵀ) V0ᵀ`` whose inner matrix has
    the eigenvalues ``values`` and the (Fortran-ordered) eigenvectors W: ``(V0, W, positive, negative,
    G, diagonal, p, σ, threads)``, the divided differences of :class:`DividedDifferences` at ``p = Wᵀz``."""
    p = transposed_product(W, z, threads)
    positive, negative, G, diagonal = _divided_differences(values, p, sigma)
    return V0, W, positive, negative, G, diagonal, p, sigma, threads


class RankOneCurvature:
    """``v ↦ Jv = V0 W (middle(Wᵀ V0ᵀ v))`` for Fortran-ordered V0 and W and the divided differences
    ``middle``, on at most ``threads`` numba threads; ``compiled``: its arrays (:func:`rank_one_curvature`),
    for compiled code (:func:`compiled_hessian`)."""

    __slots__ = ("compiled",)

    def __init__(self, compiled: tuple):
        self.compiled = compiled

    def __call__(self, v: np.ndarray) -> np.ndarray:
        V0, W, positive, negative, G, diagonal, p, sigma, threads = self.compiled
        return _rank_one_product(V0, W, positive, negative, G, diagonal, p, sigma,
                                 np.ascontiguousarray(v, dtype=np.float64), threads)


def hessian_product(hessian, v: np.ndarray) -> np.ndarray:
    """``∇²f(α)v`` for the Hessian as :meth:`indkernel.core.problem.IndefiniteProblem.hessian_product_at`
    gives it: in Python a callable (``hessian(v)``); in compiled code (a function numba compiles
    calling this) also the rank-one oracle's compiled form, a tuple (:func:`compiled_hessian`)."""
    return hessian(v)


def compiled_hessian(curvature, rows: np.ndarray, weights: np.ndarray, n: int, quadratic: np.ndarray) -> tuple:
    """The compiled form of ``∇²f(α)v = -Uᵀ J U v - D v`` (``J`` the rank-one oracle's
    :class:`RankOneCurvature` ``curvature``, its arrays in ``curvature.compiled``; U the
    map α ↦ u of the problem as ``u_i = Σ_{rows[j] = i} weights[j]·v_j``, the penalty's scale in the
    weights; D the (dim,) diagonal of ℓ's quadratic part, zeros for a linear ℓ) for
    :func:`hessian_product` in compiled code."""
    return (*curvature.compiled, rows, weights, n, quadratic)


# (numba's on-disk cache of a compiled caller, :func:`indkernel.core.tangent_cg.steihaug`, is keyed
# by the caller's file only: after editing this function, clear the ``.nbi``/``.nbc`` files of
# ``indkernel/core/__pycache__``)
@overload(hessian_product, jit_options={"error_model": "numpy"})
def _compiled_hessian_product(hessian, v):
    if isinstance(hessian, types.BaseTuple):
        def apply(hessian, v):
            V0, W, positive, negative, G, diagonal, p, sigma, threads, rows, weights, n, quadratic = hessian
            u = np.zeros(n)
            for j in range(v.size):
                u[rows[j]] += weights[j] * v[j]
            Ju = _rank_one_product(V0, W, positive, negative, G, diagonal, p, sigma, u, threads)
            out = np.empty(v.size)
            for j in range(v.size):
                out[j] = -weights[j] * Ju[rows[j]] - quadratic[j] * v[j]
            return out

        return apply
    return None


def compile_curvature() -> None:
    """Compile the functions above for the arrays the oracles pass them (a read-only spectrum's V0,
    a formed W), and Newton's direction on them, within :func:`indkernel.core.rank_one.compile_oracle`."""
    frozen = np.asfortranarray(np.eye(2))
    frozen.flags.writeable = False
    DividedDifferences(np.array([-1.0, 1.0]), np.ones(2), 0.25)(np.ones(2))
    curvature = RankOneCurvature(rank_one_curvature(frozen, np.array([-1.0, 1.0]), np.asfortranarray(np.eye(2)),
                                                    np.ones(2), 0.25, 1))
    curvature(np.ones(2))
    from .tangent_cg import steihaug  # (it imports this module)

    # Newton's direction on a problem's compiled Hessian (IndefiniteProblem.hessian_product_at's arrays)
    hessian = compiled_hessian(curvature, np.arange(2, dtype=np.int64), np.ones(2), 2, np.zeros(2))
    steihaug(hessian, np.ones(2), np.arange(2), read_only(np.array([1.0, -1.0])), 0.0, 1.0, 2, 0.0)
