"""The feasible set of every problem type: a box cut by one hyperplane,
``A = {x : aᵀx = b, lo <= x <= hi}`` (the SVM's ``{yᵀα = 0, 0 <= α <= C}``, the SVR's split
variables, the one-class simplex); a machine says which (:mod:`indkernel.core.machines`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import safe_norm
from .projection import project_box_hyperplane
from .proxy import UNIT_ROUNDOFF


@dataclass(frozen=True, eq=False)
class FeasibleSet:
    """``A = {x : aᵀx = b, lo <= x <= hi}``, read-only (the problem validated it once).

    Attributes
    ----------
    a : (dim,) array; b : float; lo, hi : (dim,) arrays (``hi`` may hold ``inf``: an unbounded set).
    """

    a: np.ndarray
    b: float
    lo: np.ndarray
    hi: np.ndarray

    def __post_init__(self) -> None:
        for array in (self.a, self.lo, self.hi):
            array.setflags(write=False)

    @property
    def dim(self) -> int:
        """The number of variables."""
        return self.a.size

    @property
    def is_bounded(self) -> bool:
        """True if every bound is finite (ACCPM's localization set and a trust radius need it)."""
        return bool(np.all(np.isfinite(self.lo)) and np.all(np.isfinite(self.hi)))

    def project(self, x: np.ndarray) -> np.ndarray:
        """The exact Euclidean projection of x onto A; O(n log n)."""
        return project_box_hyperplane(x, self.a, self.b, self.lo, self.hi)

    def start(self) -> np.ndarray:
        """The projection of the box's midpoint onto A (``C/2`` for the SVM, where the paper's code
        starts)."""
        return self.project((self.lo + self.hi) / 2)

    def violation(self, x: np.ndarray) -> float:
        """How far x is from A: the largest bound or equality violation, relative to the box."""
        scale = max(1.0, float(np.max(np.abs(self.hi))), float(np.max(np.abs(self.lo))))
        bounds = max(float(np.max(self.lo - x)), float(np.max(x - self.hi)), 0.0)
        equality = abs(float(self.a @ x) - self.b) / np.sqrt(self.dim)
        return max(bounds, equality) / scale

    def distance_bound(self, x: np.ndarray) -> float:
        """A bound on the distance from x to A: clipping x into the box moves it by the excess e
        and the residual of ``aᵀx = b`` by at most ``‖a‖·‖e‖``, so the distance is at most
        ``|aᵀx - b|/‖a‖ + 2‖e‖``."""
        excess = safe_norm(np.maximum(self.lo - x, 0.0) + np.maximum(x - self.hi, 0.0))
        return abs(float(self.a @ x) - self.b) / float(np.linalg.norm(self.a)) + 2 * excess

    def only_point(self) -> np.ndarray | None:
        """The feasible point when A is a single point (the one-class set at ν = 1: x = e/n), else None."""
        a, b, lo, hi = self.a, self.b, self.lo, self.hi
        if np.all(lo == hi):
            return lo.astype(float)
        for end in (np.where(a > 0, hi, lo), np.where(a > 0, lo, hi)):  # the ends of aᵀx over the box
            # within the round-off of this sum (not of the box: with C = 1e8 beside C = 1e-8 the
            # ends miss b by 1e-7, a whole feasible set away)
            if abs(float(a @ end) - b) <= 4 * self.dim * UNIT_ROUNDOFF * (float(np.abs(a) @ np.abs(end)) + abs(b)):
                return end.astype(float)
        return None
