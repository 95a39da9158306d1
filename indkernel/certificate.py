"""The certified bracket ``lower <= p* <= upper`` returned by ``problem.certify(alpha)``."""

from __future__ import annotations

from dataclasses import dataclass


class Bracket:
    """Anything with certified ``lower <= p* <= upper``: its gap, absolute and relative."""

    lower: float
    upper: float

    @property
    def gap(self) -> float:
        """``upper - lower >= p* - lower >= 0``."""
        return self.upper - self.lower

    @property
    def relative_gap(self) -> float:
        """``gap / |lower|`` (infinite when ``lower == 0``)."""
        return self.gap / abs(self.lower) if self.lower != 0 else float("inf")


@dataclass(frozen=True)
class Certificate(Bracket):
    """Certified bounds on the optimal value ``p*`` of ``eq:kern_learn`` at one feasible α.

    Attributes
    ----------
    lower : float
        ``f(α)``, the objective at the feasible α; ``lower <= p*``.
    upper : float
        A weak-duality bound for the SVM on the proxy kernel ``K*(α)``; ``p* <= upper``.
    intercept : float
        The intercept ``b`` of the SVM primal point that gives ``upper`` (exactly optimal).
    source : str
        ``"free"`` when the bound comes from ``β = Yα`` itself, ``"libsvm"`` when the optional
        refinement (an SVM solved on ``K*``) gave the smaller bound.
    """

    lower: float
    upper: float
    intercept: float
    source: str = "free"

    def __str__(self) -> str:
        return (f"lower {self.lower:.10g}  upper {self.upper:.10g}  gap {self.gap:.3e} "
                f"(relative {self.relative_gap:.3e}, {self.source} certificate)")
