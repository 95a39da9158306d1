"""The paper's projected gradient on the exact gradient reaches certified optima."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem
from indkernel.projected_gradient import projected_gradient
from problems import FACTORIES, HAND_SOLVED, reference_optimum


def test_hand_solved_case(oracle):
    c = HAND_SOLVED
    p = SVMProblem(c["K0"], c["y"], C=c["C"], rho=c["rho"], oracle=oracle)
    result = projected_gradient(p, step=0.5, tol=1e-9, max_iter=5000, check_every=5)
    assert result.status == "optimal"
    assert result.lower <= c["p_star"] <= result.upper
    np.testing.assert_allclose(result.alpha, c["alpha_star"], atol=1e-4)


@pytest.mark.parametrize("kind, n, seed, rho", [("random", 15, 2, 1.0), ("digits", 20, 3, 1.0), ("random", 10, 1, 0.1)])
def test_certified_bracket_contains_the_sdp_optimum(kind, n, seed, rho, oracle):
    p_star, _ = reference_optimum(kind, n, seed, 2.0, rho)
    K0, y = FACTORIES[kind](n, seed)
    result = projected_gradient(SVMProblem(K0, y, C=2.0, rho=rho, oracle=oracle), tol=1e-4, max_iter=20000)
    assert result.status == "optimal"
    assert result.gap <= 1e-4 * abs(result.lower)
    assert result.lower - 1e-9 * abs(p_star) <= p_star <= result.upper + 1e-9 * abs(p_star)
    h = result.history
    assert list(h.columns) == ["iteration", "time", "lower", "upper", "gap"]
    assert np.all(np.diff(h["lower"]) >= 0) and np.all(np.diff(h["upper"]) <= 0)
    assert np.all(h["lower"] <= p_star + 1e-9 * abs(p_star)) and np.all(h["upper"] >= p_star - 1e-9 * abs(p_star))


def test_max_iter_stop_is_reported():
    K0, y = FACTORIES["random"](15, 2)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        result = projected_gradient(SVMProblem(K0, y, C=2.0), tol=1e-12, max_iter=3, check_every=1)
    assert result.status == "max_iter" and "max_iter=3" in result.stop_reason
    assert result.iterations == 3 and result.gap > 0 and result.fallbacks == 0


@pytest.mark.parametrize("kwargs, match", [({"step": 0}, "step must be a positive"),
                                           ({"tol": -1}, "tol must be a positive"),
                                           ({"max_iter": 0}, "max_iter must be a positive integer"),
                                           ({"check_every": 2.5}, "check_every must be a positive integer")])
def test_bad_arguments(kwargs, match):
    K0, y = FACTORIES["random"](6, 0)
    with pytest.raises(ValueError, match=match):
        projected_gradient(SVMProblem(K0, y), **kwargs)
