"""cvxpy model factories for every convex model of the paper (a leaf package: numpy, scipy,
cvxpy only). Each factory builds and never solves; it returns a :class:`Formulation` holding the
``cvxpy.Problem``, its variables by name and its parameters (C, ρ, ...)."""

from ._base import Formulation
from .svm import dual_qp, maxmin_sdp

__all__ = ["Formulation", "dual_qp", "maxmin_sdp"]
