"""A killed run leaves no worker behind; Ctrl-C and SIGTERM end it with one line, no traceback."""

import os
import signal
import subprocess
import sys
import time

import pytest

from torchsync_lint.run import workers

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG is Linux's")

MODULE = "import torch\nfrom torch import nn\n\n\n" + "".join(f"""\
class L{i}(nn.Module):
    def forward(self, x):
        if x.sum().item() > {i}:
            return torch.nonzero(x)
        return x[x > 0].cpu().numpy()


""" for i in range(40))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    for i in range(300):  # some seconds of work for two workers: the run is killed well before
        (root / f"m{i}.py").write_text(MODULE)
    return root


WAIT_S = 120  # the most any wait below may take; each ends as soon as its condition holds


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, waiting to be reaped
    except OSError:
        return False


@pytest.mark.parametrize("how, code, message", [
    ("SIGTERM", 143, "torchsync-lint: terminated"),
    ("SIGINT", 130, "torchsync-lint: interrupted"),  # Ctrl-C: the whole process group gets it
    ("SIGKILL", -signal.SIGKILL, None),  # no cleanup can run: the workers die with their parent
])
def test_killed_run_leaves_no_worker(tree, tmp_path, how, code, message):
    err = tmp_path / "stderr"  # not a pipe: workers left behind would hold it open
    with open(err, "w") as fh:
        argv = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-cache", "--jobs", "2", "."]
        # SIGINT back to its default in the child: a suite started in the background (`pytest &` in
        # a script, some CI runners) ignores it, the child would inherit that and never see Ctrl-C
        proc = subprocess.Popen(argv, cwd=tree, stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True,
                                preexec_fn=_default_sigint)
    pool = []
    try:
        deadline = time.monotonic() + WAIT_S
        while len(children(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        pool = children(proc.pid)
        assert len(pool) == 2 and proc.poll() is None, "the run had no worker pool to kill"
        time.sleep(0.5)  # the workers are busy checking files
        if how == "SIGINT":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(getattr(signal, how))
        # generous bounds, polled: a loaded machine (the full suite on 2 cores) is slow, not wrong
        got = proc.wait(timeout=WAIT_S)
        stderr = err.read_text()
        assert got == code, stderr
        deadline = time.monotonic() + WAIT_S
        while any(alive(pid) for pid in pool) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in pool if alive(pid)] == []
        assert "Traceback" not in stderr
        if message is not None:
            assert stderr.splitlines() == [message]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in pool:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_sigterm_in_a_one_process_run_is_not_taken_for_a_files_error(tree, tmp_path):
    """Without workers the files are checked in the CLI's own process, where SIGTERM becomes an
    exception: no ``except Exception`` around one file's check may take it for a bug met in that
    file (which blamed an innocent file and went on checking the others)."""
    err = tmp_path / "stderr"
    with open(err, "w") as fh:
        argv = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-cache", "--jobs", "1", "."]
        proc = subprocess.Popen(argv, cwd=tree, stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True)
    try:
        deadline = time.monotonic() + WAIT_S
        # well into checking files: imports take well under 2 s of CPU, the 300 files much more
        while proc.poll() is None and cpu_seconds(proc.pid) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be terminated"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 143
        assert err.read_text().splitlines() == ["torchsync-lint: terminated"]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


_STATE = {}


def _remember(value):
    _STATE["value"] = value


def _recall(_):
    return _STATE.get("value"), signal.getsignal(signal.SIGINT)


def test_pool_runs_the_initializer_and_the_work():
    with workers.pool(2, _remember, ("set",)) as pool:
        got = list(pool.map(_recall, range(4)))
    assert got == [("set", signal.SIG_IGN)] * 4  # Ctrl-C is the parent's to answer


def test_leaving_the_block_by_an_exception_kills_the_workers_at_once():
    with pytest.raises(KeyboardInterrupt):
        with workers.pool(2) as pool:
            futures = [pool.submit(time.sleep, 120) for _ in range(4)]
            time.sleep(0.5)
            processes = list(pool._processes.values())
            t0 = time.monotonic()
            raise KeyboardInterrupt
    # a generous bound for a loaded machine: waiting for the sleeps would take 2 x 120 s (4 on 2 workers)
    assert time.monotonic() - t0 < 60
    deadline = time.monotonic() + WAIT_S
    while any(alive(p.pid) for p in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p.pid for p in processes if alive(p.pid)] == []
    assert all(f.cancelled() or f.exception(timeout=WAIT_S) is not None for f in futures)


INTERRUPTED_WHILE_SENDING = """\
import signal, sys, time
from torchsync_lint.run import workers


def big(i):  # far more than a pipe holds: the workers are mostly in the middle of sending one
    return b"x" * 30_000_000


def stop(*_):
    raise KeyboardInterrupt


signal.signal(signal.SIGALRM, stop)
signal.setitimer(signal.ITIMER_REAL, float(sys.argv[1]))
try:
    workers.pool_map(2, big, range(400))
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("after", [0.3, 0.7, 1.5])
def test_a_pool_killed_while_its_workers_send_results_does_not_hang(tmp_path, after):
    """A worker killed half-way through sending a result left half a message in the pipe: the
    pool's thread waited for the rest forever, and the run with it (a SIGTERM that never ended
    the run, seen once in CI)."""
    script = tmp_path / "send.py"
    script.write_text(INTERRUPTED_WHILE_SENDING)
    got = subprocess.run([sys.executable, str(script), str(after)], capture_output=True, text=True,
                         timeout=WAIT_S)
    assert (got.returncode, got.stdout, got.stderr) == (0, "interrupted\n", "")


def _dies_on_three(i):
    if i == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as a crash in native code would (no faulthandler dump)
    return i * 10


def test_a_worker_dying_costs_only_its_item():
    got = workers.pool_map(2, _dies_on_three, range(40), chunksize=4, on_crash=lambda i: f"crashed on {i}")
    assert got == [i * 10 if i != 3 else "crashed on 3" for i in range(40)]


CRASH_ON_BOOM = """\
import os, signal, sys
from torchsync_lint import cli
from torchsync_lint.check import file as file_check

real = file_check.check_source


def crashing(source, path, *args, **kwargs):  # a native crash, met only in one file
    if path.endswith("boom.py"):
        os.kill(os.getpid(), signal.SIGSEGV)
    return real(source, path, *args, **kwargs)


file_check.check_source = crashing
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_file_that_crashes_its_worker_is_one_error(tmp_path):
    for i in range(20):  # enough files for a worker pool
        (tmp_path / f"m{i}.py").write_text(MODULE)
    (tmp_path / "boom.py").write_text(MODULE)
    proc = subprocess.run([sys.executable, "-c", CRASH_ON_BOOM, "--isolated", "--no-cache", "--jobs", "2", "-q", "."],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["./boom.py: error: internal error, please report: the process checking this "
                                        "file died (a crash in native code, such as LibCST's parser)"]
    linted = {line.split(":")[0] for line in proc.stdout.splitlines()}
    assert linted == {f"./m{i}.py" for i in range(20)}


EARLY_SIGTERM = """\
import os, signal
from torchsync_lint.run import workers

real = workers._die_with_parent


def early(parent):  # the pool's teardown reaches the worker before its own handlers are set
    os.kill(os.getpid(), signal.SIGTERM)
    real(parent)


workers._die_with_parent = early
with workers.terminate_as_exception():
    try:
        with workers.pool(1) as executor:
            executor.submit(int).result()
    except workers.BrokenProcessPool:
        print("broken")
"""


def test_a_signal_before_the_worker_sets_its_handlers_kills_it_quietly(tmp_path):
    """A worker forked with the parent's SIGTERM handler raised ``Terminated`` there, which
    ``multiprocessing`` printed ("Process ForkProcess-2:"): the signal waits for the worker's own."""
    proc = subprocess.run([sys.executable, "-c", EARLY_SIGTERM], cwd=tmp_path, capture_output=True, text=True,
                          timeout=WAIT_S)
    assert proc.stderr == ""
    assert proc.stdout.split() == ["broken"]
    assert proc.returncode == 0


def test_pool_map_largest_first_gives_reports_in_path_order(tmp_path):
    """``project_pass._pool_map`` hands the largest files out first, and still answers in the order
    of the paths given (a wave's reports are matched to its files by position)."""
    from torchsync_lint.run import project_pass

    paths = []
    for i, size in enumerate([10, 5000, 1, 300, 70000, 2]):
        p = tmp_path / f"f{i}.py"
        p.write_text("x" * size)
        paths.append(str(p))
    got = project_pass._pool_map(2, _name_and_extra, paths, "opts", [f"extra{i}" for i in range(6)], most=4)
    assert got == [(p, "opts", f"extra{i}") for i, p in enumerate(paths)]


def _name_and_extra(path, options, extra):
    return (path, options, extra)


def test_small_waves_go_to_a_pool_only_with_many_workers():
    from torchsync_lint.run.project_pass import pooled

    assert not pooled(15, 2) and pooled(16, 2)
    assert pooled(4, 8) and not pooled(3, 8)
    assert not pooled(100, 1)
