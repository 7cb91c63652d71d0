"""Score the linter on the made-up libraries in ``bench/madeup/``: small packages written in the
shapes of public PyTorch code, each sync line marked ``# SYNC`` by hand before the linter ran.

    python bench/madeup_score.py [--src CHECKOUT] [--show] [DIR ...]

Each library folder is linted as its own project (``--include-cold``, no cache, no config); a
marked line is found when some finding sits on it, a finding on an unmarked line is listed as
unmarked (a false alarm, or a mark forgotten: read it). ``--src`` lints with another checkout's
package (``git archive REV | tar -x -C DIR``), for before/after on the same libraries.
These libraries are development material: the mechanisms were built against them, so their score
says what a mechanism covers, not what code nobody has seen gets.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARK = "# SYNC"


def marks(root: Path) -> set:
    out = set()
    for path in sorted(root.rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if MARK in line:
                out.add((path.relative_to(root).as_posix(), n))
    return out


def findings(root: Path, src: str | None) -> dict:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    proc = subprocess.run([sys.executable, "-m", "torchsync_lint", "--isolated", "--no-cache", "--include-cold",
                           "--format", "json", "--exit-zero", "."], cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{root}: linter failed\n{proc.stderr}")
    out: dict = {}
    for f in json.loads(proc.stdout):
        if f.get("type") == "finding":
            out.setdefault((os.path.normpath(f["path"]), f["line"]), []).append(f["code"])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="*", help="library folders (default: every folder of bench/madeup)")
    p.add_argument("--src", help="a checkout whose torchsync_lint package lints")
    p.add_argument("--show", action="store_true", help="list missed marks and unmarked findings")
    args = p.parse_args(argv)
    dirs = [Path(d) for d in args.dirs] or sorted(d for d in (HERE / "madeup").iterdir() if d.is_dir())
    total_hit = total_marks = total_unmarked = 0
    for root in dirs:
        want = marks(root)
        got = findings(root, args.src)
        hit = {m for m in want if m in got}
        unmarked = sorted(k for k in got if k not in want)
        total_hit += len(hit)
        total_marks += len(want)
        total_unmarked += len(unmarked)
        print(f"{root.name:16} {len(hit):3}/{len(want):<3} marks found, {len(unmarked)} unmarked findings")
        if args.show:
            for path, line in sorted(want - hit):
                print(f"    missed   {path}:{line}")
            for path, line in unmarked:
                print(f"    unmarked {path}:{line} {','.join(got[(path, line)])}")
    print(f"{'all':16} {total_hit:3}/{total_marks:<3} marks found, {total_unmarked} unmarked findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
