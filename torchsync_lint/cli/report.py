"""What the command prints and how it exits: the report (stdout or ``--output-file``), file
errors (stderr), one-line errors, a stdout that cannot take the report, and the exit codes.
Shared by the lint command (``command``) and the fix command (``fix``)."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from typing import Optional

from torchsync_lint.cli.output import Extras, render, statistics
from torchsync_lint.finding import LintResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def error(message: str) -> int:
    print(f"torchsync-lint: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def report(args: argparse.Namespace, result: LintResult, extras: Optional[Extras] = None) -> int:
    """Print findings (stdout or --output-file) and file errors (stderr); the exit code."""
    for err in result.errors:
        print(str(err), file=sys.stderr)
    extras = extras or Extras()
    if getattr(args, "quiet", False):
        extras.summary = False
    out = (statistics(result.findings, args.format) if getattr(args, "statistics", False)
           else render(args.format, result.findings, result.errors, extras))
    if getattr(args, "output_file", None):
        try:
            with open(args.output_file, "w", encoding="utf-8") as fh:
                fh.write(out)
        except OSError as exc:
            return error(f"{args.output_file}: cannot write: {exc.strerror or exc}")
    else:
        try:
            write_stdout(out)
        except OSError as exc:
            return stdout_failed(exc)
    if result.errors:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()  # here, where a closed pipe or a full disk can be answered


def stdout_failed(exc: OSError) -> int:
    """stdout cannot take the report: a reader that went away (``| head``) ends the run quietly,
    exit 0, as other command-line tools do; anything else (a full disk) is one line, exit 2.
    Either way stdout is pointed at /dev/null, so that the interpreter's last flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        return EXIT_CLEAN
    return error(f"cannot write the report: {exc.strerror or exc}")


def on_fix(args: argparse.Namespace, applied: int, status: int) -> int:
    """``--exit-non-zero-on-fix``: a run that fixed something exits 1 at least."""
    if args.exit_non_zero_on_fix and applied and status == EXIT_CLEAN:
        return EXIT_FINDINGS
    return status
