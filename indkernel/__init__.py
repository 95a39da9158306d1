"""indkernel: support vector machines with indefinite kernels (Luss & d'Aspremont).

The problem types carry the paper's closed forms (proxy kernel ``eq:kstar``, objective
``eq:kern_learn_eig``, exact gradient, exact projection) and a certified duality gap.
"""

from .certificate import Certificate
from .estimators import IndefiniteOneClassSVM, IndefiniteSVC, IndefiniteSVR, PerturbSVC
from .one_class_problem import OneClassProblem
from .path_cv import IndefiniteSVCCV
from .result import SolveResult
from .solve import compare, plot_comparison, solve
from .svm_problem import ComponentwiseSVMProblem, PerturbSVMProblem, SVMProblem
from .svr_problem import SVRProblem

__all__ = ["Certificate", "ComponentwiseSVMProblem", "IndefiniteOneClassSVM", "IndefiniteSVC", "IndefiniteSVCCV",
           "IndefiniteSVR", "OneClassProblem", "PerturbSVC", "PerturbSVMProblem", "SVMProblem", "SVRProblem",
           "SolveResult", "compare", "plot_comparison", "solve"]
__version__ = "0.1.0"
