"""The one result type that every solver returns."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.certificate import Bracket, Certificate

HISTORY_COLUMNS = ["iteration", "time", "lower", "upper", "gap", "scale"]


@dataclass
class SolveResult(Bracket):
    """A solution with its certified bounds.

    Attributes
    ----------
    alpha : (n,) array, the feasible point with the best objective seen.
    lower : float, ``f(alpha) <= p*``.
    upper : float, the best certified upper bound seen, ``>= p*``.
    status : str, ``"optimal"`` only when the certified gap is within the tolerance; otherwise
        the reason it stopped (``"max_iter"``, ``"time_limit"``, ``"roundoff"``, ``"callback"``:
        the ``callback`` of :func:`indkernel.solve` asked, ...).
    stop_reason : str, a sentence for people.
    iterations : int
    seconds : float
    history : pandas.DataFrame with columns iteration, time, lower, upper, gap (best so far) and
        scale (of the best α; ``gap / scale`` is the relative gap).
    method : str
    fallbacks : int, points where the rank-one oracle's check failed and a dense ``eigh`` was used.
    details : dict, method-specific extras (the exchange method's own gap, ...).
    scale : float, ``|ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)`` at alpha, the denominator of ``relative_gap``
        (0 at α = 0, where the objective has no α-dependent part: ``relative_gap`` is then inf
        unless the gap is 0, and the reprs say so; read ``gap``).
    certificate : Certificate or None
        The certificate of ``alpha`` (the tight one where the run ended short of ``tol``): its
        ``alpha_intercept`` is the exact offset for ``alpha``'s coefficients. ``upper`` may be
        smaller (another point's).
    """

    alpha: np.ndarray
    lower: float
    upper: float
    status: str
    stop_reason: str
    iterations: int
    seconds: float
    history: pd.DataFrame = field(repr=False)
    method: str = ""
    fallbacks: int = 0
    details: dict = field(default_factory=dict)
    scale: float = 0.0
    certificate: Certificate | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        """One line for a notebook cell: the bracket and how the run ended, not the α values."""
        return (f"SolveResult(method={self.method!r}, status={self.status!r}, lower={self.lower:.10g}, "
                f"upper={self.upper:.10g}, gap={self.gap:.3g}, relative_gap={self._relative_text()}, "
                f"iterations={self.iterations}, seconds={self.seconds:.3g}, n={self.alpha.size})")

    def _repr_html_(self) -> str:
        """The bracket as a small table (Jupyter)."""
        rows = [("method", self.method), ("status", self.status), ("lower bound", f"{self.lower:.10g}"),
                ("upper bound (certified)", f"{self.upper:.10g}"),
                ("gap", f"{self.gap:.3e} (relative {self._relative_text()})"),
                ("iterations", f"{self.iterations} in {self.seconds:.2f} s"), ("stopped", self.stop_reason)]
        body = "".join(f"<tr><th style='text-align:left'>{key}</th><td style='text-align:left'>{html.escape(str(value))}"
                       "</td></tr>" for key, value in rows)
        return f"<table><caption>SolveResult</caption>{body}</table>"

    def __str__(self) -> str:
        return (f"{self.method}: {self.status} after {self.iterations} iterations ({self.seconds:.2f} s)\n"
                f"  lower bound    {self.lower:.10g}\n  upper bound    {self.upper:.10g}  (certified)\n"
                f"  gap            {self.gap:.3e}  (relative {self._relative_text()})\n  {self.stop_reason}")

    def _relative_text(self) -> str:
        """The relative gap, or why it is infinite (a best point with scale 0: α = 0)."""
        if self.scale > 0 or self.gap <= 0:
            return f"{self.relative_gap:.3g}"
        return "inf (α = 0: no α-dependent scale; see the gap)"
