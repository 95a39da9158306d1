"""Similarity measures of the paper's experiments (section ``s:num-res``)."""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array, check_finite


def simpson(X, Z=None, *, threshold: float = 0.5) -> np.ndarray:
    """Simpson score ``|a ∧ b| / min(|a|, |b|)`` between binarized images; indefinite in general.

    Parameters
    ----------
    X : (n, p) array_like, images as rows, intensities scaled to [0, 1].
    Z : (m, p) array_like, optional; defaults to X (the (n, n) training matrix).
    threshold : float, default 0.5
        A pixel is "on" when its intensity exceeds ``threshold``.

    Returns
    -------
    (n, m) array of scores in [0, 1].
    """
    A = _binarize(X, "X", threshold)
    B = A if Z is None else _binarize(Z, "Z", threshold)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"X and Z must have the same number of pixels; got {A.shape[1]} and {B.shape[1]}")
    overlap = A @ B.T
    return overlap / np.minimum.outer(A.sum(axis=1), B.sum(axis=1))


def _binarize(images, name: str, threshold: float) -> np.ndarray:
    X = as_float_array(images, name)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array with one image per row; got shape {X.shape}")
    check_finite(X, name)
    on = (X > threshold).astype(np.float64)
    empty = np.flatnonzero(on.sum(axis=1) == 0)
    if empty.size:
        raise ValueError(f"{name} rows {empty[:5].tolist()} have no pixel above threshold={threshold}; "
                         "the Simpson score is undefined for empty images (lower the threshold or drop them)")
    return on
