"""The paper's convergence and timing figures (``fig:convergence_figures``, ``fig:time_figures``).

Each figure first computes a long table, one row per certificate of every run (method, run,
iteration, time, lower, upper, gap, plus the run's setting), saves it as CSV, then draws a PNG
from the CSV alone. ``dataset="digits"`` uses the embedded digits 3 vs 5
(365 images), ``"usps"`` USPS 3 vs 5 (1540 images, from the data directory); the similarity is
the Simpson score. Gaps are absolute, certified, and the best so far in each run.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from .. import datasets, kernels
from .._files import write_whole
from .._progress import tqdm
from ..core.rank_one import compile_oracle
from ..core.svm_problem import SVMProblem
from ..solvers.accpm import PAPER
from ..solvers.registry import STYLES as solver_styles
from ..solvers.registry import draw_style, solve

#: Display names of the methods, as in the paper.
LABELS = {"pg": "projected gradient (paper)", "accpm-paper": "ACCPM (paper)",
          "accpm": "ACCPM, deep cuts and proximal center (ours)", "exchange": "exchange, MKL master (ours)",
          "apg": "accelerated gradient (ours)", "newton": "projected Newton (ours)"}
#: One colour per method in every figure.
COLORS = {"pg": "tab:blue", "accpm-paper": "tab:orange", "accpm": "tab:green", "exchange": "tab:brown",
          "apg": "tab:red", "newton": "tab:purple"}
#: One line style and marker per method (the solvers' own, and the paper's ACCPM), so the figures
#: read in print too.
STYLES = {**solver_styles, "accpm-paper": dict(linestyle=(0, (3, 1, 1, 1, 1, 1)), marker="x")}
#: The data sets' names in the titles.
DATA_NAMES = {"digits": "scikit-learn's digits 3 vs 5", "usps": "USPS 3 vs 5"}
#: Figure names of method variants: (method, options of ``solve``).
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {"accpm-paper": ("accpm", PAPER),
                                                    "exchange": ("exchange", {"master": "mkl"})}


@dataclass(frozen=True)
class ConvergenceSetting:
    """``fig:convergence_figures``: ``runs`` random subsets of ``n`` points, every method run for
    ``iterations`` iterations without stopping (the paper: "the codes were not stopped") unless only
    round-off keeps its gap open; every certified iterate of every method gets the same
    certificate, the tight one (``bound="tight"``: the machine on the fixed K*(α) solved, the
    paper's criterion, :meth:`IndefiniteProblem.certify`), so the curves show the method, not a
    refinement schedule. The projected gradient certifies every ``pg_check_every``-th iterate (the
    quick figure every one; the full figure every 10th, as the authors' code checks: near the
    optimum a tight certificate at n = 100 costs up to seconds, hundreds of times a step).
    The suboptimality is measured against ``p̂``, the smallest certified upper bound of any run on
    the subset, a projected Newton run of ``reference_iterations`` included. ``shorter``: methods
    run for fewer iterations, by name (the exchange method, whose MKL master takes half a second a
    round at n = 40)."""

    n: int
    runs: int
    iterations: int
    C: float = 10.0
    rho: float = 1.0
    methods: tuple = ("pg", "accpm-paper", "accpm", "exchange", "apg", "newton")
    reference_iterations: int = 100
    shorter: dict = field(default_factory=dict)
    pg_check_every: int = 1


@dataclass(frozen=True)
class TimingSetting:
    """``fig:time_figures``: time to an absolute certified gap of ``tol`` (the paper's 0.1) against n,
    ``runs`` subsets per size and ρ, C = 10; ACCPM up to ``accpm_max_n``, exchange up to
    ``exchange_max_n`` (as the paper); each run stops at ``time_limit`` seconds (hollow markers in the
    plot: the mean time is then a lower bound)."""

    sizes: tuple
    runs: int
    rhos: tuple = (0.1, 1.0, 10.0)
    tol: float = 0.1
    C: float = 10.0
    time_limit: float = 10.0
    accpm_max_n: int = 500
    exchange_max_n: int = 300
    methods: tuple = ("pg", "accpm", "exchange", "apg", "newton")


CONVERGENCE = {"quick": ConvergenceSetting(n=40, runs=3, iterations=60, shorter={"exchange": 5}),
               "full": ConvergenceSetting(n=100, runs=10, iterations=500, shorter={"exchange": 100}, pg_check_every=10)}
TIMING = {"quick": TimingSetting(sizes=(20, 40), runs=2, rhos=(1.0,), time_limit=5.0),
          "full": TimingSetting(sizes=(50, 100, 200, 300, 500, 767), runs=10, time_limit=5.0)}


def _images(dataset: str, data_dir=None) -> tuple[np.ndarray, np.ndarray]:
    if dataset == "digits":
        return datasets.load_digits_pair(3, 5)
    if dataset == "usps":
        return datasets.load_usps((3, 5), data_dir)
    raise ValueError(f"dataset must be 'digits' (embedded) or 'usps' (USPS 3 vs 5); got {dataset!r}")


def _subset_problem(X, y, n: int, seed: int, C: float, rho: float) -> SVMProblem:
    if n > len(y):
        raise ValueError(f"n = {n} exceeds the {len(y)} images of this data set")
    pick = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return SVMProblem(kernels.simpson(X[pick]), y[pick], C=C, rho=rho)


def _history(problem: SVMProblem, method: str, **options) -> tuple[pd.DataFrame, str]:
    """The history of a run of ``method`` (a name of ``solve`` or of :data:`VARIANTS`) and its status."""
    name, variant = VARIANTS.get(method, (method, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # runs that stop at their cap are expected here
        result = solve(problem, name, **variant, **options)
    history = result.history
    if history.empty:  # stopped before its first certificate (a first master solve over the time limit)
        history = pd.DataFrame([dict(iteration=result.iterations, time=result.seconds, lower=np.nan, upper=np.nan,
                                     gap=np.nan, scale=np.nan)])
    return history.assign(method=method), result.status


def convergence_table(setting: ConvergenceSetting, dataset: str = "digits", data_dir=None,
                      quiet: bool = False, save: Callable[[pd.DataFrame], None] = lambda table: None) -> pd.DataFrame:
    """One row per iteration of every run: method, run, iteration, time, lower, upper, gap, and
    ``p_hat``, the smallest certified upper bound on the run's subset (of every method's run and
    of a long projected Newton run), so ``p_hat - lower >= p* - f(α)`` is the certified suboptimality.
    ``save`` gets the table of the runs finished so far after each run."""
    X, y = _images(dataset, data_dir)
    frames = []
    compile_oracle()  # before the bar: its first step's time, hence its estimate, is the runs' alone
    with tqdm(total=setting.runs * len(setting.methods), disable=quiet, desc="convergence") as bar:
        for run in range(setting.runs):
            problem = _subset_problem(X, y, setting.n, run, setting.C, setting.rho)
            reference, _ = _history(problem, "newton", tol=1e-14, absolute=True,
                                    max_iter=setting.reference_iterations, bound="refined")
            histories = []
            for method in setting.methods:
                options = dict(check_every=setting.pg_check_every) if method == "pg" else {}
                cap = setting.shorter.get(method, setting.iterations)
                history, _ = _history(problem, method, tol=1e-12, absolute=True, max_iter=cap,
                                      bound="tight", **options)
                histories.append(history.assign(run=run, n=setting.n))
                bar.update()
            p_hat = min(float(h.upper.min()) for h in [reference, *histories])
            frames += [h.assign(p_hat=p_hat) for h in histories]  # one row per iteration, 0 (the shared start) to the cap
            save(pd.concat(frames, ignore_index=True))
    return pd.concat(frames, ignore_index=True)


def timing_table(setting: TimingSetting, dataset: str = "digits", data_dir=None, quiet: bool = False,
                 save: Callable[[pd.DataFrame], None] = lambda table: None) -> pd.DataFrame:
    """One row per certificate of every run: method, rho, n, run, iteration, time, lower, upper,
    gap, and the run's final status ("optimal" when the absolute gap reached ``tol``). ``save``
    gets the table of the runs finished so far after each run."""
    X, y = _images(dataset, data_dir)
    limits = {"accpm": setting.accpm_max_n, "exchange": setting.exchange_max_n}
    jobs = [(n, rho, run, method) for n in setting.sizes for rho in setting.rhos for run in range(setting.runs)
            for method in setting.methods if n <= limits.get(method, n)]
    warm_up = _subset_problem(X, y, min(setting.sizes), 0, setting.C, 1.0)
    for method in setting.methods:  # the first solve loads compiled code and solver back ends: keep it untimed
        _history(warm_up, method, tol=setting.tol, absolute=True, max_iter=3)
    frames = []
    for n, rho, run, method in tqdm(jobs, disable=quiet, desc="timing"):
        problem = _subset_problem(X, y, n, run, setting.C, rho)
        history, status = _history(problem, method, tol=setting.tol, absolute=True, time_limit=setting.time_limit)
        frames.append(history.assign(rho=rho, n=n, run=run, status=status))
        save(pd.concat(frames, ignore_index=True))
    return pd.concat(frames, ignore_index=True)


def _mean_log(group: pd.DataFrame, values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Mean and standard deviation over runs of log10(values) per iteration; a run that ended early
    (at its round-off floor) keeps its last value, and of two certificates at one iteration (ACCPM's
    center, then its check) the later one counts: the run's bracket after that iteration."""
    logs = np.log10(group.assign(value=values.clip(lower=1e-16))
                    .pivot_table(index="iteration", columns="run", values="value", aggfunc="last").ffill())
    return logs.mean(axis=1), logs.std(axis=1).fillna(0.0)


def convergence_summary(table: pd.DataFrame, iterations=(100, 500)) -> pd.DataFrame:
    """Per method: ``10**mean(log10)`` over the runs of the certified gap and of ``p̂ - f(α)`` at
    each of ``iterations`` (as the figure's solid lines; a run that ended earlier keeps its last
    value), and the last iteration any run reached."""
    rows = []
    for method, group in table.groupby("method", sort=False):
        row: dict = dict(method=method, last_iteration=int(group.iteration.max()))
        for name, values in (("gap", group.gap), ("suboptimality", group.p_hat - group.lower)):
            mean, _ = _mean_log(group, values)
            for k in iterations:
                row[f"{name}_{k}"] = float(10 ** mean.loc[:k].iloc[-1])
        rows.append(row)
    return pd.DataFrame(rows)


def plot_convergence(table: pd.DataFrame, path: Path) -> None:
    """Two panels against iteration (semilog), one colour, line style and marker per method
    (:data:`COLORS`, :data:`STYLES`; each method's markers shifted, so curves drawn over each
    other show all their markers), every curve from the start all methods share (iteration 0):
    the certified gap, and the certified suboptimality ``p̂ - f(α)`` of the best point (``p̂`` the
    smallest certified upper bound on the subset); the mean of log10 over runs, shaded at ± one
    standard deviation; the data set (from the CSV's name) and n in the title; the legend below."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharex=True)
    groups = list(table.groupby("method", sort=False))
    for k, (method, group) in enumerate(groups):
        for ax, values in zip(axes, (group.gap, group.p_hat - group.lower), strict=True):
            mean, std = _mean_log(group, values)
            ax.semilogy(mean.index, 10 ** mean, color=COLORS.get(method), label=LABELS.get(method, method),
                        **draw_style(STYLES.get(method, {}), len(mean), shift=k / len(groups)))
            ax.fill_between(mean.index, 10 ** (mean - std), 10 ** (mean + std), color=COLORS.get(method), alpha=0.12,
                            linewidth=0)
    n, runs = int(table.n.iloc[0]), table.run.nunique()
    axes[0].set(xlabel="iteration", ylabel="certified duality gap", title="certified gap (tight at every certified iterate)")
    axes[1].set(xlabel="iteration", ylabel="p̂ − f(α)",
                title="suboptimality against p̂, the best certified upper bound")
    fig.suptitle(f"Convergence on {_data_name(path)}, Simpson kernel: {runs} random subsets of n = {n}, "
                 "mean ± 1 std (shaded)")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    write_whole(path, lambda file: fig.savefig(file, dpi=120, format="png"))
    plt.close(fig)


def _data_name(path: Path) -> str:
    """The data set of a figure, from its file's name ``<figure>_<dataset>_<mode>``."""
    parts = Path(path).stem.split("_")
    return DATA_NAMES.get(parts[1], parts[1]) if len(parts) == 3 else "the data"


def timing_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method, ρ and n: mean total seconds, mean seconds per iteration, runs that reached the
    gap and runs in all."""
    runs = table.groupby(["method", "rho", "n", "run"]).agg(seconds=("time", "max"), iterations=("iteration", "max"),
                                                            status=("status", "first")).reset_index()
    runs["per_iteration"] = runs.seconds / runs.iterations.clip(lower=1)
    return runs.groupby(["method", "rho", "n"]).agg(
        seconds=("seconds", "mean"), per_iteration=("per_iteration", "mean"),
        reached=("status", lambda s: int((s == "optimal").sum())), runs=("status", "size")).reset_index()


def plot_timing(table: pd.DataFrame, path: Path) -> None:
    """Total time and time per iteration against n (log-log), one colour and marker per method
    (:data:`COLORS`, :data:`STYLES`), one line style per ρ; hollow markers where some run stopped
    at the time limit before the gap; the data set and sizes in the title, the legend below the
    panels, the measured n as plain tick labels."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullFormatter

    summary = timing_summary(table)
    styles = dict(zip(sorted(summary.rho.unique()), ["-", "--", ":", "-."], strict=False))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
    for (method, rho), group in summary.groupby(["method", "rho"]):
        color, marker = COLORS.get(method), STYLES.get(method, {}).get("marker", "o")
        for ax, column in zip(axes, ("seconds", "per_iteration"), strict=True):
            ax.loglog(group.n, group[column], styles[rho], color=color)
            capped = group.reached < group.runs
            ax.loglog(group.n[~capped], group[column][~capped], marker, color=color, markersize=5, linestyle="")
            ax.loglog(group.n[capped], group[column][capped], marker, mfc="none", color=color, markersize=7,
                      linestyle="")
    axes[0].set(xlabel="n", ylabel="total seconds (mean over runs)", title="time to an absolute gap of 0.1")
    axes[1].set(xlabel="n", ylabel="seconds per iteration (mean)", title="average time per iteration")
    sizes = sorted(summary.n.unique())
    fig.suptitle(f"Timing on {_data_name(path)}, Simpson kernel, C = 10: n from {sizes[0]} to {sizes[-1]}, "
                 f"{int(summary.runs.max())} random subsets each")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xticks(sizes, [str(size) for size in sizes])
        ax.xaxis.set_minor_formatter(NullFormatter())
    methods = [m for m in COLORS if m in set(summary.method)]
    handles = [Line2D([], [], color=COLORS[m], marker=STYLES.get(m, {}).get("marker", "o"), label=LABELS.get(m, m))
               for m in methods]
    handles += [Line2D([], [], color="black", linestyle=style, label=f"ρ = {rho:g}") for rho, style in styles.items()]
    handles += [Line2D([], [], color="black", marker="o", mfc="none", linestyle="", label="some run hit the time cap")]
    fig.legend(handles=handles, loc="lower center", ncol=4, frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    write_whole(path, lambda file: fig.savefig(file, dpi=120, format="png"))
    plt.close(fig)


FIGURES: dict[str, tuple[dict, Callable[..., pd.DataFrame], Callable[..., None]]] = {"convergence": (CONVERGENCE, convergence_table, plot_convergence),
           "timing": (TIMING, timing_table, plot_timing)}


def redraw(csv: Path) -> Path:
    """Draw the figure of a saved ``<figure>_<dataset>_<mode>.csv`` again (beside it, ``.png``)."""
    csv = Path(csv)
    name = csv.stem.split("_")[0]
    if name not in FIGURES or not csv.is_file():
        raise ValueError(f"csv must be an existing {' or '.join(FIGURES)}_<dataset>_<mode>.csv file; got {csv}")
    FIGURES[name][2](pd.read_csv(csv), csv.with_suffix(".png"))
    return csv.with_suffix(".png")


def outputs(which: str, mode: str, dataset: str, out) -> dict[str, Path]:
    """The CSV of each figure :func:`reproduce` writes (its PNG beside it, same stem)."""
    if which not in (*FIGURES, "all"):
        raise ValueError(f"which must be one of {sorted(FIGURES)} or 'all'; got {which!r}")
    if mode not in ("quick", "full"):
        raise ValueError(f"mode must be 'quick' or 'full'; got {mode!r}")
    return {name: Path(out) / f"{name}_{dataset}_{mode}.csv" for name in (FIGURES if which == "all" else (which,))}


def reproduce(which: str = "all", *, mode: str = "quick", dataset: str = "digits", out=".", data_dir=None,
              quiet: bool = False) -> dict[str, Path]:
    """Compute, save (``<name>_<dataset>_<mode>.csv``) and draw (``.png``) the figures; returns the
    PNG paths by figure name. ``which`` is "convergence", "timing" or "all"; ``mode`` "quick" or "full".

    The CSV is rewritten whole after every finished run (:func:`indkernel._files.write_whole`), so
    an interrupted run leaves the runs that finished; the PNG is drawn once the figure's runs are all
    done (``redraw`` draws one from any CSV)."""
    csvs = outputs(which, mode, dataset, out)
    Path(out).mkdir(parents=True, exist_ok=True)
    written = {}
    for name, csv in csvs.items():
        settings, compute, _ = FIGURES[name]

        def save(table: pd.DataFrame, csv: Path = csv) -> None:
            write_whole(csv, lambda file: table.to_csv(file, index=False), mode="w")

        save(compute(settings[mode], dataset, data_dir, quiet, save=save))
        written[name] = redraw(csv)
    return written
