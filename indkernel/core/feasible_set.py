"""The feasible set of every problem type: a box cut by one hyperplane,
``A = {x : aᵀx = b, lo <= x <= hi}`` (the SVM's ``{yᵀα = 0, 0 <= α <= C}``, the SVR's split
variables, the one-class simplex, the squared-hinge SVM's ``{yᵀα = 0, α >= 0}``, unbounded above);
a machine says which (:mod:`indkernel.core.machines`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import safe_norm
from .projection import bound_excess, project_box_hyperplane, read_only
from .proxy import UNIT_ROUNDOFF

#: Coordinates this close to a bound (relative to the box) are snapped to it at the end of a solve.
SNAP_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class FeasibleSet:
    """``A = {x : aᵀx = b, lo <= x <= hi}``, read-only (the problem validated it once).

    Attributes
    ----------
    a : (dim,) array; b : float; lo : (dim,) finite array.
    hi : (dim,) array; it may hold ``inf`` (an unbounded set).
    is_bounded : bool, every bound is finite (ACCPM's localization set needs it).
    reach : (dim,) finite array or None
        The upper ends of a box ``lo <= x <= reach`` that holds every maximizer of the problems the
        machine poses on A (a level-set bound; :class:`indkernel.core.machines.SquaredHinge`): the
        scale of A where ``hi`` is infinite (overflow checks, step lengths, the start). None: ``hi``.
    """

    a: np.ndarray
    b: float
    lo: np.ndarray
    hi: np.ndarray
    reach: np.ndarray = None  # type: ignore[assignment]  # None becomes hi in __post_init__
    _anchor: np.ndarray = field(init=False, repr=False)  # a feasible point (the projection of an unbounded set)
    is_bounded: bool = field(init=False)
    _violation_scale: float = field(init=False, repr=False)  # max(1, max(extent)): violation's unit
    _a_norm: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        reach = self.hi if self.reach is None else np.minimum(self.reach, self.hi)
        if not np.all(np.isfinite(reach)):
            raise ValueError("an unbounded feasible set needs finite reach: a box known to hold the maximizers")
        object.__setattr__(self, "reach", reach)
        # every bound finite (ACCPM's localization set needs it); read on every projection
        object.__setattr__(self, "is_bounded", bool(np.all(np.isfinite(self.lo)) and np.all(np.isfinite(self.hi))))
        object.__setattr__(self, "_anchor", project_box_hyperplane((self.lo + reach) / 2, self.a, self.b, self.lo, reach))
        for array in (self.a, self.lo, self.hi, self.reach):
            array.setflags(write=False)
        object.__setattr__(self, "_violation_scale", max(1.0, float(np.max(self.extent))))
        object.__setattr__(self, "_a_norm", float(np.linalg.norm(self.a)))

    @property
    def dim(self) -> int:
        """The number of variables."""
        return self.a.size

    @property
    def extent(self) -> np.ndarray:
        """The largest ``|x_i|`` over the box ``[lo, reach]`` that holds the maximizers."""
        return np.maximum(np.abs(self.lo), np.abs(self.reach))

    @property
    def diameter(self) -> float:
        """The diagonal of the box ``[lo, reach]`` (a bound on useful step lengths)."""
        return float(np.linalg.norm(self.reach - self.lo))

    def project(self, x: np.ndarray) -> np.ndarray:
        """The exact Euclidean projection of x onto A; O(n log n).

        On an unbounded set the infinite bounds are replaced by ``max(x, lo) + 2‖x - p‖ + 1`` for a
        feasible p (the projection of the box's middle onto ``[lo, reach]``): the projection moves
        no coordinate farther than ``‖x - p‖``, so it lies inside that box, and the projection onto
        the smaller set is the same point."""
        hi = self.hi
        if not self.is_bounded:
            finite_end = np.maximum(x, self.lo) + 2 * safe_norm(x - self._anchor) + 1.0
            hi = np.where(np.isfinite(hi), hi, finite_end)
        return project_box_hyperplane(x, self.a, self.b, self.lo, hi)

    def project_within_reach(self, x: np.ndarray) -> np.ndarray:
        """The exact projection of x onto ``A ∩ [lo, reach]``, the part of A that holds every
        maximizer (:attr:`reach`); :meth:`project` itself on a bounded set (there ``reach = hi``)."""
        return project_box_hyperplane(x, self.a, self.b, self.lo, self.reach)

    def start(self) -> np.ndarray:
        """The projection of the middle of ``[lo, reach]`` onto A (``C/2`` for the SVM, where the
        paper's code starts)."""
        return self._anchor.copy()

    def snapped(self, x: np.ndarray, tolerance: float = SNAP_TOLERANCE) -> np.ndarray | None:
        """x with every coordinate within ``tolerance`` (relative to the box) of a bound set to it,
        and ``aᵀx = b`` restored along the other coordinates (with none left, the vertex if it
        satisfies ``aᵀx = b`` exactly); None if nothing moved or the restoring step would leave the box. Round-off leaves 1e-16 where a bound is meant: snapped,
        the support is the one libsvm reports."""
        span = tolerance * np.maximum(self.extent, 1e-300)
        at_lo, at_hi = x - self.lo <= span, self.hi - x <= span
        z = np.where(at_lo, self.lo, np.where(at_hi, self.hi, x))
        free = ~(at_lo | at_hi)
        if np.array_equal(z, x):
            return None
        if not np.any(free):  # every coordinate at a bound: the vertex, if it is in A exactly
            return z if float(self.a @ z) == self.b else None
        z[free] -= self.a[free] * ((float(self.a @ z) - self.b) / float(self.a[free] @ self.a[free]))
        if np.any(z[free] <= self.lo[free]) or np.any(z[free] >= self.hi[free]):
            return None
        return z

    def violation(self, x: np.ndarray) -> float:
        """How far x is from A: the largest bound or equality violation, relative to the box
        ``[lo, reach]``."""
        bounds, _, residual = bound_excess(*self._compiled_arguments(x))
        return max(bounds, residual / np.sqrt(self.dim)) / self._violation_scale

    def distance_bound(self, x: np.ndarray) -> float:
        """A bound on the distance from x to A: clipping x into the box moves it by the excess e
        and the residual of ``aᵀx = b`` by at most ``‖a‖·‖e‖``, so the distance is at most
        ``|aᵀx - b|/‖a‖ + 2‖e‖``."""
        _, excess, residual = bound_excess(*self._compiled_arguments(x))
        return residual / self._a_norm + 2 * excess

    def _compiled_arguments(self, x: np.ndarray) -> tuple:
        """``(x, a, b, lo, hi)`` as the compiled functions take them (one compiled version for every set)."""
        return read_only(x), read_only(self.a), float(self.b), read_only(self.lo), read_only(self.hi)

    def only_point(self) -> np.ndarray | None:
        """The feasible point when A is a single point (the one-class set at ν = 1: x = e/n), else None."""
        a, b, lo, hi = self.a, self.b, self.lo, self.hi
        if np.all(lo == hi):
            return lo.astype(float)
        for end in (np.where(a > 0, hi, lo), np.where(a > 0, lo, hi)):  # the ends of aᵀx over the box
            if not np.all(np.isfinite(end)):  # aᵀx is unbounded that way
                continue
            # within the round-off of this sum (not of the box: with C = 1e8 beside C = 1e-8 the
            # ends miss b by 1e-7, a whole feasible set away)
            if abs(float(a @ end) - b) <= 4 * self.dim * UNIT_ROUNDOFF * (float(np.abs(a) @ np.abs(end)) + abs(b)):
                return end.astype(float)
        return None
