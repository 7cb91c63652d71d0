"""A file's check through the report cache: the same bytes, path, package, options, linter code
(and, checked with a project, the same answers to every question the check asked of it: the
entries ``tracked_project`` recorded) give the stored report."""

from __future__ import annotations

from typing import Optional

from torchsync_lint.check import gc_pause
from torchsync_lint.check.file import check_data
from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.check.source import module_name_for
from torchsync_lint.finding import FileError
from torchsync_lint.run import report_data
from torchsync_lint.run.report_data import from_cache
from torchsync_lint.run.cache import ReportCache
from torchsync_lint.run.cache import key as cache_key
from torchsync_lint.run.kept import Kept
from torchsync_lint.run.tracked_project import TrackedProject


@gc_pause.per_file
def check_file(path: str, options: Options, cache_dir: Optional[str] = None, project=None,
               want_interface: bool = False, project_digest: str = "", ordered: bool = False,
               kept: Optional[Kept] = None) -> FileReport:
    """Check one file; with ``cache_dir``, reuse the report of a run on the same bytes, path,
    package, options and linter code (see ``cache``); checked with a ``TrackedProject``, also the
    same entries of every interface the check asked about (anything else: also the same
    ``project_digest``). ``kept``: the run's kept trees, and (an ``ordered`` check with a
    ``TrackedProject``) where the entries the check read are kept (``run.kept``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return FileReport(path, error=FileError(path, f"cannot read: {exc.strerror or exc}"))
    tracked = project if isinstance(project, TrackedProject) else None
    if cache_dir is None:
        if tracked is None or kept is None or not ordered:
            return check_data(data, path, options, project, want_interface, ordered, kept)
        tracked.begin()
        try:
            report = check_data(data, path, options, project, want_interface, ordered, kept)
        finally:
            deps = tracked.end()
        kept.read(path, deps, tracked)
        return report
    store = ReportCache(cache_dir)
    k = key_for(data, path, options, project_digest, want_interface, ordered, tracked is not None)
    report = from_cache(store, k, tracked)
    if report is not None:
        return report
    if tracked is not None:
        tracked.begin()
        try:
            report = check_data(data, path, options, project, want_interface, ordered, kept)
        finally:
            deps = tracked.end()
        if kept is not None and ordered:
            kept.read(path, deps, tracked)
    else:
        report = check_data(data, path, options, project, want_interface, ordered, kept)
    store_report(store, k, report, tracked, deps if tracked is not None else None)
    return report


def store_report(store: ReportCache, k: str, report: FileReport, tracked: Optional[TrackedProject],
                 deps) -> None:
    """Keep ``report`` under ``k``; checked with ``tracked``, with the entries ``deps`` it read there."""
    if report.error is None or report.error.message.startswith("syntax error"):
        entry = report_data.to_json(report)  # never keep an internal error: the next run may be fixed
        if tracked is not None:
            entry = {"deps": tracked.record(deps), "report": entry}
        store.put(k, entry)
        report.cache_key = k


def key_for(data: bytes, path: str, options: Options, project_digest: str, want_interface: bool, ordered: bool,
         tracked: bool) -> str:
    what = (options, "entries" if tracked else project_digest, want_interface, ordered)
    return cache_key(data, path, module_name_for(path)[0], what)


def cached_report(path: str, options: Options, cache_dir: str, project_digest: str = "", want_interface: bool = False,
                  ordered: bool = False, project=None) -> Optional[FileReport]:
    """The report ``check_file`` would return from the cache, or None when it would check the file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    tracked = project if isinstance(project, TrackedProject) else None
    k = key_for(data, path, options, project_digest, want_interface, ordered, tracked is not None)
    return from_cache(ReportCache(cache_dir), k, tracked)
