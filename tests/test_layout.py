"""The package's four parts, and the flat layout's module paths kept importable."""

import ast
import importlib
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import indkernel
from indkernel._moved import MOVED, MovedModule

ROOT = Path(__file__).resolve().parent.parent


def test_the_library_does_not_import_the_reproduction():
    code = ("import sys, indkernel, indkernel.core, indkernel.solvers, indkernel.estimators, indkernel.kernels, "
            "indkernel.datasets, indkernel.cluster\n"
            "from indkernel._moved import MovedModule\n"
            "print(sorted(m for m, v in sys.modules.items() if m.startswith('indkernel.reproduction') "
            "or (m.startswith('indkernel.') and m.split('.')[1] in ('experiments', 'protocol') "
            "and not isinstance(v, MovedModule))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_gives_the_new_modules_objects(old):
    new = importlib.import_module(f"indkernel.{MOVED[old]}")
    name = next(n for n in vars(new) if not n.startswith("_") and n not in ("annotations", "np"))
    stand_in = importlib.import_module(f"indkernel.{old}")
    assert isinstance(stand_in, MovedModule)
    with pytest.warns(DeprecationWarning, match=f"indkernel.{old} moved to indkernel.{MOVED[old]}"):
        assert getattr(stand_in, name) is getattr(new, name)


def test_from_imports_of_old_paths_and_the_package_attribute():
    with pytest.warns(DeprecationWarning, match="indkernel.solvers.registry"):
        from indkernel.solve import method_options
    assert method_options is indkernel.solvers.registry.method_options
    assert callable(indkernel.solve) and indkernel.solve is indkernel.solvers.solve  # still the function
    with pytest.warns(DeprecationWarning, match="indkernel.core.proxy"):
        assert indkernel.proxy.RankOneProxy is indkernel.core.proxy.RankOneProxy
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        indkernel.nothing  # noqa: B018


def test_private_lookups_on_a_stand_in_import_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(indkernel.experiments, "__file__", None) is None
        assert getattr(indkernel.proxy, "_mock_name", None) is None


def test_objects_pickled_under_the_old_paths_load():
    certificate = indkernel.Certificate(lower=1.0, upper=1.5, intercept=0.25)
    old = pickle.dumps(certificate, protocol=0).replace(b"indkernel.core.certificate", b"indkernel.certificate")
    assert b"indkernel.certificate\n" in old
    with pytest.warns(DeprecationWarning):
        loaded = pickle.loads(old)
    assert type(loaded) is indkernel.Certificate and loaded.upper == 1.5


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports (anywhere in it), relative imports resolved."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize(("part", "forbidden"), [
    ("core", ("indkernel.solvers", "indkernel.estimators", "indkernel.reproduction", "cvxpy", "formulations")),
    ("solvers", ("indkernel.estimators", "indkernel.reproduction")),
    ("estimators", ("indkernel.reproduction",)),
])
def test_each_part_imports_only_the_parts_below_it(part, forbidden):
    offending = {f"{path.name}: {module}" for path in (ROOT / "indkernel" / part).glob("*.py")
                 for module in imported_modules(path) if module.startswith(forbidden)}
    assert not offending
    assert imported_modules(ROOT / "indkernel/solvers/models.py") >= {"formulations", "indkernel.core"}  # the scan sees imports
