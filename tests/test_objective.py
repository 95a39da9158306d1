"""The objective, its gradient and the proxy kernel, each against an independent route."""

import numpy as np
import pytest
from problems import HAND_SOLVED, TIGHT_CLARABEL, digits_simpson, random_indefinite, random_psd
from sklearn.svm import SVC

import formulations
from indkernel import SVMProblem

CASES = [("random", random_indefinite, n, seed) for n, seed in [(5, 0), (12, 1), (30, 2)]] + [
    ("digits", digits_simpson, 40, 3), ("psd", random_psd, 15, 4)]


def problem_and_points(factory, n, seed, rho, oracle="rank-one"):
    K0, y = factory(n, seed)
    p = SVMProblem(K0, y, C=np.random.default_rng(seed).uniform(0.5, 5.0, n), rho=rho, oracle=oracle)
    rng = np.random.default_rng(seed + 100)
    feasible = [p.project(rng.uniform(-1, 6, n)) for _ in range(3)]
    return p, feasible + [rng.standard_normal(n)]  # the objective is defined off A too


@pytest.mark.parametrize("rho", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("name, factory, n, seed", CASES)
def test_objective_forms_agree(name, factory, n, seed, rho, oracle):
    p, points = problem_and_points(factory, n, seed, rho, oracle)
    for alpha in points:
        stable = p.objective(alpha)
        scale = max(1.0, abs(stable), rho * np.sum(p.K0 ** 2) * 1e-6)
        assert abs(p.objective(alpha, form="eigenvalue") - stable) <= 1e-10 * scale
        assert abs(p.objective(alpha, form="proxy") - stable) <= 1e-10 * scale


def test_objective_at_hand_solved_optimum():
    c = HAND_SOLVED
    p = SVMProblem(c["K0"], c["y"], C=c["C"], rho=c["rho"])
    for form in ("negative-part", "eigenvalue", "proxy"):
        assert p.objective(c["alpha_star"], form=form) == pytest.approx(c["p_star"], abs=1e-14)
    np.testing.assert_allclose(p.proxy_kernel(c["alpha_star"]), c["K_star"], atol=1e-14)


@pytest.mark.parametrize("rho", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("name, factory, n, seed", CASES)
def test_gradient_central_differences(name, factory, n, seed, rho, oracle):
    p, points = problem_and_points(factory, n, seed, rho, oracle)
    h = 1e-5
    for alpha in points:
        g = p.gradient(alpha)
        fd = np.array([(p.objective(alpha + h * e) - p.objective(alpha - h * e)) / (2 * h) for e in np.eye(n)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(g).max()))


@pytest.mark.parametrize("name, factory, n, seed", CASES)
def test_gradient_taylor_remainder_is_second_order(name, factory, n, seed):
    """pymanopt's check: |f(α + hd) - f(α) - h∇f(α)ᵀd| = O(h²), slope 2 on a log-log plot."""
    p, points = problem_and_points(factory, n, seed, 1.0)
    alpha = points[0]
    d = np.random.default_rng(seed).standard_normal(n)
    f0, slope = p.objective(alpha), p.gradient(alpha) @ d
    hs = np.logspace(-1, -3.5, 6)
    remainders = [abs(p.objective(alpha + h * d) - f0 - h * slope) for h in hs]
    fitted = np.polyfit(np.log(hs), np.log(remainders), 1)[0]
    assert 1.9 <= fitted <= 2.1, f"Taylor remainder slope {fitted:.3f}, expected 2"


@pytest.mark.parametrize("rho", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("name, factory, n, seed", CASES)
def test_hessian_is_the_derivative_of_the_gradient(name, factory, n, seed, rho, oracle):
    """The Daleckii–Krein Hessian–vector product against central differences of the exact
    gradient (an independent route: the gradient needs only K*u), and it is symmetric and
    negative semidefinite (f is concave)."""
    p, points = problem_and_points(factory, n, seed, rho, oracle)
    rng = np.random.default_rng(seed)
    for alpha in points:
        H = p.hessian(alpha)
        v, w = rng.standard_normal((2, n))
        h = 1e-5 * max(1.0, np.abs(alpha).max())
        fd = (p.gradient(alpha + h * v) - p.gradient(alpha - h * v)) / (2 * h)
        Hv = H @ v
        np.testing.assert_allclose(Hv, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
        assert w @ Hv == pytest.approx(v @ (H @ w), rel=1e-9, abs=1e-9 * np.abs(Hv).max())
        assert v @ Hv <= 1e-9 * np.abs(Hv).max() * np.linalg.norm(v)


@pytest.mark.parametrize("name, factory, n, seed", CASES)
def test_hessian_taylor_remainder_is_third_order(name, factory, n, seed):
    """``|∇f(α + td) - ∇f(α) - t∇²f(α)d|`` falls like t² where f is twice differentiable (the
    quadratic error term of the gradient), so the products are the exact second derivative."""
    p, points = problem_and_points(factory, n, seed, 1.0)
    alpha = points[0]
    d = np.random.default_rng(seed).standard_normal(n)
    g0, Hd = p.gradient(alpha), p.hessian(alpha) @ d
    ts = np.logspace(-2, -4, 5)
    remainders = [np.linalg.norm(p.gradient(alpha + t * d) - g0 - t * Hd) for t in ts]
    fitted = np.polyfit(np.log(ts), np.log(remainders), 1)[0]
    assert 1.8 <= fitted <= 2.2, f"gradient remainder slope {fitted:.3f}, expected 2"


def test_hessian_of_the_rank_one_and_dense_oracles_agree():
    K0, y = digits_simpson(60, 7)
    alpha = np.random.default_rng(7).uniform(0, 2, 60)
    products = [SVMProblem(K0, y, C=2.0, rho=0.5, oracle=oracle).hessian(alpha) @ np.cos(np.arange(60.0))
                for oracle in ("rank-one", "eigh")]
    np.testing.assert_allclose(products[0], products[1], rtol=0, atol=1e-10 * np.abs(products[1]).max())


@pytest.mark.parametrize("rho", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name, factory, n, seed", CASES)
def test_proxy_kernel_is_the_clipped_rank_one_update(name, factory, n, seed, rho, oracle):
    p, points = problem_and_points(factory, n, seed, rho, oracle)
    for alpha in points:
        u = p.y * alpha
        lam, V = np.linalg.eigh(p.K0 + np.outer(u, u) / (4 * rho))
        expected = (V * np.maximum(lam, 0)) @ V.T
        K = p.proxy_kernel(alpha)
        scale = np.abs(lam).max()
        np.testing.assert_allclose(K, expected, atol=1e-12 * scale)
        np.testing.assert_array_equal(K, K.T)
        assert np.linalg.eigvalsh(K).min() >= -1e-12 * scale
        np.testing.assert_allclose(K @ u, p.y * (1 - p.gradient(alpha)), atol=1e-12 * scale * np.abs(u).sum())


@pytest.mark.parametrize("seed", range(3))
def test_psd_input_gives_the_plain_rank_one_update(seed):
    """eq:kstar_psd: for PSD K0 no projection is needed."""
    K0, y = random_psd(20, seed)
    p = SVMProblem(K0, y, C=2.0, rho=0.3)
    alpha = p.project(np.random.default_rng(seed).uniform(0, 2, 20))
    u = y * alpha
    np.testing.assert_allclose(p.proxy_kernel(alpha), K0 + np.outer(u, u) / 1.2, atol=1e-12)


def test_large_rho_tends_to_the_svm_on_the_clipped_kernel():
    """As ρ → ∞, p*(ρ) - ρ‖(K0)_-‖²_F → ω_C((K0)_+) (the "denoise" SVM) with error O(1/ρ), and the
    proxy kernel tends to (K0)_+. The SVM is solved independently twice: libsvm gives α̂, the
    dual QP in cvxpy gives ω; the certified bracket at α̂ must close in on ω."""
    K0, y = digits_simpson(40, 7)
    C = 1.0
    lam, V = np.linalg.eigh(K0)
    assert lam.min() < -0.1  # really indefinite
    K_plus = (V * np.maximum(lam, 0)) @ V.T
    omega = formulations.dual_qp(K_plus, y, C).solve(**TIGHT_CLARABEL)
    svc = SVC(C=C, kernel="precomputed", tol=1e-10).fit(K_plus, y)
    alpha_hat = np.zeros(len(y))
    alpha_hat[svc.support_] = np.abs(svc.dual_coef_[0])
    errors, kernel_errors = [], []
    for rho in [1e1, 1e2, 1e3, 1e4]:
        p = SVMProblem(K0, y, C=C, rho=rho)
        alpha = p.project(alpha_hat)
        cert = p.certify(alpha, bound="refined")
        shift = rho * np.sum(np.minimum(lam, 0) ** 2)
        errors.append(max(abs(cert.lower - shift - omega), abs(cert.upper - shift - omega)))
        kernel_errors.append(np.abs(p.proxy_kernel(alpha) - K_plus).max())
    assert all(b < a / 5 for a, b in zip(errors, errors[1:], strict=False)), errors
    assert errors[-1] < 1e-3 * omega
    assert all(b < a / 5 for a, b in zip(kernel_errors, kernel_errors[1:], strict=False)), kernel_errors


def test_a_problem_keeps_its_two_newest_oracle_points():
    """A line search that tried a point beyond the one it accepts comes back to the accepted one:
    its oracle point is still kept (no new rank-one update), while a third point evicts the oldest."""
    from indkernel.core.proxy import RankOneProxy

    class Counting(RankOneProxy):
        calls = 0

        def __call__(self, u, rho):
            self.calls += 1
            return super().__call__(u, rho)

    K0, y = random_indefinite(15, 4)
    oracle = Counting(K0)
    problem = SVMProblem(K0, y, C=2.0, rho=1.0, oracle=oracle)
    accepted, beyond, third = (problem.project(np.full(15, c)) for c in (0.3, 0.6, 0.9))
    values = [problem.objective(point) for point in (accepted, beyond)]
    assert oracle.calls == 2
    assert problem.objective(accepted) == values[0] and problem.gradient(beyond) is not None and oracle.calls == 2
    problem.objective(third)
    problem.objective(accepted)  # evicted by the third
    assert oracle.calls == 4
