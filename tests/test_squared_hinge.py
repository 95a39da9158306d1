"""The squared-hinge (L2) SVM, a machine the paper does not have: every number checked against an
independent route (its max-min SDP and dual QP through cvxpy, a scalar minimizer, finite
differences, the level-set bound), on an unbounded feasible set."""

import cvxpy as cp
import numpy as np
import pytest
from problems import TIGHT_CLARABEL, TIGHT_SCS, UNRESTRICTED, quick_and_slow, random_indefinite, random_psd
from scipy.optimize import minimize_scalar

import formulations
from indkernel import ComponentwiseSVMProblem, IndefiniteSVC, PerturbSVMProblem, SVMProblem, solve
from indkernel.core.intercept import best_squared_hinge_intercept, squared_hinge_loss
from indkernel.solvers.registry import refusal

C = 2.0


def problem_and_optimum(penalty: str, n: int = 10, seed: int = 0):
    """A squared-hinge problem with each penalty and its optimum p* through its cvxpy max-min model."""
    K0, y = random_indefinite(n, seed)
    if penalty == "frobenius":
        return SVMProblem(K0, y, C, 0.5, loss="squared_hinge"), formulations.maxmin_sdp(K0, y, C, 0.5, "squared_hinge")
    if penalty == "componentwise":
        h = np.random.default_rng(seed + 1).uniform(0.5, 2.0, n)
        return (ComponentwiseSVMProblem(K0, y, C, h, loss="squared_hinge"),
                formulations.penalized_maxmin_sdp(K0, y, C, h, "squared_hinge"))
    K0, y = random_psd(n, seed)
    return PerturbSVMProblem(K0, y, C, 0.5, loss="squared_hinge"), formulations.perturb_maxmin(K0, y, C, 0.5, "squared_hinge")


def p_star(model) -> float:
    """The model's optimum, solved accurately (by SCS where Clarabel ends "inaccurate", as
    ``problems.reference_optimum``)."""
    for options in (TIGHT_CLARABEL, TIGHT_SCS):
        value = model.solve(**options)
        if model.problem.status == "optimal":
            return float(value)
    raise AssertionError("no accurate reference optimum")


@pytest.mark.parametrize("seed", range(40))
def test_the_best_intercept_is_the_minimum_over_every_offset(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 25))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    decision = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 30.0])
    weights = rng.uniform(0.1, 3.0, n)
    loss, b = best_squared_hinge_intercept(decision, y, weights)
    assert loss == squared_hinge_loss(decision, y, weights, b)
    found = minimize_scalar(lambda t: squared_hinge_loss(decision, y, weights, t), bracket=(-50.0, 50.0), tol=1e-14)
    assert loss <= found.fun * (1 + 1e-12) + 1e-14


def test_the_objective_is_its_dual_term_and_the_inner_minimum_by_cvxpy():
    """f(α) = eᵀα - ¼Σα²/C + min_{K ⪰ 0} -½uᵀKu + ρ‖K - K0‖² (the inner minimum by cvxpy), at a
    point beyond C (the set has no upper bound); the paper's forms agree."""
    problem, _ = problem_and_optimum("frobenius", n=8)
    alpha = problem.project(np.random.default_rng(1).uniform(0, 3 * C, 8))
    assert alpha.max() > C
    K = cp.Variable((8, 8), symmetric=True)
    u = problem.dual_coef(alpha)
    inner = cp.Problem(cp.Minimize(-0.5 * cp.quad_form(u, K) + 0.5 * cp.sum_squares(K - problem.K0)), [K >> 0])
    inner.solve(**TIGHT_CLARABEL)
    expected = np.sum(alpha) - np.sum(alpha ** 2) / (4 * C) + inner.value
    assert problem.objective(alpha) == pytest.approx(expected, rel=1e-7)
    for form in ("eigenvalue", "proxy"):
        assert problem.objective(alpha, form=form) == pytest.approx(problem.objective(alpha), rel=1e-10)


def test_gradient_and_hessian_against_finite_differences():
    problem, _ = problem_and_optimum("frobenius", n=9)
    rng = np.random.default_rng(2)
    alpha = problem.project(rng.uniform(0.5, 3.0, 9))
    step = 1e-6
    for _ in range(3):
        d = rng.standard_normal(9)
        d -= problem.feasible.a * (problem.feasible.a @ d) / 9  # along the hyperplane
        numeric = (problem.objective(alpha + step * d) - problem.objective(alpha - step * d)) / (2 * step)
        assert problem.gradient(alpha) @ d == pytest.approx(numeric, rel=1e-6, abs=1e-8)
        numeric_hessian = (problem.gradient(alpha + step * d) - problem.gradient(alpha - step * d)) / (2 * step)
        np.testing.assert_allclose(problem.hessian(alpha) @ d, numeric_hessian, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("penalty", ["frobenius", "componentwise", "mercer"])
@pytest.mark.parametrize("method", UNRESTRICTED)
def test_the_certified_bracket_holds_the_optimum_of_the_max_min_model(penalty, method):
    problem, model = problem_and_optimum(penalty)
    optimum = p_star(model)
    result = solve(problem, method, tol=1e-9)
    assert result.status == "optimal"
    slack = 1e-7 * max(1.0, abs(optimum))  # the conic solver's own accuracy
    assert result.lower - slack <= optimum <= result.upper + slack
    assert np.all(result.alpha <= problem.feasible.reach)  # the level-set box holds the maximizer


def test_the_sdp_route_solves_its_model():
    problem, model = problem_and_optimum("frobenius", n=8)
    result = solve(problem, "sdp", tol=1e-6)
    assert result.lower - 1e-6 <= p_star(model) <= result.upper + 1e-6


def test_rho_infinity_is_the_dual_qp_on_the_psd_part():
    K0, y = random_indefinite(10, 3)
    lam, V = np.linalg.eigh(K0)
    psd_part = (V * np.maximum(lam, 0.0)) @ V.T
    result = solve(SVMProblem(K0, y, C, np.inf, loss="squared_hinge"), "newton", tol=1e-10)
    optimum = p_star(formulations.dual_qp(psd_part, y, C, "squared_hinge"))
    assert result.lower - 1e-7 <= optimum <= result.upper + 1e-7


def test_the_tight_bound_at_an_unoptimized_point_is_the_natural_bound():
    """At an arbitrary feasible α, the tight certificate's upper bound is at least the natural bound
    ``max_x q(x) + ρ‖K* - K0‖²`` on the fixed K*(α) (its dual QP by cvxpy) and within the
    certificate's tightness of it; the lower bound is f(α)."""
    problem, _ = problem_and_optimum("frobenius", n=10)
    alpha = problem.project(np.random.default_rng(4).uniform(0, 4 * C, 10))
    certificate = problem.certify(alpha)
    K_star = problem.proxy_kernel(alpha)
    natural = p_star(formulations.dual_qp(K_star, problem.y, C, "squared_hinge")) + 0.5 * np.sum((K_star - problem.K0) ** 2)
    f = problem.objective(alpha)
    assert certificate.lower <= f
    assert certificate.upper >= natural - 1e-7 * abs(natural)
    assert certificate.upper - f <= 1.25 * (natural - f) + 1e-7 * abs(natural)


def test_libsvm_solves_the_machine_on_a_fixed_kernel():
    """libsvm's β (the hinge SVM on K + diag(1/(2C)) with a box that never binds) scores the dual
    QP's optimum through the primal at its best intercept."""
    K, y = random_psd(12, 5)
    problem = PerturbSVMProblem(K, y, C, 1e12, loss="squared_hinge")  # K* = K up to 1e-12
    beta = problem.machine.libsvm_beta(K, 1e-10, -1)[0]
    decision = K @ beta
    primal = 0.5 * beta @ decision + best_squared_hinge_intercept(decision, problem.y, problem.C)[0]
    assert primal == pytest.approx(p_star(formulations.dual_qp(K, y, C, "squared_hinge")), rel=1e-7)


def test_the_projection_onto_the_unbounded_set_is_the_nearest_point():
    problem, _ = problem_and_optimum("frobenius", n=10)
    rng = np.random.default_rng(6)
    for scale in (0.1, 10.0, 1e4):
        x = rng.standard_normal(10) * scale + scale
        z = cp.Variable(10)
        nearest = cp.Problem(cp.Minimize(cp.sum_squares(z - x)), [problem.y @ z == 0, z >= 0])
        nearest.solve(**TIGHT_CLARABEL)
        np.testing.assert_allclose(problem.project(x), z.value, atol=1e-7 * scale)


def test_accpm_needs_a_bounded_set_and_is_refused_with_a_sentence():
    problem, _ = problem_and_optimum("frobenius", n=8)
    assert "bounded feasible set" in refusal(problem, "accpm")
    assert refusal(problem, "exchange") is None  # its SIQCLP master is composed (tests/test_verify.py solves it)
    with pytest.raises(ValueError, match="bounded feasible set"):
        solve(problem, "accpm")


@pytest.mark.slow  # a series of master solves (4 s)
def test_the_exchange_method_with_the_mkl_master_solves_it():
    """The MKL master needs only the machine on a fixed kernel (libsvm on ``K + D``), no conic model."""
    problem, model = problem_and_optimum("frobenius", n=10)
    result = solve(problem, "exchange", master="mkl", tol=1e-6)
    assert result.status == "optimal"
    assert result.lower - 1e-7 <= p_star(model) <= result.upper + 1e-7


def test_the_estimator_decides_as_the_dual_qp_at_the_psd_limit():
    """``IndefiniteSVC(loss="squared_hinge", rho=inf)`` on a PSD kernel is the L2 SVM: f is
    strongly concave (modulus ``1/(2C)``), so a certified gap g puts its β within
    ``r = √(2g·2C)`` of the dual QP's (cvxpy), and its decisions (with the best intercept, a
    weighted mean of the margins) within ``2‖K‖₂r``."""
    K, y = random_psd(30, 7)
    model = IndefiniteSVC(C=C, rho=np.inf, loss="squared_hinge", tol=1e-10).fit(K, y)
    qp = formulations.dual_qp(K, y, C, "squared_hinge")
    p_star(qp)
    beta = y * qp.variables["alpha"].value
    intercept = best_squared_hinge_intercept(K @ beta, y, np.full(30, C))[1]
    fitted = np.zeros(30)
    fitted[model.support_] = model.dual_coef_[0]
    radius = np.sqrt(2 * model.gap_ * 2 * C) + 1e-7  # and the QP's own accuracy
    assert np.linalg.norm(fitted - beta) <= radius
    assert np.max(np.abs(model.decision_function(K) - K @ beta - intercept)) <= 2 * np.linalg.norm(K, 2) * radius
    with pytest.raises(ValueError, match="loss"):
        IndefiniteSVC(loss="l2").fit(K, y)


@pytest.mark.parametrize("method", ["newton", "apg", "pg"])
def test_a_large_C_is_solved_not_declared_round_off_at_the_start(method):
    """n = 40 digits, sigmoid kernel (entries below 1), C = 1e4, ρ = 1: the start used to be the
    projection of C, where f = -1e18 and the round-off allowance exceeds the target, and every
    method stopped there "roundoff" with the bracket [-1e18, 6e18]. Now the start is scaled along
    its ray and round-off is blamed only once the iterates stall: each method certifies p* of the
    max-min SDP (which barely moves from C = 100)."""
    from indkernel.datasets import load_digits_pair
    from indkernel.kernels import sigmoid

    X, y = load_digits_pair(3, 5)
    K0 = sigmoid(X[:40], a=0.01, r=-1)
    y = np.where(y[:40] == 3, 1.0, -1.0)
    problem = SVMProblem(K0, y, C=1e4, rho=1.0, loss="squared_hinge")
    assert problem.objective(problem.initial_point()) > problem.objective(np.zeros(40))
    result = solve(problem, method, tol=1e-6)
    assert result.status == "optimal", result.stop_reason
    optimum = p_star(formulations.maxmin_sdp(K0, y, 1e4, 1.0, "squared_hinge"))
    assert result.lower - 1e-6 * abs(optimum) <= optimum <= result.upper + 1e-6 * abs(optimum)


def test_the_scaled_start_maximizes_the_lower_model_along_its_ray():
    """The start tx: t in (0, 1] maximizes ``a·t - b·t² - c·t⁴`` (checked on a grid of t), a lower
    bound on f(tx) (checked at t and beside it)."""
    problem, _ = problem_and_optimum("frobenius", n=10)
    x = problem.machine.start()
    start = problem.initial_point()
    t = start[0] / x[0]
    np.testing.assert_allclose(start, t * x, rtol=1e-12)
    u = problem.oracle_u(x)
    a, b = x.sum(), 0.5 * problem.machine.curvature @ (x * x) + 0.5 * u @ problem.K0 @ u
    c = (u @ u) ** 2 / (16 * problem.rho)
    grid = np.linspace(1e-4, 1.0, 10_001)
    model = a * grid - b * grid ** 2 - c * grid ** 4
    assert a * t - b * t ** 2 - c * t ** 4 >= model.max() - 1e-9 * abs(model.max())
    for s in (t, 0.5 * t, min(1.0, 2 * t)):
        assert problem.objective(s * x) >= a * s - b * s ** 2 - c * s ** 4 - 1e-9


@pytest.mark.parametrize("seed", quick_and_slow(range(8), quick=(2,)))
def test_the_papers_projected_gradient_stays_on_the_part_of_the_cone_that_holds_the_optimum(seed):
    """n = 8, the kernel scaled by 100, C in {1, 0.1, 0.01}, ρ = 1: pg's step t/(k+1) threw its
    iterates to 1e20 and beyond, where even their projection onto the cone missed A by more than
    its round-off (``ValueError: alpha is not in the feasible set A``) or overflowed; 17 of these 24
    problems failed (all three of seed 2). Projected onto A ∩ [0, reach] every one is certified,
    at p* of the max-min SDP."""
    K0, y = random_indefinite(8, seed)
    for C_value in (1.0, 0.1, 0.01):
        problem = SVMProblem(100 * K0, y, C=C_value, rho=1.0, loss="squared_hinge")
        result = solve(problem, "pg", tol=1e-6)
        assert result.status == "optimal", (C_value, result.stop_reason)
        optimum = p_star(formulations.maxmin_sdp(100 * K0, y, C_value, 1.0, "squared_hinge"))
        assert result.lower - 1e-6 * abs(optimum) <= optimum <= result.upper + 1e-6 * abs(optimum)
    assert IndefiniteSVC(C=1.0, loss="squared_hinge", method="pg").fit(100 * K0, y).status_[0] == "optimal"


def test_within_reach_is_the_projection_on_a_bounded_set():
    K0, y = random_indefinite(12, 3)
    bounded = SVMProblem(K0, y, C=2.0).feasible
    x = np.random.default_rng(4).normal(0, 5, 12)
    np.testing.assert_array_equal(bounded.project_within_reach(x), bounded.project(x))
    cone = SVMProblem(K0, y, C=2.0, loss="squared_hinge").feasible
    z = cone.project_within_reach(1e30 * np.abs(x))
    assert np.all(z <= cone.reach) and cone.violation(z) <= 1e-12
