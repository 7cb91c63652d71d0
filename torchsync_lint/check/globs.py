"""Gitignore-style patterns, the one glob dialect of the settings: ``exclude``/``extend-exclude``
and ``.gitignore`` (``run.files``) and ``per-file-ignores`` (``check.suppress``), all read by
``pathspec`` (a dependency, as flake8 is: there is no second, hand-written reader).

A name alone (``build``, ``test_*.py``) matches at any depth, a pattern with a slash is anchored at
the configuration's folder (``tests/*``: everything under ``tests/``), ``**`` crosses folders, a
trailing ``/`` matches folders only.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Tuple


@lru_cache(maxsize=1024)
def spec(patterns: Tuple[str, ...]):
    """A ``pathspec.GitIgnoreSpec`` of ``patterns``."""
    # imported with the first pattern, not with this module: the flake8 plugin checks files whose
    # settings have none (10-25 ms of import on a loaded machine)
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` in forward slashes; a path outside keeps its own tail."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")
    while rel.startswith("../"):
        rel = rel[3:]
    return "" if rel in (".", "..") else rel
