"""The paper's two figures
=======================

The paper's two figures (:mod:`indkernel.reproduction.reproduce` computes them; ``indkernel figures`` runs the same):

- ``fig:convergence_figures``: certified gap against iteration for the paper's projected gradient
  and ACCPM, and our ACCPM variant, exchange method, accelerated gradient and projected Newton,
  every curve from the start they share, mean over random subsets of USPS 3 vs 5 (Simpson kernel)
  shaded at ± one standard deviation;
- ``fig:time_figures``: total time and time per iteration to an absolute certified gap of 0.1
  against n, for the projected gradient, ACCPM (n <= 500), the exchange method (n <= 300) and our
  accelerated gradient, C = 10, several ρ, 10 random subsets per size.

Each computes its long table (method, run, iteration, time, lower, upper, gap), saves it as
``<figure>_<dataset>_<mode>.csv`` beside this file and draws ``<figure>_<dataset>_<mode>.png`` from it.

    INDKERNEL_DATA=<data directory> python figures/paper_figures.py [convergence|timing|all] [--quick] [--dataset digits|usps]
    python figures/paper_figures.py --redraw     # the PNGs again from the CSVs beside this file
    python figures/paper_figures.py --summary    # the results page's numbers, from the CSVs beside this file

(the options of ``indkernel figures``; the defaults here are ``--full --dataset usps``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from indkernel.cli import main as indkernel
from indkernel.reproduction.reproduce import FIGURES, convergence_summary, redraw, reproduce, timing_summary

HERE = Path(__file__).resolve().parent


def main(which: str = "all", quick: bool = False, dataset: str = "usps", out: Path | None = None,
         quiet: bool = False) -> dict[str, Path]:
    """Compute, save and draw; return the PNG paths by figure name."""
    return reproduce(which, mode="quick" if quick else "full", dataset=dataset, out=out or HERE, quiet=quiet)


def redraw_all() -> list[Path]:
    """Draw every figure whose CSV is beside this file again, from that CSV."""
    return [redraw(csv) for name in FIGURES for csv in sorted(HERE.glob(f"{name}_*.csv"))]


def summaries() -> str:
    """The tables the results page quotes, from the full USPS CSVs beside this file."""
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3g}".format):
        convergence = convergence_summary(pd.read_csv(HERE / "convergence_usps_full.csv"),
                                          iterations=(100, 200, 300, 400, 500))
        timing = timing_summary(pd.read_csv(HERE / "timing_usps_full.csv"))
        return f"{convergence.to_string(index=False)}\n\n{timing.to_string(index=False)}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--summary"]:
        print(summaries())
        sys.exit(0)
    if sys.argv[1:] == ["--redraw"]:
        print("\n".join(str(path) for path in redraw_all()))
        sys.exit(0)
    options = sys.argv[1:] if "--quick" in sys.argv else ["--full", *sys.argv[1:]]
    sys.exit(indkernel(["figures", "--out", str(HERE), "--dataset", "usps", *options]))
