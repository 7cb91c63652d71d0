"""Which files a run checks: directories walked for ``*.py``/``*.pyi``, minus what ``exclude``,
``extend-exclude`` and ``.gitignore`` leave out, and pipes, sockets and devices.

``exclude`` and ``extend-exclude`` are gitignore-style patterns relative to the configuration's
folder (``build``, a name at any depth; ``pkg/sub``, one path; ``**/generated/*.py``). ``.gitignore``
files (and ``.git/info/exclude``) of the folders walked and of the folders above them, up to the
repository root, apply too unless ``respect-gitignore = false``. A file named on the command line is
always checked, unless ``--force-exclude`` (as pre-commit passes it) applies the excludes to it.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from typing import Iterable, Iterator, List, Optional, Tuple

from torchsync_lint.check import globs
from torchsync_lint.config import Config

PYTHON_SUFFIXES = (".py", ".pyi")


# one glob dialect for excludes, .gitignore and per-file-ignores: check/globs.py (gitignore-style, pathspec)
_spec = globs.spec
_relative = globs.relative


@lru_cache(maxsize=4096)
def _gitignore_at(directory: str):
    """The patterns of ``directory``'s own .gitignore (plus .git/info/exclude at a repository root)."""
    lines: List[str] = []
    for name in (".gitignore", os.path.join(".git", "info", "exclude")):
        try:
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    return _spec(tuple(lines)) if any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines) else None


@lru_cache(maxsize=4096)
def _gitignore_chain(directory: str, stop: Optional[str]) -> Tuple[Tuple[str, object], ...]:
    """(folder, spec) for ``directory`` and its parents up to the repository root (a folder with
    ``.git``), ``stop``, or the file system root."""
    chain = []
    d = directory
    while True:
        spec = _gitignore_at(d)
        if spec is not None:
            chain.append((d, spec))
        parent = os.path.dirname(d)
        if d == stop or os.path.exists(os.path.join(d, ".git")) or parent == d:
            return tuple(chain)
        d = parent


def gitignored(path: str, is_dir: bool, stop: Optional[str] = None) -> bool:
    """``path`` is listed by a .gitignore at or above its folder (up to ``stop``, when given)."""
    path = os.path.abspath(path)
    for folder, spec in _gitignore_chain(os.path.dirname(path), stop and os.path.abspath(stop)):
        rel = os.path.relpath(path, folder).replace(os.sep, "/")
        if spec.match_file(rel + "/" if is_dir else rel):
            return True
    return False


def excluded(config: Config, path: str, is_dir: Optional[bool] = None, root: Optional[str] = None) -> bool:
    """``path`` matches ``exclude``/``extend-exclude`` (the path or a folder above it, up to ``root``,
    by default the configuration's folder)."""
    if is_dir is None:
        is_dir = os.path.isdir(path)
    rel = _relative(path, config.root if root is None else root)
    if not rel:
        return False
    match = globs.matcher(tuple(config.exclude) + tuple(config.extend_exclude))
    return match(rel + "/" if is_dir else rel)


def _skipped(config: Config, path: str, is_dir: bool, root: Optional[str], git_stop: Optional[str]) -> bool:
    if excluded(config, path, is_dir, root):
        return True
    return config.respect_gitignore and gitignored(path, is_dir, git_stop)


def iter_python_files(paths: Iterable[str], config: Config) -> Iterator[Tuple[str, bool]]:
    """(path, given explicitly) for every Python file under ``paths``; missing paths come back as is."""
    for p in paths:
        if os.path.isdir(p):
            # A folder named explicitly is walked even if excluded or git-ignored itself (unless
            # --force-exclude, for excludes); what lies inside is then matched from the folder down.
            base = None
            if excluded(config, p, True):
                if config.force_exclude:
                    continue
                base = p
            git_stop = p if config.respect_gitignore and gitignored(p, True) else None
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not _skipped(config, os.path.join(root, d), True, base, git_stop))
                for f in sorted(files):
                    full = os.path.join(root, f)
                    if (f.endswith(PYTHON_SUFFIXES) and not _skipped(config, full, False, base, git_stop)
                            and not special(full)):
                        yield full, False
        elif config.force_exclude and excluded(config, p, False):
            continue
        else:
            yield p, True


def special(path: str) -> bool:
    """A pipe, socket or device (or a link to one): reading it blocks, or never ends. A dangling
    link is not special: it is reported as unreadable."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
