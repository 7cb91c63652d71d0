"""A whole run over files and folders: select the files, take the final reports the project
index kept when nothing changed (``project_index.stored_run``) or else check the files
(``checked_run``: import order, the project pass, the index written), label and filter the
findings.

``checked_run`` (and with it LibCST, the rules and the inference) is imported only when the index
cannot answer: an unchanged project's re-run imports none of them (tests/test_startup.py)."""

from __future__ import annotations

import errno
import os
from typing import Callable, List, Optional, Sequence

from torchsync_lint.check import gc_pause
from torchsync_lint.check.classify import classify
from torchsync_lint.check.report import Options
from torchsync_lint.check.suppress import suppress
from torchsync_lint.config import Config
from torchsync_lint.finding import FileError, Finding, LintResult
from torchsync_lint.inference.callgraph import CallGraph
from torchsync_lint.run.files import iter_python_files, special
from torchsync_lint.run import cache_prune, project_index


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
        # the hot paths of the run that stored them (the same files, unchanged)
        graph = CallGraph.from_hot(index.hot, index.once)
    else:
        from torchsync_lint.run import checked_run  # the file check loads only when the index cannot answer (start-up)

        reports, graph = checked_run.check_files(files, options, config, jobs, cache_dir, folders, result)
        result.interfaces = {r.interface["module"]: r.interface for r in reports if r.interface is not None} or None
    result.files_checked = len(files)
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
