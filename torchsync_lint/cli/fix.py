"""The ``--fix`` / ``--fix-only`` / ``--diff`` command: apply what the findings' fixes describe
(``adopt.fixes``, which computes every fix again from the text it rewrites) to the files and write
them, or print the diff (``run``). For stdin (``--stdin-filename NAME -``, as editors call it) the
buffer is fixed instead (``stdin_command``): the whole fixed text goes to stdout and the file NAME
on disk is never touched. The command imports this module only when it fixes (LibCST comes with it)."""

from __future__ import annotations

import difflib
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from torchsync_lint.adopt.baseline import BaselineError
from torchsync_lint.adopt.fixes import FileFix, fix_file, fix_source, summary, unified_diff, wanted
from torchsync_lint.check.lint_source import lint_source
from torchsync_lint.cli import lint as lint_command
from torchsync_lint.cli.output import render
from torchsync_lint.cli.report import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, error, on_fix, stdout_failed, write_stdout
from torchsync_lint.finding import LintResult
from torchsync_lint.run.ondemand import project_for
from torchsync_lint.run.settings import rule_info


@dataclass
class Outcome:
    """What a fix run did: an exit code when the command ends here (None: report what is left),
    and the fixes applied per file and code."""

    code: Optional[int]
    applied: Dict[str, Counter] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(sum(c.values()) for c in self.applied.values())


def _split(result, unsafe: bool):
    by_path: Dict[str, list] = {}
    hidden: Counter = Counter()
    for f in result.findings:
        if wanted(f.fix, unsafe):
            by_path.setdefault(f.path, []).append(f)
        elif f.fix is not None:
            hidden[f.code] += 1
    return by_path, hidden


def _project(path: str):
    """The project around a file, for fixes whose finding needs other files' values."""
    try:
        project = project_for(path)
    except (OSError, RecursionError):
        return None
    if project is not None:
        project.current = os.path.abspath(path)
    return project


def show_fixes(applied: Dict[str, Counter], err: Callable[[str], None]) -> None:
    """Ruff's ``--show-fixes`` list: per file, how many fixes of each code were applied."""
    total = sum(sum(c.values()) for c in applied.values())
    if not total:
        return
    names = {code: rule.name for code, rule in rule_info().items()}
    lines = [f"Fixed {total} finding{'s' if total != 1 else ''}:"]
    for path, counts in sorted(applied.items()):
        if counts:
            lines.append(f"- {path}:")
            lines.extend(f"    {n} \u00d7 {code} ({names.get(code, '?')})" for code, n in sorted(counts.items()))
    err("\n".join(lines))


def run(args, config, result, err) -> Outcome:
    """The CLI's ``--fix`` / ``--diff`` on what ``result`` found. ``--diff`` prints the diff and
    gives the exit code (1 when it is not empty); ``--fix`` writes the files and gives no code (the
    caller lints again and reports what is left), or 2 when a file could not be fixed."""
    unsafe = bool(getattr(args, "unsafe_fixes", False))
    by_path, hidden = _split(result, unsafe)
    counts: Counter = Counter()
    failed = False
    changed: List[FileFix] = []
    for path in sorted(by_path):
        if not os.path.isfile(path):
            continue
        fixed = fix_file(path, by_path[path], config, unsafe, _project(path))
        if fixed.error is not None:
            err(f"{path}: error: {fixed.error}")
            failed = True
        elif fixed.after != fixed.before:
            changed.append(fixed)
            counts += fixed.counts
    if args.diff:
        for fixed in changed:
            sys.stdout.write(unified_diff(fixed))
        err(summary(counts, hidden, dry_run=True))
        return Outcome(2 if failed or result.errors else (1 if changed else 0))
    applied: Dict[str, Counter] = {}
    for fixed in changed:
        try:
            data = fixed.after.encode(fixed.encoding)
            with open(fixed.path, "wb") as fh:
                fh.write(data)
            applied[fixed.path] = fixed.counts
        except (OSError, UnicodeError) as exc:
            err(f"{fixed.path}: error: cannot write the fixes: {exc}")
            counts -= fixed.counts
            failed = True
    if not args.quiet:
        err(summary(counts, hidden, dry_run=False))
    return Outcome(2 if failed else None, applied)


@dataclass
class StdinFix:
    """A fixed stdin buffer: the text to print, fixes per code, and an error (text unchanged)."""

    text: str
    counts: Counter
    error: Optional[str] = None


def fix_stdin(args, config, result, name: str, source: Optional[str], err) -> StdinFix:
    """Fix the buffer read from stdin (``source``; None when it could not be decoded)."""
    unsafe = bool(getattr(args, "unsafe_fixes", False))
    by_path, hidden = _split(result, unsafe)
    if source is None or result.errors:
        return StdinFix(source or "", Counter(), "the buffer could not be checked; it is given back unchanged")
    try:
        after, counts, error = fix_source(source, name, by_path.get(name, []), config, unsafe)
    except Exception as exc:  # a bug of ours must not lose the user's buffer
        after, counts, error = source, Counter(), f"internal error while fixing, please report: {exc}"
    if error is not None:
        err(f"{name}: error: {error}")
        return StdinFix(source, Counter(), error)
    if not args.quiet:
        err(summary(counts, hidden, dry_run=bool(args.diff)))
    return StdinFix(after, counts)


def stdin_diff(name: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=name, tofile=name))


def stdin_command(args, config, result, sources, known, err) -> int:
    """``--fix`` / ``--fix-only`` / ``--diff`` on the buffer read from stdin (Ruff's contract, which
    editors rely on): the whole fixed buffer on stdout (a diff with ``--diff``), what is left on
    stderr, the file of that name on disk never read or written. A buffer that cannot be fixed is
    given back unchanged, byte for byte, so an editor that replaces its text with stdout loses nothing."""
    name = args.stdin_filename or lint_command.STDIN
    source = sources.text.get(name)
    for e in result.errors:
        err(str(e))
    fixed = fix_stdin(args, config, result, name, source, err)
    try:
        if args.diff:
            write_stdout(stdin_diff(name, source or "", fixed.text))
        elif fixed.error is not None or source is None:
            sys.stdout.buffer.write(sources.raw.get(name, b""))
            sys.stdout.flush()
        else:
            write_stdout(fixed.text)
    except OSError as exc:
        return stdout_failed(exc)
    if fixed.error is not None or result.errors:
        return EXIT_ERROR
    applied = sum(fixed.counts.values())
    if args.show_fixes and not args.diff:
        show_fixes({name: fixed.counts}, err)
    if args.diff:
        return EXIT_FINDINGS if fixed.text != source else EXIT_CLEAN
    if args.fix_only:
        return on_fix(args, applied, EXIT_CLEAN)
    # what is left, on stderr (stdout holds the buffer)
    try:
        left = lint_source(fixed.text, name, config)
    except (SyntaxError, RecursionError):
        left = []
    rest = LintResult(findings=left, files_checked=1)
    sources.text[name] = fixed.text
    try:
        extras = lint_command.finish(args, config, rest, sources, known)
    except BaselineError as exc:
        return error(str(exc))
    extras.summary = False
    if rest.findings and not args.quiet:
        sys.stderr.write(render("text", rest.findings, [], extras))
    status = EXIT_FINDINGS if rest.findings and not args.exit_zero else EXIT_CLEAN
    return on_fix(args, applied, status)
