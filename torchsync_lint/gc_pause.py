"""Run one file's check with the cyclic garbage collector paused, then collect only what it made.

Checking a file builds reference cycles (the index's functions and classes point at each other,
the rule walker holds its own bound callbacks), so the file's whole CST outlives the check until
the collector finds it. With automatic collection on, the young collections during the check move
the tree into the older generations and every full collection then traverses it again, together
with everything the run keeps: a third of a whole-project run, measured (bench/speed.py). Paused,
the file's objects stay in the youngest generation, and one collection of that generation at the
end frees its garbage (cycles included) in a single traversal. Findings do not depend on it.
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
