"""The project index: what a whole run derived, kept so that one file is answered fast.

A one-file check (the flake8 plugin, ``run.ondemand``) needs more than the file: other files'
interfaces, what every file passes to the functions it defines (parameters take their callers'
values), and which functions are hot (a walk of every file's call graph). A whole run has all of
it; ``index_write.write`` keeps it in the cache folder, one JSON file per rule selection and linter code:

- ``files``: absolute path -> [mtime_ns, size, sha256 of the bytes, module, the cache key of the
  file's final report, the cache key of its interface, a digest of its call-graph summary];
- ``calls``: callee key -> [[calling module, args, kwargs], ...], the caller-to-parameter table
  (``inference.project.Project.calls_from`` over every interface), so a one-file check loads no
  interface to learn who calls it;
- ``hot``: the hot functions of the whole run (``inference.callgraph.CallGraph.hot``);
- ``once``: the functions that run once or periodically (``CallGraph.once_map``), for the
  frequency labels of a stored report;
- ``sets_default_device``: some file moves torch's default device.
- ``validation_off``: some file turns distribution argument validation off.
- ``own_log_prob``: some file defines a ``log_prob`` of its own or passes ``validate_args=False``.

The call-graph summaries of every file go to a second file (``graph-*.json``), read only when
the checked file's own summary (or another file's) differs from the indexed one, to walk the
hot paths again.

A reader validates each file it relies on by mtime and size, and by content hash when those
changed (``Index.changed``); what changed is derived again, the rest is read from the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Dict, List, Optional, Tuple

from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.run.cache import ReportCache, code_fingerprint, write_json
from torchsync_lint.run.report_data import from_cache

FORMAT = 2
INDEX_DIR = "index"


def index_id(options: Options) -> str:
    """The rules that run (not how they were selected), hot and cold names, the linter's code."""
    # the rules (and LibCST) load here, for a run that writes an index or a reader that has no
    # ``selection_key`` file naming it: a reader answered from the cache loads none of them
    from torchsync_lint.rules.registry import select_rules

    codes = sorted(r.code for r in select_rules(options.select, options.ignore))
    extra = os.environ.get("TORCHSYNC_LINT_EXTRA_SYNC_CALLS", "")
    text = json.dumps([code_fingerprint(), codes, sorted(options.hot_functions), sorted(options.cold_functions),
                       extra])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def selection_key(options: Options) -> str:
    """The options as given (not resolved to rules), with the linter's code: the name of a small
    file that says which ``index_id`` they resolve to, so a reader does not load every rule."""
    extra = os.environ.get("TORCHSYNC_LINT_EXTRA_SYNC_CALLS", "")
    text = json.dumps([code_fingerprint(), list(options.select), list(options.ignore), list(options.hot_functions),
                       list(options.cold_functions), extra])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def write_selection(cache_dir: str, options: Options, ident: str) -> None:
    sel = selection_key(options)
    write_json(os.path.join(cache_dir, INDEX_DIR, f"select-{sel}.json"),
               {"key": sel, "data": {"ident": ident, "code": code_fingerprint()}})


def _ident(cache_dir: str, options: Options) -> str:
    sel = selection_key(options)
    try:
        with open(os.path.join(cache_dir, INDEX_DIR, f"select-{sel}.json"), "rb") as fh:
            entry = json.loads(fh.read())
        if entry.get("key") == sel and isinstance(entry["data"]["ident"], str):
            return entry["data"]["ident"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    ident = index_id(options)
    if os.path.exists(index_paths(cache_dir, ident)[0]):
        write_selection(cache_dir, options, ident)  # the next reader of these options loads no rule
    return ident


def index_paths(cache_dir: str, ident: str) -> Tuple[str, str]:
    folder = os.path.join(cache_dir, INDEX_DIR)
    return os.path.join(folder, f"index-{ident}.json"), os.path.join(folder, f"graph-{ident}.json")


def summary_digest(data: Optional[dict]) -> Optional[str]:
    if data is None:
        return None
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Index:
    """A stored index, read for one rule selection; ``None`` from ``load`` when there is none."""

    def __init__(self, data: dict, graph_file: str, calls_file: str = "") -> None:
        self.files: Dict[str, list] = data["files"]
        self._calls: Optional[Dict[str, list]] = data.get("calls")
        self.calls_file = calls_file
        self.hot: List[str] = data["hot"]
        self.once: Dict[str, str] = data["once"]  # CallGraph.once_map of the run
        self.sets_default_device: bool = data["sets_default_device"]
        self.validation_off: bool = data.get("validation_off", False)
        self.own_log_prob: bool = data.get("own_log_prob", False)
        self.graph_file = graph_file
        self.modules: Dict[str, str] = {}
        for path, entry in self.files.items():
            self.modules.setdefault(entry[3], path)
        self._changed: Optional[frozenset] = None

    @property
    def calls(self) -> Dict[str, list]:
        """callee key -> [[calling module, args, kwargs], ...], read on first use (a file whose
        stored report answers needs none of it)."""
        if self._calls is None:
            try:
                with open(self.calls_file, "rb") as fh:
                    self._calls = json.loads(fh.read())["data"]["calls"]
            except (OSError, ValueError, KeyError, TypeError):
                self._calls = {}
        return self._calls

    @classmethod
    def load(cls, cache_dir: str, options: Options) -> Optional["Index"]:
        ident = _ident(cache_dir, options)
        index_file, graph_file = index_paths(cache_dir, ident)
        try:
            with open(index_file, "rb") as fh:
                entry = json.loads(fh.read())
            data = entry["data"]
            if entry.get("key") != ident or data.get("format") != FORMAT:
                return None
            if data.get("calls") is None and not os.path.exists(index_file[:-5] + "-calls.json"):
                return None  # torn: the callers' table is missing
            return cls(data, graph_file, index_file[:-5] + "-calls.json")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def unchanged(self, path: str, data: Optional[bytes] = None) -> bool:
        """The file is as indexed: same mtime and size, else same bytes."""
        entry = self.files.get(path)
        if entry is None:
            return False
        if data is None:
            try:
                st = os.stat(path)
            except OSError:
                return False
            if st.st_mtime_ns == entry[0] and st.st_size == entry[1]:
                return True
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                return False
        return file_digest(data) == entry[2]

    def changed(self) -> frozenset:
        """The indexed files that changed since the run that wrote the index (stat of each; a
        hash only where mtime or size moved), computed once per process."""
        if self._changed is None:
            self._changed = frozenset(p for p in self.files if not self.unchanged(p))
        return self._changed

    def summaries(self) -> Dict[str, dict]:
        """Every indexed file's call-graph summary (path -> data), for walking hot paths again."""
        try:
            with open(self.graph_file, "rb") as fh:
                return json.loads(fh.read())["data"]["summaries"]
        except (OSError, ValueError, KeyError, TypeError):
            return {}


def stored_run(files: List[str], options: Options, cache_dir: str) -> Optional[Tuple[List[FileReport], "Index"]]:
    """The final reports of the run that wrote the index, when this run would repeat it: the same
    files (absolute paths), none changed since (``Index.changed``), the same rules, hot and cold
    names and linter code (``index_id``), every report still in the cache; with the index (its hot
    paths). None otherwise."""
    index = Index.load(cache_dir, options)
    if index is None:
        return None
    full = [os.path.abspath(f) for f in files]
    if len(set(full)) != len(index.files) or any(p not in index.files for p in full) or index.changed():
        return None
    store = ReportCache(cache_dir)
    out: List[FileReport] = []
    for path, abspath in zip(files, full):
        k = index.files[abspath][4]
        if k is None:
            return None
        report = from_cache(store, k, final=True)
        if report is None:
            return None
        report.path = path
        for f in report.findings:
            f.path = path
        out.append(report)
    return out, index
