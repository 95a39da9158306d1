"""Data sets of the experiments. The embedded default is scikit-learn's bundled 8x8 digits."""

from __future__ import annotations

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
