"""Lint the whole corpus with the real CLI and fail on any crash.

    python bench/corpus.py && python bench/robustness.py [--corpus DIR] [--jobs N] [--include-cold]

Runs ``python -m torchsync_lint --isolated --format json`` with every rule selected, on all cores,
and prints files, findings per code and errors. Exits 1 when the run printed a traceback, when a
file hit an internal error (the engine turns a crash in one file into an "internal error"
FileError), or when any file error is not a genuine syntax error; each crashing file is then
checked again in this process so its traceback is shown.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

import linter_api  # noqa: E402
from torchsync_lint.config import Config  # noqa: E402
from torchsync_lint.rules.registry import all_rules  # noqa: E402

engine = linter_api.load()

ERROR_RE = re.compile(r"^(?P<path>.+?)(?::\d+(?::\d+)?)?: error: (?P<message>.*)$")


def show_traceback(path: str) -> None:
    """Check one file again without the engine's safety net, to print where it fails."""
    options = engine.Options(select=tuple(all_rules()))
    with open(path, "rb") as fh:
        source = engine.decode(fh.read(), path)
    try:
        engine.check_source(source, path, options)
        print(f"  {path}: no exception when checked alone")
    except Exception:
        print(f"  {path}:")
        traceback.print_exc(file=sys.stdout)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Lint the corpus with the CLI; fail on any crash.")
    p.add_argument("--corpus", default=os.path.join(HERE, "corpus"))
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--include-cold", action="store_true", help="also count findings in cold code")
    p.add_argument("--json-out", metavar="FILE", help="save the findings (JSON) here")
    args = p.parse_args(argv)
    if not os.path.isdir(args.corpus):
        print(f"robustness: no corpus at {args.corpus}; run `python bench/corpus.py` first", file=sys.stderr)
        return 1
    n_files = sum(1 for _ in engine.iter_python_files([args.corpus], Config(respect_gitignore=False)))
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-respect-gitignore", "--format", "json", "--exit-zero",
           "--select", ",".join(all_rules())]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    if args.include_cold:
        cmd.append("--include-cold")
    cmd.append(args.corpus)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    problems = []
    if proc.returncode not in (0, 2):
        problems.append(f"exit status {proc.returncode} (0 clean, 2 file errors)")
    if "Traceback (most recent call last)" in proc.stderr + proc.stdout:
        problems.append("a traceback was printed:\n" + proc.stderr[-3000:])
    try:
        findings = json.loads(proc.stdout)
    except json.JSONDecodeError:
        findings = []
        problems.append("stdout is not one JSON array")
    errors = [m.groupdict() for m in map(ERROR_RE.match, proc.stderr.splitlines()) if m]
    crashes = [e for e in errors if "internal error" in e["message"] or "recursion limit" in e["message"]]
    others = [e for e in errors if e not in crashes and not e["message"].startswith("syntax error")]
    if crashes:
        problems.append(f"{len(crashes)} file(s) crashed the linter")
    if others:
        problems.append(f"{len(others)} file error(s) that are not syntax errors")
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(findings, fh, indent=1)

    per_code = collections.Counter(f["code"] for f in findings)
    per_temp = collections.Counter(f.get("temperature", "?") for f in findings)
    print(f"corpus: {args.corpus}")
    print(f"files: {n_files}  wall: {wall:.1f}s  findings: {len(findings)}  errors: {len(errors)} "
          f"(syntax: {sum(e['message'].startswith('syntax error') for e in errors)}, crashes: {len(crashes)})")
    print("findings per code: " + ", ".join(f"{c} {n}" for c, n in sorted(per_code.items())))
    print("by temperature: " + ", ".join(f"{t} {n}" for t, n in sorted(per_temp.items())))
    for e in errors:
        print(f"  error: {e['path']}: {e['message']}")
    if crashes:
        print("tracebacks:")
        for e in crashes:
            show_traceback(e["path"])
    if problems:
        print("FAIL: " + "; ".join(problems))
        return 1
    print("OK: no crash, no traceback")
    return 0


if __name__ == "__main__":
    sys.exit(main())
