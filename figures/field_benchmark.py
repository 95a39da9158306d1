"""Every method of the field on the paper's data sets, under Chen et al.'s protocol
==================================================================================

``indkernel benchmark`` (:mod:`indkernel.reproduction.benchmark`) on the paper's indefinite
similarities: for each data set, the similarity that Indefinite SVM's cross-validation chose
most often in the paper's tables (``figures/tables/data_stats.csv``); every method of the
registry (:data:`indkernel.estimators.registry.BENCHMARK_METHODS`) over ``--splits`` random
stratified 80/20 splits, parameters by 5-fold cross-validation on the training part (accuracy),
one test per split. Prints one table (test error in percent, mean ± sd; the best of each data
set in bold, with every method not significantly worse than it marked ≈) and writes
``figures/field_benchmark.csv`` (one row per data set, split and method); ``--results`` also
writes the table into the results page. Each data set's splits are kept in ``--out`` as they
finish, so a stopped run resumes::

    INDKERNEL_DATA=<data directory> python figures/field_benchmark.py [--splits 10] [--results]

``main(quick=True)`` runs two splits of the embedded digits' Simpson similarity with each
method's small grid (the test suite's check that the script runs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from indkernel.estimators.registry import BENCHMARK_METHODS
from indkernel.reproduction import experiments
from indkernel.reproduction.benchmark import benchmark, summarize
from indkernel.reproduction.report import update_marked_block

HERE = Path(__file__).parent
OUT = HERE / "field_benchmark.csv"
RESULTS = HERE.parent / "docs" / "results.md"
#: The data sets and their similarity (the one chosen most often in the paper's tables).
DATASETS = {"USPS-3-5-SS": "simpson", "USPS-4-6-SS": "simpson", "diabetes-sig": "a=0.1/p, r=1",
            "german-sig": "a=1/p, r=0", "a1a-sig": "a=1/p, r=0"}
QUICK_DATASETS = {"digits-3-5-SS": "simpson"}


def main(splits: int = 10, *, quick: bool = False, datasets=None, parts: Path | None = None, out: Path | None = OUT,
         data_dir=None, results: bool = False) -> pd.DataFrame:
    chosen = QUICK_DATASETS if quick else {name: DATASETS[name] for name in (datasets or DATASETS)}
    frames = []
    for name, similarity in chosen.items():
        data = experiments.load(name, quick=quick, data_dir=data_dir)
        folder = None if parts is None else parts / name
        result = benchmark(data.similarities[similarity](), data.y, splits=2 if quick else splits, quick=quick,
                           out=folder, quiet=quick)
        frames.append(result.runs.assign(dataset=name, similarity=similarity, n=len(data.y)))
    runs = pd.concat(frames, ignore_index=True)
    markdown = table_markdown(runs)
    print(markdown)
    if out is not None:
        runs.to_csv(out, index=False)
    if results:
        command = "INDKERNEL_DATA=<data directory> python figures/field_benchmark.py" + (
            f" --splits {splits}" if splits != 10 else "") + (f" --datasets {' '.join(datasets)}" if datasets else "")
        update_marked_block(RESULTS, "field-benchmark", markdown, command + " --results")
    return runs


def table_markdown(runs: pd.DataFrame) -> str:
    """Methods by rows, data sets by columns: the test error (mean ± sd over the splits); per data
    set the best mean in bold and ≈ on every method whose paired difference to it is not
    significant (:func:`indkernel.reproduction.benchmark.summarize`)."""
    names = list(dict.fromkeys(runs.dataset))
    cells: dict[str, dict[str, str]] = {}
    for name in names:
        group = runs[runs.dataset == name]
        for row in summarize(group).itertuples():
            text = f"{row.error_mean:.2f} ± {row.error_sd:.2f}"
            text = f"**{text}**" if row.best else (text if row.worse_than_best else f"≈ {text}")
            cells.setdefault(row.method, {})[name] = text
    first = runs.groupby("dataset").first()
    header = [f"{name} (n = {first.n[name]}, {first.similarity[name]})" for name in names]
    splits = runs.groupby("dataset").split.nunique().min()
    lines = [f"Test error in percent, mean ± sd over {splits} random stratified 80/20 splits; the best per data set "
             "in bold, ≈ where a method's paired difference to it is not significant (two-sided t-test, 0.05).", "",
             "| method | " + " | ".join(header) + " |", "| --- |" + " ---: |" * len(names)]
    for method in [name for name in BENCHMARK_METHODS if name in cells]:
        lines.append(f"| {method} | " + " | ".join(cells[method].get(name, "—") for name in names) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=None)
    parser.add_argument("--out", type=Path, default=Path("field-benchmark-parts"),
                        help="folder of the part files (a stopped run resumes from them)")
    parser.add_argument("--results", action="store_true", help="write the table into docs/results.md")
    arguments = parser.parse_args()
    main(arguments.splits, datasets=arguments.datasets, parts=arguments.out, results=arguments.results)
