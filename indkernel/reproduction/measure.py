"""Wall time and peak resident memory of a call, for the experiments' tables."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_STATM = Path("/proc/self/statm")
#: Seconds between two readings of the resident memory.
INTERVAL = 0.005


def cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS tells it), for provenance."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux's ``/proc/self/statm``; None elsewhere)."""
    try:
        return int(_STATM.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class Measurement:
    """What :func:`measure` saw: the call's value, its wall time and the peak resident memory."""

    value: Any  # what the call returned
    seconds: float
    peak_bytes: int | None  # largest resident memory of the whole process during the call (None: unknown)


def measure(call: Callable[[], Any]) -> Measurement:
    """Run ``call()``, timing it and sampling the process's resident memory every :data:`INTERVAL`
    seconds from a thread (the peak includes everything alive, LAPACK's and libsvm's memory too)."""
    peak = resident_bytes() or 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(INTERVAL):
            peak = max(peak, resident_bytes() or 0)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    try:
        value = call()
    finally:
        seconds = time.perf_counter() - start
        done.set()
        sampler.join()
    peak = max(peak, resident_bytes() or 0)
    return Measurement(value, seconds, peak or None)
