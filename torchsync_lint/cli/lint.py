"""The lint command's steps around a run (``run.tree``): stdin, unused ``# noqa`` codes (TSL901),
fingerprints, baselines, and the summary's counts."""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
from collections import Counter
from typing import Callable, Dict, List, Optional, Set, Tuple

from torchsync_lint.adopt import baseline
from torchsync_lint.check.lint_source import lint_source
from torchsync_lint.check.noqa import UNUSED_NOQA, Suppressions, unused_noqa
from torchsync_lint.check.source import decode
from torchsync_lint.check.suppress import per_file_codes
from torchsync_lint.cli.output import Extras
from torchsync_lint.config import Config
from torchsync_lint.finding import FileError, Finding, LintResult
from torchsync_lint.run.files import excluded, iter_python_files
from torchsync_lint.run.settings import code_enabled, rule_defaults
from torchsync_lint.run.tree import lint_paths

STDIN = "-"
ERROR_TEXT = re.compile(r"^(?P<path>.*?)(?::(?P<line>\d+))?(?::(?P<col>\d+))?: error: (?P<message>.*)$", re.S)


class UsageError(Exception):
    """Flags that do not go together; one line."""


class Sources:
    """Each file's text, read once (stdin's is given): for noqa, fingerprints and the full format."""

    def __init__(self) -> None:
        self.text: Dict[str, Optional[str]] = {}
        self.raw: Dict[str, bytes] = {}  # stdin's bytes, as read (given back when they cannot be fixed)

    def get(self, path: str) -> Optional[str]:
        if path not in self.text:
            try:
                with open(path, "rb") as fh:
                    self.text[path] = decode(fh.read(), path)
            except (OSError, ValueError):
                self.text[path] = None
        return self.text[path]

    def lines(self, path: str) -> Optional[List[str]]:
        text = self.get(path)
        return None if text is None else io.StringIO(text).readlines()


def _stdin_error(message: str, name: str) -> FileError:
    m = ERROR_TEXT.match(message)
    if m and m.group("path") == name:
        line = int(m.group("line")) if m.group("line") else None
        col = int(m.group("col")) if m.group("col") else None
        return FileError(name, m.group("message"), line, col)
    return FileError(name, message)


def lint(args: argparse.Namespace, config: Config, note: Callable[[str], None]) -> Tuple[LintResult, Sources]:
    """Lint the paths, or stdin for ``-`` (named by ``--stdin-filename``)."""
    sources = Sources()
    if STDIN not in args.paths:
        return lint_paths(args.paths, config, jobs=args.jobs, on_note=note, cache_dir=config.cache_path()), sources
    if args.paths != [STDIN]:
        raise UsageError("'-' (stdin) cannot be mixed with other paths")
    if args.add_noqa:
        raise UsageError("--add-noqa cannot write to stdin")
    name = args.stdin_filename or STDIN
    result = LintResult(files_checked=1)
    if args.stdin_filename and config.force_exclude and excluded(config, name, False):
        result.files_checked = 0  # pre-commit named an excluded file: nothing to say about it
        return result, sources
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
    sources.raw[name] = data
    try:
        text = decode(data, name)
    except ValueError as exc:
        result.errors.append(FileError(name, str(exc)))
        return result, sources
    sources.text[name] = text
    try:
        result.findings = lint_source(text, name, config)
    except SyntaxError as exc:
        result.errors.append(_stdin_error(str(exc), name))
    except RecursionError:
        result.errors.append(FileError(name, "too deeply nested to analyse (recursion limit)"))
    return result, sources


def _checked_files(args: argparse.Namespace, config: Config, result: LintResult, sources: Sources) -> List[str]:
    if STDIN in args.paths:
        return list(sources.text)
    broken = {e.path for e in result.errors}
    selected = getattr(result, "selected", None)  # what ``lint_paths`` walked: the tree is not walked twice
    if selected is None:
        selected = [p for p, _ in iter_python_files(args.paths, config)]
    return [p for p in selected if p not in broken and os.path.isfile(p)]


def _mentions_noqa_tsl(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            low = fh.read().lower()
    except OSError:
        return False
    return b"noqa" in low and b"tsl" in low


def unused_noqa_findings(args: argparse.Namespace, config: Config, result: LintResult, sources: Sources) -> List[Finding]:
    """TSL901 for every checked file with a ``# noqa: TSL...`` comment. Uses the engine's findings
    before noqa filtering when it gives them (``result.unsuppressed``); otherwise lints such a file
    again on its own with line comments off (cross-file hot paths are then not seen)."""
    known = list(rule_defaults())
    before = getattr(result, "unsuppressed", None)
    by_path: Dict[str, List[Finding]] = {}
    for f in before if before is not None else []:
        by_path.setdefault(f.path, []).append(f)
    out: List[Finding] = []
    for path in _checked_files(args, config, result, sources):
        if path not in sources.text and not _mentions_noqa_tsl(path):
            continue  # most files: bytes checked, never decoded
        text = sources.get(path)
        if not text or "noqa" not in text.lower() or "tsl" not in text.lower():
            continue
        if before is not None:
            here = by_path.get(path, [])
        else:
            try:
                here = lint_source(text, path, config, inline_noqa=False)
            except (SyntaxError, RecursionError):
                continue
        sup = Suppressions(text)
        ignored = per_file_codes(config, path)
        for f in unused_noqa(path, text, here, known, config.enabled):
            if f.code.startswith(tuple(ignored)) and ignored:
                continue
            if sup.file and any(UNUSED_NOQA.code.startswith(p) for p in sup.file):
                continue
            out.append(f)
    return out


def load_baseline(args: argparse.Namespace) -> Optional[Set[str]]:
    if args.baseline and args.write_baseline:
        raise baseline.BaselineError("--baseline and --write-baseline do not go together")
    return baseline.load(args.baseline) if args.baseline else None


def finish(args: argparse.Namespace, config: Config, result: LintResult, sources: Sources,
           known: Optional[Set[str]]) -> Extras:
    """After the run: TSL901, fingerprints, the baseline (written or applied); what the summary says."""
    if code_enabled(config, UNUSED_NOQA.code):
        result.findings = sorted(result.findings + unused_noqa_findings(args, config, result, sources),
                                 key=Finding.sort_key)
    baseline.assign(result.findings, config.root, sources.lines)
    extras = Extras(read_lines=sources.lines, color=_color(args))
    hidden = getattr(result, "hidden", None)
    if hidden:
        extras.hidden = Counter(getattr(f, "frequency", None) or getattr(f, "temperature", "other") for f in hidden)
    if args.write_baseline:
        n = baseline.write(args.write_baseline, result.findings, config.root)
        if not args.quiet:
            print(f"torchsync-lint: wrote {n} finding(s) to the baseline {args.write_baseline}", file=sys.stderr)
        known = {f.fingerprint for f in result.findings}
    if known is not None:
        result.findings, accepted = baseline.split(result.findings, known)
        extras.baseline = len(accepted)
    return extras


def _color(args: argparse.Namespace) -> bool:
    if args.format != "full" or args.output_file or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(sys.stdout, "isatty", lambda: False)())
