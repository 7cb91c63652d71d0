"""Run one file's check with the cyclic garbage collector paused, then collect only what it made.

While a file is parsed and walked, automatic young collections keep moving its growing tree into
the older generations, where every later collection traverses it again along with everything the
run keeps. Paused, the file's objects stay in the youngest generation, and one collection of that
generation at the end frees whatever cycles the check left (``check.file.check_source`` cuts the known
ones, so the tree itself goes by reference counting). Together with those cuts, a third of a
whole-project run (bench/speed.py). Findings do not depend on it.
"""

from __future__ import annotations

import functools
import gc
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


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

    return paused  # type: ignore[return-value]
