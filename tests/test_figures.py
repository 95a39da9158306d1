"""Every script in figures/ runs its main(quick=True) on tiny data."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

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


@pytest.mark.slow  # a benchmark script's smoke run (3 s)
def test_oracle_benchmark_quick(paper_data):
    benchmark = load("oracle_benchmark")
    table = benchmark.main(quick=True)
    assert set(table.kernel) == {"USPS Simpson", "random indefinite"} and set(table.n) == {100, 200}
    assert (table.fallbacks == 0).all() and (table.rank_one > 0).all() and (table.eigh > 0).all()
    parts = benchmark.stages(sizes=(100, 600), repeats=3, pause=0.0)
    assert (parts[["secular equation", "eigenvector sums", "products with V0", "one_pass"]] > 0).all().all()
    assert parts.evaluations_per_root.between(1, 4).all()


def test_an_oracle_call_of_the_benchmark_is_one_point_with_its_free_certificate(monkeypatch):
    """The benchmarked call is what an iterate costs: one oracle point, the free bound (the tight
    one solves the machine on the fixed kernel: many products more)."""
    from problems import random_indefinite

    from indkernel import SVMProblem
    from indkernel.core import certificate

    def tight(*args, **kwargs):
        raise AssertionError("the benchmark timed the tight certificate")

    monkeypatch.setattr(certificate, "fixed_kernel_bound", tight)
    K0, y = random_indefinite(30, 0)
    problem = SVMProblem(K0, y, C=1.0, rho=1.0)
    points = [problem.project(np.full(30, 0.5)), problem.project(np.linspace(0, 1, 30))]
    call = load("oracle_benchmark").oracle_call(problem, points)
    for _ in points:
        call()


@pytest.mark.slow  # a benchmark script's smoke run (3 s)
def test_newton_stress_quick(tmp_path, capsys):
    """The stress family's benchmark on a few small problems of every pair: a row per run, its
    iterations and status, and the distribution printed."""
    table = load("newton_stress").main(quick=True, out=tmp_path / "newton_stress.csv")
    assert set(zip(table.machine, table.penalty, strict=True)) == {(m, p) for m in ("hinge", "squared_hinge", "svr", "one-class")
                                                      for p in ("frobenius", "mercer", "componentwise")}
    assert (table.iterations >= 0).all() and (tmp_path / "newton_stress.csv").is_file()
    printed = capsys.readouterr().out
    assert f"All {len(table)} runs: median {table.iterations.median():g}" in printed
    # the results page's table: a row per pair with its run count and its largest number of iterations
    for (machine, penalty), group in table.groupby(["machine", "penalty"]):
        assert f"| {machine} | {penalty} | {len(group)} |" in printed
        assert f"| {group.iterations.max()} |" in printed


def test_formed_solves_quick(capsys):
    """The formed kernel's solves inside tight checks, recorded on a few small problems of both
    families: libsvm's call never runs past its cap, a call stopped there is listed with
    what ran after it, and the recording leaves libsvm and the exact solves as they were."""
    from indkernel.core import fixed_kernel, machines

    fit, solves = machines.libsvm_fit, list(fixed_kernel.EXACT_SOLVES)
    table = load("formed_solves").main(quick=True)
    assert machines.libsvm_fit is fit and fixed_kernel.EXACT_SOLVES == solves
    calls = table[table.solve == f"libsvm {fixed_kernel.LIBSVM_TOLERANCE:g}"]
    assert len(calls) and (calls.per_point <= 2 * fixed_kernel.LIBSVM_CAP).all()  # (the SVR: two per point)
    printed = capsys.readouterr().out
    assert "active set" in printed and "interior point" in printed
    assert "hinge componentwise n=10 C=1e+06 seed=0: 100 per point" in printed


@pytest.mark.slow  # a benchmark script's smoke run (about 20 s: exchange and sdp for a sixth of their caps)
def test_compare_caps_quick(tmp_path, capsys):
    """The caps' benchmark: a row per method of COMPARE_TIME_LIMITS, the ratio of cap to slowest
    run, and the default call's total printed (whether each method reached tol within a sixth of
    its cap is the benchmark's measurement, not asserted here: a loaded machine may not)."""
    summary = load("compare_caps").main(quick=True, out=tmp_path / "compare_caps.csv")
    assert list(summary.index) == ["newton", "apg", "pg", "accpm", "exchange", "sdp"]
    default = summary[summary.default]
    assert (default.runs == 1).all() and (default.cap_over_slowest > 0).all()
    assert "the default call's caps add up to 53 s" in capsys.readouterr().out
    assert (tmp_path / "compare_caps.csv").is_file()


def test_field_benchmark_quick(tmp_path, capsys):
    """Every default method of the registry on the digits stand-in, two splits, resumable parts;
    the table marks one best per data set."""
    from indkernel.estimators.registry import BENCHMARK_METHODS

    runs = load("field_benchmark").main(quick=True, parts=tmp_path / "parts", out=tmp_path / "field.csv")
    assert set(runs.method) == set(BENCHMARK_METHODS) and runs.split.nunique() == 2
    assert (tmp_path / "parts" / "digits-3-5-SS" / "parts" / "split-1.csv").is_file()
    printed = capsys.readouterr().out
    assert printed.count("**") == 2 and "| Krein least squares |" in printed


@pytest.mark.slow
def test_solver_benchmark_quick():
    table = load("solver_benchmark").main(quick=True, cap=30.0)
    assert {"newton", "pg", "apg", "accpm", "exchange", "sdp"} <= set(table.method)
    for method in ("newton", "apg"):
        runs = table[table.method == method]
        assert (runs.status == "optimal").all() and runs["seconds_1e-06"].notna().all()


def test_thread_rule_measurement_restores_the_rule(paper_data):
    from indkernel.solvers import registry

    rule = registry.METHODS["accpm"]
    table = load("solver_benchmark").thread_rule(n=40, iterations=2, repeats=1)
    assert list(table.rule) == [True, False] and (table.iterations == 2).all() and (table.seconds > 0).all()
    assert registry.METHODS["accpm"] is rule


def test_tables_quick_on_digits(tmp_path):
    """The three tables end to end on the embedded digits over two random splits: every method,
    data set and split has a row, the files are written, the cells are mean ± sd, and the paired
    comparison agrees with a t statistic computed by hand from the per-split table."""
    from scipy.stats import t as student

    result = load("tables").main(quick=True, digits=True, out=tmp_path, quiet=True)
    performance = result["performance"]
    assert len(performance) == 6 * 3 * 2 and performance[["accuracy", "recall", "average"]].notna().all().all()
    assert set(performance.split) == {0, 1} and (performance.accuracy > 80).all(), performance
    assert set(result["perturb"].data) == {"unperturbed", "noisy"}
    assert {p.name for p in tmp_path.iterdir()} == {"data_stats.csv", "gen_performance.csv", "paired_comparison.csv",
                                                    "gen_performance_perturbSVM.csv", "runs.csv", "tables.md"}
    assert (result["stats"].lambda_min < 0).all()  # Simpson and tangent distance are indefinite
    assert " ± " in result["markdown"] and "--splits 2" in result["markdown"]
    comparison = result["comparison"]
    assert len(comparison) == 3 * 5 + 2 * 2  # 3 data sets x 5 baselines, 2 perturbed sets x 2 kinds of data
    for row in comparison[comparison.method == "Indefinite SVM"].itertuples():
        group = performance[performance.dataset == row.dataset]
        d = (group[group.method == row.method].set_index("split").average
             - group[group.method == row.baseline].set_index("split").average).to_numpy()
        assert row.mean_difference == pytest.approx(d.mean())
        if d.std() > 0:
            t = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
            assert row.p_value == pytest.approx(2 * student.sf(abs(t), len(d) - 1))
        else:
            assert np.isnan(row.p_value) and not row.significant


@pytest.mark.slow  # three quick tables runs (6 s); the one-method rerun below covers the mechanism quickly
def test_tables_rerun_some_data_sets_and_keep_the_other_rows(tmp_path):
    """``datasets=`` reruns only those rows: marked rows of the other data sets stay as they were in
    the folder, the rerun's rows are recomputed (equal to the first run's: the protocol is seeded),
    the paired comparison follows the merged rows, and the markdown names both commands."""
    import pandas as pd

    from indkernel.reproduction.experiments import write_tables

    first = write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1)
    performance = pd.read_csv(tmp_path / "gen_performance.csv")
    performance["accuracy"] = performance["average"] = -1.0  # a mark that only a rerun removes
    performance.to_csv(tmp_path / "gen_performance.csv", index=False)
    again = write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1,
                         datasets=["digits-3-5-SS", "digits-3-5-linear"])
    merged, rerun = again["performance"], again["performance"].dataset == "digits-3-5-SS"
    assert list(merged.dataset) == list(first["performance"].dataset)  # the rows keep their order
    np.testing.assert_array_equal(merged.accuracy[rerun], first["performance"].accuracy[rerun.to_numpy()])
    assert (merged.accuracy[~rerun] == -1.0).all()
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "gen_performance.csv"), merged.reset_index(drop=True))
    assert list(pd.read_csv(tmp_path / "runs.csv").datasets) == ["all", "digits-3-5-SS digits-3-5-linear"]
    assert "the rows of digits-3-5-SS, digits-3-5-linear rerun by `indkernel tables --quick --digits --splits 1 " \
        "--datasets digits-3-5-SS digits-3-5-linear`" in again["markdown"]
    differences = again["comparison"].set_index(["dataset", "baseline"]).mean_difference
    assert (differences["digits-3-5-TD1"] == 0.0).all() and (differences["digits-3-5-SS"] != 0.0).any()
    with pytest.raises(ValueError, match="same mode, data and --splits 1"):
        write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=2, datasets=["digits-3-5-SS"])
    with pytest.raises(ValueError, match="run the whole tables into it first"):
        write_tables(tmp_path / "empty", quick=True, digits=True, quiet=True, datasets=["digits-3-5-SS"])
    with pytest.raises(ValueError, match="datasets must be distinct names among digits-3-5-SS"):
        write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1, datasets=["a1a-sig"])


@pytest.mark.slow  # three quick tables runs (6 s); test_tables_quick_on_digits covers the tables quickly
def test_tables_rerun_one_method_and_keep_the_other_cells(tmp_path):
    """``methods=`` reruns only those methods' cells of table:gen_performance: the other methods'
    cells and the perturbation table stay as they were in the folder (marked), the rerun's cells and
    the data-stats rows (Indefinite SVM's chosen similarity) are recomputed, equal to the first
    run's (the protocol is seeded per split), and the markdown names the command."""
    import pandas as pd

    from indkernel.reproduction.experiments import write_tables

    first = write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1)
    for name, column in (("gen_performance.csv", "accuracy"), ("gen_performance_perturbSVM.csv", "accuracy"),
                         ("data_stats.csv", "lambda_min")):
        table = pd.read_csv(tmp_path / name)
        table[column] = -1.0  # a mark that only a rerun removes
        table.to_csv(tmp_path / name, index=False)
    again = write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1, methods=["Indefinite SVM"])
    merged, rerun = again["performance"], again["performance"].method == "Indefinite SVM"
    assert list(merged[["dataset", "method"]].itertuples(index=False)) == \
        list(first["performance"][["dataset", "method"]].itertuples(index=False))  # the cells keep their order
    np.testing.assert_array_equal(merged.accuracy[rerun], first["performance"].accuracy[rerun.to_numpy()])
    assert rerun.sum() == 3 and (merged.accuracy[~rerun] == -1.0).all()
    np.testing.assert_array_equal(again["stats"].lambda_min, first["stats"].lambda_min)
    assert (again["perturb"].accuracy == -1.0).all()
    assert list(pd.read_csv(tmp_path / "runs.csv").methods) == ["all", "Indefinite SVM"]
    assert "the Indefinite SVM cells of every data set rerun by `indkernel tables --quick --digits --splits 1 " \
        "--methods 'Indefinite SVM'`" in again["markdown"]
    baseline = write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1, methods=["Denoise"])
    pd.testing.assert_frame_equal(baseline["stats"], again["stats"])  # no Indefinite SVM: its rows kept, as they were
    assert "| digits-3-5-SS | " + f"{int(first['stats'].train[0])} |" in baseline["markdown"]
    with pytest.raises(ValueError, match="methods must be distinct names among Denoise, Flip"):
        write_tables(tmp_path, quick=True, digits=True, quiet=True, splits=1, methods=["Indefinite"])
    with pytest.raises(ValueError, match="run the whole tables into it first"):
        write_tables(tmp_path / "empty", quick=True, digits=True, quiet=True, methods=["Mod SVM"])


@pytest.mark.slow  # the quick tables on the paper's data sets; the digits one runs in the quick suite
def test_tables_quick_on_the_papers_data(tmp_path, paper_data):
    """One quick pass over the paper's data sets (CI has them; elsewhere their tiny stand-ins), with
    the paper's numbers beside ours."""
    # one process: the stand-ins' checksums are registered in this one (the digits test runs the splits in two)
    result = load("tables").main(quick=True, out=tmp_path, quiet=True, n_jobs=1, performance_sets=["german-sig"],
                                 perturb_sets=["USPS-3-5-linear"])
    assert "| german-sig | accuracy |" in result["markdown"] and "(62.80 " in result["markdown"]
    assert "(96.25 " in result["markdown"]


@pytest.mark.slow
def test_convergence_and_timing_quick(tmp_path):
    """fig:convergence_figures and fig:time_figures on the embedded digits, by the README's first
    command (``indkernel figures --quick``): both PNGs and nothing else are written, the CSV holds
    every run of every method (and nothing else), the certified gaps never increase within a run,
    and the suboptimality's reference p̂ is a certified upper bound that some run's lower bound
    meets to 1e-6."""
    import pandas as pd

    from indkernel.cli import main

    assert main(["figures", "--quick", "--out", str(tmp_path), "--quiet"]) == 0
    pngs = {name: tmp_path / f"{name}_digits_quick.png" for name in ("convergence", "timing")}
    assert set(tmp_path.glob("*.png")) == set(pngs.values())
    for name, methods in (("convergence", {"pg", "accpm-paper", "accpm", "exchange", "apg", "newton"}),
                          ("timing", {"pg", "accpm", "exchange", "apg", "newton"})):
        png = pngs[name]
        assert png.is_file() and png.stat().st_size > 10_000
        table = pd.read_csv(png.with_suffix(".csv"))
        assert set(table.method) == methods and {"run", "iteration", "time", "lower", "upper", "gap"} <= set(table)
        keys = [c for c in ("method", "run", "n", "rho") if c in table]
        assert all((group.gap.diff().dropna() <= 1e-12).all() for _, group in table.groupby(keys))
    timing = pd.read_csv(pngs["timing"].with_suffix(".csv"))  # the untimed warm-up solves are not in it
    assert len(timing.groupby(["method", "n", "rho", "run"])) == 5 * 2 * 2
    convergence = pd.read_csv(pngs["convergence"].with_suffix(".csv"))
    # one row per iteration, every method from the same start (iteration 0), each to its cap
    assert (convergence.groupby(["method", "run"]).iteration.apply(lambda i: i.is_unique and i.iloc[0] == 0)).all()
    starts = convergence[convergence.iteration == 0].groupby("run").lower
    assert (starts.max() - starts.min() <= 1e-9 * starts.max().abs()).all()
    last = convergence.groupby("method").iteration.max()
    assert last.drop("newton").to_dict() == {"pg": 60, "accpm-paper": 60, "accpm": 60, "exchange": 5, "apg": 60}
    assert last["newton"] <= 12  # projected Newton ends at round-off
    for _, run in convergence.groupby("run"):
        p_hat = run.p_hat.iloc[0]
        assert (run.p_hat == p_hat).all() and p_hat <= run.upper.min() and (run.lower <= p_hat).all()
        assert p_hat - run.lower.max() <= 1e-6 * abs(p_hat)
    # the results page's means: the geometric mean over runs of each gap at an iteration
    from indkernel.reproduction.reproduce import convergence_summary

    summary = convergence_summary(convergence, iterations=(10,)).set_index("method")
    for method, group in convergence.groupby("method"):
        last = group[group.iteration <= 10].groupby("run").gap.last().clip(lower=1e-16)
        assert summary.loc[method, "gap_10"] == pytest.approx(np.exp(np.mean(np.log(last))), rel=1e-9)


@pytest.mark.slow  # the SDP references, four methods and the quick convergence figure (about a minute)
def test_the_researchers_notebook_runs_from_the_public_api(tmp_path, monkeypatch):
    """docs/verify_gaps.ipynb executes top to bottom outside the repository (its cells assert the
    certified brackets: every certificate holds the references' p*, verify agrees, every method
    of the comparison is optimal), prints no warning, and shows its table and both figures, and
    its progress bars as one line of text each (a display updated in place: an exported copy
    shows it too), neither widgets nor a line of stderr per refresh."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")  # as CI sets it: the notebook must still show its figures inline
    path = FIGURES.parent / "docs" / "verify_gaps.ipynb"
    notebook = nbformat.read(path, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")  # stored clean
    sources = "".join(cell.source for cell in notebook.cells)
    assert "indkernel.reproduction.reproduce import reproduce" in sources and "_" + "validation" not in sources
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    streams = "".join(o.get("text", "") for o in outputs if o.output_type == "stream" and o.name == "stderr")
    assert "Warning" not in streams, streams
    text = "".join(o.get("text", "") for o in outputs)
    assert "p* in [" in text and text.count("holds p*: True") == 3
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # the comparison's gaps and the convergence figure
    assert any("Verification(agree=True" in o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "pg's check at iteration 10:" in text  # the callback's second check
    # progress: one line of text per bar (newton's, the figure's), no widget, nothing on stderr
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    shown = [o.data["text/plain"] for o in outputs if o.output_type == "display_data" and "text/plain" in o.data]
    assert any(line.startswith("convergence: 100%") for line in shown) and "\r" not in "".join(shown), shown
    assert "it/s" not in streams and "%|" not in streams, streams


def test_kernel_times_quick():
    table = load("kernel_times").main(quick=True)
    assert len(table) == 5 and (table[["full", "train", "test_train"]] > 0).all().all()


@pytest.mark.slow  # a benchmark script's smoke run (2 s, and two worker processes)
def test_model_selection_quick(tmp_path, capsys):
    """The grid-search benchmark on the digits with a 2 × 2 grid: a row per search, the ratios to
    denoise's search in the same setting (one process, or two workers), every fit certified, the
    CSV written, how far the goal is and the floor under it (36 fits at the grid's first point)."""
    table = load("model_selection").main(1, quick=True, out=tmp_path / "model_selection.csv").set_index("search")
    grids = table[table.index.str.startswith("indefinite")]
    printed = capsys.readouterr().out
    assert (f"goal 6x denoise's grid: met by {int((grids.ratio_max <= 6).sum())} of {len(grids)} (data set, search) "
            "pairs") in printed
    point = table.loc["point: indefinite"]
    assert f"36 fits at the grid's first point would cost {6 * point.ratio_min:.1f}-{6 * point.ratio_max:.1f}x" in printed
    assert "the grid's first point (C=1, rho=0.1): " in printed
    assert list(table.index) == ["denoise", "indefinite", "indefinite, no store", "indefinite, warm path",
                                 "denoise, n_jobs=2", "indefinite, n_jobs=2", "indefinite, warm path, n_jobs=2",
                                 "fit: denoise", "fit: indefinite", "point: denoise", "point: indefinite"]
    for baseline in ("denoise", "denoise, n_jobs=2", "fit: denoise", "point: denoise"):
        assert table.ratio_min[baseline] == table.ratio_max[baseline] == 1.0
    assert point.seconds_max < table.seconds_min["indefinite"]  # one fit, a grid
    parallel = table.loc["indefinite, n_jobs=2"]
    assert parallel.ratio_min == pytest.approx(parallel.seconds_min / table.seconds_min["denoise, n_jobs=2"])  # one repeat
    assert table.seconds_min["fit: indefinite"] < table.seconds_min["indefinite"]  # one fit, a grid
    assert (table.seconds_min > 0).all()
    assert (table.fits_short_of_tol == 0).all() and (tmp_path / "model_selection.csv").is_file()


def test_warm_starts_quick(tmp_path):
    """Cold against warm projected Newton along a 2 × 2 grid on the digits: both certified brackets
    of every point meet, every solve iterated, the CSV is written."""
    table = load("warm_starts").main(1, quick=True, out=tmp_path / "warm_starts.csv")
    row = table.iloc[0]
    assert len(table) == 1 and row.points == 3 and row.disjoint_brackets == 0
    assert row.cold_iterations > 0 and row.warm_iterations > 0 and row.cold_seconds > 0
    assert (tmp_path / "warm_starts.csv").is_file()


def test_the_paper_figures_redrawn_share_one_colour_per_method_and_keep_legends_off_the_data(tmp_path, monkeypatch):
    """``redraw`` draws both committed figures again from their CSVs: every method has the colour
    of ``COLORS`` in both, the legend is the figure's (below the panels), no axes carries one."""
    import shutil

    import matplotlib.colors
    import matplotlib.figure

    from indkernel.reproduction.reproduce import COLORS, LABELS, redraw

    drawn, savefig = [], matplotlib.figure.Figure.savefig

    def keep(figure, *args, **kwargs):
        drawn.append(figure)
        return savefig(figure, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    for name in ("convergence_usps_full.csv", "timing_usps_full.csv"):
        shutil.copy(FIGURES / name, tmp_path / name)
        assert redraw(tmp_path / name).stat().st_size > 10_000
    method_of = {label: method for method, label in LABELS.items()}
    for figure in drawn:
        assert len(figure.legends) == 1 and all(ax.get_legend() is None for ax in figure.axes)
        colours = {h.get_label(): h.get_color() for h in figure.legends[0].legend_handles
                   if h.get_label() in method_of}
        assert {"projected gradient (paper)", "projected Newton (ours)"} <= set(colours)
        for label, colour in colours.items():
            assert matplotlib.colors.same_color(colour, COLORS[method_of[label]]), label
    with pytest.raises(ValueError, match="convergence or timing"):
        redraw(tmp_path / "other_usps_full.csv")


@pytest.mark.slow  # a benchmark script's smoke run (2 s)
def test_the_oracle_thread_rule_is_measured_in_both_states_and_left_as_it_was(paper_data, capsys, monkeypatch):
    from indkernel.core import threads

    speed = load("certified_speed")
    monkeypatch.setattr(speed, "REST", 0.01)
    threaded_fits = []  # per fit: whether the size rule gave its n the oracle's threads

    class Recorded(speed.IndefiniteSVC):
        def fit(self, X, y):
            threaded_fits.append(len(y) >= threads.PARALLEL_FROM)
            return super().fit(X, y)

    monkeypatch.setattr(speed, "IndefiniteSVC", Recorded)
    rule = threads.PARALLEL_FROM
    speed.parallel_from([40, 60], repeats=1)
    assert threads.PARALLEL_FROM == rule
    # each (n, state): a warm-up pair, then one fit each way
    assert threaded_fits == [False, True, True, False] * 4
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"n = {n}, {state}" for n in (40, 60)
                                                      for state in ("right after the kernel", "after rest")]
    for line in lines:
        threaded, one, ratio = (float(x) for x in re.findall(r"(\d+\.\d+)(?: ms|$)", line))
        assert threaded > 0 and one > 0 and ratio == pytest.approx(threaded / one, rel=0.02)


@pytest.mark.slow
def test_small_fits_quick(tmp_path, capsys):
    """The single-fit benchmark on two small cases: both thread settings (the one-thread one in a
    child process), the ratios of the medians, the CSV and the profile summary."""
    table = load("small_fits").main(quick=True, out=tmp_path / "small_fits.csv")
    assert list(table.threads) == ["default", "default", "one", "one"] and list(table.n) == [50, 120, 50, 120]
    assert (table.indefinite_ms > 0).all() and (table.denoise_ms > 0).all()
    np.testing.assert_allclose(table.ratio, table.indefinite_ms / table.denoise_ms, rtol=0.02)
    assert (table.ratio_min <= table.ratio_max).all() and (tmp_path / "small_fits.csv").is_file()
    printed = capsys.readouterr().out
    assert "profile of the default fit" in printed and "tottime" in printed
    # how far each goal is: the binary case at n = 50 and the four-class one, each with its cases and largest ratio
    binary, four = table[table.n == 50], table[table.n == 120]
    assert (f"goal 2x (binary, n <= 250): met in {int((binary.ratio <= 2).sum())} of 2 cases, largest ratio "
            f"{binary.ratio.max():.2f}") in printed
    assert f"goal 3x (four classes): met in {int((four.ratio <= 3).sum())} of 2 cases" in printed
