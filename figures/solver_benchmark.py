"""Solver benchmark: every method to a certified gap
=================================================

Iterations and seconds to a certified relative gap of 1e-3 and 1e-6, every method, one process.

Problems: the bundled digits 3-vs-5 Simpson problem (n = 365) and random USPS 3-vs-5 Simpson
subsets of n = 100, 200, 400, 767; C = 10, ρ in {0.1, 1, 10}. Each run aims at 1e-6 and is
capped at ``--cap`` seconds (default 60); the time to 1e-3 is read off its history. As in the
paper, ACCPM runs up to n = 500 and the exchange method up to n = 300; the SDP route runs at
n = 40 only (a digits subset), against projected Newton (the default method) and the first-order
methods there.

Prints a table, saves ``solver_benchmark.json`` beside this file; ``--results`` then puts the
Markdown table (from that JSON) into docs/results.md, ``--render`` does only that. ``--thread-rule``
measures instead what ``solve``'s rule (ACCPM, exchange and SDP run the rank-one update on one
thread) saves: ACCPM on a USPS subset of n = 600, with the rule and without, alternately.

    python figures/solver_benchmark.py [--quick] [--cap SECONDS] [--results | --render | --thread-rule]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from indkernel import SVMProblem, solve
from indkernel.datasets import load_digits_pair, load_usps
from indkernel.kernels import simpson
from indkernel.reproduction.report import update_marked_block

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "solver_benchmark.json"
TARGETS = (1e-3, 1e-6)
LARGEST = {"newton": None, "pg": None, "apg": None, "accpm": 500, "exchange": 300, "sdp": 40}


def digits(n: int | None = None, seed: int = 0):
    X, y = load_digits_pair(3, 5)
    if n is not None:
        pick = np.random.default_rng(seed).choice(len(y), n, replace=False)
        X, y = X[pick], y[pick]
    return simpson(X), y


def usps35(n: int, seed: int = 0):
    X, y = load_usps(pair=(3, 5))
    pick = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return simpson(X[pick]), y[pick]


def reached(history: pd.DataFrame, target: float):
    """(iterations, seconds) at the first certified relative gap <= target, or (None, None)."""
    hit = history[history.gap <= target * history.scale]
    return (None, None) if hit.empty else (int(hit.iteration.iloc[0]), float(hit.time.iloc[0]))


def run_case(name: str, K0, y, rho: float, methods, cap: float) -> list[dict]:
    rows = []
    for method in methods:
        if LARGEST[method] is not None and len(y) > LARGEST[method]:
            continue
        problem = SVMProblem(K0, y, C=10.0, rho=rho)
        _ = problem.oracle.spectrum  # the one decomposition of K0, outside the timing
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = solve(problem, method, tol=TARGETS[-1], time_limit=cap)
        row = dict(problem=name, n=len(y), rho=rho, method=method, status=result.status,
                   final_gap=result.relative_gap, seconds=result.seconds, iterations=result.iterations)
        for target in TARGETS:
            row[f"iterations_{target:g}"], row[f"seconds_{target:g}"] = reached(result.history, target)
        rows.append(row)
        print(f"{name:12s} n={len(y):4d} rho={rho:<4g} {method:9s} {result.status:10s} "
              + "  ".join(f"{t:g}: {_fmt(row[f'seconds_{t:g}'])} s / {row[f'iterations_{t:g}']} it" for t in TARGETS),
              flush=True)
    return rows


def _fmt(seconds):
    return "   —   " if seconds is None or np.isnan(seconds) else f"{seconds:7.2f}"


def main(quick: bool = False, cap: float = 60.0) -> pd.DataFrame:
    rhos = (1.0,) if quick else (0.1, 1.0, 10.0)
    cases = [("digits-sub", lambda: digits(30))] if quick else (
        [("digits", digits)] + [("usps35", (lambda n=n: usps35(n))) for n in (100, 200, 400, 767)])
    methods = ("newton", "pg", "apg", "accpm", "exchange")
    rows = []
    for name, make in cases:
        K0, y = make()
        for rho in rhos:
            rows += run_case(name, K0, y, rho, methods, cap)
    K0, y = digits(20 if quick else 40, seed=1)
    for rho in rhos:
        rows += run_case("digits-sub", K0, y, rho, ("newton", "apg", "pg", "sdp"), cap)
    table = pd.DataFrame(rows)
    if not quick:
        RESULTS.write_text(json.dumps(rows, indent=1))
    return table


def markdown(table: pd.DataFrame) -> str:
    """One row per problem and ρ, one column per method: seconds to 1e-3 / to 1e-6 (— not reached)."""
    def cell(row):
        text = " / ".join(_fmt(row[f"seconds_{t:g}"]).strip() for t in TARGETS)
        return text + ("" if row.status == "optimal" else f" ({row.status})")

    table = table.assign(cell=table.apply(cell, axis=1))
    wide = table.pivot_table(index=["problem", "n", "rho"], columns="method", values="cell", aggfunc="first",
                             sort=False).fillna("not run")
    methods = [m for m in ("newton", "pg", "apg", "accpm", "exchange", "sdp") if m in wide.columns]
    lines = ["| problem | n | ρ | " + " | ".join(methods) + " |", "|" + " --- |" * (len(methods) + 3)]
    lines += [f"| {p} | {n} | {rho:g} | " + " | ".join(wide.loc[(p, n, rho), m] for m in methods) + " |"
              for p, n, rho in wide.index]
    return "\n".join(lines)


def thread_rule(n: int = 600, iterations: int = 15, repeats: int = 2) -> pd.DataFrame:
    """Seconds for ``iterations`` ACCPM iterations on a USPS 3-vs-5 subset of ``n``, alternately
    with ``solve``'s one-thread rule and without it (all numba threads for the update)."""
    from indkernel.solvers import registry as solve_module
    rule = solve_module.METHODS["accpm"]
    problem = SVMProblem(*usps35(n), C=10.0, rho=1.0)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        solve(problem, "accpm", max_iter=2)  # warm-up
        try:
            for _ in range(repeats):
                for on in (True, False):
                    solve_module.METHODS["accpm"] = dataclasses.replace(rule, one_oracle_thread=on)
                    time.sleep(0.5)  # BLAS and numba threads idle before each run
                    result = solve(problem, "accpm", tol=1e-12, max_iter=iterations)
                    rows.append(dict(rule=on, iterations=result.iterations, seconds=result.seconds))
                    print(f"ACCPM n={n} one-thread rule {'on ' if on else 'off'}: {result.seconds:.2f} s for "
                          f"{result.iterations} iterations", flush=True)
        finally:
            solve_module.METHODS["accpm"] = rule
    return pd.DataFrame(rows)


def render() -> None:
    table_md = markdown(pd.DataFrame(json.loads(RESULTS.read_text())))
    print(table_md)
    update_marked_block(HERE.parent / "docs" / "results.md", "solver-benchmark", table_md,
                        "python figures/solver_benchmark.py --results")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one small problem; writes nothing")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per run (default 60)")
    parser.add_argument("--results", action="store_true", help="after the run, put the table into docs/results.md")
    parser.add_argument("--render", action="store_true", help="only put the saved table into docs/results.md")
    parser.add_argument("--thread-rule", action="store_true", help="only time ACCPM with and without the rule")
    args = parser.parse_args()
    if args.thread_rule:
        thread_rule()
    elif not args.render:
        main(quick=args.quick, cap=args.cap)
    if args.results or args.render:
        render()
