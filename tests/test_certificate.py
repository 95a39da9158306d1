"""The certified gap: a true bracket lower <= p* <= upper everywhere, tight at the optimum."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from problems import FACTORIES, HAND_SOLVED, reference_optimum
from sklearn.svm import SVC

from indkernel import SVMProblem, solve
from indkernel.core.intercept import best_hinge_intercept, hinge_loss

OPTIMA = [("random", n, seed, rho) for n, seed in [(6, 0), (10, 1), (15, 2)] for rho in (0.1, 1.0, 10.0)] + [
    ("digits", 20, 3, 1.0), ("psd", 12, 4, 1.0)]


@pytest.mark.parametrize("kind, n, seed, rho", OPTIMA)
def test_gap_is_tiny_at_an_independent_optimum(kind, n, seed, rho, oracle):
    """At α* from the max-min SDP (Clarabel, tight), the certificate closes to 1e-6 relative and
    the SDP's optimal value lies in the bracket up to the SDP's own accuracy.

    The free gap is first order in the distance to α* (see the identity test below); at Clarabel's
    accuracy it reaches 1e-6 only where few α_i are free, so the refined one is asserted here."""
    p_star, alpha_star = reference_optimum(kind, n, seed, 2.0, rho)
    K0, y = FACTORIES[kind](n, seed)
    p = SVMProblem(K0, y, C=2.0, rho=rho, oracle=oracle)
    alpha = p.project(alpha_star)
    free, refined = p.certify(alpha, bound="free"), p.certify(alpha, bound="refined")
    assert 0 <= refined.gap <= 1e-6 * abs(refined.lower)
    assert refined.upper <= free.upper and refined.lower == free.lower
    assert free.lower - 1e-8 * abs(p_star) <= p_star <= refined.upper + 1e-8 * abs(p_star)


@pytest.mark.parametrize("kind, n, seed", [("random", 15, 2), ("psd", 12, 4), ("digits", 20, 3)])
def test_free_gap_identity(kind, n, seed):
    """With margins m_i = y_i((K*u)_i + b) at the certificate's intercept b, the free gap equals
    Σ α_i (m_i - 1)_+ + (C_i - α_i)(1 - m_i)_+, computed here from the proxy kernel matrix."""
    K0, y = FACTORIES[kind](n, seed)
    p = SVMProblem(K0, y, C=np.linspace(0.5, 3.0, n), rho=0.7)
    alpha = p.project(np.random.default_rng(seed).uniform(0, 3, n))
    cert = p.certify(alpha, bound="free")
    margins = y * (p.proxy_kernel(alpha) @ (y * alpha) + cert.intercept)
    expected = alpha @ np.maximum(margins - 1, 0) + (p.C - alpha) @ np.maximum(1 - margins, 0)
    assert cert.gap == pytest.approx(expected, rel=1e-10)


def test_hand_solved_case_is_certified_exactly():
    c = HAND_SOLVED
    p = SVMProblem(c["K0"], c["y"], C=c["C"], rho=c["rho"])
    cert = p.certify(c["alpha_star"])
    # exact in exact arithmetic: the bracket is only the round-off allowance wide, and holds p*
    assert cert.lower <= c["p_star"] <= cert.upper
    assert cert.gap <= 1e-12 and cert.gap <= 1.01 * cert.allowance
    # K* = ½[[1,-1],[-1,1]] gives decision values ±1 at u = (1, -1): the margin is exactly met
    assert cert.intercept == pytest.approx(0.0, abs=1e-14)


@pytest.fixture(scope="module")
def random_problem():
    p_star, _ = reference_optimum("random", 10, 1, 2.0, 1.0)
    K0, y = FACTORIES["random"](10, 1)
    return SVMProblem(K0, y, C=2.0, rho=1.0), p_star


@settings(max_examples=80, deadline=None)
@given(x=arrays(np.float64, 10, elements=st.floats(-3, 5)))
def test_bracket_holds_at_random_feasible_points(random_problem, x):
    p, p_star = random_problem
    alpha = p.project(x)
    cert = p.certify(alpha, bound="free")
    assert cert.gap >= 0
    assert cert.lower <= p_star + 1e-9 * abs(p_star)
    assert cert.upper >= p_star - 1e-9 * abs(p_star)


@settings(max_examples=15, deadline=None)
@given(x=arrays(np.float64, 10, elements=st.floats(-3, 5)))
def test_refined_bracket_holds_and_never_loosens(random_problem, x):
    p, p_star = random_problem
    alpha = p.project(x)
    free, refined = p.certify(alpha, bound="free"), p.certify(alpha, bound="refined")
    assert p_star - 1e-9 * abs(p_star) <= refined.upper <= free.upper


@pytest.mark.parametrize("kind, n, seed, rho", OPTIMA)
def test_certified_to_1e_9_as_tight_as_f(kind, n, seed, rho, oracle):
    """With the Newton refinement at every certificate, apg certifies a relative gap of 1e-9 on
    every reference problem, and the bracket holds the SDP's p* (up to the SDP's accuracy)."""
    p_star, _ = reference_optimum(kind, n, seed, 2.0, rho)
    K0, y = FACTORIES[kind](n, seed)
    result = solve(SVMProblem(K0, y, C=2.0, rho=rho, oracle=oracle), "apg", tol=1e-9, max_iter=20_000)
    assert result.status == "optimal" and result.gap <= 1e-9 * result.scale
    assert result.lower - 1e-8 * abs(p_star) <= p_star <= result.upper + 1e-8 * abs(p_star)


# libsvm's β is a valid bound wherever its own solver stopped: its max_iter warning is not the test's
@pytest.mark.filterwarnings("ignore:libsvm stopped at max_iter:sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("kind, n, seed, rho", OPTIMA[::3] + OPTIMA[-2:])
def test_refinement_against_libsvm(kind, n, seed, rho):
    """The independent route: libsvm's SVM on K*(α) gives β; ``upper_bound`` at β holds p*, and near
    the optimum the refinement (O(n²) products only) is as tight as libsvm's bound to 1e-9; far
    from it, both are valid and the refined one never looser than the free one."""
    p_star, _ = reference_optimum(kind, n, seed, 2.0, rho)
    K0, y = FACTORIES[kind](n, seed)
    p = SVMProblem(K0, y, C=2.0, rho=rho)
    near = solve(p, "apg", tol=1e-8, max_iter=20_000).alpha
    far = p.project(np.random.default_rng(seed).uniform(0, 2, n))
    for alpha in (near, far):
        libsvm = p.upper_bound(alpha, p.libsvm_dual_coef(alpha))
        refined, free = p.certify(alpha), p.certify(alpha, bound="free")
        assert libsvm >= p_star - 1e-8 * abs(p_star) and refined.upper >= p_star - 1e-8 * abs(p_star)
        assert refined.upper <= free.upper
    assert refined.source in ("free", "tight")
    near_refined = p.certify(near)
    assert near_refined.upper <= p.upper_bound(near, p.libsvm_dual_coef(near)) + 1e-9 * near_refined.scale


def test_upper_bound_holds_for_any_beta_and_refuses_a_wrong_length(random_problem):
    """``upper_bound`` is a bound for every β (here random ones, far from optimal) and names β."""
    p, p_star = random_problem
    rng = np.random.default_rng(5)
    for _ in range(5):
        alpha, beta = p.project(rng.uniform(0, 2, p.n)), rng.normal(0, 3, p.n)
        assert p.upper_bound(alpha, beta) >= p_star - 1e-9 * abs(p_star)
    with pytest.raises(ValueError, match="beta"):
        p.upper_bound(alpha, beta[:-1])


@pytest.mark.parametrize("shift", [0.5, -0.3, 2.0])
def test_a_flat_optimal_intercept_is_the_middle_of_its_interval(shift):
    """With every point at its bound (no free support vector) the class-weighted hinge loss is
    flat in b; the intercept is the middle of that interval, as libsvm's, not an end of it, where
    every point would fall on one side (found on a1a with the sigmoid kernel)."""
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    decision = np.full(5, shift)
    C = np.where(y > 0, 1.5, 1.0)  # the authors' weights: the positive class weighs 3/2
    loss, b = best_hinge_intercept(decision, y, C)
    grid = np.linspace(-4, 4, 8001)
    losses = np.array([hinge_loss(decision, y, C, g) for g in grid])
    flat = grid[losses <= losses.min() + 1e-12]
    assert flat.max() - flat.min() == pytest.approx(2.0)  # b + shift in [-1, 1]
    assert b == pytest.approx(0.5 * (flat.min() + flat.max()), abs=1e-3) and b == pytest.approx(-shift)
    assert loss == pytest.approx(losses.min(), rel=1e-13)


def test_a_flat_optimal_intercept_is_libsvms():
    """On a zero kernel every α is at its bound and the loss is flat in b over [-1, 1]: libsvm's
    intercept and ours agree."""
    y = np.array([1.0, 1.0, -1.0, -1.0, -1.0])
    svc = SVC(C=1.0, kernel="precomputed", class_weight={1: 1.5, -1: 1.0}).fit(np.zeros((5, 5)), y)
    assert best_hinge_intercept(np.zeros(5), y, np.where(y > 0, 1.5, 1.0))[1] == pytest.approx(svc.intercept_[0], abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_best_intercept_against_every_breakpoint(seed):
    """The optimal intercept of the hinge loss is at a breakpoint: compare with all of them."""
    rng = np.random.default_rng(seed)
    n = 31
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    y[:2] = (1, -1)
    decision = rng.normal(0, 2, n)
    if seed % 2:
        decision = np.round(decision)  # ties among breakpoints
    C = rng.uniform(0.1, 3, n) if seed % 3 else np.ones(n)
    loss, b = best_hinge_intercept(decision, y, C)
    brute = min(hinge_loss(decision, y, C, t) for t in y - decision)
    assert loss == pytest.approx(brute, rel=1e-13, abs=1e-13)
    assert hinge_loss(decision, y, C, b) == pytest.approx(loss, rel=1e-14)  # (summed in another order)
    for shift in (-1e-3, 1e-3, 0.5, -0.5):  # and it is a minimum in b, not only among breakpoints
        assert hinge_loss(decision, y, C, b + shift) >= loss - 1e-12
