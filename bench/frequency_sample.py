"""How often is a finding's frequency label right? A seeded random sample of findings on the development corpus.

    python bench/frequency_sample.py                  # n=120, seed 17: draw, judge, report
    python bench/frequency_sample.py --show           # also print every sampled finding with its code
    python bench/frequency_sample.py --n 60 --seed 3

Needs no torch. Findings come from the CLI with ``--include-cold`` (every label shown) over the
development packages of bench/truth/corpus.toml (held-out ones never), as bench/score_corpus.py
lints them (same cache). Each sampled finding is judged:

1. **by the GPU** where the recordings can tell (bench/data/<pkg>-syncs*.json): every event there
   counts how often its statement synced in one recorded phase of one workload, after a warm-up
   that was not recorded; a phase ran its code a known number of times (``recorded_train_steps``
   training steps, ``recorded_eval_forwards`` eval forwards, ``recorded_calls_per_case`` calls of a
   case). A statement that synced at least once per run of its phase runs *every call*: the label
   ``every-step`` is right, ``once`` / ``periodic`` / ``error-path`` wrong. One that synced fewer
   times than its phase ran, in every phase it synced in, does not run every call: then
   ``every-step`` is wrong and the others right. The counts cannot tell for a statement of a
   function that itself loops over steps (a loop calling ``.step()`` / ``.backward()``: a
   training loop, a sampler's denoising loop) and lies outside that loop: one phase run is many
   steps there, and the statement runs once per run. Those go to the hand verdicts.
2. **by hand** otherwise (the statement did not sync, or did not run, under the workloads):
   bench/data/frequency-judged.json gives, per finding (package, file, line, code), the class a
   reader found the line to have, with the reason; the label is right when it is that class. A
   sampled finding with no verdict there is listed as unjudged (printed with ``--show`` for a
   reader to judge) and counted apart, as is a ``not-hot`` label (a temperature, no frequency).

The sample: the ``n`` findings with the smallest seeded hash of (package, file, line, code), so
two linter versions are sampled on the same findings where both report them.

Judging by hand asks how often the line runs relative to a training or inference step: a line
of a forward, a loss, a step hook or a helper they call runs every step; code before or after a
training loop, builders, loaders, ``__init__``, caches filled on the first call run once; an
``except`` block or a branch that raises runs on an error only; a test file's line is test code.
A utility of unknown use that runs as often as it is called is ``every-step`` unless the code
shows it is set-up.

Writes bench/results/frequency-sample.json and prints the summary.
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import score_corpus as sc  # noqa: E402  (bench/score_corpus.py)

JUDGED = os.path.join(HERE, "data", "frequency-judged.json")
OUT = os.path.join(HERE, "results", "frequency-sample.json")
NOT_EVERY_CALL = ("once", "periodic", "error-path")


def phase_runs(data: dict, phase: str) -> Optional[int]:
    """How many times a recorded phase ran its code (None: not known)."""
    if phase in ("train", "train-backward", "train-after"):
        return data.get("recorded_train_steps")
    if phase == "eval":
        return data.get("recorded_eval_forwards")
    if phase.startswith("call:"):
        return data.get("recorded_calls_per_case")
    return None


def gpu_counts(data: dict, smap: "sc.StatementMap", modules: List[str]) -> Dict[Tuple[str, int], List[Tuple[int, int]]]:
    """statement -> [(times it synced in one phase of one workload, times that phase ran)],
    the largest count of any oracle (they see the same syncs)."""
    prefixes = tuple(m + "/" for m in modules)
    per: Dict[tuple, Dict[tuple, int]] = collections.defaultdict(dict)
    for model, entry in data["models"].items():
        for ev in entry.get("events", []):
            if not ev["file"].startswith(prefixes) or ev.get("inner"):
                continue
            loc = (ev["file"], ev["line"])
            if smap.in_dispatch(*loc):
                continue
            s = smap.stmt(*loc)
            runs = phase_runs(data, ev["phase"])
            if s is None or not runs:
                continue
            key = (model, ev["phase"])
            per[s][key] = max(per[s].get(key, 0), ev["count"])
    return {s: [(c, phase_runs(data, k[1])) for k, c in d.items()] for s, d in per.items()}


def around_step_loop(root: str, rel: str, line: int, _cache: Dict[str, ast.Module] = {}) -> bool:
    """The line lies in a function with a loop that calls ``.step()`` / ``.backward()``, outside
    every such loop (read with ``ast``, independently of the linter)."""
    path = os.path.join(root, rel)
    if path not in _cache:
        with open(path, encoding="utf-8") as fh:
            _cache[path] = ast.parse(fh.read())
    func = None
    stack = [_cache[path]]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if getattr(child, "lineno", None) is not None and child.lineno <= line <= (child.end_lineno or child.lineno):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    func = child
                stack.append(child)
    if func is None:
        return False

    def steps(loop):
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("step", "backward")
                   for n in ast.walk(loop))

    loops = [n for n in ast.walk(func) if isinstance(n, (ast.For, ast.While)) and steps(n)]
    return bool(loops) and not any(lp.lineno <= line <= (lp.end_lineno or lp.lineno) for lp in loops)


def gpu_verdict(label: str, counts: List[Tuple[int, int]]) -> Optional[bool]:
    """Right (True) / wrong (False) by the recorded counts; None when they cannot tell."""
    if not counts or label == "test":
        return None
    every_call = any(c >= runs for c, runs in counts)
    if label == "every-step":
        return every_call
    if label in NOT_EVERY_CALL:
        return not every_call
    return None  # not-hot: a temperature, not a frequency


def load_judged() -> Dict[str, dict]:
    if not os.path.isfile(JUDGED):
        return {}
    with open(JUDGED, encoding="utf-8") as fh:
        return json.load(fh)["verdicts"]


def population(packages: List[dict]) -> Tuple[List[dict], dict]:
    items, ctx = [], {}
    for pkg in packages:
        root = sc.release_root(pkg["name"], pkg["version"])
        smap = sc.StatementMap(root)
        data = sc.load_truth(pkg["name"], pkg["version"])
        ctx[pkg["name"]] = (root, smap, gpu_counts(data, smap, pkg["modules"]))
        for f in sc.lint(root, pkg["modules"], True):
            items.append({"package": pkg["name"], "rel": f["rel"], "line": f["line"], "code": f["code"],
                          "frequency": f.get("frequency", "every-step"), "temperature": f.get("temperature"),
                          "function": f.get("function")})
    items.sort(key=lambda i: (i["package"], i["rel"], i["line"], i["code"]))
    return items, ctx


def finding_key(item: dict) -> str:
    """A finding without its label: the same finding keeps its key across linter versions."""
    return "%s|%s|%d|%s" % (item["package"], item["rel"], item["line"], item["code"])


def draw(items: List[dict], n: int, seed: int) -> List[dict]:
    """The ``n`` findings whose seeded hash of ``finding_key`` is smallest: a uniform random
    sample that draws the same findings again from another linter version's population, so
    that labels are compared on the same lines."""
    def rank(it):
        return hashlib.sha256(("%d|%s" % (seed, finding_key(it))).encode()).hexdigest()
    return sorted(items, key=rank)[:n]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--show", action="store_true", help="print each sampled finding with its statement")
    ap.add_argument("--linter-src", default=sc.REPO, help="folder holding the torchsync_lint package to label with")
    args = ap.parse_args(argv)
    sc.LINTER_SRC = os.path.abspath(args.linter_src)
    packages = [p for p in sc.load_corpus() if not p.get("held_out")]
    items, ctx = population(packages)
    sample = draw(items, args.n, args.seed)
    judged = load_judged()
    rows, tally = [], collections.Counter()
    for it in sample:
        root, smap, counts = ctx[it["package"]]
        s = smap.stmt(it["rel"], it["line"])
        c = counts.get(s, []) if s else []
        verdict, how = gpu_verdict(it["frequency"], c), "gpu"
        if verdict is not None and around_step_loop(root, it["rel"], it["line"]):
            verdict = None  # one phase run holds many steps: the counts cannot tell
        hand = judged.get(finding_key(it))
        if verdict is None and hand is not None and it["frequency"] != "not-hot":
            verdict, how = hand["class"] == it["frequency"], "hand"
        if verdict is None:
            how = "unjudged"
        tally[(how, verdict)] += 1
        row = dict(it, judged_by=how, right=verdict, gpu_counts=c,
                   statement=smap.text(s) if s else "", reason=(hand or {}).get("why", ""))
        rows.append(row)
        if args.show:
            print("%-8s %-5s %-10s %-8s %s:%d %s  %s" % (how, verdict, it["frequency"], it["code"], it["rel"],
                                                       it["line"], it["function"], row["statement"][:90]))
    gpu_n = tally[("gpu", True)] + tally[("gpu", False)]
    hand_n = tally[("hand", True)] + tally[("hand", False)]
    right = tally[("gpu", True)] + tally[("hand", True)]
    n = gpu_n + hand_n
    labels = collections.Counter(i["frequency"] for i in items)
    summary = {
        "population": len(items), "labels": dict(labels.most_common()), "seed": args.seed, "n": len(sample),
        "judged": n, "right": right, "accuracy": round(right / n, 4) if n else None,
        "gpu": {"judged": gpu_n, "right": tally[("gpu", True)]},
        "hand": {"judged": hand_n, "right": tally[("hand", True)]},
        "unjudged": tally[("unjudged", None)],
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump({"summary": summary, "sample": rows}, fh, indent=1)
    print("population %d findings (%s); sample n=%d, seed %d" % (
        len(items), ", ".join("%s %d" % kv for kv in labels.most_common()), len(sample), args.seed))
    print("judged by the GPU counts: %d, right %d" % (gpu_n, tally[("gpu", True)]))
    print("judged by hand (bench/data/frequency-judged.json): %d, right %d" % (hand_n, tally[("hand", True)]))
    print("unjudged: %d" % tally[("unjudged", None)])
    if n:
        print("right: %d/%d = %.1f%%" % (right, n, 100.0 * right / n))
    for r in rows:
        if r["right"] is False:
            print("  wrong: %s %s:%d %s [%s] %s" % (r["judged_by"], r["rel"], r["line"], r["code"], r["frequency"],
                                                  r["statement"][:80]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
