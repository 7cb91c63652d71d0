"""Fetch the benchmark corpus: the .py files of pinned PyTorch-ecosystem wheels.

    python bench/corpus.py            # -> bench/corpus/<pkg>-<version>/...

Each wheel is downloaded once with ``pip download --no-deps --only-binary=:all:`` and only its
.py files are extracted. A package whose folder already exists is skipped (idempotent); a
version change makes a new folder. Exits 1 with a clear message when PyPI cannot be reached.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from typing import List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS_DIR = os.path.join(HERE, "corpus")

# Pinned: torchvision and transformers match the GPU machine; timm is the newest 1.0 release.
PACKAGES: Tuple[Tuple[str, str], ...] = (
    ("torchvision", "0.26.0"),
    ("timm", "1.0.31"),
    ("transformers", "5.17.0"),
)
DONE_MARK = ".complete"  # written last, so an interrupted extraction is redone


def package_dir(root: str, name: str, version: str) -> str:
    return os.path.join(root, f"{name}-{version}")


def download_wheel(name: str, version: str, dest: str) -> str:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-q", "-d", dest, f"{name}=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(
            f"could not download {name}=={version} (offline, or PyPI unreachable?):\n  " + "\n  ".join(tail)
        )
    wheels = [f for f in os.listdir(dest) if f.endswith(".whl")]
    if len(wheels) != 1:
        raise RuntimeError(f"expected one wheel for {name}=={version}, got {wheels}")
    return os.path.join(dest, wheels[0])


def extract_py(wheel: str, target: str) -> int:
    count = 0
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if not member.endswith(".py") or ".dist-info/" in member or member.startswith(("/", "..")):
                continue
            zf.extract(member, target)
            count += 1
    return count


def fetch(root: str = CORPUS_DIR, packages=PACKAGES) -> List[Tuple[str, int]]:
    """Make sure every pinned package is extracted under ``root``; return (folder, .py count)."""
    out = []
    os.makedirs(root, exist_ok=True)
    for name, version in packages:
        target = package_dir(root, name, version)
        if not os.path.isfile(os.path.join(target, DONE_MARK)):
            with tempfile.TemporaryDirectory() as tmp:
                wheel = download_wheel(name, version, tmp)
                extract_py(wheel, target)
            with open(os.path.join(target, DONE_MARK), "w") as fh:
                fh.write(f"{name}=={version}\n")
        count = sum(f.endswith(".py") for _, _, files in os.walk(target) for f in files)
        out.append((target, count))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=CORPUS_DIR, help="where to extract (default: bench/corpus)")
    args = p.parse_args(argv)
    try:
        got = fetch(args.root)
    except RuntimeError as exc:
        print(f"corpus: error: {exc}", file=sys.stderr)
        return 1
    for target, count in got:
        print(f"{os.path.relpath(target)}: {count} .py files")
    print(f"total: {sum(c for _, c in got)} .py files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
