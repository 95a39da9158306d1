"""The part files of a resumable run (one per data set and split, or per split): each written whole
(:func:`indkernel._files.write_csv`) or not at all, and one found damaged (a run killed in an older version, a full disk) named and
computed again instead of stopping the run."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd


def read_part(path: Path, columns, **read_options) -> pd.DataFrame | None:
    """The part at ``path`` if it exists and holds ``columns`` with at least one row; None if it
    does not exist, or if it is damaged (a warning names it, and the caller computes it again)."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        frame = pd.read_csv(path, **read_options)
        problem = None if len(frame) and set(columns) <= set(frame.columns) else "it lacks rows or columns"
    except (OSError, ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        frame, problem = None, str(exc)
    if problem is None:
        return frame
    warnings.warn(f"the part file {path} is damaged ({problem}); it is computed again", UserWarning, stacklevel=2)
    return None
