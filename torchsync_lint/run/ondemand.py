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

With a project index (``run.project_index``, written by every CLI run over folders with the
cache on), none of the above walks the tree: the module map, the callers' table, the hot set and
the default-device flag come from the index; the interfaces of files unchanged since (mtime and
size, else content hash) are read from the cache only when the file's check reaches them; a
changed file's interface is derived again and its calls replace its old ones in the table; and a
file unchanged in an unchanged project gets the final report of the run, with no parse.

One ``Project`` per root and process, kept for the process's life (flake8 lints many files).
"""

from __future__ import annotations

import os
from typing import Dict, Optional

from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.check.source import ModuleNames, decode
from torchsync_lint.config import CACHE_NAME
from torchsync_lint.inference.callgraph import CallGraph, FileSummary, summary_from_data, summary_to_data
from torchsync_lint.inference.project import Project
from torchsync_lint.run.cache import ReportCache
from torchsync_lint.run.interfaces import interface_cache_get, interface_for_file, interface_from_key
from torchsync_lint.run.project_index import Index, summary_digest
from torchsync_lint.run.report_data import from_cache
from torchsync_lint.run.roots import ROOT_MARKERS, package_top, project_root  # noqa: F401  (where callers import them)
from torchsync_lint.run.star_text import StarText

SKIP_DIRS = frozenset(("build", "dist", "node_modules", "site-packages", "__pycache__", "venv", "env"))
MAX_FILES = 5000
MAX_ON_DEMAND = 200

_PROJECTS: Dict[str, "OnDemand"] = {}


class OnDemand:
    def __init__(self, root: str, cache_dir: Optional[str]) -> None:
        self.root = root
        self.cache_dir = cache_dir
        self.current: Optional[str] = None  # the file being linted (absolute path)
        self.computed = 0
        self.index: Optional[Index] = None
        self._options: Optional[Options] = None
        self._walked = False
        self.paths: Dict[str, str] = {}
        # star imports expanded only where a module's text could bind the name asked
        self._stars = StarText(lambda: self.paths)
        self.project = Project({}, loader=self._load, may_export=self._stars.may_export)

    def use(self, options: Options) -> None:
        """Set up for the options of the files to come: the project index for them if the cache
        holds one (checked once per process and options), else the walk of the tree."""
        if self._options == options:
            return
        self._options = options
        self.index = Index.load(self.cache_dir, options) if self.cache_dir is not None else None
        if self.index is None:
            if not self._walked:
                self._walk()
            return
        index = self.index
        self.paths = dict(index.modules)
        changed = set(index.changed())
        stale = {index.files[p][3] for p in changed}
        derived: list = []  # interfaces of changed files: their calls replace their indexed ones

        def fill(calls: Dict[str, list]) -> None:
            for key, sites in index.calls.items():
                for caller, args, kwargs in sites:
                    if caller not in stale:
                        calls.setdefault(key, []).append((args, kwargs))
            for iface in derived:
                for key, args, kwargs in self.project.calls_from(iface):
                    calls.setdefault(key, []).append((args, kwargs))

        self.project = Project({}, loader=self._load, calls=_LazyCalls(fill),
                               sets_default_device=index.sets_default_device, validation_off=index.validation_off,
                               own_log_prob=index.own_log_prob, may_export=self._stars.may_export)
        self.computed = 0
        self._new_summaries: Dict[str, Optional[dict]] = {}
        for path in sorted(changed):
            module = index.files[path][3]
            if not os.path.exists(path):
                self.paths.pop(module, None)
                self._new_summaries[path] = None
                continue
            iface = self.project.module(module)  # derived again (``_load``)
            self._new_summaries[path] = iface.get("summary") if iface else None
            derived.append(iface)

    def _walk(self) -> None:
        self._walked = True
        self.paths = {}
        root = self.root
        count = 0
        name_of = ModuleNames()  # as ``module_name_for`` names them, each folder asked once
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
                self.paths.setdefault(name_of(path)[0], path)
        self.warm = True
        self.project = Project({}, loader=self._load, may_export=self._stars.may_export)
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
        if self.index is not None:
            entry = self.index.files.get(path)
            if entry is not None and path not in self.index.changed():
                return (True, None) if entry[5] is None else interface_from_key(entry[5], self.cache_dir)
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

    def stored_report(self, source: str, path: str) -> Optional[FileReport]:
        """The final report of the run that wrote the index, when neither this file nor any
        other indexed file changed since (then checking it again would give the same)."""
        index = self.index
        if index is None or self.cache_dir is None or index.changed():
            return None
        full = os.path.abspath(path)
        entry = index.files.get(full)
        if entry is None or entry[4] is None:
            return None
        try:
            with open(full, "rb") as fh:
                data = fh.read()
            if decode(data, full) != source:
                return None  # flake8 lints a text other than the file's (stdin, an editor buffer)
        except (OSError, ValueError):
            return None
        report = from_cache(ReportCache(self.cache_dir), entry[4], final=True)
        if report is None:
            return None
        report.path = path
        for f in report.findings:
            f.path = path
        return report

    def call_graph(self, summary: Optional[FileSummary], path: str, hot_names) -> CallGraph:
        """Hot paths for one file's findings: the indexed hot set when no summary changed (this
        file's included), else a walk over every indexed summary with the changed ones replaced;
        without an index, the summaries of the interfaces loaded so far."""
        index = self.index
        if index is None:
            own = summary.module if summary else None
            return CallGraph(([summary] if summary else []) + [s for s in self.summaries() if s.module != own],
                             hot_names)
        full = os.path.abspath(path)
        entry = index.files.get(full)
        mine = summary_to_data(summary) if summary is not None else None
        others = {p: s for p, s in self._new_summaries.items() if p != full}
        moved = {p for p, s in others.items() if summary_digest(s) != index.files[p][6]}
        if entry is not None and summary_digest(mine) == entry[6] and not moved:
            return CallGraph.from_hot(index.hot, index.once)
        stored = index.summaries()
        stored.update(others)
        stored[full] = mine
        return CallGraph((summary_from_data(s) for s in stored.values() if s is not None), hot_names)


class _LazyCalls(dict):
    """The callers' table, built on the first question (a stored report asks none)."""

    def __init__(self, fill) -> None:
        super().__init__()
        self._fill = fill

    def _ready(self) -> None:
        if self._fill is not None:
            fill, self._fill = self._fill, None
            fill(self)

    def get(self, key, default=None):  # type: ignore[override]
        self._ready()
        return dict.get(self, key, default)

    def __contains__(self, key) -> bool:  # type: ignore[override]
        self._ready()
        return dict.__contains__(self, key)

    def __getitem__(self, key):
        self._ready()
        return dict.__getitem__(self, key)

    def items(self):  # type: ignore[override]
        self._ready()
        return dict.items(self)


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
