"""Progress for long steps that report nothing themselves (a LAPACK eigendecomposition)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .._progress import tqdm


@contextmanager
def step(description: str, verbose: bool, *, leave: bool = True) -> Iterator[None]:
    """Show ``description`` with a running clock while the block runs, and its time when done."""
    with tqdm(total=1, desc=description, bar_format="{desc}: {elapsed}", disable=not verbose, leave=leave) as bar:
        yield
        bar.update(1)
