"""The part files of a resumable run (one per data set and split, or per split): each written whole
(:func:`indkernel._files.write_csv`) or not at all, and one found damaged (a run killed in an older version, a full disk) named and
computed again instead of stopping the run."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd


def read_part(path: Path, columns, holding: dict | None = None, **read_options) -> pd.DataFrame | None:
    """The part at ``path`` if it exists, holds ``columns`` with at least one row and no empty cell
    in them, and, for each column named in ``holding``, every one of its values (a part cut short
    between rows lacks the last ones); None if it does not exist, or if it is damaged (a warning
    names it, and the caller computes it again)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path, **read_options)
        problem = _damage(frame, columns, holding or {})
    except (OSError, ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        frame, problem = None, str(exc)
    if problem is None:
        return frame
    warnings.warn(f"the part file {path} is damaged ({problem}); it is computed again", UserWarning, stacklevel=2)
    return None


def _damage(frame: pd.DataFrame, columns, holding: dict) -> str | None:
    """What is wrong with a part read back, or None."""
    if not len(frame) or not set(columns) <= set(frame.columns):
        return "it lacks rows or columns"
    if frame[list(columns)].isna().any().any():
        return "a row is cut short"
    for column, values in holding.items():
        missing = set(values) - set(frame[column]) if column in frame.columns else set(values)
        if missing:
            return f"it has no row of {column} {', '.join(map(str, sorted(missing)))}"
    return None
