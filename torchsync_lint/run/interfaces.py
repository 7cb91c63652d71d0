"""Interfaces in the cache: each file's interface (``inference.interface``) stored under its bytes,
path and module, for the runs and one-file checks that need another file's answers without
checking it (``run.ondemand``, the project index); derived again, from the file alone, where the
cache has none.
"""

from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from torchsync_lint.check.report import FileReport
from torchsync_lint.check.source import decode, module_name_for
from torchsync_lint.run.cache import ReportCache
from torchsync_lint.run.cache import key as cache_key


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
    # the parser and the index load here, for the first file whose interface must be derived:
    # an answer from the cache needs neither (the flake8 plugin on an unchanged project)
    from torchsync_lint.check.file import interface_only

    report = FileReport(path)
    try:
        interface_only(source, path, module, report)
    except RecursionError:
        return None
    if report.interface is not None and cache_dir is not None:
        ReportCache(cache_dir).put(_interface_key(data, path, module), {"interface": report.interface})
    return report.interface


def store_interfaces(reports: List[FileReport], cache_dir: str) -> Dict[str, str]:
    """What the flake8 plugin reads for the files it does not see (``run.ondemand``); returns
    path -> the key each interface is stored under (for ``project_index``)."""
    store = ReportCache(cache_dir)
    keys: Dict[str, str] = {}
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
        keys[r.path] = k
    return keys


def interface_from_key(k: str, cache_dir: str) -> Tuple[bool, Optional[dict]]:
    """(found, interface) stored under ``k`` (a key ``store_interfaces`` returned)."""
    got = ReportCache(cache_dir).get(k)
    return (True, got.get("interface")) if got is not None else (False, None)
