"""The project pass: every file's interface at hand, check again the files whose findings depend
on other files (``inference.project``), and keep interfaces in the cache for the flake8 plugin
(``inference.ondemand``).

Cold run: every file is checked on its own first (``engine.check_file``: findings, interface,
the references its rules met). Then the files whose functions take parameters only other files
pass get their interfaces again with those values, and every file that met a reference the
project can answer is checked again with the project. Results of both passes are cached by the
file's bytes and a digest of all interfaces, so an unchanged tree is answered from the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Dict, List, Optional, Tuple

from torchsync_lint.cache import ReportCache
from torchsync_lint.cache import key as cache_key
from torchsync_lint.engine import FileReport, Options, check_file, decode, interface_only, module_name_for
from torchsync_lint.inference.project import Project
from torchsync_lint.inference.values import (
    DEVICE,
    DICT,
    LIST,
    MODULE,
    NDARRAY,
    OBJECT,
    SIZE,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    Value,
)


def _interface_key(data: bytes, path: str, module: str) -> str:
    path = os.path.abspath(path)  # the CLI gets paths as typed, the flake8 plugin absolute ones
    return cache_key(data, path, module, "interface")


def interface_cache_get(path: str, module: str, cache_dir: str) -> Tuple[bool, Optional[dict]]:
    """(found, interface) for a file whose bytes have not changed since it was cached; a file
    with nothing to tell (empty, no definitions) is found with interface None."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return False, None
    got = ReportCache(cache_dir).get(_interface_key(data, path, module))
    return (True, got.get("interface")) if got is not None else (False, None)


def interface_for_file(path: str, module: str, cache_dir: Optional[str]) -> Optional[dict]:
    """Index one file for its interface only (no rules), and cache it."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        source = decode(data, path)
    except (OSError, ValueError):
        return None
    report = FileReport(path)
    try:
        interface_only(source, path, module, report)
    except RecursionError:
        return None
    if report.interface is not None and cache_dir is not None:
        ReportCache(cache_dir).put(_interface_key(data, path, module), {"interface": report.interface})
    return report.interface


def store_interfaces(reports: List[FileReport], cache_dir: str) -> None:
    """What the flake8 plugin reads for the files it does not see (``inference.ondemand``)."""
    store = ReportCache(cache_dir)
    for r in reports:
        if r.error is not None:
            continue
        try:
            with open(r.path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        module = r.interface["module"] if r.interface is not None else module_name_for(r.path)[0]
        k = _interface_key(data, r.path, module)
        if store.get(k) != {"interface": r.interface}:
            store.put(k, {"interface": r.interface})


# -- the second pass: files that asked other files something they can answer ----------------------
_WORKER_PROJECT: Optional[Tuple[Project, str]] = None


def _init_worker(interfaces: Dict[str, dict]) -> None:
    global _WORKER_PROJECT
    _WORKER_PROJECT = (Project(interfaces), project_digest(interfaces))


def project_digest(interfaces: Dict[str, dict]) -> str:
    """Changes whenever any file's interface does: the key of every result that used the project."""
    h = hashlib.sha256()
    for name in sorted(interfaces):
        h.update(json.dumps(interfaces[name], sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


def _recheck(path: str, options: Options, want_interface: bool = False, cache_dir: Optional[str] = None) -> FileReport:
    project, digest = _WORKER_PROJECT
    return check_file(path, options, cache_dir, project, want_interface, digest)


def _run_again(reports: List[FileReport], todo: List[int], interfaces: Dict[str, dict], options: Options,
               jobs: int, want_interface: bool, cache_dir: Optional[str]) -> List[FileReport]:
    paths = [reports[i].path for i in todo]
    n = len(paths)
    if jobs > 1 and n >= 16:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(interfaces,)) as pool:
            again = list(pool.map(_recheck, paths, [options] * n, [want_interface] * n, [cache_dir] * n,
                                  chunksize=4))
    else:
        _init_worker(interfaces)
        again = [_recheck(p, options, want_interface, cache_dir) for p in paths]
    out = list(reports)
    for i, r in zip(todo, again):
        if r.error is None:
            if not want_interface:
                r.interface = reports[i].interface
            r.refs, r.open_params = reports[i].refs, reports[i].open_params
            out[i] = r
    return out


def project_pass(reports: List[FileReport], options: Options, jobs: int,
                 cache_dir: Optional[str] = None) -> List[FileReport]:
    """Check again, with every file's interface at hand, the files whose answers depend on others.

    First the files whose functions take parameters only other files pass: their interfaces are
    extracted again with those values (``helper(x)`` returns a tensor when callers pass tensors).
    Then every file that met a reference the project can answer.
    """
    interfaces = {}
    for r in reports:
        if r.interface is not None:
            interfaces.setdefault(r.interface["module"], r.interface)
    project = Project(interfaces)
    usable = [i for i, r in enumerate(reports) if r.error is None and r.summary is not None]
    callee = [i for i in usable if any(project.has_callers(k) for k in reports[i].open_params)]
    if callee:
        reports = _run_again(reports, callee, interfaces, options, jobs, True, cache_dir)
        for i in callee:
            if reports[i].interface is not None:
                interfaces[reports[i].interface["module"]] = reports[i].interface
        project = Project(interfaces)
    todo = [i for i in usable if any(_informative(project.resolve(ref)) for ref in reports[i].refs)]
    if not todo:
        return reports
    return _run_again(reports, todo, interfaces, options, jobs, False, cache_dir)


def _informative(v: Value) -> bool:
    """A resolved value that can change what a rule decides: tensors (and what holds them),
    modules and objects (their methods), shapes, arrays, devices. A Python number, string or None
    where inference said "unknown" changes no finding (no rule reports on those)."""
    if v.kind in (TENSOR, TENSOR_SEQ, MODULE, OBJECT, SIZE, NDARRAY, DEVICE):
        return True
    if v.kind in (LIST, TUPLE, DICT):
        return bool(v.elts) or v.item is not None
    return False
