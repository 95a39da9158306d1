"""The device route (indkernel.core.device_oracle) against the CPU route, on array namespaces
other than NumPy's: array-api-strict (the standard and nothing more, in CI), torch's CPU tensors
where torch is installed, and a CUDA device where there is one."""

import numpy as np
import pytest
import scipy.linalg
from problems import digits_simpson, random_indefinite

from indkernel import IndefiniteSVC, IndefiniteSVR, PerturbSVC, SVMProblem, solve
from indkernel.core import device_oracle
from indkernel.core.device_oracle import DeviceRankOneProxy, SecularRoots, backward_error
from indkernel.core.namespace import foreign_namespace, to_numpy
from indkernel.core.one_class_problem import OneClassProblem
from indkernel.core.proxy import RankOneProxy
from indkernel.core.svm_problem import ComponentwiseSVMProblem, PerturbSVMProblem
from indkernel.core.svr_problem import SVRProblem

try:
    import array_api_strict as xps
except ImportError:  # the torch and CUDA tests below still run
    xps = None
needs_strict = pytest.mark.skipif(xps is None, reason="the array-API tests need array-api-strict (the test extra)")


def _torch_device(kind: str):
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
    if kind == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine: the GPU tests run where there is one")
    return torch, kind


@pytest.fixture(params=["array-api-strict", "torch-cpu", "torch-cuda"])
def to_namespace(request):
    """A function putting a NumPy array into the namespace under test (on its device)."""
    if request.param == "array-api-strict":
        if xps is None:
            pytest.skip("array-api-strict is not installed (the test extra)")
        return xps.asarray
    torch, device = _torch_device(request.param.split("-")[1])
    return lambda a: torch.asarray(a, device=device)


def _spread_spectrum(n: int, rng, zero_free: bool = True) -> np.ndarray:
    """A symmetric matrix with eigenvalues of both signs, none near 0 where ``zero_free`` (the
    projector onto the positive eigenspace is then well defined)."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    d = rng.uniform(0.5, 3.0, n) * np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    K = (Q * d) @ Q.T
    return (K + K.T) / 2


def _compare(cpu, device, u, rho, rng, projector: bool = True, tol: float = 1e-11):
    """Every product of the two oracles' points at u agrees to ``tol`` of its size."""
    a, b = cpu(u, rho), device(u, rho)
    v = rng.standard_normal(u.size)

    def close(x, y):
        assert np.allclose(x, y, rtol=0, atol=tol * (1 + np.abs(x).max())), np.abs(x - y).max()

    assert abs(a.value - b.value) <= tol * (1 + abs(a.value))
    close(a.Ku, b.Ku)
    close(a.multiply(v), b.multiply(v))
    close(a.curvature()(v), b.curvature()(v))
    close(a.kernel(), b.kernel())
    if projector:
        close(a.project_positive(v), b.project_positive(v))
    # each route's allowance holds its own round-off: the two values agree within their sum
    assert abs(a.value - b.value) <= a.value_error + b.value_error


@pytest.mark.parametrize("n", [2, 3, 10, 60])
@pytest.mark.parametrize("rho", [0.1, 1.0, 10.0, np.inf])
def test_device_points_agree_with_the_rank_one_oracle(n, rho, to_namespace):
    rng = np.random.default_rng(n)
    K0 = _spread_spectrum(n, rng)
    cpu, device = RankOneProxy(K0), DeviceRankOneProxy(K0, to_namespace(K0))
    for _ in range(3):
        _compare(cpu, device, rng.standard_normal(n), rho, rng)
    assert device.fallbacks == 0


@needs_strict
@pytest.mark.parametrize("case", ["repeated eigenvalues", "u in an eigenspace", "identity", "u orthogonal to some"])
def test_device_points_agree_where_the_update_deflates(case):
    """Deflation (small components, equal poles and their rotations) is the CPU route's own code;
    the device's roots and vectors must fit it."""
    rng = np.random.default_rng(7)
    n = 30
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    d = np.repeat([-2.0, -0.5, 1.0, 3.0, 5.0], 6)
    K0, u = (Q * d) @ Q.T, rng.standard_normal(n)
    if case == "u in an eigenspace":
        u = Q[:, 3] + Q[:, 20]
    elif case == "identity":
        K0 = np.eye(n)
    elif case == "u orthogonal to some":
        K0, u = np.diag(np.arange(n) - 10.5), np.r_[np.zeros(10), rng.standard_normal(n - 10)]
    K0 = (K0 + K0.T) / 2
    cpu, device = RankOneProxy(K0), DeviceRankOneProxy(K0, xps.asarray(K0))
    for rho in (0.3, 3.0):
        _compare(cpu, device, u, rho, rng)
    assert device.fallbacks == 0


@needs_strict
@pytest.mark.parametrize("host_share", [0.0, 1 / 32, 1.0])
def test_secular_roots_are_the_eigenvalues_of_the_update(host_share, monkeypatch):
    """All roots found on the device, the last few on the host, or all but the first step there."""
    monkeypatch.setattr(device_oracle, "HOST_SHARE", host_share)
    rng = np.random.default_rng(3)
    K = 80
    poles = np.sort(rng.standard_normal(K))
    w = rng.standard_normal(K)
    w /= np.linalg.norm(w)
    for rho in (1e-3, 0.5, 40.0):
        roots = SecularRoots(xps, poles, w, rho)
        assert roots.failures == 0
        found = poles[to_numpy(roots.origin)] + to_numpy(roots.tau)
        exact = scipy.linalg.eigvalsh(np.diag(poles) + rho * np.outer(w, w))
        assert np.allclose(found, exact, rtol=0, atol=1e-13 * max(1.0, rho))
        # interlacing, root j in (p_j, p_{j+1}) and the last in (p_K, p_K + rho]
        assert np.all(found > poles) and np.all(found[:-1] < poles[1:]) and found[-1] <= poles[-1] + rho
        # the Löwner vector reproduces w up to round-off (the roots are those of diag(p) + ρẑẑᵀ)
        assert np.allclose(to_numpy(roots.z_hat), w, rtol=1e-8, atol=1e-12)


@needs_strict
def test_a_failed_update_falls_back_to_a_dense_eigendecomposition_on_the_device(monkeypatch):
    rng = np.random.default_rng(5)
    K0 = _spread_spectrum(40, rng)
    cpu, device = RankOneProxy(K0), DeviceRankOneProxy(K0, xps.asarray(K0))
    monkeypatch.setattr(SecularRoots, "MAX_STEPS", 1)  # the zero finder cannot converge in one step
    _compare(cpu, device, rng.standard_normal(40), 1.0, rng)
    assert device.fallbacks == 1
    monkeypatch.setattr(SecularRoots, "MAX_STEPS", 100)
    monkeypatch.setattr(DeviceRankOneProxy, "CHECK_TOL", 0.0)  # no eigenvector passes the check
    _compare(cpu, device, rng.standard_normal(40), 1.0, rng)
    assert device.fallbacks == 2


@needs_strict
def test_the_measured_backward_error_sees_a_perturbed_decomposition():
    rng = np.random.default_rng(9)
    K0 = _spread_spectrum(50, rng)
    d, V = scipy.linalg.eigh(K0)
    exact = backward_error(xps, xps.asarray(K0), xps.asarray(d), xps.asarray(V))
    lapack = 8.0 * 50 * np.finfo(float).eps / 2  # ROUNDOFF_FACTOR·n·u, what the CPU route takes
    assert exact < lapack
    for size in (1e-9, 1e-6):  # V slightly off orthogonal, and d slightly off
        assert backward_error(xps, xps.asarray(K0), xps.asarray(d), xps.asarray(V * (1 + size))) > size
        assert backward_error(xps, xps.asarray(K0), xps.asarray(d * (1 + size)), xps.asarray(V)) > 0.1 * size



@needs_strict
@pytest.mark.parametrize("rho", [1.0, np.inf])
def test_a_measured_backward_error_above_lapacks_widens_every_allowance(rho):
    """Where the device's eigendecomposition is worse than LAPACK's model, its measured error is
    what the allowances take (at a finite ρ and at ρ = ∞)."""
    rng = np.random.default_rng(4)
    K0 = _spread_spectrum(40, rng)
    u = rng.standard_normal(40)
    device = DeviceRankOneProxy(K0, xps.asarray(K0))
    device.prepare()
    before = device(u, rho)
    device._measured_backward = 1e-8  # as if the device's decomposition were that far off
    after = device(u, rho)
    frobenius = np.linalg.norm(K0)
    assert before.kernel_error < 1e-12 * frobenius and after.kernel_error >= 1e-8 * frobenius
    assert after.product_error >= 1e-8 * frobenius and after.value_error > before.value_error


def _both(make, to_namespace):
    """The problem ``make(K0)`` on NumPy's K0 and on the namespace's, solved by newton to 1e-8."""
    return [(problem, solve(problem, method="newton", tol=1e-8)) for problem in (make(np.asarray), make(to_namespace))]


@pytest.mark.parametrize("kind", ["hinge", "squared hinge", "rho infinity", "componentwise", "svr", "one-class"])
def test_device_problems_reach_the_cpu_routes_bracket(kind, to_namespace):
    K0, y = digits_simpson(80, 0)
    makers = {
        "hinge": lambda to: SVMProblem(to(K0), y, 10.0, 1.0),
        "squared hinge": lambda to: SVMProblem(to(K0), y, 10.0, 0.5, loss="squared_hinge"),
        "rho infinity": lambda to: SVMProblem(to(K0), y, 10.0, np.inf),
        "componentwise": lambda to: ComponentwiseSVMProblem(to(K0), y, 5.0, np.linspace(0.5, 2.0, 80)),
        "svr": lambda to: SVRProblem(to(K0), y * 0.5 + np.linspace(0, 1, 80), 1.0, 1.0, 0.1),
        "one-class": lambda to: OneClassProblem(to(K0), 0.3, 1.0),
    }
    (cpu, a), (device, b) = _both(makers[kind], to_namespace)
    assert isinstance(device.oracle, DeviceRankOneProxy) and not isinstance(cpu.oracle, DeviceRankOneProxy)
    assert a.status == b.status == "optimal"
    assert b.lower <= a.upper and a.lower <= b.upper  # the certified brackets overlap
    assert abs(a.lower - b.lower) <= 1e-9 * (1 + abs(a.lower))
    assert b.iterations == a.iterations


@needs_strict
def test_device_problems_refuse_what_has_no_device_route():
    K0, y = digits_simpson(20, 0)
    with pytest.raises(ValueError, match="oracle is 'rank-one'"):
        SVMProblem(xps.asarray(K0), y, 1.0, 1.0, oracle="eigh")
    with pytest.raises(ValueError, match="no device route"):
        PerturbSVMProblem(xps.asarray(K0 @ K0), y, 1.0, 1.0)
    with pytest.raises(ValueError, match="kernel='precomputed'"):
        IndefiniteSVC(kernel="rbf").fit(xps.asarray(K0), y)


@pytest.mark.parametrize("multi_class", ["ovo", "ovr"])
def test_an_estimator_fitted_on_device_arrays_decides_as_on_numpy(multi_class, to_namespace):
    from sklearn.datasets import load_digits

    digits = load_digits()
    X, y = digits.data[:150], digits.target[:150] % 3
    from indkernel.kernels import simpson

    K, K_test = simpson(X[:120]), simpson(X[120:], X[:120])
    cpu = IndefiniteSVC(C=10, rho=1, multi_class=multi_class).fit(K, y[:120])
    device = IndefiniteSVC(C=10, rho=1, multi_class=multi_class).fit(to_namespace(K), to_namespace(y[:120]))
    assert np.allclose(cpu.lower_bound_, device.lower_bound_, rtol=1e-10)
    assert np.allclose(cpu.dual_coef_, device.dual_coef_, rtol=0, atol=1e-9 * np.abs(cpu.dual_coef_).max())
    decisions = device.decision_function(to_namespace(K_test))
    assert foreign_namespace(decisions) is not None  # in the input's namespace
    assert np.allclose(to_numpy(decisions), cpu.decision_function(K_test), rtol=0, atol=1e-8)
    assert np.array_equal(to_numpy(device.predict(to_namespace(K_test))), cpu.predict(K_test))


@needs_strict
def test_a_regression_fitted_on_device_arrays():
    K0, _ = random_indefinite(60, 1)
    target = np.linspace(-1, 1, 60)
    cpu, device = IndefiniteSVR(C=1.0).fit(K0, target), IndefiniteSVR(C=1.0).fit(xps.asarray(K0), xps.asarray(target))
    assert device.lower_bound_ == pytest.approx(cpu.lower_bound_, rel=1e-10)
    assert np.allclose(to_numpy(device.predict(xps.asarray(K0))), cpu.predict(K0), atol=1e-8)


@needs_strict
def test_numpy_lists_and_scalars_stay_on_the_cpu_route():
    assert foreign_namespace(np.eye(2)) is None and foreign_namespace([[1.0, 0.0], [0.0, 1.0]]) is None
    assert foreign_namespace(xps.asarray(np.eye(2))) is not None
    K0, y = digits_simpson(20, 0)
    assert not isinstance(SVMProblem(K0, y).oracle, DeviceRankOneProxy)


@needs_strict
def test_blocks_of_roots_give_the_same_point(monkeypatch):
    """The zero finder and the sums work a block of rows at a time (the memory bound at large n):
    a block of 7 rows gives the point one block gives."""
    rng = np.random.default_rng(11)
    K0 = _spread_spectrum(50, rng)
    u = rng.standard_normal(50)
    whole = DeviceRankOneProxy(K0, xps.asarray(K0))(u, 1.0)
    monkeypatch.setattr(device_oracle, "BLOCK_ELEMENTS", 7 * 50)
    blocked = DeviceRankOneProxy(K0, xps.asarray(K0))(u, 1.0)
    assert np.allclose(whole.Ku, blocked.Ku, rtol=0, atol=1e-12 * np.abs(whole.Ku).max())
    v = rng.standard_normal(50)
    assert np.allclose(whole.curvature()(v), blocked.curvature()(v), rtol=0, atol=1e-11 * np.abs(v).max())


@needs_strict
@pytest.mark.parametrize("kind", ["digits", "random"])
def test_a_device_solve_holds_one_n_by_n_array_beside_k0_and_its_eigenvectors(kind, monkeypatch):
    """The device's memory: beside K0 and V0, a solve holds Newton's eigenvectors W (one n×n array),
    the divided differences' block and a few blocks of rows (here an eighth of n² each), at most
    2.5 n² in all; never copies of W (which deflation made: 5.2 n² on the digits). On
    array-api-strict the arrays are NumPy's, so tracemalloc counts them."""
    import tracemalloc

    K0, y = digits_simpson(300, 0) if kind == "digits" else random_indefinite(300, 0)
    n = y.size
    monkeypatch.setattr(device_oracle, "BLOCK_ELEMENTS", n * n // 8)
    problem = SVMProblem(xps.asarray(K0), y, 10.0, 1.0)
    solve(problem, method="newton", tol=1e-6)  # (compiles and imports first: not counted)
    tracemalloc.start()
    try:
        held = tracemalloc.get_traced_memory()[0]
        result = solve(problem, method="newton", tol=1e-6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.status == "optimal"
    assert (peak - held) / (8.0 * n * n) <= 2.5


@needs_strict
@pytest.mark.parametrize("test_kernel", ["consistent", "raw", "transductive"])
def test_every_rule_decides_device_arrays_as_numpy_ones(test_kernel, monkeypatch):
    """The linear rules multiply on the device (the test rows never reach the host); the
    transductive one decides on the host."""
    from indkernel.estimators import rules

    K0, y = digits_simpson(90, 3)
    K, K_test = K0[:70, :70], K0[70:, :70]
    if test_kernel == "transductive":
        K_test = np.hstack([K_test, K0[70:, 70:]])
    cpu = IndefiniteSVC(C=10, rho=1, test_kernel=test_kernel).fit(K, y[:70])
    device = IndefiniteSVC(C=10, rho=1, test_kernel=test_kernel).fit(xps.asarray(K), y[:70])
    products = []
    real = rules.linear_decisions
    monkeypatch.setattr(rules, "linear_decisions", lambda cross, *a: products.append(cross) or real(cross, *a))
    decisions = device.decision_function(xps.asarray(K_test))
    assert np.allclose(to_numpy(decisions), cpu.decision_function(K_test), rtol=0, atol=1e-8)
    if test_kernel == "transductive":
        assert not products
    else:  # the raw rule's columns of the support, taken on the device
        assert foreign_namespace(products[0]) is not None
        assert products[0].shape[1] == (len(cpu.support_) if test_kernel == "raw" else 70)
    with pytest.raises(ValueError, match="expecting"):
        device.decision_function(xps.asarray(K_test[:, :50]))


@needs_strict
@pytest.mark.parametrize("name", ["SpectrumSVC", "KreinSVC", "ModSVC", "SimilarityFeaturesSVC"])
def test_the_baselines_take_device_arrays(name):
    """Denoise's and flip's spectrum on the device (libsvm on the host), the others on the host copy."""
    import indkernel

    K0, y = digits_simpson(80, 5)
    K, K_test = K0[:60, :60], K0[60:, :60]
    cpu = getattr(indkernel, name)(C=10.0).fit(K, y[:60])
    device = getattr(indkernel, name)(C=10.0).fit(xps.asarray(K), xps.asarray(y[:60]))
    assert np.allclose(device.decision_function(xps.asarray(K_test)), cpu.decision_function(K_test), atol=1e-6)


@needs_strict
def test_a_device_kernel_gets_the_hosts_errors_before_any_work():
    K0, y = digits_simpson(20, 0)
    with pytest.raises(ValueError, match="square"):
        SVMProblem(xps.asarray(K0[:, :19]), y)
    bad = K0.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        SVMProblem(xps.asarray(bad), y)
    skew = K0.copy()
    skew[0, 1] += 1e-3
    with pytest.raises(ValueError, match="not symmetric"):
        SVMProblem(xps.asarray(skew), y)
    with pytest.raises(TypeError, match="real numbers"):
        SVMProblem(xps.asarray(K0.astype(np.complex128)), y)
    # symmetrized where asked, as on the host
    symmetrized = SVMProblem(xps.asarray(skew), y, symmetrize=True)
    assert np.array_equal(symmetrized.K0, SVMProblem(skew, y, symmetrize=True).K0)


@needs_strict
def test_a_device_problem_says_its_spectrum():
    K0, y = digits_simpson(30, 0)
    problem = SVMProblem(xps.asarray(K0), y)
    assert "not computed yet" in repr(problem)
    cpu = SVMProblem(K0, y)
    problem.oracle.prepare()
    cpu.oracle.prepare()
    assert "eigenvalues negative" in repr(problem) and repr(problem) == repr(cpu)


@needs_strict
@pytest.mark.parametrize("multi_class", ["ovo", "ovr"])
def test_an_estimator_checks_and_copies_a_device_kernel_once(multi_class, monkeypatch):
    """The fit checks the device similarity and copies it to the host once; its problems take the
    checked pair (and their blocks of it) without a second check or copy."""
    from sklearn.datasets import load_digits

    from indkernel.core import namespace
    from indkernel.kernels import simpson

    checks, copies, real_copy = [], [], namespace.to_numpy
    monkeypatch.setattr(namespace, "check_asymmetry", lambda *args: checks.append(args))
    monkeypatch.setattr(namespace, "to_numpy", lambda x, **kw: (copies.append(x.shape) if x.ndim == 2 else None)
                        or real_copy(x, **kw))
    digits = load_digits()
    K = simpson(digits.data[:90])
    IndefiniteSVC(C=10, rho=1, multi_class=multi_class).fit(xps.asarray(K), digits.target[:90] % 3)
    assert len(checks) == 1 and copies == [(90, 90)]
    with pytest.raises(ValueError, match="no device route"):
        PerturbSVC(multi_class=multi_class).fit(xps.asarray(K @ K), digits.target[:90] % 3)
