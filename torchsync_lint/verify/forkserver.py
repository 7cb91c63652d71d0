"""The fork server: ``python -m torchsync_lint.verify.forkserver`` imports torch and the linted
packages once, then forks the snippet children from itself (``served.py`` is the parent's side).

Eight children that each import torch and the user's package compete for the CPUs with the lint
they overlap; one import, then ``fork()``, does that work once. CUDA is never touched here (a CUDA
context does not survive a fork): each child initialises its own, as a fresh one would. While the
packages import, ``torch.cuda.is_available()`` asks NVML, not the driver
(``PYTORCH_NVML_BASED_CUDA_CHECK``): a package that asks at import time leaves no driver state
behind. A child that still finds CUDA unusable after the fork (torch's "bad fork", or a driver
error on its first CUDA call) replaces itself with a fresh ``verify.child`` (``exec``: the same
process, the same pipes), as does every child when a package left a Python thread running here.

Argument ``--children`` lists, per child, the descriptors the parent made for it: the read end of
its stdin, the write end of its stdout (the protocol) and its stderr file. On its own stdin the
server reads ``cancel I`` (a child nobody needs: it is not forked) until the end of file, which
ends the server and the children it still has; on its stdout it writes ``pid I PID`` when a child
is forked and ``exit I CODE`` (``Popen.returncode``'s convention) when one ends.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from typing import Dict, List, Optional

from torchsync_lint.verify import child as child_mod
from torchsync_lint.verify.procs import kill_group

NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"


class Server:
    def __init__(self, fds: List[List[int]], mode: str, settings: dict, preload) -> None:
        self.fds, self.mode, self.settings, self.preload = fds, mode, settings, preload
        self.control = os.fdopen(os.dup(0), "rb", buffering=0)
        self.status_fd = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # a package's import reads nothing of ours
        os.close(devnull)
        os.dup2(2, 1)  # ... and prints to our stderr, not into the status lines
        self.cancelled: set = set()
        self.children: Dict[int, int] = {}  # pid -> child index
        self.eof = False
        self._pending = b""

    def say(self, text: str) -> None:
        try:
            os.write(self.status_fd, (text + "\n").encode())
        except OSError:
            pass

    def read_control(self, timeout: float) -> None:
        if self.eof:
            time.sleep(timeout)
            return
        ready, _, _ = select.select([self.control], [], [], timeout)
        if not ready:
            return
        data = self.control.read(4096)
        if not data:
            self.eof = True
            return
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            parts = line.decode().split()
            if len(parts) == 2 and parts[0] == "cancel" and parts[1].isdigit():
                self.cancelled.add(int(parts[1]))

    def fatal_all(self, **msg) -> None:
        """Every child's protocol gets this ``fatal`` line (torch does not import here)."""
        msg.update(event="fatal", t=round(time.monotonic(), 4))
        line = (child_mod.PREFIX + json.dumps(msg) + "\n").encode()
        for _, out_fd, _ in self.fds:
            try:
                os.write(out_fd, line)
            except OSError:
                pass

    def argv(self) -> List[str]:
        """A fresh child's arguments (the fallback after ``exec``)."""
        return ["--mode", self.mode, "--settings", json.dumps(self.settings, sort_keys=True),
                "--preload", json.dumps([list(p) for p in self.preload])]

    def run(self) -> int:
        nvml_was = os.environ.get(NVML_CHECK)
        os.environ[NVML_CHECK] = "1"
        t0 = time.monotonic()
        try:
            import torch  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            self.fatal_all(reason=f"torch is not importable: {exc}", no_torch=True)
            return 2
        torch_s = time.monotonic() - t0
        t1 = time.monotonic()
        child_mod._preload(self.preload)
        preload_s = time.monotonic() - t1
        if nvml_was is None:
            os.environ.pop(NVML_CHECK, None)
        else:
            os.environ[NVML_CHECK] = nvml_was
        info = {"torch_import_s": round(torch_s, 3), "preload_s": round(preload_s, 3),
                # a Python thread a package started would be gone in the children, with any lock it held
                "exec": threading.active_count() > 1}
        for i, (in_fd, out_fd, err_fd) in enumerate(self.fds):
            self.read_control(0)
            if i in self.cancelled or self.eof:
                self.say(f"exit {i} {-signal.SIGKILL}")
            else:
                self.fork(i, in_fd, out_fd, err_fd, info)
            for fd in (in_fd, out_fd, err_fd):
                _close(fd)
        while self.children:
            self.reap()
            if self.eof:
                for pid in list(self.children):
                    kill_group(pid)
                self.reap(block=True)
                break
            self.read_control(0.05)
            for pid, i in list(self.children.items()):
                if i in self.cancelled:  # cancelled while it was being forked
                    kill_group(pid)
        return 0

    def fork(self, i: int, in_fd: int, out_fd: int, err_fd: int, info: dict) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: its pipes on 0, 1 and 2, nothing else of the server's
            code = 1
            try:
                os.setsid()
                os.dup2(in_fd, 0)
                os.dup2(out_fd, 1)
                os.dup2(err_fd, 2)
                for fd in {self.status_fd, self.control.fileno()} | {f for trio in self.fds for f in trio}:
                    _close(fd)
                code = child_mod.main(self.argv(), forked=dict(info, index=i))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001
                import traceback

                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code or 0)
        self.children[pid] = i
        self.say(f"pid {i} {pid}")

    def reap(self, block: bool = False) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            i = self.children.pop(pid, None)
            if i is not None:
                self.say(f"exit {i} {os.waitstatus_to_exitcode(status)}")


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _arg(argv: List[str], name: str, default: Optional[str] = None) -> Optional[str]:
    return argv[argv.index(name) + 1] if name in argv else default


def main(argv=None) -> int:
    import faulthandler

    faulthandler.enable()
    argv = sys.argv[1:] if argv is None else list(argv)
    server = Server(json.loads(_arg(argv, "--children", "[]")), _arg(argv, "--mode", "gpu"),
                    json.loads(_arg(argv, "--settings", "{}")), json.loads(_arg(argv, "--preload", "[]")))
    code = server.run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # torch's finalisation is of no use to anyone here


if __name__ == "__main__":
    sys.exit(main())
