"""What the user silenced: ``# noqa`` comments (``noqa.Suppressions``) and ``per-file-ignores``."""

from __future__ import annotations

from typing import Dict, List

from torchsync_lint.check import globs
from torchsync_lint.check.noqa import Suppressions
from torchsync_lint.config import Config
from torchsync_lint.finding import Finding


def per_file_codes(config: Config, path: str) -> List[str]:
    """Codes ``per-file-ignores`` turns off for ``path``: gitignore-style patterns (``globs``, the
    dialect of ``exclude``) matched against the path relative to the configuration's folder."""
    if not config.per_file_ignores:
        return []
    rel = globs.relative(path, config.root)
    out: List[str] = []
    for pattern, codes in config.per_file_ignores.items():
        if rel and globs.spec((pattern,)).match_file(rel):
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
