"""Similarity measures of the paper's experiments (section ``s:num-res``), vectorized.

Each takes ``X`` (n, p) and an optional ``Y`` (m, p) and returns the (n, m) similarity matrix
(``Y = X`` by default: the training matrix); pass the test points as ``X`` and the training points
as ``Y`` for the test×train block an estimator predicts with. The Simpson score, the tangent
distance similarity and the sigmoid are indefinite in general; the linear and Gaussian kernels
are Mercer kernels (for PerturbSVM, ``eq:learn-mercer``). :func:`by_name` gives the kernels an
estimator takes by name (``kernel="rbf"``, …, as scikit-learn's ``SVC``).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import scipy.ndimage
from sklearn.metrics import pairwise

from ._progress import tqdm
from ._validation import as_float_array, check_finite, check_nonnegative_scalar, check_positive_scalar

#: Rows per block in the tangent distance, so memory stays ~ block · 7 · m floats.
TANGENT_BLOCK = 256


def _pair(X, Y) -> tuple[np.ndarray, np.ndarray]:
    """Validated float arrays ``(X, Y)``, ``Y = X`` when not given."""
    A = _features(X, "X")
    B = A if Y is None else _features(Y, "Y")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"X and Y must have the same number of features; got {A.shape[1]} and {B.shape[1]}")
    return A, B


def _features(values, name: str) -> np.ndarray:
    A = as_float_array(values, name)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array with one sample per row; got shape {A.shape}")
    check_finite(A, name)
    largest = float(np.max(np.abs(A), initial=0.0))
    if largest > MAX_FEATURE:
        raise ValueError(f"{name} has entries up to {largest:.3g}: inner products and squared distances would "
                         f"overflow float64 (entries must stay below {MAX_FEATURE:g}); rescale the features, "
                         "for instance with sklearn.preprocessing.StandardScaler")
    return A


#: Largest feature magnitude the similarities accept (their sums of squares stay far from 1.8e308).
MAX_FEATURE = 1e100


def simpson(X, Y=None, *, threshold: float = 0.5) -> np.ndarray:
    """Simpson score ``|a ∧ b| / min(|a|, |b|)`` between binarized images; indefinite in general.

    Parameters
    ----------
    X : (n, p) array_like, images as rows, intensities scaled to [0, 1].
    Y : (m, p) array_like, optional; defaults to X.
    threshold : float, default 0.5
        A pixel is "on" when its intensity exceeds ``threshold``.

    Returns
    -------
    (n, m) array of scores in [0, 1].
    """
    A, B = _pair(X, Y)
    A, B = _binarize(A, "X", threshold), _binarize(B, "Y", threshold)
    return (A @ B.T) / np.minimum.outer(A.sum(axis=1), B.sum(axis=1))


def _binarize(X: np.ndarray, name: str, threshold: float) -> np.ndarray:
    on = (X > threshold).astype(np.float64)
    empty = np.flatnonzero(on.sum(axis=1) == 0)
    if empty.size:
        raise ValueError(f"{name} rows {empty[:5].tolist()} have no pixel above threshold={threshold}; "
                         "the Simpson score is undefined for empty images (lower the threshold or drop them)")
    return on


def linear(X, Y=None) -> np.ndarray:
    """``⟨x, y⟩`` (a Mercer kernel; ``sklearn.metrics.pairwise.linear_kernel``)."""
    A, B = _pair(X, Y)
    return pairwise.linear_kernel(A, B)


def gaussian(X, Y=None, *, gamma: float = 1.0) -> np.ndarray:
    """``exp(-γ‖x - y‖²)`` (a Mercer kernel; ``sklearn.metrics.pairwise.rbf_kernel``)."""
    gamma = check_positive_scalar(gamma, "gamma", "the width parameter of exp(-gamma ||x - y||^2)")
    A, B = _pair(X, Y)
    return pairwise.rbf_kernel(A, None if Y is None else B, gamma=gamma)


def sigmoid(X, Y=None, *, a: float = 1.0, r: float = 0.0) -> np.ndarray:
    """``tanh(a⟨x, y⟩ + r)``; indefinite for most ``(a, r)`` (the paper's UCI experiments;
    ``sklearn.metrics.pairwise.sigmoid_kernel``)."""
    if isinstance(a, bool) or not isinstance(a, (int, float, np.number)) or not np.isfinite(a):
        raise TypeError(f"a must be a finite real number (the slope of tanh(a<x, y> + r)); got {a!r}")
    if isinstance(r, bool) or not isinstance(r, (int, float, np.number)) or not np.isfinite(r):
        raise TypeError(f"r must be a finite real number (the offset of tanh(a<x, y> + r)); got {r!r}")
    A, B = _pair(X, Y)
    return pairwise.sigmoid_kernel(A, B, gamma=float(a), coef0=float(r))


#: The kernels an estimator takes by name: scikit-learn's, as ``SVC``'s, and the paper's similarities.
NAMED_KERNELS = ("linear", "poly", "rbf", "sigmoid", "simpson", "tangent")


def by_name(name: str, *, gamma: float, coef0: float = 0.0, degree: int = 3):
    """The similarity ``(X, Y) -> (n, m) array`` called ``name`` in :data:`NAMED_KERNELS`, with the
    parameters of scikit-learn's ``SVC``: ``"linear"`` ⟨x, y⟩, ``"poly"`` (γ⟨x, y⟩ + coef0)^degree,
    ``"rbf"`` exp(-γ‖x - y‖²), ``"sigmoid"`` tanh(γ⟨x, y⟩ + coef0) (through
    ``sklearn.metrics.pairwise``); ``"simpson"`` :func:`simpson` (threshold 0.5) and
    ``"tangent"`` :func:`tangent_distance` with width γ (square images).

    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> by_name("rbf", gamma=0.5)(X, X).round(3)
    array([[1.   , 0.607],
           [0.607, 1.   ]])
    """
    functions = {
        "linear": pairwise.linear_kernel,
        "poly": partial(pairwise.polynomial_kernel, degree=degree, gamma=gamma, coef0=coef0),
        "rbf": partial(pairwise.rbf_kernel, gamma=gamma),
        "sigmoid": partial(pairwise.sigmoid_kernel, gamma=gamma, coef0=coef0),
        "simpson": simpson,
        "tangent": partial(tangent_distance, gamma=gamma),
    }
    if name not in functions:
        raise ValueError(f"kernel must be one of {list(NAMED_KERNELS)}, 'precomputed' or a callable; got {name!r}")
    return functions[name]


def _squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    squared = np.sum(A * A, axis=1)[:, None] + np.sum(B * B, axis=1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(squared, 0.0)


def tangent_distance(X, Y=None, *, gamma: float = 0.05, image_shape=None, smoothing: float = 0.9,
                     verbose: bool = False) -> np.ndarray:
    """Tangent distance similarity ``exp(-γ d²)`` with d the mean of the two one-sided tangent
    distances (Simard et al. 1998; symmetrized by the square of the mean, Haasdonk & Keysers 2002),
    as in the paper's "TD1" kernel; nearly PSD but indefinite.

    Parameters
    ----------
    X : (n, p) array_like, images as rows (p = side², or pass ``image_shape``), intensities in [0, 1].
    Y : (m, p) array_like, optional; defaults to X.
    gamma : float, default 0.05
        Width of ``exp(-γ d²)``; d² is in squared intensity units (cross-validate it).
    image_shape : (height, width), optional; square images by default.
    smoothing : float, default 0.9
        Standard deviation (pixels) of the Gaussian blur before the image derivatives.
    verbose : bool, default False
        A progress bar over blocks of rows.

    See Also
    --------
    tangent_distances : d² itself (to try several γ without recomputing it).
    """
    gamma = check_positive_scalar(gamma, "gamma", "the width parameter of exp(-gamma d^2)")
    distances = tangent_distances(X, Y, image_shape=image_shape, smoothing=smoothing, verbose=verbose)
    distances *= -gamma
    return np.exp(distances, out=distances)


def tangent_distances(X, Y=None, *, image_shape=None, smoothing: float = 0.9, verbose: bool = False) -> np.ndarray:
    """Squared mean tangent distance ``d(x, y)² = ((d₁(x, y) + d₁(y, x)) / 2)²``, an (n, m) array.

    The one-sided distance ``d₁(x, y) = min_a ‖x + T_x a - y‖`` uses the seven tangents of x
    (:func:`image_tangents`); with ``Q_x`` an orthonormal basis of their span,
    ``d₁(x, y)² = ‖x - y‖² - ‖Q_xᵀ(x - y)‖²``. Each block of :data:`TANGENT_BLOCK` rows of X comes
    from two matrix products, ``Q_Xᵀ Yᵀ`` and ``Q_Yᵀ Xᵀ``, so the only (n, m) array is the result
    (``verbose``: a progress bar over the blocks).
    """
    A, B = _pair(X, Y)
    shape = _image_shape(A.shape[1], image_shape)
    check_nonnegative_scalar(smoothing, "smoothing", "the Gaussian blur (pixels) before the image derivatives")
    if smoothing > max(shape):
        raise ValueError(f"smoothing must be at most the image size ({max(shape)} pixels; a wider blur leaves a "
                         f"constant image and would need a filter of {smoothing:.3g} pixels); got {smoothing!r}")
    basis_A = _TangentBasis(A, shape, smoothing)
    basis_B = basis_A if Y is None else _TangentBasis(B, shape, smoothing)
    out = np.empty((A.shape[0], B.shape[0]))
    for start in tqdm(range(0, A.shape[0], TANGENT_BLOCK), desc="tangent distances", disable=not verbose):
        rows = slice(start, start + TANGENT_BLOCK)
        squared = _squared_distances(A[rows], B)
        forward = np.sqrt(np.maximum(squared - basis_A.projected(rows, B), 0.0))
        backward = np.sqrt(np.maximum(squared - basis_B.projected(slice(None), A[rows]).T, 0.0))
        out[rows] = ((forward + backward) / 2.0) ** 2
    return out


class _TangentBasis:
    """The orthonormal tangent bases ``Q_a`` of the rows a of A, laid out for products with other images."""

    def __init__(self, A: np.ndarray, shape: tuple[int, int], smoothing: float):
        Q = _tangent_basis(image_tangents(A, shape, smoothing))  # (n, p, k)
        self.columns = np.ascontiguousarray(Q.transpose(0, 2, 1))  # (n, k, p): the columns of each Q_a
        self.own = np.einsum("npk,np->nk", Q, A)  # Q_aᵀ a

    def projected(self, rows: slice, B: np.ndarray) -> np.ndarray:
        """``‖Q_aᵀ(a - b)‖²`` for the rows a of A in ``rows`` and every row b of B."""
        columns, own = self.columns[rows], self.own[rows]
        cross = (columns.reshape(-1, B.shape[1]) @ B.T).reshape(*own.shape, B.shape[0])  # Q_aᵀ b
        cross -= own[:, :, None]
        return np.einsum("rkm,rkm->rm", cross, cross)


def _image_shape(p: int, image_shape) -> tuple[int, int]:
    if image_shape is None:
        side = int(round(np.sqrt(p)))
        if side * side != p:
            raise ValueError(f"images of {p} pixels are not square; pass image_shape=(height, width)")
        return side, side
    if np.ndim(image_shape) != 1 or len(image_shape) != 2:
        raise ValueError(f"image_shape must be (height, width); got {image_shape!r}")
    height, width = (int(v) for v in image_shape)
    if height < 1 or width < 1:
        raise ValueError(f"image_shape must have positive height and width; got {image_shape!r}")
    if height * width != p:
        raise ValueError(f"image_shape {image_shape} has {height * width} pixels but the rows have {p}")
    return height, width


def image_tangents(X: np.ndarray, image_shape: tuple[int, int], smoothing: float = 0.9) -> np.ndarray:
    """The seven tangent vectors of each image (Simard, LeCun, Denker & Victorri 1998), (n, p, 7).

    From the blurred image's derivatives ``g_x, g_y`` and centred pixel coordinates (x, y):
    x- and y-translation ``g_x``, ``g_y``; rotation ``y g_x - x g_y``; scaling ``x g_x + y g_y``;
    parallel hyperbolic ``x g_x - y g_y``; diagonal hyperbolic ``y g_x + x g_y``; thickening
    ``g_x² + g_y²``.
    """
    images = X.reshape(-1, *image_shape)
    blurred = scipy.ndimage.gaussian_filter(images, sigma=(0, smoothing, smoothing)) if smoothing > 0 else images
    gy, gx = np.gradient(blurred, axis=(1, 2))
    y, x = np.meshgrid(np.arange(image_shape[0]) - (image_shape[0] - 1) / 2,
                       np.arange(image_shape[1]) - (image_shape[1] - 1) / 2, indexing="ij")
    tangents = [gx, gy, y * gx - x * gy, x * gx + y * gy, x * gx - y * gy, y * gx + x * gy, gx * gx + gy * gy]
    return np.stack([t.reshape(len(X), -1) for t in tangents], axis=2)


def _tangent_basis(tangents: np.ndarray) -> np.ndarray:
    """Orthonormal bases of the tangent spans, (n, p, 7), with the columns of directions that
    an image lacks (zero singular values, e.g. a blank image) set to zero."""
    U, s, _ = np.linalg.svd(tangents, full_matrices=False)
    keep = s > 1e-10 * np.maximum(s[:, :1], np.finfo(float).tiny)
    return U * keep[:, None, :]
