"""Oracle benchmark: the rank-one update against eigh
==================================================

Time of one oracle call (objective, gradient and free certificate at a new α) with the rank-one
update and with a dense ``eigh``, on USPS Simpson kernels (random subsets of all 9298 images)
and on random indefinite kernels (symmetric Gaussian), one process, medians of several runs.

Prints, per kernel and n: both times, their ratio, the update's time as a multiple of one pass
over an n×n float64 matrix (``V0.sum()``, the memory-bandwidth floor), and the
log-log slope of the update's time from n = 500 to 2000. Saves ``oracle_benchmark.csv``;
``--results`` puts the table into docs/results.md. ``--stages`` prints instead where an update's time
goes at n = 250 and 2000, and the zero finder's evaluations per root.

    python figures/oracle_benchmark.py [--quick] [--results] [--stages]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from indkernel import SVMProblem
from indkernel.core import rank_one, threads
from indkernel.datasets import load_usps
from indkernel.kernels import simpson
from indkernel.reproduction.report import median_seconds, update_marked_block

HERE = Path(__file__).resolve().parent


def usps_simpson(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    X, digits = load_usps(pair=None)
    pick = rng.choice(len(digits), n, replace=False)
    return simpson(X[pick]), np.where(digits[pick] < 5, 1.0, -1.0)


def random_indefinite(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    G = rng.standard_normal((n, n))
    return (G + G.T) / 2, np.where(rng.random(n) < 0.5, 1.0, -1.0)


KERNELS = {"USPS Simpson": usps_simpson, "random indefinite": random_indefinite}


def oracle_call(problem: SVMProblem, points):
    """objective, gradient and free certificate (what a solver's iterate costs) at each of ``points``
    in turn (each one new to the cache)."""
    iterator = iter(points)

    def call():
        alpha = next(iterator)
        problem.objective(alpha)
        problem.gradient(alpha)
        problem.certify(alpha, bound="free")
    return call


def measure(sizes, repeats: int, pause: float = 0.5, seed: int = 0) -> pd.DataFrame:
    """Per kernel and n: medians over ``repeats`` calls of the eigh oracle and 5x as many of the
    (cheap) rank-one oracle, each call at a new point; the floor and the rank-one calls first,
    each after a ``pause`` (seconds), so the BLAS threads of the previous eigh calls have gone idle."""
    rows = []
    for kernel, make in KERNELS.items():
        for n in sizes:
            rng = np.random.default_rng(seed)
            K0, y = make(n, rng)
            problems = {name: SVMProblem(K0, y, C=10.0, rho=1.0, oracle=name) for name in ("rank-one", "eigh")}
            for p in problems.values():
                _ = p.oracle.spectrum  # the decomposition of K0 is computed once, outside the timing
            counts = {"rank-one": 5 * repeats, "eigh": repeats}
            points = [problems["eigh"].project(rng.uniform(0, 10, n)) for _ in range(counts["rank-one"] + 1)]
            time.sleep(pause)
            V0 = problems["rank-one"].oracle.spectrum[1]
            floor = median_seconds(V0.sum, 21)  # one single-threaded pass (a BLAS gemv timed erratically)
            seconds = {}
            for name, p in problems.items():
                time.sleep(pause)
                oracle_call(p, points[-1:])()  # warm-up (compilation, caches)
                seconds[name] = median_seconds(oracle_call(p, points), counts[name])
            fallbacks = problems["rank-one"].oracle.fallbacks
            rows.append(dict(kernel=kernel, n=n, rank_one=seconds["rank-one"], eigh=seconds["eigh"],
                             ratio=seconds["eigh"] / seconds["rank-one"], floor=floor,
                             floor_multiple=seconds["rank-one"] / floor, fallbacks=fallbacks))
            print(f"{kernel:18s} n={n:5d}  rank-one {1e3 * seconds['rank-one']:8.2f} ms  eigh "
                  f"{1e3 * seconds['eigh']:9.2f} ms  ratio {rows[-1]['ratio']:6.1f}x  "
                  f"floor multiple {rows[-1]['floor_multiple']:5.1f}  fallbacks {fallbacks}", flush=True)
    return pd.DataFrame(rows)


def stages(sizes=(250, 2000), repeats: int = 35, pause: float = 0.5, seed: int = 0) -> pd.DataFrame:
    """Where a rank-one oracle call's time goes, on USPS Simpson kernels (medians, ms): the
    secular equation with the Löwner vector (``rank_one_eigen``), the eigenvector sums, the two
    products with ``V0``, the rest of the call (objective, gradient and certificate in Python, the
    intercept); one pass over ``V0``; and the evaluations of the secular function per root."""
    rows = []
    for n in sizes:
        rng = np.random.default_rng(seed)
        K0, y = usps_simpson(n, rng)
        problem = SVMProblem(K0, y, C=10.0, rho=1.0)
        d, V0 = problem.oracle.spectrum
        points = [problem.project(rng.uniform(0, 10, n)) for _ in range(repeats + 1)]
        u, sigma, r = y * points[0], 1.0 / (4.0 * problem.rho), rng.standard_normal(n)  # u(α) = yα
        count = threads.threads_for(n)
        with threads.limited_threads(count):
            z = rank_one.transposed_product(V0, u, count)
            eigen = rank_one.rank_one_eigen(d, z, sigma)
            side = eigen.values < 0
            parts = {"secular equation": lambda: rank_one.rank_one_eigen(d, z, sigma),
                     "eigenvector sums": lambda: eigen.eigenvector_sums(side, r[:side.sum()]),
                     "products with V0": lambda: (rank_one.transposed_product(V0, u, count),
                                                  rank_one.product(V0, z, count))}
            oracle_call(problem, points[-1:])()  # warm-up
            time.sleep(pause)  # (as in measure)
            call = median_seconds(oracle_call(problem, points), repeats)
            times = {name: median_seconds(call, repeats) for name, call in parts.items()}
        roots = int((eigen._source >= 0).sum())
        rows.append(dict(n=n, **{k: 1e3 * v for k, v in times.items()}, rest=1e3 * (call - sum(times.values())),
                         call=1e3 * call, one_pass=1e3 * median_seconds(V0.sum, 21),
                         evaluations_per_root=eigen.evaluations / max(roots, 1)))
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format="%.3f"))
    return table


def slopes(table: pd.DataFrame, low: int = 500, high: int = 2000) -> dict:
    out = {}
    for kernel, group in table.groupby("kernel"):
        g = group[(group.n >= low) & (group.n <= high)]
        if len(g) >= 2:
            out[kernel] = float(np.polyfit(np.log(g.n), np.log(g.rank_one), 1)[0])
    return out


def markdown(table: pd.DataFrame, slope: dict) -> str:
    lines = ["| kernel | n | rank-one (ms) | eigh (ms) | eigh / rank-one | rank-one / one n×n pass |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r.kernel} | {r.n} | {1e3 * r.rank_one:.1f} | {1e3 * r.eigh:.1f} | {r.ratio:.1f}x | "
              f"{r.floor_multiple:.0f}x |" for r in table.itertuples()]
    lines.append("")
    lines += [f"Log-log slope of the rank-one time, n = 500 to 2000, {k}: {v:.2f}." for k, v in slope.items()]
    return "\n".join(lines)


def main(quick: bool = False, results: bool = False) -> pd.DataFrame:
    sizes, repeats, pause = ((100, 200), 3, 0.0) if quick else ((250, 500, 767, 1000, 1500, 2000), 7, 0.5)
    table = measure(sizes, repeats, pause)
    if not quick:
        table.to_csv(HERE / "oracle_benchmark.csv", index=False)
    slope = slopes(table, *((100, 200) if quick else (500, 2000)))
    for kernel, value in slope.items():
        print(f"log-log slope of the rank-one oracle's time, {kernel}: {value:.2f}")
    if results:
        update_marked_block(HERE.parent / "docs" / "results.md", "oracle-benchmark", markdown(table, slope),
                            "python figures/oracle_benchmark.py --results")
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="n = 100, 200 only; writes nothing")
    parser.add_argument("--results", action="store_true", help="put the table into docs/results.md")
    parser.add_argument("--stages", action="store_true", help="only the time of each stage of an update")
    args = parser.parse_args()
    if args.stages:
        stages()
    else:
        main(quick=args.quick, results=args.results)
