"""Score the linter against GPU truth recorded in libraries nobody here wrote (bench/truth/corpus.toml).

    python bench/score_corpus.py                          # every development package
    python bench/score_corpus.py --packages diffusers,monai
    python bench/score_corpus.py --heldout                # the held-out packages only: run it last

Needs no torch. For each package: fetch the pinned release's .py files into
bench/corpus/<name>-<version>/ (bench/corpus.py: pip download --no-deps, extract), lint its modules
with the CLI twice (default mode; ``--include-cold``), and compare with the recordings
bench/data/<name>-<version>-syncs*.json (bench/truth/record.py; torchvision: bench/realcode_record.py)
at statement granularity: a line maps to the innermost statement holding it (a compound statement's
header lines form a statement of their own).

- a *sync statement*: the innermost package statement an oracle attributed a sync to, when the sync
  happened in torch under it (a sync inside another library, such as transformers under
  sentence-transformers, makes the package statement "synced in a callee" instead, as does a sync in a
  package function it called);
- recall = sync statements flagged / sync statements ("chain": also caught when a statement on the
  sync's call chain is flagged);
- precision = flagged statements that ran and synced / flagged statements that ran (executed lines
  were recorded under the same workloads); "callee synced counts" also counts a flagged statement
  whose callee synced.

The number that counts: recall with --include-cold, precision in the default mode. Both modes are
shown. The default run leaves held-out packages out entirely; ``--heldout`` scores only them and
lists their misses. Reports: bench/results/score-<dev|heldout>.json and .md.
"""

from __future__ import annotations

import argparse
import ast
import collections
import glob
import hashlib
import json
import os
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CORPUS_TOML = os.path.join(HERE, "truth", "corpus.toml")
DATA_DIR = os.path.join(HERE, "data")
RESULTS_DIR = os.path.join(HERE, "results")
DISPATCH_NAMES = {"__torch_function__", "__torch_dispatch__"}  # a sync there belongs to the caller
HOOK_PARAMS = ["message", "category", "filename", "lineno"]  # a warnings.showwarning hook: not where it synced
Stmt = Tuple[str, int]  # (file relative to the release's root, first line of the statement)


def load_corpus(path: str = CORPUS_TOML) -> List[dict]:
    import tomllib

    with open(path, "rb") as fh:
        return tomllib.load(fh)["package"]


def release_root(name: str, version: str) -> str:
    sys.path.insert(0, HERE)
    import corpus  # bench/corpus.py

    return corpus.fetch(packages=((name, version),))[0][0]


class StatementMap:
    """Line -> innermost statement, per file; also which lines lie in a __torch_function__."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._maps: Dict[str, Dict[int, int]] = {}
        self._dispatch: Dict[str, Set[int]] = {}
        self._lines: Dict[str, List[str]] = {}

    def _build(self, rel: str) -> None:
        with open(os.path.join(self.root, rel), encoding="utf-8") as fh:
            text = fh.read()
        self._lines[rel] = text.splitlines()
        spans, dispatch = [], set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    node.name in DISPATCH_NAMES or [a.arg for a in node.args.args[:4]] == HOOK_PARAMS):
                dispatch.update(range(node.lineno, node.end_lineno + 1))
            if not isinstance(node, ast.stmt):
                continue
            start, end = node.lineno, node.end_lineno
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                end = body[0].lineno - 1  # header only
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    start = min([start] + [d.lineno for d in node.decorator_list])
            spans.append((end - start, start, end))
        mapping: Dict[int, int] = {}
        for _size, start, end in sorted(spans, reverse=True):  # widest first, innermost wins
            for ln in range(start, max(start, end) + 1):
                mapping[ln] = start
        self._maps[rel], self._dispatch[rel] = mapping, dispatch

    def _ensure(self, rel: str) -> None:
        if rel not in self._maps:
            try:
                self._build(rel)
            except (OSError, SyntaxError, UnicodeDecodeError):
                self._maps[rel], self._dispatch[rel] = {}, set()

    def stmt(self, rel: str, line: int) -> Optional[Stmt]:
        self._ensure(rel)
        start = self._maps[rel].get(line)
        return (rel, start) if start is not None else None

    def in_dispatch(self, rel: str, line: int) -> bool:
        self._ensure(rel)
        return line in self._dispatch[rel]

    def text(self, stmt: Stmt, width: int = 110) -> str:
        lines = self._lines.get(stmt[0], [])
        s = lines[stmt[1] - 1].strip() if 0 < stmt[1] <= len(lines) else ""
        return s if len(s) <= width else s[: width - 3] + "..."


LINTER_SRC = REPO  # folder holding the torchsync_lint package that is scored (--linter-src)


def linter_hash() -> str:
    """Hash of the linter's own sources: cached lint results are reused only for the same code."""
    h = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(LINTER_SRC, "torchsync_lint", "**", "*"), recursive=True)):
        if os.path.isfile(path) and not path.endswith((".pyc", ".pyo")) and "__pycache__" not in path:
            h.update(os.path.relpath(path, LINTER_SRC).encode())
            with open(path, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()[:16]


def lint(root: str, modules: List[str], include_cold: bool) -> List[dict]:
    """The CLI with its default settings, cached in bench/results/lint-cache/ per linter version."""
    key = "%s-%s-%s-%s.json" % (os.path.basename(root), "-".join(modules), "cold" if include_cold else "default",
                                linter_hash())
    cache = os.path.join(RESULTS_DIR, "lint-cache", key)
    if os.path.isfile(cache):
        with open(cache) as fh:
            return json.load(fh)
    findings = run_lint(root, modules, include_cold)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    with open(cache + ".tmp", "w") as fh:
        json.dump(findings, fh)
    os.replace(cache + ".tmp", cache)
    return findings


def run_lint(root: str, modules: List[str], include_cold: bool) -> List[dict]:
    """The CLI with its default settings (--isolated: no pyproject.toml of ours)."""
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-respect-gitignore", "--format", "json",
           "--exit-zero"]
    if include_cold:
        cmd.append("--include-cold")
    cmd += [os.path.join(root, m) for m in modules]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [LINTER_SRC] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    # run from the linter's own folder: `python -m` puts the working directory first on sys.path,
    # ahead of PYTHONPATH (from REPO, --linter-src would score this checkout instead)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=LINTER_SRC, env=env)
    if proc.returncode not in (0, 1):
        raise RuntimeError("lint failed (%d): %s" % (proc.returncode, proc.stderr[-2000:]))
    findings = [f for f in json.loads(proc.stdout or "[]") if f.get("type", "finding") == "finding"]
    for f in findings:
        path = os.path.abspath(os.path.join(LINTER_SRC, f["path"]))
        f["rel"] = os.path.relpath(path, root).replace(os.sep, "/")
    return findings


def load_truth(name: str, version: str) -> dict:
    """All recordings of one release, their workloads merged."""
    paths = sorted(glob.glob(os.path.join(DATA_DIR, "%s-%s-syncs*.json" % (name, version))))
    if not paths:
        raise FileNotFoundError("no recording bench/data/%s-%s-syncs*.json (bench/truth/record.py on a GPU)"
                                % (name, version))
    data: dict = {"models": {}, "files": [os.path.basename(p) for p in paths]}
    for path in paths:
        with open(path) as fh:
            one = json.load(fh)
        models = dict(data["models"], **one.get("models", {}))
        data.update({k: v for k, v in one.items() if k != "models"})
        data["models"] = models
    return data


class Truth:
    """Sync statements, callee-synced statements and executed statements of one release."""

    def __init__(self, data: dict, smap: StatementMap, modules: List[str]) -> None:
        prefixes = tuple(m + "/" for m in modules)
        self.events: Dict[Stmt, collections.Counter] = collections.defaultdict(collections.Counter)
        self.workloads: Dict[Stmt, Set[str]] = collections.defaultdict(set)
        self.chain_of: Dict[Stmt, Set[Stmt]] = collections.defaultdict(set)
        self.callee_synced: Set[Stmt] = set()  # a package function it called, or another library, synced
        self.other_library: collections.Counter = collections.Counter()  # stmt -> events inside another library
        self.executed: Set[Stmt] = set()
        self.outside = collections.Counter()
        self.errors = {m: e["error"] for m, e in data["models"].items() if e.get("error")}
        for model, entry in data["models"].items():
            for rel, lines in entry.get("executed", {}).items():
                for ln in lines:
                    s = smap.stmt(rel, ln)
                    if s:
                        self.executed.add(s)
            for ev in entry.get("events", []):
                self._add(smap, prefixes, model, ev)
        self.syncs = set(self.events)

    def _add(self, smap: StatementMap, prefixes, model: str, ev: dict) -> None:
        chain = [tuple(c) for c in ev.get("chain", [])]
        if not ev["file"].startswith(prefixes):
            self.outside["%s/%s" % (ev["file"].strip("<>"), ev["oracle"])] += ev["count"]
            return
        loc = (ev["file"], ev["line"])
        if smap.in_dispatch(*loc):  # a dispatcher's op, or a package's warning hook: the caller's line
            if not chain:
                self.outside["harness/%s" % ev["oracle"]] += ev["count"]
                return
            loc, chain = chain[0], chain[1:]
        s = smap.stmt(*loc)
        if s is None:
            self.outside["unmapped/%s" % ev["oracle"]] += ev["count"]
            return
        outer = {c for c in (smap.stmt(*c) for c in chain) if c and c != s}
        self.callee_synced |= outer
        if ev.get("inner"):  # synced inside another library under this statement
            self.callee_synced.add(s)
            self.other_library[s] += ev["count"]
            return
        self.events[s][ev["oracle"]] += ev["count"]
        self.workloads[s].add("%s/%s" % (model, ev["phase"]))
        self.chain_of[s] |= outer


def score(truth: Truth, smap: StatementMap, findings: List[dict]) -> dict:
    flagged: Dict[Stmt, Set[str]] = collections.defaultdict(set)
    freq: Dict[Stmt, Set[str]] = collections.defaultdict(set)
    for f in findings:
        s = smap.stmt(f["rel"], f["line"])
        if s:
            flagged[s].add(f["code"])
            freq[s].add(f.get("frequency", "?"))
    syncs = truth.syncs
    ran = {s for s in flagged if s in truth.executed}
    caught = {s for s in syncs if s in flagged}
    caught_chain = {s for s in syncs if s in flagged or truth.chain_of[s] & set(flagged)}
    true_pos = {s for s in ran if s in syncs}
    true_pos_chain = {s for s in ran if s in syncs or s in truth.callee_synced}

    def rows(stmts, with_events):
        out = []
        for s in sorted(stmts):
            row = {"file": s[0], "line": s[1], "code": smap.text(s), "rules": sorted(flagged.get(s, ())),
                   "frequency": sorted(freq.get(s, ()))}
            if with_events:
                row["events"] = dict(truth.events[s])
                row["workloads"] = sorted(truth.workloads[s])[:4]
            out.append(row)
        return out

    ratio = lambda a, b: round(len(a) / len(b), 4) if b else None  # noqa: E731
    return {
        "findings": len(findings),
        "findings_by_rule": dict(collections.Counter(f["code"] for f in findings).most_common()),
        "sync_statements": len(syncs),
        "recall": {"flagged": len(caught), "of": len(syncs), "value": ratio(caught, syncs)},
        "recall_chain": {"flagged": len(caught_chain), "of": len(syncs), "value": ratio(caught_chain, syncs)},
        "precision": {"synced": len(true_pos), "of": len(ran), "value": ratio(true_pos, ran)},
        "precision_callee": {"synced": len(true_pos_chain), "of": len(ran), "value": ratio(true_pos_chain, ran)},
        "flagged_not_run": len(set(flagged) - ran),
        "caught_by_frequency": dict(collections.Counter(c for s in caught for c in freq[s])),
        "missed": rows(syncs - caught, True),
        "false_alarms": rows(ran - true_pos, False),
        "false_alarms_callee": rows(ran - true_pos_chain, False),
    }


def score_package(pkg: dict) -> dict:
    root = release_root(pkg["name"], pkg["version"])
    smap = StatementMap(root)
    data = load_truth(pkg["name"], pkg["version"])
    truth = Truth(data, smap, pkg["modules"])
    out = {
        "package": pkg["name"], "version": pkg["version"], "held_out": bool(pkg.get("held_out")),
        "recordings": data["files"], "device": data.get("device"), "torch": data.get("torch"),
        "workloads": sorted(data["models"]), "workload_errors": truth.errors,
        "executed_statements": len(truth.executed),
        "callee_synced_statements": len(truth.callee_synced),
        "synced_in_other_library": len(truth.other_library),
        "events_outside_package": dict(sorted(truth.outside.items())),
    }
    for mode, cold in (("default", False), ("include_cold", True)):
        out[mode] = score(truth, smap, lint(root, pkg["modules"], cold))
    return out


def _pct(v) -> str:
    return "  n/a " if v is None else "%5.1f%%" % (100 * v)


def totals(results: List[dict]) -> dict:
    tot: dict = {}
    for mode in ("default", "include_cold"):
        t = collections.Counter()
        for r in results:
            m = r[mode]
            t["rf"] += m["recall"]["flagged"]
            t["ro"] += m["recall"]["of"]
            t["ps"] += m["precision"]["synced"]
            t["po"] += m["precision"]["of"]
            t["pcs"] += m["precision_callee"]["synced"]
        ratio = lambda a, b: round(a / b, 4) if b else None  # noqa: E731
        tot[mode] = {"recall": ratio(t["rf"], t["ro"]), "recall_counts": [t["rf"], t["ro"]],
                     "precision": ratio(t["ps"], t["po"]), "precision_counts": [t["ps"], t["po"]],
                     "precision_callee": ratio(t["pcs"], t["po"])}
    return tot


def summary_table(results: List[dict]) -> List[str]:
    head = "%-28s %6s %6s | %-22s %-22s %-9s | %-22s %-22s" % (
        "package", "syncs", "ran", "recall (default)", "precision (default)", "callee",
        "recall (--include-cold)", "precision (cold)")
    lines = [head, "-" * len(head)]
    for r in results:
        d, c = r["default"], r["include_cold"]
        lines.append("%-28s %6d %6d | %s %4d/%-4d       %s %4d/%-4d       %s    | %s %4d/%-4d       %s %4d/%-4d" % (
            "%s %s" % (r["package"], r["version"]), d["sync_statements"], r["executed_statements"],
            _pct(d["recall"]["value"]), d["recall"]["flagged"], d["recall"]["of"],
            _pct(d["precision"]["value"]), d["precision"]["synced"], d["precision"]["of"],
            _pct(d["precision_callee"]["value"]),
            _pct(c["recall"]["value"]), c["recall"]["flagged"], c["recall"]["of"],
            _pct(c["precision"]["value"]), c["precision"]["synced"], c["precision"]["of"]))
    t = totals(results)
    d, c = t["default"], t["include_cold"]
    lines.append("%-28s %6d %6s | %s %4d/%-4d       %s %4d/%-4d       %s    | %s %4d/%-4d       %s %4d/%-4d" % (
        "ALL (statement-weighted)", d["recall_counts"][1], "", _pct(d["recall"]), *d["recall_counts"],
        _pct(d["precision"]), *d["precision_counts"], _pct(d["precision_callee"]),
        _pct(c["recall"]), *c["recall_counts"], _pct(c["precision"]), *c["precision_counts"]))
    return lines


def details(r: dict) -> List[str]:
    d, c = r["default"], r["include_cold"]
    out = ["", "## %s %s%s" % (r["package"], r["version"], " (held out)" if r["held_out"] else ""),
           "recorded on %s, torch %s; workloads: %s" % (r["device"], r["torch"], ", ".join(r["workloads"])),
           "findings: default %d %s; --include-cold %d" % (d["findings"], d["findings_by_rule"], c["findings"]),
           "synced only in another library (not scored as syncs): %d statements; events outside the package: %s"
           % (r["synced_in_other_library"], r["events_outside_package"])]
    if r["workload_errors"]:
        out.append("workload errors: %s" % r["workload_errors"])
    out.append("MISSED with --include-cold (%d):" % len(c["missed"]))
    for m in c["missed"]:
        out.append("  %s:%d  %s  events=%s  [%s]" % (
            m["file"], m["line"], m["code"], m["events"], ", ".join(m["workloads"][:2])))
    cold_only = {(m["file"], m["line"]) for m in d["missed"]} - {(m["file"], m["line"]) for m in c["missed"]}
    out.append("caught only with --include-cold (%d): %s" % (len(cold_only), ", ".join(
        "%s:%d" % s for s in sorted(cold_only))))
    callee_ok = {(m["file"], m["line"]) for m in d["false_alarms"]} - {
        (m["file"], m["line"]) for m in d["false_alarms_callee"]}
    out.append("FALSE ALARMS in the default mode (%d; ran, no sync attributed to the statement):"
               % len(d["false_alarms"]))
    for m in d["false_alarms"]:
        out.append("  %s:%d  %s [%s]  %s%s" % (m["file"], m["line"], ",".join(m["rules"]), ",".join(m["frequency"]),
                                               m["code"], "  (synced in a callee)" if (m["file"], m["line"]) in
                                               callee_ok else ""))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", default="", help="comma-separated names from bench/truth/corpus.toml")
    ap.add_argument("--heldout", action="store_true", help="score the held-out packages (only them); run it last")
    ap.add_argument("--quiet", action="store_true", help="print the table only, not the per-line lists")
    ap.add_argument("--linter-src", metavar="DIR", default=REPO,
                    help="folder holding another torchsync_lint package to score (e.g. `git archive` of a commit)")
    args = ap.parse_args(argv)
    global LINTER_SRC
    LINTER_SRC = os.path.abspath(args.linter_src)
    if not os.path.isfile(os.path.join(LINTER_SRC, "torchsync_lint", "__init__.py")):
        print("score_corpus: no torchsync_lint package in %s" % LINTER_SRC, file=sys.stderr)
        return 2
    corpus = load_corpus()
    by_name = {p["name"]: p for p in corpus}
    names = [n for n in args.packages.split(",") if n]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        print("score_corpus: unknown package(s) %s; bench/truth/corpus.toml has %s" % (
            ", ".join(unknown), ", ".join(by_name)), file=sys.stderr)
        return 2
    chosen = [by_name[n] for n in names] if names else corpus
    chosen = [p for p in chosen if bool(p.get("held_out")) == args.heldout]
    if not chosen:
        print("score_corpus: nothing to score (held-out packages need --heldout, the others must not have it)",
              file=sys.stderr)
        return 2
    results = []
    for pkg in chosen:
        try:
            results.append(score_package(pkg))
        except (RuntimeError, FileNotFoundError, OSError) as exc:
            print("score_corpus: %s: %s" % (pkg["name"], exc), file=sys.stderr)
            return 1
    text = summary_table(results)
    if not args.quiet:
        for r in results:
            text += details(r)
    print("\n".join(text))
    os.makedirs(RESULTS_DIR, exist_ok=True)
    stem = os.path.join(RESULTS_DIR, "score-%s" % ("heldout" if args.heldout else "dev"))
    with open(stem + ".json", "w") as fh:
        json.dump({"totals": totals(results), "packages": results}, fh, indent=1)
    with open(stem + ".md", "w") as fh:
        fh.write("# torchsync-lint against GPU truth\n\n```\n" + "\n".join(text) + "\n```\n")
    print("\nreport: %s.json, %s.md" % (os.path.relpath(stem), os.path.relpath(stem)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
