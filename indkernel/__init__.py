"""indkernel: support vector machines with indefinite kernels (Luss & d'Aspremont).

Four parts:

- :mod:`indkernel.core`: the problem (a machine composed with a penalty on the kernel) with the
  paper's closed forms (proxy kernel ``eq:kstar``, objective ``eq:kern_learn_eig``, exact gradient,
  exact projection), the oracle and its rank-one update, the intercept and the certified duality gap;
- :mod:`indkernel.solvers`: :func:`solve`, its registry of methods and their run bookkeeping;
- :mod:`indkernel.estimators`: scikit-learn estimators, multiclass and the paper's baselines;
- :mod:`indkernel.reproduction`: the paper's tables and figures (the library never imports it).

:mod:`indkernel.kernels` and :mod:`indkernel.datasets` hold the similarities and the data.
"""

from .core import (
    Certificate,
    ComponentwiseSVMProblem,
    IndefiniteProblem,
    OneClassProblem,
    PerturbSVMProblem,
    SVMProblem,
    SVRProblem,
)
from .estimators import (
    IndefiniteOneClassSVM,
    IndefiniteSVC,
    IndefiniteSVCCV,
    IndefiniteSVR,
    KreinLeastSquaresClassifier,
    KreinSVC,
    ModSVC,
    OneNormSVC,
    PerturbSVC,
    SimilarityFeaturesSVC,
    SimilarityKNN,
    SpectrumSVC,
)
from .solvers import (
    METHODS,
    SolveError,
    SolveResult,
    Verification,
    VerificationWarning,
    compare,
    load_result,
    plot_comparison,
    solve,
    verify,
)

__all__ = ["Certificate", "ComponentwiseSVMProblem", "IndefiniteOneClassSVM", "IndefiniteProblem",
           "IndefiniteSVC", "IndefiniteSVCCV", "IndefiniteSVR", "KreinLeastSquaresClassifier", "KreinSVC", "METHODS", "ModSVC",
           "OneClassProblem", "OneNormSVC", "PerturbSVC", "PerturbSVMProblem", "SVMProblem", "SVRProblem",
           "SimilarityFeaturesSVC", "SimilarityKNN", "SolveError", "SolveResult", "SpectrumSVC",
           "Verification", "VerificationWarning", "compare", "load_result", "plot_comparison", "solve",
           "verify"]
__version__ = "0.1.0"
