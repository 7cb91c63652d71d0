"""Runtime verification: run flagged code on a CUDA device and report what really synced.

The only part of torchsync-lint that uses torch, and only in a child process started for
``--verify`` (``verify/child.py``); this package's parent side imports no torch. See docs/verify.md.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Dict, List, Optional, Sequence, Tuple

EXIT_UNAVAILABLE = 2


def _options(args):
    from torchsync_lint.verify.cli_options import mode_of
    from torchsync_lint.verify.run import VerifyOptions

    return VerifyOptions(mode=mode_of(args), entries=list(args.verify_entry), fixes=args.verify_fixes,
                         timeout=args.verify_timeout, inputs=getattr(args, "verify_inputs", None))


def _packages(linted: List[str]) -> List[Tuple[str, str]]:
    """(folder, top-level package) of every linted file inside a package; a plain script is left
    out (importing it would run it)."""
    from torchsync_lint.check.source import module_name_for

    out: Dict[Tuple[str, str], None] = {}
    for path in linted:
        name, is_package = module_name_for(path)
        parts = name.split(".")
        if len(parts) < 2 and not is_package:
            continue
        root = os.path.abspath(path)
        for _ in range(len(parts) + (1 if is_package else 0)):
            root = os.path.dirname(root)
        out[(root, parts[0])] = None
    return list(out)


def prestart(args, linted: List[str], early: Optional[list] = None) -> list:
    """Before the lint: start ``--verify``'s snippet children, which import torch, initialise CUDA
    and import the linted packages while the lint runs (``cli_verify`` takes them). [] when the
    options are bad or entry mode is asked for; the children close themselves if no job comes.
    ``early``: children started at the command's first line (``verify.early``): those that fit are
    used first, the rest closed (the list is emptied)."""
    from torchsync_lint.verify import early as early_mod

    early = early if early is not None else []
    if args.verify_timeout <= 0 or args.verify_entry:
        early_mod.adopt(early, 0, "", {})
        return []
    from torchsync_lint.verify.run import prestart as start_children

    try:
        return start_children(_options(args), linted, _packages(linted), early)
    except OSError:  # the interpreter for the children cannot start: cli_verify says so later
        early_mod.adopt(early, 0, "", {})
        return []


def cli_verify(args, config, result, note: Callable[[str], None], linted: List[str],
               started: Sequence = ()) -> Optional[int]:
    """The CLI's ``--verify`` step: fill ``result.findings``' verify records; an exit code on failure.
    ``linted``: the files the run checked (the CLI selects them); ``started``: ``prestart``'s children."""
    from torchsync_lint.verify.run import VerifyUnavailable, run_verify

    if args.verify_timeout <= 0:
        note("torchsync-lint: error: --verify-timeout must be positive")
        return EXIT_UNAVAILABLE
    opts = _options(args)
    try:
        report = run_verify(result.findings, opts, linted, config.hot_functions, on_note=note, started=started,
                            interfaces=result.interfaces)
    except VerifyUnavailable as exc:
        print(f"torchsync-lint: error: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    result.findings = report.findings
    if report.device:
        note(f"verify: ran on {report.device} (torch {report.torch})")
    if report.unlocated:
        note(f"verify: {report.unlocated} sync(s) had no frame in user code (inside torch or the harness)")
    for ref, seen in report.entry_syncs.items():
        ms = f", {seen['call_ms']:.3f} ms per call" if seen.get("call_ms") is not None else ""
        raised = f"; the call raised {seen['error']}" if seen.get("error") else ""
        note(f"verify: entry {ref}: {seen['on_findings']} sync(s) per call on findings, {seen['unflagged']} on "
             f"unflagged lines, {seen['no_user_frame']} with no user frame{ms}{raised}")
    if report.entry_failures:
        return EXIT_UNAVAILABLE if len(report.entry_failures) == len(opts.entries) and not result.findings else None
    return None


def summary(findings) -> str:
    from torchsync_lint.verify.status import summary_line

    return summary_line([f.verify for f in findings]) + "\n"
