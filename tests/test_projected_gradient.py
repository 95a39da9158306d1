"""The paper's projected gradient (``"pg"``) on the hand-solved case, and its options."""

import numpy as np
import pytest
from problems import FACTORIES, HAND_SOLVED
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem, solve


def test_hand_solved_case(oracle):
    c = HAND_SOLVED
    p = SVMProblem(c["K0"], c["y"], C=c["C"], rho=c["rho"], oracle=oracle)
    result = solve(p, "pg", step=0.5, tol=1e-9, max_iter=5000, check_every=5)
    assert result.status == "optimal"
    assert result.lower <= c["p_star"] <= result.upper
    np.testing.assert_allclose(result.alpha, c["alpha_star"], atol=1e-4)


def test_check_every_sets_the_history_rows():
    K0, y = FACTORIES["random"](15, 2)
    with pytest.warns(ConvergenceWarning, match="max_iter=50"):
        result = solve(SVMProblem(K0, y, C=2.0), "pg", tol=1e-12, max_iter=50, check_every=7, bound="free")
    # the start, the checks, the last iterate: one row per iteration, the last one's bracket tightened
    # by the tight certificate at the best point
    assert list(result.history.iteration) == [0, 7, 14, 21, 28, 35, 42, 49, 50]
    assert result.history.upper.iloc[-1] < result.history.upper.iloc[-2]
    assert result.history.upper.iloc[-1] == result.upper and result.iterations == 50


@pytest.mark.parametrize("kwargs, match", [({"step": 0}, "step must be a positive"),
                                           ({"tol": -1}, "tol must be a positive"),
                                           ({"check_every": 2.5}, "check_every must be a positive integer"),
                                           ({"smoothing": -1.0}, "smoothing must be a positive")])
def test_bad_arguments(kwargs, match):
    K0, y = FACTORIES["random"](6, 0)
    with pytest.raises(ValueError, match=match):
        solve(SVMProblem(K0, y), "pg", **kwargs)


@pytest.mark.parametrize("n, seed, rho", [(60, 1, 1.0), (100, 2, 10.0)])
def test_refined_checks_stop_where_tight_checks_do(n, seed, rho):
    """pg's default checks (the refined bound, escalated to the tight one where that could end the
    run) stop at the iteration tight checks stop at: the escalation measures the bracket the check
    would leave, with the new iterate's own lower bound (against the best before it, a better
    iterate was never escalated: 10 more iterations on USPS n = 100)."""
    K0, y = FACTORIES["digits"](n, seed)
    problem = SVMProblem(K0, y, C=10.0, rho=rho)
    tight = solve(problem, "pg", tol=1e-2, absolute=True, bound="tight")
    default = solve(problem, "pg", tol=1e-2, absolute=True)
    assert tight.status == default.status == "optimal" and default.iterations == tight.iterations
