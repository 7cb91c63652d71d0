"""The rule code the static linter gives a line: each file is linted once (cached by path and
modification time), cold code included, since a sync that ran was real wherever it sits."""

from __future__ import annotations

import os
import threading
import time
from typing import Dict, List, Optional, Tuple

UNPREDICTED = "TSL900"

_lock = threading.Lock()
_cache: Dict[str, Tuple[float, Dict[int, List[Tuple[int, str]]]]] = {}


def _lint(path: str) -> Dict[int, List[Tuple[int, str]]]:
    from torchsync_lint.config import Config
    from torchsync_lint.check.lint_source import lint_source

    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    except (OSError, UnicodeDecodeError):
        return {}
    try:
        findings = lint_source(source, path, Config(include_cold=True))
    except Exception:  # the guard must never fail the user's run because the linter did
        return {}
    by_line: Dict[int, List[Tuple[int, str]]] = {}
    for f in findings:
        for ln in range(f.line, max(f.line, f.end_line) + 1):
            by_line.setdefault(ln, []).append((f.col, f.code))
    return by_line


RECHECK_S = 1.0  # a file's modification time is looked at again after this long (not per sync)
_checked: Dict[str, float] = {}


def codes_for(path: Optional[str], line: Optional[int]) -> List[str]:
    """The codes flagged on ``line`` of ``path`` (first by column), or [] if none. A sync site fires
    again and again: the file's modification time is read at most once a second (a stat per sync
    is a syscall, slow in sandboxes)."""
    if not path or not line:
        return []
    now = time.monotonic()
    got = _cache.get(path)
    if got is None or now - _checked.get(path, -1e9) > RECHECK_S:
        try:
            mtime = os.path.getmtime(path) if os.path.isfile(path) else None
        except OSError:
            mtime = None
        _checked[path] = now
        if mtime is None:
            return []
        if got is None or got[0] != mtime:
            got = (mtime, _lint(path))
            with _lock:
                _cache[path] = got
    return [code for _, code in sorted(got[1].get(line, []))]


def code_for(path: Optional[str], line: Optional[int], op: str = "") -> str:
    codes = codes_for(path, line)
    return codes[0] if codes else UNPREDICTED


def clear() -> None:
    with _lock:
        _cache.clear()
        _checked.clear()
