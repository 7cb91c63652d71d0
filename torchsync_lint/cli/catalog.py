"""``torchsync-lint catalog --module mylib.ops [--out FILE]``: measure your own library on your GPU.

Runs the sweep (``catalog.sweep``: child processes that import torch and your module) over the
public callables of each module, writes the entries as a catalog JSON file you can commit, and
prints the ``extra-sync-calls`` line for your pyproject.toml with the callables that synced.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import List, Optional


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torchsync-lint catalog",
                                description="Measure which callables of a module make the host wait for the GPU.")
    p.add_argument("--module", action="append", required=True, metavar="MODULE",
                   help="module whose public callables are swept (repeatable), e.g. mylib.ops")
    p.add_argument("--out", metavar="FILE", help="write the entries here (JSON; default: stdout)")
    p.add_argument("--device", default="cuda", help="device to run on (default: cuda; cpu only checks that calls run)")
    p.add_argument("--yes", action="store_true",
                   help="go ahead: import the modules and call every public callable with made-up arguments")
    return p


def warning(modules: List[str]) -> str:
    """What the sweep does to the user's code, said before it does it."""
    names = ", ".join(modules)
    return (f"torchsync-lint catalog: this imports {names} (running its import-time code) and calls every\n"
            "public callable in it with synthesised arguments, in child processes on this machine: a\n"
            "callable that writes files, deletes things, sends requests or starts jobs will do so.\n"
            "Sweep only modules of pure tensor functions. Pass --yes to go ahead.")


def _error(message: str) -> int:
    print(f"torchsync-lint catalog: error: {message}", file=sys.stderr)
    return 2


def main(argv: Optional[List[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if not args.yes:
        print(warning(args.module), file=sys.stderr)
        return 2
    if importlib.util.find_spec("torch") is None:
        return _error("the catalog sweep needs torch: pip install 'torchsync-lint[verify]'")
    for name in args.module:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return _error(f"no module named {name!r}")
    from torchsync_lint.catalog import sweep

    modules = tuple((m, m) for m in args.module)
    entries, info = sweep.run_sweep(args.device, modules, log=lambda m: print(m, file=sys.stderr))
    data = {"format": 1, "environment": {**sweep.environment(args.device), **info}, "entries": sweep.summarise(entries)}
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            return _error(f"cannot write {args.out}: {exc.strerror}")
    else:
        sys.stdout.write(text)
    synced = sorted(q for q, e in data["entries"].items() if e["syncs"])
    tried = len(data["entries"])
    decided = sum(1 for e in data["entries"].values() if e["syncs"] is not None)
    print(f"{tried} callables tried, {decided} decided, {len(synced)} synced", file=sys.stderr)
    print("[tool.torchsync-lint]\nextra-sync-calls = " + json.dumps(synced), file=sys.stderr)
    return 0
