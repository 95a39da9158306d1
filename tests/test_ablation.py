"""indkernel.reproduction.ablation: the Simpson rows with one choice changed at a time, end to end on the
embedded digits through the command line (quick: subsets, small grids, two splits)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_rel

from indkernel import IndefiniteSVC
from indkernel.cli import main
from indkernel.kernels import simpson
from indkernel.reproduction.ablation import VARIANTS
from indkernel.reproduction.experiments import FIT_TOL, load
from indkernel.reproduction.protocol import performance

#: An experiment end to end (its fixture runs the quick ablation through the CLI: 9 s): with --slow.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ablation(tmp_path_factory):
    out = tmp_path_factory.mktemp("ablation")
    assert main(["tables", "--ablation", "--quick", "--digits", "--splits", "2", "--out", str(out), "--quiet"]) == 0
    return out, pd.read_csv(out / "ablation.csv"), pd.read_csv(out / "ablation_summary.csv")


def test_every_variant_method_data_set_and_split_has_a_row(ablation):
    out, rows, summary = ablation
    assert {p.name for p in out.iterdir()} == {"ablation.csv", "ablation_summary.csv", "ablation.md"}
    assert len(rows) == 2 * 2 * len(VARIANTS) * 2  # data sets x splits x variants x (denoise, Indefinite SVM)
    assert set(rows.variant) == {v.name for v in VARIANTS} and set(rows.split) == {0, 1}
    assert rows[["accuracy", "recall", "average"]].notna().all().all() and (rows.accuracy > 70).all(), rows
    assert len(summary) == 2 * len(VARIANTS)
    assert "--ablation --quick --digits --splits 2" in (out / "ablation.md").read_text()


def test_variants_that_change_only_indefinite_svm_leave_denoise_as_in_the_tables(ablation):
    _, rows, _ = ablation
    denoise = rows[rows.method == "Denoise"].set_index(["dataset", "split", "variant"]).average.unstack()
    for variant in ("inductive test rule", "wide ρ grid"):
        np.testing.assert_array_equal(denoise[variant], denoise["as in the tables"])


def test_the_inductive_rule_refits_the_tables_parameters_and_tests_with_the_train_columns(ablation):
    """The inductive variant's scores against an independent refit: the tables' chosen (C, ρ) on
    the same split, the Simpson kernel computed here, the test×train block."""
    _, rows, _ = ablation
    indefinite = rows[(rows.method == "Indefinite SVM") & (rows.dataset == "digits-3-5-SS") & (rows.split == 1)]
    tables = indefinite[indefinite.variant == "as in the tables"].iloc[0]
    inductive = indefinite[indefinite.variant == "inductive test rule"].iloc[0]
    assert inductive.params == tables.params
    params = {key: float(value) for key, value in (item.split("=") for item in tables.params.split(", "))}
    data = load("digits-3-5-SS", quick=True, seed=1)
    K, train, test = simpson(data.X), data.split.train, data.split.test
    model = IndefiniteSVC(class_weight="authors", tol=FIT_TOL, **params).fit(K[np.ix_(train, train)], data.y[train])
    expected = performance(data.y[test], model.predict(K[np.ix_(test, train)]), data.positive)
    assert inductive.average == pytest.approx(expected["average"])
    assert inductive.accuracy == pytest.approx(expected["accuracy"])


def test_the_summary_is_the_paired_difference_of_the_rows(ablation):
    _, rows, summary = ablation
    for row in summary.itertuples():
        group = rows[(rows.dataset == row.dataset) & (rows.variant == row.variant)]
        ours = group[group.method == "Indefinite SVM"].set_index("split").average.sort_index()
        theirs = group[group.method == "Denoise"].set_index("split").average.sort_index()
        assert row.mean_difference == pytest.approx((ours - theirs).mean())
        assert row.paper_ordering == ((ours - theirs).mean() > 0)
        if (ours - theirs).std() > 0:
            assert row.p_value == pytest.approx(ttest_rel(ours, theirs).pvalue)
        else:
            assert np.isnan(row.p_value) and not row.significant
