"""How fast is the linter, relative to the parser it cannot avoid?

    python bench/corpus.py                       # once: fetch the corpus
    python bench/speed.py [--corpus DIR] [--limit N] [--repeat R] [--jobs J] [--profile]

On the same files it times (a) bare ``libcst.parse_module``, single process; (b) our whole
per-file check (``check_file``, every rule on), single process; (c) a whole run
(``lint_paths``) on all cores; with ``--cache`` (d, e) that run filling, then reusing, a
report cache. Then the pieces of (b), each timed alone on modules
parsed beforehand: index walk, rule walk, positions, hot-path classification. With several
repeats the fastest of each is kept. Timings only; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import tempfile
import time
from typing import Callable, List, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import libcst as cst  # noqa: E402

import linter_api  # noqa: E402
from torchsync_lint.config import Config  # noqa: E402
from torchsync_lint.inference.context import FileContext  # noqa: E402
from torchsync_lint.inference.evaluate import Evaluator  # noqa: E402
from torchsync_lint.inference.hotness import CallGraph, summarise  # noqa: E402
from torchsync_lint.inference.index import FileIndex  # noqa: E402
from torchsync_lint.check.noqa import Suppressions  # noqa: E402
from torchsync_lint.rules.registry import all_rules, select_rules  # noqa: E402

engine = linter_api.load()
walk = engine.walk

DEFAULT_CORPUS = os.path.join(HERE, "corpus")


def corpus_files(root: str, limit: int | None) -> List[str]:
    config = Config(respect_gitignore=False)  # default excludes only: bench/corpus is git-ignored
    files = [p for p, _ in engine.iter_python_files([root], config) if p.endswith(".py")]
    return files[:limit] if limit else files


def all_codes_config(jobs: int | None = None) -> Config:
    return Config(select=list(all_rules()), respect_gitignore=False)  # every rule; bench/corpus is git-ignored


def best_of(repeat: int, fn: Callable[[], object], clock: Callable[[], float] = time.process_time):
    """Fastest of ``repeat`` runs. Single-process work is timed in CPU seconds of this process
    (stable on a busy machine); the parallel run passes a wall clock."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = clock()
        result = fn()
        best = min(best, clock() - t0)
    return best, result


def read_all(files: Sequence[str]) -> List[Tuple[str, str]]:
    out = []
    for f in files:
        with open(f, "rb") as fh:
            out.append((f, engine.decode(fh.read(), f)))
    return out


def bare_parse(sources) -> int:
    for _, src in sources:
        cst.parse_module(src)
    return len(sources)


def our_check(files, options) -> list:
    return [engine.check_file(f, options) for f in files]


class _Empty(cst.CSTVisitor):
    pass


STAGES = (
    "LibCST empty CSTVisitor pass (reference)",
    "our empty walk (torchsync_lint.syntax.walk)",
    "index walk (FileIndex)",
    "call-graph summary",
    "rule walk (all rules + inference)",
    "positions (files with findings)",
    "noqa scan (files with findings)",
)


def _stage_times(chunk, options, rules_classes, repeat: int) -> Tuple[List[float], int]:
    """Each stage of check_source alone on one chunk of parsed modules: seconds per stage."""
    modules = [(s, cst.parse_module(s), engine.module_name_for(p)) for p, s in chunk]

    def plain_visit():
        for _, m, _ in modules:
            m.visit(_Empty())

    def plain_walk():
        for _, m, _ in modules:
            walk.Walker({}, {}).walk(m)

    def index_walk():
        out = []
        for _, m, (name, pkg) in modules:
            idx = FileIndex(name, pkg)
            walk.visit(m, idx)
            out.append(idx)
        return out

    t_visit, _ = best_of(repeat, plain_visit)
    t_plain, _ = best_of(repeat, plain_walk)
    t_index, indexes = best_of(repeat, index_walk)
    t_summary, _ = best_of(repeat, lambda: [summarise(i) for i in indexes])

    def rule_walk():
        out = []
        for (_, m, _), idx in zip(modules, indexes):
            ev = Evaluator(idx, frozenset(options.hot_functions))
            ctx = FileContext(idx, ev, frozenset(options.cold_functions))
            statements = engine.RuleWalker(ctx, [r(ctx) for r in rules_classes]).run(m)
            out.append((ctx.findings, statements))
        return out

    # the rule walk changes nothing in the index, so the same indexes serve every repeat
    t_rules, raw = best_of(repeat, rule_walk)
    with_findings = [(s, m, idx, f, st) for (s, m, _), idx, (f, st) in zip(modules, indexes, raw) if f]

    def pos():  # as check_source does it: the statements holding findings, placed in the source
        for s, m, idx, f, st in with_findings:
            engine.positions(m, (x.node for x in f), s, engine.places(m, idx, f, st))

    t_pos, _ = best_of(repeat, pos)
    t_noqa, _ = best_of(repeat, lambda: [Suppressions(s) for s, *_ in with_findings])
    return [t_visit, t_plain, t_index, t_summary, t_rules, t_pos, t_noqa], len(with_findings)


def breakdown(sources, options, reports, repeat: int, chunk: int = 200) -> List[Tuple[str, object]]:
    """Stages timed alone on the files past the prefilter, parsed beforehand (in chunks, to keep
    memory flat), then the cross-file hot-path classification on the reports of run (b)."""
    kept = [(p, s) for p, s in sources if any(w in s for w in engine.PREFILTER)]
    rules_classes = select_rules(options.select, options.ignore)
    totals = [0.0] * len(STAGES)
    with_findings = 0
    for i in range(0, len(kept), chunk):
        times, n = _stage_times(kept[i:i + chunk], options, rules_classes, repeat)
        totals = [a + b for a, b in zip(totals, times)]
        with_findings += n
    config = all_codes_config()

    def classify():
        graph = CallGraph((r.summary for r in reports if r.summary is not None), config.hot_functions)
        return engine.classify(reports, graph, config.include_cold)

    t_hot, _ = best_of(repeat, classify)
    rows: List[Tuple[str, object]] = [("files past prefilter", len(kept)), ("files with findings", with_findings)]
    rows += list(zip(STAGES, totals))
    rows.append(("hot-path classification (all files)", t_hot))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Time the linter against bare LibCST parsing.")
    p.add_argument("--corpus", default=DEFAULT_CORPUS, help="folder of .py files (default: bench/corpus)")
    p.add_argument("--limit", type=int, default=None, help="only the first N files (sorted walk order)")
    p.add_argument("--repeat", type=int, default=1, help="repeat each timing, keep the fastest")
    p.add_argument("--jobs", type=int, default=None, help="workers for the parallel run (default: all cores)")
    p.add_argument("--no-single", action="store_true",
                   help="skip (b) and the breakdown: only the parallel runs, for a many-core machine")
    p.add_argument("--no-breakdown", action="store_true", help="skip the per-stage breakdown")
    p.add_argument("--cache", action="store_true", help="also time runs with a report cache (cold, then warm)")
    p.add_argument("--profile", metavar="N", type=int, nargs="?", const=25, default=None,
                   help="also cProfile the single-process check and print the top N functions")
    args = p.parse_args(argv)
    if not os.path.isdir(args.corpus):
        print(f"speed: no corpus at {args.corpus}; run `python bench/corpus.py` first", file=sys.stderr)
        return 1
    files = corpus_files(args.corpus, args.limit)
    if not files:
        print(f"speed: no .py files under {args.corpus}", file=sys.stderr)
        return 1
    sources = read_all(files)
    config = all_codes_config()
    options = engine.Options(tuple(config.select), tuple(config.ignore), tuple(config.hot_functions),
                             tuple(config.cold_functions))
    jobs = args.jobs or os.cpu_count() or 1
    n = len(files)
    t_parse, _ = best_of(args.repeat, lambda: bare_parse(sources))
    t_ours, reports = (None, None) if args.no_single else best_of(args.repeat, lambda: our_check(files, options))
    # the whole run in one process: interfaces of every file, the project pass, hot paths
    t_whole, _ = (None, None) if args.no_single else best_of(
        args.repeat, lambda: engine.lint_paths(files, config, jobs=1))
    t_par, result = best_of(args.repeat, lambda: engine.lint_paths(files, config, jobs=jobs), time.perf_counter)
    rows = [("(a) bare libcst.parse_module, 1 process, CPU", t_parse),
            ("(b) check_file, 1 process, CPU", t_ours or float("nan")),
            ("(b2) lint_paths, whole project, 1 process, CPU", t_whole or float("nan")),
            (f"(c) lint_paths, {jobs} processes, wall", t_par)]
    if args.cache:
        with tempfile.TemporaryDirectory() as cache_dir:
            t_fill, _ = best_of(1, lambda: engine.lint_paths(files, config, jobs=jobs, cache_dir=cache_dir),
                                time.perf_counter)
            t_warm, warm = best_of(args.repeat, lambda: engine.lint_paths(files, config, jobs=jobs, cache_dir=cache_dir),
                                   time.perf_counter)
        assert [f.to_json() for f in warm.findings] == [f.to_json() for f in result.findings]
        rows += [("(d) same, filling a report cache, wall", t_fill), ("(e) same, every report cached, wall", t_warm)]
        print(f"warm over cold (e)/(d): {t_warm / t_fill:.3f}")

    print(f"corpus: {args.corpus}  files: {n}  rules: {len(options.select)}  cores: {jobs}  repeat: {args.repeat}")
    print(f"{'measure':54} {'seconds':>9} {'files/s':>9} {'x parse':>8}")
    for label, t in rows:
        print(f"{label:54} {t:9.2f} {n / t:9.1f} {t / t_parse:8.2f}")
    print(f"findings: {len(result.findings)}  errors: {len(result.errors)}")
    if args.no_single or args.no_breakdown:
        return 0
    print()
    print(f"breakdown (pieces timed alone, x = share of bare parse time of all {n} files)")
    for label, t in breakdown(sources, options, reports, args.repeat):
        if isinstance(t, int):
            print(f"  {label:44} {t:9d}")
        else:
            print(f"  {label:44} {t:9.2f} {'':9} {t / t_parse:8.2f}")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(our_check, files, options)
        print()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
