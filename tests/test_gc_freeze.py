"""The collector during and after a run (``check.gc_pause.run``, ``cli.command.main``): what each
file check leaves alive is frozen for the rest of a tree run and unfrozen at its end; findings do
not depend on it; the command freezes the collector only as a process's command line."""

import gc
from pathlib import Path

import pytest

from torchsync_lint import lint_paths
from torchsync_lint.check import gc_pause
from torchsync_lint.cli import command
from torchsync_lint.config import Config

PROJECTS = Path(__file__).parent / "projects"


def _findings(result):
    return sorted((f.path, f.line, f.col, f.code, f.message) for f in result.findings)


@pytest.fixture
def no_frozen():
    gc.unfreeze()  # the test process may have frozen nothing, but be sure
    yield
    gc.unfreeze()


@pytest.mark.parametrize("name", ["dispatch", "crossfile", "training"])
def test_findings_alike_with_and_without_freezing(name, monkeypatch, no_frozen, tmp_path):
    cfg = Config(include_cold=True, respect_gitignore=False)
    frozen_at_checks = []
    real = gc.freeze

    def freeze():
        frozen_at_checks.append(True)
        real()

    monkeypatch.setattr(gc, "freeze", freeze)
    frozen = lint_paths([str(PROJECTS / name)], cfg, jobs=1)
    assert frozen_at_checks  # every file check froze what it left
    assert gc.get_freeze_count() == 0  # unfrozen at the end of the run
    monkeypatch.setattr(gc, "freeze", real)
    gc.disable()  # the collector off: the run freezes nothing
    try:
        plain = lint_paths([str(PROJECTS / name)], cfg, jobs=1)
    finally:
        gc.enable()
    assert _findings(frozen) == _findings(plain)
    cached = Config(include_cold=True, respect_gitignore=False, cache_dir=str(tmp_path / "c"))
    assert _findings(lint_paths([str(PROJECTS / name)], cached, jobs=1)) == _findings(plain)
    assert _findings(lint_paths([str(PROJECTS / name)], cached, jobs=1)) == _findings(plain)  # from the cache


def test_objects_frozen_before_a_run_stay_frozen(no_frozen):
    keep = [object() for _ in range(10)] + [[i] for i in range(10)]
    gc.freeze()
    before = gc.get_freeze_count()
    assert before > 0
    lint_paths([str(PROJECTS / "dispatch")], Config(respect_gitignore=False), jobs=1)
    # nothing frozen by the run, nothing of ours unfrozen (frozen objects freed since count less)
    assert 0 < gc.get_freeze_count() <= before
    assert keep


def test_nested_runs_unfreeze_once(no_frozen):
    with gc_pause.run():
        with gc_pause.run():  # a nested run leaves the outer one's state alone
            assert gc_pause._RUN_PID is not None
        assert gc_pause._RUN_PID is not None
    assert gc_pause._RUN_PID is None and gc.get_freeze_count() == 0


def test_command_freezes_only_as_the_process_command_line(no_frozen, monkeypatch, tmp_path, capsys):
    src = tmp_path / "m.py"
    src.write_text("import torch\n\n\ndef f(x):\n    return x.item()\n")
    command.main(["--isolated", "--no-cache", "--quiet", str(src)])
    assert gc.get_freeze_count() == 0  # called in-process with arguments: the collector as it was
    monkeypatch.setattr("sys.argv", ["torchsync-lint", "--isolated", "--no-cache", "--quiet", str(src)])
    command.main()
    assert gc.get_freeze_count() > 0  # the process's own command line: frozen before it exits
    capsys.readouterr()
