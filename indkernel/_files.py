"""Files written whole: into a temporary file beside the target, then renamed over it, so a failed
write (a full disk, an interrupt) leaves what was there before, never a truncated file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _umask() -> int:
    """The process's umask: from ``/proc/self/status`` where Linux has it (reading it so changes
    nothing), else by setting it and restoring it at once."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        mask = os.umask(0o022)
        os.umask(mask)
        return mask


def write_whole(path: Path, write: Callable, mode: str = "wb") -> None:
    """``write(file)`` into a temporary file in ``path``'s folder, then rename it to ``path``, with
    the permissions ``open`` gives a new file (0666 less the umask; ``mkstemp`` makes it 0600, which
    others sharing a results folder could not read)."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temporary, 0o666 & ~_umask())
        with os.fdopen(handle, mode) as file:
            write(file)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_csv(path: Path, frame) -> None:
    """Write the DataFrame ``frame`` to the CSV ``path`` whole (no index column)."""
    write_whole(path, lambda file: frame.to_csv(file, index=False), mode="w")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole."""
    write_whole(path, lambda file: file.write(text), mode="w")
