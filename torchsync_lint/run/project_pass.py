"""The project pass: every file's interface at hand, check again the files whose findings depend
on other files (``inference.project``), and keep interfaces in the cache for the flake8 plugin
(``run.ondemand``).

Cold run: every file is checked once, in import order (``first_pass``): with the interfaces of
the files it imports at hand when they are not part of an import cycle with it (findings,
interface, the references its rules met and what they resolved to). Then the files whose
functions take parameters only other files pass get their interfaces again with those values, and every file that met a reference the
project can answer is checked again with the project. Results of both passes are cached by the
file's bytes and, for a check with a project, the entries of other files' interfaces it asked
about (``tracked_project``): an unchanged tree is answered from the cache, and after an edit only
the files that asked about what changed are checked again.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Dict, List, Optional, Set, Tuple

from torchsync_lint.check.file import crashed
from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.check.source import module_name_for
from torchsync_lint.run import import_order
from torchsync_lint.run.cached_check import cached_report, check_file
from torchsync_lint.run.kept import Kept
from torchsync_lint.run.second_pass import reuse
from torchsync_lint.inference.project import Project
from torchsync_lint.run.tracked_project import TrackedProject, Waves
from torchsync_lint.inference.defs import HOST_EVIDENCE
from torchsync_lint.inference.values import (
    BATCH,
    CPU,
    DEVICE,
    DICT,
    LIST,
    MODULE,
    NDARRAY,
    OBJECT,
    SIZE,
    STR,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    Value,
)


# -- the second pass: files that asked other files something they can answer ----------------------
_WORKER_PROJECT: Optional[Tuple[Project, str]] = None


def _init_worker(interfaces: Dict[str, dict], digest: Optional[str] = None,
                 project: Optional[TrackedProject] = None) -> None:
    global _WORKER_PROJECT
    _WORKER_PROJECT = (project if project is not None else TrackedProject(interfaces), "")


def project_digest(interfaces: Dict[str, dict]) -> str:
    """Changes whenever any file's interface does: the key of every result that used the project."""
    h = hashlib.sha256()
    for name in sorted(interfaces):
        h.update(json.dumps(interfaces[name], sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def _recheck(path: str, options: Options, want_interface: bool = False, cache_dir: Optional[str] = None,
             ordered: bool = False, kept: Optional[Kept] = None) -> FileReport:
    project, digest = _WORKER_PROJECT
    return check_file(path, options, cache_dir, project, want_interface, digest, ordered, kept)


def _ordered_check(path: str, options: Options, cache_dir: Optional[str], kept: Optional[Kept] = None) -> FileReport:
    return _recheck(path, options, False, cache_dir, True, kept)


def first_pass(files: List[str], options: Options, jobs: int, cache_dir: Optional[str] = None,
               waves: Optional[Waves] = None, kept: Optional[Kept] = None) -> List[FileReport]:
    """Check every file once, in import order (``import_order``): a file is checked with the
    interfaces of the files of earlier waves at hand, so most references to other files resolve
    now; what each resolved to is recorded for ``project_pass``. The first wave (and a run of
    unrelated files) is checked without a project. ``kept``: trees and what each check read,
    kept for the project pass (``run.kept``; checks made in this process only)."""
    modules, sources, packages = [], [], []
    for path in files:
        module, is_package = module_name_for(path)
        try:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            text = ""  # check_file reports it
        modules.append(module)
        sources.append(text)
        packages.append(is_package)
    reports: List[Optional[FileReport]] = [None] * len(files)
    interfaces: Dict[str, dict] = {}
    waves = waves if waves is not None else Waves()  # what the waves' growing projects share
    for wave in import_order.order(modules, sources, packages):
        paths = [files[i] for i in wave]
        got = _map_wave(paths, options, jobs, cache_dir, interfaces, "", waves=waves, kept=kept)
        added: Dict[str, dict] = {}
        for i, r in zip(wave, got):
            reports[i] = r
            if r.interface is not None and r.interface["module"] not in interfaces:
                added.setdefault(r.interface["module"], r.interface)
        interfaces.update(added)
    return [r for r in reports if r is not None]


def pooled(n_files: int, jobs: int) -> bool:
    """Whether ``n_files`` of one wave (or one recheck) go to a pool of ``jobs`` workers rather than
    being checked here one by one. A pool costs its start (a fork per worker) and the trees the
    project pass could reuse (``run.kept``: checks made here only); it pays once the files spread
    over enough workers: 16 files with two, down to 4 with eight or more (``--verify`` leaves the
    lint the CPUs its children do not use, often eight, while most waves hold 4-15 files)."""
    return jobs > 1 and n_files >= max(4, 32 // jobs)


def _pool_map(jobs: int, fn, paths: List[str], options: Options, *more: list, most: int, **kw) -> List[FileReport]:
    """``workers.pool_map(fn, paths, options, *more)``, the largest files first (a wave waits for its
    slowest file: started last, it would finish last), in chunks of at most ``most`` files and at
    least two chunks per worker; the reports in the order of ``paths``."""
    from torchsync_lint.run import workers  # process pools only for a run that uses them (start-up, --jobs 1)

    n = len(paths)
    order = sorted(range(n), key=lambda i: (-_size(paths[i]), i))
    got = workers.pool_map(jobs, fn, [paths[i] for i in order], [options] * n, *[[m[i] for i in order] for m in more],
                           chunksize=max(1, min(most, n // (2 * jobs))), **kw)
    out: List[Optional[FileReport]] = [None] * n
    for i, r in zip(order, got):
        out[i] = r
    return out  # type: ignore[return-value]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _map_wave(paths: List[str], options: Options, jobs: int, cache_dir: Optional[str],
              interfaces: Dict[str, dict], digest: str, project: Optional[TrackedProject] = None,
              waves: Optional[Waves] = None, kept: Optional[Kept] = None) -> List[FileReport]:
    if interfaces and project is None:
        project = TrackedProject(interfaces, waves)  # the cache's questions and the checks' answers
    if cache_dir is not None and jobs > 1:
        # cache hits here: no worker pool to start for a wave the cache answers
        ordered = bool(interfaces)
        hits = [cached_report(p, options, cache_dir, "", False, ordered, project) for p in paths]
        misses = [p for p, h in zip(paths, hits) if h is None]
        if len(misses) < len(paths):
            done = iter(_map_wave(misses, options, jobs, cache_dir, interfaces, digest, project, waves, kept)
                        if misses else ())
            return [h if h is not None else next(done) for h in hits]
    n = len(paths)
    if not interfaces:
        if pooled(n, jobs):
            return _pool_map(jobs, check_file, paths, options, [cache_dir] * n, most=8, on_crash=crashed)
        return [check_file(p, options, cache_dir, kept=kept) for p in paths]
    if pooled(n, jobs):
        # a pool per wave: workers start with the interfaces so far (forked, not copied, on Linux)
        return _pool_map(jobs, _ordered_check, paths, options, [cache_dir] * n, most=4,
                         initializer=_init_worker, initargs=(interfaces, digest), on_crash=crashed)
    _init_worker(interfaces, digest, project)
    return [_ordered_check(p, options, cache_dir, kept) for p in paths]


def _run_again(reports: List[FileReport], todo: List[int], interfaces: Dict[str, dict], options: Options,
               jobs: int, want_interface: bool, cache_dir: Optional[str],
               touched: Optional[Set[str]] = None, waves: Optional[Waves] = None,
               kept: Optional[Kept] = None) -> List[FileReport]:
    paths = [reports[i].path for i in todo]
    again = _recheck_all(paths, interfaces, "", options, jobs, want_interface, cache_dir, waves, kept,
                         [reports[i] for i in todo])
    if touched is not None:
        touched.update(r.cache_key for r in again if r.cache_key is not None)
    out = list(reports)
    for i, r in zip(todo, again):
        if r.error is None:
            if not want_interface:
                r.interface = reports[i].interface
            r.refs, r.open_params, r.ref_values = reports[i].refs, reports[i].open_params, reports[i].ref_values
            out[i] = r
    return out


def _recheck_all(paths: List[str], interfaces: Dict[str, dict], digest: str, options: Options, jobs: int,
                 want_interface: bool, cache_dir: Optional[str], waves: Optional[Waves] = None,
                 kept: Optional[Kept] = None, old: Optional[List[FileReport]] = None) -> List[FileReport]:
    project = TrackedProject(interfaces, waves)
    if cache_dir is not None and jobs > 1:
        # cache hits here: no worker pool to start for files the cache answers (a warm run)
        hits = [cached_report(p, options, cache_dir, "", want_interface, False, project) for p in paths]
        misses = [p for p, h in zip(paths, hits) if h is None]
        if len(misses) < len(paths):
            done = iter(_recheck_some(misses, interfaces, digest, options, jobs, want_interface, cache_dir, project)
                        if misses else ())
            return [h if h is not None else next(done) for h in hits]
    return _recheck_some(paths, interfaces, digest, options, jobs, want_interface, cache_dir, project, kept, old)


def _recheck_some(paths: List[str], interfaces: Dict[str, dict], digest: str, options: Options, jobs: int,
                  want_interface: bool, cache_dir: Optional[str],
                  project: Optional[TrackedProject] = None, kept: Optional[Kept] = None,
                  old: Optional[List[FileReport]] = None) -> List[FileReport]:
    n = len(paths)
    if pooled(n, jobs):
        return _pool_map(jobs, _recheck, paths, options, [want_interface] * n, [cache_dir] * n, most=4,
                         initializer=_init_worker, initargs=(interfaces, digest), on_crash=crashed)
    _init_worker(interfaces, digest, project)
    if project is None or kept is None or old is None or not want_interface:
        return [_recheck(p, options, want_interface, cache_dir, kept=kept) for p in paths]
    out = []
    for p, was in zip(paths, old):
        # the cache first (a warm run), then the first check's findings where no answer changed
        got = cached_report(p, options, cache_dir, "", True, False, project) if cache_dir is not None else None
        if got is None:
            got = reuse(p, was, project, options, kept, cache_dir)
        out.append(got if got is not None else _recheck(p, options, True, cache_dir, kept=kept))
    return out


def project_pass(reports: List[FileReport], options: Options, jobs: int,
                 cache_dir: Optional[str] = None, touched: Optional[Set[str]] = None,
                 waves: Optional[Waves] = None, kept: Optional[Kept] = None) -> List[FileReport]:
    """Check again, with every file's interface at hand, the files whose answers depend on others.

    First the files whose functions take parameters only other files pass: their interfaces are
    extracted again with those values (``helper(x)`` returns a tensor when callers pass tensors).
    Then every file that met a reference the project can answer. ``touched`` collects the cache
    keys of every report read or checked here (what the next run reads: ``cache_prune``);
    ``waves``: what ``first_pass``'s projects placed, reused where it still holds; ``kept``: what
    ``first_pass`` kept (trees, what each check read: ``second_pass``).
    """
    if touched is not None:
        touched.update(r.cache_key for r in reports if r.cache_key is not None)
    interfaces = {}
    for r in reports:
        if r.interface is not None:
            interfaces.setdefault(r.interface["module"], r.interface)
    project = TrackedProject(interfaces, waves)  # answers as a ``Project``; shares what the waves placed
    usable = [i for i, r in enumerate(reports) if r.error is None and r.summary is not None]
    feeds = lambda key: (  # noqa: E731
        project.passes_informative(key[len(HOST_EVIDENCE):], _host_tensor) if key.startswith(HOST_EVIDENCE)
        else project.passes_informative(key, lambda v: _informative(v, project)))
    callee = [i for i in usable if any(feeds(k) for k in reports[i].open_params)]
    if callee:
        reports = _run_again(reports, callee, interfaces, options, jobs, True, cache_dir, touched, waves, kept)
        for i in callee:
            if reports[i].interface is not None:
                interfaces[reports[i].interface["module"]] = reports[i].interface
        project = TrackedProject(interfaces, waves)
    todo = [i for i in usable if _answers_changed(reports[i], project)]
    if not todo:
        return reports
    return _run_again(reports, todo, interfaces, options, jobs, False, cache_dir, touched, waves, kept)


def _answers_changed(report: FileReport, project: Project) -> bool:
    """The whole project answers some reference the file's rules met differently, and usefully:
    a reference met without a project and now informative, or one the growing project answered
    (``first_pass``) that the whole one answers otherwise."""
    for ref in report.refs:
        new = project.resolve(ref)
        old = report.ref_values.get(ref)
        if old is None:
            if _informative(new, project):
                return True
        elif new != old and (_informative(new, project) or _informative(old, project)):
            return True
    return False


def _host_tensor(v: Value) -> bool:
    return v.kind == TENSOR and v.device == CPU and not v.assumed


def _informative(v: Value, project: Optional[Project] = None) -> bool:
    """A resolved value that can change what a rule decides: tensors (and what holds them),
    modules, objects whose class holds such values, shapes, arrays, devices. A Python number,
    string or None where inference said "unknown" changes no finding (no rule reports on those),
    nor does a logger or a config object (checking those files again cost most of the project pass)."""
    if v.kind == OBJECT and project is not None:
        return project.object_informative(v.cls, lambda x: _informative(x, project))
    if v.kind in (TENSOR, TENSOR_SEQ, MODULE, OBJECT, SIZE, NDARRAY, DEVICE, BATCH):
        return True
    if v.kind == STR and v.device is not None:
        return True  # "cpu" / "cuda" passed as a device decides where tensors made with it live
    if v.kind in (LIST, TUPLE, DICT):
        # a dict of named values (`{"loss": mean.compute()}`) by what they hold
        return bool(v.elts) or v.item is not None or any(_informative(x, project) for _k, x in v.keys)
    return False
