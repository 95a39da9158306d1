"""Each similarity against a slow loop written from its definition; symmetry; indefiniteness."""

import numpy as np
import pytest
import scipy.ndimage

from indkernel import kernels
from indkernel.datasets import load_digits_pair


@pytest.fixture(scope="module")
def images():
    X, _ = load_digits_pair(3, 5)
    return X[:14], X[14:23]


def _loop(function, X, Y):
    return np.array([[function(x, y) for y in Y] for x in X])


def test_simpson_against_its_definition(images):
    X, Y = images
    a, b = X > 0.5, Y > 0.5
    expected = _loop(lambda s, t: np.sum(s & t) / min(s.sum(), t.sum()), a, b)
    np.testing.assert_allclose(kernels.simpson(X, Y), expected, rtol=1e-14)


def test_sigmoid_linear_gaussian_against_their_definitions(images):
    X, Y = images
    np.testing.assert_allclose(kernels.sigmoid(X, Y, a=0.3, r=-1.0), _loop(lambda x, y: np.tanh(0.3 * x @ y - 1), X, Y),
                               rtol=1e-13)
    np.testing.assert_allclose(kernels.linear(X, Y), _loop(np.dot, X, Y), rtol=1e-13)
    np.testing.assert_allclose(kernels.gaussian(X, Y, gamma=0.1),
                               _loop(lambda x, y: np.exp(-0.1 * np.sum((x - y) ** 2)), X, Y), rtol=1e-12)


def _one_sided(x, y, shape, smoothing):
    """``min_a ‖x + T_x a - y‖`` by least squares, with the tangents written out per image."""
    image = scipy.ndimage.gaussian_filter(x.reshape(shape), smoothing)
    gy, gx = np.gradient(image)
    rows, cols = np.indices(shape, dtype=float)
    v, u = rows - (shape[0] - 1) / 2, cols - (shape[1] - 1) / 2  # y (down) and x (right), centred
    T = np.column_stack([t.ravel() for t in (gx, gy, v * gx - u * gy, u * gx + v * gy, u * gx - v * gy,
                                               v * gx + u * gy, gx ** 2 + gy ** 2)])
    a = np.linalg.lstsq(T, y - x, rcond=None)[0]
    return np.linalg.norm(x + T @ a - y)


def test_tangent_distance_against_least_squares(images):
    X, Y = images
    shape = (8, 8)
    d_xy = _loop(lambda x, y: _one_sided(x, y, shape, 0.9), X, Y)
    d_yx = _loop(lambda y, x: _one_sided(y, x, shape, 0.9), Y, X).T
    np.testing.assert_allclose(kernels.tangent_distances(X, Y), ((d_xy + d_yx) / 2) ** 2, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(kernels.tangent_distance(X, Y, gamma=0.3),
                               np.exp(-0.3 * ((d_xy + d_yx) / 2) ** 2), rtol=1e-8)


def test_tangent_distance_is_invariant_to_a_small_shift_where_euclid_is_not():
    """A shifted smooth blob is close in tangent distance: the x-translation tangent absorbs it."""
    rows, cols = np.indices((16, 16))
    blob = np.exp(-((rows - 7.5) ** 2 + (cols - 7.5) ** 2) / 8).ravel()
    shifted = np.exp(-((rows - 7.5) ** 2 + (cols - 7.0) ** 2) / 8).ravel()
    td = kernels.tangent_distances(blob[None], shifted[None], smoothing=0.0)[0, 0]
    assert td < 0.05 * np.sum((blob - shifted) ** 2)


@pytest.mark.parametrize("name, kwargs", [("simpson", {}), ("tangent_distance", dict(gamma=0.05)),
                                          ("sigmoid", dict(a=1.0, r=-0.5)), ("linear", {}),
                                          ("gaussian", dict(gamma=0.5))])
def test_training_matrices_are_symmetric_and_blocks_consistent(name, kwargs, images):
    X, Y = images
    function = getattr(kernels, name)
    K = function(X, **kwargs)
    assert K.shape == (len(X), len(X)) and np.array_equal(K, K.T)
    full = function(np.vstack([X, Y]), **kwargs)
    np.testing.assert_allclose(function(Y, X, **kwargs), full[len(X):, :len(X)], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name, kwargs, least", [("simpson", {}, 1e-2), ("tangent_distance", dict(gamma=0.1), 1e-4),
                                                 ("sigmoid", dict(a=0.1, r=-1.0), 1e-1)])
def test_the_papers_similarities_are_indefinite(name, kwargs, least):
    """As the paper says (table:data_stats): Simpson and sigmoid highly (|λ_min| at least 1 % and
    10 % of λ_max here), tangent distance slightly."""
    X, _ = load_digits_pair(3, 5)
    lam = np.linalg.eigvalsh(getattr(kernels, name)(X[:200], **kwargs))
    assert lam[0] < -least * lam[-1]


def test_mercer_kernels_are_psd():
    X, _ = load_digits_pair(3, 5)
    for K in (kernels.linear(X[:200]), kernels.gaussian(X[:200], gamma=0.1)):
        assert np.linalg.eigvalsh(K)[0] > -1e-10 * np.abs(K).max() * len(K)


def test_blank_image_has_no_tangents():
    """A blank image has zero tangents: its one-sided distance is the Euclidean one."""
    X = np.zeros((1, 64))
    Y = load_digits_pair()[0][:3]
    d = np.sqrt(kernels.tangent_distances(X, Y))
    euclid = np.linalg.norm(Y, axis=1)
    reverse = np.array([_one_sided(y, X[0], (8, 8), 0.9) for y in Y])
    np.testing.assert_allclose(d[0], (euclid + reverse) / 2, rtol=1e-10)


@pytest.mark.parametrize("call, message", [
    (lambda: kernels.simpson(np.zeros((2, 4))), "no pixel above threshold"),
    (lambda: kernels.linear(np.ones((2, 3)), np.ones((2, 4))), "same number of features"),
    (lambda: kernels.gaussian(np.ones(3)), "2-D array"),
    (lambda: kernels.gaussian(np.ones((2, 2)), gamma=-1.0), "gamma must be a positive"),
    (lambda: kernels.sigmoid(np.ones((2, 2)), a="x"), "a must be a finite real"),
    (lambda: kernels.tangent_distance(np.ones((2, 10))), "not square; pass image_shape"),
    (lambda: kernels.tangent_distance(np.ones((2, 10)), image_shape=(3, 3)), "has 9 pixels but the rows have 10"),
    (lambda: kernels.linear(np.array([[np.nan, 1.0]])), "NaN"),
])
def test_bad_input(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
