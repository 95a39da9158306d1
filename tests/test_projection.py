"""The exact projection onto A against a cvxpy QP and against its KKT conditions."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from problems import random_indefinite

from indkernel import SVMProblem
from indkernel.core.projection import project_box_hyperplane


def qp_projection(x, a, b, lo, hi):
    z = cp.Variable(len(x))
    cp.Problem(cp.Minimize(cp.sum_squares(z - x)), [a @ z == b, z >= lo, z <= hi]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return z.value


def assert_kkt(z, x, a, b, lo, hi):
    """z = clip(x - λa, lo, hi) for one λ, aᵀz = b, lo <= z <= hi."""
    scale = 1 + np.abs(x).max() + np.abs(hi).max()
    assert np.all(z >= lo) and np.all(z <= hi)
    assert abs(a @ z - b) <= 1e-12 * scale * len(z)
    free = (z > lo) & (z < hi)
    if free.any():
        lam = np.median((x[free] - z[free]) / a[free])
        np.testing.assert_allclose(z, np.clip(x - lam * a, lo, hi), atol=1e-12 * scale)
    else:  # every coordinate at a bound: λ must lie in the intersection of the sign conditions
        lower_side = (z == lo) & (z < hi)
        upper_side = (z == hi) & (z > lo)
        # z_i = lo_i needs x_i - λa_i <= lo_i; z_i = hi_i needs x_i - λa_i >= hi_i
        t_lo, t_hi = (x - lo) / a, (x - hi) / a
        need_ge = np.concatenate([t_lo[lower_side & (a > 0)], t_hi[upper_side & (a < 0)]])
        need_le = np.concatenate([t_lo[lower_side & (a < 0)], t_hi[upper_side & (a > 0)]])
        if need_ge.size and need_le.size:
            assert need_ge.max() <= need_le.min() + 1e-12 * scale


def svm_set(n, rng, C_low=0.1, C_high=5.0):
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1, -1)
    return y, 0.0, np.zeros(n), rng.uniform(C_low, C_high, n)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [2, 7, 50, 300])
def test_against_qp_per_sample_C(n, seed):
    rng = np.random.default_rng(seed)
    a, b, lo, hi = svm_set(n, rng)
    x = rng.normal(1.0, 4.0, n)
    z = project_box_hyperplane(x, a, b, lo, hi)
    assert_kkt(z, x, a, b, lo, hi)
    np.testing.assert_allclose(z, qp_projection(x, a, b, lo, hi), atol=1e-7)


@pytest.mark.parametrize("seed", range(5))
def test_ties_and_degenerate_boxes(seed):
    """Repeated values of x, coordinates with lo == hi, a scaled hyperplane and b != 0."""
    rng = np.random.default_rng(seed)
    n = 40
    x = rng.choice([-1.0, 0.0, 0.5, 2.0], n)  # many ties, so many equal breakpoints
    a = rng.choice([-2.0, -1.0, 0.5, 1.0], n)
    lo = rng.choice([-1.0, 0.0], n)
    hi = lo + rng.choice([0.0, 0.0, 1.0, 3.0], n)  # a quarter to a half are degenerate
    b = 0.3 * float(np.sum(np.where(a > 0, a * hi, a * lo)))
    z = project_box_hyperplane(x, a, b, lo, hi)
    assert_kkt(z, x, a, b, lo, hi)
    np.testing.assert_allclose(z, qp_projection(x, a, b, lo, hi), atol=1e-7)
    np.testing.assert_array_equal(z[lo == hi], lo[lo == hi])


def test_single_feasible_point():
    """One positive and one negative sample with tiny C: the equality pins both coordinates."""
    a, lo, hi = np.array([1.0, -1.0]), np.zeros(2), np.array([1.0, 1e-9])
    # z = (t, t), t in [0, 1e-9]: (t - 5)² + (t + 3)² decreases in t, (t + 5)² + (t - 3)² increases
    z = project_box_hyperplane(np.array([5.0, -3.0]), a, 0.0, lo, hi)
    np.testing.assert_allclose(z, [1e-9, 1e-9], atol=1e-15)
    z = project_box_hyperplane(np.array([-5.0, 3.0]), a, 0.0, lo, hi)
    np.testing.assert_allclose(z, [0.0, 0.0], atol=1e-15)


def test_empty_set_raises():
    with pytest.raises(ValueError, match="feasible set is empty"):
        project_box_hyperplane(np.zeros(3), np.ones(3), 5.0, np.zeros(3), np.ones(3))


@settings(max_examples=60, deadline=None)
@given(x=arrays(np.float64, 12, elements=st.floats(-50, 50)),
       C=arrays(np.float64, 12, elements=st.floats(0.01, 10)),
       others=arrays(np.float64, (3, 12), elements=st.floats(-50, 50)))
def test_projection_properties(x, C, others):
    """Feasible, idempotent, and the variational inequality (x - z)ᵀ(w - z) <= 0 for w in A."""
    K0, y = random_indefinite(12, 0)
    p = SVMProblem(K0, y, C=C)
    z = p.project(x)
    assert p.feasibility_violation(z) <= 1e-12
    np.testing.assert_allclose(p.project(z), z, atol=1e-12 * (1 + np.abs(z).max()))
    for w in map(p.project, others):
        assert (x - z) @ (w - z) <= 1e-9 * (1 + np.abs(x).max()) * (1 + np.abs(w - z).sum())


def test_a_common_offset_far_beyond_the_box_is_projected_exactly():
    """Found by the property suite (one-class, K scaled by 1e16): a point 1e16 away from a box of
    width 0.9 in every coordinate rounded the breakpoints of lo and hi together and the set looked
    empty. The answer by hand: the second coordinate lies 1.06e15 above the first, so it sits at
    its upper bound and the first takes the rest of aᵀz = 1; the same for any common offset."""
    a, lo, hi = np.ones(2), np.zeros(2), np.full(2, 0.88913971)
    for offset, spread in [(-2.86417320e16, 1.0556871e15), (0.0, 1.0556871e15), (1e17, 1.0556871e15),
                           (-2.86417320e18, 1.0556871e17)]:  # the last: the coordinates' own spread cancels
        x = np.array([offset, offset + spread])
        np.testing.assert_allclose(project_box_hyperplane(x, a, 1.0, lo, hi), [1.0 - hi[1], hi[1]], atol=1e-12)


@pytest.mark.parametrize("scale", [1e8, 1e20])
def test_a_point_far_beyond_the_box_lands_on_the_hyperplane(scale):
    """``x - λa`` cancels when x is far larger than the box: ``x = scale·e`` with ``a = (1, -1, 1)``
    clips to ``(1, 0, 1)`` with ``aᵀz = 2``; the projection removes that residual inside the box."""
    a, lo, hi = np.array([1.0, -1.0, 1.0]), np.zeros(3), np.ones(3)
    z = project_box_hyperplane(np.full(3, scale), a, 0.0, lo, hi)
    assert np.all(z >= lo) and np.all(z <= hi)
    assert abs(a @ z) <= 1e-15


@pytest.mark.parametrize("unbounded", [False, True])
def test_violation_and_distance_bound_against_their_definitions_and_the_distance(unbounded):
    """The compiled one-pass measures of a point's distance to A against their NumPy definitions,
    and the distance bound against the true distance ``‖x - p_A(x)‖`` (from the exact projection);
    an excess of 1e200 gives a finite bound (the norm is scaled)."""
    from indkernel.core.feasible_set import FeasibleSet

    rng = np.random.default_rng(3)
    n = 30
    a = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    hi = np.full(n, np.inf) if unbounded else rng.uniform(0.5, 2.0, n)
    A = FeasibleSet(a, 0.3, np.zeros(n), hi, reach=np.full(n, 3.0) if unbounded else None)
    for x in (rng.uniform(-1.0, 3.0, n), A.project(rng.uniform(0.0, 1.0, n)), np.where(np.arange(n) == 4, 1e200, 0.5)):
        excess = np.maximum(A.lo - x, 0.0) + np.maximum(x - A.hi, 0.0)
        residual = abs(a @ x - 0.3)
        bounds = max(float(np.max(A.lo - x)), float(np.max(x - A.hi)), 0.0)
        expected = max(bounds, residual / np.sqrt(n)) / max(1.0, float(np.max(A.extent)))
        assert A.violation(x) == pytest.approx(expected, rel=1e-12, abs=1e-15)
        largest = np.abs(excess).max()
        norm = 0.0 if largest == 0 else largest * np.sqrt(np.sum((excess / largest) ** 2))
        bound = A.distance_bound(x)
        assert np.isfinite(bound)
        assert bound == pytest.approx(residual / np.linalg.norm(a) + 2 * norm, rel=1e-12, abs=1e-15)
        if np.abs(x).max() < 1e100:
            assert np.linalg.norm(x - A.project(x)) <= bound * (1 + 1e-12) + 1e-15
