"""The progress bar: tqdm's text bar everywhere. In a terminal it redraws one line of stderr; in
a Jupyter kernel it redraws one output of its cell (an IPython display updated in place), so a
notebook shows one line per bar, live and in an exported copy (HTML, PDF), with or without
ipywidgets (whose widget bars an exported notebook cannot render, and without which tqdm's
notebook bar warns "IProgress not found" and each refresh becomes a new line of stderr)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm.std import tqdm as _text_bar


def tqdm(*args, **kwargs) -> _text_bar:
    """A ``tqdm.std.tqdm`` (same arguments) drawn on one updating notebook output inside a Jupyter
    kernel, on stderr elsewhere (or on the ``file`` given)."""
    if "file" not in kwargs and _in_notebook():
        kwargs["file"] = NotebookLine()
    return _text_bar(*args, **kwargs)


@contextmanager
def if_slow(description: str, after: float = 1.0) -> Iterator[None]:
    """Show ``description`` with a running clock if the block is still running ``after`` seconds
    in (a step that is usually quick and rarely long, such as numba's compilation after an
    install), and its time when done; nothing for a quick one. The clock is drawn by a thread."""
    done = threading.Event()

    def show() -> None:
        if done.wait(after):
            return
        with tqdm(total=1, desc=description, bar_format="{desc}: {elapsed}") as bar:
            while not done.wait(1.0):
                bar.refresh()
            bar.update(1)

    clock = threading.Thread(target=show, daemon=True)
    clock.start()
    try:
        yield
    finally:
        done.set()
        clock.join()


def _in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's kernel shell); IPython is not imported
    for the question."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class NotebookLine:
    """A file for tqdm that keeps only its last line and shows it as one plain-text output of the
    running cell, created at the first line and updated in place (nothing is shown for a bar that
    never draws, such as a disabled one)."""

    encoding = "utf-8"  # tqdm draws its bar in ASCII for a file without one

    def __init__(self):
        self._line = ""
        self._handle = None

    def write(self, text: str) -> int:
        if text.strip("\n"):  # tqdm redraws with "\r" + line; a newline alone only ends it
            self._line = text.split("\r")[-1].rstrip("\n")
        return len(text)

    def flush(self) -> None:
        from IPython.display import display  # only inside a kernel, where IPython is loaded

        output = {"text/plain": self._line.rstrip()}
        if self._handle is None:
            if self._line.strip():
                self._handle = display(output, raw=True, display_id=True)
        else:
            self._handle.update(output, raw=True)
