"""The project pass's check of a file whose parameters other files pass (``project_pass``), made
without the rule walk where the findings cannot change.

The project pass checks such a file again with the whole project for two things: its findings
and its interface extracted with what the project tells (``helper(x)`` returns what callers pass).
The rules of its first check (``first_pass``, with an import wave's project) read some entries of
other files' interfaces (``tracked_project``; kept by ``run.kept``). Where every entry is the same
data in the whole project, and every reference the check resolved resolves to the same value
(``Cls(...)`` of the file's own class included, which a growing project answers from the file
itself), the rules would take the same path again: the findings are those of the first check,
and only the interface is extracted (``check.file.project_interface``), from the kept tree where
there is one. With a cache, the report is stored as the full check would store it, with the
entries of the first check and of this one.

The `self.method(...)` dispatch to overrides makes most of these files: the base class and its
calls are in an earlier import wave, so the wave's project already told the override's check
what the whole one tells.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional

from torchsync_lint.check.file import project_interface
from torchsync_lint.check.report import FileReport, Options
from torchsync_lint.check.source import decode
from torchsync_lint.run.cache import ReportCache
from torchsync_lint.run.cached_check import key_for, store_report
from torchsync_lint.run.kept import Kept
from torchsync_lint.run.tracked_project import Dep, TrackedProject


def same_answers(old: FileReport, read: Dict[Dep, object], project: TrackedProject) -> bool:
    """Every entry the first check read is the same data in ``project``, and every reference it
    resolved (``old.ref_values``) resolves to the same value; ``Cls(...)`` of a class of the file,
    which a growing project does not hold yet, is the same instance."""
    for dep, was in read.items():
        if project.data(dep) != was:
            return False
    own = (old.interface or {}).get("classes", {})
    for ref, was in old.ref_values.items():
        if project.resolve(ref) != was:
            return False
        if ref[0] == "call" and ref[1] in own and project.instance(ref[1]) != was:
            return False
    return True


def reuse(path: str, old: FileReport, project: TrackedProject, options: Options, kept: Kept,
          cache_dir: Optional[str]) -> Optional[FileReport]:
    """The report ``check_file(path, options, cache_dir, project, want_interface=True)`` gives,
    made from ``old`` (the file's first check) and its interface extracted again; None where the
    findings may change (or nothing was recorded): then the file is checked again."""
    read = kept.entries(path)
    if read is None or old.error is not None or old.summary is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        source = decode(data, path)
    except (OSError, ValueError):
        return None
    project.begin()
    try:
        if not same_answers(old, read, project):
            return None
        interface = project_interface(source, path, options, project, kept)
    finally:
        deps = project.end()
    if interface is None:
        return None
    new = dataclasses.replace(old, interface=interface, cache_key=None)
    if cache_dir is not None:
        k = key_for(data, path, options, "", True, False, True)
        store_report(ReportCache(cache_dir), k, new, project, deps | set(read))
    return new
