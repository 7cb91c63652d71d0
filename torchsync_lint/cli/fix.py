"""The ``--fix`` / ``--diff`` command: apply what the findings' fixes describe (``adopt.fixes``)
to the files and write them, or print the diff."""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import Dict, List, Optional

from torchsync_lint.adopt.fixes import FileFix, fix_file, summary, unified_diff, wanted


def run(args, config, result, err) -> Optional[int]:
    """The CLI's ``--fix`` / ``--diff`` on what ``result`` found. ``--diff`` prints the diff and
    gives the exit code (1 when it is not empty); ``--fix`` writes the files and gives None (the
    caller lints again and reports what is left) or 2 when a file could not be fixed."""
    unsafe = bool(getattr(args, "unsafe_fixes", False))
    by_path: Dict[str, list] = {}
    hidden: Counter = Counter()
    for f in result.findings:
        if wanted(f.fix, unsafe):
            by_path.setdefault(f.path, []).append(f)
        elif f.fix is not None:
            hidden[f.code] += 1
    counts: Counter = Counter()
    failed = False
    changed: List[FileFix] = []
    for path in sorted(by_path):
        if not os.path.isfile(path):
            continue  # stdin ("-"): nothing to write back
        fixed = fix_file(path, by_path[path], config, unsafe)
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
        return 2 if failed or result.errors else (1 if changed else 0)
    for fixed in changed:
        try:
            data = fixed.after.encode(fixed.encoding)
            with open(fixed.path, "wb") as fh:
                fh.write(data)
        except (OSError, UnicodeError) as exc:
            err(f"{fixed.path}: error: cannot write the fixes: {exc}")
            counts -= fixed.counts
            failed = True
    err(summary(counts, hidden, dry_run=False))
    return 2 if failed else None
