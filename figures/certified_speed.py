"""Certified speed: a certified solution against the baselines
===========================================================

What a certified solution costs against the baseline a user would pick (issue "Certified at the
cost of one eigendecomposition"), in one process, medians of ``--repeats`` runs, each timed step
after a quarter second of rest (``REST``: BLAS threads left spinning by the step before would
otherwise slow the next one; ``--threads`` measures it).

USPS 3 vs 5, Simpson kernel, C = 10, ρ = 1, random subsets of n points (n > 1540: of all USPS,
digit 3 against the rest; ``--full``: n = 9298, digit 0 against the rest). Per n: one ``eigh`` of K0; ``SpectrumSVC("denoise").fit`` (clip the
negative eigenvalues, then libsvm); ``IndefiniteSVC(tol=1e-3).fit``; and ``solve`` to a certified
relative gap of 1e-6 for pg, apg and newton, setup (the ``eigh`` of K0) included. Ratios: fit
against denoise (target <= 1.5 at n >= 500) and solve against one eigh (target <= 3 at n >= 767).

    python figures/certified_speed.py [--sizes 250 500 ...] [--full] [--methods ...] [--repeats R] [--results]
    python figures/certified_speed.py --sizes --full --methods newton --repeats 1   # n = 9298 alone
    python figures/certified_speed.py --diagnose [--sizes 767]
    python figures/certified_speed.py --threads [--sizes 767 1000 1300 1540]
    python figures/certified_speed.py --orders --sizes 500 767 1540
    python figures/certified_speed.py --parallel-from --sizes 400 500 600 700 767 1000

``--diagnose`` prints, at the first size, the distance of each bound to p* (from a 1e-10 Newton
run) after 20, 40 and 60 apg iterations and after 3 to 8 Newton iterations: the lower bound f(α),
the free upper bound, the refined one and libsvm's fixed-kernel bound (the best any refinement can
reach), and a profile of ``IndefiniteSVC(tol=1e-3).fit``. ``--threads`` times Hessian–vector
products with BLAS on all its threads and on one (why projected Newton limits BLAS), and per size
the eigendecomposition of K0 on all BLAS threads and on one, with the Newton solve right after it
(why it runs on one thread below ``indkernel.core.threads.EIGH_THREADS_FROM`` rows). ``--orders`` times
the fit and the denoise fit in three orders (rested, alternated back to back, five in a row).
``--parallel-from`` times the default fit per size with the rank-one oracle on numba's threads and on
one, alternated on new subsets, once right after the kernel's computation (BLAS threads still
spinning, as when a user fits the matrix just computed) and once
after :data:`REST` (why the oracle runs on one thread below ``indkernel.core.threads.PARALLEL_FROM``).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from indkernel import IndefiniteSVC, SpectrumSVC, SVMProblem, solve
from indkernel.core import spectrum_cache
from indkernel.core import threads as thread_rules
from indkernel.datasets import load_usps
from indkernel.kernels import simpson
from indkernel.reproduction.report import update_marked_block

HERE = Path(__file__).resolve().parent
SIZES = (250, 500, 767, 1540, 3000)
METHODS = ("pg", "apg", "newton")
C, RHO = 10.0, 1.0


def problem_data(n: int | None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The Simpson kernel and ±1 labels: a random n-subset of USPS 3 vs 5 (1540 images; beyond
    that, of all USPS with digit 3 against the rest), or (None) all of USPS, digit 0 against the rest."""
    X, y = load_usps(pair=(3, 5))
    if n is None or n > len(y):
        X, digits = load_usps(pair=None)
        y = np.where(digits == (0 if n is None else 3), 1.0, -1.0)
    pick = np.random.default_rng(seed).choice(len(y), len(y) if n is None else n, replace=False)
    return simpson(X[pick]), y[pick]


#: Seconds of rest before each step that ``measure`` times: OpenBLAS's threads keep spinning for
#: about 0.1 s after a multi-threaded call and slow whatever runs next on this 2-core machine
#: (``--threads``), so every step starts from the same quiet state, not from its predecessor's.
REST = 0.25


def seconds(call, rest: float = 0.0) -> tuple[float, object]:
    time.sleep(rest)
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def measure(K0: np.ndarray, y: np.ndarray, repeats: int, methods=METHODS) -> dict:
    """Median seconds of each step on one problem, alternating the steps within each repeat, each
    after :data:`REST` seconds of rest."""
    rows, statuses = [], {}
    for _ in range(repeats):
        row = {"eigh": seconds(lambda: scipy.linalg.eigh(K0), REST)[0],
               "denoise fit": seconds(lambda: SpectrumSVC("denoise", C=C).fit(K0, y), REST)[0],
               "fit 1e-3": seconds(lambda: IndefiniteSVC(C=C, rho=RHO, tol=1e-3).fit(K0, y), REST)[0]}
        for method in methods:
            spent, result = seconds(lambda: solve(SVMProblem(K0, y, C=C, rho=RHO), method, tol=1e-6,
                                                  max_iter=100_000, time_limit=600), REST)
            row[f"{method} 1e-6"] = spent if result.status == "optimal" else np.nan
            row[f"{method} iterations"] = result.iterations
            row[f"{method} seconds"] = spent  # also when it stopped short (at the round-off floor)
            row[f"{method} reached"] = result.gap / result.scale
            statuses[f"{method} status"] = result.status  # of the last repeat
        rows.append(row)
    return {**pd.DataFrame(rows).median().to_dict(), **statuses}


def table(sizes, full: bool, repeats: int, methods=METHODS) -> pd.DataFrame:
    rows = []
    for n in list(sizes) + ([None] if full else []):
        K0, y = problem_data(n)
        row = {"n": len(y), **measure(K0, y, repeats if n is not None else 1, methods)}
        row["fit / denoise"] = row["fit 1e-3"] / row["denoise fit"]
        for method in methods:
            row[f"{method} / eigh"] = row[f"{method} 1e-6"] / row["eigh"]
        rows.append(row)
        print(pd.DataFrame([row]).to_string(index=False, float_format=lambda x: f"{x:.3g}"), flush=True)
    return pd.DataFrame(rows)


def diagnose(n: int) -> None:
    """The bound lag, the free and refined bounds along Newton's iterates, and the profile quoted in
    the results page (module docstring)."""
    K0, y = problem_data(n)
    problem = SVMProblem(K0, y, C=C, rho=RHO)
    optimum = solve(problem, "newton", tol=1e-10, max_iter=100).lower
    print(f"n = {n}: p* >= {optimum:.6f} (newton, certified 1e-10 or round-off)")
    for method, counts in (("apg", (20, 40, 60)), ("newton", range(3, 9))):
        for iterations in counts:
            alpha = solve(problem, method, tol=1e-12, max_iter=iterations, bound="free").alpha
            free, refined = problem.certify(alpha, bound="free"), problem.certify(alpha)
            libsvm = problem.upper_bound(alpha, problem.libsvm_dual_coef(alpha))
            print(f"{method} after {iterations} iterations: (p* - lower)/scale = "
                  f"{(optimum - free.lower) / free.scale:.2e}, (upper - p*)/scale: free {(free.upper - optimum) / free.scale:.2e},"
                  f" refined {(refined.upper - optimum) / free.scale:.2e}, libsvm {(libsvm - optimum) / free.scale:.2e}")
    profile = cProfile.Profile()
    profile.runcall(IndefiniteSVC(C=C, rho=RHO, tol=1e-3).fit, K0, y)
    pstats.Stats(profile).sort_stats("cumulative").print_stats(r"certify|_compiled_run|_iteration|curvature|"
                                                               r"_update|_secular_roots|spectrum|\(fit\)", 14)


def threads(sizes, products: int = 50) -> None:
    """The thread rules. At the first size, projected Newton's: ms per Hessian–vector product near
    the optimum with BLAS on all its threads and on one (the products run on numba's threads),
    alternated. At every size, the eigendecomposition's (``indkernel.core.threads.EIGH_THREADS_FROM``):
    the eigh of K0 on all BLAS threads or on one, then the first Newton solve to 1e-3 right after."""
    K0, y = problem_data(sizes[0])
    problem = SVMProblem(K0, y, C=C, rho=RHO)
    hessian = problem.hessian(solve(problem, "newton", tol=1e-3).alpha)
    v = np.ones(len(y))
    for limit in (None, 1) * 3:
        with threadpool_limits(limits=limit, user_api="blas"):
            spent = seconds(lambda: [hessian @ v for _ in range(products)])[0]
        print(f"n = {sizes[0]}, BLAS threads {'all' if limit is None else limit}: {1e3 * spent / products:.2f} ms per product")
    rule = thread_rules.EIGH_THREADS_FROM
    try:
        for n in sizes:
            K0, y = problem_data(n)
            for one_thread in (False, True) * 3:
                thread_rules.EIGH_THREADS_FROM = np.inf if one_thread else 0
                problem = SVMProblem(K0, y, C=C, rho=RHO)
                setup = seconds(problem.oracle.prepare)[0]
                spent = seconds(lambda: solve(problem, "newton", tol=1e-3))[0]
                print(f"n = {n}, eigh of K0 on {'one BLAS thread' if one_thread else 'all BLAS threads'}: "
                      f"eigh {setup:.3f} s, then newton 1e-3 {spent:.3f} s, together {setup + spent:.3f} s")
    finally:
        thread_rules.EIGH_THREADS_FROM = rule


def orders(sizes, repeats: int = 5) -> None:
    """The fit / denoise ratio under three orders of the timed steps: each after :data:`REST`
    (the table's), the two alternated back to back, and ``repeats`` of one kind in a row (as in a
    grid search); medians of ``repeats``."""
    for n in sizes:
        K0, y = problem_data(n)
        steps = {"denoise": lambda: SpectrumSVC("denoise", C=C).fit(K0, y),
                 "fit": lambda: IndefiniteSVC(C=C, rho=RHO, tol=1e-3).fit(K0, y)}
        rested = {k: [seconds(steps[k], REST)[0] for _ in range(repeats)] for k in steps}
        alternated: dict[str, list] = {k: [] for k in steps}
        for _ in range(repeats):
            for k in steps:
                alternated[k].append(seconds(steps[k])[0])
        in_a_row = {k: [seconds(steps[k])[0] for _ in range(repeats)] for k in steps}
        for name, times in (("rested", rested), ("alternated", alternated), ("in a row", in_a_row)):
            fit, denoise = np.median(times["fit"]), np.median(times["denoise"])
            print(f"n = {n}, {name}: fit {fit:.3f} s, denoise {denoise:.3f} s, fit / denoise {fit / denoise:.2f}")


def parallel_from(sizes, repeats: int = 7) -> None:
    """The oracle's size rule: median ms of ``IndefiniteSVC(C, ρ).fit`` with the rank-one oracle on
    numba's threads against one thread (``PARALLEL_FROM`` set to 0 or beyond n), alternated on the
    same new subsets, the fit started right after the kernel's computation or after :data:`REST`."""
    rule = thread_rules.PARALLEL_FROM
    try:
        for n in sizes:
            for rest in (0.0, REST):
                spent: dict[bool, list[float]] = {True: [], False: []}
                for seed in range(repeats + 1):
                    for parallel in (True, False) if seed % 2 else (False, True):
                        thread_rules.PARALLEL_FROM = 0 if parallel else n + 1
                        K0, y = problem_data(n, seed)  # the kernel's BLAS call, then the fit
                        taken = seconds(lambda: IndefiniteSVC(C=C, rho=RHO).fit(K0, y), rest)[0]
                        if seed:  # seed 0 warms up
                            spent[parallel].append(taken)
                threaded, one = (1e3 * float(np.median(spent[k])) for k in (True, False))
                state = "after rest" if rest else "right after the kernel"
                print(f"n = {n}, {state}: oracle on numba's threads {threaded:.1f} ms, on one {one:.1f} ms, "
                      f"ratio {threaded / one:.2f}", flush=True)
    finally:
        thread_rules.PARALLEL_FROM = rule


def markdown(frame: pd.DataFrame, methods=METHODS) -> str:
    head = ("| n | eigh (s) | denoise fit (s) | IndefiniteSVC fit 1e-3 (s) | fit / denoise | "
            + " | ".join(f"{m} 1e-6 (s, iterations) | {m} / eigh" for m in methods) + " |")
    lines = [head, "|" + "---|" * (5 + 2 * len(methods))]
    for _, r in frame.iterrows():
        cells = [f"{int(r.n)}", f"{r.eigh:.2f}", f"{r['denoise fit']:.2f}", f"{r['fit 1e-3']:.2f}",
                 f"{r['fit / denoise']:.1f}"]
        for m in methods:
            if np.isnan(r[f"{m} 1e-6"]):  # say where it stopped instead of "nan"
                cells += [f"{r[f'{m} status']} at {r[f'{m} reached']:.1e} after {r[f'{m} seconds']:.1f} "
                          f"({int(r[f'{m} iterations'])})", f"({r[f'{m} seconds'] / r.eigh:.1f})"]
            else:
                cells += [f"{r[f'{m} 1e-6']:.2f} ({int(r[f'{m} iterations'])})", f"{r[f'{m} / eigh']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES),
                        help="subset sizes (none with --full: only n = 9298, in its own table)")
    parser.add_argument("--full", action="store_true", help="add n = 9298 (USPS digit 0 against the rest)")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results", action="store_true", help="put the table into docs/results.md")
    parser.add_argument("--diagnose", action="store_true", help="the bound lag and a profile at the first size")
    parser.add_argument("--threads", action="store_true", help="the BLAS thread rules: Newton's at the first size, the "
                        "eigendecomposition's at every size")
    parser.add_argument("--parallel-from", action="store_true",
                        help="the oracle's thread rule: the fit with the oracle threaded and on one thread, per size")
    parser.add_argument("--orders", action="store_true",
                        help="fit / denoise at every size with the steps rested, alternated, and in a row")
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    # every fit and solve decomposes its K0, as a first fit does: the setup is part of what is
    # measured, and the store of spectra would serve the repeats from the first one's
    spectrum_cache.set_budget(0)
    if args.diagnose:
        diagnose(args.sizes[0])
        return
    if args.threads or args.orders or args.parallel_from:
        (threads if args.threads else orders if args.orders else parallel_from)(args.sizes)
        return
    frame = table(args.sizes, args.full, args.repeats, args.methods)
    name = "certified-speed" if args.sizes else "certified-speed-full"
    frame.to_csv(HERE / f"{name.replace('-', '_')}.csv", index=False)
    print(markdown(frame, args.methods))
    if args.results:
        command = "python figures/certified_speed.py " + " ".join(
            [f"--sizes {' '.join(map(str, args.sizes))}".rstrip(), f"--repeats {args.repeats}"]
            + (["--full"] if args.full else []) + ([f"--methods {' '.join(args.methods)}"]
                                                    if list(args.methods) != list(METHODS) else []))
        update_marked_block(HERE.parent / "docs" / "results.md", name, markdown(frame, args.methods), command)


if __name__ == "__main__":
    main()
