"""scikit-learn's estimator checks with strict expected failures where the installed version has
them (``xfail_strict`` came in 1.7; CI also runs the estimators' tests at the floor, 1.6.1)."""

import inspect
from functools import partial

from sklearn.utils.estimator_checks import parametrize_with_checks

if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters:
    parametrize_with_checks = partial(parametrize_with_checks, xfail_strict=True)

__all__ = ["parametrize_with_checks"]
