"""The numerical core: the problem types (``eq:kern_learn`` and its variants) with their closed forms,
the oracle (``eq:kstar``) and its rank-one update, the exact projection, the intercept and the
certified duality gap. It imports neither the solvers nor the estimators.
"""

from .certificate import Certificate
from .one_class_problem import OneClassProblem
from .problem import IndefiniteProblem
from .svm_problem import ComponentwiseSVMProblem, PerturbSVMProblem, SVMProblem
from .svr_problem import SVRProblem

__all__ = ["Certificate", "ComponentwiseSVMProblem", "IndefiniteProblem", "OneClassProblem", "PerturbSVMProblem",
           "SVMProblem", "SVRProblem"]
