"""The project index written (``project_index`` says what it holds and who reads it): by a run
that checked files (``checked_run``), never by one the index answered."""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Tuple

from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.check.source import module_name_for
from torchsync_lint.inference.callgraph import summary_to_data
from torchsync_lint.run.cache import code_fingerprint, write_json
from torchsync_lint.run.project_index import (FORMAT, Index, file_digest, index_id, index_paths, summary_digest,
                                              write_selection)
from torchsync_lint.run.tracked_project import TrackedProject, Waves


def _alternatives(options: Options) -> List[Options]:
    """The same run asked for as the flake8 plugin asks (``--select TSL``, or no selection):
    written with the index when they resolve to the same rules, so the plugin's first file reads
    the index without loading every rule."""
    return [Options(select, (), options.hot_functions, options.cold_functions) for select in ((), ("TSL",))]


def write(reports: List[FileReport], options: Options, hot: Iterable[str], cache_dir: str,
          interface_keys: Dict[str, str], touched: Iterable[str] = (), once: Optional[Dict[str, str]] = None,
          waves: Optional[Waves] = None) -> Optional[Tuple[str, List[str]]]:
    """Keep what this run derived (``project_index`` says what): the name of the file listing the
    cache keys it keeps and those keys (``cache_prune`` needs not read them back); None when a
    larger run's index is kept instead. ``interface_keys``: path -> the cache key its interface was stored under
    (``interfaces.store_interfaces``); ``touched``: every cache key the run read or wrote,
    listed with the index so that ``cache_prune`` keeps them; ``waves``: what the run's projects
    placed (``tracked_project.Waves``), for the callers' table."""
    files: Dict[str, list] = {}
    summaries: Dict[str, dict] = {}
    interfaces: Dict[str, dict] = {}
    for r in reports:
        try:
            st = os.stat(r.path)
            with open(r.path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        module = r.interface["module"] if r.interface is not None else module_name_for(r.path)[0]
        summary = summary_to_data(r.summary) if r.summary is not None else None
        path = os.path.abspath(r.path)
        files[path] = [st.st_mtime_ns, st.st_size, file_digest(data), module, r.cache_key,
                       interface_keys.get(r.path), summary_digest(summary)]
        if summary is not None:
            summaries[path] = summary
        if r.interface is not None:
            interfaces.setdefault(r.interface["module"], r.interface)
    ident = index_id(options)
    index_file, graph_file = index_paths(cache_dir, ident)
    old = Index.load(cache_dir, options)
    if old is not None and any(p not in files and os.path.exists(p) for p in old.files):
        return None  # a run over part of an indexed project keeps the whole project's index
    project = TrackedProject(interfaces, waves)
    calls = project.calls_by_module()
    # the cache's entry shape ({"key", "data"}): one reader, one check for a foreign or torn file
    keys = sorted(set(touched) | set(interface_keys.values()))
    write_json(graph_file, {"key": ident, "data": {"format": FORMAT, "code": code_fingerprint(), "keys": keys,
                                              "summaries": summaries}})
    write_json(index_file[:-5] + "-calls.json", {"key": ident, "data": {"calls": calls}})
    write_json(index_file, {"key": ident, "data": {"format": FORMAT, "files": files, "hot": sorted(hot),
                                              "once": dict(sorted((once or {}).items())),
                                              "sets_default_device": project.sets_default_device,
                                              "validation_off": project.validation_off,
                                              "own_log_prob": project.own_log_prob}})
    write_selection(cache_dir, options, ident)
    for alt in _alternatives(options):
        if alt != options and index_id(alt) == ident:
            write_selection(cache_dir, alt, ident)
    return os.path.basename(graph_file), keys
