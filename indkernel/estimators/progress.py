"""Progress for long steps that report nothing themselves (a LAPACK eigendecomposition)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .._progress import tqdm


def decompose(oracle, what: str, verbose: bool, leave: bool = True) -> None:
    """Compute (and cache) an oracle's one eigendecomposition, shown as a progress line."""
    size = len(oracle.K0)
    with step(f"eigendecomposition of {what} ({size}×{size})", verbose, leave=leave):
        oracle.spectrum  # noqa: B018 (a cached property)


@contextmanager
def step(description: str, verbose: bool, *, leave: bool = True) -> Iterator[None]:
    """Show ``description`` with a running clock while the block runs, and its time when done."""
    with tqdm(total=1, desc=description, bar_format="{desc}: {elapsed}", disable=not verbose, leave=leave) as bar:
        yield
        bar.update(1)
