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
(:func:`rank_one_curvature_product`) is two passes over V0 and two over W, in one compiled call.
"""

from __future__ import annotations

import numba
import numpy as np

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
    """:func:`rank_one_curvature_product` on the arrays of its divided differences."""
    q = transposed_product(W, transposed_product(V0, v, threads), threads)
    return product(V0, product(W, _apply(positive, negative, G, diagonal, p, sigma, q), threads), threads)


def rank_one_curvature_product(V0: np.ndarray, W: np.ndarray, middle: DividedDifferences, v: np.ndarray,
                               threads: int) -> np.ndarray:
    """``Jv = V0 W (middle(Wᵀ V0ᵀ v))`` for Fortran-ordered V0 and W, on at most ``threads`` numba threads."""
    return _rank_one_product(V0, W, middle.positive, middle.negative, middle.G, middle.diagonal, middle.p,
                             middle.sigma, np.ascontiguousarray(v, dtype=np.float64), threads)


def compile_curvature() -> None:
    """Compile the functions above for the arrays the oracles pass them (a read-only spectrum's V0,
    a formed W), within :func:`indkernel.core.rank_one.compile_oracle`."""
    frozen = np.asfortranarray(np.eye(2))
    frozen.flags.writeable = False
    middle = DividedDifferences(np.array([-1.0, 1.0]), np.ones(2), 0.25)
    middle(np.ones(2))
    rank_one_curvature_product(frozen, np.asfortranarray(np.eye(2)), middle, np.ones(2), 1)
