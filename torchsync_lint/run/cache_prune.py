"""Keep the cache bounded: remove what no run can read again, and say how big it is.

A cache entry is read again only by a run over the same bytes, options and linter code. Every
run over a project's folders lists the keys it read or wrote (the report of each check, each
interface) next to its project index (``project_index``, one per rule selection); ``prune``
keeps the entries some current index lists and removes the rest: reports of files since edited
or deleted, of earlier interfaces, of another version of the linter (whose indexes go too).
Runs over single files list nothing: what they wrote lives until the next run over folders.

    python -m torchsync_lint.run.cache_prune [--prune] [CACHE_DIR]   # size (and prune) a cache
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional, Set, Tuple

from torchsync_lint.config import CACHE_NAME
from torchsync_lint.run.cache import code_fingerprint
from torchsync_lint.run.project_index import INDEX_DIR


def size(cache_dir: str) -> Tuple[int, int]:
    """(entries, bytes) of a cache folder, the project indexes included."""
    entries = total = 0
    for folder, _dirs, files in os.walk(cache_dir):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
                entries += 1
            except OSError:
                pass
    return entries, total


def _live_keys(cache_dir: str, known: Optional[Tuple[str, List[str]]] = None) -> Set[str]:
    """The keys current indexes list; indexes of other linter code are removed. ``known``: an
    index file just written by this code (its name) and the keys it lists, not read back."""
    live: Set[str] = set()
    folder = os.path.join(cache_dir, INDEX_DIR)
    code = code_fingerprint()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return live
    for name in names:
        if name.startswith("select-") and name.endswith(".json"):  # which index some options read
            try:
                with open(os.path.join(folder, name), "rb") as fh:
                    stale = json.loads(fh.read())["data"].get("code") != code
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                stale = True
            if stale:
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass
            continue
        if not name.startswith("graph-") or not name.endswith(".json"):
            continue
        if known is not None and name == known[0]:
            live.update(known[1])
            continue
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read())["data"]
            current = data.get("code") == code
            keys = data.get("keys", []) if current else []
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            current, keys = False, []
        if not current:
            ident = name[len("graph-"):-len(".json")]
            for stale in (path, os.path.join(folder, f"index-{ident}.json"),
                          os.path.join(folder, f"index-{ident}-calls.json")):
                try:
                    os.unlink(stale)
                except OSError:
                    pass
        live.update(keys)
    return live


def prune(cache_dir: str, known: Optional[Tuple[str, List[str]]] = None) -> Tuple[int, int]:
    """Remove the entries no current index lists (and stray temporary files): (files, bytes).
    ``known``: as for ``_live_keys``."""
    live = _live_keys(cache_dir, known)
    removed = freed = 0
    try:
        folders = os.listdir(cache_dir)
    except OSError:
        return 0, 0
    for sub in folders:
        folder = os.path.join(cache_dir, sub)
        if sub == INDEX_DIR or len(sub) != 2 or not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            stem, ext = os.path.splitext(name)
            if ext == ".json" and stem in live:
                continue
            path = os.path.join(folder, name)
            try:
                n = os.path.getsize(path)
                os.unlink(path)
                removed += 1
                freed += n
            except OSError:
                pass
    return removed, freed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m torchsync_lint.run.cache_prune", description=__doc__.splitlines()[0])
    p.add_argument("cache_dir", nargs="?", default=CACHE_NAME)
    p.add_argument("--prune", action="store_true", help="remove what no current project index lists")
    args = p.parse_args(argv)
    if args.prune:
        removed, freed = prune(args.cache_dir)
        print(f"pruned {removed} files, {freed / 2**20:.1f} MiB")
    entries, total = size(args.cache_dir)
    print(f"{args.cache_dir}: {entries} files, {total / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
