"""The certified bracket ``lower <= p* <= upper`` returned by ``problem.certify(alpha)``."""

from __future__ import annotations

from dataclasses import dataclass


class Bracket:
    """Anything with certified ``lower <= p* <= upper``: its gap, absolute and relative."""

    lower: float
    upper: float
    scale: float

    @property
    def gap(self) -> float:
        """``upper - lower >= p* - lower >= 0``."""
        return self.upper - self.lower

    @property
    def relative_gap(self) -> float:
        """``gap / scale``, with ``scale = |ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)`` (``ℓ = eᵀα``, ``u = Yα`` for the SVM): the
        size of the part of the objective that moves with α (``|K0|``: the kernel with its
        eigenvalues in absolute value, so the scale does not vanish where ``K*`` is nearly 0 along
        u). The constant ``ρ‖(K0)_-‖²_F = f(0)``
        is left out of the scale, because a gap small beside it can still leave α far from optimal
        (infinite when ``scale == 0`` and the gap is not).
        """
        if self.gap <= 0:
            return 0.0
        return self.gap / self.scale if self.scale > 0 else float("inf")


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
        ``"free"`` when the bound comes from ``β = Yα`` itself, ``"newton"`` when the
        refinement (Newton-CG steps for the machine on ``K*``, O(n²) each) gave the smaller bound.
    scale : float
        ``|ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)``, the denominator of :attr:`relative_gap`.
    allowance : float
        The round-off allowance by which ``lower`` and ``upper`` were widened, together: the
        smallest gap that floating point can certify at this α.
    """

    lower: float
    upper: float
    intercept: float
    source: str = "free"
    scale: float = 0.0
    allowance: float = 0.0

    def __str__(self) -> str:
        return (f"lower {self.lower:.10g}  upper {self.upper:.10g}  gap {self.gap:.3e} "
                f"(relative {self.relative_gap:.3e}, {self.source} certificate)")
