"""The console script: each command, its outputs and its error handling."""

import os

import numpy as np
import pandas as pd
import pytest

from indkernel import SVMProblem
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


def test_solve_at_rho_inf_certifies_the_clipped_kernels_machine(capsys, tmp_path):
    """``--rho inf``: the SVM on (K0)_+, its bracket around the dual QP's value on a dense eigh's
    clipped kernel (cvxpy)."""
    import scipy.linalg
    from problems import TIGHT_CLARABEL, random_indefinite

    import formulations

    K0, y = random_indefinite(20, 2)
    np.savez(tmp_path / "data.npz", K=K0, y=y)
    assert main(["solve", str(tmp_path / "data.npz"), "--quiet", "--rho", "inf", "--C", "2", "--tol", "1e-7"]) == 0
    lower, upper = _bounds(capsys.readouterr().out)
    d, V = scipy.linalg.eigh(K0)
    p_star = formulations.dual_qp((V * np.maximum(d, 0)) @ V.T, y * 1.0, 2.0).solve(**TIGHT_CLARABEL)
    assert lower - 1e-8 * abs(p_star) <= p_star <= upper + 1e-8 * abs(p_star)
    assert upper - lower <= 1e-6 * abs(p_star)


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
    # the default similarity (Simpson, for binary images) on ordinary features: the fix is named
    assert main(["solve", str(tmp_path / "data.txt"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "simpson similarity failed" in error and "--similarity" in error and "sigmoid or gaussian" in error


def test_compare_writes_a_table_and_a_plot(capsys, tmp_path):
    plot = tmp_path / "compare.png"
    assert main(["compare", "--methods", "pg", "apg", "--tol", "1e-4", "--plot", str(plot), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "pg" in out and "apg" in out and plot.stat().st_size > 10_000
    rows = [line.split() for line in out.splitlines()[1:]]
    assert len(rows) == 2 and all(row[1] != row[2] for row in rows)  # lower and upper read apart


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


@pytest.mark.parametrize("command", ["solve", "compare", "figures", "tables", "datasets"])
def test_each_commands_help_shows_its_own_examples_and_every_option_explained(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    examples = [line.split()[1] for line in out.split("examples:")[1].splitlines() if line.startswith("  indkernel ")]
    assert examples and set(examples) == {command}
    from indkernel.cli import build_parser

    commands = next(action for action in build_parser()._actions if action.dest == "command")
    parser = commands.choices[command]
    assert parser.description
    unexplained = [action.option_strings or action.dest for action in parser._actions if not action.help]
    assert not unexplained


def test_similarity_options_that_would_be_ignored_are_refused(capsys, tmp_path):
    rng = np.random.default_rng(0)
    K = rng.random((6, 6))
    np.savez(tmp_path / "k.npz", K=K + K.T, y=[0, 1] * 3)
    np.savez(tmp_path / "x.npz", X=rng.random((6, 3)), y=[0, 1] * 3)
    assert main(["solve", str(tmp_path / "k.npz"), "--gamma", "0.1", "--quiet"]) == 2
    assert "--gamma: DATA k.npz holds a precomputed similarity K" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "k.npz"), "--similarity", "gaussian", "--quiet"]) == 2
    assert "--similarity: DATA k.npz holds a precomputed similarity K" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "x.npz"), "--similarity", "sigmoid", "--gamma", "0.1", "--quiet"]) == 2
    assert "--gamma: not a parameter of the sigmoid similarity (its parameters: --a, --r)" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "x.npz"), "--similarity", "gaussian", "--gamma", "0.1"]) == 0
    assert "gaussian similarity (gamma = 0.1)" in capsys.readouterr().err


def test_a_csv_matrix_is_told_how_to_become_data_in_one_short_line(capsys, tmp_path):
    K = np.random.default_rng(0).random((40, 40))
    np.savetxt(tmp_path / "K.csv", K + K.T, delimiter=",")
    assert main(["solve", str(tmp_path / "K.csv"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is not a valid LIBSVM-format file" in err and "numpy.savez(name, K=K, y=y)" in err and len(err) < 500


@pytest.mark.parametrize("argv, message", [
    (["solve", "--rho", "-1"], "argument --rho: expected a positive number or inf"),
    (["solve", "--C", "-1"], "argument --C: expected a positive finite number"),
    (["compare", "--max-iter", "-5"], "argument --max-iter: expected a positive integer or -1"),
    (["solve", "--tol", "0"], "argument --tol: expected a positive finite number"),
])
def test_bad_numbers_are_refused_before_any_work(argv, message, capsys, monkeypatch):
    """Checked as the arguments are read: before the data are loaded or the similarity computed."""
    from indkernel import cli

    monkeypatch.setattr(cli, "_load", lambda *a, **k: pytest.fail("the data were loaded"))
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--quiet"])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
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


def _files(tmp_path):
    """Bad inputs of every kind, written into tmp_path (the adversarial findings)."""
    good = tmp_path / "good.npz"
    np.savez(good, K=np.eye(4), y=[1, -1, 1, -1])
    (tmp_path / "corrupt.npz").write_bytes(b"this is not a zip archive")
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "truncated.npz").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (tmp_path / "one-byte.npz").write_bytes(b"x")
    with open(tmp_path / "an-array.npz", "wb") as file:
        np.save(file, np.eye(4))
    np.savez(tmp_path / "other-keys.npz", A=np.eye(2), B=np.ones(2))
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", tmp_path / "device.npz")
    (tmp_path / "huge-index.txt").write_text("+1 10000000000000:1\n-1 1:2\n")
    np.save(tmp_path / "a.npy", np.eye(4))
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "a-file").write_text("")
    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "usps.npz", y=np.arange(3))  # no key X


@pytest.mark.parametrize("argv, message", [
    (["solve", "corrupt.npz"], "is not a .npz archive (np.savez writes a zip"),
    (["solve", "empty.npz"], "DATA empty.npz is empty"),
    (["solve", "truncated.npz"], "is not a .npz archive"),
    (["solve", "one-byte.npz"], "is not a .npz archive"),
    (["solve", "an-array.npz"], "is a .npy array (np.save), not a .npz archive: name it .npy"),
    (["solve", "other-keys.npz"], "it holds ['A', 'B']"),
    pytest.param(["solve", "device.npz"], "is not a regular file (a device",
                 marks=pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")),
    (["solve", "a-folder"], "is a directory"),
    (["solve", "good.npz", "--labels", "a-folder"], "drop --labels"),
    (["solve", "a.npy", "--labels", "a-folder"], "is a directory"),
    (["solve", "huge-index.txt"], "not a valid LIBSVM-format file"),
    (["solve", "good.npz", "--history-out", "nodir/h.csv"], "does not exist; create it first"),
    (["solve", "good.npz", "--alpha-out", "a-folder"], "is a directory"),
    (["solve", "good.npz", "--C", "1e100"], "rescale K0, C"),
    (["solve", "good.npz", "--rho", "1e-300"], "rho"),
    (["figures", "--out", "a-file"], "is an existing file"),
    (["tables", "--out", "a-file"], "is an existing file"),
    (["tables", "--multiclass", "--ablation"], "are different runs"),
    (["tables", "--rules", "--multiclass"], "are different runs"),
    (["tables", "--datasets", "a1a-sig", "--multiclass"], "takes no --multiclass"),
    (["tables", "--datasets", "nope"], "datasets must be distinct names among USPS-3-5-SS"),
    (["tables", "--datasets", "a1a-sig", "--out", "a-folder"], "run the whole tables into it first"),
    (["tables", "--methods", "Indefinite SVM", "--rules"], "takes no --multiclass, --ablation or --rules"),
    (["tables", "--methods", "Indefinite"], "methods must be distinct names among Denoise, Flip"),
    (["tables", "--methods", "Indefinite SVM", "--out", "a-folder"], "run the whole tables into it first"),
    (["figures", "--dataset", "usps", "--data-dir", "data"], "a different or corrupted copy"),
])
def test_bad_files_and_outputs_exit_2_before_any_work(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "allow_pickle" not in err  # never advice to unpickle
    assert not (tmp_path / "nodir").exists()


@pytest.mark.parametrize("argv, message", [
    (["solve", "good.npz", "--alpha-out", "good.npz"], "--alpha-out good.npz is the input file DATA"),
    (["solve", "a.npy", "--labels", "labels.txt", "--history-out", "labels.txt"], "is the input file --labels"),
    (["solve", "good.npz", "--alpha-out", "x.csv", "--history-out", "x.csv"],
     "--history-out and --alpha-out name the same file"),
    (["solve", "--labels", "labels.txt"], "without DATA the embedded digits"),
    (["solve", "no-y.npz"], "must hold y and either X (features) or K"),
    (["compare", "good.npz", "--plot", "good.npz"], "--plot good.npz is the input file DATA"),
    (["solve", "good.npz", "--alpha-out", "hard-link-to-good"], "is the input file DATA"),
    (["solve", "good.npz", "--history-out", "mine.txt"], "--history-out mine.txt exists; pass --force"),
    (["compare", "good.npz", "--plot", "x.xyz"], "unknown format '.xyz'; give one of"),
    pytest.param(["solve", "good.npz", "--alpha-out", "/proc/1/alpha.npy"], "cannot be written (no permission",
                 marks=pytest.mark.skipif(not os.path.isdir("/proc/1"), reason="needs Linux's /proc")),
    # root may write anywhere by os.access, but not into sysfs: only a real write tells
    pytest.param(["solve", "good.npz", "--alpha-out", "/sys/alpha.npy"], "cannot be written (no permission",
                 marks=pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux's /sys")),
    pytest.param(["figures", "--out", "/sys/kernel"], "cannot be written (no permission",
                 marks=pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux's /sys")),
    (["solve", "a.npy", "--labels", "three-labels.txt"], "--labels has 3 labels for the 4 points of DATA a.npy"),
])
def test_outputs_that_would_destroy_data_or_fail_are_refused_before_any_work(argv, message, capsys, tmp_path,
                                                                              monkeypatch):

    from indkernel.solvers import registry as solve_module
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    (tmp_path / "labels.txt").write_text("1\n-1\n1\n-1\n")
    (tmp_path / "three-labels.txt").write_text("1\n-1\n1\n")
    np.savez(tmp_path / "no-y.npz", K=np.eye(4))
    os.link(tmp_path / "good.npz", tmp_path / "hard-link-to-good")
    (tmp_path / "mine.txt").write_text("the user's notes")
    before = (tmp_path / "good.npz").read_bytes()
    monkeypatch.setattr(solve_module, "solve", lambda *a, **k: pytest.fail("the solve ran"))
    monkeypatch.setattr(solve_module, "compare", lambda *a, **k: pytest.fail("the comparison ran"))
    from indkernel import kernels
    from indkernel.reproduction import reproduce

    monkeypatch.setattr(kernels, "simpson", lambda *a, **k: pytest.fail("the similarity was computed"))
    monkeypatch.setattr(reproduce, "reproduce", lambda *a, **k: pytest.fail("the figures ran"))
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "cannot be read" not in err
    assert (tmp_path / "good.npz").read_bytes() == before


def test_a_data_directory_that_is_a_file_is_refused(capsys, tmp_path):
    (tmp_path / "a-file").write_text("")
    assert main(["datasets", "--data-dir", str(tmp_path / "a-file")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_outputs_are_written_under_the_names_given(capsys, tmp_path):
    np.savez(tmp_path / "good.npz", K=np.eye(4), y=[1, -1, 1, -1])
    alpha, history = tmp_path / "result.txt", tmp_path / "history"
    main(["solve", str(tmp_path / "good.npz"), "--quiet", "--alpha-out", str(alpha), "--history-out", str(history)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.npz", "history", "result.txt"]
    assert np.load(alpha).shape == (4,)
    assert list(pd.read_csv(history).columns) == ["iteration", "time", "lower", "upper", "gap", "scale"]


@pytest.mark.parametrize("option, value", [("--time-limit", "-1"), ("--time-limit", "nan"), ("--tol", "0"),
                                           ("--tol", "x")])
def test_bad_time_limit_or_tol_is_refused_by_the_parser_before_any_work(option, value, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["solve", option, value, "--quiet"])
    assert stopped.value.code == 2
    assert option in capsys.readouterr().err


def test_time_limit_reaches_the_solver_and_counts_the_setup(capsys):
    assert main(["solve", "--quiet", "--tol", "1e-12", "--time-limit", "1e-9"]) == 1
    assert "time_limit" in capsys.readouterr().out


def test_outputs_are_replaced_only_with_force_and_written_whole(tmp_path, monkeypatch, capsys):
    """An existing output is replaced only with --force; the new content goes to a temporary file
    beside it and is renamed over it, so a write that fails leaves the old file whole."""
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    (tmp_path / "alpha.npy").write_bytes(b"previous")
    argv = ["solve", "good.npz", "--alpha-out", "alpha.npy", "--quiet"]
    assert main(argv) == 2 and (tmp_path / "alpha.npy").read_bytes() == b"previous"

    def full_disk(file, array):
        file.write(b"half an arr")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "save", full_disk)
    assert main([*argv, "--force"]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert (tmp_path / "alpha.npy").read_bytes() == b"previous"
    assert not list(tmp_path.glob(".alpha.npy.*.tmp"))  # no temporary file left behind
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--force"]) in (0, 1)
    assert np.load(tmp_path / "alpha.npy").shape == (4,)


def test_ctrl_c_in_compare_keeps_what_finished(capsys, monkeypatch):
    """Ctrl-C during the second method: compare raises a KeyboardInterrupt that holds the table of
    what finished (the first method's bracket, "interrupted", "not run"); the CLI prints that table
    instead of a traceback and exits 130."""
    from indkernel.solvers import ComparisonInterrupted, compare, registry

    real, calls = registry.solve, []

    def interrupted(problem, method, **options):
        calls.append(method)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(problem, method, **options)

    monkeypatch.setattr(registry, "solve", interrupted)
    K0, y = load_digits_pair(4, 6)
    problem = SVMProblem(simpson(K0[:40]), y[:40])
    with pytest.raises(ComparisonInterrupted) as caught:
        compare(problem, methods=["newton", "apg", "pg"], tol=1e-4)
    table = caught.value.table
    assert list(table.status) == ["optimal", "interrupted", "not run"] and isinstance(caught.value, KeyboardInterrupt)
    assert table.lower[0] <= table.upper[0] and list(table.attrs["results"]) == ["newton"]
    calls.clear()
    assert main(["compare", "--methods", "newton", "apg", "pg", "--quiet"]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.out and "not run" in captured.out and "Traceback" not in captured.err


@pytest.mark.parametrize("flags, module, function", [
    ([], "experiments", "write_tables"), (["--rules"], "rule_comparison", "run"),
    (["--ablation"], "ablation", "write_ablation"), (["--multiclass"], "usps_multiclass", "write"),
])
def test_ctrl_c_in_tables_keeps_what_finished_and_exits_130(flags, module, function, capsys, tmp_path, monkeypatch):
    """As ``figures`` and ``compare``: a sentence saying the finished splits resume, exit 130, no
    traceback (it died of SIGINT)."""
    import importlib

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(f"indkernel.reproduction.{module}"), function, interrupted)
    assert main(["tables", *flags, "--quick", "--out", str(tmp_path), "--quiet"]) == 130
    err = capsys.readouterr().err
    assert "interrupted (Ctrl-C)" in err and "resumes" in err and "Traceback" not in err


def test_figures_refuse_to_replace_their_files_before_any_work(tmp_path, capsys, monkeypatch):
    from indkernel.reproduction import reproduce

    monkeypatch.setattr(reproduce, "reproduce", lambda *args, **kwargs: pytest.fail("work started"))
    (tmp_path / "timing_digits_quick.png").write_bytes(b"a user's figure")
    assert main(["figures", "--quick", "--out", str(tmp_path), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "timing_digits_quick.png" in error and "--force" in error
    assert (tmp_path / "timing_digits_quick.png").read_bytes() == b"a user's figure"


def test_an_interrupted_figure_keeps_its_finished_runs(tmp_path, capsys, monkeypatch):
    """Ctrl-C in the convergence figure's third run: its CSV holds the two runs that finished (it is
    rewritten whole after each), the PNG is not drawn, exit 130 with no traceback; the kept CSV is
    replaced only with --force."""
    import pandas as pd

    from indkernel.reproduction import reproduce

    calls, interrupt_after = [], [2 * (1 + len(reproduce.CONVERGENCE["quick"].methods))]  # a reference + the methods a run

    def history(problem, method, **options):
        calls.append(method)
        if len(calls) > interrupt_after[0]:
            raise KeyboardInterrupt
        rows = pd.DataFrame(dict(iteration=[0, 1], time=[0.0, 0.1], lower=[1.0, 2.0], upper=[4.0, 3.0],
                                 gap=[3.0, 1.0], scale=[1.0, 1.0]))
        return rows.assign(method=method), "optimal"

    monkeypatch.setattr(reproduce, "_history", history)
    argv = ["figures", "convergence", "--quick", "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and "convergence_digits_quick.csv" in captured.err
    assert "Traceback" not in captured.err
    csv, png = tmp_path / "convergence_digits_quick.csv", tmp_path / "convergence_digits_quick.png"
    assert sorted(pd.read_csv(csv).run.unique()) == [0, 1] and not png.exists()
    assert main(argv) == 2  # the kept runs are not replaced without --force
    interrupt_after[0] = 10**6
    assert main([*argv, "--force"]) == 0
    assert sorted(pd.read_csv(csv).run.unique()) == [0, 1, 2] and png.stat().st_size > 10_000


@pytest.mark.parametrize("flags, module, function", [
    ([], "experiments", "write_tables"),
    (["--rules"], "rule_comparison", "run"),
    (["--ablation"], "ablation", "write_ablation"),
    (["--multiclass"], "usps_multiclass", "write"),
])
def test_tables_replace_finished_tables_only_with_force(flags, module, function, capsys, tmp_path, monkeypatch):
    """Checked before any work: a folder holding a finished run's tables is refused without --force;
    a stopped run's part files alone are resumed without it; --datasets and --methods update."""
    import importlib

    run = importlib.import_module(f"indkernel.reproduction.{module}")
    calls = []
    monkeypatch.setattr(run, function, lambda out, **kwargs: calls.append(out) or {"markdown": "done"})
    out = tmp_path / "out"
    out.mkdir()
    (out / "USPS-3-5-SS-0.csv").write_text("a part of a stopped run\n")
    assert main(["tables", *flags, "--out", str(out), "--quiet"]) == 0 and calls == [out]
    (out / run.OUTPUTS[-1]).write_text("a finished run's table\n")
    assert main(["tables", *flags, "--out", str(out), "--quiet"]) == 2 and calls == [out]
    err = capsys.readouterr().err
    assert f"--out {out} holds {run.OUTPUTS[-1]}; pass --force to replace them" in err and "Traceback" not in err
    assert main(["tables", *flags, "--out", str(out), "--quiet", "--force"]) == 0 and calls == [out, out]
    if not flags:
        for update in (["--datasets", "a1a-sig"], ["--methods", "Mod SVM"]):
            assert main(["tables", *update, "--out", str(out), "--quiet"]) == 0
        assert len(calls) == 4
