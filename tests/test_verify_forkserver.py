"""The snippet children come from a fork server: torch and the linted packages are imported once,
in one process, and the children are forked from it (``verify/forkserver.py``, ``verify/served.py``).
CPU only (predict mode); the CUDA side is in tests/gpu/test_forkserver_gpu.py."""

from __future__ import annotations

import os
import time

import pytest

from torchsync_lint.verify import runner, served

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not served.available(), reason="no fork() here")


@pytest.fixture(autouse=True)
def _fork_server(monkeypatch):
    monkeypatch.setenv("TORCHSYNC_VERIFY_FORKSERVER", "1")  # opt-in

SETTINGS = {"sleep_ms": 20.0, "short_sleep_ms": 5.0, "reps": 3}
PROBE = {"kind": "probe", "mode": "predict", "settings": SETTINGS, "tasks": []}


def _package(tmp_path, body=""):
    """A package whose import appends a line to ``imports`` (how many processes imported it)."""
    src = tmp_path / "src"
    (src / "pkgf").mkdir(parents=True)
    log = tmp_path / "imports"
    (src / "pkgf" / "__init__.py").write_text(
        f"import os\nopen({str(log)!r}, 'a').write(f'{{os.getpid()}}\\n')\n{body}")
    return [(str(src), "pkgf")], log


def _close(started):
    for st in started:
        st.close()


def test_children_are_forked_from_one_import_of_torch_and_the_package(tmp_path):
    preload, log = _package(tmp_path)
    started = runner.start_many(3, "predict", SETTINGS, preload=preload)
    try:
        assert all(isinstance(st.proc, served.ServedProc) for st in started)
        results = [runner.run_job(dict(PROBE), 60, started=st) for st in started]
        for res in results:
            assert res.fatal is None
            assert res.hello["startup"].get("forked") is True, res.hello
            assert "ready" in res.times and "preloaded" in res.times
        assert len(log.read_text().split()) == 1  # one import, in the server, for three children
        server = started[0].proc.server
        assert len(set(server.pids.values())) == 3 and server.proc.pid not in server.pids.values()
    finally:
        _close(started)
    assert all(st.proc.poll() is not None for st in started)
    assert server.proc.poll() is not None  # the server goes with its last child


def test_a_child_that_dies_reports_its_exit_code_through_the_server(tmp_path):
    from torchsync_lint.finding import Finding
    from torchsync_lint.verify import schedule
    from torchsync_lint.verify.snippet import extract_file

    mod = tmp_path / "dies.py"
    src = "import os\n\n\ndef f(x):\n    crashes = os._exit(7) or x.sum().item()\n    return crashes\n"
    mod.write_text(src)
    line = src.splitlines()[4]
    col = line.index("=") + 2
    findings = [Finding(str(mod), 5, col + 1, 5, len(line) + 1, "TSL001", "n", "m")]
    tasks = schedule.tasks_of(extract_file(str(mod), list(enumerate(findings))), findings)
    started = runner.start_many(1, "predict", SETTINGS)
    job = {"kind": "snippet", "mode": "predict", "settings": SETTINGS, "sys_path": [str(tmp_path)], "tasks": tasks}
    try:
        res = runner.run_job(job, 30, started=started[0])
    finally:
        _close(started)
    assert "exit code 7" in res.results[0]["failure"], res.results[0]


def test_unwanted_children_are_cancelled_at_once(tmp_path):
    # the server's start-up never ends (its package's import sleeps for 10 minutes): closing the
    # children must not wait for it. A generous bound, not an idle machine's 2 s: a close that
    # waited would take the whole 600 s.
    preload, _ = _package(tmp_path, "import time\ntime.sleep(600)\n")
    started = runner.start_many(4, "predict", SETTINGS, preload=preload)
    t0 = time.monotonic()
    _close(started)  # before the server has even imported torch
    assert time.monotonic() - t0 < 120
    assert all(st.proc.poll() is not None for st in started)
    assert started[0].proc.server.proc.poll() is not None


def test_some_children_closed_the_others_still_work(tmp_path):
    started = runner.start_many(3, "predict", SETTINGS)
    try:
        started[1].close()
        res = runner.run_job(dict(PROBE), 60, started=started[2])
        assert res.fatal is None and res.hello["startup"].get("forked") is True
        res = runner.run_job(dict(PROBE), 60, started=started[0])
        assert res.fatal is None
    finally:
        _close(started)


def test_a_package_that_leaves_a_thread_running_gets_fresh_children(tmp_path):
    """A thread would be gone in a forked child, with any lock it held: each child ``exec``s a
    fresh interpreter instead (the same pipes), which imports torch and the package itself."""
    preload, log = _package(tmp_path, "import threading, time\n"
                                      "threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n")
    started = runner.start_many(2, "predict", SETTINGS, preload=preload)
    try:
        results = [runner.run_job(dict(PROBE), 120, started=st) for st in started]
        for res in results:
            assert res.fatal is None
            assert not res.hello["startup"].get("forked"), res.hello
    finally:
        _close(started)
    pids = log.read_text().split()
    assert len(pids) == 3  # the server's import, then each fresh child's own


def test_without_the_switch_each_child_is_a_process_of_its_own(monkeypatch):
    monkeypatch.delenv("TORCHSYNC_VERIFY_FORKSERVER")
    started = runner.start_many(2, "predict", SETTINGS)
    try:
        assert not any(isinstance(st.proc, served.ServedProc) for st in started)
    finally:
        _close(started)


def _run_two():
    started = runner.start_many(2, "predict", SETTINGS)
    for st in started:
        runner.run_job(dict(PROBE), 60, started=st)
    _close(started)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_no_descriptor_of_the_children_is_left_open_here():
    import gc

    before = set(os.listdir("/proc/self/fd"))
    _run_two()

    def leaked():
        gc.collect()
        return {fd for fd in set(os.listdir("/proc/self/fd")) - before if os.path.exists(f"/proc/self/fd/{fd}")}

    # the readers of the children's stdout see its end and close theirs: poll, with a generous bound
    deadline = time.monotonic() + 120
    while leaked() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = leaked()
    assert not left, {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in left}
