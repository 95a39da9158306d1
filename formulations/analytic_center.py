"""The analytic center of a polyhedron cut by one hyperplane, the step ACCPM repeats (``alg:accpm``)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ._base import Formulation


def analytic_center(G, h, y) -> Formulation:
    """``argmin_x -Σ_k log(h_k - G_k x)`` subject to ``yᵀx = 0``.

    Parameters
    ----------
    G : (m, n) array; h : (m,) array; y : (n,) array (the labels, for ACCPM's set A).

    Returns
    -------
    Formulation with variable ``x`` (n,); the set must have a nonempty interior.
    """
    G, h, y = np.asarray(G, dtype=float), np.asarray(h, dtype=float), np.asarray(y, dtype=float)
    if G.ndim != 2 or h.shape != (G.shape[0],) or y.shape != (G.shape[1],):
        raise ValueError(f"need G of shape (m, n), h of shape (m,), y of shape (n,); got {G.shape}, {h.shape}, {y.shape}")
    x = cp.Variable(G.shape[1], name="x")
    problem = cp.Problem(cp.Maximize(cp.sum(cp.log(h - G @ x))), [y @ x == 0])
    return Formulation(problem, {"x": x})
