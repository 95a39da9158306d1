"""The flat layout's module paths (``indkernel.problem``, ``indkernel.experiments``, ...), kept
importable: each is a stand-in in ``sys.modules`` that imports the module's new home on first use
and warns with a ``DeprecationWarning`` naming it. Nothing is imported until a name is asked for,
so ``import indkernel`` still leaves the reproduction package unimported.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings

#: old module (under ``indkernel.``) -> its new home (under ``indkernel.``)
MOVED = {
    **{name: f"core.{name}" for name in ("certificate", "intercept", "problem", "svm_problem", "svr_problem",
                                         "one_class_problem", "projection", "proxy", "rank_one", "spectrum_cache")},
    **{name: f"solvers.{name}" for name in ("result", "tracking", "accpm", "accelerated_gradient",
                                            "projected_gradient", "projected_newton", "exchange", "mkl_master",
                                            "direct_sdp")},
    "solve": "solvers.registry",
    **{name: f"estimators.{name}" for name in ("path_cv", "multiclass", "baselines", "progress")},
    **{name: f"reproduction.{name}" for name in ("experiments", "ablation", "usps_multiclass", "reproduce",
                                                 "protocol", "measure", "report", "rule_comparison")},
}


class MovedModule(types.ModuleType):
    """``indkernel.<old>``: every attribute read is forwarded to ``indkernel.<new>`` with a warning."""

    def __init__(self, old: str, new: str):
        super().__init__(old)
        self._new = new

    def __getattr__(self, attribute: str):
        if attribute.startswith("_"):  # tools that probe modules (inspect, pytest, mock) import nothing
            raise AttributeError(attribute)
        warnings.warn(f"{self.__name__} moved to {self._new}: import {attribute} from there; the old path "
                      "will be removed", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(self._new), attribute)


def install(package: str) -> None:
    """Put the stand-ins for ``package``'s old module paths into ``sys.modules``."""
    for old, new in MOVED.items():
        sys.modules.setdefault(f"{package}.{old}", MovedModule(f"{package}.{old}", f"{package}.{new}"))


def moved(package: str, name: str) -> types.ModuleType:
    """The package's ``__getattr__``: ``indkernel.<old>`` after ``import indkernel.<old>``."""
    if name in MOVED:
        return sys.modules[f"{package}.{name}"]
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
