"""The console script's first line: ``--verify``'s snippet children start before the command's
own imports (``verify.early``), then the command runs (``command.main``) and uses them or
closes them."""

from __future__ import annotations

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    from torchsync_lint.verify.early import spawn

    args = sys.argv[1:] if argv is None else list(argv)
    early = spawn(args)
    try:
        from torchsync_lint.cli.command import main as command_main

        return command_main(argv, early)
    finally:
        for child in early:  # an early return (a usage error, --help) before the run took them
            child.close()
