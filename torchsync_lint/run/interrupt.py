"""SIGTERM as an exception in the main thread (``Terminated``), so that a run ends by the same way
out as Ctrl-C: ``workers.pool`` kills its workers, the command prints one line and exits 143.
Apart from ``workers`` so that the command's start needs no process pool."""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator


class Terminated(BaseException):
    """SIGTERM, raised in the main thread (``terminate_as_exception``). A ``BaseException``, as
    ``KeyboardInterrupt`` is: the ``except Exception`` that turns a bug met in one file into that
    file's error must not catch it (the run would go on, blaming an innocent file)."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def terminate_as_exception() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` in the main thread while in the block (elsewhere: nothing)."""
    try:
        old = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
