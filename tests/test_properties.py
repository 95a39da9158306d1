"""Property suite (issue "Certified in floating point"): over every problem type, scales from
1e-100 to 1e100, parameters over 12 orders and shifted SVR targets, every run returns a finite
bracket that holds the optimum p* of an independent route, and says "optimal" only within tol.

The independent route is the problem's cvxpy max-min model, solved by Clarabel *and* SCS on a
tame copy (kernel of norm 1, centered targets) and mapped back by the exact scaling laws of the
objective: with the kernel scaled by s, α by b/s, targets and ε by b,

* SVM, PerturbSVM:   p*(sK0, C/s, ρ/s³) = p*(K0, C, ρ)/s
* componentwise:     p*(sK0, C/s, h/s^{3/2}) = p*(K0, C, h)/s
* SVR:               p*(sK0, b·y + c, b·ε, b·C/s, b²ρ/s³) = (b²/s)·p*(K0, y, ε, C, ρ)   (any shift c)
* one-class:         p*(sK0, ν, ρ/s) = s·p*(K0, ν, ρ)

The conic solvers are accurate only to about 1e-7 relative, and Clarabel has come out below a
certified lower bound, so the reference is the interval spanned by both, widened by that
accuracy. ``INDKERNEL_PROPERTY_EXAMPLES`` sets the examples per problem type (default 40 with
``pytest --slow``, a short profile of 5 in plain ``pytest``, 200 for a release: ``tests/conftest.py``).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import formulations
from indkernel import ComponentwiseSVMProblem, OneClassProblem, PerturbSVMProblem, SVMProblem, SVRProblem, solve
from indkernel.solvers.models import maxmin_model

EXAMPLES = int(os.environ.get("INDKERNEL_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: The relative accuracy of the conic reference solves (beside the spread of the two solvers).
REFERENCE_ACCURACY = 1e-6
TOL = 1e-6
METHODS = ["apg", "pg", "accpm"]
REFERENCE_SOLVERS = {"CLARABEL": formulations.ACCURATE["CLARABEL"], "SCS": formulations.ACCURATE["SCS"]}

sizes = st.integers(2, 8)
seeds = st.integers(0, 2**32 - 1)
methods = st.sampled_from(METHODS)


def orders(low: float, high: float):
    """10**x for x uniform in [low, high]: a positive number over (high - low) orders."""
    return st.floats(low, high).map(lambda x: float(10.0 ** x))


def unit_kernel(n: int, rng: np.random.Generator, psd: bool = False) -> np.ndarray:
    """A symmetric n×n matrix of spectral norm 1 (PSD if asked), indefinite otherwise."""
    A = rng.standard_normal((n, n))
    K = A @ A.T if psd else (A + A.T) / 2
    return K / np.linalg.norm(K, 2)


def labels(n: int, rng: np.random.Generator) -> np.ndarray:
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = 1.0, -1.0
    return y


def reference(tame) -> tuple[float, float] | None:
    """``(low, high)``: an interval that holds the tame copy's p*, from Clarabel and SCS on its
    max-min model, widened by their accuracy; None when neither solver reports "optimal" (an
    "optimal_inaccurate" PerturbSVM at C = 1e-6, ρ = 1e4 came out at 6e-3 for a p* below 3e-6)."""
    values = []
    for solver, options in REFERENCE_SOLVERS.items():
        try:
            model = maxmin_model(tame)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = model.solve(solver=solver, **options)
        except Exception:  # noqa: BLE001 - a solver that fails is simply not a reference here
            continue
        if model.problem.status == "optimal":  # "optimal_inaccurate" has come out 3000x off
            values.append(value)
    if not values:
        return None
    widen = REFERENCE_ACCURACY * (1.0 + max(abs(v) for v in values))
    return min(values) - widen, max(values) + widen


def run(problem, method: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning at max_iter is part of what is tested
        return solve(problem, method, tol=TOL, max_iter=3000, time_limit=10)


def check(result, interval, factor: float) -> None:
    """The run's bracket is finite, ordered and (mapped by ``factor``) holds the reference interval;
    "optimal" only within tol of the α-dependent scale, or exact to round-off at α = 0 (scale 0)."""
    assert np.isfinite(result.lower) and np.isfinite(result.upper) and np.isfinite(result.scale)
    assert np.all(np.isfinite(result.alpha))
    assert result.lower <= result.upper
    if result.status == "optimal":
        exact = result.scale == 0 and result.gap <= 4 * result.certificate.allowance
        assert result.gap <= TOL * result.scale or exact, (result.gap, result.scale)
    assert result.status in ("optimal", "roundoff", "max_iter", "time_limit", "stalled") or (
        result.method == "accpm" and result.status == "failed")  # a centering that fails near the end, named
    if interval is not None:
        low, high = sorted((interval[0] * factor, interval[1] * factor))
        assert result.lower <= high, (result.lower, low, high)
        assert result.upper >= low, (result.upper, low, high)


@pytest.mark.parametrize("problem_type", [SVMProblem, PerturbSVMProblem], ids=["svm", "perturb"])
@PROPERTY
@given(n=sizes, seed=seeds, k=st.integers(-100, 100), C=orders(-6, 6), rho=orders(-6, 6), method=methods)
def test_svm_and_perturb_svm(problem_type, n, seed, k, C, rho, method):
    rng = np.random.default_rng(seed)
    K = unit_kernel(n, rng, psd=problem_type is PerturbSVMProblem)
    y, s = labels(n, rng), 10.0 ** k
    result = run(problem_type(K * s, y, C=C / s, rho=rho / s**3), method)
    check(result, reference(problem_type(K, y, C=C, rho=rho)), 1.0 / s)


@PROPERTY
@given(n=sizes, seed=seeds, k=st.integers(-60, 60), C=orders(-6, 6), h=orders(-3, 3), method=methods)
def test_componentwise(n, seed, k, C, h, method):
    rng = np.random.default_rng(seed)
    K, y, s = unit_kernel(n, rng), labels(n, rng), 10.0 ** k
    weights = h * 10.0 ** rng.uniform(-1.0, 1.0, n)  # h over 6 orders, each entry within 2 more
    result = run(ComponentwiseSVMProblem(K * s, y, C=C / s, h=weights / s**1.5), method)
    check(result, reference(ComponentwiseSVMProblem(K, y, C=C, h=weights)), 1.0 / s)


@PROPERTY
@given(n=sizes, seed=seeds, k=st.integers(-100, 100), b=orders(-3, 3), shift=st.floats(-1e8, 1e8),
       C=orders(-6, 6), rho=orders(-6, 6), epsilon=orders(-6, 6), method=methods)
def test_svr(n, seed, k, b, shift, C, rho, epsilon, method):
    """Targets spread b, shifted by up to 1e8: p* depends on y only through y - mean(y)."""
    rng = np.random.default_rng(seed)
    K, s = unit_kernel(n, rng), 10.0 ** k
    y = b * rng.standard_normal(n) + shift
    result = run(SVRProblem(K * s, y, C=b * C / s, rho=b**2 * rho / s**3, epsilon=b * epsilon), method)
    centered = y - y.mean()  # exact up to a constant (Sterbenz), which leaves p* unchanged
    spread = float(np.max(np.abs(centered))) or 1.0
    tame = SVRProblem(K, centered / spread, C=b * C / spread, rho=b**2 * rho / spread**2, epsilon=b * epsilon / spread)
    check(result, reference(tame), spread**2 / s)


@PROPERTY
@given(n=sizes, seed=seeds, k=st.integers(-100, 100), nu=st.one_of(st.just(1.0), orders(-11, 0)),
       rho=orders(-6, 6), method=methods)
def test_one_class(n, seed, k, nu, rho, method):
    rng = np.random.default_rng(seed)
    K, s = unit_kernel(n, rng), 10.0 ** k
    result = run(OneClassProblem(K * s, nu=nu, rho=rho / s), method)
    check(result, reference(OneClassProblem(K, nu=nu, rho=rho)), s)


@pytest.mark.parametrize("k", [-100, -30, 0, 30, 100])
def test_the_scaling_laws_hold_for_the_certified_brackets(k):
    """The mapped laws themselves: a scaled problem's bracket, mapped back, overlaps the tame one's."""
    rng = np.random.default_rng(k + 1000)
    K, y, s = unit_kernel(6, rng), labels(6, rng), 10.0 ** k
    tame = run(SVMProblem(K, y, C=2.0, rho=0.5), "apg")
    scaled = run(SVMProblem(K * s, y, C=2.0 / s, rho=0.5 / s**3), "apg")
    assert scaled.lower * s <= tame.upper * (1 + 1e-12) and scaled.upper * s >= tame.lower * (1 - 1e-12)
    np.testing.assert_allclose(scaled.alpha * s, tame.alpha, atol=1e-3 * 2.0)


#: The three families added by the third adversarial round: a quarter of the examples each (a
#: quarter of the conic reference solves), so the suite keeps its time.
ROUND_THREE = settings(PROPERTY, max_examples=max(1, EXAMPLES // 4))


def zero_point_value(problem) -> float:
    """f(0) = ρ‖(K0)₋‖²_F (α = 0 feasible: SVM and SVR sets) from the eigenvalues of K0 alone; the
    eq:kern_learn_eig form subtracts ρ‖K0‖²_F, whose round-off is 0.016 at ‖K0‖ = 1e7."""
    return problem.rho * float(np.sum(np.minimum(np.linalg.eigvalsh(problem.K0), 0.0) ** 2))


def conic_feasible_values(problem) -> list[float]:
    """f at the conic solvers' α, projected onto A and evaluated by a full eigendecomposition: true
    lower bounds on p*. Their reported optima are not: with C over 16 orders SCS has said "optimal"
    with a value 2.8e-6 above its own point's (and above p*), accurate only relative to C's scale."""
    values = []
    for solver, options in REFERENCE_SOLVERS.items():
        model = maxmin_model(problem)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.solve(solver=solver, **options)
        except Exception:  # noqa: BLE001 - a solver that fails gives no point
            continue
        alpha = np.asarray(model.variables["alpha"].value, dtype=float).ravel()
        values.append(problem.objective(problem.project(alpha), form="eigenvalue"))
    return values


@ROUND_THREE
@given(n=sizes, seed=seeds, rho=orders(-3, 3), method=methods)
def test_per_sample_penalties_over_16_orders(n, seed, rho, method):
    """C_i = 10^x with x uniform in [-8, 8] per sample. p* lies in [f(0), f(0) + 2·min(ΣC₊, ΣC₋)]
    (α = 0 is feasible, f is concave and ∇f(0) = e) and above f at the conic solvers' points; the
    certified bracket must agree with all of them."""
    rng = np.random.default_rng(seed)
    K, y = unit_kernel(n, rng), labels(n, rng)
    C = 10.0 ** rng.uniform(-8.0, 8.0, n)
    problem = SVMProblem(K, y, C=C, rho=rho)
    result = run(problem, method)
    check(result, None, 1.0)
    low = max([zero_point_value(problem), *conic_feasible_values(problem)])
    high = zero_point_value(problem) + 2 * min(C[y > 0].sum(), C[y < 0].sum())
    slack = 1e-12 * (abs(low) + abs(high))
    assert result.lower <= high + slack and result.upper >= low - slack, (result.lower, result.upper, low, high)


KINDS = {"svm": lambda K, y: SVMProblem(K, y, C=1.0, rho=1.0),
         "perturb": lambda K, y: PerturbSVMProblem(K, y, C=1.0, rho=1.0),
         "componentwise": lambda K, y: ComponentwiseSVMProblem(K, y, C=1.0, h=np.ones(y.size)),
         "svr": lambda K, y: SVRProblem(K, 2 * y + 0.3, C=1.0, rho=1.0, epsilon=0.1),
         "one-class": lambda K, y: OneClassProblem(K, nu=0.5, rho=1.0)}


@ROUND_THREE
@given(n=sizes, seed=seeds, kind=st.sampled_from(sorted(KINDS)), s=st.sampled_from([0.0, 1e-300, 1e-100, 1e-12]),
       method=methods)
def test_zero_and_vanishing_kernels(n, seed, kind, s, method):
    """K0 = s·K for s = 0 and s tiny, every problem type: the kernel's part of the curvature vanishes,
    and the run still holds the max-min model's optimum."""
    rng = np.random.default_rng(seed)
    K, y = unit_kernel(n, rng, psd=True), labels(n, rng)
    problem = KINDS[kind](s * K, y)
    check(run(problem, method), reference(KINDS[kind](0.0 * K, y)), 1.0)


@ROUND_THREE
@given(n=sizes, seed=seeds, k=st.integers(-100, 100), excess=orders(0.1, 3), method=methods)
@example(n=2, seed=0, k=0, excess=1000.0, method="accpm")  # its centering failed near α = 0: ended "failed"
def test_svr_targets_inside_the_tube(n, seed, k, excess, method):
    """ε over 1.25 times half the targets' spread: α = 0 is optimal and p* = f(0) exactly (f(α) <=
    f(0) + ∇f(0)ᵀα <= f(0)), where the α-dependent scale is 0; the bracket holds f(0), and a run
    ends "optimal" only where its gap is within tol of a nonzero α-dependent scale (ACCPM's centers
    stay off the vertex) or exact to round-off at α = 0, as every method but ACCPM is near unit
    scale; "roundoff" where round-off alone is in the way."""
    rng = np.random.default_rng(seed)
    K, s = unit_kernel(n, rng), 10.0 ** k
    y = rng.standard_normal(n)
    problem = SVRProblem(K * s, y, C=1.0, rho=1.0, epsilon=excess * float(np.ptp(y)) / 2 + 1e-12)
    result = run(problem, method)
    p_star = zero_point_value(problem)
    slack = 1e-9 * abs(p_star) + 1e-300
    assert result.lower - slack <= p_star <= result.upper + slack
    assert result.status in ("optimal", "roundoff"), result.stop_reason
    check(result, None, 1.0)
    if abs(k) <= 3 and method != "accpm":  # far from unit scale the allowance of f(0) ~ s² may be in the way
        assert result.status == "optimal", result.stop_reason
