import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest

from indkernel.core import spectrum_cache


@pytest.fixture(autouse=True)
def fresh_spectrum_cache():
    """Each test starts with an empty store of spectra: what it counts or times is its own."""
    spectrum_cache.clear()
    yield
    spectrum_cache.set_budget(spectrum_cache.DEFAULT_BUDGET)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(params=["rank-one", "eigh"])
def oracle(request):
    """Both proxy-kernel oracles: the results must not depend on which one is used."""
    return request.param


@pytest.fixture
def solve_starts(monkeypatch) -> list:
    """Every ``alpha0`` the estimators pass to ``solve``, in order (None for the method's own start)."""
    from indkernel.estimators import base

    starts, real = [], base.solve

    def spy(problem, method, **options):
        starts.append(options.get("alpha0"))
        return real(problem, method, **options)

    monkeypatch.setattr(base, "solve", spy)
    return starts


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow: the whole suite, as CI does (README Quick start)")


def pytest_configure(config):
    """The property suite's examples per problem type: 40 with --slow (CI: the whole suite's 20
    minutes), a short profile of 5 in the fast loop; INDKERNEL_PROPERTY_EXAMPLES, if set, wins (a
    release check runs 200, about 17 minutes of the property suite alone)."""
    if not config.getoption("--slow"):
        os.environ.setdefault("INDKERNEL_PROPERTY_EXAMPLES", "5")


#: Why scikit-learn's array API checks skip here (its own reason names only an environment variable).
NO_ARRAY_API = ("scikit-learn's array API check does not apply: it needs array_api_dispatch with SCIPY_ARRAY_API=1 "
                "and every fitted attribute in the input's namespace; indkernel solves another namespace's "
                "similarity on its device without them, keeps its fitted attributes in NumPy and returns "
                "decisions in the input's namespace (tests/test_device_oracle.py)")


def pytest_collection_modifyitems(config, items):
    """scikit-learn's array API checks skip with the reason that applies; without --slow, the
    tests marked slow are deselected: the contributor's fast loop."""
    for item in items:
        if "check_array_api_input" in item.name:
            item.add_marker(pytest.mark.skip(reason=NO_ARRAY_API))
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def _write_tiny_data(folder: Path) -> None:
    """Stand-ins for the paper's data files, in their own formats and a few hundred rows each:
    16×16 "USPS" images (scikit-learn's bundled 8×8 digits enlarged, with noise; a train/test
    split), UCI-like diabetes and German credit tables, and an a1a-like LIBSVM file."""
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(0)
    digits = load_digits()
    pick = rng.choice(len(digits.target), 1000)
    images = np.kron(digits.images[pick] / 16.0, np.ones((2, 2)))
    X = np.clip(images + rng.normal(0.0, 0.05, images.shape), 0.0, 1.0).reshape(len(pick), 256)
    np.savez(folder / "usps.npz", X=X, y=digits.target[pick], split=np.where(np.arange(len(pick)) < 800, "train", "test"))
    diabetes = np.column_stack([rng.normal(size=(300, 8)), rng.integers(0, 2, 300)])
    np.savetxt(folder / "pima-indians-diabetes.csv", diabetes, delimiter=",", fmt="%.4g")
    np.savetxt(folder / "german.data-numeric", np.column_stack([rng.integers(0, 10, (300, 24)), rng.integers(1, 3, 300)]),
               fmt="%d")
    lines = [" ".join([f"{label:+d}", *(f"{j}:1" for j in sorted(rng.choice(np.arange(1, 124), 14, replace=False)))])
             for label in rng.choice([-1, 1], 300)]
    (folder / "a1a").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def _tiny_data_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-data")
    _write_tiny_data(folder)
    return folder


@pytest.fixture
def paper_data(request, monkeypatch) -> Path:
    """The data directory of the paper's data sets: ``$INDKERNEL_DATA`` where it is set (CI: the
    real files), else tiny stand-ins in the files' formats with their checksums registered, so the
    tests that read the data also run, on them, in a checkout without the data."""
    from indkernel import datasets

    if os.environ.get("INDKERNEL_DATA"):
        return datasets.data_directory()
    folder = request.getfixturevalue("_tiny_data_folder")
    monkeypatch.setenv("INDKERNEL_DATA", str(folder))
    for name, source in datasets.SOURCES.items():
        monkeypatch.setitem(datasets.SOURCES, name, dataclasses.replace(source, sha256=datasets.sha256(folder / name)))
    return folder
