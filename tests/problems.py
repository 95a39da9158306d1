"""Reference problems for the tests: each factory returns plain arrays, and
``reference_optimum`` solves any of them independently, through the max-min SDP."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import formulations
from indkernel.datasets import load_digits_pair
from indkernel.kernels import simpson
from indkernel.solvers import METHODS

#: Why a test of the paper's real data files skips, and what to set to run it.
NEEDS_DATA = ("needs the paper's real data files: set INDKERNEL_DATA to a folder that holds them (`indkernel "
              "datasets` lists them and where they are published; they download there when online); every other "
              "test uses small stand-ins")
#: The methods, read from the registry (a method added there is tested by every test over these):
#: every one; the iterative ones (not the one conic solve of "sdp"); those without a conic model;
#: and those that need nothing of a problem (no conic model, no bounded set, any ρ).
ALL_METHODS = list(METHODS)
ITERATIVE = [m for m, record in METHODS.items() if record.max_iter > 1]
WITHOUT_MODEL = [m for m, record in METHODS.items() if record.model is None]
UNRESTRICTED = [m for m, record in METHODS.items()
                if record.model is None and not record.needs_bounded_set and not record.needs_finite_rho]

#: Clarabel settings for "solved independently to high accuracy".
TIGHT_SCS = dict(solver="SCS", eps_abs=1e-12, eps_rel=1e-12, max_iters=500_000)
TIGHT_CLARABEL = dict(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11,
                      tol_ktratio=1e-9, max_iter=500)


def labels(n: int, rng: np.random.Generator) -> np.ndarray:
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)  # both classes, always
    return y


def random_indefinite(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A symmetric Gaussian matrix (about half its eigenvalues negative) and random labels."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n))
    return (X + X.T) / 2, labels(n, rng)


def random_psd(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian-kernel Gram matrix (PSD) and random labels."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 3))
    K = np.exp(-0.5 * np.sum((Z[:, None] - Z[None]) ** 2, axis=-1))
    return K, labels(n, rng)


def digits_simpson(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random n-subset of the bundled digits 3 vs 5 with the Simpson kernel, labels ±1."""
    X, y = load_digits_pair(3, 5)
    rng = np.random.default_rng(seed)
    pick = np.concatenate([rng.choice(np.flatnonzero(y == d), n // 2 + (d == 3) * (n % 2), replace=False)
                           for d in (3, 5)])
    return simpson(X[pick]), np.where(y[pick] == 3, 1.0, -1.0)


#: K0 = -I, y = (1, -1), C = 2, rho = 1/4: f(a, a) = 2a + a² - a⁴ + 1/4 for 2a²/(4ρ) > 1, which is
#: maximal at a = 1 (f' = 2 + 2a - 4a³), and 2a + 2ρ otherwise (at most 1.92); so p* = 9/4,
#: α* = (1, 1) and K* = (2σ - 1) vvᵀ = ½[[1, -1], [-1, 1]] with v = (1, -1)/√2.
HAND_SOLVED = dict(K0=-np.eye(2), y=np.array([1.0, -1.0]), C=2.0, rho=0.25,
                   p_star=2.25, alpha_star=np.array([1.0, 1.0]), K_star=0.5 * np.array([[1.0, -1.0], [-1.0, 1.0]]))

def quick_and_slow(cases, quick) -> list:
    """The cases as parameters: those in ``quick`` in the fast loop, the others marked slow (they
    run with ``pytest --slow``, as CI does)."""
    def param(case):
        values = case if isinstance(case, tuple) else (case,)
        return case if case in quick else pytest.param(*values, marks=pytest.mark.slow)
    return [param(case) for case in cases]


def slow_exchange(methods) -> list:
    """The methods as parameters, the exchange method's marked slow (each of its runs is a series of
    conic master solves: most of the suite's time; ``pytest --slow`` runs them)."""
    return [pytest.param(m, marks=pytest.mark.slow) if m == "exchange" else m for m in methods]


FACTORIES = {"random": random_indefinite, "psd": random_psd, "digits": digits_simpson}


@cache
def reference_optimum(kind: str, n: int, seed: int, C: float, rho: float) -> tuple[float, np.ndarray]:
    """``(p*, α*)`` from the max-min SDP solved by Clarabel at tight tolerances, or by SCS at tight
    tolerances where Clarabel reports only an inaccurate solution (clarabel 0.11 ends "almost
    solved" on random n = 6, ρ = 1, its value 1.1e-8 off); a reference must be solved accurately."""
    K0, y = FACTORIES[kind](n, seed)
    for options in (TIGHT_CLARABEL, TIGHT_SCS):
        model = formulations.maxmin_sdp(K0, y, C, rho)
        value = model.solve(**options)
        if model.problem.status == "optimal":
            return value, model.variables["alpha"].value.copy()
    raise AssertionError(f"no accurate reference optimum for {kind} n={n} seed={seed} C={C} rho={rho}")
