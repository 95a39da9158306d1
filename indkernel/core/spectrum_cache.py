"""One eigendecomposition per matrix across fits: a small cache of K0's spectra keyed by content.

A grid search fits every (C, ρ) on the same fold's K0, and the rank-one oracle starts each fit
from the eigendecomposition ``K0 = V0 diag(d) V0ᵀ`` (O(n³), the one cubic step of a fit). The
oracles and the spectrum baselines (:func:`indkernel.core.proxy.eigendecomposition`) take it
from here: a bounded, least-recently-used store keyed by the matrix's content (a BLAKE2b digest
of its bytes and its shape; O(n²), about 3 ms at n = 600) and by the LAPACK routine, so that a
cached spectrum is bit for bit the one the routine would compute and a fit's result does not
depend on what the process fitted before. Cloned estimators, ``GridSearchCV``'s slices and
joblib workers all share it within a process (each worker process has its own).

The arrays handed out are read-only. :func:`set_budget` sizes the store (0 turns it off);
a matrix whose spectrum alone exceeds the budget is decomposed and not kept.
"""

from __future__ import annotations

import collections
import hashlib
import threading
from collections.abc import Callable

import numpy as np

#: Default budget of the store: the bytes of the spectra it keeps (five folds of n = 2000 fit).
DEFAULT_BUDGET = 256 * 2**20

_Spectrum = tuple[np.ndarray, np.ndarray]


class SpectrumCache:
    """Spectra ``(d, V)`` by (routine, content of the matrix), least recently used first out,
    at most ``budget`` bytes in all; safe to use from several threads."""

    def __init__(self, budget: int = DEFAULT_BUDGET):
        self._budget = _checked_budget(budget)
        self._store: collections.OrderedDict[tuple, _Spectrum] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def budget(self) -> int:
        """The most bytes of spectra kept."""
        return self._budget

    @property
    def size(self) -> int:
        """The bytes of the spectra kept now."""
        return sum(_nbytes(spectrum) for spectrum in self._store.values())

    def __len__(self) -> int:
        return len(self._store)

    def key(self, matrix: np.ndarray, routine: str) -> tuple:
        """``(routine, shape, digest)`` of a float64 matrix (the digest of its C-ordered bytes)."""
        data = np.ascontiguousarray(matrix, dtype=np.float64)
        return routine, data.shape, hashlib.blake2b(data.data.cast("B"), digest_size=20).digest()

    def lookup(self, key: tuple) -> _Spectrum | None:
        """The spectrum kept under ``key`` (now the most recently used), or None."""
        with self._lock:
            spectrum = self._store.get(key)
            if spectrum is None:
                self.misses += 1
                return None
            self.hits += 1
            self._store.move_to_end(key)
            return spectrum

    def store(self, key: tuple, spectrum: _Spectrum) -> _Spectrum:
        """Keep ``spectrum`` (made read-only) under ``key`` if it fits the budget; return it."""
        for array in spectrum:
            array.setflags(write=False)
        bytes_ = _nbytes(spectrum)
        with self._lock:
            if bytes_ <= self._budget:
                self._store[key] = spectrum
                self._store.move_to_end(key)
                self._evict()
        return spectrum

    def get(self, matrix: np.ndarray, routine: str, decompose: Callable[[np.ndarray], _Spectrum]) -> _Spectrum:
        """The spectrum of ``matrix`` by ``routine``: from the store, or ``decompose(matrix)`` then kept."""
        n = matrix.shape[0]
        if 8 * n * (n + 1) > self._budget:  # it would not be kept: no digest either (0.5 s at n = 7291)
            return self.store((), decompose(matrix))
        key = self.key(matrix, routine)
        spectrum = self.lookup(key)
        return spectrum if spectrum is not None else self.store(key, decompose(matrix))

    def set_budget(self, budget: int) -> None:
        """Keep at most ``budget`` bytes from now on (the least recently used go first)."""
        with self._lock:
            self._budget = _checked_budget(budget)
            self._evict()

    def clear(self) -> None:
        """Forget every spectrum and reset the counts of hits and misses."""
        with self._lock:
            self._store.clear()
            self.hits = self.misses = 0

    def _evict(self) -> None:
        total = sum(_nbytes(spectrum) for spectrum in self._store.values())
        while total > self._budget:
            _, spectrum = self._store.popitem(last=False)
            total -= _nbytes(spectrum)


def _nbytes(spectrum: _Spectrum) -> int:
    return sum(array.nbytes for array in spectrum)


def _checked_budget(budget) -> int:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise ValueError(f"the spectrum cache's budget must be a number of bytes >= 0 (0 turns the cache off); "
                         f"got {budget!r}")
    return int(budget)


#: The process's store, used by every oracle (:attr:`indkernel.core.proxy.EighProxy.spectrum`).
SPECTRA = SpectrumCache()


def set_budget(budget: int) -> None:
    """Keep at most ``budget`` bytes of eigendecompositions of K0 between fits (default
    :data:`DEFAULT_BUDGET`; 0 turns the cache off and frees it)."""
    SPECTRA.set_budget(budget)


def clear() -> None:
    """Forget every kept eigendecomposition."""
    SPECTRA.clear()
