"""Fixtures for the gk Python tests.

`backend` / `ctx` run a test on every backend that can be opened here: cpu
always, cuda when a GPU and driver are usable (GK_TEST_BACKENDS=cpu,cuda
narrows or insists: a listed backend that cannot open fails, not skips).
Tests marked `cuda` need the cuda backend and torch with CUDA.  The last
line pytest prints is "N passed, M failed", which tests/run_all.sh counts.
"""
import os

import numpy as np
import pytest

import gk

_want = os.environ.get("GK_TEST_BACKENDS")
if _want:
    BACKENDS = [b for b in _want.split(",") if b]
else:
    BACKENDS = ["cpu"] + (["cuda"] if gk.backend_available("cuda") else [])


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs the cuda backend (and torch with CUDA)")


def pytest_collection_modifyitems(config, items):
    if "cuda" in BACKENDS:
        return
    skip = pytest.mark.skip(reason="no usable cuda backend here")
    for it in items:
        if "cuda" in it.keywords:
            it.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    s = terminalreporter.stats
    passed = len(s.get("passed", []))
    failed = len(s.get("failed", [])) + len(s.get("error", []))
    terminalreporter.write_line("%d passed, %d failed" % (passed, failed))


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def ctx(backend):
    with gk.Context(backend) as g:
        yield g


@pytest.fixture
def rng(request):
    # fresh data every run; the seed is in the test id's failure output
    seed = np.random.SeedSequence().entropy % (2 ** 32)
    request.node.user_properties.append(("seed", seed))
    return np.random.default_rng(seed)
