"""Worker pools that never outlive the run, and signals that end it without a traceback.

A killed run must not leave its workers behind, checking files for no one. Three ways out:

- the run is killed outright (SIGKILL, an OOM kill): on Linux each worker asks the kernel for
  SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``); other platforms skip this;
- Ctrl-C (SIGINT, sent to the whole process group) or SIGTERM: workers ignore SIGINT and die
  quietly on SIGTERM; in the CLI's process both become exceptions (``KeyboardInterrupt``,
  ``Terminated``) that leave ``pool``'s block, which kills the workers instead of waiting for
  every queued file;
- the run ends normally: the pool is shut down and joined as usual.

A worker is forked with the parent's handlers, so a signal that reached it before its own were
set raised the parent's exception there, which ``multiprocessing`` reported on stderr ("Process
ForkProcess-2:", cut short when the worker was then killed). Both signals are held while the
workers are forked, and each worker lets them in once its handlers are its own.

``pool_map`` also survives a worker that dies on its own (a crash in native code): only the item
it was on is lost, and answered for.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator, Optional

from torchsync_lint.run.interrupt import Terminated, terminate_as_exception  # noqa: F401  (where callers import them)

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
HELD = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Delay SIGINT and SIGTERM in this thread (and in what it forks) until the block ends."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: nothing forked inherits a handler
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the other two ways out remain
            pass
    if os.getppid() != parent:  # the parent died before the request above was made
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers Ctrl-C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler (forked with it)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)  # held by ``pool`` while it forked us


def _start(parent: int, initializer: Optional[Callable], initargs: tuple) -> None:
    _die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


def _kill(executor: ProcessPoolExecutor) -> None:
    """Kill the workers, and let the pool's manager thread see them gone.

    A worker killed while it sends a result leaves half a message in the result pipe: the
    manager thread, reading it, would wait for the rest forever, since this process holds a write
    end of that pipe too (``shutdown(wait=True)`` then hung the run, and with it the exit). Closed
    here, the read ends in EOF once the workers are dead, which the pool takes for a broken pool.
    Private attributes, each guarded: a Python without them keeps the old behaviour."""
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.kill()
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.join()  # dead before the write end goes: a live writer would keep the pipe open
    writer = getattr(getattr(executor, "_result_queue", None), "_writer", None)
    if writer is not None:
        writer.close()


@contextlib.contextmanager
def pool(jobs: int, initializer: Optional[Callable] = None, initargs: tuple = ()) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` whose workers die with this process, and are killed (not
    waited for) when the block is left by an exception such as Ctrl-C."""
    executor = None
    try:
        with _signals_held():
            executor = ProcessPoolExecutor(max_workers=jobs, initializer=_start,
                                           initargs=(os.getpid(), initializer, initargs))
            executor.submit(int)  # forks the workers now (the fork start method forks them all at once)
        yield executor
    except BaseException:
        if executor is not None:
            _kill(executor)
            executor.shutdown(wait=True, cancel_futures=True)  # prompt: the pool sees its workers dead
        raise
    executor.shutdown(wait=True)


def pool_map(jobs: int, fn: Callable, *iterables, chunksize: int = 1, initializer: Optional[Callable] = None,
             initargs: tuple = (), on_crash: Optional[Callable] = None) -> list:
    """``list(map(fn, *iterables))`` on a ``pool`` that survives a worker dying (a crash
    in native code kills the process, and with it the whole pool): the first unfinished item runs
    again alone, in a fresh process, where ``on_crash(*its arguments)`` answers for it if it dies
    again; the rest go on in a fresh pool."""
    items = list(zip(*iterables))
    out: list = []
    while len(out) < len(items):
        rest = items[len(out):]
        try:
            with pool(jobs, initializer, initargs) as executor:
                # not ``executor.map``: on Ctrl-C its generator cancels the futures still queued,
                # which the pool, once its workers are killed, then fails to fail (a traceback
                # from its thread, Python 3.11); a chunk's results arrive together either way
                chunks = [executor.submit(_run_chunk, fn, rest[i:i + chunksize])
                          for i in range(0, len(rest), chunksize)]
                for chunk in chunks:
                    out.extend(chunk.result())
        except BrokenProcessPool:
            out.append(_alone(fn, items[len(out)], initializer, initargs, on_crash))
    return out


def _run_chunk(fn: Callable, chunk: list) -> list:
    return [fn(*args) for args in chunk]


def _alone(fn: Callable, args: tuple, initializer: Optional[Callable], initargs: tuple,
           on_crash: Optional[Callable]):
    try:
        with pool(1, initializer, initargs) as executor:
            return executor.submit(fn, *args).result()
    except BrokenProcessPool:
        if on_crash is None:
            raise
        return on_crash(*args)
