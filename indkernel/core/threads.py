"""Where indkernel decides how many threads its compiled code and BLAS use: the size rules of the
oracle (numba's threads for a rank-one update, BLAS's for the eigendecomposition of K0) and the
caps a solve sets, each a context that restores the caller's settings when it ends. Nothing here
changes a setting for longer than its block.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import cache, partial
from typing import Any

import numba
import threadpoolctl
from threadpoolctl import ThreadpoolController

#: Below this many poles the compiled rank-one update runs on the calling thread alone. Its threads
#: speed a whole fit up by about a fifth from n = 400 on while BLAS is quiet, but BLAS threads left
#: spinning by a call just before the fit (the kernel just computed, say) slow them down for about
#: 0.1 s: a fit started right then took 1.33-1.44x its one-thread time at n = 500, 1.11-1.25x at
#: 550, 1.02-1.10x at 600 and 0.81-0.99x from 650 on, where the eigendecomposition of K0 (on one
#: BLAS thread) outlasts most of the spinning. From 600 on the threads cost at most a tenth right
#: after BLAS and save a fifth when it is quiet (``python figures/certified_speed.py --parallel-from``).
PARALLEL_FROM = 600
#: From this many rows the eigendecomposition of K0 runs on every BLAS thread, below on one: there
#: it is as fast on one, and BLAS threads left spinning after a multi-threaded call slow the next
#: ~0.1 s of the rank-one oracle's numba threads (``python figures/certified_speed.py --threads``).
EIGH_THREADS_FROM = 1300


def threads_for(n: int) -> int:
    """Numba threads for an update of n poles: all of them from ``PARALLEL_FROM`` on, else one."""
    return numba.get_num_threads() if n >= PARALLEL_FROM else 1


@contextmanager
def limited_threads(count: int) -> Iterator[None]:
    """Numba's threads for the compiled code limited to ``count`` inside the block (1: the calling
    thread alone, the others left asleep), the previous number restored after."""
    previous = numba.get_num_threads()
    count = max(1, min(count, previous))
    if count == previous:  # already so (a solve sets its oracle's count once): nothing to set or restore
        yield
        return
    numba.set_num_threads(count)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


#: The BLAS limits of the blocks inside :func:`blas_threads` now, from every Python thread, and the
#: caller's thread counts (one per BLAS library) saved by the first: BLAS's thread count is one
#: setting of the process, so blocks in several threads share it and the last one out restores it.
_BLAS_LOCK = threading.Lock()
_blas_limits: list[int] = []
_blas_original: list[list[int]] = []


@cache
def _blas_libraries() -> tuple:
    """threadpoolctl's controllers of the loaded BLAS libraries, found once (a scan of them costs
    ~3 ms): a block reads and sets their counts directly (about 50 µs a block, against 86 µs through
    ``ThreadpoolController.limit``, which reads every library's information on each call)."""
    return tuple(library for library in ThreadpoolController().lib_controllers if library.user_api == "blas")


def _as_controller(change: Callable[[], Any]) -> Any:
    """``change()`` of BLAS's thread count, done whichever Python thread calls it.

    threadpoolctl (from 3.8) lets one Python thread at a time set OpenBLAS's process-wide count and
    silently ignores the others while that thread lives, so a block in a worker thread did not
    limit BLAS once the main thread had set it. The blocks below change it one at a time (under
    ``_BLAS_LOCK``): each takes control for its change and leaves no thread in control after."""
    release = getattr(getattr(threadpoolctl, "OpenBLASController", None), "clear_controlling_thread", None)
    if release is not None:
        release(force=True)
    try:
        return change()
    finally:
        if release is not None:
            release(force=True)


def _apply_blas_limits() -> None:
    """Each BLAS library on the smallest limit of the open blocks, or on the caller's count once none
    is open (under ``_BLAS_LOCK``); a library already there is left alone."""
    libraries = _blas_libraries()
    counts = [min(_blas_limits)] * len(libraries) if _blas_limits else _blas_original.pop()
    for library, count in zip(libraries, counts, strict=True):
        if library.get_num_threads() != count:
            _as_controller(partial(library.set_num_threads, count))


@contextmanager
def blas_threads(limit: int | None) -> Iterator[None]:
    """BLAS limited to ``limit`` threads inside the block (None: unchanged). Safe from several
    Python threads at once: while blocks overlap BLAS has the smallest of their limits, and the
    caller's setting comes back when the last one ends, whatever the order they end in."""
    if limit is None:
        yield
        return
    with _BLAS_LOCK:
        if not _blas_limits:
            _blas_original.append([library.get_num_threads() for library in _blas_libraries()])
        _blas_limits.append(limit)
        _apply_blas_limits()
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _blas_limits.remove(limit)
            _apply_blas_limits()


def blas_thread_count() -> int:
    """The threads BLAS may use now (the largest count of the loaded BLAS libraries)."""
    return max((library.get_num_threads() for library in _blas_libraries()), default=1)


@contextmanager
def at_most(threads: int | None) -> Iterator[None]:
    """Numba and BLAS on at most ``threads`` threads inside the block (None: as they are); the
    size rules above then choose below that cap, and both counts are restored after."""
    with ExitStack() as stack:
        if threads is not None:
            stack.enter_context(limited_threads(threads))
            stack.enter_context(blas_threads(min(threads, blas_thread_count())))
        yield
