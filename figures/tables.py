"""The paper's three tables
========================

Reproduce the paper's three tables: ``table:data_stats``, ``table:gen_performance`` and
``table:gen_performance_perturbSVM`` (:mod:`indkernel.reproduction.experiments` holds the protocol, the data
sets and the paper's numbers; ``indkernel tables`` runs the same).

Writes ``tables/data_stats.csv``, ``tables/gen_performance.csv``,
``tables/gen_performance_perturbSVM.csv``, ``tables/paired_comparison.csv``, ``tables/runs.csv``
and ``tables/tables.md`` (our numbers with the paper's in parentheses, the commands and their run
times) beside this file, and prints the markdown.

    INDKERNEL_DATA=<data directory> python figures/tables.py [--quick] [--digits] [--splits R] [--n-jobs 2] [--out DIR]
    INDKERNEL_DATA=<data directory> python figures/tables.py --datasets a1a-sig german-sig  # rerun those rows only
    INDKERNEL_DATA=<data directory> python figures/tables.py --methods "Indefinite SVM"  # rerun that method's cells
    INDKERNEL_DATA=<data directory> python figures/tables.py --ablation [--splits R]   # the Simpson rows' ablations

The whole protocol is repeated over ``--splits`` random splits (default 10; 2 with ``--quick``):
every cell is the mean ± standard deviation, the paper's number marked inside (✓) or outside (✗)
the range of our splits, and a paired t-test across splits compares Indefinite SVM with each
baseline (``paired_comparison.csv``). ``--quick`` runs every step on subsets of 120 points with
small grids; ``--digits`` uses the embedded digits instead of the paper's data sets (no data
directory needed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from indkernel.reproduction.ablation import write_ablation
from indkernel.reproduction.experiments import write_tables

HERE = Path(__file__).resolve().parent


def main(quick: bool = False, digits: bool = False, out: Path | None = None, n_jobs: int | None = 2,
         quiet: bool = False, splits: int | None = None, **sets) -> dict:
    """Write the tables into ``out`` (default ``figures/tables``) over ``splits`` random splits
    (default 10, quick 2); keywords ``performance_sets`` and ``perturb_sets`` choose the rows, and
    ``datasets`` and ``methods`` rerun part of them in a folder that holds the tables (``write_tables``)."""
    return write_tables(HERE / "tables" if out is None else out, quick=quick, digits=digits, n_jobs=n_jobs,
                        quiet=quiet, splits=splits, **sets)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="subsets of 120 points, small grids")
    parser.add_argument("--digits", action="store_true", help="the embedded digits instead of the paper's data")
    parser.add_argument("--splits", type=int, default=None, help="random splits (default 10, --quick 2)")
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel jobs (joblib): the splits, or with one split "
                        "the cross-validation fits")
    parser.add_argument("--ablation", action="store_true", help="instead: the Simpson rows' ablations "
                        "(indkernel.reproduction.ablation), into figures/tables/ablation")
    parser.add_argument("--datasets", nargs="+", default=None, metavar="NAME", help="rerun only these data sets' "
                        "rows, keeping the other rows of the tables in --out")
    parser.add_argument("--methods", nargs="+", default=None, metavar="NAME", help="rerun only these methods' "
                        "cells of table:gen_performance, keeping the other cells of the tables in --out")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: figures/tables)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args()
    if args.ablation:
        result = write_ablation(args.out or HERE / "tables" / "ablation", quick=args.quick, digits=args.digits,
                                n_jobs=args.n_jobs, quiet=args.quiet, splits=args.splits)
    else:
        result = main(args.quick, args.digits, args.out, args.n_jobs, args.quiet, args.splits, datasets=args.datasets,
                      methods=args.methods)
    sys.stdout.write(result["markdown"] + "\n")
