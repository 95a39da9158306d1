"""What a notebook shows: short reprs of results, certificates and problems (the bracket and how a
run ended, never a wall of α values), and an HTML table for results."""

import time
from pathlib import Path

import numpy as np
import scipy.linalg
from problems import random_indefinite

import indkernel
from indkernel import ComponentwiseSVMProblem, SVMProblem, solve
from indkernel._progress import if_slow
from indkernel.core import rank_one


def test_a_result_shows_its_bracket_in_one_line_and_as_a_table():
    K0, y = random_indefinite(200, 0)
    result = solve(SVMProblem(K0, y, C=2.0, rho=1.0), "newton", tol=1e-4)
    text = repr(result)
    assert len(text) < 300 and "\n" not in text
    assert f"status={result.status!r}" in text and f"upper={result.upper:.10g}" in text and "n=200" in text
    assert f"{result.alpha[0]!r}" not in text  # no α values
    table = result._repr_html_()
    assert table.startswith("<table>") and "upper bound (certified)" in table and f"{result.upper:.10g}" in table
    certificate = repr(result.certificate)
    assert certificate.startswith("Certificate(") and "source=" in certificate and len(certificate) < 200


def test_a_problem_shows_its_parts_and_a_spectrum_only_once_known():
    K0, y = random_indefinite(40, 1)
    problem = SVMProblem(K0, y, C=np.linspace(1.0, 3.0, 40), rho=0.5, loss="squared_hinge")
    text = repr(problem)
    assert text.startswith("SVMProblem(n=40, SquaredHinge(") and "C=[1, 3]" in text and "Frobenius(rho=0.5)" in text
    assert "spectrum not computed yet" in text and "spectrum" not in vars(problem.oracle)  # repr computed nothing
    solve(problem, "newton", tol=1e-4)
    negative = int(np.sum(scipy.linalg.eigvalsh(K0) < 0))
    assert f"K0: {negative} of 40 eigenvalues negative" in repr(problem)
    componentwise = repr(ComponentwiseSVMProblem(K0, y, C=1.0, h=np.linspace(0.5, 2.0, 40)))
    assert "Componentwise(h=[0.5, 2])" in componentwise and "K0/(√h√hᵀ)" in componentwise


def test_progress_counts_iterations_with_the_gap(capsys):
    """The bar has no total (an estimate to max_iter misleads: 30 minutes for a 6-iteration solve)
    and shows the certified gap; outside a notebook it is tqdm's text bar on stderr."""
    K0, y = random_indefinite(30, 2)
    solve(SVMProblem(K0, y, C=2.0, rho=1.0), "newton", tol=1e-6, verbose=True)
    shown = capsys.readouterr().err
    assert "gap " in shown and "/10000" not in shown


def test_a_progress_bar_in_a_notebook_is_one_line_of_text():
    """Inside a Jupyter kernel every bar is one plain-text output updated in place (what an
    exported notebook keeps), whether or not ipywidgets is installed: no widget, no stderr line
    per refresh, no "IProgress not found" warning at import."""
    import nbformat
    from nbclient import NotebookClient

    code = ("from indkernel._progress import tqdm\n"
            "from indkernel import IndefiniteSVC\n"
            "from indkernel.datasets import load_digits_pair\n"
            "for _ in tqdm(range(300), desc='steps', mininterval=0):\n"
            "    pass\n"
            "X, y = load_digits_pair(3, 5)\n"
            "IndefiniteSVC(kernel='simpson', verbose=1).fit(X[:60], y[:60]).status_")
    # the kernel imports the indkernel this process imports (a checkout's, or an installed one's: its
    # working folder is the package's parent) and loads the compiled oracle from numba's cache, written
    # here first: a new install's compilation (8 minutes at the numba floor) is not what this test times
    rank_one.compile_oracle()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    where = str(Path(indkernel.__file__).parents[1])
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": where}}).execute()
    outputs = notebook.cells[0].outputs
    assert not [o for o in outputs if o.output_type == "stream" and o.name == "stderr"], outputs
    shown = [o.data["text/plain"] for o in outputs if o.output_type == "display_data"]
    # loading the cache can take over a second (2.6 s at the numba floor): then its clock shows
    shown = [line for line in shown if not line.startswith("compiling the rank-one oracle (numba; once after installing")]
    assert shown[0].startswith("steps: 100%|██████████| 300/300"), shown
    assert shown[1].startswith("eigendecomposition of K0 (60×60): ")
    assert shown[2:] == [""]  # the Newton bar, cleared when done (leave=False)
    assert not any("widget" in key for o in outputs for key in o.get("data", {}))
    assert "['optimal']" in outputs[-1].data["text/plain"]


def test_a_slow_step_shows_its_clock_and_a_quick_one_nothing(capsys):
    with if_slow("a quick step", after=0.5):
        pass
    assert capsys.readouterr().err == ""
    with if_slow("a slow step", after=0.1):
        time.sleep(0.5)
    assert "a slow step: 00:00" in capsys.readouterr().err


def test_the_first_compilation_says_what_it_is_doing(monkeypatch, capsys):
    """After an install numba compiles the oracle for over a minute: a line says so (here a stand-in
    compilation of 1.3 s)."""
    monkeypatch.setattr(rank_one, "_compiled", False)
    monkeypatch.setattr(rank_one, "_compile", lambda: time.sleep(1.3))
    rank_one.compile_oracle()
    assert "compiling the rank-one oracle (numba; once after installing" in capsys.readouterr().err
    assert rank_one._compiled
