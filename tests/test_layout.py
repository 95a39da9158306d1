"""The package's four parts."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import indkernel

ROOT = Path(__file__).resolve().parent.parent


def test_the_library_does_not_import_the_reproduction():
    code = ("import sys, indkernel, indkernel.core, indkernel.solvers, indkernel.estimators, indkernel.kernels, "
            "indkernel.datasets, indkernel.cluster\n"
            "print(sorted(m for m in sys.modules if m.startswith('indkernel.reproduction')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("old", ["proxy", "experiments", "certificate", "solve", "path_cv"])
def test_the_flat_layouts_paths_are_gone(old):
    """No release shipped the flat layout (``indkernel.proxy``, ...), so its stand-ins were removed."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"indkernel.{old}")
    assert callable(indkernel.solve) and indkernel.solve is indkernel.solvers.solve
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        indkernel.nothing  # noqa: B018


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
    assert imported_modules(ROOT / "indkernel/solvers/models.py") >= {"formulations", "indkernel.core.problem"}  # the scan sees imports


def test_the_metadata_names_the_python_ci_tests_and_the_paper():
    """The oldest Python that ``requires-python`` admits is a classifier (CI's floor job runs on it),
    and the project links the paper it implements."""
    import re

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's TOML reader (the main CI job runs on 3.11)")
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    oldest = re.fullmatch(r">=(\d+\.\d+)", project["requires-python"]).group(1)
    assert f"Programming Language :: Python :: {oldest}" in project["classifiers"]
    assert project["urls"]["Paper"] == "https://doi.org/10.1007/s12532-009-0005-5"
    assert (Path(__file__).parents[1] / project["license-files"][0]).is_file()
