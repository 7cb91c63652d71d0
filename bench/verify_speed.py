"""Whole-command speed of ``--verify`` (issue 19): ms per finding on >= 200 findings of real code.

    python3 bench/verify_speed.py [--out FILE.json] [--compare OTHER.json] [PATH...]
                                 (default paths: torchvision's detection, ops, transforms, utils.py,
                                  optical_flow, video and segmentation)

Runs ``python -m torchsync_lint --isolated --no-cache --verify --format json PATHS`` as a user would
(linting, extraction, the child processes: everything, nothing cached from an earlier run;
``--warm-cache``: with the lint's cache of a run just before, as in a project linted already), and
prints wall seconds, findings, ms per finding, statuses, input provenance, the children's own time
per finding, and the verifier's own account of where the time went (``verify: time: ...``).
``--out`` keeps the json findings; ``--compare`` lists the findings whose verdict (status, syncs
per call, ops, inputs, guessed names) differs from an earlier run's json.
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time


def default_paths():
    import importlib.util

    tv = list(importlib.util.find_spec("torchvision").submodule_search_locations)[0]
    return [os.path.join(tv, p) for p in ("models/detection", "ops", "transforms", "utils.py", "models/optical_flow",
                                          "models/video", "models/segmentation")]


def verdict(f):
    v = f["verify"]
    return {k: v.get(k) for k in ("status", "syncs", "ops", "inputs", "guessed")}


def compare(findings, other_path):
    other = {(f["path"], f["line"], f["col"], f["code"]): verdict(f) for f in json.load(open(other_path))}
    mine = {(f["path"], f["line"], f["col"], f["code"]): verdict(f) for f in findings}
    same = sum(1 for k in mine if other.get(k) == mine[k])
    status_same = sum(1 for k in mine if k in other and other[k]["status"] == mine[k]["status"])
    print(f"  compared with {other_path}: {len(mine)} findings here, {len(other)} there; identical verdict "
          f"(status, syncs, ops, inputs, guessed) {same}, identical status {status_same}")
    for k in sorted(set(mine) | set(other)):
        if other.get(k) != mine.get(k):
            print(f"    differs {os.path.basename(k[0])}:{k[1]}:{k[2]} {k[3]}: before {other.get(k)} now {mine.get(k)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--compare")
    ap.add_argument("--warm-cache", action="store_true",
                    help="lint once first into a fresh cache, then time --verify with that cache (a project "
                         "linted before: the verifier's own part)")
    ap.add_argument("--args", default="", help="more options for the command, one string (e.g. '--jobs 8')")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    paths = args.paths or default_paths()
    cache = ["--no-cache"]
    if args.warm_cache:
        import tempfile

        cache = ["--cache-dir", tempfile.mkdtemp(prefix="tsl-speed-cache-")]
        t0 = time.time()
        subprocess.run([sys.executable, "-m", "torchsync_lint", "--isolated", *cache, "--exit-zero", "--format",
                        "json"] + paths, capture_output=True)
        print(f"  lint into a fresh cache first: {time.time() - t0:.1f} s")
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", *cache, "--verify", "--verify-timeout", "30",
           "--format", "json"] + args.args.split() + paths
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    findings = json.loads(proc.stdout)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(findings, fh)
    v = [f["verify"] for f in findings]
    c = collections.Counter(x["status"] for x in v)
    inputs = collections.Counter(x.get("inputs") for x in v)
    secs = [x["seconds"] for x in v if x.get("seconds") is not None]
    print(f"verify speed: {len(findings)} findings, {wall:.1f} s wall, {1000 * wall / max(len(findings), 1):.1f} ms "
          f"per finding; statuses {dict(c)}; inputs {dict(inputs)}")
    if secs:
        print(f"  child time per finding: median {1000 * statistics.median(secs):.0f} ms, mean "
              f"{1000 * statistics.mean(secs):.0f} ms, sum {sum(secs):.1f} s")
    lines = proc.stderr.strip().splitlines()
    for line in [ln for ln in lines if ln.startswith("verify: time")] + lines[-3:]:
        print("  " + line[:1600])
    if args.compare:
        compare(findings, args.compare)


if __name__ == "__main__":
    main()
