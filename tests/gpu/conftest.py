"""Tests in this folder need a CUDA device; elsewhere they skip cleanly (no torch, or no GPU)."""

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).startswith(HERE + os.sep):
            item.add_marker(pytest.mark.gpu)


@pytest.fixture(scope="session")
def cuda_torch():
    """The torch module, when a CUDA device is there; otherwise the test is skipped."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    return torch
