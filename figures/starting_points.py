"""Where projected Newton starts: C/2, its ray's scaled point, zero or libsvm's solution on K0
===========================================================================================

Every method starts at C/2 (:meth:`IndefiniteProblem.initial_point`), where f can lie orders of
magnitude below p*: its quartic ``‖u‖⁴/(16ρ)``. The scaled start is C/2 scaled to the maximizer t
of f's lower model along the ray (:meth:`IndefiniteProblem.ray_model`, the squared hinge's own
start). Two tables:

* by default, on the tables' binary problems (one similarity each), Newton's iterations and
  seconds to a certified relative gap of 1e-3 (``IndefiniteSVC``'s setting in the tables) and
  1e-6 from C/2, the scaled point, zero, and libsvm's solution on K0 (an SVM on the indefinite
  matrix, solved as if it were a kernel; its own time is added); K0's eigendecomposition once
  per problem, before the timed solves; medians of ``--repeats`` runs;
* ``--grid``: random subsets of 160 points of USPS 3 vs 5 (Simpson) and of the tables' three
  sigmoid sets, C in {1, 10, 100} × ρ in {0.1, 1, 10, 100, 1000}, three subsets each, Newton to
  1e-4 from C/2 and from the scaled point, alternating (medians of three runs), and the model's
  quartic share at t (:func:`quartic_share`); writes ``figures/starting_points.csv`` and
  prints the ratios on either side of a share of ``SHARE``::

    INDKERNEL_DATA=<data directory> python figures/starting_points.py [--repeats 3] [--grid]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from indkernel import SVMProblem, solve
from indkernel.reproduction.experiments import load

OUT = Path(__file__).with_name("starting_points.csv")
#: ``--grid``'s data sets: (name, similarity), the sigmoid sets' as in ``figures/model_selection.py``.
GRID_DATA = (("USPS-3-5-SS", "simpson"), ("german-sig", "a=1/p, r=0"), ("diabetes-sig", "a=0.1/p, r=1"),
             ("a1a-sig", "a=1/p, r=0"))
GRID_C, GRID_RHO, GRID_N, GRID_SUBSETS = (1.0, 10.0, 100.0), (0.1, 1.0, 10.0, 100.0, 1000.0), 160, 3
#: The quartic share at which ``--grid``'s verdict splits its settings.
SHARE = 0.1


def problems():
    """``(name, K0, y, C, rho)``: the training part of the tables' first split, one similarity each."""
    for name, similarity, C, rho in (("USPS-3-5-SS", "simpson", 10.0, 1.0), ("USPS-3-5-SS", "simpson", 100.0, 0.1),
                                     ("USPS-3-5-TD1", "gamma=0.03", 10.0, 100.0),
                                     ("german-sig", "a=0.1/p, r=-1", 10.0, 1.0),
                                     ("diabetes-sig", "a=1/p, r=0", 1.0, 1.0)):
        data = load(name)
        train = data.split.train
        K = data.similarities[similarity]()[np.ix_(train, train)]
        y = np.where(data.y[train] == data.positive, 1.0, -1.0)
        yield f"{name} {similarity} C={C:g} ρ={rho:g}", np.ascontiguousarray(K), y, C, rho


def libsvm_start(K0: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """α of libsvm's SVM on K0 (loosely solved: a starting point)."""
    machine = SVC(kernel="precomputed", C=C, tol=1e-2).fit(K0, y)
    alpha = np.zeros(len(y))
    alpha[machine.support_] = np.abs(machine.dual_coef_[0])
    return alpha


def scaled(problem: SVMProblem) -> np.ndarray:
    """C/2 scaled to the maximizer of f's lower model along its ray."""
    start = problem.initial_point()
    return start * problem.ray_model(start).maximizer()


#: α0 for ``solve`` from (problem, K0, y, C): None is the problem's initial point (C/2).
STARTS = {"C/2": lambda problem, K0, y, C: None, "scaled": lambda problem, K0, y, C: scaled(problem),
          "zero": lambda problem, K0, y, C: np.zeros(len(y)), "libsvm": lambda problem, K0, y, C: libsvm_start(K0, y, C)}


def table(repeats: int) -> pd.DataFrame:
    rows = []
    for name, K0, y, C, rho in problems():
        problem = SVMProblem(K0, y, C, rho)
        problem.oracle.prepare()
        for tol in (1e-3, 1e-6):
            for start in STARTS:
                seconds, iterations, statuses = [], [], set()
                for _ in range(repeats):
                    begin = time.perf_counter()
                    result = solve(problem, "newton", tol=tol, alpha0=STARTS[start](problem, K0, y, C))
                    seconds.append(time.perf_counter() - begin)
                    iterations.append(result.iterations)
                    statuses.add(result.status)
                rows.append(dict(problem=name, n=len(y), tol=tol, start=start, seconds=np.median(seconds),
                                 iterations=int(np.median(iterations)), status="/".join(sorted(statuses))))
        print(pd.DataFrame(rows[-2 * len(STARTS):]).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


def quartic_share(problem: SVMProblem) -> float:
    """The ray model's quartic slope at its maximizer t from C/2 beside its quadratic's,
    ``4ct³ / 2bt = 2ct²/b`` (inf where b <= 0): large where the penalty on the kernel's change (ρ)
    rather than the kernel sets t."""
    model = problem.ray_model(problem.initial_point())
    t = model.maximizer()
    return 2 * model.c * t * t / model.b if model.b > 0 else np.inf


def grid(repeats: int = 3) -> pd.DataFrame:
    """``--grid``: Newton from C/2 and from the scaled point on each setting's subsets."""
    rows = []
    for name, similarity in GRID_DATA:
        data = load(name)
        K, y = data.similarities[similarity](), np.where(data.y == data.positive, 1.0, -1.0)
        for C in GRID_C:
            for rho in GRID_RHO:
                for subset in range(GRID_SUBSETS):
                    points = np.random.default_rng(subset).choice(len(y), GRID_N, replace=False)
                    problem = SVMProblem(np.ascontiguousarray(K[np.ix_(points, points)]), y[points], C, rho)
                    problem.oracle.prepare()
                    starts = {"C/2": None, "scaled": scaled(problem)}
                    seconds: dict = {start: [] for start in starts}
                    row = dict(data=name, C=C, rho=rho, subset=subset, share=quartic_share(problem))
                    for _ in range(repeats):
                        for start, alpha0 in starts.items():
                            begin = time.perf_counter()
                            row[f"{start} iterations"] = solve(problem, "newton", tol=1e-4, alpha0=alpha0).iterations
                            seconds[start].append(time.perf_counter() - begin)
                    rows.append(row | {f"{start} ms": 1e3 * float(np.median(seconds[start])) for start in starts})
        print(f"{name}: done", flush=True)
    frame = pd.DataFrame(rows).round({"share": 4, "C/2 ms": 3, "scaled ms": 3})
    frame.to_csv(OUT, index=False)
    return frame


def by_setting(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (data, C, ρ), medians over the subsets: the quartic share, the iterations from each start,
    and the scaled start's time over C/2's."""
    settings = frame.groupby(["data", "C", "rho"]).median(numeric_only=True).drop(columns="subset")
    return settings.assign(ratio=settings["scaled ms"] / settings["C/2 ms"])


def verdict(frame: pd.DataFrame) -> str:
    """The scaled start's time against C/2's, per setting, on either side of a quartic share of ``SHARE``."""
    settings = by_setting(frame)
    lines = []
    for label, part in ((f"share >= {SHARE:g}", settings[settings.share >= SHARE]),
                        (f"share < {SHARE:g}", settings[settings.share < SHARE])):
        if len(part):
            lines.append(f"{label} ({len(part)} settings): scaled / C/2 {part.ratio.min():.2f}-{part.ratio.max():.2f} "
                         f"(median {part.ratio.median():.2f}), more iterations in {int((part['scaled iterations'] > part['C/2 iterations']).sum())}, "
                         f"fewer in {int((part['scaled iterations'] < part['C/2 iterations']).sum())}")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--grid", action="store_true", help="the rule's measurement on subsets (writes the CSV)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    if args.grid:
        found = grid(args.repeats)
        print(by_setting(found).round(3).to_string())
        print(verdict(found))
    else:
        frame = table(args.repeats)
        wide = frame.pivot_table(index=["problem", "tol"], columns="start", values="seconds", sort=False)
        print((wide.div(wide["C/2"], axis=0)).round(2).to_string())
