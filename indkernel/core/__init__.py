"""The numerical core: the problem (``eq:kern_learn`` and its variants: a machine of
:mod:`~indkernel.core.machines` composed with a penalty of :mod:`~indkernel.core.penalties`) with its closed forms,
the oracle (``eq:kstar``) and its rank-one update, the exact projection, the intercept and the
certified duality gap. It imports neither the solvers nor the estimators.
"""

from .certificate import Certificate
from .feasible_set import FeasibleSet
from .machines import EpsilonInsensitive, Hinge, Machine, OneClass
from .one_class_problem import OneClassProblem
from .penalties import Componentwise, Frobenius, Mercer, Penalty
from .problem import IndefiniteProblem
from .svm_problem import ComponentwiseSVMProblem, PerturbSVMProblem, SVMProblem
from .svr_problem import SVRProblem

__all__ = ["Certificate", "Componentwise", "ComponentwiseSVMProblem", "EpsilonInsensitive", "FeasibleSet", "Frobenius",
           "Hinge", "IndefiniteProblem", "Machine", "Mercer", "OneClass", "OneClassProblem", "Penalty", "PerturbSVMProblem",
           "SVMProblem", "SVRProblem"]
