"""Where ``--verify``'s parent-side time goes, with no GPU (issue 19's speed item), per finding.

    python3 bench/verify_cpu_profile.py [--serial] [--profile N] [PATH...]
        (default paths: bench/verify_speed.py's torchvision folders, from the installed torchvision
         or, without it, from bench/corpus/torchvision-0.26.0)

Each phase of the command is timed on its own, in this process (wall and CPU seconds): the
interpreter's start and the CLI's imports (a fresh ``python -c``), selecting the files, the lint
(``lint_paths``, no cache, as ``bench/verify_speed.py`` runs it), the extraction of every finding's
snippet (``Verifier.extract``: the file parsed again, indexed, evaluated), building the jobs
(``schedule.tasks_of``: what is sent to the children, JSON-encoded) and a child's start up to its
``ready`` line (``--mode predict``: the torch import, no CUDA). ``--profile N`` prints the N
costliest functions of the extraction (cProfile, cumulative).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

FOLDERS = ("models/detection", "ops", "transforms", "utils.py", "models/optical_flow", "models/video",
           "models/segmentation")


def default_paths():
    import importlib.util

    try:
        spec = importlib.util.find_spec("torchvision")
    except (ImportError, ValueError):
        spec = None
    tv = list(spec.submodule_search_locations)[0] if spec else os.path.join(HERE, "corpus", "torchvision-0.26.0",
                                                                             "torchvision")
    if not os.path.isdir(tv):
        sys.exit(f"no torchvision here, nor {tv}: name the paths")
    return [os.path.join(tv, p) for p in FOLDERS]


class Phase:
    def __init__(self, name, rows):
        self.name, self.rows = name, rows

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.rows.append((self.name, time.perf_counter() - self.w, time.process_time() - self.c))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serial", action="store_true", help="extract file by file in this process")
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    paths = args.paths or default_paths()
    rows = []
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torchsync_lint.cli.command"], check=True, env=env)
    rows.append(("interpreter + CLI imports (child process)", time.perf_counter() - t0, None))

    from torchsync_lint.cli.command import build_parser, configure, normalize_argv
    from torchsync_lint.run.files import iter_python_files
    from torchsync_lint.run.tree import lint_paths
    from torchsync_lint.verify.run import Verifier, VerifyOptions

    config = configure(build_parser().parse_args(normalize_argv(["--isolated", "--no-cache"] + paths)))
    with Phase("select files", rows):
        linted = [p for p, _ in iter_python_files(paths, config)]
    with Phase("lint (lint_paths, no cache)", rows):
        result = lint_paths(paths, config)
    findings = result.findings
    if args.serial:
        os.environ["TORCHSYNC_VERIFY_SERIAL"] = "1"
    v = Verifier(findings, VerifyOptions(mode="predict"), linted, config.hot_functions)
    prof = cProfile.Profile() if args.profile else None
    with Phase("extract snippets" + (" (serial)" if args.serial else " (worker processes)"), rows):
        if prof:
            prof.enable()
        v.extract()
        if prof:
            prof.disable()
    with Phase("build the jobs (+ JSON)", rows):
        from torchsync_lint.verify import schedule

        jobs = schedule.tasks_of(v.extracted, v.findings)
        size = sum(len(json.dumps(j)) for j in jobs)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "torchsync_lint.verify.child", "--mode", "predict",
                             "--settings", "{}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    for raw in proc.stdout:
        if b'"ready"' in raw:
            break
    rows.append(("a child's start to ready (torch import)", time.perf_counter() - t0, None))
    proc.kill()
    proc.wait()
    n = max(len(findings), 1)
    print(f"{len(findings)} findings in {len(linted)} files; {len(jobs)} task(s), {size / 1024:.0f} KiB of JSON; "
          f"{os.cpu_count()} CPUs")
    print(f"  {'phase':46s} {'wall s':>8s} {'CPU s':>8s} {'ms/finding':>11s}")
    for name, wall, cpu in rows:
        cpu_s = f"{cpu:8.2f}" if cpu is not None else f"{'':8s}"
        print(f"  {name:46s} {wall:8.2f} {cpu_s} {1000 * wall / n:11.1f}")
    fails = sum(1 for ex in v.extracted.values() if ex.failure)
    print(f"  extraction failures: {fails}")
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(args.profile)
        print(s.getvalue())


if __name__ == "__main__":
    main()
