"""The protocol of the paper on the embedded digits (quick mode), and its pieces."""

import numpy as np
import pytest

from indkernel import IndefiniteSVC
from indkernel.estimators.baselines import SpectrumSVC
from indkernel.reproduction import experiments
from indkernel.reproduction.protocol import performance, random_split, select_and_test


def test_performance_measures_by_hand():
    y_true = np.array([3, 3, 3, 5, 5, 5, 5, 3])
    y_pred = np.array([3, 5, 3, 5, 3, 5, 5, 3])
    scores = performance(y_true, y_pred, positive=3)
    assert scores["accuracy"] == pytest.approx(100 * 6 / 8)
    assert scores["recall"] == pytest.approx(100 * 3 / 4)  # TP = 3, FN = 1
    assert scores["average"] == pytest.approx((75 + 75) / 2)


def test_random_split_has_the_papers_sizes():
    split = random_split(np.arange(1540) % 2, 767, seed=3)
    assert len(split.train) == 767 and len(split.test) == 773
    assert np.intersect1d(split.train, split.test).size == 0


def test_the_papers_tables_are_consistent():
    """Typos guard: every average in the paper's tables is (accuracy + recall)/2 to the rounding."""
    for rows in list(experiments.PAPER_PERFORMANCE.values()) + list(experiments.PAPER_PERTURB.values()):
        for accuracy, recall, average in rows:
            assert average == pytest.approx((accuracy + recall) / 2, abs=0.011)
    for train, test, low, high in experiments.PAPER_STATS.values():
        assert low < 0 < high and train > 0 and test > 0


@pytest.fixture(scope="module")
def digits():
    return experiments.load("digits-3-5-SS", quick=True)


def test_cross_validation_picks_the_best_grid_point(digits):
    """The selected parameters have the best mean cross-validated score, and the reported test
    scores are those of the refitted model."""
    outcome = select_and_test(SpectrumSVC("denoise"), {"C": [0.01, 1.0, 100.0]}, digits.similarities, digits.y,
                              digits.split, positive=digits.positive)
    K = digits.similarities["simpson"]()
    model = SpectrumSVC("denoise", C=outcome.params["C"]).fit(K[np.ix_(digits.split.train, digits.split.train)],
                                                              digits.y[digits.split.train])
    predicted = model.predict(K[np.ix_(digits.split.test, digits.split.train)])
    assert outcome.test == performance(digits.y[digits.split.test], predicted, digits.positive)
    assert outcome.test["accuracy"] > 85


def test_indefinite_svm_is_tested_with_the_transductive_rule(digits):
    outcome = select_and_test(IndefiniteSVC(tol=1e-4), {"C": [1.0], "rho": [1.0]}, digits.similarities, digits.y,
                              digits.split, positive=digits.positive, transductive=True)
    assert outcome.fitted.test_kernel == "transductive" and outcome.test["accuracy"] > 85


def test_noisy_images_stay_in_the_unit_interval():
    data = experiments.load("digits-3-5-linear", quick=True, noisy=True)
    clean = experiments.load("digits-3-5-linear", quick=True)
    assert data.X.min() >= 0 and data.X.max() <= 1 and not np.allclose(data.X, clean.X)
    np.testing.assert_array_equal(data.split.test, clean.split.test)


def test_unknown_data_set():
    with pytest.raises(ValueError, match="unknown data set 'mnist-sig'"):
        experiments.load("mnist-sig")


def test_the_time_of_an_earlier_run_is_read_from_its_runs_csv(tmp_path):
    """The line a tables run prints first quotes the last whole run of the same mode in --out
    (the package holds no machine's minutes); nothing where there is none or the file is damaged."""
    from indkernel.reproduction.experiments import previous_run

    assert previous_run(tmp_path, "full") == ""
    (tmp_path / "runs.csv").write_text(
        "command,mode,digits,splits,minutes,n_jobs,cores,datasets,methods\n"
        "indkernel tables --splits 10,full,False,10,98.6,2,2,all,all\n"
        "indkernel tables --splits 10 --datasets a1a-sig,full,False,10,12.0,2,2,a1a-sig,all\n")
    assert previous_run(tmp_path, "full") == (" (a whole run, `indkernel tables --splits 10`, took 99 minutes on 2 cores "
                                              "with n_jobs=2)")
    assert previous_run(tmp_path, "quick") == ""
    (tmp_path / "runs.csv").write_bytes(b"\x00\x01garbage")
    assert previous_run(tmp_path, "full") == ""
