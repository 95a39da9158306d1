"""Kernel times: the similarities on USPS
======================================

Seconds to compute each similarity's full matrix on USPS 3 vs 5 (all 1540 images), the
train×train and test×train blocks of the paper's split, medians of 3 runs in one process.

    INDKERNEL_DATA=<data directory> python figures/kernel_times.py [--results]

Writes ``kernel_times.csv`` beside this file; ``--results`` puts the table into docs/results.md between
the ``kernel-times`` markers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from indkernel import kernels
from indkernel.datasets import load_digits_pair, load_usps
from indkernel.reproduction.report import median_seconds, update_marked_block

HERE = Path(__file__).resolve().parent
SIMILARITIES = {"Simpson": kernels.simpson, "tangent distance": kernels.tangent_distance,
                "sigmoid": lambda X, Y=None: kernels.sigmoid(X, Y, a=1 / X.shape[1], r=0.0),
                "linear": kernels.linear, "Gaussian": lambda X, Y=None: kernels.gaussian(X, Y, gamma=0.02)}


def main(quick: bool = False) -> pd.DataFrame:
    X, _ = load_digits_pair(3, 5) if quick else load_usps((3, 5))
    train, test = X[: len(X) // 2], X[len(X) // 2:]
    rows = [dict(similarity=name, images=len(X), full=median_seconds(lambda f=f: f(X)),
                 train=median_seconds(lambda f=f: f(train)), test_train=median_seconds(lambda f=f: f(test, train)))
            for name, f in SIMILARITIES.items()]
    table = pd.DataFrame(rows)
    if not quick:
        table.to_csv(HERE / "kernel_times.csv", index=False)
    return table


def markdown(table: pd.DataFrame) -> str:
    lines = ["| similarity | full 1540×1540 (s) | train 770×770 (s) | test×train 770×770 (s) |", "| --- | --- | --- | --- |"]
    lines += [f"| {r.similarity} | {r.full:.3f} | {r.train:.3f} | {r.test_train:.3f} |" for r in table.itertuples()]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", action="store_true", help="write the table into docs/results.md")
    args = parser.parse_args()
    text = markdown(main())
    print(text)
    if args.results:
        update_marked_block(HERE.parent / "docs" / "results.md", "kernel-times", text,
                            "INDKERNEL_DATA=<data directory> python figures/kernel_times.py --results")
