"""Conjugate gradients restricted to the free variables and the hyperplane ``aᵀδ = 0`` (the
equality of the feasible set A): the certificate's Newton refinement and the projected Newton
method's direction both run it on Newton's system of a concave objective."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


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
