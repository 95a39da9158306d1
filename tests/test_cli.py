"""The console script: each command, its outputs and its error handling."""

import numpy as np
import pandas as pd
import pytest

from indkernel.cli import main
from indkernel.datasets import load_digits_pair
from indkernel.kernels import simpson


def _bounds(out: str) -> tuple[float, float]:
    return float(out.split("lower bound")[1].split()[0]), float(out.split("upper bound")[1].split()[0])


def test_solve_on_the_embedded_digits_prints_certified_bounds(capsys, tmp_path):
    alpha, history = tmp_path / "alpha.npy", tmp_path / "history.csv"
    assert main(["solve", "--quiet", "--tol", "1e-5", "--alpha-out", str(alpha), "--history-out", str(history)]) == 0
    lower, upper = _bounds(capsys.readouterr().out)
    last = pd.read_csv(history).iloc[-1]
    assert lower < upper <= lower + 1e-5 * last.scale  # the relative gap of --tol (SolveResult.scale)
    assert 0 < last.scale <= 10 * abs(lower)
    assert np.load(alpha).shape == (365,)
    assert last.upper == pytest.approx(upper, rel=1e-9)


def test_solve_reads_a_precomputed_similarity_and_features(capsys, tmp_path):
    X, y = load_digits_pair(4, 6)
    np.savez(tmp_path / "k.npz", K=simpson(X[:60]), y=y[:60])
    np.save(tmp_path / "x.npy", X[:60])
    np.savetxt(tmp_path / "labels.txt", y[:60], fmt="%d")
    assert main(["solve", str(tmp_path / "k.npz"), "--quiet"]) == 0
    first = _bounds(capsys.readouterr().out)
    assert main(["solve", str(tmp_path / "x.npy"), "--labels", str(tmp_path / "labels.txt"), "--quiet"]) == 0
    assert _bounds(capsys.readouterr().out) == pytest.approx(first, rel=1e-12)  # the same problem twice


def test_solve_a_libsvm_file_with_the_sigmoid(capsys, tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"{'+1' if i % 2 else '-1'} " + " ".join(f"{j + 1}:{rng.normal():.3f}" for j in range(5)) for i in range(30)]
    (tmp_path / "data.txt").write_text("\n".join(lines) + "\n")
    assert main(["solve", str(tmp_path / "data.txt"), "--similarity", "sigmoid", "--a", "0.5", "--r", "-1"]) == 0
    captured = capsys.readouterr()
    assert "sigmoid similarity (a = 0.5, r = -1)" in captured.err and "n = 30" in captured.err


def test_compare_writes_a_table_and_a_plot(capsys, tmp_path):
    plot = tmp_path / "compare.png"
    assert main(["compare", "--methods", "pg", "apg", "--tol", "1e-4", "--plot", str(plot), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "pg" in out and "apg" in out and plot.stat().st_size > 10_000


def test_figures_quick_writes_both_pngs(capsys, tmp_path):
    assert main(["figures", "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    assert {p.name for p in tmp_path.glob("*.png")} == {"convergence_digits_quick.png", "timing_digits_quick.png"}


def test_datasets_lists_the_files(capsys, tmp_path):
    assert main(["datasets", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out and "usps.npz" in out and "missing" in out and "bundled digits" in out


def test_help_teaches_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("solve", "compare", "figures", "tables", "datasets", "INDKERNEL_DATA"):
        assert command in out


@pytest.mark.parametrize("argv, message", [
    (["solve", "--rho", "-1", "--quiet"], "rho must be a positive finite number"),
    (["solve", "missing.npz", "--quiet"], "does not exist"),
    (["figures", "--dataset", "usps", "--data-dir", "/nonexistent", "--quiet"], "usps.npz is not in /nonexistent"),
])
def test_bad_input_is_a_clear_error_with_exit_code_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from indkernel import datasets

    monkeypatch.setitem(datasets.SOURCES, "usps.npz",
                        datasets.Source((tmp_path / "offline").as_uri(), sha256="0" * 64))
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_npy_without_labels(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.ones((4, 4)))
    assert main(["solve", str(tmp_path / "x.npy"), "--quiet"]) == 2
    assert "pass --labels" in capsys.readouterr().err
