"""A whole run over files and folders: select the files, check them in import order with the
project's interfaces (``project_pass``), label and filter the findings."""

from __future__ import annotations

import errno
import os
from typing import Callable, List, Optional, Sequence, Set

from torchsync_lint.check import gc_pause
from torchsync_lint.check.classify import classify
from torchsync_lint.check.report import Options
from torchsync_lint.check.suppress import suppress
from torchsync_lint.config import Config
from torchsync_lint.finding import FileError, Finding, LintResult
from torchsync_lint.inference.callgraph import CallGraph
from torchsync_lint.run.files import iter_python_files, special
from torchsync_lint.run import cache_prune, project_index
from torchsync_lint.run.interfaces import store_interfaces
from torchsync_lint.run.kept import Kept
from torchsync_lint.run.project_pass import first_pass, project_pass
from torchsync_lint.run.tracked_project import Waves


def _missing(path: str) -> str:
    """Why a path named on the command line cannot be opened: it is missing, or a link that leads
    nowhere (a loop, a dangling target)."""
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "symbolic link loop"
            return f"broken symbolic link (to {os.readlink(path)})"
    return "no such file or directory"


def lint_paths(paths: Sequence[str], config: Config, jobs: Optional[int] = None,
               on_note: Optional[Callable[[str], None]] = None, cache_dir: Optional[str] = None) -> LintResult:
    """Lint files and folders. ``cache_dir`` (or ``config.cache_dir``) keeps per-file reports
    between runs; None checks every file."""
    with gc_pause.run():
        return _lint_paths(paths, config, jobs, on_note, cache_dir)


def _lint_paths(paths: Sequence[str], config: Config, jobs: Optional[int], on_note: Optional[Callable[[str], None]],
                cache_dir: Optional[str]) -> LintResult:
    result = LintResult()
    cache_dir = cache_dir or getattr(config, "cache_dir", None)
    options = Options(tuple(config.select), tuple(config.ignore), tuple(config.hot_functions),
                      tuple(config.cold_functions))
    files: List[str] = []
    for path, explicit in iter_python_files(paths, config):
        if explicit and not os.path.exists(path):
            result.errors.append(FileError(path, _missing(path)))
            continue
        if explicit and special(path):
            result.errors.append(FileError(path, "not a regular file (a pipe, socket or device)"))
            continue
        files.append(path)
    files = list(dict.fromkeys(files))
    jobs = jobs or os.cpu_count() or 1

    folders = all(os.path.isdir(p) for p in paths)
    # an unchanged project: the index lists every final report (no import order, no interfaces)
    stored = project_index.stored_run(files, options, cache_dir) if cache_dir is not None and folders else None
    if stored is not None:
        reports, index = stored
    else:
        waves = Waves()  # what the projects of this run place, shared (``tracked_project``)
        kept = Kept()  # trees and what each check read, for the project pass (``run.kept``)
        reports = first_pass(files, options, jobs, cache_dir, waves, kept)
        touched: Set[str] = set()
        reports = project_pass(reports, options, jobs, cache_dir, touched, waves, kept)
        kept.drop_trees()
    result.files_checked = len(files)
    if stored is not None:  # the hot paths of the run that stored them (the same files, unchanged)
        graph = CallGraph.from_hot(index.hot, index.once)
    else:
        graph = CallGraph((r.summary for r in reports if r.summary is not None), config.hot_functions)
    if cache_dir is not None and stored is None:
        interface_keys = store_interfaces(reports, cache_dir)
        # a run over folders (the project, or part of it) keeps an index and prunes the cache
        written = project_index.write(reports, options, graph.hot(), cache_dir, interface_keys, touched,
                                      graph.once_map(), waves) if folders else None
        if written is not None:
            result.cache_pruned = cache_prune.prune(cache_dir, written)  # type: ignore[attr-defined]
    if cache_dir is not None:
        result.cache_size = cache_prune.size(cache_dir)  # type: ignore[attr-defined]  (files, bytes)
    for r in reports:
        if r.error is not None:
            result.errors.append(r.error)
        if r.note and on_note is not None and r.path in paths:
            on_note(f"{r.path}: note: {r.note}")
    hidden: List[Finding] = []
    findings = classify(reports, graph, config.include_cold, hidden, config.hot_tests)
    result.unsuppressed = findings + hidden  # before `# noqa`: which noqa comments are used (TSL901)
    sources = {r.path: r.noqa for r in reports if r.noqa is not None}
    result.hidden = suppress(hidden, sources, config)
    result.findings = sorted(suppress(findings, sources, config), key=Finding.sort_key)
    return result
