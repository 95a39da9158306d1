"""scikit-learn estimators on precomputed similarities: the Indefinite SVM family
(:mod:`indkernel.estimators.indefinite`), the warm-started grid (:class:`IndefiniteSVCCV`), multiclass
(:mod:`indkernel.estimators.multiclass`) and the paper's baselines (:mod:`indkernel.estimators.baselines`).
"""

from .baselines import (
    KreinLeastSquaresClassifier,
    KreinSVC,
    ModSVC,
    OneNormSVC,
    SimilarityFeaturesSVC,
    SimilarityKNN,
    SpectrumSVC,
)
from .indefinite import IndefiniteOneClassSVM, IndefiniteSVC, IndefiniteSVR, PerturbSVC
from .path_cv import IndefiniteSVCCV

__all__ = ["IndefiniteOneClassSVM", "IndefiniteSVC", "IndefiniteSVCCV", "IndefiniteSVR", "KreinLeastSquaresClassifier",
           "KreinSVC", "ModSVC",
           "OneNormSVC", "PerturbSVC", "SimilarityFeaturesSVC", "SimilarityKNN", "SpectrumSVC"]
