"""cvxpy model factories for every convex model of the paper (a leaf package: numpy, scipy and
cvxpy only; never imports indkernel).

The models are composed: one entry per machine (:mod:`formulations.machines`: its dual variable,
linear part, constraints and the map u) and one per penalty (:mod:`formulations.penalties`: its
kernel term), and each model of the paper is built for any pair: :func:`maxmin_model`
(``eq:kern_learn``), :func:`minmax_model` (``eq:kern_learn_hard``), :func:`dual_qp_model` (the
machine on a fixed kernel), :func:`siqclp_model` (``eq:SIQCLP_master``) and
:func:`projection_model` (the inner minimization as a weighted projection, ``th:kstar_pen``). The
named factories (``maxmin_sdp``, ``svr_minmax_primal``, ...) are these models for common pairs.

Each factory builds and never solves; it returns a :class:`Formulation` holding the
``cvxpy.Problem``, its variables by name and its parameters (C, ρ, ε, ν, H), so a grid re-solves
the same model. ``available_solvers()`` says which conic solvers can solve here.
"""

from . import machines, penalties
from ._base import Formulation
from .analytic_center import analytic_center
from .dual_qp import dual_qp, dual_qp_model, one_class_dual_qp, svr_dual_qp
from .krein_least_squares import krein_least_squares_sdp
from .machines import psd_factor
from .maxmin import maxmin_model, maxmin_sdp, one_class_maxmin_sdp, penalized_maxmin_sdp, perturb_maxmin, svr_maxmin_sdp
from .minmax import minmax_model, minmax_primal, one_class_minmax_primal, penalized_minmax_primal, svr_minmax_primal
from .mod_svm import mod_svm_dual, mod_svm_primal
from .one_norm import one_norm_svm, one_norm_svm_dual
from .siqclp import one_class_siqclp_master, penalized_siqclp_master, siqclp_master, siqclp_model, svr_siqclp_master
from .solvers import ACCURATE, DEFAULT_SOLVER, SECOND_OPINION, OutOfTime, available_solvers, reference_solver
from .weighted_projection import projection_model, weighted_projection

__all__ = [
    "ACCURATE", "analytic_center", "available_solvers", "DEFAULT_SOLVER", "dual_qp", "dual_qp_model", "Formulation",
    "krein_least_squares_sdp",
    "machines", "maxmin_model", "maxmin_sdp", "minmax_model", "minmax_primal", "mod_svm_dual", "mod_svm_primal", "one_norm_svm", "one_norm_svm_dual",
    "one_class_dual_qp", "one_class_maxmin_sdp", "one_class_minmax_primal", "one_class_siqclp_master", "OutOfTime",
    "penalized_maxmin_sdp", "penalized_minmax_primal", "penalized_siqclp_master", "penalties", "perturb_maxmin",
    "projection_model", "psd_factor", "reference_solver", "SECOND_OPINION", "siqclp_master", "siqclp_model",
    "svr_dual_qp", "svr_maxmin_sdp", "svr_minmax_primal", "svr_siqclp_master", "weighted_projection",
]
