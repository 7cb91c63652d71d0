"""The project as seen from one file: how the flake8 plugin (one file at a time) gets the answers
a whole-tree CLI run gets.

1. The project root is the nearest folder above the file holding ``pyproject.toml``,
   ``setup.py``, ``setup.cfg`` or ``.git``; without one, the top of the file's package.
2. The module map comes from the ``.py`` files under that root (at most ``MAX_FILES``; hidden
   folders, virtual environments, ``build``/``dist`` and ``node_modules`` are skipped), named as
   the CLI names them (``check.source.module_name_for``).
3. A file's interface is read from the cache (``<root>/.torchsync_cache``, written by every CLI
   run and by this module) when its bytes are unchanged, else computed from the file (parse and
   index only, no rules). Each process computes at most ``MAX_ON_DEMAND`` of them; past that, a
   name is unknown, as in a one-file run.
4. Parameters that take the values their callers pass need every caller: on a warm tree (a CLI
   run has cached every interface) all interfaces are loaded, so flake8 reports what the CLI
   reports; on a cold tree only the interfaces reached from the file are, which can find less.

One ``Project`` per root and process, kept for the process's life (flake8 lints many files).
"""

from __future__ import annotations

import os
from typing import Dict, Optional

from torchsync_lint.check.source import module_name_for
from torchsync_lint.config import CACHE_NAME
from torchsync_lint.inference.interface import summary_from_data
from torchsync_lint.inference.project import Project
from torchsync_lint.run.project_pass import interface_cache_get, interface_for_file

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
SKIP_DIRS = frozenset(("build", "dist", "node_modules", "site-packages", "__pycache__", "venv", "env"))
MAX_FILES = 5000
MAX_ON_DEMAND = 200

_PROJECTS: Dict[str, "OnDemand"] = {}


def project_root(path: str) -> Optional[str]:
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in ROOT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def package_top(path: str) -> str:
    d = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(d, "__init__.py")) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    return d


class OnDemand:
    def __init__(self, root: str, cache_dir: Optional[str]) -> None:

        self.root = root
        self.cache_dir = cache_dir
        self.paths: Dict[str, str] = {}
        count = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS
                             and not d.endswith(".egg-info"))
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                count += 1
                if count > MAX_FILES:
                    dirs[:] = []
                    break
                path = os.path.join(folder, name)
                self.paths.setdefault(module_name_for(path)[0], path)
        self.computed = 0
        self.current: Optional[str] = None  # the file being linted (absolute path)
        self.warm = True
        self.project = Project({}, loader=self._load)
        # a warm tree: load every interface so callers in every file are known
        for module in list(self.paths):
            if not self._cached(module)[0]:
                self.warm = False
                break
        if self.warm:
            for module in list(self.paths):
                self.project.module(module)

    def _cached(self, module: str):
        """(found, interface) from the cache."""

        path = self.paths.get(module)
        if path is None or self.cache_dir is None:
            return False, None
        return interface_cache_get(path, module, self.cache_dir)

    def _load(self, module: str) -> Optional[dict]:

        path = self.paths.get(module)
        if path is None or os.path.abspath(path) == self.current:
            return None  # the file being linted speaks for itself
        found, got = self._cached(module)
        if found:
            return got
        if self.computed >= MAX_ON_DEMAND:
            return None
        self.computed += 1
        return interface_for_file(path, module, self.cache_dir)

    def summaries(self):

        out = []
        for module in self.project.modules():
            iface = self.project.module(module)
            if iface and iface.get("summary"):
                out.append(summary_from_data(iface["summary"]))
        return out


def project_for(path: str, cache_dir: Optional[str] = None) -> Optional[OnDemand]:
    """The project ``path`` belongs to, or None for a file outside any package or project."""
    root = project_root(path) or package_top(path)
    if root is None:
        return None
    got = _PROJECTS.get(root)
    if got is None:
        cache = cache_dir if cache_dir is not None else os.path.join(root, CACHE_NAME)
        got = _PROJECTS[root] = OnDemand(root, cache if os.access(root, os.W_OK) or os.path.isdir(cache) else None)
    return got
