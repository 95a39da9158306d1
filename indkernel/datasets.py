"""Data sets of the experiments. The embedded default is scikit-learn's bundled 8x8 digits."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits


def load_digits_pair(first: int = 3, second: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Two digits of scikit-learn's bundled digits (no download): ``(X, y)``.

    ``X`` is (n, 64) with intensities scaled to [0, 1]; ``y`` holds the digit labels.
    """
    for name, digit in (("first", first), ("second", second)):
        if digit not in range(10):
            raise ValueError(f"{name} must be a digit 0-9; got {digit!r}")
    if first == second:
        raise ValueError(f"first and second must be different digits; got {first} twice")
    X, y = load_digits(return_X_y=True)
    keep = (y == first) | (y == second)
    return X[keep] / 16.0, y[keep]


def data_directory(data_dir=None) -> Path:
    """Where the paper's data sets live: ``data_dir``, else ``$INDKERNEL_DATA``, else
    ``~/.cache/indkernel``."""
    if data_dir is not None:
        return Path(data_dir)
    if os.environ.get("INDKERNEL_DATA"):
        return Path(os.environ["INDKERNEL_DATA"])
    return Path.home() / ".cache" / "indkernel"


def load_usps(data_dir=None) -> tuple[np.ndarray, np.ndarray]:
    """All 9298 USPS digits (7291 train + 2007 test, Hull 1994) from ``usps.npz``: ``(X, y)``.

    ``X`` is (9298, 256), 16x16 images with intensities in [0, 1]; ``y`` the digits 0-9.
    """
    path = data_directory(data_dir) / "usps.npz"
    if not path.is_file():
        raise FileNotFoundError(
            f"USPS not found at {path}; put usps.npz (keys X, y, split) there, or point "
            "INDKERNEL_DATA (or data_dir=) at the folder that holds it")
    with np.load(path) as data:
        return data["X"], data["y"]
