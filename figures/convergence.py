"""The paper's ``fig:convergence_figures``: certified gap against iteration for the paper's projected gradient and ACCPM and our accelerated gradient, mean over random subsets of USPS 3 vs 5 (Simpson kernel) with dashed ± one standard deviation.

Computes the long table (method, run, iteration, time, lower, upper, gap; :mod:`indkernel.reproduce`),
saves it as ``convergence_<dataset>_<mode>.csv`` beside this file and draws ``convergence_<dataset>_<mode>.png``
from the CSV. ``indkernel figures convergence`` runs the same.

    INDKERNEL_DATA=../shared/data python figures/convergence.py [--quick] [--dataset digits|usps]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from indkernel.reproduce import reproduce

HERE = Path(__file__).resolve().parent


def main(quick: bool = False, dataset: str = "usps", out: Path | None = None, quiet: bool = False) -> Path:
    """Compute, save and draw; return the PNG path (quick: the small setting on the given data)."""
    mode = "quick" if quick else "full"
    return reproduce("convergence", mode=mode, dataset=dataset, out=HERE if out is None else out, quiet=quiet)["convergence"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the small setting (a few runs on small subsets)")
    parser.add_argument("--dataset", choices=("digits", "usps"), default="usps", help="digits: embedded; usps: USPS 3 vs 5")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args()
    print(main(args.quick, args.dataset, quiet=args.quiet))
