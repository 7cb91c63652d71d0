"""The pytest plugin, run on small suites through pytester (in process, so the CPU stand-ins of
tests/guard_fakes.py can play the GPU where a test needs a sync)."""

import os

import pytest

pytest_plugins = ["pytester"]
torch = pytest.importorskip("torch")

from guard_fakes import CpuBackend  # noqa: E402

import torchsync_lint.check.lint_source  # noqa: E402,F401 - imported before pytester's in-process runs, which
from torchsync_lint.guard import guard as guard_mod  # noqa: E402 - drop modules first imported inside them

PLUGIN = "torchsync_lint.guard.pytest_plugin"
TESTS = os.path.dirname(os.path.abspath(__file__))

SUITE = """
import pytest
import torch
from guard_fakes import fake_sync


@pytest.mark.no_sync
def test_marked_and_planted():
    x = torch.ones(2)
    fake_sync(x)  # PLANTED


@pytest.mark.no_sync(allow=["fake_sync"])
def test_marked_but_allowed():
    fake_sync(torch.ones(2))


def test_unmarked():
    fake_sync(torch.ones(2))


def test_fixture(no_sync):
    fake_sync(torch.ones(2))  # outside the block
    with no_sync():
        torch.ones(2) + 1  # clean
"""


@pytest.fixture
def run(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the same plugin installed too: load it once
    monkeypatch.syspath_prepend(TESTS)

    def go(*args, cpu_gpu=True):
        if cpu_gpu:
            monkeypatch.setattr(guard_mod, "TorchBackend", CpuBackend)
        return pytester.runpytest_inprocess("-p", PLUGIN, "-p", "no:cacheprovider", *args)

    return go


def test_a_planted_sync_fails_its_test_at_that_line(run, pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = run("-q")
    result.assert_outcomes(passed=3, failed=1)
    text = (pytester.path / "test_suite.py").read_text()
    planted = next(i for i, t in enumerate(text.splitlines(), 1) if "# PLANTED" in t)
    result.stdout.fnmatch_lines([f"*SyncError*test_suite.py:{planted}*fake_sync*TSL900*",
                                 "*user stack*", "*FAILED*test_marked_and_planted*"])


def test_the_option_guards_every_test(run, pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = run("-q", "--torchsync-guard=error")
    result.assert_outcomes(passed=1, failed=3)  # the unmarked one and the fixture's test fail too
    result = run("-q", "--torchsync-guard=warn")
    result.assert_outcomes(passed=3, failed=1)  # the marker's own mode (error) wins
    result.stdout.fnmatch_lines(["*SyncWarning*"])


def test_without_cuda_tests_run_unguarded_and_the_summary_says_so_once(run, pytester):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    pytester.makepyfile(test_suite=SUITE)
    result = run("-q", "--torchsync-guard=error", cpu_gpu=False)
    result.assert_outcomes(passed=4)
    lines = [ln for ln in result.stdout.lines if "torchsync-lint guard inactive" in ln]
    assert len(lines) == 1 and "no CUDA device" in lines[0] and "5 guarded" in lines[0]  # 4 tests + the fixture's block, result.stdout.lines


def test_marker_registered_and_bad_values_are_usage_errors(run, pytester):
    result = run("--markers")
    result.stdout.fnmatch_lines(["*no_sync(allow=(), mode='error')*"])
    pytester.makepyfile(test_bad="import pytest\n\n@pytest.mark.no_sync(mode='loud')\ndef test_x():\n    pass\n")
    result = run("-q")
    assert result.ret != 0 and "mode must be one of" in result.stdout.str() + result.stderr.str()
    result = run("-q", "--torchsync-guard=loud")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
