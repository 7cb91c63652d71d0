"""Record, on a CUDA GPU, every sync that the corpus libraries make under their workloads.

    PYTHONUNBUFFERED=1 python3 bench/truth/record.py --out-dir $OUT                  # every package
    python3 bench/truth/record.py --packages diffusers,monai --out-dir $OUT --steps 2
    python3 bench/truth/record.py --dry-run --steps 1 --out-dir /tmp/dry               # CPU: do they run?

Packages and their workload modules come from bench/truth/corpus.toml. Each package runs in its
own child process (the sync debug mode and the line tracer are process-wide; a crash stays in its
child), several at once on the one GPU (``--jobs``), and writes ``<name>-<version>-syncs.json`` in
the schema of bench/data/torchvision-0.26.0-syncs.json: versions, device, and per workload its sync
events (file relative to site-packages, line, oracle, phase, count, chain of enclosing package
lines, the torch function it went through, ``inner`` for another library's line) and executed
package lines. A workload that fails is recorded with its error; the others still run.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS_TOML = os.path.join(HERE, "corpus.toml")


def load_corpus(path: str = CORPUS_TOML) -> list:
    import tomllib

    with open(path, "rb") as fh:
        return tomllib.load(fh)["package"]


def record_one(pkg: dict, out: str, steps: int, dry_run: bool, deadline: float, wanted: list, base: str = "") -> int:
    """In this process: record one package's workloads and write ``out``."""
    t0 = time.time()
    sys.path.insert(0, HERE)
    import torch

    from harness import run_all
    from recorder import SyncRecorder

    dirs = []
    for mod in pkg["modules"]:
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("record: cannot import %s (install %s==%s)" % (mod, pkg["name"], pkg["version"]))
        dirs.append(list(spec.submodule_search_locations)[0])
    try:
        installed = importlib.metadata.version(pkg["name"])
    except importlib.metadata.PackageNotFoundError:
        installed = "unknown"
    wl_module = importlib.import_module(pkg["workloads"])
    cuda = torch.cuda.is_available() and not dry_run
    device = torch.device("cuda" if cuda else "cpu")
    rec = SyncRecorder(dirs, os.path.dirname(torch.__file__))
    result = {
        "package": pkg["name"], "version": installed, "pinned_version": pkg["version"],
        pkg["name"]: installed, "modules": pkg["modules"], "package_dirs": dirs,
        "torch": torch.__version__, "python": sys.version.split()[0], "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu (dry run)",
        "recorded_train_steps": steps, "recorded_eval_forwards": 1, "recorded_calls_per_case": steps,
        "oracles": {
            "warning": "set_sync_debug_mode('warn') Python warning, stack-attributed",
            "stderr": "debug-mode message on fd 2 (torch.ops paths), attributed by the line tracer",
            "trace": "torch.cuda._gpu_trace synchronization callback, stack-attributed",
        },
        "models": {},
    }
    if base and os.path.isfile(base):  # re-recording some workloads: keep the others
        with open(base) as fh:
            result["models"] = {k: v for k, v in json.load(fh).get("models", {}).items() if k not in wanted}
    if installed != pkg["version"]:
        print("record: %s is %s here, pinned %s" % (pkg["name"], installed, pkg["version"]), flush=True)

    def on_entry(name: str, entry: dict) -> None:
        result["models"][name] = entry
        result["elapsed_s"] = round(time.time() - t0, 1)
        n = sum(e["count"] for e in entry.get("events", []))
        print("%-12s %-34s %5.1fs events %4d lines %5d %s%s" % (
            pkg["name"][:12], name, entry.get("seconds", 0), n, sum(map(len, entry.get("executed", {}).values())),
            entry.get("error", ""), (" case errors: %s" % entry["case_errors"]) if entry.get("case_errors") else ""),
            flush=True)
        with open(out, "w") as fh:  # after each workload, so a timeout keeps what was done
            json.dump(result, fh, indent=1)

    rec.install(torch, cuda)
    torch.backends.cudnn.benchmark = False
    rec.start()
    try:
        run_all(torch, rec, wl_module.WORKLOADS, device, steps, deadline, wanted, on_entry)
    finally:
        rec.stop()
    print("%s done in %.1fs -> %s" % (pkg["name"], time.time() - t0, out), flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", default="",
                    help="comma-separated names from corpus.toml (default: all with workloads)")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--steps", type=int, default=2, help="recorded training steps (and calls per case)")
    ap.add_argument("--workloads", default="", help="comma-separated subset of workload names")
    ap.add_argument("--deadline", type=float, default=420.0, help="seconds per package; later workloads are skipped")
    ap.add_argument("--jobs", type=int, default=4, help="packages recorded at once")
    ap.add_argument("--dry-run", action="store_true", help="on the CPU: check that the workloads run")
    ap.add_argument("--base", default="", help="folder of earlier recordings: their other workloads are kept")
    ap.add_argument("--log-dir", default="", help="child logs (default: the output folder)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # child process: record this package
    args = ap.parse_args(argv)
    corpus = {p["name"]: p for p in load_corpus() if p.get("workloads")}
    wanted_wl = [w for w in args.workloads.split(",") if w]
    if args.one:
        pkg = corpus[args.one]
        fname = "%s-%s-syncs.json" % (pkg["name"], pkg["version"])
        base = os.path.join(args.base, fname) if args.base else ""
        try:
            return record_one(pkg, os.path.join(args.out_dir, fname), args.steps, args.dry_run, args.deadline,
                              wanted_wl, base)
        except Exception:
            traceback.print_exc()
            return 1
    names = [n for n in args.packages.split(",") if n] or list(corpus)
    unknown = [n for n in names if n not in corpus]
    if unknown:
        print("record: unknown package(s) %s; corpus.toml has %s" % (", ".join(unknown), ", ".join(corpus)),
              file=sys.stderr)
        return 2
    os.makedirs(args.out_dir, exist_ok=True)
    log_dir = args.log_dir or args.out_dir
    os.makedirs(log_dir, exist_ok=True)
    pending, running, rcs = list(names), [], {}
    t0 = time.time()
    while pending or running:
        while pending and len(running) < args.jobs:
            name = pending.pop(0)
            log = open(os.path.join(log_dir, "%s.log" % name), "w")
            cmd = [sys.executable, os.path.abspath(__file__), "--one", name, "--out-dir", args.out_dir,
                   "--steps", str(args.steps), "--deadline", str(args.deadline), "--workloads", args.workloads,
                   "--base", args.base]
            if args.dry_run:
                cmd.append("--dry-run")
            running.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
        time.sleep(0.5)
        for item in list(running):
            name, proc, log = item
            if proc.poll() is not None:
                running.remove(item)
                log.close()
                rcs[name] = proc.returncode
                with open(log.name) as fh:
                    sys.stdout.write(fh.read())
                print("== %s exit %d after %.0fs" % (name, proc.returncode, time.time() - t0), flush=True)
    return 1 if any(rcs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
