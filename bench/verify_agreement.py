"""Agreement of --verify with what real workloads did (issue 19's figure of merit), on a CUDA machine.

    python3 bench/verify_agreement.py --package pykeen --package deepxde --out OUTDIR [--deadline S]
                                      [--skip-plain]

Any package of bench/truth/corpus.toml with GPU truth (bench/data/<pkg>-<version>-syncs.json), installed
here; several ``--package`` are scored one by one and then together (default: sentence-transformers).

1. record inputs: the package's truth workloads (bench/truth/wl_*.py, the harness the GPU truth was
   recorded with) run once under the input recorder (torchsync_lint/guard/inputs.py), which keeps
   the arguments of every function holding a finding on its first entry;
2. verify the package's findings twice: with ``--inputs`` (real inputs first) and without;
3. score: for findings on statements the workloads ran (``executed`` in
   bench/data/<pkg>-<version>-syncs.json), each definite verdict (confirmed, not on guessed inputs,
   or refuted) agrees when it matches whether the workload synced there (an event on the statement's
   lines, or a sync inside a call it made: ``chain``).
"""

from __future__ import annotations

import argparse
import glob
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


def package_entry(name):
    sys.path.insert(0, os.path.join(HERE, "truth"))
    from record import load_corpus

    return next(p for p in load_corpus() if p["name"] == name)


def record_inputs(pkg, pkg_dirs, out_path, steps=1, deadline=600.0):
    import torch

    sys.path.insert(0, os.path.join(HERE, "truth"))
    from harness import run_all
    from torchsync_lint.guard.inputs import InputRecorder, targets_for

    from torchsync_lint.config import Config
    from torchsync_lint.run.tree import lint_paths

    # every function holding a finding of the project run (what --verify replays), cold code too
    targets = targets_for(pkg_dirs, lint_paths(list(pkg_dirs), Config(include_cold=True)).findings)

    class NoRec:  # the harness's recorder interface, recording nothing (inputs are what we want)
        active = False
        phase = ""

        def __getattr__(self, name):
            return lambda *a, **k: {"events": [], "executed": {}}

    wl = importlib.import_module(pkg["workloads"])
    rec = InputRecorder(targets)
    device = torch.device("cuda")
    rec.start()
    try:
        run_all(torch, NoRec(), wl.WORKLOADS, device, steps, deadline, [], lambda name, entry: None)
    finally:
        rec.stop()
    rec.save(out_path)
    return len(rec.records), sum(len(v) for v in targets.values())


def verify(pkg_dirs, out_json, inputs=None):
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--verify", "--verify-timeout", "30",
           "--format", "json"] + (["--inputs", inputs] if inputs else []) + list(pkg_dirs)
    t0 = time.time()
    with open(out_json, "w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    findings = json.load(open(out_json))
    return findings, wall, proc.stderr


def truth_index(data):
    executed, synced = set(), set()
    for model in data["models"].values():
        for f, lines in (model.get("executed") or {}).items():
            executed.update((f, ln) for ln in lines)
        for ev in model.get("events", []):
            if ev.get("phase") == "harness":
                continue
            synced.add((ev["file"], ev["line"]))
            for f, ln in ev.get("chain") or []:
                synced.add((f, ln))
    return executed, synced


def score(findings, site_root, executed, synced):
    from torchsync_lint.verify.status import definite

    rows = []
    for f in findings:
        v = f.get("verify") or {}
        rel = os.path.relpath(os.path.realpath(f["path"]), site_root)
        lines = range(f["line"], f["end_line"] + 1)
        if not any((rel, ln) in executed for ln in lines):
            continue
        did = any((rel, ln) in synced for ln in lines)
        rows.append({"where": f"{rel}:{f['line']}", "code": f["code"], "status": v.get("status"),
                     "inputs": v.get("inputs"), "definite": definite(v), "synced": did,
                     "agrees": (v.get("status") == "confirmed") == did if definite(v) else None,
                     "reason": v.get("reason")})
    d = [r for r in rows if r["definite"]]
    agree = sum(1 for r in d if r["agrees"])
    return rows, len(d), agree


def run_package(name, out_dir, skip_plain, deadline):
    """Record, verify (with and without --inputs) and score one package; its summary per run."""
    os.makedirs(out_dir, exist_ok=True)
    pkg = package_entry(name)
    dirs = [list(importlib.util.find_spec(m).submodule_search_locations)[0] for m in pkg["modules"]]
    site_root = os.path.dirname(os.path.realpath(dirs[0]))
    # every recording of the package (one per group of workloads recorded side by side)
    executed, synced = set(), set()
    for path in sorted(glob.glob(os.path.join(HERE, "data", f"{pkg['name']}-{pkg['version']}-syncs*.json"))):
        ran, did = truth_index(json.load(open(path)))
        executed |= ran
        synced |= did
    inputs = os.path.join(out_dir, "inputs.json")
    t0 = time.time()
    n_rec, n_lines = record_inputs(pkg, dirs, inputs, deadline=deadline)
    print(f"{pkg['name']}: recorded {n_rec} function entries ({n_lines} finding lines targeted) in "
          f"{time.time() - t0:.1f} s")
    runs = [("with --inputs", inputs)] + ([] if skip_plain else [("without --inputs", None)])
    summary = {}
    for label, inp in runs:
        out_json = os.path.join(out_dir, "verify_inputs.json" if inp else "verify_plain.json")
        findings, wall, err = verify(dirs, out_json, inp)
        rows, n_def, agree = score(findings, site_root, executed, synced)
        pct = 100.0 * agree / n_def if n_def else float("nan")
        by_inputs = {}
        for r in rows:
            if r["definite"]:
                by_inputs.setdefault(r["inputs"], [0, 0])
                by_inputs[r["inputs"]][0] += 1
                by_inputs[r["inputs"]][1] += bool(r["agrees"])
        status = {}
        for r in rows:
            key = f"{r['status']}{'' if r['definite'] or r['status'] != 'confirmed' else ' (guessed)'}"
            status[key] = status.get(key, 0) + 1
        print(f"{pkg['name']} {label}: {len(findings)} findings, {wall:.1f} s wall "
              f"({1000 * wall / max(len(findings), 1):.0f} ms/finding); {len(rows)} on statements the workloads ran "
              f"({status}), {n_def} definite, agreement {agree}/{n_def} = {pct:.1f}%; by inputs "
              f"[definite, agree] {by_inputs}")
        for r in rows:
            if r["definite"] and not r["agrees"]:
                print(f"  disagrees: {r['where']} {r['code']} {r['status']} ({r['inputs']}) synced={r['synced']} "
                      f"{(r['reason'] or '')[:160]}")
        print("  " + (err.strip().splitlines() or [""])[-1][:300])
        summary[label] = {"findings": len(findings), "wall_s": round(wall, 2), "ran": len(rows),
                          "definite": n_def, "agree": agree, "pct": round(pct, 1), "by_inputs": by_inputs,
                          "statuses": status}
    json.dump(summary, open(os.path.join(out_dir, "agreement.json"), "w"), indent=1)
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", action="append", help="repeatable; default sentence-transformers")
    ap.add_argument("--out", default="/tmp/agreement")
    ap.add_argument("--skip-plain", action="store_true")
    ap.add_argument("--deadline", type=float, default=600.0,
                    help="seconds of workloads to record inputs from (later workloads are skipped)")
    args = ap.parse_args()
    names = args.package or ["sentence-transformers"]
    total = {}
    for name in names:
        got = run_package(name, os.path.join(args.out, name) if len(names) > 1 else args.out, args.skip_plain,
                          args.deadline)
        for label, s in got.items():
            t = total.setdefault(label, {"definite": 0, "agree": 0, "ran": 0, "findings": 0})
            for k in t:
                t[k] += s[k]
    if len(names) > 1:
        for label, t in total.items():
            pct = 100.0 * t["agree"] / t["definite"] if t["definite"] else float("nan")
            print(f"together ({', '.join(names)}) {label}: {t['findings']} findings, {t['ran']} on statements the "
                  f"workloads ran, {t['definite']} definite, agreement {t['agree']}/{t['definite']} = {pct:.1f}%")
        json.dump(total, open(os.path.join(args.out, "agreement.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
