"""The paper's ``fig:time_figures``: total time and time per iteration to an absolute certified gap of 0.1 against n, for the projected gradient, ACCPM (n <= 500), the exchange method (n <= 300) and our accelerated gradient, C = 10, several rho, 10 random subsets per size.

Computes the long table (method, run, iteration, time, lower, upper, gap; :mod:`indkernel.reproduce`),
saves it as ``timing_<dataset>_<mode>.csv`` beside this file and draws ``timing_<dataset>_<mode>.png``
from the CSV. ``indkernel figures timing`` runs the same.

    INDKERNEL_DATA=../shared/data python figures/timing.py [--quick] [--dataset digits|usps]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from indkernel.reproduce import reproduce

HERE = Path(__file__).resolve().parent


def main(quick: bool = False, dataset: str = "usps", out: Path | None = None, quiet: bool = False) -> Path:
    """Compute, save and draw; return the PNG path (quick: the small setting on the given data)."""
    mode = "quick" if quick else "full"
    return reproduce("timing", mode=mode, dataset=dataset, out=HERE if out is None else out, quiet=quiet)["timing"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the small setting (a few runs on small subsets)")
    parser.add_argument("--dataset", choices=("digits", "usps"), default="usps", help="digits: embedded; usps: USPS 3 vs 5")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args()
    print(main(args.quick, args.dataset, quiet=args.quiet))
