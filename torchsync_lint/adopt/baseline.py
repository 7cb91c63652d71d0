"""Stable fingerprints, and baselines: accept today's findings, fail on new ones.

A fingerprint hashes what identifies a finding across edits: the rule code, the path relative to the
project root, the reported code with whitespace and comments stripped, and its occurrence index among
identical ones in the file. Lines moving, code added elsewhere, or comments and formatting changing
around it keep it; a second copy of the same sync gets a new one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tokenize
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from torchsync_lint.finding import Finding

BASELINE_VERSION = 1
SKIP_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER}


class BaselineError(Exception):
    """A baseline file that cannot be read or written; one line naming the file."""


def normalise(code: str) -> str:
    """The tokens of ``code`` joined by single spaces: no comments, no layout."""
    try:
        toks = [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type not in SKIP_TOKENS]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        toks = code.split()  # a fragment that does not tokenize alone: whitespace only
        toks = [t for t in toks if not t.startswith("#")]
    return " ".join(toks)


def span_text(lines: Sequence[str], f: Finding) -> str:
    """The finding's reported code: line/col to end_line/end_col (1-based, end exclusive)."""
    if not lines or f.line < 1 or f.line > len(lines):
        return ""
    end_line = min(max(f.end_line, f.line), len(lines))
    chunk = lines[f.line - 1:end_line]
    if len(chunk) == 1:
        return chunk[0][f.col - 1:max(f.end_col - 1, f.col - 1)]
    chunk[-1] = chunk[-1][:max(f.end_col - 1, 0)]
    chunk[0] = chunk[0][f.col - 1:]
    return "".join(chunk)


def relative_path(path: str, root: str) -> str:
    if path in ("-", "<stdin>"):
        return path
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return rel.replace(os.sep, "/")


def assign(findings: Iterable[Finding], root: str, read_lines: Callable[[str], Optional[List[str]]]) -> None:
    """Set ``fingerprint`` on every finding. ``read_lines(path)`` gives a file's lines (None if unreadable)."""
    counts: Dict[Tuple[str, str, str], int] = {}
    cache: Dict[str, Optional[List[str]]] = {}
    for f in sorted(findings, key=Finding.sort_key):
        if f.path not in cache:
            cache[f.path] = read_lines(f.path)
        text = normalise(span_text(cache[f.path] or [], f)) or f.message
        rel = relative_path(f.path, root)
        key = (f.code, rel, text)
        occurrence = counts.get(key, 0)
        counts[key] = occurrence + 1
        digest = hashlib.sha256("\0".join((f.code, rel, text, str(occurrence))).encode("utf-8"))
        f.fingerprint = digest.hexdigest()[:20]


def write(path: str, findings: Sequence[Finding], root: str) -> int:
    entries = [{"fingerprint": f.fingerprint, "code": f.code, "path": relative_path(f.path, root),
                "line": f.line, "message": f.message} for f in sorted(findings, key=Finding.sort_key)]
    doc = {"tool": "torchsync-lint", "version": BASELINE_VERSION, "findings": entries}
    try:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(entries)


def load(path: str) -> Set[str]:
    """The fingerprints a baseline file accepts."""
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(f"{path}: not a baseline (invalid JSON: {exc})") from None
    except RecursionError:  # json's decoder recurses once per nested bracket
        raise BaselineError(f"{path}: not a baseline (JSON nested too deeply to read)") from None
    if not isinstance(doc, dict) or doc.get("tool") != "torchsync-lint" or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path}: not a torchsync-lint baseline (write one with --write-baseline)")
    if doc.get("version") != BASELINE_VERSION:
        raise BaselineError(f"{path}: baseline version {doc.get('version')!r}, expected {BASELINE_VERSION}; "
                            "write it again with --write-baseline")
    out = set()
    for i, entry in enumerate(doc["findings"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise BaselineError(f"{path}: findings[{i}] has no fingerprint")
        out.add(entry["fingerprint"])
    return out


def split(findings: Sequence[Finding], known: Set[str]) -> Tuple[List[Finding], List[Finding]]:
    """(new findings, findings the baseline accepts)."""
    new = [f for f in findings if f.fingerprint not in known]
    old = [f for f in findings if f.fingerprint in known]
    return new, old
