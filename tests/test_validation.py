"""Bad input raises a clear ValueError/TypeError naming the argument and the fix."""

import numpy as np
import pytest
from problems import random_indefinite

from indkernel import SVMProblem

K0, Y = random_indefinite(6, 0)


@pytest.mark.parametrize("K, match", [
    (np.ones((3, 4)), r"K0 must be a square \(n, n\)"),
    (np.ones(5), r"K0 must be a square"),
    (np.ones((1, 1)), r"at least 2x2"),
])
def test_kernel_shape(K, match):
    with pytest.raises(ValueError, match=match):
        SVMProblem(K, np.ones(K.shape[0]) if K.ndim else [1], C=1.0)


def test_kernel_not_numeric():
    with pytest.raises(TypeError, match="K0 must be an array of real numbers"):
        SVMProblem([["a", "b"], ["c", "d"]], [0, 1])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_kernel_not_finite(bad):
    K = K0.copy()
    K[2, 3] = K[3, 2] = bad
    with pytest.raises(ValueError, match=r"K0 contains NaN or inf at index \(2, 3\)"):
        SVMProblem(K, Y)


def test_kernel_not_symmetric_unless_asked():
    K = K0.copy()
    K[0, 1] += 1e-3
    with pytest.raises(ValueError, match="symmetrize=True"):
        SVMProblem(K, Y)
    p = SVMProblem(K, Y, symmetrize=True)
    np.testing.assert_array_equal(p.K0, (K + K.T) / 2)


def test_labels_wrong_length():
    with pytest.raises(ValueError, match="y has 5 labels but K0 is 6x6; give one label per row"):
        SVMProblem(K0, Y[:5])


def test_labels_not_1d():
    with pytest.raises(ValueError, match=r"y must be a 1-D array.*ravel"):
        SVMProblem(K0, Y[:, None])


@pytest.mark.parametrize("y, match", [
    (np.array([0, 1, 2, 0, 1, 2]), "exactly two classes; found 3.*one-vs-rest"),
    (np.ones(6), "exactly two classes; found 1.*one-class"),
    (np.array([0, 1, np.nan, 0, 1, 0]), "y contains NaN or inf"),
])
def test_labels_not_two_classes(y, match):
    with pytest.raises(ValueError, match=match):
        SVMProblem(K0, y)


def test_any_two_labels_map_to_pm1_and_back():
    names = np.array(["cat", "dog", "dog", "cat", "dog", "cat"])
    p = SVMProblem(K0, names)
    np.testing.assert_array_equal(p.classes, ["cat", "dog"])
    np.testing.assert_array_equal(p.y, [-1, 1, 1, -1, 1, -1])
    np.testing.assert_array_equal(p.to_labels(p.y), names)
    np.testing.assert_array_equal(p.to_labels([0.3, -2.0]), ["dog", "cat"])


@pytest.mark.parametrize("C, error, match", [
    (0.0, ValueError, "C must be a positive finite number"),
    (-1.0, ValueError, "C must be a positive finite number"),
    (np.nan, ValueError, "C must be a positive finite number"),
    ("10", TypeError, "C must be a positive real number"),
    (np.array([1.0, 2.0, 0.0, 1.0, 1.0, 1.0]), ValueError, r"C must be > 0 for every sample; C\[2\]"),
    (np.ones(5), ValueError, r"scalar or a vector of length n=6; got shape \(5,\)"),
    (np.ones((6, 1)), ValueError, r"scalar or a vector of length n=6"),
    (np.array([1.0, np.inf, 1, 1, 1, 1]), ValueError, "C contains NaN or inf"),
])
def test_bad_C(C, error, match):
    with pytest.raises(error, match=match):
        SVMProblem(K0, Y, C=C)


@pytest.mark.parametrize("rho, error", [(0.0, ValueError), (-2.0, ValueError), (-np.inf, ValueError),
                                        (np.nan, ValueError), ("1", TypeError), (True, TypeError)])
def test_bad_rho(rho, error):
    with pytest.raises(error, match="rho must be a positive"):
        SVMProblem(K0, Y, rho=rho)


def test_class_weight():
    y = np.array([1, 1, 1, 1, -1, -1])
    p = SVMProblem(K0, y, C=3.0, class_weight="authors")
    np.testing.assert_allclose(p.C, [3, 3, 3, 3, 6, 6])  # C·n₊/n₋ for the negative class
    p = SVMProblem(K0, y, C=3.0, class_weight="balanced")
    np.testing.assert_allclose(p.C, [2.25, 2.25, 2.25, 2.25, 4.5, 4.5])  # scikit-learn's n / (2 n_c)
    p = SVMProblem(K0, y, C=np.arange(1.0, 7.0), class_weight={-1: 0.5})
    np.testing.assert_allclose(p.C, [1, 2, 3, 4, 2.5, 3])
    with pytest.raises(ValueError, match="class_weight must be None, 'balanced' .* 'authors' .* or a dict"):
        SVMProblem(K0, y, class_weight="auto")
    with pytest.raises(ValueError, match=r"class_weight has labels \[7\] not in y"):
        SVMProblem(K0, y, class_weight={7: 1.0})
    with pytest.raises(ValueError, match="class_weight values must be positive"):
        SVMProblem(K0, y, class_weight={1: -1.0})
    with pytest.raises(TypeError, match="class_weight must be"):
        SVMProblem(K0, y, class_weight=[1, 2])


def test_certify_refuses_infeasible_alpha():
    p = SVMProblem(K0, Y, C=1.0)
    alpha = p.initial_point()
    for bad in (alpha + 0.1 * (Y > 0), np.where(np.arange(6) == 0, -0.5, alpha), alpha * 0 + 2.0):
        with pytest.raises(ValueError, match=r"not in the feasible set A.*problem.project\(alpha\)"):
            p.certify(bad)
    p.certify(alpha)  # feasible: fine


def test_vector_arguments():
    p = SVMProblem(K0, Y)
    with pytest.raises(ValueError, match=r"alpha must be a vector of length n=6; got shape \(5,\)"):
        p.objective(np.ones(5))
    with pytest.raises(ValueError, match="alpha contains NaN or inf"):
        p.gradient(np.full(6, np.nan))
    with pytest.raises(ValueError, match=r"x must be a vector of length n=6"):
        p.project(np.ones(7))
    with pytest.raises(ValueError, match="form must be one of"):
        p.objective(np.zeros(6), form="smoothed")


def test_unknown_oracle():
    with pytest.raises(ValueError, match=r"oracle must be one of \['eigh', 'rank-one'\]"):
        SVMProblem(K0, Y, oracle="magic")


def test_every_entry_point_refuses_what_will_not_fit_before_any_allocation(monkeypatch, capsys):
    """The problem types (before validating K0), the CLI (before computing the similarity) and the
    transductive rule (before forming the (n + m)² matrix) refuse with the size, the need, what is
    available and the fix, when the available memory is smaller than their n×n arrays."""
    import indkernel._validation as validation
    from indkernel import IndefiniteSVC, SVMProblem, kernels
    from indkernel.cli import main

    K, y = random_indefinite(200, 0)
    model = IndefiniteSVC(test_kernel="transductive").fit(K[:150, :150], y[:150])
    monkeypatch.setattr(validation, "available_memory", lambda: 10**5)  # 100 kB: one array of 200² is 320 kB
    monkeypatch.setattr(validation, "UNCHECKED_BYTES", 0)  # (needs this small pass unasked)
    with pytest.raises(MemoryError, match=r"a problem on the 200×200 K0 needs about 0.0 GiB \(4 200×200 float64 "
                                          r"arrays at its peak\), but 0.0 GiB are available; use fewer points"):
        SVMProblem(K, y)
    with pytest.raises(MemoryError, match=r"the transductive rule on 150 training and 50 test points .* \(3 200×200 "
                                          r".*predict in smaller batches, or use test_kernel='consistent'"):
        model.predict(K[150:])
    calls = []
    monkeypatch.setattr(kernels, "simpson", lambda *args, **kwargs: calls.append(1))
    assert main(["solve", "--quiet"]) == 2 and calls == []
    assert "the simpson similarity of 365 points and its problem needs about" in capsys.readouterr().err


def test_a_small_need_does_not_ask_for_the_available_memory(monkeypatch):
    """Asking costs about 0.15 ms: needs up to UNCHECKED_BYTES (a 16 MiB) pass unasked, larger ones are asked."""
    import indkernel._validation as validation

    asked = []
    monkeypatch.setattr(validation, "available_memory", lambda: asked.append(1) or 10**5)
    validation.check_memory(700, "a fit", 4)  # 15.7 MB
    assert asked == []
    with pytest.raises(MemoryError, match="a fit on n=800|a fit needs"):
        validation.check_memory(800, "a fit", 4)  # 20.5 MB
    assert asked == [1]


def test_the_cross_validated_search_refuses_a_refit_that_will_not_fit_before_any_fold(monkeypatch):
    """IndefiniteSVCCV's refit on all points is its largest fit: refused before the folds' work
    (it used to fit folds for minutes and be refused at the refit)."""
    import indkernel._validation as validation
    from indkernel import IndefiniteSVCCV
    from indkernel.estimators import path_cv

    K, y = random_indefinite(200, 0)
    monkeypatch.setattr(validation, "available_memory", lambda: 10**5)
    monkeypatch.setattr(validation, "UNCHECKED_BYTES", 0)
    monkeypatch.setattr(path_cv, "_path_scores", lambda *args, **kwargs: pytest.fail("a fold was fitted"))
    with pytest.raises(MemoryError, match=r"IndefiniteSVCCV's refit on n=200 training points needs about"):
        IndefiniteSVCCV(cv=2).fit(K, y)


def test_a_container_limit_is_the_memory_available(tmp_path, monkeypatch):
    """Under a cgroup limit (v2's memory.max and memory.current, faked here) the room left under it
    is what a fit may use: a fit that needs more is refused before any work; v1's "no limit" (a
    huge number) and v2's "max" are no limit."""
    from indkernel import IndefiniteSVC, _validation

    (tmp_path / "memory.max").write_text(f"{2**30}\n")
    (tmp_path / "memory.current").write_text(f"{2**30 - 50 * 2**20}\n")
    monkeypatch.setattr(_validation, "CGROUP_V2", tmp_path)
    monkeypatch.setattr(_validation, "CGROUP_V1", tmp_path / "absent")
    assert _validation.available_memory() == 50 * 2**20
    n = 1200  # five 1200×1200 float64 arrays: 55 MiB
    with pytest.raises(MemoryError, match="available"):
        IndefiniteSVC().fit(np.eye(n), np.arange(n) % 2)
    (tmp_path / "memory.max").write_text("max\n")
    assert _validation._cgroup_room() is None
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "memory.limit_in_bytes").write_text(f"{2**63 - 4096}\n")
    (v1 / "memory.usage_in_bytes").write_text("1000\n")
    monkeypatch.setattr(_validation, "CGROUP_V1", v1)
    assert _validation._cgroup_room() is None


def test_a_process_address_space_limit_is_the_memory_available():
    """``ulimit -v`` (RLIMIT_AS) bounds what the process can allocate: the room under it is available."""
    import subprocess
    import sys

    code = ("import resource, psutil; from indkernel._validation import available_memory; "
            "used = psutil.Process().memory_info().vms; "
            "resource.setrlimit(resource.RLIMIT_AS, (used + 300 * 2**20, resource.RLIM_INFINITY)); "
            "print(available_memory() <= 300 * 2**20)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr
