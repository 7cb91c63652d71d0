"""What the user silenced: ``# noqa`` comments (``noqa.Suppressions``) and ``per-file-ignores``."""

from __future__ import annotations

import fnmatch
import os
from typing import Dict, List

from torchsync_lint.check.noqa import Suppressions
from torchsync_lint.config import Config
from torchsync_lint.finding import Finding


def per_file_codes(config: Config, path: str) -> List[str]:
    """Codes ``per-file-ignores`` turns off for ``path``: shell globs (``*`` also crosses ``/``)
    tried against the path relative to the configuration's folder, the path as given, and its name."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(config.root))
    out: List[str] = []
    for pattern, codes in config.per_file_ignores.items():
        if any(fnmatch.fnmatch(p, pattern) for p in (rel, path, os.path.basename(path))):
            out.extend(codes)
    return out


def suppress(findings: List[Finding], sources: Dict[str, Suppressions], config: Config) -> List[Finding]:
    kept = []
    for f in findings:
        sup = sources.get(f.path)
        if sup is not None and sup.suppressed(f.code, f.line):
            continue
        ignored = per_file_codes(config, f.path)
        if ignored and any(f.code.startswith(p) for p in ignored):
            continue
        kept.append(f)
    return kept
