"""The field's classifiers on precomputed similarities, by name: each with its estimator, its grid
for cross-validation (full and quick) and its citation. This registry drives ``indkernel
benchmark`` (:mod:`indkernel.reproduction.benchmark`), the paper's tables
(:mod:`indkernel.reproduction.experiments`), their tests and the docs' list of methods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .baselines import (
    KreinLeastSquaresClassifier,
    KreinSVC,
    ModSVC,
    OneNormSVC,
    SimilarityFeaturesSVC,
    SimilarityKNN,
    SpectrumSVC,
)
from .indefinite import IndefiniteSVC

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

#: The certified relative gap each Indefinite SVM fit of a grid is solved to.
FIT_TOL = 1e-4
C_GRID, RHO_GRID = [0.1, 1.0, 10.0, 100.0], [0.1, 1.0, 10.0, 100.0]
QUICK_C_GRID, QUICK_RHO_GRID = [1.0, 10.0], [1.0]


@dataclass(frozen=True)
class Method:
    """One classifier of the registry: ``make()`` a new unfitted estimator, its grids over
    parameters (``grid`` for a study, ``quick_grid`` for a first look and the tests), and the
    work it comes from."""

    name: str
    make: Callable[[], BaseEstimator]
    grid: dict
    quick_grid: dict
    citation: str

    def estimator(self, **options) -> BaseEstimator:
        """A new estimator with those of ``options`` it takes (``class_weight`` for the SVMs, not k-NN)."""
        estimator = self.make()
        accepted = estimator.get_params()
        return estimator.set_params(**{key: value for key, value in options.items() if key in accepted})

    def param_grid(self, quick: bool = False) -> dict:
        """The grid to cross-validate over: ``quick_grid`` if ``quick``, else ``grid``."""
        return self.quick_grid if quick else self.grid


def _svm(name: str, make: Callable[[], BaseEstimator], citation: str) -> Method:
    return Method(name, make, {"C": C_GRID}, {"C": QUICK_C_GRID}, citation)


METHODS: dict[str, Method] = {method.name: method for method in [
    Method("Indefinite SVM", lambda: IndefiniteSVC(tol=FIT_TOL), {"C": C_GRID, "rho": RHO_GRID},
           {"C": QUICK_C_GRID, "rho": QUICK_RHO_GRID},
           "Luss & d'Aspremont, Support vector machine classification with indefinite kernels (NIPS 2007; "
           "Mathematical Programming Computation 2009)"),
    _svm("Denoise", lambda: SpectrumSVC("denoise"), "Wu, Chang & Zhang (2005); clip in Chen et al. (JMLR 2009)"),
    _svm("Flip", lambda: SpectrumSVC("flip"), "Graepel, Herbrich, Bollmann-Sdorra & Obermayer (NIPS 1999)"),
    _svm("Shift", lambda: SpectrumSVC("shift"), "Roth, Laub, Kawanabe & Buhmann (IEEE TPAMI 2003)"),
    _svm("Mod SVM", ModSVC, "Lin & Lin, A study on sigmoid kernels for SVM and the training of non-PSD kernels "
                            "by SMO-type methods (2003)"),
    _svm("SVM", lambda: SpectrumSVC("none"), "libsvm on the indefinite similarity (Chang & Lin 2011): a "
                                             "stationary point, no optimality guarantee"),
    _svm("Krein SVM", KreinSVC, "Loosli, Canu & Ong, Learning SVM in Kreĭn spaces (IEEE TPAMI 2016)"),
    _svm("1-norm SVM", OneNormSVC, "Mangasarian, Generalized support vector machines (2000); Chen et al. (JMLR 2009)"),
    Method("Krein least squares", lambda: KreinLeastSquaresClassifier(),
           {"lambda_positive": [0.0, 0.1, 1.0], "lambda_negative": [0.0, 0.1, 1.0], "radius": [1.0, 10.0, 100.0]},
           {"lambda_positive": [0.0], "lambda_negative": [0.0, 1.0], "radius": [1.0, 10.0]},
           "Oglic & Gärtner, Learning in reproducing kernel Kreĭn spaces (ICML 2018)"),
    _svm("SVM on similarities", SimilarityFeaturesSVC,
         "similarities as features: Graepel et al. (1999); Chen, Garcia, Gupta, Rahimi & Cazzanti (JMLR 2009)"),
    Method("k-NN", SimilarityKNN, {"n_neighbors": [1, 3, 5, 7, 11]}, {"n_neighbors": [1, 5]},
           "k nearest neighbours by similarity: Chen, Garcia, Gupta, Rahimi & Cazzanti (JMLR 2009)"),
]}
#: The methods ``indkernel benchmark`` runs by default: all but Flip, which is the Krein SVM (the
#: same map for training and new points, the same decisions bit for bit).
BENCHMARK_METHODS = tuple(name for name in METHODS if name != "Flip")


def known_methods(names, argument: str = "methods") -> list[str]:
    """``names`` checked against the registry (a ValueError naming the unknown ones and the known)."""
    names = list(names)
    unknown = [name for name in names if name not in METHODS]
    if unknown:
        raise ValueError(f"{argument}: unknown method(s) {', '.join(map(repr, unknown))}; the registry's methods are "
                         f"{', '.join(map(repr, METHODS))}")
    if not names:
        raise ValueError(f"{argument}: give at least one method")
    return names


def methods_markdown() -> str:
    """The registry as a markdown table (the guide's list of methods; ``indkernel benchmark --list``)."""
    lines = ["| method | estimator | grid (cross-validated) | cited |", "| --- | --- | --- | --- |"]
    for method in METHODS.values():
        estimator = method.make()
        defaults = type(estimator)().get_params()
        changed = {key: value for key, value in estimator.get_params().items() if value != defaults[key]}
        call = f"{type(estimator).__name__}({', '.join(f'{key}={value!r}' for key, value in changed.items())})"
        grid = "; ".join(f"{key} ∈ {{{', '.join(f'{value:g}' for value in values)}}}"
                         for key, values in method.grid.items())
        lines.append(f"| {method.name} | `{call}` | {grid} | {method.citation} |")
    return "\n".join(lines)
