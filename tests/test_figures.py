"""Every script in figures/ runs its main(quick=True) on tiny data."""

import importlib.util
from pathlib import Path

FIGURES = Path(__file__).resolve().parent.parent / "figures"


def load(name):
    spec = importlib.util.spec_from_file_location(name, FIGURES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_formulation_sizes_quick():
    table = load("formulation_sizes").main(quick=True)
    assert set(table.form) == {"min-max primal", "max-min SDP"} and set(table.n) == {10, 20}
    assert (table.status == "optimal").any() and (table.seconds > 0).all()
    # both forms solve the same problem: with Clarabel their values agree (SCS on the min-max
    # form does not, at default settings: the table reports its error)
    clarabel = table[table.solver == "CLARABEL"]
    assert (clarabel.error <= 1e-6).all(), clarabel
