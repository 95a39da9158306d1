"""The console script: the README's main job and its error handling."""

from indkernel.cli import main


def test_demo_prints_certified_bounds(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "digits 3 vs 5" in out and "n = 365" in out
    lower = float(out.split("lower bound")[1].split()[0])
    upper = float(out.split("upper bound")[1].split()[0])
    assert lower < upper <= lower + 1e-3 * abs(lower)  # the default tolerance, certified


def test_bad_argument_is_a_clear_error(capsys):
    assert main(["demo", "--rho", "-1"]) == 2
    assert "rho must be a positive finite number" in capsys.readouterr().err
