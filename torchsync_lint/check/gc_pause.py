"""Run one file's check with the cyclic garbage collector paused, then collect only what it made.

While a file is parsed and walked, automatic young collections keep moving its growing tree into
the older generations, where every later collection traverses it again along with everything the
run keeps. Paused, the file's objects stay in the youngest generation, and one collection of that
generation at the end frees whatever cycles the check left (``check.file.check_source`` cuts the known
ones, so the tree itself goes by reference counting). Together with those cuts, a third of a
whole-project run (bench/speed.py). Findings do not depend on it.

Within a tree run (``run()``, one per ``lint_paths`` in the process that calls it), what a file's
check leaves alive after that collection (its report and interface, a tree the run keeps for the
project pass, the interfaces and reports read from the cache) is then frozen (``gc.freeze``):
the young and middle collections that follow no longer traverse it, nor does a full one (on
transformers' first 1,100 files those were 8% of the run, mostly traversing kept trees). At the
end of the run it is unfrozen, and cycles that became garbage meanwhile are collected as usual.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from typing import Callable, Iterator, Optional, TypeVar

F = TypeVar("F", bound=Callable)
_RUN_PID: Optional[int] = None  # the process whose tree run freezes what each check leaves


@contextlib.contextmanager
def run() -> Iterator[None]:
    """A tree run: what each file check leaves alive is frozen out of the collector until the
    run ends. Not where the collector is off, something else froze objects already (unfreezing
    would release them too) or a run is under way (a nested run). Worker processes forked during
    the run see another process id and freeze nothing."""
    global _RUN_PID
    if _RUN_PID is not None or not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    _RUN_PID = os.getpid()
    try:
        yield
    finally:
        _RUN_PID = None
        gc.unfreeze()


def per_file(fn: F) -> F:
    """Decorate a per-file entry point. Nested calls (a check inside a check, or on the
    deep-stack thread) and callers that paused the collector themselves are left alone."""

    @functools.wraps(fn)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()
            gc.collect(0)
            if _RUN_PID is not None and _RUN_PID == os.getpid():
                gc.freeze()

    return paused  # type: ignore[return-value]
