import os

import numpy as np
import pytest

from indkernel import spectrum_cache


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


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow: the whole suite, as CI does (README Quick start)")


def pytest_configure(config):
    """The property suite's examples per problem type: 200 with --slow (CI), a short profile of 5
    in the fast loop; INDKERNEL_PROPERTY_EXAMPLES, if set, wins."""
    if not config.getoption("--slow"):
        os.environ.setdefault("INDKERNEL_PROPERTY_EXAMPLES", "5")


def pytest_collection_modifyitems(config, items):
    """Without --slow, the tests marked slow are deselected: the contributor's fast loop."""
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
