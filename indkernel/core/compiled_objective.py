"""A problem's objective as data for compiled iterations, and the calls they make of it.

An iteration of the projected Newton method (:func:`indkernel.solvers.projected_newton._iteration`:
its gradient projection step, its direction and its projected search) projects trial points onto A,
evaluates f there and takes the gradient and Hessian at the point it accepts; written once, it runs
compiled (numba) on a problem's compiled form (:meth:`IndefiniteProblem.compiled_objective
<indkernel.core.problem.IndefiniteProblem.compiled_objective>`: the rank-one oracle's spectrum, the
machine's map, ℓ's linear and quadratic parts and the feasible set as arrays), and by Python on the
problem itself (any other oracle, an unbounded set, a time limit, or a point whose rank-one check
failed). The calls below are the problem's own methods in Python; in compiled code, on the tuple,
they are :func:`indkernel.core.rank_one._point`, :func:`indkernel.core.projection._project` and the
gradient and Hessian from the point's record.
(numba's on-disk cache of a compiled caller is keyed by the caller's file only: after editing the
compiled versions here, clear the ``.nbi``/``.nbc`` files of ``indkernel/core/__pycache__`` and
``indkernel/solvers/__pycache__``.)
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .curvature import rank_one_curvature
from .projection import _project, read_only
from .rank_one import _point, _vectors


@register_jitable
def no_record() -> tuple:
    """The record of a point not computed, or kept by the problem itself (Python's route): empty
    arrays of :func:`trial_value`'s types."""
    decomposition = (np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty(0),
                     np.empty(0, np.int64), np.empty(0), np.empty(0), np.empty((0, 4)), 0, 0)
    return np.empty(0), decomposition, np.empty(0), False, np.empty(0), 0.0, 0.0, 0.0


def trial_value(problem, probe: np.ndarray, x: np.ndarray) -> tuple:
    """``(f(x), noise, ok, record)``: the objective, the rounding a comparison of it allows
    (:meth:`IndefiniteProblem.objective_noise <indkernel.core.problem.IndefiniteProblem.objective_noise>`),
    whether the oracle's point is good, and the record ``(u, *the outputs of
    indkernel.core.rank_one._point)`` that :meth:`IndefiniteProblem.adopt
    <indkernel.core.problem.IndefiniteProblem.adopt>` turns into the point (:func:`no_record` in
    Python: the problem keeps its points). ``probe``: the rank-one check's random vector (compiled
    code only)."""
    return problem.objective_at(x), problem.objective_noise(x), True, no_record()


def trial_gradient(problem, x: np.ndarray, record: tuple) -> np.ndarray:
    """``∇f(x)`` at a point :func:`trial_value` computed (its ``record``): ``∇ℓ(x) - Uᵀ(K*u)``."""
    return problem.gradient_at(x)


def trial_hessian(problem, x: np.ndarray, record: tuple):
    """The Hessian at a point :func:`trial_value` computed (its ``record``), as
    :func:`indkernel.core.curvature.hessian_product` takes it (:meth:`IndefiniteProblem.hessian_product_at
    <indkernel.core.problem.IndefiniteProblem.hessian_product_at>`)."""
    return problem.hessian_product_at(x)


def trial_project(problem, x: np.ndarray) -> np.ndarray:
    """The projection of x onto A."""
    return problem.feasible.project(x)


def stop_for_time(run) -> bool:
    """In Python, :meth:`Run.stop_for_time <indkernel.solvers.tracking.Run.stop_for_time>`; compiled
    code (``run`` None) reads no clock: its searches run only where a run has no time limit."""
    return run.stop_for_time()


@overload(stop_for_time)
def _compiled_stop_for_time(run):
    if isinstance(run, types.NoneType):
        return lambda run: False
    return None


def example() -> tuple:
    """A compiled objective of two variables with the types of :meth:`IndefiniteProblem.compiled_objective
    <indkernel.core.problem.IndefiniteProblem.compiled_objective>` (a read-only spectrum, the map
    and parts as fresh arrays, the set's read-only bounds): to compile the searches on."""
    d, V0, a, lo, hi = (read_only(v) for v in (np.array([-1.0, 1.0]), np.asfortranarray(np.eye(2)),
                                                 np.array([1.0, -1.0]), np.zeros(2), np.ones(2)))
    return (d, V0, 1.0, 1, np.arange(2, dtype=np.int64), np.ones(2), 2, np.zeros(2), np.ones(2), a, 0.0, lo, hi, 1e-15,
            1e-10)


@register_jitable
def compiled_dual_term(linear: np.ndarray, quadratic: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """``(ℓ(x), the sum of the absolute values of its terms)`` for ℓ's linear part c and quadratic part D:
    ``cᵀx - ½xᵀDx`` (:meth:`Machine.dual_term <indkernel.core.machines.Machine.dual_term>` and
    ``dual_term_magnitude``), in compiled code."""
    dual_term, dual_magnitude = 0.0, 0.0
    for j in range(x.size):
        quadratic_term = 0.5 * quadratic[j] * x[j] * x[j]
        dual_term += linear[j] * x[j] - quadratic_term
        dual_magnitude += abs(linear[j] * x[j]) + quadratic_term
    return dual_term, dual_magnitude


@overload(trial_value, jit_options={"error_model": "numpy"})
def _compiled_trial_value(problem, probe, x):
    if isinstance(problem, types.BaseTuple):
        def value(problem, probe, x):
            d, V0, rho, threads, rows, weights, n, quadratic, linear, _, _, _, _, noise_factor, check_tol = problem
            u = np.zeros(n)
            for j in range(x.size):
                u[rows[j]] += weights[j] * x[j]
            decomposition, z, use_negative, Ku, phi, magnitude, backward = _point(d, V0, u, rho, probe, threads)
            dual_term, dual_magnitude = compiled_dual_term(linear, quadratic, x)
            uu = np.dot(u, u)
            noise = noise_factor * (dual_magnitude + abs(phi) + magnitude + uu * (uu / (8.0 * rho)))
            ok = decomposition[10] == 0 and backward <= check_tol  # (a NaN backward error fails)
            return dual_term + phi, noise, ok, (u, decomposition, z, use_negative, Ku, phi, magnitude, backward)

        return value
    return None


@overload(trial_project, jit_options={"error_model": "numpy"})
def _compiled_trial_project(problem, x):
    if isinstance(problem, types.BaseTuple):
        def project(problem, x):
            a, b, lo, hi = problem[9], problem[10], problem[11], problem[12]
            return _project(x, a, b, lo, hi)[0]

        return project
    return None


@overload(trial_gradient, jit_options={"error_model": "numpy"})
def _compiled_trial_gradient(problem, x, record):
    if isinstance(problem, types.BaseTuple):
        def gradient(problem, x, record):
            rows, weights, quadratic, linear = problem[4], problem[5], problem[7], problem[8]
            Ku = record[4]
            g = np.empty(x.size)
            for j in range(x.size):
                g[j] = linear[j] - quadratic[j] * x[j] - weights[j] * Ku[rows[j]]
            return g

        return gradient
    return None


@overload(trial_hessian, jit_options={"error_model": "numpy"})
def _compiled_trial_hessian(problem, x, record):
    if isinstance(problem, types.BaseTuple):
        def hessian(problem, x, record):
            V0, rho, threads, rows, weights, n, quadratic = (problem[1], problem[2], problem[3], problem[4],
                                                             problem[5], problem[6], problem[7])
            decomposition, z = record[1], record[2]
            values, source, kept, poles, z_hat, origin, tau, _, rotations, _, _ = decomposition
            W = _vectors(source, n, kept, poles, z_hat, origin, tau, rotations, threads)
            V0, W, positive, negative, G, diagonal, p, sigma, threads = rank_one_curvature(V0, values, W, z,
                                                                                             1.0 / (4.0 * rho), threads)
            return V0, W, positive, negative, G, diagonal, p, sigma, threads, rows, weights, n, quadratic

        return hessian
    return None
