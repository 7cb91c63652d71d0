"""CPU time of each rule alone, over files parsed once, compared between two versions of the linter.

    python bench/rule_speed.py [--corpus DIR] [--limit N] [--src DIR] [--out FILE.json]
    python bench/rule_speed.py --compare BEFORE.json AFTER.json

Each rule runs alone (one rule walk per file with a fresh evaluator, so the inference a rule asks
for is part of its cost), on modules parsed beforehand; the time is the fastest of ``--repeat``
runs, in CPU seconds of this process, and as a ratio over the bare LibCST parse of the same files.
``--src`` imports ``torchsync_lint`` from another checkout (``git worktree add /tmp/old <commit>``)
to time an older version on the same files; ``--compare`` prints per-rule ratios after/before.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(corpus: str, limit, repeat: int) -> dict:
    import libcst as cst

    import linter_api

    engine = linter_api.load()
    walk = engine.walk
    from torchsync_lint.config import Config
    from torchsync_lint.inference.context import FileContext
    from torchsync_lint.inference.evaluate import Evaluator
    from torchsync_lint.inference.index import FileIndex
    try:
        from torchsync_lint.rules.registry import all_rules
    except ImportError:  # before the layout by stage
        from torchsync_lint.registry import all_rules

    files = [p for p, _ in engine.iter_python_files([corpus], Config(respect_gitignore=False))][:limit]
    sources = [open(f, encoding="utf-8", errors="replace").read() for f in files]
    t0 = time.process_time()
    modules = []
    for f, s in zip(files, sources):
        try:
            modules.append((f, cst.parse_module(s)))
        except Exception:
            pass
    parse = time.process_time() - t0
    indexes = []
    for f, m in modules:
        name, is_package = engine.module_name_for(f)
        index = FileIndex(name, is_package)
        walk.visit(m, index)
        indexes.append((index, m))
    out = {"files": len(modules), "parse_s": parse, "rules": {}}
    for code, rule in sorted(all_rules().items()):
        best = float("inf")
        for _ in range(repeat):
            gc.collect()
            t = time.process_time()
            for index, m in indexes:
                ctx = FileContext(index, Evaluator(index))
                engine.RuleWalker(ctx, [rule(ctx)]).run(m)
            best = min(best, time.process_time() - t)
        out["rules"][code] = best
    return out


def compare(before: dict, after: dict) -> None:
    print(f"files: {after['files']}  parse: before {before['parse_s']:.2f} s, after {after['parse_s']:.2f} s")
    print(f"{'rule':8} {'before x parse':>15} {'after x parse':>14} {'after/before':>13}")
    for code in sorted(after["rules"]):
        a = after["rules"][code] / after["parse_s"]
        if code in before["rules"]:
            b = before["rules"][code] / before["parse_s"]
            print(f"{code:8} {b:15.3f} {a:14.3f} {a / b:13.2f}")
        else:
            print(f"{code:8} {'(new)':>15} {a:14.3f} {'':>13}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=os.path.join(HERE, "corpus", "torchvision-0.26.0"))
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--src", help="import torchsync_lint from this checkout")
    p.add_argument("--out", help="write the timings here (JSON)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = p.parse_args(argv)
    if args.compare:
        with open(args.compare[0]) as a, open(args.compare[1]) as b:
            compare(json.load(a), json.load(b))
        return 0
    sys.path.insert(0, os.path.abspath(args.src) if args.src else os.path.dirname(HERE))
    result = measure(args.corpus, args.limit, args.repeat)
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
