"""The problem composed of a machine and a penalty: the thin constructors are the compositions, and
pairs no constructor names (the SVR and the one-class SVM with componentwise or Mercer penalties)
agree with an independent route to the same numbers."""

import cvxpy as cp
import numpy as np
import pytest
from problems import TIGHT_CLARABEL, random_indefinite

from indkernel import IndefiniteProblem, OneClassProblem, SVMProblem, SVRProblem, solve
from indkernel.core import Componentwise, EpsilonInsensitive, Frobenius, Hinge, Mercer, OneClass
from indkernel.core.machines import Machine
from indkernel.solvers.registry import refusal


def random_kernel(n: int, seed: int = 0) -> np.ndarray:
    return random_indefinite(n, seed)[0]


def labels(n: int, seed: int = 0) -> np.ndarray:
    return random_indefinite(n, seed)[1]


def psd_kernel(n: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n, 3))
    return X @ X.T


def test_the_svm_problem_is_the_composition_of_the_hinge_and_the_frobenius_penalty():
    K0, y = random_kernel(12, seed=1), labels(12, seed=1)
    composed = IndefiniteProblem(K0, Hinge(y, 2.0, None, 12), Frobenius(0.5))
    named = SVMProblem(K0, y, C=2.0, rho=0.5)
    alpha = named.project(np.random.default_rng(2).uniform(0, 2, 12))
    assert composed.objective(alpha) == named.objective(alpha)
    np.testing.assert_array_equal(composed.gradient(alpha), named.gradient(alpha))
    assert composed.certify(alpha) == named.certify(alpha)
    ours, theirs = solve(composed, "newton"), solve(named, "newton")
    np.testing.assert_array_equal(ours.alpha, theirs.alpha)
    assert (ours.lower, ours.upper) == (theirs.lower, theirs.upper)


def inner_minimum(K0: np.ndarray, u: np.ndarray, weights: np.ndarray) -> float:
    """``min_{K ⪰ 0} -½uᵀKu + Σ_ij W_ij (K_ij - K0_ij)²`` by cvxpy (the route the closed forms skip)."""
    n = K0.shape[0]
    K = cp.Variable((n, n))
    objective = -0.5 * u @ K @ u + cp.sum(cp.multiply(weights, cp.square(K - K0)))
    problem = cp.Problem(cp.Minimize(objective), [K == K.T, K >> 0])
    problem.solve(**TIGHT_CLARABEL)
    return float(problem.value)


@pytest.mark.parametrize("machine", ["svr", "one-class"])
def test_componentwise_penalties_serve_every_machine(machine):
    """A pair no constructor names: the objective against the inner minimum by cvxpy, and with
    ``h = √ρ·e`` the problem with the Frobenius penalty ρ (same optimum, certified by both)."""
    n, rho = 8, 0.7
    K0 = random_kernel(n, seed=3)
    h = np.random.default_rng(4).uniform(0.5, 2.0, n)

    def make(penalty):
        if machine == "svr":
            return IndefiniteProblem(K0, EpsilonInsensitive(np.random.default_rng(5).standard_normal(n), 1.5, 0.1, n),
                                     penalty)
        return IndefiniteProblem(K0, OneClass(0.4, n), penalty)

    problem = make(Componentwise(h, n))
    x = problem.initial_point() + 0.1 * problem.project(np.random.default_rng(6).uniform(0, 1, problem.dim))
    x = problem.project(x)
    beta = problem.dual_coef(x)
    expected = problem.machine.linear(x) + inner_minimum(K0, beta, np.outer(h, h))
    assert problem.objective(x) == pytest.approx(expected, rel=1e-6, abs=1e-7)

    uniform = make(Componentwise(np.full(n, np.sqrt(rho)), n))
    plain = IndefiniteProblem(K0, uniform.machine, Frobenius(rho))
    a, b = solve(uniform, "newton", tol=1e-9), solve(plain, "newton", tol=1e-9)
    assert a.status == b.status == "optimal"
    assert a.lower <= b.upper + 1e-9 and b.lower <= a.upper + 1e-9


@pytest.mark.parametrize("machine", ["svr", "one-class"])
def test_the_mercer_penalty_serves_every_machine(machine):
    """On a PSD K0 the Mercer penalty (no eigendecomposition per point) is the Frobenius one."""
    n = 10
    K0 = psd_kernel(n)
    if machine == "svr":
        target = np.random.default_rng(7).standard_normal(n)
        mercer = IndefiniteProblem(K0, EpsilonInsensitive(target, 1.0, 0.1, n), Mercer(1.0))
        named = SVRProblem(K0, target, C=1.0, rho=1.0, epsilon=0.1)
    else:
        mercer = IndefiniteProblem(K0, OneClass(0.5, n), Mercer(1.0))
        named = OneClassProblem(K0, nu=0.5, rho=1.0)
    x = named.project(np.random.default_rng(8).uniform(0, 1, named.dim))
    assert mercer.objective(x) == pytest.approx(named.objective(x), rel=1e-10)
    np.testing.assert_allclose(mercer.gradient(x), named.gradient(x), rtol=1e-9, atol=1e-10)
    a, b = solve(mercer, "apg", tol=1e-8), solve(named, "newton", tol=1e-8)
    assert a.status == b.status == "optimal"
    assert a.lower <= b.upper + 1e-9 and b.lower <= a.upper + 1e-9


class Unmodelled(OneClass):
    """A machine of a user's, with no entry in ``formulations``."""

    model_spec = Machine.model_spec


def test_a_machine_without_a_conic_model_is_refused_before_any_work():
    n = 6
    problem = IndefiniteProblem(random_kernel(n), Unmodelled(0.5, n), Componentwise(np.ones(n), n))
    reason = refusal(problem, "sdp")
    assert reason is not None and "Unmodelled has no cvxpy model" in reason
    with pytest.raises(ValueError, match="Unmodelled has no cvxpy model"):
        solve(problem, "sdp")
    assert "no cvxpy model" in refusal(problem, "exchange")
    assert refusal(problem, "exchange", master="mkl") is None  # the MKL master needs only libsvm
    assert refusal(IndefiniteProblem(random_kernel(n), OneClass(0.5, n), Componentwise(np.ones(n), n)), "sdp") is None


def test_bad_parts_are_named():
    K0, y = random_kernel(6), labels(6)
    with pytest.raises(TypeError, match="machine must be"):
        IndefiniteProblem(K0, "hinge", Frobenius(1.0))
    with pytest.raises(TypeError, match="penalty must be an indkernel.core.penalties.Penalty"):
        IndefiniteProblem(K0, Hinge(y, 1.0, None, 6), 1.0)
    with pytest.raises(ValueError, match="machine has 5 training points"):
        IndefiniteProblem(K0, Hinge(y[:5], 1.0, None, 5), Frobenius(1.0))


@pytest.mark.parametrize("machine", ["svm", "svr", "one-class"])
def test_the_libsvm_cross_check_leaves_numpys_global_stream_alone(machine):
    """scikit-learn's libsvm estimators draw their seed from numpy's global stream unless given
    one; the certificate's libsvm solves (an unconverged run's tight bound) must not move it."""
    n = 12
    K0, y = random_kernel(n, seed=9), labels(n, seed=9)
    problem = {"svm": lambda: SVMProblem(K0, y, C=1.0),
               "svr": lambda: SVRProblem(K0, np.linspace(-1, 1, n), C=1.0),
               "one-class": lambda: OneClassProblem(K0, nu=0.5)}[machine]()
    alpha = problem.initial_point()
    before = np.random.get_state()  # noqa: NPY002 (the legacy global stream is what is checked)
    problem.libsvm_dual_coef(alpha)
    problem.certify(alpha, bound="tight")
    after = np.random.get_state()  # noqa: NPY002
    assert after[2] == before[2] and np.array_equal(after[1], before[1])
