#!/usr/bin/env python3
"""Make a release in one command: ``python scripts/release.py 0.2.0``.

1. checks: a clean git tree, a version (X.Y.Z, optionally aN/bN/rcN) above the current one, no tag
   ``vX.Y.Z`` yet, and something under ``## Unreleased`` in docs/changelog.md;
2. writes the version (``torchsync_lint/__init__.py``, the only place it lives), turns the
   changelog's ``## Unreleased`` into ``## X.Y.Z (date)`` (a fresh empty ``## Unreleased`` above),
   and points the pre-commit snippets (README.md, docs/ci.md) at the new tag;
3. builds the sdist and wheel into ``dist/`` (``python -m build``) and runs ``twine check`` on them;
   if either fails, the files are put back and nothing is committed;
4. commits "Release X.Y.Z" and tags ``vX.Y.Z`` (annotated).

Publishing stays a separate, deliberate step (printed at the end): ``git push --follow-tags`` and
``twine upload dist/...``, or ``--upload`` to run ``twine upload`` here. Needs the ``release``
extra (build, twine). ``--no-isolation`` builds with the installed setuptools (offline machines, tests).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:(a|b|rc)(\d+))?$")
INIT = Path("torchsync_lint/__init__.py")
CHANGELOG = Path("docs/changelog.md")
SNIPPETS = (Path("README.md"), Path("docs/ci.md"))
# the rev: line of a pre-commit snippet that names this repository
SNIPPET_REV = re.compile(r"(- repo: https://github\.com/torchsync-lint/torchsync-lint\n\s+rev: )([^\n]*)")


class ReleaseError(Exception):
    pass


def _key(version: str) -> Tuple:
    m = VERSION.match(version)
    if not m:
        raise ReleaseError(f"{version!r} is not a version like 1.2.3 or 1.2.3rc1")
    major, minor, patch, pre, n = m.groups()
    return int(major), int(minor), int(patch), {"a": 0, "b": 1, "rc": 2, None: 3}[pre], int(n or 0)


def git(*args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout.strip()


def current_version() -> str:
    m = re.search(r'^__version__ = "([^"]+)"$', INIT.read_text(encoding="utf-8"), re.M)
    if not m:
        raise ReleaseError(f"{INIT}: no __version__ line")
    return m.group(1)


def bump_changelog(text: str, version: str, date: str) -> str:
    head = "## Unreleased\n"
    at = text.find(head)
    if at < 0:
        raise ReleaseError(f"{CHANGELOG}: no '## Unreleased' section")
    rest = text[at + len(head):]
    nxt = re.search(r"^## ", rest, re.M)
    body = rest[:nxt.start()] if nxt else rest
    if not body.strip():
        raise ReleaseError(f"{CHANGELOG}: nothing under '## Unreleased' to release")
    return text[:at] + f"## Unreleased\n\n## {version} ({date})\n" + rest


def check(version: str) -> str:
    if git("status", "--porcelain"):
        raise ReleaseError("the working tree has changes: commit or stash them first")
    old = current_version()
    if _key(version) <= _key(old):
        raise ReleaseError(f"{version} is not above the current version {old}")
    if git("tag", "--list", f"v{version}"):
        raise ReleaseError(f"the tag v{version} exists already")
    bump_changelog(CHANGELOG.read_text(encoding="utf-8"), version, "0000-00-00")
    return old


def write_files(version: str, old: str, date: str) -> List[Path]:
    INIT.write_text(INIT.read_text(encoding="utf-8").replace(f'__version__ = "{old}"', f'__version__ = "{version}"'),
                    encoding="utf-8")
    CHANGELOG.write_text(bump_changelog(CHANGELOG.read_text(encoding="utf-8"), version, date), encoding="utf-8")
    changed = [INIT, CHANGELOG]
    for path in SNIPPETS:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            new = SNIPPET_REV.sub(lambda m: m.group(1) + f"v{version}", text)
            if new != text:
                path.write_text(new, encoding="utf-8")
                changed.append(path)
    return changed


def run(cmd: List[str]) -> None:
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd)
    if proc.returncode != 0:
        raise ReleaseError(f"{' '.join(cmd[:3])} failed (exit {proc.returncode})")


def build(version: str, isolation: bool) -> List[str]:
    dist = "dist"
    for old in glob.glob(os.path.join(dist, f"torchsync_lint-{version}*")):
        os.remove(old)
    run([sys.executable, "-m", "build", "--outdir", dist] + ([] if isolation else ["--no-isolation"]))
    files = sorted(glob.glob(os.path.join(dist, f"torchsync_lint-{version}*")))
    if not any(f.endswith(".whl") for f in files) or not any(f.endswith(".tar.gz") for f in files):
        raise ReleaseError(f"the build left no wheel and sdist for {version} in {dist}/: {files}")
    run([sys.executable, "-m", "twine", "check", "--strict", *files])
    return files


def release(version: str, isolation: bool = True, upload: bool = False, date: str = "") -> List[str]:
    old = check(version)
    date = date or datetime.date.today().isoformat()
    changed = write_files(version, old, date)
    try:
        files = build(version, isolation)
    except BaseException:
        git("checkout", "--", *map(str, changed))  # nothing half-done is left behind
        raise
    git("add", *map(str, changed))
    git("-c", "commit.gpgsign=false", "commit", "-q", "-m", f"Release {version}")
    git("-c", "tag.gpgsign=false", "tag", "-a", f"v{version}", "-m", f"torchsync-lint {version}")
    if upload:
        run([sys.executable, "-m", "twine", "upload", *files])
    return files


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="scripts/release.py", description="Version, changelog, tag, build, twine check.")
    p.add_argument("version", help="the new version, e.g. 0.2.0")
    p.add_argument("--no-isolation", action="store_true", help="build with the installed setuptools (offline)")
    p.add_argument("--upload", action="store_true", help="also run `twine upload` on the built files")
    p.add_argument("--date", default="", help=argparse.SUPPRESS)  # tests: a fixed date
    args = p.parse_args(argv)
    os.chdir(Path(__file__).resolve().parent.parent)
    try:
        files = release(args.version, isolation=not args.no_isolation, upload=args.upload, date=args.date)
    except ReleaseError as exc:
        print(f"release: error: {exc}", file=sys.stderr)
        return 1
    print(f"released {args.version}: tag v{args.version}; built {', '.join(files)}")
    if not args.upload:
        print(f"publish: git push --follow-tags && twine upload {' '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
