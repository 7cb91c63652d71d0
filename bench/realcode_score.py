"""Score the linter against syncs recorded on a GPU in code nobody here wrote (torchvision 0.26.0).

    python bench/realcode_score.py [--data bench/data/torchvision-0.26.0-syncs.json ...] [--json OUT]

Needs no torch. Takes the sync events and executed lines recorded by bench/realcode_record.py,
lints the same torchvision release (the wheel's .py files, bench/corpus/torchvision-0.26.0/, fetched
by bench/corpus.py when missing) with the CLI's default settings, and compares at statement
granularity: every line maps to the innermost statement containing it (a compound statement's
header lines - ``if x.any():``, ``for c in torch.unique(i):`` - form a statement of their own).

- recall = runtime sync statements that are flagged / runtime sync statements
  (a runtime sync statement: the innermost torchvision statement an oracle attributed a sync to)
- precision = flagged statements that ran and synced / flagged statements that ran
  (in the scored files: torchvision/models/detection/, torchvision/ops/, and any other file with
  a sync or an executed flagged line). "chain" variants also count a statement as synced when a sync
  happened inside a torchvision function it called (the event's call chain), and a sync as caught
  when a statement on its chain is flagged.

A sync whose innermost line is torchvision's own ``__torch_function__`` dispatcher (tv_tensors) is
attributed to the calling line, as for torch's frames. ``--include-cold`` lints a second time with
cold code included and marks the misses that only the hotness filter hides.
"""

from __future__ import annotations

import argparse
import ast
import collections
import glob
import json
import os
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PACKAGE, VERSION = "torchvision", "0.26.0"
# detection suite (syncs.json) and other families + transforms (syncs-more.json)
DEFAULT_DATA = sorted(glob.glob(os.path.join(HERE, "data", f"{PACKAGE}-{VERSION}-syncs*.json")))
SCORED_DIRS = ("torchvision/models/detection/", "torchvision/ops/")
# torchvision's own __torch_function__ dispatcher (tv_tensors): a sync there belongs to the caller's line,
# as for torch's own frames
DISPATCH_LINES = {("torchvision/tv_tensors/_tv_tensor.py", "output = func(*args, **kwargs or dict())")}
Stmt = Tuple[str, int]  # (file relative to the corpus root, first line of the statement)


def corpus_root() -> str:
    root = os.path.join(HERE, "corpus", f"{PACKAGE}-{VERSION}")
    if not os.path.isfile(os.path.join(root, ".complete")):
        sys.path.insert(0, HERE)
        import corpus  # bench/corpus.py: pip download --no-deps --only-binary=:all: + extract .py

        corpus.fetch(packages=((PACKAGE, VERSION),))
    return root


class StatementMap:
    """Line -> innermost statement, per file (compound statements contribute their header)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._maps: Dict[str, Dict[int, int]] = {}
        self._lines: Dict[str, List[str]] = {}

    def _build(self, rel: str) -> Dict[int, int]:
        path = os.path.join(self.root, rel)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        self._lines[rel] = text.splitlines()
        spans = []
        for node in ast.walk(ast.parse(text)):
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
        return mapping

    def stmt(self, rel: str, line: int) -> Optional[Stmt]:
        if rel not in self._maps:
            try:
                self._maps[rel] = self._build(rel)
            except (OSError, SyntaxError):
                self._maps[rel] = {}
        start = self._maps[rel].get(line)
        return (rel, start) if start is not None else None

    def text(self, stmt: Stmt, width: int = 100) -> str:
        lines = self._lines.get(stmt[0], [])
        s = lines[stmt[1] - 1].strip() if 0 < stmt[1] <= len(lines) else ""
        return s if len(s) <= width else s[: width - 3] + "..."


def lint(root: str, extra: Tuple[str, ...] = ()) -> List[dict]:
    """The CLI with its default settings (--isolated: no pyproject.toml of ours)."""
    cmd = [sys.executable, "-m", "torchsync_lint", "--isolated", "--no-respect-gitignore", "--format", "json", "--exit-zero",
           *extra, os.path.join(root, PACKAGE)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode not in (0, 1):
        raise SystemExit("lint failed (%d): %s" % (proc.returncode, proc.stderr[-2000:]))
    findings = json.loads(proc.stdout or "[]")
    for f in findings:
        path = os.path.abspath(os.path.join(REPO, f["path"]))
        f["rel"] = os.path.relpath(path, root).replace(os.sep, "/")
    return findings


def score(data: dict, root: str, findings: List[dict]) -> dict:
    smap = StatementMap(root)
    sync_events: Dict[Stmt, collections.Counter] = collections.defaultdict(collections.Counter)
    sync_models: Dict[Stmt, Set[str]] = collections.defaultdict(set)
    chain_of: Dict[Stmt, Set[Stmt]] = collections.defaultdict(set)  # sync stmt -> enclosing call stmts
    in_chain: Set[Stmt] = set()
    executed: Set[Stmt] = set()
    outside = collections.Counter()  # events not attributable to a torchvision line
    for model, entry in data["models"].items():
        for rel, lines in entry.get("executed", {}).items():
            for ln in lines:
                s = smap.stmt(rel, ln)
                if s:
                    executed.add(s)
        for ev in entry.get("events", []):
            if not ev["file"].startswith(PACKAGE + "/"):
                outside[(ev["phase"], ev["oracle"])] += ev["count"]
                continue
            s = smap.stmt(ev["file"], ev["line"])
            chain = ev.get("chain", [])
            if s is not None and (s[0], smap.text(s, 1000)) in DISPATCH_LINES and chain:
                s = smap.stmt(*chain[0])
                chain = chain[1:]
            if s is None:
                outside[("unmapped", ev["oracle"])] += ev["count"]
                continue
            sync_events[s][ev["oracle"]] += ev["count"]
            sync_models[s].add("%s/%s" % (model, ev["phase"]))
            for rel, ln in chain:
                c = smap.stmt(rel, ln)
                if c and c != s:
                    chain_of[s].add(c)
                    in_chain.add(c)

    flagged: Dict[Stmt, Set[str]] = collections.defaultdict(set)
    for f in findings:
        s = smap.stmt(f["rel"], f["line"])
        if s:
            flagged[s].add(f["code"])

    syncs = set(sync_events)
    sync_files = {s[0] for s in syncs}
    scored_files = lambda rel: rel.startswith(SCORED_DIRS) or rel in sync_files  # noqa: E731
    flagged_in_scope = {s for s in flagged if scored_files(s[0]) or s in executed}
    flagged_ran = {s for s in flagged_in_scope if s in executed}
    caught = {s for s in syncs if s in flagged}
    caught_chain = {s for s in syncs if s in flagged or chain_of[s] & set(flagged)}
    true_pos = {s for s in flagged_ran if s in syncs}
    true_pos_chain = {s for s in flagged_ran if s in syncs or s in in_chain}

    def rows(stmts, with_events):
        out = []
        for s in sorted(stmts):
            row = {"file": s[0], "line": s[1], "code": smap.text(s), "rules": sorted(flagged.get(s, ()))}
            if with_events:
                row["events"] = dict(sync_events[s])
                row["models"] = sorted(sync_models[s])
            out.append(row)
        return out

    ratio = lambda a, b: round(len(a) / len(b), 4) if b else None  # noqa: E731
    return {
        "torch": data.get("torch"), "torchvision": data.get("torchvision"), "device": data.get("device"),
        "models": sorted(data["models"]),
        "events_by_oracle": dict(sum((collections.Counter({e["oracle"]: e["count"]})
                                      for m in data["models"].values() for e in m["events"]),
                                     collections.Counter())),
        "events_outside_torchvision": {"%s/%s" % k: v for k, v in sorted(outside.items())},
        "findings_total": len(findings),
        "findings_by_rule": dict(collections.Counter(f["code"] for f in findings).most_common()),
        "scored_files": sorted({s[0] for s in flagged_in_scope | syncs}),
        "sync_statements": len(syncs),
        "recall": {"flagged": len(caught), "of": len(syncs), "value": ratio(caught, syncs)},
        "recall_chain": {"flagged": len(caught_chain), "of": len(syncs), "value": ratio(caught_chain, syncs)},
        "flagged_statements_in_scope": len(flagged_in_scope),
        "flagged_statements_not_run": len(flagged_in_scope - flagged_ran),
        "precision": {"synced": len(true_pos), "of": len(flagged_ran), "value": ratio(true_pos, flagged_ran)},
        "precision_chain": {"synced": len(true_pos_chain), "of": len(flagged_ran),
                            "value": ratio(true_pos_chain, flagged_ran)},
        "missed": rows(syncs - caught, True),
        "false_positives": rows(flagged_ran - true_pos, False),
        "false_positives_chain": rows(flagged_ran - true_pos_chain, False),
        "true_positives": rows(true_pos, True),
        "not_run_by_rule": dict(collections.Counter(
            c for s in flagged_in_scope - flagged_ran for c in flagged[s]).most_common()),
    }


def report(r: dict) -> str:
    pct = lambda v: "n/a" if v is None else "%.1f%%" % (100 * v)  # noqa: E731
    out = [
        "recorded on %s, torch %s, torchvision %s; models: %s" % (
            r["device"], r["torch"], r["torchvision"], ", ".join(r["models"])),
        "sync events by oracle: %s; outside torchvision lines: %s" % (
            r["events_by_oracle"], r["events_outside_torchvision"]),
        "findings in torchvision: %d %s" % (r["findings_total"], r["findings_by_rule"]),
        "scored files: %d (detection/, ops/, plus files with a sync or an executed finding)" % len(r["scored_files"]),
        "",
        "RECALL    %s  = %d flagged / %d runtime sync statements   (chain: %s = %d/%d)" % (
            pct(r["recall"]["value"]), r["recall"]["flagged"], r["recall"]["of"],
            pct(r["recall_chain"]["value"]), r["recall_chain"]["flagged"], r["recall_chain"]["of"]),
        "PRECISION %s  = %d synced / %d flagged statements that ran   (chain: %s = %d/%d)" % (
            pct(r["precision"]["value"]), r["precision"]["synced"], r["precision"]["of"],
            pct(r["precision_chain"]["value"]), r["precision_chain"]["synced"], r["precision_chain"]["of"]),
        "flagged statements in scope that never ran (not scored): %d %s" % (
            r["flagged_statements_not_run"], r["not_run_by_rule"]),
        "",
        "MISSED syncs (%d):" % len(r["missed"]),
    ]
    for m in r["missed"]:
        out.append("  %s:%d  %s  events=%s  [%s]%s" % (
            m["file"], m["line"], m["code"], m["events"], ", ".join(m["models"][:3]),
            "  (caught with --include-cold)" if m.get("cold_filtered") else ""))
    out.append("FALSE POSITIVES (%d; ran, no sync attributed to the statement):" % len(r["false_positives"]))
    for m in r["false_positives"]:
        chain_ok = all((m["file"], m["line"]) != (c["file"], c["line"]) for c in r["false_positives_chain"])
        out.append("  %s:%d  %s  %s%s" % (m["file"], m["line"], ",".join(m["rules"]), m["code"],
                                          "  (synced in a callee)" if chain_ok else ""))
    if "include_cold" in r:
        ic = r["include_cold"]
        out.append("with --include-cold: recall %s (%d/%d), precision %s (%d/%d), %d findings" % (
            pct(ic["recall"]["value"]), ic["recall"]["flagged"], ic["recall"]["of"],
            pct(ic["precision"]["value"]), ic["precision"]["synced"], ic["precision"]["of"], ic["findings_total"]))
    out.append("TRUE POSITIVES (%d):" % len(r["true_positives"]))
    for m in r["true_positives"]:
        out.append("  %s:%d  %s  %s" % (m["file"], m["line"], ",".join(m["rules"]), m["code"]))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=DEFAULT_DATA, help="recordings (models are merged)")
    ap.add_argument("--json", metavar="OUT", help="also write the full result as JSON")
    ap.add_argument("--include-cold", action="store_true",
                    help="lint with --include-cold too and mark the misses it would catch (hotness filter)")
    args = ap.parse_args(argv)
    data: dict = {}
    for path in args.data:
        with open(path) as fh:
            one = json.load(fh)
        models = dict(data.get("models", {}), **one["models"])
        data.update(one)
        data["models"] = models
    root = corpus_root()
    result = score(data, root, lint(root))
    if args.include_cold:
        cold = score(data, root, lint(root, ("--include-cold",)))
        caught = {(m["file"], m["line"]) for m in cold["true_positives"]}
        for m in result["missed"]:
            m["cold_filtered"] = (m["file"], m["line"]) in caught
        result["include_cold"] = {k: cold[k] for k in ("recall", "precision", "findings_total")}
    print(report(result))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
