"""Numbers into the docs' results page (and the timing helper of the benchmark scripts): the
benchmark scripts in ``figures/`` write their tables between ``<!-- name:start -->`` and
``<!-- name:end -->`` markers, so the page quotes what a command in the repository printed."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

from .._files import write_text


def update_marked_block(page: Path, name: str, markdown: str, command: str) -> None:
    """Replace the block called ``name`` in ``page`` by ``markdown`` and the command that made it."""
    text = page.read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text:
        raise ValueError(f"{page} has no {start} ... {end} block")
    block = f"{start}\n{markdown}\n\nMade by `{command}`.\n{end}"
    write_text(page, re.sub(re.escape(start) + ".*" + re.escape(end), lambda _: block, text, flags=re.S))


def median_seconds(call, repeats: int = 3) -> float:
    """The median wall time of ``repeats`` calls of ``call()``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
