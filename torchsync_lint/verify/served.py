"""The parent's side of the fork server (``forkserver.py``): one process imports torch and the
linted packages once and forks the snippet children; here each child is a ``ServedProc``, which
``runner`` uses like the ``subprocess.Popen`` of a child it started itself (``stdin``, ``stdout``,
``pid``, ``poll``, ``wait``, ``returncode``, ``kill``).

The pipes are made here, before the server starts, so the parent holds each child's stdin and
stdout from the first moment (it may send the job before the child exists; the pipe keeps it).
The server is the children's parent: it reports their pids and exit codes on its stdout, read
here on demand (no thread of ours runs while the lint forks its workers). The server ends when
every child has ended (or when this process goes away: its stdin closes).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from torchsync_lint.verify.procs import kill_group


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds torchsync_lint/


def bootstrap(module: str) -> str:
    """``python -c`` code that runs ``module.main()`` from this very copy of torchsync-lint (a
    checkout not installed too), then leaves ``sys.path`` as ``-m`` would have it."""
    return (f"import sys; sys.path.insert(0, {ROOT!r}); import {module} as m; sys.path.remove({ROOT!r}); "
            "sys.exit(m.main())")


def available() -> bool:
    """Whether children can come from a fork server here (POSIX ``fork``)."""
    return hasattr(os, "fork") and sys.platform != "win32"


def wanted() -> bool:
    """The fork server is opt-in: ``TORCHSYNC_VERIFY_FORKSERVER=1``. Measured on a 16-CPU H100 machine
    it did not shorten ``--verify`` (bench/README.md): the children's start-up is a serial chain,
    torch's import and then the packages' (torchvision pulls in ``torch._dynamo``), which one
    process importing once runs no faster than each child; it saves the CPU and memory of the
    other children's imports (the pages are shared), which a smaller machine may need. With
    ``torch._dynamo`` put off (``verify.lazy``, runtime6) the chain is short, but children forked
    together calibrate their sleep at once and measured less than half the real rate (1-3
    confirmed -> inconclusive flips per run on torchvision): still opt-in."""
    return available() and os.environ.get("TORCHSYNC_VERIFY_FORKSERVER") == "1"


class Server:
    def __init__(self, n: int, mode: str, settings: dict, python: Optional[str] = None,
                 env: Optional[dict] = None, preload: Sequence[Tuple[str, str]] = ()) -> None:
        self.t_spawned = time.monotonic()
        trios: List[List[int]] = []
        ends: List[Tuple[int, int]] = []
        self.err_files = []
        for _ in range(n):
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            err = tempfile.NamedTemporaryFile(prefix="tsl-verify-", suffix=".stderr", delete=False)
            self.err_files.append(err)
            trios.append([in_r, out_w, err.fileno()])
            ends.append((in_w, out_r))
        self.err = tempfile.NamedTemporaryFile(prefix="tsl-verify-server-", suffix=".stderr", delete=False)
        cmd = [python or sys.executable, "-c", bootstrap("torchsync_lint.verify.forkserver"), "--mode", mode,
               "--settings", json.dumps(settings, sort_keys=True), "--preload", json.dumps([list(p) for p in preload]),
               "--children", json.dumps(trios)]
        child_env = dict(os.environ if env is None else env)
        child_env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                         pass_fds=[fd for trio in trios for fd in trio[:2]] +
                                         [e.fileno() for e in self.err_files],
                                         start_new_session=True, env=child_env)
        except OSError:
            for trio, end in zip(trios, ends):
                for fd in trio[:2] + list(end):
                    os.close(fd)
            self._remove_files()
            raise
        for trio in trios:  # the children's ends live in the server (and then in each child) only
            os.close(trio[0])
            os.close(trio[1])
        self.pids: Dict[int, int] = {}
        self.codes: Dict[int, int] = {}
        self.live = set(range(n))
        self.eof = False
        self._buf = b""
        self._lock = threading.Lock()
        self.procs = [ServedProc(self, i, in_w, out_r, self.err_files[i]) for i, (in_w, out_r) in enumerate(ends)]

    # -- the server's status lines ------------------------------------------------------------
    def _pump(self, timeout: float) -> None:
        """Read what the server said (waiting up to ``timeout``); call with the lock held."""
        if self.eof:
            return
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], max(timeout, 0))
        if not ready:
            return
        data = os.read(fd, 65536)
        if not data:
            self._set_eof()
            return
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            parts = line.decode("ascii", "replace").split()
            if len(parts) == 3 and parts[1].isdigit() and parts[2].lstrip("-").isdigit():
                i, value = int(parts[1]), int(parts[2])
                if parts[0] == "pid":
                    self.pids[i] = value
                elif parts[0] == "exit":
                    self.codes[i] = value

    def _set_eof(self) -> None:
        self.eof = True
        code = self.proc.poll()
        for i in range(len(self.procs)):  # children it never reported end with it
            self.codes.setdefault(i, code if code else -signal.SIGKILL)

    def wait_for(self, done, timeout: Optional[float]) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                if done():
                    return True
                if self.eof:
                    return done()
                left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
                if left <= 0:
                    return False
                self._pump(left)

    def poll(self) -> None:
        with self._lock:
            self._pump(0)

    def cancel(self, i: int) -> None:
        """Child ``i`` is not wanted: the server does not fork it (or it was, and is killed)."""
        try:
            self.proc.stdin.write(f"cancel {i}\n".encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass

    def ended(self, i: int) -> None:
        """Child ``i`` is gone: when none is left, the server goes too."""
        with self._lock:
            self.live.discard(i)
            last = not self.live
        if last:
            self.shutdown()

    def shutdown(self) -> None:
        try:
            self.proc.stdin.close()  # the server kills what is left and exits
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=0.05)  # no child of it is left: nothing to wait for
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        with self._lock:
            self._pump(0)  # its last lines
            self._set_eof()
            try:
                self.proc.stdout.close()
            except (OSError, ValueError):
                pass
        self._remove_files()

    def _remove_files(self) -> None:
        self.err.close()
        try:
            os.unlink(self.err.name)
        except OSError:
            pass

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            with open(self.err.name, "rb") as fh:
                return fh.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""


class ServedProc:
    """One forked child, as ``runner`` sees a child process."""

    def __init__(self, server: Server, index: int, in_w: int, out_r: int, err_file) -> None:
        self.server, self.index, self.err_file = server, index, err_file
        self.stdin = os.fdopen(in_w, "wb")
        self.stdout = os.fdopen(out_r, "rb")
        self._killed = False

    @property
    def pid(self) -> Optional[int]:
        self.server.poll()
        return self.server.pids.get(self.index)

    @property
    def returncode(self) -> Optional[int]:
        return self.server.codes.get(self.index)

    def poll(self) -> Optional[int]:
        self.server.poll()
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if not self.server.wait_for(lambda: self.index in self.server.codes, timeout):
            raise subprocess.TimeoutExpired(f"verify child {self.index}", timeout)
        return self.server.codes[self.index]

    def kill(self) -> None:
        """SIGKILL the child's process group (or have the server not fork it), wait for its end."""
        if self._killed:
            return
        self._killed = True
        try:
            self.stdin.close()
        except (OSError, ValueError):
            pass
        if self.poll() is None:
            pid = self.server.pids.get(self.index)
            if pid is None:
                self.server.cancel(self.index)
            else:
                kill_group(pid)
                try:
                    self.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            # a cancelled child is not waited for: the server, still importing, does not fork it (or
            # kills it, forked as the cancel came)
        self.server.ended(self.index)


def start_children(n: int, mode: str, settings: dict, python: Optional[str] = None, env: Optional[dict] = None,
                   preload: Sequence[Tuple[str, str]] = ()) -> List[ServedProc]:
    """``n`` children forked from one server that imports torch and ``preload`` once."""
    return Server(n, mode, settings, python, env, preload).procs
