"""The machine's dual QP on a fixed PSD kernel by HiGHS's active-set QP solver: the tight
certificate's first exact solve (:data:`indkernel.core.fixed_kernel.EXACT_SOLVES`).

On a fixed K the machine's dual is ``max_{x ∈ A} cᵀx - ½xᵀ(SᵀKS + D)x`` (S the machine's map u as a
matrix, :meth:`Machine.u_map <indkernel.core.machines.Machine.u_map>`; D the squared hinge's
diagonal), a QP with one hyperplane and a box. An active-set method moves one variable to or off
its bound per iteration, each step a rank-one change of a factor of the reduced Hessian, so it
meets the singular K*(α) of a late iterate (rank about 200 of 500 on USPS 3 vs 5) without the
interior-point method's dense factorizations or SMO's crawl on its flat directions: at the projected
gradient's iterates on the authors' problems (n = 100 … 500) its point's bound is within 1.05 of the
natural gap, in a fraction of the interior-point solve's time (``figures/tight_certificate.py``,
part 3), and with it pg reaches the authors' absolute 1e-2 at n = 500 in about 0.6 of the time it
took when libsvm at 1e-5 ended those checks (part 2). Its point is scored by the machine's
primal like every other, so an inaccurate answer still gives a valid bound, and the interior-point
solve after it (:func:`indkernel.solvers.models.dual_qp_point`) takes over where it falls short.
"""

from __future__ import annotations

import numpy as np

# _Highs: the raw solver class (in highspy's __all__, not in its stubs); the Python wrapper
# ``Highs`` prints a banner when the first one is made, before its output can be turned off
from highspy import HessianFormat, HighsModel, HighsModelStatus, MatrixFormat, _Highs  # type: ignore[attr-defined]

from ..core.problem import IndefiniteProblem

#: HiGHS's regularization of the QP's Hessian (``qp_regularization_value``): its default, 1e-7 added
#: to the diagonal, moves the maximizer enough that at pg's 220th iterate on the authors' problem
#: (n = 500, ρ = 1: a natural gap of 1.6e-5) the bound of its point was 4.1 times the natural gap;
#: at 1e-12 it is 1.05 times (1.00006 at the 110th), with no failure on the suite's singular K*.
REGULARIZATION = 1e-12
#: The most variables HiGHS is given: each of its iterations multiplies by the dense Hessian, so its
#: time grows about as n⁴ on USPS (pg's iterates to a relative 1e-6: 1.3 s at n = 1540 against 2.2 s
#: for the interior-point solve, 20 s at 3000 against 10 s); beyond it the interior-point solve,
#: whose factorizations grow with n times the square of K*'s rank, comes first.
MAX_DIM = 2000


def dual_qp_point(problem: IndefiniteProblem, K: np.ndarray, budget=None) -> np.ndarray | None:
    """The maximizer of the problem's machine on the fixed PSD kernel K by HiGHS's QP solver,
    within ``budget()`` seconds, onto A; None where no time is left, where HiGHS ends without a
    finite point, beyond ``MAX_DIM`` variables, and for a machine with more variables than points (the SVR's split
    ``x = (α⁺, α⁻)``, whose Hessian ``[K, -K; -K, K]`` pairs every direction with its opposite: in
    the stress family's closing certificates at C >= 1e4 HiGHS took 9.1 s over 28 calls and ended
    2 of those checks, the interior-point solve after it 7.4 s) or whose map u is not a signed
    selection."""
    machine = problem.machine
    u_map = machine.u_map()
    seconds = None if budget is None else budget()
    if u_map is None or machine.dim != machine.n or machine.dim > MAX_DIM or (seconds is not None and seconds <= 0):
        return None
    rows, signs = u_map
    hessian = signs[:, None] * K[np.ix_(rows, rows)] * signs[None, :]
    if machine.curvature is not None:
        hessian[np.diag_indices_from(hessian)] += machine.curvature
    feasible = problem.feasible
    highs = _Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("qp_regularization_value", REGULARIZATION)
    if seconds is not None:
        highs.setOptionValue("time_limit", float(seconds))
    highs.passModel(_model(hessian, machine.linear_gradient(feasible.lo), feasible))
    highs.run()
    if highs.getModelStatus() not in (HighsModelStatus.kOptimal, HighsModelStatus.kTimeLimit,
                                      HighsModelStatus.kIterationLimit):
        return None
    x = np.asarray(highs.getSolution().col_value, dtype=float)
    if x.shape != (feasible.dim,) or not np.all(np.isfinite(x)):
        return None
    return problem.project(x)


def _model(hessian: np.ndarray, linear: np.ndarray, feasible) -> HighsModel:
    """HiGHS's model of ``min ½xᵀHx - cᵀx`` over ``{aᵀx = b, lo <= x <= hi}`` (H dense, passed as
    its lower triangle by columns)."""
    dim = feasible.dim
    model = HighsModel()
    lp = model.lp_
    lp.num_col_, lp.num_row_ = dim, 1
    lp.col_cost_ = -np.asarray(linear, dtype=float)
    lp.col_lower_, lp.col_upper_ = np.asarray(feasible.lo, dtype=float), np.asarray(feasible.hi, dtype=float)
    lp.row_lower_ = lp.row_upper_ = np.array([float(feasible.b)])
    lp.a_matrix_.format_ = MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(dim + 1, dtype=np.int32)
    lp.a_matrix_.index_ = np.zeros(dim, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(feasible.a, dtype=float)
    # column j of the lower triangle holds rows j … dim-1: the upper triangle read row by row
    upper_rows, upper_columns = np.triu_indices(dim)
    hessian_ = model.hessian_
    hessian_.dim_, hessian_.format_ = dim, HessianFormat.kTriangular
    hessian_.start_ = np.concatenate([[0], np.cumsum(np.arange(dim, 0, -1))]).astype(np.int32)
    hessian_.index_ = upper_columns.astype(np.int32)
    hessian_.value_ = hessian[upper_rows, upper_columns]
    return model
