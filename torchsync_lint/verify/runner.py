"""Run a job in a child process, with a timeout per task, and survive hangs and crashes.

The child prints ``begin``/``result`` per task. A task that outlives its timeout, or a child that
dies in the middle of one, makes that task ``failure`` (timed out / crashed, with the tail of the
child's stderr); the child is then started again for the tasks after it.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from torchsync_lint.verify import served

PREFIX = "@@TSL "


@dataclass
class JobResult:
    hello: Optional[dict] = None
    results: Dict[int, dict] = field(default_factory=dict)
    fatal: Optional[str] = None
    no_torch: bool = False
    no_cuda: bool = False
    times: Dict[str, float] = field(default_factory=dict)  # time.monotonic() of each step of the first child


def _reader(stream, q: "queue.Queue") -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if line.startswith(PREFIX):
            try:
                q.put(json.loads(line[len(PREFIX):]))
            except ValueError:
                pass
    q.put(None)


CAUSE = re.compile(r"(Error|Exception|error:|Fatal Python error|Segmentation fault|Aborted|core dumped|"
                   r"terminate called|Killed|out of memory|assert)", re.IGNORECASE)
# warnings.formatwarning's first line: "path:line: Category: message" (the message may go on over
# lines; the source line, indented by two spaces, ends it)
PY_WARNING = re.compile(r"^\S.*:\d+: [\w.]*Warning: ")
# any other warning: logging's WARNING:..., torch's C++ "[W1123 12:00:00 ...] Warning: ..."
WARNING = re.compile(r"warn|^\[W[\d ]", re.IGNORECASE)
# a traceback's or faulthandler's header: the indented lines after it are frames and code
STACK = re.compile(r"^(Traceback \(most recent call last\)|Current thread|Thread 0x|Stack \(most recent call first\))")


def _tail(path: str, n: int = 8192) -> str:
    """The cause of a child's death, from the end of its stderr: the last line that names an error
    (a Python exception, a fatal error, an abort), else the last two other lines; never a
    warning (nor its message and source lines), nor the frames of a stack."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - n))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    meaningful = _without_warnings_and_frames(lines)
    causes = [ln for ln in meaningful if CAUSE.search(ln)]
    if causes:
        return causes[-1].strip()[:300]
    return " | ".join(ln.strip() for ln in meaningful[-2:])[:300]


def _without_warnings_and_frames(lines: List[str]) -> List[str]:
    out: List[str] = []
    i = 0
    in_stack = False
    while i < len(lines):
        line = lines[i]
        i += 1
        if PY_WARNING.search(line):
            for j in range(i, min(i + 6, len(lines))):  # its message's other lines, its source line
                if STACK.search(lines[j]) or PY_WARNING.search(lines[j]):
                    break
                if lines[j].startswith("  "):
                    i = j + 1
                    break
            continue
        if STACK.search(line):
            in_stack = True
            continue
        if in_stack and line[:1].isspace():
            continue  # a frame, or its code
        in_stack = False
        if not WARNING.search(line):
            out.append(line)
    return out


def _exit_text(code: Optional[int]) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _signal_kill(proc) -> bool:
    """SIGKILL a child (its process group: what it started too); True for a process of ours to
    reap, False for a fork server's child (``served.ServedProc``), which its server reaps."""
    if not isinstance(proc, subprocess.Popen):
        proc.kill()
        return False
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass
    return True


def _kill(proc) -> None:
    if _signal_kill(proc):
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def _kill_later(proc) -> None:
    """End a child that finished its job now, and reap it on a thread: the end of a process that
    held a CUDA context takes the driver a while (half a second with eight on one GPU), which
    nothing of ours waits for."""
    if _signal_kill(proc):
        threading.Thread(target=proc.wait, name="tsl-verify-reap", daemon=True).start()


class Started:
    """A child process started ahead of its job (``start``): it imports torch, initialises CUDA and
    calibrates its sleep while the parent still prepares the tasks; ``run_job(..., started=)`` then
    sends the job. ``close()`` ends one that no job came for."""

    def __init__(self, proc, err_file, mode: str, settings: dict, t_spawned: Optional[float] = None) -> None:
        self.proc, self.err_file, self.mode, self.settings = proc, err_file, mode, settings
        self.t_spawned = time.monotonic() if t_spawned is None else t_spawned

    def close(self, wait: bool = True) -> None:
        """End it (``wait=False``: reaped on a thread, for a run that has better things to do)."""
        (_kill if wait else _kill_later)(self.proc)
        _close_err(self.err_file)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def preload(self, pairs: Sequence[Tuple[str, str]]) -> None:
        """The packages to import while waiting for the job, for a child started before they were
        known (``start(preload_later=True)``); it reads them before anything else."""
        try:
            self.proc.stdin.write(json.dumps({"preload": [list(p) for p in pairs]}).encode() + b"\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass  # it died: its job finds out


def _spawn(python: Optional[str], env: Optional[dict], extra_args=()) -> Tuple[subprocess.Popen, object]:
    err_file = tempfile.NamedTemporaryFile(prefix="tsl-verify-", suffix=".stderr", delete=False)
    cmd = [python or sys.executable, "-m", "torchsync_lint.verify.child", *extra_args]
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file,
                            start_new_session=True, env=child_env)
    return proc, err_file


def _close_err(err_file) -> None:
    err_file.close()
    try:
        os.unlink(err_file.name)
    except OSError:
        pass


def start(mode: str, settings: dict, python: Optional[str] = None, env: Optional[dict] = None,
          preload: Sequence[Tuple[str, str]] = (), preload_later: bool = False) -> Started:
    """Start a child for a job of this mode and settings, before the job exists. ``preload``:
    (folder, top-level package) pairs the child imports while it waits for its job (the packages
    the job's snippets will import: their import then overlaps the parent's lint).
    ``preload_later``: they are not known yet; ``Started.preload`` sends them (the child waits)."""
    extra = ["--mode", mode, "--settings", json.dumps(settings, sort_keys=True)]
    if preload_later:
        extra += ["--preload-later"]
    elif preload:
        extra += ["--preload", json.dumps([list(p) for p in preload])]
    proc, err_file = _spawn(python, env, extra)
    return Started(proc, err_file, mode, settings)


def start_many(n: int, mode: str, settings: dict, python: Optional[str] = None, env: Optional[dict] = None,
               preload: Sequence[Tuple[str, str]] = ()) -> List[Started]:
    """``n`` children started ahead of their jobs, each a process of its own (``start``), or, with
    ``TORCHSYNC_VERIFY_FORKSERVER=1``, forked from one fork server that imports torch and
    ``preload`` once (``served``)."""
    if n <= 0:
        return []
    if served.wanted():
        try:
            return [Started(p, p.err_file, mode, settings, p.server.t_spawned)
                    for p in served.start_children(n, mode, settings, python, env, preload)]
        except OSError:
            pass
    return [start(mode, settings, python, env, preload) for _ in range(n)]


END = {"end": True}  # the line that ends a streamed job's tasks
POLL_S = 0.02  # how often a streamed job looks for new tasks while its child waits for them


def run_job(job: dict, timeout: float, startup_timeout: float = 180.0, python: Optional[str] = None,
            env: Optional[dict] = None, on_progress: Optional[Callable[[str], None]] = None,
            started: Optional[Started] = None, feed: Optional["queue.Queue"] = None,
            shared: bool = False) -> JobResult:
    """Run ``job`` (its ``tasks`` each with an ``id``) to the end, restarting the child as needed.
    ``started``: a child already started (``start``) for the job's mode and settings, used first.
    ``feed``: more tasks, as they become ready (the extraction of each file), ended by ``None``: the
    child starts on the first while the parent still prepares the rest (one line per task; no
    timeout runs while the child waits for one). An item of the feed is a task or a list of tasks (a
    file's). ``shared``: the feed is shared with other jobs' children: this one takes an item only
    when its child is up and idle (the others take the rest: whichever child is free runs the next
    file), and leaves the end (``None``) in the feed for them."""
    out = JobResult()
    remaining = [t["id"] for t in job["tasks"]]
    by_id = {t["id"]: t for t in job["tasks"]}
    fed_all = feed is None
    attempts = 0
    if started is not None and (started.mode != job.get("mode", "gpu") or
                                started.settings != job.get("settings", {})):
        started.close()
        started = None
    while remaining or not fed_all or attempts == 0:  # a job without tasks (a probe) still starts once
        attempts += 1
        sub = dict(job, tasks=[by_id[i] for i in remaining])
        if not fed_all:
            sub["stream"] = True
        ahead = started is not None  # it says "preloaded" once the packages are imported
        if started is not None:
            proc, err_file = started.proc, started.err_file
            out.times.setdefault("spawned", started.t_spawned)
            started = None
        else:
            out.times.setdefault("spawned", time.monotonic())
            proc, err_file = _spawn(python, env)
        q: "queue.Queue" = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
        streaming = not fed_all

        def send(obj) -> None:
            try:
                proc.stdin.write(json.dumps(obj).encode() + b"\n")  # one line: json.dumps writes no newline
                proc.stdin.flush()
            except (OSError, ValueError):
                pass  # the child died: its stdout's end says so

        def close_stdin() -> None:
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass

        send(sub)
        if not streaming:
            close_stdin()
        out.times.setdefault("job_sent", time.monotonic())
        current: Optional[int] = None
        got_result = poisoned = ready = preloaded = done = False
        deadline = time.monotonic() + startup_timeout + timeout
        finished = False
        try:
            while True:
                idle = ready and (preloaded or not ahead) and current is None and not remaining
                while streaming and (not shared or idle):
                    try:  # hand over what the feed has now (shared: one item, once this child is idle)
                        item = feed.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        if shared:
                            feed.put(None)  # the end, for the other children too
                        fed_all, streaming = True, False
                        send(END)
                        close_stdin()
                        break
                    for task in (item if isinstance(item, list) else [item]):
                        by_id[task["id"]] = task
                        remaining.append(task["id"])
                        send(task)
                    if shared:
                        break
                waiting = streaming and current is None and ready  # this child is up and waits for a task
                if waiting:
                    deadline = time.monotonic() + timeout  # a child waiting for its next task is not late
                left = deadline - time.monotonic()
                try:
                    msg = q.get(timeout=min(max(left, 0.01), POLL_S) if streaming else max(left, 0.01))
                except queue.Empty:
                    msg = "timeout" if time.monotonic() >= deadline else None
                    if msg is None:
                        continue
                if msg == "timeout":
                    if current is not None:
                        out.results[current] = {"failure": f"timed out after {timeout:g} s"}
                        remaining = remaining[remaining.index(current) + 1:]
                    else:
                        reason = f"the verifier's child did not start within {startup_timeout + timeout:g} s"
                        for i in remaining:
                            out.results[i] = {"failure": reason}
                        remaining = []
                        if not fed_all:  # the rest of the feed fails the same way
                            fed_all = True
                            for task in _drain_feed(feed, shared):
                                out.results[task["id"]] = {"failure": reason}
                    break
                if msg is None:  # the child's stdout closed: it exited
                    proc.wait(timeout=30)
                    why = f"the child process died ({_exit_text(proc.returncode)})"
                    tail = _tail(err_file.name)
                    if tail:
                        why += f": {tail}"
                    if current is not None:
                        out.results[current] = {"failure": why}
                        remaining = remaining[remaining.index(current) + 1:]
                    elif got_result:
                        pass  # died between tasks: start again for the rest
                    else:
                        if out.fatal is None:
                            out.fatal = why
                        for i in remaining:
                            out.results.setdefault(i, {"failure": out.fatal})
                        remaining = []
                        if not fed_all:
                            fed_all = True
                            for task in _drain_feed(feed, shared):
                                out.results.setdefault(task["id"], {"failure": out.fatal})
                    break
                event = msg.get("event")
                if event in ("ready", "preloaded", "begin", "done"):
                    # the child's own clock (CLOCK_MONOTONIC is one clock for every process here): the
                    # parent reads a started child's first lines only when the job is sent
                    out.times.setdefault(event, msg.get("t") or time.monotonic())
                if event == "preloaded":
                    preloaded = True
                if event == "ready":
                    ready = True
                    out.hello = out.hello or msg
                    deadline = time.monotonic() + startup_timeout + timeout  # module import comes next
                elif event == "fatal":
                    out.fatal = msg.get("reason", "failed")
                    out.no_torch = out.no_torch or bool(msg.get("no_torch"))
                    out.no_cuda = out.no_cuda or bool(msg.get("no_cuda"))
                    for i in remaining:
                        out.results.setdefault(i, {"failure": out.fatal})
                    remaining = []
                    if not fed_all:
                        fed_all = True
                        for task in _drain_feed(feed, shared):
                            out.results.setdefault(task["id"], {"failure": out.fatal})
                    finished = True
                elif event == "begin":
                    current = msg["id"]
                    deadline = time.monotonic() + timeout
                    if on_progress:
                        on_progress(f"task {current}")
                elif event == "result":
                    got_result = True
                    poisoned = bool(msg.get("poisoned"))
                    rid = msg["id"]
                    out.results[rid] = msg
                    if rid in remaining:
                        remaining = remaining[remaining.index(rid) + 1:]
                    current = None
                    deadline = time.monotonic() + timeout
                elif event == "done":
                    finished = done = True
                    remaining = [i for i in remaining if i not in out.results]
                    if poisoned and (remaining or not fed_all):
                        break  # the CUDA context broke: a fresh child runs the rest
                    for i in remaining:
                        out.results[i] = {"failure": "the child finished without running this task"}
                    remaining = []
                    break
                if out.hello is not None and not out.hello.get("cuda") and job.get("mode") == "gpu":
                    out.no_cuda = True
                    remaining = []
                    if not fed_all:
                        fed_all = True
                        _drain_feed(feed, shared)
                    break
                if finished:
                    break
        finally:
            if done:
                _kill_later(proc)
            else:
                _kill(proc)
            _close_err(err_file)
        if attempts > len(by_id) + 2:
            for i in remaining:
                out.results[i] = {"failure": "the child kept failing"}
            if not fed_all:
                for task in _drain_feed(feed, shared):
                    out.results[task["id"]] = {"failure": "the child kept failing"}
            break
    return out


def _drain_feed(feed: "queue.Queue", shared: bool = False) -> List[dict]:
    """The feed's remaining tasks, to its end (the parent still putting them in; a shared feed keeps
    its end for the other children)."""
    out = []
    while True:
        item = feed.get()
        if item is None:
            if shared:
                feed.put(None)
            return out
        out.extend(item if isinstance(item, list) else [item])
