"""Conjugate gradients restricted to the free variables and the hyperplane ``aᵀδ = 0`` (the
equality of the feasible set A), on Newton's system of a concave objective: :func:`tangent_cg`
for the certificate's Newton refinement (its caller scores each step), :func:`steihaug` (compiled,
in one call) for the projected Newton method's direction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numba
import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .curvature import hessian_product


def on_hyperplane(a: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The orthogonal projection onto ``aᵀδ = 0``."""
    aa = float(a @ a)

    def project(w: np.ndarray) -> np.ndarray:
        return w - a * (float(a @ w) / aa)

    return project


def tangent_cg(operator: Callable[[np.ndarray], tuple[np.ndarray, float, Any]], residual: np.ndarray,
               project: Callable[[np.ndarray], np.ndarray], steps: int) -> Iterator[tuple[float, np.ndarray, Any, float]]:
    """Conjugate gradients from δ = 0 for ``project(M δ) = residual`` (``residual`` already on the
    hyperplane), M symmetric positive definite on it.

    ``operator(d)`` returns ``(M d, floor, extra)``: below the curvature ``floor`` the step is noise
    and the iteration stops (as it does on a nonpositive or non-finite curvature, or a zero
    residual). Yields ``(step, d, extra, ‖r‖)`` per step: the caller moves ``δ += step·d`` and
    decides whether to go on (trust region, patience, a residual target) by breaking out.
    """
    search, rr = residual.copy(), float(residual @ residual)
    for _ in range(steps):
        if rr == 0.0:
            return
        product, floor, extra = operator(search)
        product = project(product)
        curvature = float(search @ product)
        if not (curvature > floor and np.isfinite(curvature)):
            return
        step = rr / curvature
        residual = residual - step * product
        rr_next = float(residual @ residual)
        yield step, search, extra, float(np.sqrt(rr_next))
        search, rr = residual + (rr_next / rr) * search, rr_next


@numba.njit(cache=True, error_model="numpy")
def steihaug(hessian, g, free, a, shift, radius, steps, first_residual):
    """``(δ, ‖r₀‖)``: truncated conjugate gradients from δ = 0 on ``(-∇²f(x) + μI)δ = ∇f(x)`` over
    the ``free`` variables (indices) and the hyperplane ``aᵀδ = 0`` (zero outside ``free``),
    stopped on the trust-region sphere of ``radius`` (Steihaug), at a nonpositive curvature, after
    ``steps`` products or at the relative residual ``min(½, √(‖r₀‖/first_residual))`` (0: this is
    the first direction). ``hessian`` as :func:`indkernel.core.curvature.hessian_product` takes it."""
    direction = np.zeros(g.size)
    a_free = a[free]
    if a_free.size < 2:
        return direction, 0.0
    aa = np.dot(a_free, a_free)
    residual = g[free] - a_free * (np.dot(a_free, g[free]) / aa)  # on the hyperplane
    r0 = np.sqrt(np.dot(residual, residual))
    target = r0 * min(0.5, np.sqrt(r0 / (first_residual if first_residual > 0 else r0))) if r0 > 0 else 0.0
    solution, search, rr = np.zeros(free.size), residual.copy(), np.dot(residual, residual)
    full = np.zeros(g.size)
    for _ in range(steps):
        if rr == 0.0:
            break
        full[free] = search
        product = shift * search - hessian_product(hessian, full)[free]
        product = product - a_free * (np.dot(a_free, product) / aa)
        curvature = np.dot(search, product)
        if not (curvature > 0.0 and np.isfinite(curvature)):
            break
        step = rr / curvature
        if np.sqrt(np.dot(solution + step * search, solution + step * search)) >= radius:
            solution = solution + _to_sphere(solution, search, radius) * search
            break
        solution = solution + step * search
        residual = residual - step * product
        rr_next = np.dot(residual, residual)
        if np.sqrt(rr_next) <= target:
            break
        search, rr = residual + (rr_next / rr) * search, rr_next
    direction[free] = solution
    return direction, r0


@register_jitable
def _to_sphere(x: np.ndarray, d: np.ndarray, radius: float) -> float:
    """The step τ >= 0 with ``‖x + τd‖ = radius`` (for ``‖x‖ <= radius``)."""
    dd, xd, xx = np.dot(d, d), np.dot(x, d), np.dot(x, x)
    return (-xd + np.sqrt(max(xd * xd + dd * (radius * radius - xx), 0.0))) / dd


def newton_direction(hessian, g, free, a, shift, radius, steps, first_residual):
    """:func:`steihaug` for the Hessian as :func:`indkernel.core.curvature.hessian_product` takes it: one
    compiled call for the compiled form (a tuple), the same function run by Python on a callable."""
    solve = steihaug if isinstance(hessian, tuple) else steihaug.py_func
    return solve(hessian, g, free, a, float(shift), float(radius), int(steps), float(first_residual))


@overload(newton_direction, jit_options={"error_model": "numpy"})
def _compiled_newton_direction(hessian, g, free, a, shift, radius, steps, first_residual):
    if isinstance(hessian, types.BaseTuple):
        return lambda hessian, g, free, a, shift, radius, steps, first_residual: steihaug(
            hessian, g, free, a, shift, radius, steps, first_residual)
    return None
