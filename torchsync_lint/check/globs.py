"""Gitignore-style patterns, the one glob dialect of the settings: ``exclude``/``extend-exclude``
and ``.gitignore`` (``run.files``) and ``per-file-ignores`` (``check.suppress``), all read by
``pathspec`` (a dependency, as flake8 is: there is no second, hand-written reader).

A name alone (``build``, ``test_*.py``) matches at any depth, a pattern with a slash is anchored at
the configuration's folder (``tests/*``: everything under ``tests/``), ``**`` crosses folders, a
trailing ``/`` matches folders only.
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import lru_cache
from typing import Callable, Tuple

# a pattern that is a name alone: no slash, escape, class, negation, comment, '?', '**' or outer
# space; gitignore matches it against each part of a path, as ``fnmatchcase`` matches a name
_NAME_ONLY = re.compile(r"^(?!.*\*\*)[^/\\\[\]?!#\s](?:[^/\\\[\]?]*[^/\\\[\]?\s])?$")


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


@lru_cache(maxsize=1024)
def matcher(patterns: Tuple[str, ...]) -> Callable[[str], bool]:
    """``spec(patterns).match_file``; where every pattern is a name alone (the default excludes:
    ``build``, ``*.egg-info``), a test of each part of the path instead, which needs neither
    pathspec's import nor its per-path matching (a run's file walk asks for every folder and file)."""
    if not all(_NAME_ONLY.match(p) for p in patterns):
        return spec(patterns).match_file
    if not patterns:
        return lambda rel: False
    name = re.compile("|".join(fnmatch.translate(p) for p in patterns)).match
    return lambda rel: any(name(part) for part in rel.split("/") if part)
