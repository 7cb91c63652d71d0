"""``--verify``'s children start at the command's first line (``verify.early``), are told their
packages once the files are selected, and take a package module's tasks one at a time
(``schedule.items``). CPU only: predict mode, and CUDA's driver warm-up where there is no driver."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from torchsync_lint.verify import driver, early, runner, schedule

SETTINGS = early.settings()


@pytest.mark.parametrize("argv, mode", [
    (["--verify", "src"], "gpu"),
    (["src", "--verify=predict"], "predict"),
    (["--verify", "--verify-mode", "predict", "src"], "predict"),
    (["--inputs", "rec.json", "src"], "gpu"),
    (["--inputs=rec.json", "src"], "gpu"),
    (["src"], None),
    (["--verify-timeout", "5", "src"], None),  # not --verify itself
    (["--verify", "--verify-entry", "m:f", "src"], None),  # entry mode starts its own children
    (["--verify", "-"], None),  # stdin: no children
    (["trace", "--", "python", "x.py", "--verify"], None),
    (["--verify", "--help"], None),
    (["src", "--", "--verify"], None),
    (["--verify=cpu", "src"], None),  # a bad mode: the parser says so, nothing starts
])
def test_the_mode_is_read_from_plain_forms_only(argv, mode):
    assert early.mode_of(argv) == mode


def test_a_folder_may_need_the_most_children_a_few_files_one(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHSYNC_VERIFY_CHILDREN", "")
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    files = []
    for i in range(2):
        f = tmp_path / f"m{i}.py"
        f.write_text("x = 1\n")
        files.append(str(f))
    assert early.bound(["--verify"] + files) == 1
    assert early.bound(["--verify", str(tmp_path)]) == 8
    assert early.bound(["--verify", str(tmp_path / "missing.py")]) == 1


def _task(i, path, module):
    return {"id": i, "path": path, "file": {"path": path, "module": module, "root": "/r"}}


def test_a_long_package_module_is_split_a_script_never(monkeypatch):
    monkeypatch.delenv("TORCHSYNC_VERIFY_ITEM", raising=False)
    pkg = [_task(i, "/r/pkg/mod.py", "pkg.mod") for i in range(7)]
    script = [_task(i, "/r/train.py", "train") for i in range(7)]
    parts = schedule.items(pkg, 3)
    assert [len(p) for p in parts] == [3, 2, 2] and [t for p in parts for t in p] == pkg
    assert schedule.items(pkg[:3], 3) == [pkg[:3]]
    assert schedule.items(pkg, 0) == [pkg]
    assert schedule.items(script, 3) == [script]  # its import runs it: once, in one child
    monkeypatch.setenv("TORCHSYNC_VERIFY_ITEM", "file")
    assert schedule.items(pkg, 3) == [pkg]
    assert schedule.item_limit(202, 8) == 13 and schedule.item_limit(5, 8) == 1


def test_the_extraction_leaves_the_childrens_cpus_alone(monkeypatch):
    monkeypatch.delenv("TORCHSYNC_VERIFY_SERIAL", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert schedule.extraction_workers(26) == 13
    assert schedule.extraction_workers(26, busy=8) == 8
    assert schedule.extraction_workers(26, busy=16) == 1
    assert early.lint_jobs(8) == 8 and early.lint_jobs(20) == 1
    # children forked from the fork server import nothing themselves: one CPU for the server's import
    assert early.lint_jobs(8, forked=True) == 15 and early.lint_jobs(0, forked=True) == 16


def test_the_lint_knows_children_from_the_fork_server():
    from torchsync_lint.cli.command import _served
    from torchsync_lint.verify import runner, served

    class Fake:
        pass

    plain = runner.Started(Fake(), None, "gpu", {})
    forked = runner.Started(served.ServedProc.__new__(served.ServedProc), None, "gpu", {})
    assert not _served([plain]) and _served([plain, forked]) and not _served([])


def _package(tmp_path):
    src = tmp_path / "src"
    (src / "pkgl").mkdir(parents=True)
    marker = tmp_path / "marker"
    (src / "pkgl" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    return src, marker


def _wait(cond, proc, seconds=120.0):
    deadline = time.monotonic() + seconds  # torch's import on a loaded machine
    while not cond() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)


def test_a_child_started_early_imports_its_packages_only_once_told(tmp_path):
    pytest.importorskip("torch")
    src, marker = _package(tmp_path)
    child = runner.start("predict", SETTINGS, preload_later=True)
    try:
        _wait(lambda: False, child.proc, 3.0)
        assert not marker.exists()  # nothing named yet
        assert child.alive()
        child.preload([(str(src), "pkgl")])
        _wait(marker.exists, child.proc)
        assert marker.read_text() == "imported"
        assert child.alive()  # and it waits for its job
    finally:
        child.close()
    assert not child.alive()


def test_a_child_started_early_that_nobody_needs_ends_with_its_stdin(tmp_path):
    pytest.importorskip("torch")
    child = runner.start("predict", SETTINGS, preload_later=True)
    try:
        child.proc.stdin.close()
        child.proc.wait(timeout=120)
        assert child.proc.returncode is not None
    finally:
        child.close()


def test_adopt_takes_what_fits_and_closes_the_rest(tmp_path):
    pytest.importorskip("torch")
    kids = [runner.start("predict", SETTINGS, preload_later=True) for _ in range(3)]
    try:
        pool = list(kids)
        took = early.adopt(pool, 2, "predict", SETTINGS)
        assert took == kids[:2] and pool == []
        assert kids[2].proc.wait(timeout=60) is not None  # killed (and reaped on a thread)
        assert all(k.alive() for k in took)
        other = list(took)
        assert early.adopt(other, 5, "gpu", SETTINGS) == []  # another mode: none fits
        assert all(k.proc.wait(timeout=60) is not None for k in took)
    finally:
        for k in kids:
            k.close()


def test_the_children_start_before_the_command_is_imported(tmp_path):
    """The console script's door starts them before the command's own imports (libcst, the rules)."""
    code = (
        "import sys\n"
        "import torchsync_lint.verify.early as e\n"
        "seen = []\n"
        "e.spawn = lambda argv: seen.append('torchsync_lint.cli.command' in sys.modules) or []\n"
        "from torchsync_lint.cli.entry import main\n"
        "main(['--verify=predict', '--version'])\n"
        "print(seen)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "[False]", out.stderr


def test_the_driver_warm_up_without_a_driver_says_why_and_returns():
    w = driver.Warmup().start()
    got = w.join(30)
    assert got["driver_s"] is not None
    try:
        import ctypes

        ctypes.CDLL("libcuda.so.1")
    except OSError:
        assert "driver_error" in got
    assert driver.wanted("predict") is False


def test_a_child_that_finished_its_job_is_ended_without_waiting_on_it():
    pytest.importorskip("torch")
    child = runner.start("predict", SETTINGS, preload_later=True)
    try:
        child.preload([])
        res = runner.run_job({"kind": "probe", "mode": "predict", "settings": SETTINGS, "tasks": []}, 120,
                             started=child)
        assert res.hello is not None and res.fatal is None
        assert child.proc.wait(timeout=60) is not None  # killed once done, reaped on a thread
    finally:
        child.close()
