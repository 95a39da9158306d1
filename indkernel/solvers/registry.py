"""One way in: ``solve(problem, method=...)`` and ``compare(problem, methods=...)``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from ..core import rank_one
from ..core.problem import IndefiniteProblem
from ..core.threads import at_most, limited_threads, threads_for
from .accelerated_gradient import accelerated_gradient
from .accpm import accpm
from .direct_sdp import SDP_MAX_N, direct_sdp
from .direct_sdp import refusal as sdp_refusal
from .exchange import exchange
from .models import model_refusal
from .projected_gradient import projected_gradient
from .projected_newton import projected_newton
from .result import SolveResult
from .tracking import CheckState, Run, SolveError, _positive_int, iteration_cap


@dataclass(frozen=True)
class Method:
    """What the registry knows of a method: everything :func:`solve` decides by the method's name.

    Attributes
    ----------
    function : the method, ``function(problem, run, **options)`` (it drives the :class:`Run`).
    max_iter : int, the iteration cap unless ``solve(max_iter=...)`` says otherwise.
    check_bound : str
        The bound of its checks unless ``solve(bound=...)`` says otherwise (a run that does not
        converge with it ends with the tight one). The paper's projected gradient checks every 10
        iterations as the paper does, and ACCPM every 10th center as the authors' code, both with
        the refined bound escalated to the tight one (the paper's natural bound) where that could
        end the run (:meth:`Run.check <indkernel.solvers.tracking.Run.check>`): pg stops where
        tight checks would (``tests/test_projected_gradient.py``), at the refined bound's price
        where the tight one could not end it; the methods
        that certify every iterate use the cheaper bounds, the refined one (the exchange method's
        masters, apg's cheap steps) or the free one (projected Newton's iterates, accurate enough
        that it is as tight near the optimum), where the tight one would multiply their time
        (``python figures/certified_speed.py --diagnose`` compares the bounds along the iterates).
    one_oracle_thread : bool
        Its own steps are dense linear algebra (ACCPM's Newton steps, the conic solves): the
        rank-one oracle runs on one thread, because the oracle's threads and BLAS's threads slow
        each other down (``python figures/solver_benchmark.py --thread-rule`` measures it).
    needs_bounded_set : bool, it needs a bounded feasible set (ACCPM's localization box).
    needs_finite_rho : bool, its conic model has the kernel as a variable (ρ = ∞ fixes it).
    model : str or None, the cvxpy model it solves (:mod:`indkernel.solvers.models`), which the
        (machine, penalty) pair must have.
    model_free_option : (name, value) or None, the option with which it solves no such model (the
        exchange method's ``master="mkl"``, which needs only libsvm).
    """

    function: Callable[..., None]
    max_iter: int
    check_bound: str
    one_oracle_thread: bool = False
    needs_bounded_set: bool = False
    needs_finite_rho: bool = False
    model: str | None = None
    model_free_option: tuple[str, object] | None = None


#: The methods by name.
METHODS: dict[str, Method] = {
    "pg": Method(projected_gradient, 20_000, "refined"),
    "apg": Method(accelerated_gradient, 10_000, "refined"),
    "newton": Method(projected_newton, 10_000, "free"),
    "accpm": Method(accpm, 2_000, "refined", one_oracle_thread=True, needs_bounded_set=True),
    "exchange": Method(exchange, 1_000, "refined", one_oracle_thread=True, needs_finite_rho=True, model="SIQCLP",
                       model_free_option=("master", "mkl")),
    "sdp": Method(direct_sdp, 1, "tight", one_oracle_thread=True, needs_finite_rho=True, model="max-min"),
}


def solve(problem: IndefiniteProblem, method: str = "newton", *, tol: float = 1e-6, absolute: bool = False,
          max_iter: int | None = None, time_limit: float | None = None, bound: str | None = None,
          threads: int | None = None, verbose: bool = False, label: str | None = None,
          callback: Callable[[CheckState], object] | None = None, **options) -> SolveResult:
    """Solve ``problem`` with a certified duality gap.

    Parameters
    ----------
    problem : IndefiniteProblem (e.g. :class:`indkernel.SVMProblem`)
    method : str, default "newton"
        ``"newton"`` projected Newton with the exact Hessian (the fastest: the results page's
        certified-speed table), ``"pg"`` the paper's projected gradient (``alg:proj_grad``),
        ``"apg"`` accelerated projected gradient (no step size to tune), ``"accpm"`` analytic center cutting planes
        (``alg:accpm``), ``"exchange"`` the SIQCLP exchange method (``alg:exchange``), ``"sdp"``
        the max-min SDP through cvxpy (small n only).
    tol : float, default 1e-6
        Target on the certified gap ``upper - lower``, relative to the α-dependent scale
        ``|ℓ(α)| + ½max(uᵀK*u, uᵀ|K0|u)`` of the best point (``SolveResult.scale``) unless ``absolute=True``.
    max_iter : int, optional
        The iteration cap; None (default) the method's own (``METHODS[method].max_iter``), -1 no limit.
    time_limit : float, optional
        Seconds from the call, the setup included (the oracle's O(n³) eigendecomposition of K0,
        which cannot be interrupted: a run whose setup alone exceeds the limit stops after it
        and says so); checked between iterations and inside the methods' inner loops. The
        one-time compilation of the oracle at a process's first solve is not counted
        (:func:`indkernel.core.rank_one.compile_oracle`).
    bound : str, optional
        The bound of the run's checks (:meth:`IndefiniteProblem.certify`): ``"free"`` (β = u(α)),
        ``"refined"`` (a few O(n²) Newton–CG rounds on the fixed kernel K*(α)) or ``"tight"`` (the
        machine on K*(α) solved until the certified gap is within 1.25 of the exact natural gap).
        Default per method (``METHODS[method].check_bound``). A run that does not converge with it ends with the
        tight bound at its best α.
    threads : int, optional
        At most this many threads for the compiled oracle (numba) and for BLAS during the solve;
        default: as many as they have. Inside that cap the sizes and the method choose
        (:mod:`indkernel.core.threads`: one thread for small updates, for ACCPM's and the conic
        methods' oracle, and for BLAS during Newton's products); the caller's settings are restored
        when the solve returns.
    verbose : bool, a progress bar.
    label : str, optional
        A name of the problem (one binary problem of a multiclass fit, say): it names the progress
        bar and prefixes the ConvergenceWarning.
    callback : callable, optional
        ``callback(state)`` after every certified check, as ``scipy.optimize``'s
        ``callback(intermediate_result)``: ``state`` is a :class:`~indkernel.solvers.tracking.CheckState`
        (``iteration``, ``alpha`` the point just certified, ``certificate`` its bracket, ``lower``
        and ``upper`` the run's bracket so far, ``gap``, ``relative_gap``, ``seconds``). A true
        return value ends the run with status ``"callback"`` and its best point so far, certified
        as always, with no warning.
    **options : passed to the method: ``indkernel.solvers.method_options(name)`` lists them,
        ``help(indkernel.METHODS[name].function)`` explains them.

    Returns
    -------
    SolveResult
        ``status == "optimal"`` exactly when the certified gap is within ``tol``; otherwise a
        ConvergenceWarning says why it stopped.
    """
    if not isinstance(problem, IndefiniteProblem):
        raise TypeError(f"problem must be an indkernel problem such as SVMProblem; got {type(problem).__name__}")
    if not isinstance(method, str):
        raise TypeError(f"method must be a name such as 'apg' (one of {sorted(METHODS)}); got {method!r}")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}")
    record = METHODS[method]
    accepted = method_options(method)
    unknown = set(options) - accepted
    if unknown:
        raise TypeError(f"method {method!r} takes no option(s) {sorted(unknown)}; its options are {sorted(accepted)}")
    if threads is not None:
        threads = _positive_int(threads, "threads")
    reason = refusal(problem, method, **options)
    if reason is not None:
        raise ValueError(reason)
    if bound is None:
        bound = record.check_bound
    rank_one.compile_oracle()  # before the clock starts: time_limit is for the solve
    run = Run(problem, method, tol=tol, absolute=absolute, max_iter=iteration_cap(max_iter, record.max_iter),
              time_limit=time_limit, bound=bound, verbose=verbose, label=label, callback=callback)
    with at_most(threads), _interrupts_as_such():
        prepare = getattr(problem.oracle, "prepare", None)
        if prepare is not None:  # the one O(n³) step, inside the run's clock
            prepare()
            run.setup_seconds = run.seconds
        only = problem.only_point()
        with limited_threads(1 if record.one_oracle_thread else threads_for(problem.n)):
            if only is not None:  # nothing to optimize: A is one point
                if not run.observe(only):
                    run.fail("inaccurate", "the feasible set is a single point, certified only to the gap shown")
            else:
                record.function(problem, run, **options)
            return run.result()  # its closing certificates on the method's threads too


@contextmanager
def _interrupts_as_such() -> Iterator[None]:
    """Ctrl-C inside a compiled (numba) function comes out as a SystemError ("returned a result
    with an exception set") caused by the KeyboardInterrupt, sometimes several SystemErrors deep
    (one per compiled frame it crossed): raise the interrupt itself, so that ``except Exception``
    cannot swallow it."""
    try:
        yield
    except SystemError as exc:
        interrupt = _interrupt_behind(exc)
        if interrupt is not None:
            raise interrupt from None
        raise


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt down ``exc``'s chain of causes, through SystemErrors only, or None."""
    seen = set()
    link: BaseException | None = exc
    while isinstance(link, SystemError) and id(link) not in seen:
        seen.add(id(link))
        link = link.__cause__ or link.__context__
        if isinstance(link, KeyboardInterrupt):
            return link
    return None


def method_options(method: str) -> set[str]:
    """The options ``solve(problem, method, **options)`` passes to the method (e.g. ``alpha0``)."""
    return set(_options_of(METHODS[method].function))


@cache
def _options_of(function: Callable) -> frozenset[str]:
    """The keyword options of a method's function, read once (``inspect.signature`` costs about
    40 µs, a tenth of a small fit's own Python)."""
    return frozenset(inspect.signature(function).parameters) - {"problem", "run"}


#: The methods :func:`compare` runs by default (and ``indkernel compare``).
COMPARED = ("pg", "apg", "newton", "accpm")
#: The relative tolerance of :func:`compare` by default: every default method reaches it on the
#: built-in problem (the digits 3 vs 5, 365 points, Simpson kernel, C = 10, ρ = 1) within its cap.
#: At :func:`solve`'s 1e-6 ACCPM does not within minutes there.
COMPARE_TOL = 1e-4
#: Seconds each method of :func:`compare` gets by default: about three times its time to
#: ``COMPARE_TOL`` on the built-in problem on 2 cores (``python figures/compare_caps.py``, results
#: page), so that every default method finishes and the call takes under a minute; the others (not
#: run by default) get half a minute.
COMPARE_TIME_LIMITS = {"newton": 2.0, "apg": 5.0, "pg": 6.0, "accpm": 40.0, "exchange": 30.0, "sdp": 30.0}


def compare(problem: IndefiniteProblem, methods=COMPARED, *, tol: float = COMPARE_TOL,
            time_limit: float | dict | None = COMPARE_TIME_LIMITS, **kwargs) -> ComparisonTable:
    """Run several methods on the same problem (keywords as for :func:`solve`), each from the start
    they share (``problem.initial_point()``, iteration 0 of every history) to ``tol`` (default
    ``COMPARE_TOL``) or its time limit: ``time_limit`` seconds, or a dict of seconds by method
    (default ``COMPARE_TIME_LIMITS``, measured; a method it lacks has no limit); None: no limit.

    Returns a :class:`ComparisonTable` (a DataFrame whose repr hides the history and shows the bounds
    with the digits that tell them apart) with one row per method (method, lower, upper, gap, iterations, seconds,
    status, reason: why a method stopped short of ``tol``; history: its certified gap by iteration
    and time as JSON, so a table written with ``to_csv`` and read back can still be plotted); a
    method refused on this problem
    before any work (:func:`refusal`) gets the status "refused" and its reason, one that ends
    before any certified point (:class:`SolveError`, e.g. its time limit inside its first conic
    solve) the status "failed" and its reason, and the others run. The full results are in ``table.attrs["results"]`` for :func:`plot_comparison`.

    Raises
    ------
    ComparisonInterrupted
        On Ctrl-C (a KeyboardInterrupt): its ``table`` holds the methods that finished, the one
        interrupted and those not started (status "interrupted", "not run").
    """
    if isinstance(methods, str) or not all(isinstance(m, str) for m in methods):
        raise TypeError(f"methods must be a list of method names such as ['pg', 'apg']; got {methods!r}")
    limits = time_limit if isinstance(time_limit, dict) else dict.fromkeys(methods, time_limit)
    unknown = sorted(set(methods) - set(METHODS))
    if unknown or len(set(methods)) != len(methods):
        raise ValueError(f"methods must be distinct names from {sorted(METHODS)}; got {list(methods)}")
    refused = {method: reason for method in methods if (reason := refusal(problem, method, **kwargs)) is not None}
    if len(refused) == len(methods):
        raise ValueError("every method is refused on this problem: " + "; ".join(refused.values()))
    results: dict[str, SolveResult] = {}
    failed: dict[str, tuple[str, str]] = {}
    try:
        for method in methods:
            if method not in refused:
                try:
                    results[method] = solve(problem, method, tol=tol, time_limit=limits.get(method), **kwargs)
                except SolveError as exc:  # no certified point (a time limit inside its first step): a row, not the end
                    failed[method] = ("failed", str(exc))
    except KeyboardInterrupt as interrupt:
        left = [m for m in methods if m not in results and m not in refused and m not in failed]
        stopped = {**failed, left[0]: ("interrupted", "Ctrl-C"),
                   **{m: ("not run", "Ctrl-C before it started") for m in left[1:]}}
        raise ComparisonInterrupted(_comparison_table(results, refused, stopped)) from interrupt
    return _comparison_table(results, refused, failed)


class ComparisonInterrupted(KeyboardInterrupt):
    """Ctrl-C inside :func:`compare`: still a KeyboardInterrupt, with the ``table`` of the methods
    that finished (the others' rows say "interrupted" or "not run")."""

    def __init__(self, table: pd.DataFrame):
        super().__init__("compare interrupted; the methods that finished are in .table")
        self.table = table


class ComparisonTable(pd.DataFrame):
    """The table of :func:`compare`: a DataFrame whose repr (text and HTML) leaves out the
    ``history`` column (each method's gaps as JSON, kept for ``to_csv`` and :func:`plot_comparison`)
    and prints the bounds with the digits that show each gap."""

    @property
    def _constructor(self):
        return ComparisonTable

    def shown(self) -> pd.DataFrame:
        """The table as its repr shows it: no history, the bounds as text with enough digits."""
        table = pd.DataFrame(self).drop(columns="history", errors="ignore")
        if {"lower", "upper"} <= set(table.columns):
            digits = bound_digits(table["lower"], table["upper"])
            for column in ("lower", "upper"):
                table[column] = [f"{value:.{digits}g}" for value in table[column]]
        return table

    def __repr__(self) -> str:
        return repr(self.shown())

    def _repr_html_(self) -> str:
        return self.shown().to_html(index=False)


def bound_digits(lower, upper) -> int:
    """Significant digits that tell a lower bound from its upper bound in every row (6 at least, 17
    at most): a gap of 1e-8 on bounds of about 8 needs 10."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    known = np.isfinite(lower) & np.isfinite(upper)
    if not known.any():
        return 6
    size = np.maximum(np.abs(lower[known]), np.abs(upper[known]))
    gap = np.maximum(upper[known] - lower[known], np.finfo(float).tiny)
    needed = np.ceil(np.log10(np.maximum(size / gap, 1.0))) + 2
    return int(np.clip(needed.max(), 6, 17))


def _comparison_table(results: dict, refused: dict, stopped: dict) -> ComparisonTable:
    rows = [dict(method=m, lower=r.lower, upper=r.upper, gap=r.gap, iterations=r.iterations, seconds=r.seconds,
                 status=r.status, reason="" if r.status == "optimal" else r.stop_reason,
                 history=json.dumps({k: r.history[k].tolist() for k in PLOTTED})) for m, r in results.items()]
    not_solved = {**{m: ("refused", reason) for m, reason in refused.items()}, **stopped}
    rows += [dict(method=m, lower=np.nan, upper=np.nan, gap=np.nan, iterations=0, seconds=0.0, status=status,
                  reason=reason, history="") for m, (status, reason) in not_solved.items()]
    table = ComparisonTable(rows)
    table.attrs["results"] = results
    return table


def refusal(problem: IndefiniteProblem, method: str, **options) -> str | None:
    """Why ``method`` will not run on ``problem``, known before any work (what the method's
    :class:`Method` record says it needs, the SDP route above its size limit), or None."""
    record = METHODS[method]
    if record.needs_finite_rho and problem.rho == np.inf:
        return (f"method {method!r} needs a finite rho (its conic model has the kernel as a variable); rho=inf "
                "fixes it at (K0)_+, a QP that 'newton', 'apg', 'pg' or 'accpm' solve")
    if record.needs_bounded_set and not problem.feasible.is_bounded:
        return (f"method {method!r} needs a bounded feasible set (its localization box) and this "
                f"{type(problem.machine).__name__} machine's set is unbounded above; use 'newton', 'apg' or 'pg'")
    free = record.model_free_option
    conic = free is None or options.get(free[0]) != free[1]
    if record.model is not None and conic and (reason := model_refusal(problem, record.model)) is not None:
        return reason
    if method == "sdp":
        return sdp_refusal(problem, options.get("max_n", SDP_MAX_N))
    return None


#: The history columns a comparison table keeps for plotting.
PLOTTED = ("iteration", "time", "gap")


def _histories(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each method's history from a :func:`compare` table: its results, or (a table read back from
    a CSV) its ``history`` column."""
    if isinstance(table.attrs.get("results"), dict):
        return {method: result.history for method, result in table.attrs["results"].items()}
    if not {"method", "history"} <= set(table.columns):
        raise TypeError("results must be the table of compare(...) (with its method and history columns) or a dict "
                        "{method: SolveResult}")
    return {method: pd.DataFrame(json.loads(text)) for method, text in zip(table.method, table.history, strict=True)
            if isinstance(text, str) and text}


#: How each method is drawn: a line style and a marker, so the lines differ in print too.
STYLES: dict[str, dict] = {"pg": dict(linestyle="-", marker="o"), "apg": dict(linestyle="--", marker="s"),
                           "newton": dict(linestyle="-.", marker="^"), "accpm": dict(linestyle=":", marker="D"),
                           "exchange": dict(linestyle=(0, (5, 1, 1, 1)), marker="v"),
                           "sdp": dict(linestyle="-", marker="*")}
#: Markers per line at most (a line of 500 iterations with a marker at each is a smear).
MARKERS_PER_LINE = 12


def draw_style(style: dict, points: int, shift: float = 0.0) -> dict:
    """Keyword arguments for ``plot`` that draw a line of ``points`` points in ``style`` (an entry
    of :data:`STYLES`): markers spread out (every point of a short line), the first one ``shift``
    of the spacing in (lines drawn over each other with different shifts show all their markers)."""
    every = max(1, points // MARKERS_PER_LINE)
    return dict(style, markevery=(int(shift * every) % every, every), markersize=5)


def plot_comparison(results, ax=None):
    """Certified gap against iteration and against time (semilog), one line per method, each with
    its own line style and marker (:data:`STYLES`), starting at iteration 0, the start every method
    shares.

    Parameters
    ----------
    results : dict of SolveResult by method, or the table of :func:`compare`.
    ax : None, one matplotlib Axes, a pair of Axes, or a Figure
        Where to draw: None, a Figure or a pair draw both panels (iteration and time; a Figure
        gets two new subplots); one Axes draws the gap against the iteration only.

    Returns
    -------
    The Axes drawn on: one Axes, or an array of two.
    """
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if isinstance(results, pd.DataFrame):
        histories = _histories(results)
    elif isinstance(results, dict) and all(isinstance(r, SolveResult) for r in results.values()):
        histories = {method: result.history for method, result in results.items()}
    else:
        raise TypeError("results must be the table of compare(...) or a dict {method: SolveResult}; "
                        f"got {type(results).__name__}")
    if ax is None:
        axes = plt.subplots(1, 2, figsize=(10, 4))[1]
    elif isinstance(ax, Figure):
        axes = ax.subplots(1, 2)
    elif isinstance(ax, Axes):
        axes = np.array([ax])
    elif np.shape(ax) == (2,) and all(isinstance(a, Axes) for a in ax):
        axes = np.asarray(ax)
    else:
        raise TypeError(f"ax must be None, a matplotlib Axes, a pair of Axes or a Figure; got {type(ax).__name__}")
    panels = list(zip(axes, ("iteration", "time"), ("iteration", "time (s)"), strict=False))
    for method, h in histories.items():
        for a, x, _ in panels:
            a.semilogy(h[x], h["gap"].clip(lower=1e-16), label=method, **draw_style(STYLES.get(method, {}), len(h)))
    for a, _, label in panels:
        a.set_xlabel(label)
        a.set_ylabel("certified gap")
        a.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    return axes[0] if isinstance(ax, Axes) else axes
