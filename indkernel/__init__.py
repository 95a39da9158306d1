"""indkernel: support vector machines with indefinite kernels (Luss & d'Aspremont).

The problem types carry the paper's closed forms (proxy kernel ``eq:kstar``, objective
``eq:kern_learn_eig``, exact gradient, exact projection) and a certified duality gap.
"""

from .certificate import Certificate
from .svm_problem import SVMProblem

__all__ = ["Certificate", "SVMProblem"]
__version__ = "0.1.0"
