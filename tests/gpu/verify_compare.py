"""Summarise two ``--verify --format json`` runs over the same code, one with a planted device-side
assert (tests/gpu/planted_assert.py) and one without:

    python tests/gpu/verify_compare.py CLEAN.json PLANTED.json [CLEAN_WALL_S PLANTED_WALL_S]

Per-finding time (median and total of the child's seconds per finding), the share of definite
verdicts, and every finding whose verdict differs between the runs (the planted one aside).
"""

import collections
import json
import statistics
import sys


def load(path):
    with open(path) as fh:
        return json.load(fh)


def key(f):
    return (f["path"], f["line"], f["col"], f["code"])


def describe(name, findings, wall=None):
    st = collections.Counter(f["verify"]["status"] for f in findings)
    secs = [f["verify"].get("seconds") for f in findings if f["verify"].get("seconds") is not None]
    definite = st["confirmed"] + st["refuted"]
    line = (f"{name}: {len(findings)} findings, {dict(st)}, definite {definite}/{len(findings)} "
            f"({100.0 * definite / max(len(findings), 1):.1f}%)")
    if secs:
        line += (f"; per finding in the child: median {statistics.median(secs) * 1000:.1f} ms, "
                 f"p90 {sorted(secs)[int(0.9 * (len(secs) - 1))] * 1000:.1f} ms, sum {sum(secs):.1f} s")
    if wall:
        line += f"; wall {float(wall):.1f} s for the whole run ({float(wall) / max(len(findings), 1) * 1000:.0f} ms/finding)"
    return line


def main(argv):
    clean, planted = load(argv[0]), load(argv[1])
    walls = argv[2:4] + [None, None]
    print(describe("clean", clean, walls[0]))
    print(describe("planted", planted, walls[1]))
    planted_only = [f for f in planted if "planted_assert" in f["path"]]
    for f in planted_only:
        print(f"planted finding: {f['path']}:{f['line']} {f['code']} -> {f['verify']['status']}: "
              f"{f['verify'].get('reason', '')[:200]}")
    before = {key(f): f["verify"] for f in clean}
    changed = []
    for f in planted:
        if "planted_assert" in f["path"]:
            continue
        a = before.get(key(f))
        if a is None:
            changed.append(f"only in the planted run: {key(f)}")
        elif a["status"] != f["verify"]["status"]:
            changed.append(f"{f['path']}:{f['line']} {f['code']}: {a['status']} -> {f['verify']['status']} "
                           f"({f['verify'].get('reason', '')[:160]})")
    cuda_reasons = [f for f in planted if "planted_assert" not in f["path"]
                    and "CUDA" in (f["verify"].get("reason") or "")]
    print(f"verdicts changed by the planted assert: {len(changed)}; other findings whose reason mentions CUDA: "
          f"{len(cuda_reasons)}")
    for c in changed:
        print("  " + c)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
