"""The ``--add-noqa`` command: silence every finding in place with ``# noqa: CODE`` (``adopt.add_noqa``)."""

from __future__ import annotations

import io
import sys
import tokenize
from typing import Dict, List

from torchsync_lint.adopt.add_noqa import add_noqa
from torchsync_lint.check.noqa import META_RULES
from torchsync_lint.finding import LintResult


def write_noqa(result: LintResult) -> int:
    """``--add-noqa``: a ``# noqa: CODE`` for every finding (not for TSL901 itself); exit code."""
    meta = {r.code for r in META_RULES}
    for err in result.errors:
        print(str(err), file=sys.stderr)
    wanted: Dict[str, Dict[int, List[str]]] = {}
    for f in result.findings:
        if f.code not in meta:
            wanted.setdefault(f.path, {}).setdefault(f.line, []).append(f.code)
    written = files = 0
    for path, lines in sorted(wanted.items()):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            text = data.decode(encoding)
            new, n = add_noqa(text, lines)
            if n:
                with open(path, "wb") as fh:
                    fh.write(new.encode(encoding))
                written, files = written + n, files + 1
        except (OSError, SyntaxError, ValueError, LookupError) as exc:
            print(f"{path}: error: cannot add noqa comments: {exc}", file=sys.stderr)
            return 2
    print(f"torchsync-lint: added {written} noqa comment(s) to {files} file(s)", file=sys.stderr)
    return 2 if result.errors else 0
