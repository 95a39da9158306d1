"""What a notebook shows: short reprs of results, certificates and problems (the bracket and how a
run ended, never a wall of α values), and an HTML table for results."""

import numpy as np
import scipy.linalg
from problems import random_indefinite

from indkernel import ComponentwiseSVMProblem, SVMProblem, solve


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


def test_progress_counts_iterations_with_the_gap_and_needs_no_widgets(capsys):
    """The bar has no total (an estimate to max_iter misleads: 30 minutes for a 6-iteration solve)
    and shows the certified gap; without ipywidgets it is tqdm's text bar, which does not warn
    "IProgress not found" in a notebook."""
    from importlib.util import find_spec

    import tqdm.std

    from indkernel import _progress

    if find_spec("ipywidgets") is None:
        assert _progress.tqdm is tqdm.std.tqdm
    K0, y = random_indefinite(30, 2)
    solve(SVMProblem(K0, y, C=2.0, rho=1.0), "newton", tol=1e-6, verbose=True)
    shown = capsys.readouterr().err
    assert "gap " in shown and "/10000" not in shown
