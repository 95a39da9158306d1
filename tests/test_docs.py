"""What the documentation says runs: every docstring example (none skipped), every Python block of
the README and the user guide pasted alone, and the calls the docstrings point to."""

import doctest
import importlib
import importlib.util
import pkgutil
import re
from pathlib import Path

import pytest

import formulations
import indkernel

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(name for package in (indkernel, formulations)
                 for _, name, _ in pkgutil.walk_packages(package.__path__, package.__name__ + "."))
WITH_EXAMPLES = [name for name in MODULES
                 if ">>>" in Path(importlib.util.find_spec(name).origin).read_text(encoding="utf-8")]
GUIDE_BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "guide.md").read_text(encoding="utf-8"),
                          flags=re.DOTALL)


def test_no_docstring_example_is_skipped():
    sources = [path for folder in ("indkernel", "formulations") for path in (ROOT / folder).rglob("*.py")]
    assert not [path.name for path in sources if "+SKIP" in path.read_text(encoding="utf-8")]


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_the_modules_with_examples_are_the_entry_points():
    """The examples stand where a user starts: a problem, the estimator, verify."""
    assert {"indkernel.core.svm_problem", "indkernel.core.problem", "indkernel.estimators.indefinite",
            "indkernel.solvers.verification"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("index", range(len(GUIDE_BLOCKS)))
def test_a_guide_block_runs_pasted_alone(index):
    if "import torch" in GUIDE_BLOCKS[index]:
        pytest.importorskip("torch", reason="the GPU block needs torch (it runs on torch's CPU without CUDA)")
    namespace: dict = {}
    exec(compile(GUIDE_BLOCKS[index], f"docs/guide.md block {index + 1}", "exec"), namespace)  # a fresh namespace


def test_what_solves_docstring_points_to_exists():
    from indkernel import METHODS
    from indkernel.solvers import method_options

    assert "help(indkernel.METHODS[name].function)" in " ".join(indkernel.solve.__doc__.split())
    for name, record in METHODS.items():
        assert record.function.__doc__ and isinstance(method_options(name), set)


def test_the_api_reference_names_the_formulations_and_verify():
    api = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")
    for entry in ("formulations", "formulations.machines", "formulations.penalties", "indkernel.verify",
                  "indkernel.Verification"):
        assert re.search(rf"^\s+{re.escape(entry)}$", api, flags=re.MULTILINE), entry


def test_the_guide_lists_the_registry_as_it_is():
    """The guide's table of methods is the registry's own (``indkernel benchmark --list``): a method
    added, renamed or given another grid or citation must be written there too."""
    from indkernel.estimators.registry import methods_markdown

    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- methods:start -->\n(.*?)\n\nMade by", guide, flags=re.DOTALL)
    assert block is not None and block.group(1) == methods_markdown(), (
        "rewrite the block: indkernel.reproduction.report.update_marked_block(Path('docs/guide.md'), 'methods', "
        "methods_markdown(), 'indkernel benchmark --list')")
