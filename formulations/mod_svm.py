"""The Mod SVM baseline (Lin & Lin, 2003) as a QP, primal and dual, for any symmetric K0.

Primal: ``min ½‖α‖² + Σ C_i ξ_i`` s.t. ``y_i((K0Yα)_i + b) >= 1 - ξ_i``, ``α, ξ >= 0`` (convex
whatever K0's spectrum: K0 enters the constraints only). Dual, with ``M = YK0Y``:
``max_{λ ∈ A} eᵀλ - ½‖(Mλ)₊‖²`` over the SVM's set A, written as a QP by a variable ``α >= Mλ,
α >= 0`` (at the optimum ``α = (Mλ)₊``, the primal's α).
"""

from __future__ import annotations

import cvxpy as cp

from . import machines
from ._base import Formulation
from .machines import _square, _vector, _vector_parameter


def mod_svm_primal(K0, y, C) -> Formulation:
    """The Mod SVM primal QP; variables ``alpha``, ``b``; parameter ``C``."""
    K0 = _square(K0, "K0")
    y = _vector(y, len(K0), "y")
    C = _vector_parameter(C, len(y), "C")
    alpha, b, slack = cp.Variable(len(y), nonneg=True), cp.Variable(), cp.Variable(len(y), nonneg=True)
    margins = cp.multiply(y, K0 @ cp.multiply(y, alpha) + b)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(alpha) + C @ slack), [margins >= 1 - slack])
    return Formulation(problem, {"alpha": alpha, "b": b}, {"C": C})


def mod_svm_dual(K0, y, C) -> Formulation:
    """The Mod SVM dual ``max_{λ ∈ A} eᵀλ - ½‖α‖²`` s.t. ``α >= YK0Yλ``, ``α >= 0``; variables
    ``lambda`` (the SVM's dual variable) and ``alpha``; parameter ``C``."""
    K0 = _square(K0, "K0")
    machine = machines.binary(_vector(y, len(K0), "y"), C, "hinge")
    alpha = cp.Variable(len(K0), nonneg=True)
    constraints = [*machine.constraints, alpha >= cp.multiply(machine.d, K0 @ machine.u)]
    problem = cp.Problem(cp.Maximize(machine.linear - 0.5 * cp.sum_squares(alpha)), constraints)
    return Formulation(problem, {"lambda": machine.alpha, "alpha": alpha}, machine.parameters)
