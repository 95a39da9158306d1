"""The rank-one eigenvalue update against a dense eigh, and the O(n²) oracle against the eigh oracle."""

import contextlib
import io

import numpy as np
import pytest
from problems import digits_simpson, random_indefinite

from indkernel import SVMProblem
from indkernel.core import rank_one
from indkernel.core.proxy import EighProxy, RankOneProxy
from indkernel.core.rank_one import SecularEquationError, rank_one_eigen


def spectrum_case(kind: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    d, z, sigma = np.sort(rng.standard_normal(n)), rng.standard_normal(n), 0.7
    if kind == "repeated":  # exactly repeated eigenvalues, in groups of up to 10
        d = np.sort(np.repeat(rng.standard_normal(n // 10 + 1), 10)[:n])
    elif kind == "clustered":  # a cluster spaced 1e-15 apart and one 1e-9 apart
        d[n // 4: n // 2] = d[n // 4] + 1e-15 * np.arange(n // 2 - n // 4)
        d[n // 2: 3 * n // 4] = 1.0 + 1e-9 * np.arange(3 * n // 4 - n // 2)
        d = np.sort(d)
    elif kind == "zero z":
        z[::3] = 0.0
    elif kind == "zero u":
        z[:] = 0.0
    elif kind == "sigma tiny":
        sigma = 1e-14
    elif kind == "sigma huge":
        sigma = 1e10
    elif kind == "zero eigenvalues":
        d[: n // 3] = 0.0
        d = np.sort(d)
    elif kind == "tiny z":  # small but not deflated: roots very close to their poles
        z[::2] *= 1e-9
    elif kind == "wide spectrum":  # |d| from 1e-8 to 1e8
        d = np.sort(np.sign(d) * 10.0 ** rng.uniform(-8, 8, n))
    elif kind == "scaled down":  # 1/(d - λ)³ overflows unless the equation is rescaled
        d, sigma = d * 1e-150, sigma * 1e-150
    elif kind == "scaled up":
        d, sigma = d * 1e150, sigma * 1e150
    return d, z, sigma


KINDS = ["random", "repeated", "clustered", "zero z", "zero u", "sigma tiny", "sigma huge", "zero eigenvalues",
         "tiny z", "wide spectrum", "scaled down", "scaled up"]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 17, 300])
@pytest.mark.parametrize("kind", KINDS)
def test_against_eigh(kind, n):
    d, z, sigma = spectrum_case(kind, n, n)
    A = np.diag(d) + sigma * np.outer(z, z)
    norm = np.abs(np.linalg.eigvalsh(A)).max() or 1.0
    eigen = rank_one_eigen(d, z, sigma)
    np.testing.assert_allclose(eigen.values, np.linalg.eigvalsh(A), rtol=0, atol=1e-12 * norm)
    X = eigen.vectors(np.arange(n))
    assert np.abs(X.T @ X - np.eye(n)).max() <= 1e-12
    assert np.abs(A @ X - X * eigen.values).max() <= 1e-12 * norm
    # interlacing (σ > 0): λ_i in [d_i, d_{i+1}], up to the deflation tolerance
    tol = 8 * np.finfo(float).eps * max(np.abs(d).max(), sigma * (z @ z))
    assert np.all(eigen.values >= d - tol) and np.all(eigen.values[:-1] <= d[1:] + tol)


def test_n_2000():
    d, z, sigma = spectrum_case("random", 2000, 0)
    A = np.diag(d) + sigma * np.outer(z, z)
    eigen = rank_one_eigen(d, z, sigma)
    norm = np.abs(eigen.values).max()
    np.testing.assert_allclose(eigen.values, np.linalg.eigvalsh(A), rtol=0, atol=1e-12 * norm)
    X = eigen.vectors(eigen.values < 0)
    assert np.abs(X.T @ X - np.eye(X.shape[1])).max() <= 1e-12
    assert np.abs(A @ X - X * eigen.values[eigen.values < 0]).max() <= 1e-12 * norm


@pytest.mark.parametrize("kind", KINDS)
def test_the_zero_finder_converges_fast(kind):
    """At most 4 evaluations of the secular function per root on average (3.0-3.8 on these
    spectra, 3.97 where half the roots hug their poles, "tiny z": the local model's solve is cut
    at ``MODEL_STEPS``; bisection would take about 50)."""
    d, z, sigma = spectrum_case(kind, 300, 1)
    eigen = rank_one_eigen(d, z, sigma)
    roots = int((eigen._source >= 0).sum())
    assert eigen.evaluations <= 4 * roots and (eigen.evaluations >= roots or roots <= 1)


@pytest.mark.parametrize("order", ["F", "C"])
def test_products_with_the_eigenvectors_match_numpy(order):
    rng = np.random.default_rng(7)
    V, u = np.asarray(rng.standard_normal((300, 300)), order=order), rng.standard_normal(300)
    for threads in (1, 2, 5):  # one thread: the loops run in the caller's thread, no launch of numba's pool
        np.testing.assert_allclose(rank_one.transposed_product(V, u, threads), V.T @ u, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rank_one.product(V, u, threads), V @ u, rtol=0, atol=1e-12)


def test_eigenvector_sums_match_the_formed_vectors():
    """The oracle's sums, formed column by column, against the same sums from the eigenvectors
    themselves, with and without deflation."""
    for kind in ("random", "repeated", "zero z"):
        d, z, sigma = spectrum_case(kind, 120, 3)
        eigen = rank_one_eigen(d, z, sigma)
        r = np.random.default_rng(0).standard_normal(120)
        for select in (eigen.values < 0, eigen.values >= 0):
            W, lam, rs = eigen.vectors(select), eigen.values[select], r[: select.sum()]
            t, x, y = eigen.eigenvector_sums(select, rs)
            np.testing.assert_allclose(t, W @ (lam * (W.T @ z)), rtol=0, atol=1e-12 * np.abs(eigen.values).max())
            np.testing.assert_allclose(x, W @ rs, rtol=0, atol=1e-12)
            np.testing.assert_allclose(y, W @ (lam * rs), rtol=0, atol=1e-12 * np.abs(eigen.values).max())


@pytest.mark.parametrize("kind", ["random", "repeated"])
def test_one_thread_and_several_give_the_same_decomposition(kind):
    """The threaded functions run their loop in the calling thread when given one thread and in
    numba's prange otherwise (split into chunks): roots, Löwner vector, vectors and sums agree."""
    d, z, sigma = spectrum_case(kind, 90, 4)
    r = np.random.default_rng(1).standard_normal(90)
    runs = {}
    for threads in (1, 2, 3):
        decomposition = rank_one._decomposition(d, z, sigma, threads)
        eigen = rank_one._eigen(decomposition)
        select = eigen.values < 0
        runs[threads] = (eigen.values, decomposition[4], eigen.vectors(select, threads),
                         *eigen.eigenvector_sums(select, r[: select.sum()], threads=threads))
    scale = np.abs(runs[1][0]).max()
    for threads in (2, 3):
        for one, several in zip(runs[1], runs[threads], strict=True):
            np.testing.assert_allclose(several, one, rtol=0, atol=1e-13 * max(scale, np.abs(one).max(initial=1.0)))
    np.testing.assert_array_equal(runs[2][0], runs[1][0])  # each root is found alone: the same bits


def test_selected_vectors_are_the_same_columns():
    d, z, sigma = spectrum_case("clustered", 60, 1)
    eigen = rank_one_eigen(d, z, sigma)
    every = eigen.vectors(np.arange(60))
    np.testing.assert_array_equal(eigen.vectors(eigen.values < 0), every[:, eigen.values < 0])


ORACLE_CASES = [(random_indefinite, 40, 0), (random_indefinite, 250, 1), (digits_simpson, 120, 2)]


@pytest.mark.parametrize("rho", [0.01, 1.0, 100.0])
@pytest.mark.parametrize("factory, n, seed", ORACLE_CASES)
def test_oracle_matches_eigh_oracle(factory, n, seed, rho):
    K0, y = factory(n, seed)
    fast, dense = (SVMProblem(K0, y, C=3.0, rho=rho, oracle=name) for name in ("rank-one", "eigh"))
    rng = np.random.default_rng(seed)
    for alpha in [fast.project(rng.uniform(0, 3, n)) for _ in range(3)] + [np.zeros(n)]:
        f = dense.objective(alpha)
        assert abs(fast.objective(alpha) - f) <= 1e-10 * max(1.0, abs(f))
        g = dense.gradient(alpha)
        np.testing.assert_allclose(fast.gradient(alpha), g, rtol=0, atol=1e-10 * max(1.0, np.abs(g).max()))
        c_fast, c_dense = fast.certify(alpha, bound="free"), dense.certify(alpha, bound="free")
        assert abs(c_fast.upper - c_dense.upper) <= 1e-10 * max(1.0, abs(c_dense.upper))
        K = dense.proxy_kernel(alpha)
        np.testing.assert_allclose(fast.proxy_kernel(alpha), K, rtol=0, atol=1e-10 * np.abs(K).max())
    assert fast.oracle.fallbacks == 0


def test_failures_fall_back_to_eigh_and_are_counted(monkeypatch):
    K0, y = random_indefinite(30, 3)
    oracle, dense = RankOneProxy(K0), EighProxy(K0)
    u = y * np.linspace(0, 1, 30)
    expected = dense(u, 0.5)

    def fail(*args):
        raise SecularEquationError("the zero finder did not converge")

    monkeypatch.setattr(rank_one, "rank_one_point", fail)
    point = oracle(u, 0.5)
    assert oracle.fallbacks == 1
    np.testing.assert_allclose(point.Ku, expected.Ku, atol=1e-12)
    monkeypatch.undo()
    monkeypatch.setattr(RankOneProxy, "CHECK_TOL", -1.0)  # every check fails
    oracle(u, 0.7)
    assert oracle.fallbacks == 2
    monkeypatch.undo()
    oracle(u, 0.9)
    assert oracle.fallbacks == 2


def test_updates_start_from_the_fixed_decomposition():
    """Errors cannot accumulate: the same u gives the same answer after many other points."""
    K0, y = random_indefinite(80, 4)
    oracle = RankOneProxy(K0)
    u = y * np.linspace(0, 2, 80)
    first = oracle(u, 0.3)
    rng = np.random.default_rng(0)
    for _ in range(50):
        oracle(y * rng.uniform(0, 2, 80), 0.3)
    again = oracle(u, 0.3)
    np.testing.assert_array_equal(again.Ku, first.Ku)
    assert again.value == first.value


#: A fresh process: a solve of every method, on a problem with repeated eigenvalues (deflation and
#: rotations) and through an estimator (a read-only cached spectrum), after ``compile_oracle``
#: (the oracle's functions, and the solvers' compiled direction and searches).
#: Prints the compiled functions whose signatures the solves added to what it had compiled.
AFTER_COMPILE_ORACLE = """
import warnings
import numba
import numpy as np
from sklearn.datasets import load_iris
from indkernel import IndefiniteSVC, SVMProblem, solve
from indkernel.kernels import sigmoid
from indkernel.core import rank_one, tangent_cg
from indkernel.solvers import accelerated_gradient, projected_newton
rank_one.compile_oracle()
dispatchers = {name: f for module in (rank_one, tangent_cg, accelerated_gradient, projected_newton)
               for name, f in vars(module).items() if isinstance(f, numba.core.registry.CPUDispatcher)}
before = {name: len(f.signatures) for name, f in dispatchers.items()}
rng = np.random.default_rng(0)
X = rng.standard_normal((40, 3))
y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
warnings.simplefilter("ignore")
for K0 in (X @ X.T - 0.5 * np.eye(40), np.tanh(X @ X.T)):
    for method in ("newton", "pg", "apg", "accpm", "exchange"):
        solve(SVMProblem(K0, y), method, max_iter=5)
iris = load_iris()
IndefiniteSVC(kernel=sigmoid, max_iter=5).fit(iris.data, iris.target)
print(sorted(name for name, f in dispatchers.items() if len(f.signatures) > before[name]))
"""


def test_compile_oracle_covers_every_array_type_a_solve_passes():
    """``solve`` compiles the oracle before its clock starts (``time_limit`` is for the solve):
    that is only true if the compiled types are all those a solve then passes."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", AFTER_COMPILE_ORACLE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


ORACLE_POINT = """
import numpy as np
from indkernel import SVMProblem
rng = np.random.default_rng(3)
X = rng.standard_normal((30, 30))
problem = SVMProblem((X + X.T) / 2, np.where(rng.random(30) < 0.5, 1.0, -1.0), C=1.0)
print(repr(float(problem.proxy_kernel(problem.project(np.full(30, 0.5))).sum())))
"""


def test_a_new_process_runs_the_oracle_from_numbas_cache():
    """The oracle's compiled point calls parallel functions; numba before 0.63 did not restore
    those when it loaded the caller from its on-disk cache, so the first point in every process
    after the one that compiled it segfaulted (numba 0.60-0.62; its 0.63 release notes: "Fix the
    caching of functions that call parallel=True functions"). Hence the floor numba>=0.63."""
    import subprocess
    import sys
    from pathlib import Path

    import indkernel

    namespace: dict = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(ORACLE_POINT, namespace)  # compiles here (writing numba's cache) unless a cache was read
    # run beside the package this process imported (a checkout's or an install's): the same cache
    beside = Path(indkernel.__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", ORACLE_POINT], capture_output=True, text=True, timeout=300, cwd=beside)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[:1500]}"
    assert done.stdout == printed.getvalue()


@pytest.mark.slow  # compiles the oracle from scratch in a new process (2-3 minutes)
def test_a_new_install_compiles_before_the_time_limit_starts(tmp_path):
    """On a new install numba compiles the oracle at the first solve: a 0.5 s limit took 4-22 s
    when the compiler ran inside the solve's clock. An empty NUMBA_CACHE_DIR is that install."""
    import os
    import subprocess
    import sys

    script = ("import warnings; import numpy as np; from indkernel import SVMProblem, solve\n"
              "rng = np.random.default_rng(7); X = rng.standard_normal((40, 40)); K0 = (X + X.T) / 2\n"
              "y = np.where(rng.random(40) < 0.5, 1.0, -1.0)\n"
              "warnings.simplefilter('ignore')\n"
              "print(solve(SVMProblem(K0, y), 'newton', tol=1e-15, absolute=True, time_limit=0.5).seconds)\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    assert any(tmp_path.rglob("*.nbi"))  # numba did compile into the empty cache
    assert float(done.stdout) < 1.5


def test_the_same_point_gives_the_same_bits_in_every_fresh_problem():
    """The oracle is a function of its input, bit for bit: with numba 0.68 the secular sums took
    LLVM's vector or scalar order by the addresses of their arrays (a loop that also stored
    1/(d - λ) got runtime overlap checks), so Kᵤ at the same α differed in its last bit in 2-9 %
    of fresh problems, and two identical projected-gradient runs ended apart."""
    K0, y = random_indefinite(12, 6)
    path = SVMProblem(K0, y, C=2.0)
    alphas = [path.initial_point()]
    for k in range(4):
        alphas.append(path.feasible.project(alphas[-1] + 5.0 / (k + 1) * path.gradient_at(alphas[-1])))
    seen = set()
    for _ in range(300):
        fresh = SVMProblem(K0, y, C=2.0)
        for alpha in alphas[:-1]:
            fresh.gradient_at(alpha)
        seen.add(fresh.gradient_at(alphas[-1]).tobytes())
    assert len(seen) == 1
