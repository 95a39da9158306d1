"""The one result type that every solver returns, and its file (:meth:`SolveResult.save`,
:func:`load_result`: NumPy's ``.npz`` with a JSON header, no pickle)."""

from __future__ import annotations

import dataclasses
import html
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from .._files import write_whole
from ..core.certificate import Bracket, Certificate

#: The layout :meth:`SolveResult.save` writes (a later layout would be read by its own rule).
FILE_FORMAT = "indkernel.SolveResult/1"

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
    #: The history's rows as the run recorded them (or as a file stored them): :attr:`history` is built
    #: from them when first read (a DataFrame costs about 0.25 ms, 5 % of a fit at n = 50).
    _history_rows: list | np.ndarray = field(repr=False, compare=False)
    method: str = ""
    fallbacks: int = 0
    details: dict = field(default_factory=dict)
    scale: float = 0.0
    certificate: Certificate | None = field(default=None, repr=False)

    @cached_property
    def history(self) -> pd.DataFrame:
        """The history (see the class's attributes), made when first read and kept."""
        return pd.DataFrame(self._history_rows, columns=HISTORY_COLUMNS).astype({"iteration": int})

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

    def save(self, path) -> Path:
        """Write the result to ``path`` (NumPy ``.npz``, no pickle): α and the history as arrays,
        everything else (bounds, status, reason, counts, details, the certificate) as a JSON
        header; :func:`indkernel.load_result` reads it back equal. The file is written whole (a
        failed write leaves what was there). Returns the path.

        >>> import tempfile, pathlib, indkernel
        >>> from indkernel.datasets import load_digits_pair
        >>> from indkernel.kernels import simpson
        >>> X, y = load_digits_pair(3, 5)
        >>> result = indkernel.solve(indkernel.SVMProblem(simpson(X[:40]), y[:40], C=1.0, rho=1.0))
        >>> path = result.save(pathlib.Path(tempfile.mkdtemp()) / "run.npz")
        >>> indkernel.load_result(path).upper == result.upper
        True
        """
        path = Path(path)
        if not path.parent.is_dir():
            raise FileNotFoundError(f"path: the folder {str(path.parent)!r} does not exist; create it first")
        header = {"format": FILE_FORMAT, "history_columns": list(self.history.columns),
                  **{f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("alpha", "_history_rows")}}
        header["certificate"] = None if self.certificate is None else dataclasses.asdict(self.certificate)
        text = json.dumps(header, default=_json_value)
        write_whole(path, lambda file: np.savez(file, alpha=self.alpha, history=self.history.to_numpy(dtype=np.float64),
                                                header=np.array(text)))
        return path

    def _relative_text(self) -> str:
        """The relative gap, or why it is infinite (a best point with scale 0: α = 0)."""
        if self.scale > 0 or self.gap <= 0:
            return f"{self.relative_gap:.3g}"
        return "inf (α = 0: no α-dependent scale; see the gap)"


def _json_value(value):
    """NumPy scalars and arrays in a result's details, as JSON takes them."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    raise TypeError(f"a result's details hold {type(value).__name__}, which a result file cannot store")


def load_result(path) -> SolveResult:
    """The :class:`SolveResult` that :meth:`SolveResult.save` wrote to ``path``, equal to the one
    saved (α, bounds, status, history, details and certificate); reads no pickle."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no result file at {str(path)!r}")
    try:
        stored = np.load(path, allow_pickle=False)
        if not isinstance(stored, np.lib.npyio.NpzFile):  # a .npy array
            raise ValueError("it holds one array, not a result's")
        with stored:
            alpha, history, header = stored["alpha"], stored["history"], json.loads(str(stored["header"]))
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"{str(path)!r} is not a result file written by SolveResult.save ({exc})") from exc
    if not isinstance(header, dict) or header.get("format") != FILE_FORMAT:
        raise ValueError(f"{str(path)!r} is not a result file of this version (its format is "
                         f"{header.get('format') if isinstance(header, dict) else None!r}, expected {FILE_FORMAT!r})")
    certificate = header.pop("certificate")
    header.pop("history_columns")  # the file format's, HISTORY_COLUMNS
    header.pop("format")
    return SolveResult(alpha=alpha, _history_rows=history,
                       certificate=None if certificate is None else Certificate(**certificate), **header)
