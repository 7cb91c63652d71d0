"""Issue 18's speed ratios, before and after, in the same run (sides interleaved per measure).

    python bench/index_speed.py --before /work/wt-speed-before [--corpus DIR] [--limit N]
        [--file REL] [--leaf REL] [--base REL] [--plain-python PY] [--jobs J] [--only a,b,c,d]
        [--repeat R] [--bytecode none|compiled]

Each side is a checkout with its own virtual environment (``<checkout>/.venv``, flake8 and the
plugin installed there); every measure runs in child processes, so CPU time is the children's
(user + system, ``RUSAGE_CHILDREN``), steadier than wall time on a shared machine; peak memory is
the largest resident set of any process of the command. Each side lints its own copy of the
corpus (a ``pyproject.toml`` marks the root; its own cache: one side's pruning must not touch
the other's entries).

(a) flake8 ``--select TSL`` on one file (``--file``) of a warm project (the CLI ran over it with
    the cache) and of a cold copy, against flake8 ``--select E,F`` with the plugin installed and
    with a plain flake8 (``--plain-python``: a Python whose flake8 lacks the plugin);
(b) a whole-project cold run in one process (``lint_paths(jobs=1)``, no cache) against a bare
    ``libcst.parse_module`` of the same files, CPU;
(c) the CLI with the cache, one process: cold, an unchanged re-run, after a two-line function
    appended to a leaf helper (``--leaf``) and to a base module (``--base``), each over cold, and
    whether its findings equal a cold ``--no-cache`` run of the edited tree;
(d) flake8 ``--select TSL --jobs J`` over the whole warm tree against a cold CLI run (``--jobs J``),
    peak memory of each.
With ``--repeat R`` each measure runs R times, the two sides taking turns, and the fastest run of
each is kept (a shared machine only ever adds time), or with ``--keep median`` the median.
``--bytecode`` says whether the linter's
modules are compiled beforehand (an installed package) or compiled by every process (a checkout
run with ``PYTHONDONTWRITEBYTECODE``, as the numbers before 2026-11-27 were taken).
Timings only; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
AFTER = os.path.dirname(HERE)
WRAP = ("import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
        "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "sys.stderr.write('%f %d\\n' % (r.ru_utime + r.ru_stime, r.ru_maxrss))\n"
        "sys.stdout.buffer.write(p.stdout)\n")
PARSE_VS_RUN = """
import json, resource, sys, time, libcst
sys.path.insert(0, sys.argv[1] + '/bench')
import linter_api
from torchsync_lint.config import Config
from torchsync_lint.rules.registry import all_rules
api = linter_api.load()
files = json.load(open(sys.argv[2]))
sources = [open(f, 'rb').read().decode('utf-8', 'replace') for f in files]
t = time.process_time()
for s in sources:
    libcst.parse_module(s)
parse = time.process_time() - t
t = time.process_time()
api.lint_paths(files, Config(select=list(all_rules()), respect_gitignore=False), jobs=1)
print(json.dumps([parse, time.process_time() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024]))
"""
APPEND = "\n\ndef _bench_added_helper(x):\n    return x\n"
CACHE = ".torchsync_cache"


def measure(cmd: List[str], cwd: str, env: Dict[str, str] | None = None) -> Tuple[float, int, str]:
    """(CPU seconds, peak RSS in MiB, stdout) of a command and its children."""
    p = subprocess.run([sys.executable, "-c", WRAP, *cmd], cwd=cwd, capture_output=True, text=True, env=env)
    cpu, rss = p.stderr.strip().splitlines()[-1].split()
    return float(cpu), int(rss) // 1024, p.stdout


def bytecode(checkout: str, mode: str) -> None:
    """``none``: no compiled module of the linter (every process compiles what it imports, as
    with ``PYTHONDONTWRITEBYTECODE`` and a clean checkout); ``compiled``: every module compiled
    beforehand (as an installed package is)."""
    pkg = os.path.join(checkout, "torchsync_lint")
    for folder, dirs, _names in os.walk(pkg):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(folder, "__pycache__"))
    if mode == "compiled":
        subprocess.run([side_python(checkout), "-m", "compileall", "-q", pkg], check=True, stdout=subprocess.DEVNULL)


def side_python(checkout: str) -> str:
    return os.path.join(checkout, ".venv", "bin", "python")


def copy_project(corpus: str, dest: str, limit: int | None) -> List[str]:
    files = []
    for folder, dirs, names in os.walk(corpus):
        dirs.sort()
        for n in sorted(names):
            if n.endswith(".py"):
                files.append(os.path.relpath(os.path.join(folder, n), corpus))
    files = files[:limit] if limit else files
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(os.path.join(corpus, rel), os.path.join(dest, rel))
    with open(os.path.join(dest, "pyproject.toml"), "w") as fh:
        fh.write("[project]\nname = 'bench'\n")
    return files


def cli(py: str, *extra: str) -> List[str]:
    return [py, "-m", "torchsync_lint", "--isolated", "--no-respect-gitignore", "--include-cold", *extra]


def findings(text: str) -> List[tuple]:
    try:
        data = json.loads(text)
    except ValueError:
        return [("unreadable output",)]
    items = data.get("findings", data) if isinstance(data, dict) else data
    return sorted((f["path"], f["line"], f["col"], f["code"]) for f in items)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", default=None,
                   help="checkout of the before side, with its .venv (left out: the after side alone)")
    p.add_argument("--after", default=AFTER)
    p.add_argument("--corpus", default=os.path.join(HERE, "corpus", "transformers-5.17.0"))
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--file", default="transformers/models/bert/modeling_bert.py")
    p.add_argument("--leaf", default="transformers/utils/sentencepiece_model_pb2.py")
    p.add_argument("--base", default="transformers/modeling_utils.py")
    p.add_argument("--plain-python", default=None, help="a Python with flake8 but without the plugin")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", default="a,b,c,d")
    p.add_argument("--repeat", type=int, default=1, help="runs of each measure, sides interleaved; the fastest kept")
    p.add_argument("--keep", choices=("fastest", "median"), default="fastest",
                   help="which of the repeated runs a measure reports (median: steadier on a shared machine)")
    p.add_argument("--bytecode", choices=("none", "compiled"), default="none",
                   help="the linter's modules without compiled bytecode (each process compiles them) or compiled")
    args = p.parse_args(argv)
    only = set(args.only.split(","))
    sides = {"after": os.path.abspath(args.after)}
    if args.before:
        sides = {"before": os.path.abspath(args.before), **sides}
    out: Dict[str, Dict[str, object]] = {s: {} for s in sides}
    env = dict(os.environ)
    for s, co in sides.items():
        bytecode(co, args.bytecode)
    if args.bytecode == "compiled":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    reps = range(args.repeat)
    runs: Dict[Tuple[str, str], List[float]] = {}  # (side, measure) -> CPU of every repeat

    def best(key: str, side: str, got: Tuple[float, int, str]) -> str:
        """Keep the fastest of the repeats (CPU, its peak memory); returns the output."""
        runs.setdefault((side, key), []).append(got[0])
        old = out.setdefault(side, {}).get(key)
        if old is None or got[0] < old[0]:
            out[side][key] = got[:2]
        return got[2]

    with tempfile.TemporaryDirectory() as tmp:
        roots = {}
        for s in sides:
            roots[s] = os.path.join(tmp, s)
            files = copy_project(args.corpus, roots[s], args.limit)
            shutil.copytree(roots[s], roots[s] + "-cold")
        print(f"corpus {args.corpus}: {len(files)} files; jobs {args.jobs}; repeat {args.repeat} (sides "
              f"interleaved, {args.keep} kept); bytecode {args.bytecode}; CPU = children's user+system")
        if "b" in only:
            with open(os.path.join(tmp, "files.json"), "w") as fh:
                json.dump([os.path.join(roots["after"] + "-cold", f) for f in files], fh)
            for _ in reps:
                for s, co in sides.items():
                    got = subprocess.run([side_python(co), "-c", PARSE_VS_RUN, co, os.path.join(tmp, "files.json")],
                                         capture_output=True, text=True, cwd=co, env=env)
                    parse, run, peak = json.loads(got.stdout.strip().splitlines()[-1])
                    runs.setdefault((s, "b_peak"), []).append(peak)
                    old = out[s].get("b")
                    out[s]["b"] = (parse, run) if old is None else (min(old[0], parse), min(old[1], run))
                    runs.setdefault((s, "b_parse"), []).append(parse)
                    runs.setdefault((s, "b_run"), []).append(run)
                    out[s].setdefault("b_ratios", []).append(run / parse)
        for s, co in sides.items() if only & {"a", "d"} and "d" not in only else ():  # leaves the tree warm for a
            py = side_python(co)
            out[s]["cli_cold_jobs"] = measure(cli(py, "--jobs", str(args.jobs), "--format", "json", "."), roots[s],
                                              env)[:2]
        if "d" in only:  # each repeat: a cold CLI run (the reference; it leaves the tree warm), then flake8 over it
            for _ in reps:
                for s, co in sides.items():
                    py = side_python(co)
                    shutil.rmtree(os.path.join(roots[s], CACHE), ignore_errors=True)
                    best("cli_cold_jobs", s, measure(cli(py, "--jobs", str(args.jobs), "--format", "json", "."),
                                                     roots[s], env))
                    best("d", s, measure([py, "-m", "flake8", "--select", "TSL", "--jobs", str(args.jobs), "."],
                                         roots[s], env))
        if "a" in only:
            for _ in reps:
                for s, co in sides.items():
                    py = side_python(co)
                    f8 = [py, "-m", "flake8"]
                    best("a_warm", s, measure(f8 + ["--select", "TSL", args.file], roots[s], env))
                    shutil.rmtree(os.path.join(roots[s] + "-cold", CACHE), ignore_errors=True)  # cold every time
                    best("a_cold", s, measure(f8 + ["--select", "TSL", args.file], roots[s] + "-cold", env))
                    best("a_ef", s, measure(f8 + ["--select", "E,F", args.file], roots[s], env))
                if args.plain_python:
                    best("plain_ef", "plain", measure([args.plain_python, "-m", "flake8", "--select", "E,F",
                                                       args.file], roots["after"], env))
            if args.plain_python:
                out["plain_ef"] = out.pop("plain")["plain_ef"]
        if "c" in only:
            for s, co in sides.items():
                shutil.copytree(roots[s] + "-cold", roots[s] + "-c")
            res: Dict[str, dict] = {s: {} for s in sides}
            for r in reps:
                for s, co in sides.items():
                    py = side_python(co)
                    root = roots[s] + "-c"
                    run = cli(py, "--jobs", "1", "--format", "json", ".")
                    for name, rel in (("leaf", args.leaf), ("base", args.base)):  # the tree as copied
                        shutil.copy2(os.path.join(roots[s] + "-cold", rel), os.path.join(root, rel))
                    shutil.rmtree(os.path.join(root, CACHE), ignore_errors=True)
                    cold = measure(run, root, env)
                    warm = measure(run, root, env)
                    c = res[s]
                    c["cold"] = min(c.get("cold", cold[0]), cold[0])
                    c["warm"] = min(c.get("warm", warm[0]), warm[0])
                    runs.setdefault((s, "c_cold"), []).append(cold[0])
                    runs.setdefault((s, "c_warm"), []).append(warm[0])
                    c["same_warm"] = c.get("same_warm", True) and findings(cold[2]) == findings(warm[2])
                    for name, rel in (("leaf", args.leaf), ("base", args.base)):
                        with open(os.path.join(root, rel), "a") as fh:
                            fh.write(APPEND.replace("_bench_added_helper", f"_bench_added_{name}"))
                        edited = measure(run, root, env)
                        c[name] = min(c.get(name, edited[0]), edited[0])
                        runs.setdefault((s, "c_" + name), []).append(edited[0])
                        if r == 0:  # the edited tree's findings against a cold run of it, once
                            fresh = measure(cli(py, "--jobs", str(args.jobs), "--no-cache", "--format", "json", "."),
                                            root, env)
                            c["same_" + name] = findings(edited[2]) == findings(fresh[2])
                        measure(run, root, env)  # warm again before the next edit
                    sizes = subprocess.run(["du", "-sk", os.path.join(root, CACHE)], capture_output=True,
                                           text=True).stdout.split()
                    c["cache_mib"] = int(sizes[0]) / 1024 if sizes else None
            for s in sides:
                out[s]["c"] = res[s]
    if args.keep == "median":
        for (s, key), values in runs.items():
            mid = statistics.median(values)
            if key.startswith("c_"):
                out[s]["c"][key[2:]] = mid
            elif key == "b_peak":
                continue
            elif key in ("b_parse", "b_run"):
                parse, run = out[s]["b"]
                out[s]["b"] = (mid, run) if key == "b_parse" else (parse, mid)
            elif s == "plain":
                out["plain_ef"] = (mid, out["plain_ef"][1])
            else:
                out[s][key] = (mid, out[s][key][1])
    print(json.dumps(out, indent=1))
    for s in sides:
        r = out[s]
        print(f"== {s} ({sides[s]})")
        if "b" in r:
            parse, run = r["b"]
            print(f"(b) whole project cold, 1 process: {run:.1f} s CPU / bare parse {parse:.1f} s = {run / parse:.2f}x "
                  f"({args.keep} of each; per run {', '.join(f'{x:.2f}' for x in r['b_ratios'])}; peak MiB "
                  f"{', '.join(str(x) for x in runs[(s, 'b_peak')])}; run s {', '.join(f'{x:.1f}' for x in runs[(s, 'b_run')])}; "
                  f"parse s {', '.join(f'{x:.1f}' for x in runs[(s, 'b_parse')])})")
        cc = r.get("cli_cold_jobs")
        if "a_warm" in r:
            ef = out["plain_ef"][0] if "plain_ef" in out else r["a_ef"][0]
            print(f"(a) flake8 one file: warm {r['a_warm'][0]:.2f} s CPU ({r['a_warm'][1]} MiB), cold "
                  f"{r['a_cold'][0]:.2f} s; E,F with plugin {r['a_ef'][0]:.2f} s; warm / plain E,F "
                  f"{r['a_warm'][0] / ef:.2f}x")
        if "d" in r:
            print(f"(d) flake8 whole warm tree {r['d'][0]:.1f} s CPU (peak {r['d'][1]} MiB) / cold CLI "
                  f"{cc[0]:.1f} s CPU (peak {cc[1]} MiB) = {r['d'][0] / cc[0]:.2f} (runs: flake8 "
                  f"{', '.join(f'{x:.1f}' for x in runs[(s, 'd')])}; cold CLI "
                  f"{', '.join(f'{x:.1f}' for x in runs[(s, 'cli_cold_jobs')])})")
        if "c" in r:
            c = r["c"]
            print(f"(c) cold {c['cold']:.1f} s CPU; warm {c['warm'] / c['cold']:.3f}, leaf edit "
                  f"{c['leaf'] / c['cold']:.3f}, base edit {c['base'] / c['cold']:.3f} of cold; findings "
                  f"identical: warm {c['same_warm']}, leaf {c['same_leaf']}, base {c['same_base']}; "
                  f"cache {c['cache_mib']:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
