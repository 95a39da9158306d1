"""The methods' registry and ``indkernel benchmark``: Chen et al.'s protocol on a user's matrix."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from problems import digits_simpson
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split

from indkernel.cli import main
from indkernel.estimators.registry import BENCHMARK_METHODS, METHODS, known_methods
from indkernel.reproduction import benchmark as bench
from indkernel.reproduction import experiments

THREE = ["Indefinite SVM", "Denoise", "k-NN"]


@pytest.fixture(scope="module")
def standin():
    """A stand-in for a user's similarity: 60 digits 3 vs 5, Simpson, string labels."""
    K, y = digits_simpson(60, 1)
    return K, np.where(y > 0, "three", "five")


@pytest.mark.parametrize("name", list(METHODS))
def test_every_registered_method_fits_its_quick_grid(name, standin):
    """Each method makes a fresh estimator, takes the options it accepts, and cross-validates over
    its quick grid on a small problem to an accuracy above chance."""
    K, y = standin
    method = METHODS[name]
    assert method.make() is not method.make() and method.citation
    estimator = method.estimator(class_weight="balanced")
    assert estimator.get_params().get("class_weight", "balanced") == "balanced"
    search = GridSearchCV(estimator, method.param_grid(quick=True), cv=3).fit(K, y)
    assert search.best_score_ > 0.6
    assert set(method.param_grid(quick=True)) <= set(method.grid)


def test_the_tables_take_their_methods_from_the_registry():
    """table:gen_performance's methods are the registry's, with the authors' class weights."""
    for quick in (True, False):
        for name, estimator, grid in experiments.gen_performance_methods(quick):
            expected = METHODS[name].estimator(class_weight="authors")
            assert type(estimator) is type(expected) and estimator.get_params() == expected.get_params()
            assert grid == METHODS[name].param_grid(quick)
    assert [name for name, _, _ in experiments.gen_performance_methods(True)] == list(experiments.METHODS)


def test_unknown_methods_are_named():
    with pytest.raises(ValueError, match="'Flop'.*'Flip'"):
        known_methods(["Flip", "Flop"])
    assert "Flip" not in BENCHMARK_METHODS and set(BENCHMARK_METHODS) < set(METHODS)


def test_the_protocol_on_a_standin(standin):
    """Two splits, three methods: every split is stratified 80/20 and seeded, the same for every
    method (paired); each error is the one GridSearchCV gives on that split; the summary's best is
    the lowest mean, its paired differences and t-test those of the splits."""
    K, y = standin
    result = bench.benchmark(K, y, methods=THREE, splits=2, quick=True, quiet=True)
    assert list(result.runs.method) == THREE * 2 and list(result.runs.split) == [0, 0, 0, 1, 1, 1]
    row = result.runs.iloc[4]  # split 1, Denoise
    train, test = train_test_split(np.arange(60), test_size=0.2, stratify=y, random_state=1)
    assert len(test) == 12 and np.sum(y[test] == "three") == 6
    search = GridSearchCV(clone(METHODS["Denoise"].estimator()), METHODS["Denoise"].quick_grid, scoring="accuracy",
                          cv=StratifiedKFold(5, shuffle=True, random_state=1)).fit(K[np.ix_(train, train)], y[train])
    assert row.error == pytest.approx(100 * (1 - search.score(K[np.ix_(test, train)], y[test])))
    summary = result.summary.set_index("method")
    wide = result.runs.pivot(index="split", columns="method", values="error")
    best = wide.mean().idxmin()
    assert summary.best.sum() == 1 and summary.loc[best, "best"]
    for name in THREE:
        assert summary.loc[name, "error_mean"] == pytest.approx(wide[name].mean())
        assert summary.loc[name, "difference_to_best"] == pytest.approx((wide[name] - wide[best]).mean())
        differences = wide[name] - wide[best]
        if differences.std() > 0:
            assert summary.loc[name, "p_value"] == pytest.approx(scipy.stats.ttest_rel(wide[name], wide[best]).pvalue)
    assert f"**{summary.loc[best, 'error_mean']:.2f} ±" in result.markdown


def test_a_stopped_run_resumes_from_its_parts(standin, tmp_path, monkeypatch):
    """The part files keep every finished (split, method): a rerun fits only what is missing, a
    rerun with another method only that method, a damaged part is named and redone, and a folder
    of other data is refused before any fit."""
    K, y = standin
    calls = []
    one = bench._one
    monkeypatch.setattr(bench, "_one", lambda name, *args, **kwargs: calls.append(name) or one(name, *args, **kwargs))
    first = bench.benchmark(K, y, methods=THREE, splits=2, quick=True, out=tmp_path, quiet=True)
    assert len(calls) == 6 and (tmp_path / "benchmark.md").read_text().startswith("Test error")
    calls.clear()
    again = bench.benchmark(K, y, methods=THREE, splits=2, quick=True, out=tmp_path, quiet=True)
    assert calls == [] and again.runs.error.tolist() == first.runs.error.tolist()
    more = bench.benchmark(K, y, methods=[*THREE, "Krein SVM"], splits=3, quick=True, out=tmp_path, quiet=True)
    assert calls == ["Krein SVM", "Krein SVM", *THREE, "Krein SVM"] and len(more.runs) == 12
    calls.clear()
    part = tmp_path / "parts" / "split-0.csv"
    part.write_text(part.read_text()[:-25])  # cut short mid-row
    with pytest.warns(UserWarning, match="split-0.csv is damaged"):
        bench.benchmark(K, y, methods=THREE, splits=1, quick=True, out=tmp_path, quiet=True)
    assert calls == THREE
    calls.clear()
    with pytest.raises(ValueError, match="other data or settings"):
        bench.benchmark(K[:50, :50], y[:50], methods=THREE, splits=1, quick=True, out=tmp_path, quiet=True)
    with pytest.raises(ValueError, match="other data or settings"):
        bench.benchmark(K, y, methods=THREE, splits=1, quick=False, out=tmp_path, quiet=True)
    assert calls == []


@pytest.mark.parametrize("change, message", [
    (dict(y=np.array(["a"] * 60)), "one class"),
    (dict(y=np.array(["a", "b"] * 20)), "one label per row"),
    (dict(folds=1), "folds must be at least 2"),
    (dict(folds=30), "fewer than folds=30"),
    (dict(test_size=1.5), "test_size"),
    (dict(splits=0), "splits must be a positive integer"),
    (dict(methods=["SVN"]), "unknown method"),
    (dict(K=np.ones((60, 59))), "square"),
])
def test_bad_input_is_refused_before_any_fit(change, message, standin, monkeypatch):
    K, y = standin
    monkeypatch.setattr(bench, "_one", lambda *args, **kwargs: pytest.fail("a fit started"))
    arguments = dict(K=K, y=y, methods=THREE, splits=2, quick=True, quiet=True) | change
    with pytest.raises(ValueError, match=message):
        bench.benchmark(arguments.pop("K"), arguments.pop("y"), **arguments)


def test_the_command_on_files(standin, tmp_path, capsys):
    """``indkernel benchmark --similarity S.npy --labels y.txt`` prints and writes the table; the
    finished tables are replaced only with --force; --list prints the registry; missing or wrong
    files are refused with exit code 2."""
    K, y = standin
    np.save(tmp_path / "S.npy", K)
    (tmp_path / "y.txt").write_text("\n".join(y))
    out = tmp_path / "out"
    arguments = ["benchmark", "--similarity", str(tmp_path / "S.npy"), "--labels", str(tmp_path / "y.txt"),
                 "--quick", "--splits", "2", "--methods", "Denoise", "k-NN", "--out", str(out), "--quiet"]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "| Denoise |" in printed and "| k-NN |" in printed
    table = pd.read_csv(out / "summary.csv")
    assert list(table.method) == ["Denoise", "k-NN"] and table.best.sum() == 1
    assert main(arguments) == 2 and "--force" in capsys.readouterr().err
    assert main([*arguments, "--force"]) == 0
    assert main(["benchmark", "--list"]) == 0 and "| Krein least squares |" in capsys.readouterr().out
    assert main(["benchmark", "--labels", str(tmp_path / "y.txt")]) == 2
    assert "--similarity: required" in capsys.readouterr().err
    (tmp_path / "short.txt").write_text("\n".join(y[:-1]))
    assert main([*arguments[:3], "--labels", str(tmp_path / "short.txt"), "--out", str(tmp_path / "o2")]) == 2
    assert "one label per row" in capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["benchmark", "--similarity", str(tmp_path / "missing.npy"), "--labels", str(tmp_path / "y.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err
