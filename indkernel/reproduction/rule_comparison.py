"""Which test rule: Indefinite SVM's rules for new points over random splits of the paper's data
sets, each cross-validated with the rule it is then tested with, against denoise (an experiment
beyond the paper, behind the estimators' default ``test_kernel``).

The rules (:mod:`indkernel.estimators.rules`): ``raw`` (``k0(x)ᵀβ + b``), ``consistent``
(``k0(x)ᵀPβ + b``, P the projector onto the positive eigenspace of ``A = K0 + ββᵀ/(4ρ)`` at the
solution) and ``transductive`` (the paper's heuristic, ``ss:interpretation``), and two variants of
the consistent map, for the study only: ``consistent-K0`` (P from K0 alone, the map denoise applies
to its test rows) and ``consistent-flip`` (``Q diag(sign λ) Qᵀ`` instead of ``Q diag(λ⁺/λ) Qᵀ``,
that is ``w = 2Pβ - β``, the map of flip). (Weighting by ``λ⁺/λ`` is weighting by 0/1: the same
map.)

Protocol per data set and split, as the tables' (:mod:`indkernel.reproduction.experiments`): a random split of
the paper's sizes; 5-fold cross-validation on the training part over C, ρ and the similarity's
parameters, scored by (accuracy + recall)/2, every grid point fitted once per fold and scored
with every rule; per rule, the best parameters refitted on the training part and tested once
with that rule. Denoise runs the same protocol over C and the similarity. Each (data set, split)
is written to its own CSV as it finishes, so a run can be stopped and resumed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
from sklearn import model_selection  # through its module: the API docs' autosummary scans imported classes
from sklearn.base import clone

from .._files import write_csv, write_text
from .._progress import tqdm
from ..estimators.baselines import SpectrumSVC
from ..estimators.indefinite import IndefiniteSVC
from . import experiments
from .parts import read_part
from .protocol import performance, select_and_test

RULES = ("raw", "consistent", "transductive", "consistent-K0", "consistent-flip")
#: The estimators' rules but the study's two variants.
MAIN_RULES = ("raw", "consistent", "transductive")
FOLDS = 5


def rule_predictions(model, K: np.ndarray, train: np.ndarray, test: np.ndarray, rules=RULES) -> dict[str, np.ndarray]:
    """The labels ``model`` (fitted on ``K[train, train]``) predicts at the ``test`` points by each
    of ``rules`` (:mod:`indkernel.estimators.rules`); ``K`` is the similarity over all points. The
    model is left with its default rule."""
    cross, predictions = K[np.ix_(test, train)], {}
    for rule in rules:
        rows = K[np.ix_(test, np.concatenate([train, test]))] if rule == "transductive" else cross
        predictions[rule] = model.set_params(test_kernel=rule).predict(rows)
    model.set_params(test_kernel="consistent")
    return predictions


def _fold_scores(estimator, points: list[dict], K: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray,
                 score: Callable, rules) -> np.ndarray:
    """(len(points), len(rules)): the score of every grid point by every rule on one fold."""
    scores = np.empty((len(points), len(rules)))
    for g, params in enumerate(points):
        model = clone(estimator).set_params(**params).fit(K[np.ix_(train, train)], y[train])
        predictions = rule_predictions(model, K, train, test, rules)
        scores[g] = [score(y[test], predictions[rule]) for rule in rules]
    return scores


def cross_validate_rules(estimator, grid: dict, similarities: Mapping[str, Callable[[], np.ndarray]], y, rows, *,
                         cv, score: Callable, rules=RULES, n_jobs=None) -> dict[str, tuple[float, str, dict]]:
    """Cross-validate ``estimator`` over ``grid`` and the similarity matrices on the training
    ``rows``, every grid point fitted once per fold and scored by every rule; per rule, the best
    ``(score, similarity name, parameters)`` (ties to the first, as ``GridSearchCV``)."""
    points, y = list(model_selection.ParameterGrid(grid)), np.asarray(y)
    folds = list(cv.split(rows, y[rows]))
    names = list(similarities)
    scores = joblib.Parallel(n_jobs=n_jobs)(
        joblib.delayed(_fold_scores)(estimator, points, similarities[name](), y, rows[fit], rows[held], score, rules)
        for name in names for fit, held in folds)
    mean = np.mean(np.reshape(scores, (len(names), len(folds), len(points), len(rules))), axis=1)
    best = {}
    for r, rule in enumerate(rules):
        s, g = np.unravel_index(np.argmax(mean[:, :, r]), mean.shape[:2])
        best[rule] = (float(mean[s, g, r]), names[s], points[g])
    return best


def paper_score(positive) -> Callable:
    """The tables' cross-validation score, (accuracy + recall)/2 (:func:`indkernel.reproduction.protocol.performance`)."""
    return partial(_average, positive=positive)


def _average(y_true, y_pred, positive) -> float:
    return performance(y_true, y_pred, positive)["average"]


def compare_rules(data: experiments.DataSet, estimator, grid: dict, *, folds: int = FOLDS, n_jobs=None,
                  seed: int = 0) -> pd.DataFrame:
    """One row per rule (and one for denoise) on one data set and split: the test accuracy, recall
    and average, the cross-validated score, the chosen parameters and similarity."""
    started = time.perf_counter()
    y, train, test = np.asarray(data.y), data.split.train, data.split.test
    best = cross_validate_rules(estimator, grid, data.similarities, y, train, n_jobs=n_jobs,
                                cv=model_selection.StratifiedKFold(folds, shuffle=True, random_state=seed),
                                score=paper_score(data.positive))
    rows, refits = [], {}
    for rule, (cv_score, name, params) in best.items():
        K = data.similarities[name]()
        key = (name, tuple(sorted(params.items())))
        if key not in refits:
            refits[key] = clone(estimator).set_params(**params).fit(K[np.ix_(train, train)], y[train])
        predicted = rule_predictions(refits[key], K, train, test, [rule])[rule]
        rows.append(dict(method="Indefinite SVM", rule=rule, **performance(y[test], predicted, data.positive),
                         cv_score=cv_score, similarity=name, params=experiments._describe(params)))
    seconds = time.perf_counter() - started
    denoise = select_and_test(SpectrumSVC("denoise", class_weight="authors"), {"C": grid["C"]}, data.similarities,
                              y, data.split, positive=data.positive, n_jobs=n_jobs, seed=seed)
    rows.append(dict(method="Denoise", rule="denoise", **denoise.test, cv_score=denoise.cv_score,
                     similarity=denoise.similarity, params=experiments._describe(denoise.params)))
    return pd.DataFrame(rows).assign(dataset=data.name, split=seed, seconds=round(seconds, 1))


#: The columns a part file (one data set and split) must hold to be reused.
PART_COLUMNS = ("dataset", "split", "method", "rule", "seconds")
#: The files :func:`run` writes into its folder at the end (``indkernel tables`` replaces them only with
#: ``--force``; the part files of a stopped run are resumed).
OUTPUTS = ("rules.csv", "rules_paired.csv", "rules.md")


def run(out, *, splits: int = 10, datasets=None, quick: bool = False, digits: bool = False, data_dir=None,
        n_jobs=2, quiet: bool = False) -> dict:
    """:func:`compare_rules` on every data set of ``table:gen_performance`` (or ``datasets``) and
    ``splits`` random splits; each (data set, split) to ``out/<data set>-<split>.csv`` unless that
    file exists and is whole (so a stopped run resumes; a damaged one is named and redone), then the summary (:func:`summarize`) to
    ``out/rules.csv``, ``out/rules_paired.csv`` and ``out/rules.md``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    every = experiments.DIGITS_PERFORMANCE_SETS if digits else experiments.PERFORMANCE_SETS
    names = every if datasets is None else experiments._known_names(datasets, every, "datasets")
    Cs, rhos = experiments._grids(quick)
    estimator = IndefiniteSVC(class_weight="authors", tol=experiments.FIT_TOL)
    parts = {(name, seed): read_part(out / f"{name}-{seed}.csv", PART_COLUMNS, holding={"rule": (*RULES, "denoise")})
             for seed in range(splits) for name in names}
    todo = [key for key, part in parts.items() if part is None]
    for name, seed in tqdm(todo, desc="test rules", disable=quiet):
        data = experiments.load(name, quick=quick, data_dir=data_dir, seed=seed)
        parts[name, seed] = compare_rules(data, estimator, {"C": Cs, "rho": rhos}, n_jobs=n_jobs, seed=seed)
        write_csv(out / f"{name}-{seed}.csv", parts[name, seed])
    table = pd.concat(parts.values(), ignore_index=True)
    summary = summarize(table)
    write_csv(out / "rules.csv", table)
    write_csv(out / "rules_paired.csv", summary["paired"])
    command = ("indkernel tables --rules" + (" --quick" if quick else "") + (" --digits" if digits else "")
               + f" --splits {splits}" + ("" if datasets is None else " --datasets " + " ".join(names)))
    minutes = table.groupby(["dataset", "split"]).seconds.first().sum() / 60
    write_text(out / "rules.md", f"Made by `{command}` (n_jobs={n_jobs}): Indefinite SVM's cross-validation, "
                                 f"refits and tests took {minutes:.1f} minutes in all.\n\n{summary['markdown']}\n")
    return dict(table=table, **summary)


def summarize(table: pd.DataFrame, measure: str = "average") -> dict:
    """Mean ± sd of ``measure`` per data set and rule over the splits, and each rule paired against
    denoise and against the transductive rule (:func:`indkernel.reproduction.experiments.paired`)."""
    wide = table.pivot_table(index=["dataset", "split"], columns="rule", values=measure)
    order = list(dict.fromkeys(table.dataset))
    paired = pd.DataFrame([dict(dataset=name, rule=rule, baseline=baseline,
                                **experiments.paired(wide.loc[name, rule], wide.loc[name, baseline]))
                           for name in order for rule in RULES for baseline in ("denoise", "transductive")
                           if rule != baseline])
    columns = [*RULES, "denoise"]
    lines = ["| data set | " + " | ".join(columns) + " |", "|" + " --- |" * (1 + len(columns))]
    for name in order:
        cells = [f"{wide.loc[name, c].mean():.2f} ± {wide.loc[name, c].std():.2f}" for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    overall = wide.groupby(level="dataset").mean().mean()
    lines.append("| mean over data sets | " + " | ".join(f"{overall[c]:.2f}" for c in columns) + " |")
    difference = ["| data set | rule | − denoise | p | − transductive | p |", "|" + " --- |" * 6]
    for (name, rule), group in paired.groupby(["dataset", "rule"], sort=False):
        cells = []
        for baseline in ("denoise", "transductive"):
            row = group[group.baseline == baseline]
            if row.empty:
                cells += ["—", "—"]
                continue
            row = row.iloc[0]
            text = f"{row.mean_difference:+.2f}"
            cells += [f"**{text}**" if row.significant else text, "—" if np.isnan(row.p_value) else f"{row.p_value:.3f}"]
        difference.append(f"| {name} | {rule} | " + " | ".join(cells) + " |")
    splits = table.split.nunique()
    markdown = (f"(accuracy + recall)/2 on the test part, mean ± sd over {splits} random splits; each rule "
                "cross-validated with itself.\n\n" + "\n".join(lines)
                + "\n\nPaired differences over the splits (bold: two-sided paired t-test p < "
                f"{experiments.SIGNIFICANCE:g}).\n\n" + "\n".join(difference))
    return dict(summary=wide, paired=paired, markdown=markdown)


