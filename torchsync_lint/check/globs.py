"""Gitignore-style patterns, the one glob dialect of the settings: ``exclude``/``extend-exclude``
and ``.gitignore`` (``run.files``) and ``per-file-ignores`` (``check.suppress``), all read by
``pathspec`` (a dependency; a simplified reader stands in for a bare interpreter without it).

A name alone (``build``, ``test_*.py``) matches at any depth, a pattern with a slash is anchored at
the configuration's folder (``tests/*``: everything under ``tests/``), ``**`` crosses folders, a
trailing ``/`` matches folders only.
"""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from typing import Iterable, Tuple


class PlainSpec:
    """Gitignore patterns read with ``fnmatch`` when ``pathspec`` (a declared dependency) is not
    installed, as in a bare interpreter running the checkout: names match at any depth, patterns
    with a slash from the folder, a trailing slash means a folder; negations are ignored."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = [p.strip() for p in patterns if p.strip() and not p.lstrip().startswith(("#", "!"))]

    def match_file(self, rel: str) -> bool:
        parts = rel.rstrip("/").split("/")
        is_dir = rel.endswith("/")
        for pattern in self.patterns:
            dir_only = pattern.endswith("/")
            pat = pattern.strip("/")
            if "/" in pat:
                prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
                if any(fnmatch.fnmatchcase(p, pat) for p in prefixes) and (not dir_only or is_dir or len(parts) > 1):
                    return True
            elif any(fnmatch.fnmatchcase(part, pat) for part in (parts if not dir_only or is_dir else parts[:-1])):
                return True
        return False


@lru_cache(maxsize=1)
def _pathspec():
    try:
        import pathspec
    except ImportError:  # a declared dependency, missing in a bare interpreter
        import sys

        print("torchsync-lint: note: the 'pathspec' package is missing; exclude and .gitignore patterns are "
              "read in a simplified way (pip install pathspec)", file=sys.stderr)
        return None
    return pathspec


@lru_cache(maxsize=1024)
def spec(patterns: Tuple[str, ...]):
    module = _pathspec()
    return module.GitIgnoreSpec.from_lines(patterns) if module is not None else PlainSpec(patterns)


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` in forward slashes; a path outside keeps its own tail."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")
    while rel.startswith("../"):
        rel = rel[3:]
    return "" if rel in (".", "..") else rel
