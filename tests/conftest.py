import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(params=["rank-one", "eigh"])
def oracle(request):
    """Both proxy-kernel oracles: the results must not depend on which one is used."""
    return request.param
