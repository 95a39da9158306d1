"""The comparison of the rules for new points: its shared cross-validation against GridSearchCV
per rule, its variants against their definitions, the resumable command."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from indkernel import IndefiniteSVC
from indkernel.cli import main
from indkernel.reproduction import experiments, rule_comparison
from indkernel.reproduction.protocol import average_scorer

GRID = {"C": [1.0, 10.0], "rho": [0.1, 1.0]}


@pytest.fixture(scope="module")
def data():
    return experiments.load("digits-3-5-TD1", quick=True, seed=1)


def test_each_rule_is_cross_validated_as_grid_search_would_with_that_rule(data):
    """One fit per grid point and fold, scored by every rule, chooses what a GridSearchCV with
    the estimator set to that rule chooses (same folds, scores and ties), for both similarities."""
    estimator = IndefiniteSVC(class_weight="authors", tol=1e-4)
    train, y = data.split.train, data.y
    cv = StratifiedKFold(5, shuffle=True, random_state=1)
    best = rule_comparison.cross_validate_rules(estimator, GRID, data.similarities, y, train, cv=cv,
                                                score=rule_comparison.paper_score(data.positive), n_jobs=2)
    assert set(best) == set(rule_comparison.RULES)
    for rule in ("raw", "consistent"):
        expected = None
        for name, similarity in data.similarities.items():
            K = similarity()
            search = GridSearchCV(clone(estimator).set_params(test_kernel=rule), GRID, cv=cv,
                                  scoring=average_scorer(data.positive)).fit(K[np.ix_(train, train)], y[train])
            if expected is None or search.best_score_ > expected[0]:
                expected = (search.best_score_, name, search.best_params_)
        assert best[rule][1:] == expected[1:] and best[rule][0] == pytest.approx(expected[0], abs=1e-12)


def test_the_variants_are_their_definitions(data):
    """consistent-K0: w from the projector of K0's positive eigenspace; consistent-flip: from
    ``Q diag(sign λ) Qᵀ`` of ``A = K0 + ββᵀ/(4ρ)``; both written out by a full eigendecomposition."""
    K = data.similarities["gamma=0.01"]()
    train, test, y = data.split.train, data.split.test, data.y
    model = IndefiniteSVC(C=10.0, rho=0.1, tol=1e-8).fit(K[np.ix_(train, train)], y[train])
    predictions = rule_comparison.rule_predictions(model, K, train, test)
    beta = np.zeros(len(train))
    beta[model.support_] = model.dual_coef_[0]
    d, V = np.linalg.eigh(K[np.ix_(train, train)])
    lam, Q = np.linalg.eigh(K[np.ix_(train, train)] + np.outer(beta, beta) / (4 * 0.1))
    expected = {"consistent-K0": (V * (d > 0)) @ V.T @ beta, "consistent-flip": (Q * np.sign(lam)) @ Q.T @ beta}
    for rule, w in expected.items():
        decision = K[np.ix_(test, train)] @ w + model.intercept_[0]
        assert np.array_equal(predictions[rule], model.classes_[(decision > 0).astype(int)])
    assert np.array_equal(predictions["consistent"], model.predict(K[np.ix_(test, train)]))
    assert model.test_kernel == "consistent"


@pytest.mark.slow  # the rules experiment through the CLI, twice (3 s)
def test_rules_run_through_the_command_line_and_resume(tmp_path, capsys, monkeypatch):
    assert main(["tables", "--rules", "--quick", "--digits", "--splits", "1", "--quiet", "--out", str(tmp_path)]) == 0
    markdown = capsys.readouterr().out
    table = pd.read_csv(tmp_path / "rules.csv")
    assert set(table.rule) == {*rule_comparison.RULES, "denoise"} and table.dataset.nunique() == 3
    assert table.average.between(50, 100).all() and "| mean over data sets |" in markdown
    assert (tmp_path / "rules.md").read_text().startswith("Made by `indkernel tables --rules --quick --digits")
    paired = pd.read_csv(tmp_path / "rules_paired.csv")
    assert set(paired.baseline) == {"denoise", "transductive"}
    real = rule_comparison.compare_rules
    monkeypatch.setattr(rule_comparison, "compare_rules", lambda *args, **kwargs: pytest.fail("recomputed"))
    assert main(["tables", "--rules", "--quick", "--digits", "--splits", "1", "--quiet", "--out", str(tmp_path),
                 "--force"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "rules.csv"), table)
    # a part damaged by an interrupted write (an older version wrote in place) is named and redone
    damaged = sorted(tmp_path.glob("*-0.csv"))[0]
    damaged.write_text(damaged.read_text()[:40])
    redone = []
    monkeypatch.setattr(rule_comparison, "compare_rules", lambda *args, **kwargs: redone.append(1) or real(*args, **kwargs))
    with pytest.warns(UserWarning, match=f"the part file {damaged} is damaged"):
        assert main(["tables", "--rules", "--quick", "--digits", "--splits", "1", "--quiet", "--out", str(tmp_path),
                     "--force"]) == 0
    assert redone == [1] and not list(tmp_path.glob(".*.tmp"))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "rules.csv").drop(columns="seconds"),
                                  table.drop(columns="seconds"))  # the same results, another run time


def test_a_part_cut_short_between_or_within_rows_is_named_and_computed_again(tmp_path):
    """A split file truncated mid-row (a run killed by an older version, a full disk) lacks the last
    rules or has a row cut short: it is named and redone, not read (it failed with KeyError: 'denoise')."""
    from indkernel.reproduction.parts import read_part

    rules = (*rule_comparison.RULES, "denoise")
    whole = pd.DataFrame(dict(dataset="digits-3-5-TD1", split=0, method="m", rule=list(rules),
                              average=np.linspace(80, 90, len(rules)), seconds=1.5))
    path = tmp_path / "digits-3-5-TD1-0.csv"
    whole.to_csv(path, index=False)
    holding = {"rule": rules}
    pd.testing.assert_frame_equal(read_part(path, rule_comparison.PART_COLUMNS, holding=holding), whole)
    text = path.read_text()
    for cut, problem in ((text.rindex("\n", 0, len(text) - 1) + 1, "it has no row of rule denoise"),
                         (len(text) - 6, "a row is cut short")):
        path.write_text(text[:cut])
        with pytest.warns(UserWarning, match=re.escape(f"the part file {path} is damaged ({problem})")):
            assert read_part(path, rule_comparison.PART_COLUMNS, holding=holding) is None
