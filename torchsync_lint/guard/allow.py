"""``allow=[...]`` entries: rule codes (prefixes, as in ``--select``), qualified op names and
``file:line`` globs. Each entry is read once, into the kind it is."""

from __future__ import annotations

import fnmatch
import os
import re
from typing import Iterable, List, Tuple

from torchsync_lint.guard.events import SyncEvent

CODE = re.compile(r"^TSL\d*$")


class BadAllowEntry(ValueError):
    pass


def _kind(entry: str) -> str:
    if CODE.match(entry.upper()):
        return "code"
    if ":" in entry or entry.endswith(".py") or os.sep in entry or "/" in entry:
        return "location"
    return "op"


class Allow:
    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries: List[Tuple[str, str]] = []
        for entry in entries or ():
            if not isinstance(entry, str) or not entry.strip():
                raise BadAllowEntry(f"allow entries are strings (a rule code, an op name or a file:line glob), "
                                    f"got {entry!r}")
            entry = entry.strip()
            kind = _kind(entry)
            self.entries.append((kind, entry.upper() if kind == "code" else entry))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def matches(self, event: SyncEvent) -> bool:
        for kind, entry in self.entries:
            if kind == "code" and event.code.startswith(entry):
                return True
            if kind == "op" and event.op and (fnmatch.fnmatchcase(event.op, entry)
                                              or fnmatch.fnmatchcase(event.op.split(".")[-1], entry)
                                              or event.op.endswith("." + entry)):
                return True
            if kind == "location" and event.path and _location_matches(entry, event.path, event.line):
                return True
        return False


def _location_matches(pattern: str, path: str, line) -> bool:
    file_pat, sep, line_pat = pattern.rpartition(":")
    if not sep or not (line_pat == "*" or line_pat.isdigit() or any(c in line_pat for c in "*?[")):
        file_pat, line_pat = pattern, "*"  # "a/b.py" or "*.py": every line of the file
    if not fnmatch.fnmatchcase(str(line), line_pat):
        return False
    candidates = {path, os.path.basename(path)}
    try:
        candidates.add(os.path.relpath(path))
    except ValueError:
        pass
    if not os.path.isabs(file_pat) and not file_pat.startswith("*"):
        file_pat_any = "*/" + file_pat
    else:
        file_pat_any = file_pat
    return any(fnmatch.fnmatchcase(c, file_pat) or fnmatch.fnmatchcase(c, file_pat_any) for c in candidates)
