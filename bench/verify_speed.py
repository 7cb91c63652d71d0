"""Whole-command speed of ``--verify`` (issue 19): ms per finding on >= 200 findings of real code.

    python3 bench/verify_speed.py [PATH...]     (default: torchvision's detection, ops, transforms,
                                                utils.py, optical_flow, video and segmentation)

Runs ``python -m torchsync_lint --isolated --verify --format json PATHS`` as a user would (linting,
extraction, the child processes: everything), and prints wall seconds, findings, ms per finding,
statuses, input provenance and the children's own time per finding.
"""

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


def main():
    paths = sys.argv[1:] or default_paths()
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--verify", "--verify-timeout", "30",
           "--format", "json"] + paths
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    findings = json.loads(proc.stdout)
    v = [f["verify"] for f in findings]
    c = collections.Counter(x["status"] for x in v)
    inputs = collections.Counter(x.get("inputs") for x in v)
    secs = [x["seconds"] for x in v if x.get("seconds") is not None]
    print(f"verify speed: {len(findings)} findings, {wall:.1f} s wall, {1000 * wall / max(len(findings), 1):.1f} ms "
          f"per finding; statuses {dict(c)}; inputs {dict(inputs)}")
    if secs:
        print(f"  child time per finding: median {1000 * statistics.median(secs):.0f} ms, mean "
              f"{1000 * statistics.mean(secs):.0f} ms, sum {sum(secs):.1f} s")
    for line in proc.stderr.strip().splitlines()[-4:]:
        print("  " + line[:300])


if __name__ == "__main__":
    main()
