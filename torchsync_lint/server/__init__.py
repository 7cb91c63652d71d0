"""``torchsync-lint server``: the language server (LSP over stdio) for editors.

Needs the ``server`` extra (``pip install "torchsync-lint[server]"``: pygls and lsprotocol); the
linter itself does not. ``server.linting`` is what it asks of the linter, ``server.lsp`` the protocol.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from torchsync_lint import __version__

MISSING = ("torchsync-lint: error: the language server needs pygls and lsprotocol: "
           "pip install \"torchsync-lint[server]\" (from a checkout: pip install \".[server]\")")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torchsync-lint server",
        description="Run the language server over stdio (diagnostics, quick fixes, hover) for editors.")
    p.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)")
    p.add_argument("--version", action="version", version=f"torchsync-lint {__version__}")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    try:
        build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        from torchsync_lint.server.lsp import serve  # pygls is an optional extra: import it only here
    except ImportError as exc:
        if getattr(exc, "name", "") and exc.name.split(".")[0] in ("pygls", "lsprotocol", "cattrs"):
            print(MISSING, file=sys.stderr)
            return 2
        raise
    return serve()
