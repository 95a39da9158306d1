"""Formulation sizes: how far the cvxpy models go
==============================================

How big can the cvxpy models go? Times the min-max primal (matrix_frac) and the max-min SDP
with Clarabel and SCS on digits 3-vs-5 Simpson subsets, n = 10, 20, 40, 80, 160 (C = 10, ρ = 1).

Solvers run at their default settings. A series (form, solver) stops after a solve over 120 s;
each solve is also cut at 900 s by the solver's own time limit. Next to each time is the relative
error of the optimal value against the max-min SDP solved by Clarabel, the reference. Writes ``formulation_sizes.csv`` beside this file, prints a Markdown
table and, with ``--results``, puts it into docs/results.md between the ``formulation-sizes`` markers.

    python figures/formulation_sizes.py [--quick] [--results]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import formulations
from indkernel.datasets import load_digits_pair
from indkernel.kernels import simpson
from indkernel.reproduction.report import update_marked_block

HERE = Path(__file__).resolve().parent
SERIES_STOP_SECONDS = 120.0
TIME_LIMITS = {"CLARABEL": {"time_limit": 900.0}, "SCS": {"time_limit_secs": 900.0}}
FORMS = {"min-max primal": formulations.minmax_primal, "max-min SDP": formulations.maxmin_sdp}


def subset(n: int, seed: int = 0):
    X, y = load_digits_pair(3, 5)
    pick = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return simpson(X[pick]), np.where(y[pick] == 3, 1.0, -1.0)


def measure(sizes, solvers) -> pd.DataFrame:
    rows = []
    for form, factory in FORMS.items():
        for solver in solvers:
            for n in sizes:
                K0, y = subset(n)
                model = factory(K0, y, 10.0, 1.0)
                start = time.perf_counter()
                try:
                    model.problem.solve(solver=solver, **TIME_LIMITS.get(solver, {}))
                    status, value = model.problem.status, model.problem.value
                except Exception as exc:  # a solver failure is a result of this table, not a crash
                    status, value = f"error: {type(exc).__name__}", np.nan
                seconds = time.perf_counter() - start
                rows.append(dict(form=form, solver=solver, n=n, seconds=seconds, status=status, value=value))
                print(f"{form:15s} {solver:9s} n={n:4d} {seconds:9.2f} s  {status}", flush=True)
                if seconds > SERIES_STOP_SECONDS:
                    break
    return pd.DataFrame(rows)


def with_errors(table: pd.DataFrame) -> pd.DataFrame:
    """Adds ``error``: relative distance of each value to the Clarabel max-min SDP's at that n."""
    reference = table[(table.form == "max-min SDP") & (table.solver == "CLARABEL")].set_index("n").value
    return table.assign(error=(table.value - table.n.map(reference)).abs() / table.n.map(reference).abs())


def markdown(table: pd.DataFrame) -> str:
    wide = table.assign(cell=[f"{s:.2f} s, error {e:.0e}" + ("" if st == "optimal" else f" ({st})")
                              for s, e, st in zip(table.seconds, table.error, table.status, strict=True)])
    wide = wide.pivot(index=["form", "solver"], columns="n", values="cell").fillna("—")
    header = "| form | solver | " + " | ".join(f"n = {n}" for n in wide.columns) + " |"
    lines = [header, "|" + " --- |" * (len(wide.columns) + 2)]
    lines += [f"| {form} | {solver} | " + " | ".join(row) + " |" for (form, solver), row in wide.iterrows()]
    return "\n".join(lines)


def main(quick: bool = False, results: bool = False) -> pd.DataFrame:
    sizes = (10, 20) if quick else (10, 20, 40, 80, 160)
    solvers = [s for s in ("CLARABEL", "SCS") if s in formulations.available_solvers()]
    table = with_errors(measure(sizes, solvers))
    if not quick:
        table.to_csv(HERE / "formulation_sizes.csv", index=False)
    table_md = markdown(table)
    print(table_md)
    if results:
        update_marked_block(HERE.parent / "docs" / "results.md", "formulation-sizes", table_md,
                            "python figures/formulation_sizes.py --results")
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="n = 10, 20 only; writes nothing")
    parser.add_argument("--results", action="store_true", help="put the table into docs/results.md")
    args = parser.parse_args()
    main(quick=args.quick, results=args.results)
