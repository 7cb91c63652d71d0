"""Verify findings: build jobs, run them in child processes, join the evidence, decide each status."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from torchsync_lint.finding import Finding
from torchsync_lint.verify import fixes as fixes_mod
from torchsync_lint.verify import runner, snippet
from torchsync_lint.verify.attribution import Span, SyncEvent, attribute, norm
from torchsync_lint.verify.status import CONFIRMED, REFUTED, Evidence, decide, merge

UNFLAGGED_CODE = "TSL900"
UNFLAGGED_NAME = "unflagged-sync"
TIMING_SHARE = 0.4  # an interval synced when its host time grew by this share of the queued sleep


class VerifyUnavailable(Exception):
    """No CUDA device (or no torch) for ``--verify``: exit code 2 with this message."""


@dataclass
class VerifyOptions:
    mode: str = "gpu"  # "gpu" or "predict"
    entries: List[str] = field(default_factory=list)
    fixes: bool = False
    timeout: float = 60.0
    python: Optional[str] = None
    sleep_ms: float = 20.0
    short_sleep_ms: float = 5.0  # snippet mode times with this; the long sleep only where it cannot tell
    reps: int = 3
    sys_path: List[str] = field(default_factory=list)
    inputs: Optional[str] = None  # a recorded-inputs file (trace --record-inputs): replay with observed values
    children: int = 0  # child processes for snippet mode (0: by the number of files and findings)


@dataclass
class VerifyReport:
    findings: List[Finding]
    device: Optional[str] = None
    torch: Optional[str] = None
    unlocated: int = 0
    entry_call_ms: Dict[str, float] = field(default_factory=dict)
    entry_syncs: Dict[str, dict] = field(default_factory=dict)  # per entry: syncs seen in one call
    entry_failures: Dict[str, str] = field(default_factory=dict)


def _settings(opts: VerifyOptions) -> dict:
    return {"sleep_ms": opts.sleep_ms, "short_sleep_ms": opts.short_sleep_ms, "reps": opts.reps}


def _timing(lines: Sequence, span: Span, sleep_us: Optional[float]) -> Tuple[Optional[int], Optional[float]]:
    """(intervals that absorbed the sleep, largest excess in us) over the statement's lines."""
    if not sleep_us or lines is None:
        return None, None
    threshold = TIMING_SHARE * sleep_us
    synced, best, seen = 0, None, False
    for path, line, excess, *_ in lines:
        if norm(path) != span.path or not span.contains_line(line):
            continue
        seen = True
        for x in excess:
            best = x if best is None else max(best, x)
            if x > threshold:
                synced += 1
    if not seen:
        return 0, None
    return synced, best


def _roots(hello: Optional[dict]) -> List[str]:
    return list((hello or {}).get("library_roots", []))


def _library_filter(raw: Iterable[dict]) -> List[SyncEvent]:
    """Events whose frames carry the child's own is-library flag (7th element) keep only user frames."""
    out = []
    for e in raw or []:
        frames = [f for f in e.get("frames", []) if not (len(f) > 6 and f[6])]
        out.append(SyncEvent.from_json(dict(e, frames=frames)))
    return out


class Verifier:
    def __init__(self, findings: List[Finding], opts: VerifyOptions, linted: Iterable[str] = (),
                 hot_functions: Sequence[str] = (), on_note: Optional[Callable[[str], None]] = None,
                 started: Sequence[runner.Started] = ()) -> None:
        self.findings = findings
        self.opts = opts
        self.linted = {norm(p) for p in linted} | {norm(f.path) for f in findings}
        self.hot_functions = tuple(hot_functions)
        self.note = on_note or (lambda msg: None)
        self.extracted: Dict[int, snippet.Extracted] = {}
        self.hello: Optional[dict] = None
        self.report = VerifyReport(findings)
        self._started: List[runner.Started] = list(started)  # children started before the lint (``prestart``)
        self._t_started: Optional[float] = time.monotonic() if started else None
        self.child_startups: List[dict] = []
        self.child_times: List[dict] = []  # per snippet child: time.monotonic() of its steps (runner)

    # -- extraction -------------------------------------------------------------------------
    def recorded(self) -> Dict[str, List[dict]]:
        """Recorded function entries per real path (``--inputs``)."""
        if not self.opts.inputs:
            return {}
        from torchsync_lint.guard.inputs import load

        try:
            records = load(self.opts.inputs)
        except (OSError, ValueError) as exc:
            raise VerifyUnavailable(f"--inputs {self.opts.inputs}: {exc}") from exc
        out: Dict[str, List[dict]] = {}
        for r in records:
            out.setdefault(norm(r["path"]), []).append(r)
        self.note(f"verify: {len(records)} recorded function entries from {self.opts.inputs}")
        return out

    def extract(self) -> None:
        by_file: Dict[str, List[Tuple[int, Finding]]] = {}
        for i, f in enumerate(self.findings):
            by_file.setdefault(f.path, []).append((i, f))
        recorded = self.recorded()
        jobs = [(path, items, self.hot_functions, recorded.get(norm(path), [])) for path, items in by_file.items()]
        workers = _workers(len(jobs))
        if workers > 1 and not self.opts.fixes:  # files are independent: extract them on every core
            import concurrent.futures as cf
            import multiprocessing as mp

            try:
                ctx = mp.get_context("fork")
                with cf.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
                    for got in pool.map(_extract_plain, jobs, chunksize=1):
                        self.extracted.update(got)
                return
            except (OSError, ValueError, cf.process.BrokenProcessPool):
                self.extracted.clear()  # no processes here: one by one below
        for job in jobs:
            self.extracted.update(snippet.extract_file(*job, nodes=self.opts.fixes))

    def spans(self) -> Dict[int, Span]:
        return {k: ex.span for k, ex in self.extracted.items()}

    def _check_hello(self, res: runner.JobResult) -> None:
        if res.hello is not None and self.hello is None:
            self.hello = res.hello
            self.report.device = res.hello.get("device")
            self.report.torch = res.hello.get("torch")
        if res.no_torch:
            raise VerifyUnavailable(f"--verify needs torch in {self.opts.python or sys.executable}: {res.fatal}")
        if self.opts.mode == "gpu" and (res.no_cuda or (res.hello is not None and not res.hello.get("cuda"))):
            torch_v = (res.hello or {}).get("torch", "?")
            raise VerifyUnavailable(
                f"--verify needs a CUDA device, and torch {torch_v} sees none; "
                "use --verify=predict for a CPU-only prediction (labelled 'predicted', never 'confirmed')")

    # -- snippet mode -----------------------------------------------------------------------
    def snippet_jobs(self, with_fixes: bool) -> List[dict]:
        """One job for every finding of the run: one child process (restarted only after a crash, a
        hang or a broken CUDA context) imports each file once and runs the tasks file by file."""
        by_file: Dict[str, List[int]] = {}
        for key, ex in self.extracted.items():
            if ex.failure is None and ex.stmt is not None:
                by_file.setdefault(ex.span.path, []).append(key)
        groups: List[List[dict]] = []
        tasks: List[dict] = []
        for path, keys in sorted(by_file.items()):
            info = snippet.module_info(path)
            for key in sorted(keys):
                ex = self.extracted[key]
                f = self.findings[key]
                task = {"id": key, "path": ex.span.path, "file": info, "stmt": ex.stmt, "expr": ex.expr,
                        "specs": ex.specs, "self": ex.self_spec, "code": f.code}
                if with_fixes:
                    task["fix"] = fixes_mod.rewrite(f.code, ex.stmt_node, ex.node, ex.stmt["line"], ex.stmt["col"])
                tasks.append(task)
        if not tasks:
            return []
        # several children on the one GPU, each a share of the files (a file's tasks stay together:
        # its module is imported once); the timing oracle holds under contention, since a sync still
        # waits for the child's own queued sleep and a statement that does not sync waits for nothing
        n = self.n_children()
        if n > 1:
            size: Dict[int, int] = {}
            buckets: Dict[int, List[dict]] = {i: [] for i in range(n)}
            for path in sorted(by_file, key=lambda p: -len(by_file[p])):
                i = min(range(n), key=lambda b: size.get(b, 0))
                chosen = [t for t in tasks if t["path"] == self.extracted[by_file[path][0]].span.path]
                buckets[i].extend(chosen)
                size[i] = size.get(i, 0) + len(chosen)
            groups = [sorted(b, key=lambda t: (t["path"], t["id"])) for b in buckets.values() if b]
        else:
            groups = [tasks]
        return [{"kind": "snippet", "mode": self.opts.mode, "settings": _settings(self.opts),
                 "sys_path": self.opts.sys_path + [os.getcwd()], "tasks": g} for g in groups]

    def n_children(self) -> int:
        """Child processes for snippet mode: by the files and findings of the run (known before
        extraction, so that the children can start while it runs)."""
        if self.opts.children:
            return self.opts.children
        return _children(len({f.path for f in self.findings}), len(self.findings))

    def start_children(self) -> None:
        """Start the snippet children now: their torch import, CUDA initialisation and sleep
        calibration overlap the extraction (they wait for their job on stdin)."""
        if os.environ.get("TORCHSYNC_VERIFY_NO_PRESTART"):
            return
        more = self.n_children() - len(self._started)
        self._started += [runner.start(self.opts.mode, _settings(self.opts), self.opts.python)
                          for _ in range(max(0, more))]
        self._t_started = self._t_started or time.monotonic()

    def _close_started(self) -> None:
        for st in self._started:
            st.close()
        self._started = []

    def run_snippets(self, with_fixes: bool) -> Dict[int, dict]:
        jobs = self.snippet_jobs(with_fixes)
        started = list(self._started)
        self._started = []
        pairs = [(job, started.pop(0) if started else None) for job in jobs]
        for st in started:  # fewer jobs than children (findings the extraction gave up on)
            st.close()
        if len(pairs) > 1:
            import concurrent.futures as cf

            results: Dict[int, dict] = {}
            with cf.ThreadPoolExecutor(len(pairs)) as pool:
                for res in pool.map(lambda pair: self._run_snippet_job(*pair), pairs):
                    results.update(res)
            return results
        return self._run_snippet_job(*pairs[0]) if pairs else {}

    def _run_snippet_job(self, job: dict, pre: Optional[runner.Started] = None) -> Dict[int, dict]:
        results: Dict[int, dict] = {}
        for job in [job]:
            files = {t["id"]: t["path"] for t in job["tasks"]}
            n_files = len(set(files.values()))
            started: Dict[str, int] = {}

            def progress(msg: str, files=files, started=started, n_files=n_files) -> None:
                key = int(msg.split()[-1]) if msg.split()[-1].isdigit() else None
                path = files.get(key)
                if path is not None and path not in started:
                    started[path] = len(started) + 1
                    count = sum(1 for p in files.values() if p == path)
                    self.note(f"verify: {path} ({count} finding(s), file {started[path]}/{n_files})")

            res = runner.run_job(job, self.opts.timeout, python=self.opts.python, on_progress=progress,
                                 started=pre)
            self._check_hello(res)
            if res.hello:
                self.child_startups.append(dict(res.hello.get("startup") or {}))
            self.child_times.append(dict(res.times))
            results.update(res.results)
        return results

    def snippet_evidence(self, key: int, r: dict) -> Evidence:
        ex = self.extracted[key]
        mode = "predict" if self.opts.mode == "predict" else "snippet"
        ev = Evidence(mode=mode, label="snippet")
        if r.get("failure"):
            ev.failure = r["failure"]
            return ev
        # the other findings on the same statement take the syncs their own columns point at
        spans = {k: e.span for k, e in self.extracted.items()
                 if k == key or (e.span.path == ex.span.path and e.span.stmt_line == ex.span.stmt_line)}
        roots = _roots(self.hello)
        att = attribute(_library_filter(r.get("events")), spans, self.linted, roots)
        ev.events = att.by_finding.get(key, [])
        ev.timing_syncs, ev.timing_excess_us = _timing(r.get("lines"), ex.span, r.get("sleep_us"))
        if mode == "predict":
            ev.timing_syncs = None
        ev.ran = bool(r.get("ran"))
        ev.error = r.get("error") or (r.get("cpu_error") if not ev.ran else None)
        ev.guessed = list(r.get("guessed") or [])
        ev.observed = list(r.get("observed") or [])
        ev.inputs = r.get("inputs")
        ev.notes = list(ex.notes)
        if not ev.ran and not ev.events and not (ev.timing_syncs or 0) and r.get("expr"):
            xr = r["expr"]
            xatt = attribute(_library_filter(xr.get("events")), spans, self.linted, roots)
            xevents = xatt.by_finding.get(key, [])
            xsyncs, xexcess = _timing(xr.get("lines"), ex.span, xr.get("sleep_us"))
            if xevents or (xsyncs or 0) > 0:
                ev.events = xevents
                ev.guessed = sorted(set(ev.guessed) | set(xr.get("guessed") or []))
                ev.inputs = xr.get("inputs") or ev.inputs
                ev.timing_syncs, ev.timing_excess_us = (xsyncs, xexcess) if mode != "predict" else (None, None)
                ev.notes.append("measured on the flagged expression alone (the statement needs inputs "
                                f"that could not be synthesised: {ev.error})")
                ev.error = None
        if "inside a generator expression" in ev.notes and not ev.events and not (ev.timing_syncs or 0):
            ev.ran = False
            ev.error = ev.error or "the generator expression may not have been consumed"
        return ev

    def fix_record(self, key: int, r: dict) -> Optional[dict]:
        f = self.findings[key]
        ex = self.extracted[key]
        spec = fixes_mod.rewrite(f.code, ex.stmt_node, ex.node, ex.stmt["line"], ex.stmt["col"],
                                 fix=getattr(f, "fix", None)) if ex.stmt else None
        if spec is None or spec.get("none"):
            return {"status": "no-rewrite", "reason": (spec or {}).get("none", "no statement")}
        fr = r.get("fix")
        if not fr:
            return {"status": "not-run", "rewrite": spec["src"],
                    "reason": r.get("failure") or r.get("cpu_error") or "the statement did not run"}
        n_lines = spec["src"].count("\n")
        span = Span(ex.span.path, spec["line"], spec["col"], spec["line"] + n_lines, 10_000,
                    spec["line"], spec["line"] + n_lines)
        att = attribute(_library_filter(fr.get("events")), {key: span}, self.linted, _roots(self.hello))
        ev = Evidence(mode="snippet", events=att.by_finding.get(key, []), ran=not fr.get("error"),
                      error=fr.get("error"))
        ev.timing_syncs, ev.timing_excess_us = _timing(fr.get("lines"), span, fr.get("sleep_us"))
        rec = decide(ev)
        out = {"rewrite": spec["src"], "sync_free": rec["status"] == REFUTED,
               "same_values": fr.get("same_values"), "status": rec["status"]}
        if rec.get("reason"):
            out["reason"] = rec["reason"]
        if fr.get("difference"):
            out["difference"] = fr["difference"]
        return out

    # -- entry mode -------------------------------------------------------------------------
    def run_entry(self, ref: str) -> Tuple[Dict[int, Evidence], List[Finding], dict]:
        job = {"kind": "entry", "mode": self.opts.mode, "entry": ref, "settings": _settings(self.opts),
               "sys_path": self.opts.sys_path + [os.getcwd()], "traced": sorted(self.linted),
               "tasks": [{"id": 0}]}
        self.note(f"verify: entry {ref}")
        res = runner.run_job(job, self.opts.timeout * 4, python=self.opts.python)
        self._check_hello(res)
        r = res.results.get(0, {"failure": res.fatal or "no result"})
        mode = "predict" if self.opts.mode == "predict" else "entry"
        out: Dict[int, Evidence] = {}
        spans = self.spans()
        if r.get("failure"):
            self.note(f"verify: entry {ref} failed: {r['failure']}")
            self.report.entry_failures[ref] = r["failure"]
            for key in spans:
                out[key] = Evidence(mode=mode, label=f"entry {ref}", failure=f"entry {ref}: {r['failure']}")
            return out, [], r
        att = attribute(_library_filter(r.get("events")), spans, self.linted, _roots(self.hello))
        executed = {(norm(p), ln) for p, ln in r.get("executed", [])}
        for key, span in spans.items():
            ev = Evidence(mode=mode, label=f"entry {ref}", events=att.by_finding.get(key, []))
            if mode != "predict":
                ev.timing_syncs, ev.timing_excess_us = _timing(r.get("lines"), span, r.get("sleep_us"))
                ev.ran = any((span.path, ln) in executed for ln in range(span.stmt_line, span.stmt_end_line + 1))
            else:
                ev.ran = bool(ev.events)
            if not ev.ran and not ev.events:
                ev.timing_syncs = None
            ev.error = r.get("error") if not ev.ran else None
            out[key] = ev
        extra = []
        for (path, line), events in sorted(att.unflagged.items()):
            span = Span(path, line, 0, line, 10_000, line, line)
            ev = Evidence(mode=mode, label=f"entry {ref}", events=events, ran=True)
            if mode != "predict":
                ev.timing_syncs, ev.timing_excess_us = _timing(r.get("lines"), span, r.get("sleep_us"))
                if ev.timing_syncs == 0 and not any(norm(p) == path and ln == line for p, ln, *_ in r.get("lines", [])):
                    ev.timing_syncs = None  # the line's file was not traced: only the event oracles saw it
            rec = decide(ev)
            frame = next((fr for e in events for fr in e.frames if fr.path == path and fr.line == line), None)
            col = (frame.col + 1) if frame is not None and frame.col is not None else 1
            end_col = (frame.end_col + 1) if frame is not None and frame.end_col is not None and \
                frame.end_line == line else col
            ops = rec.get("ops") or []
            what = f" ({', '.join(ops)})" if ops else ""
            extra.append(Finding(_display(path), line, col, line, end_col, UNFLAGGED_CODE, UNFLAGGED_NAME,
                                 f"a host-device sync ran here{what} that no rule flagged "
                                 "(a static blind spot: see docs/verify.md)", function=None,
                                 temperature="unknown", verify=rec))
        self.report.unlocated += len(att.unlocated)
        if r.get("call_ms") is not None:
            self.report.entry_call_ms[ref] = r["call_ms"]
        on_findings = sum(e.count for evs in att.by_finding.values() for e in evs)
        on_unflagged = sum(e.count for evs in att.unflagged.values() for e in evs)
        self.report.entry_syncs[ref] = {"on_findings": on_findings, "unflagged": on_unflagged,
                                        "no_user_frame": sum(e.count for e in att.unlocated),
                                        "call_ms": r.get("call_ms"), "error": r.get("error")}
        return out, extra, r

    # -- all --------------------------------------------------------------------------------
    def run(self) -> VerifyReport:
        t0 = time.monotonic()
        if self.findings and not self.opts.entries:
            self.start_children()
        try:
            return self._run(t0)
        finally:
            self._close_started()

    def _run(self, t0: float) -> VerifyReport:
        self.extract()
        t_extracted = time.monotonic()
        records: Dict[int, List[dict]] = {k: [] for k in range(len(self.findings))}
        fix_records: Dict[int, dict] = {}
        for key, ex in self.extracted.items():
            if ex.failure:
                records[key].append(decide(Evidence(mode="snippet", failure=ex.failure, label="snippet")))
        extra: List[Finding] = []
        if self.opts.entries:
            seen_unflagged: Dict[Tuple[str, int], Finding] = {}
            for ref in self.opts.entries:
                evidence, unflagged, _ = self.run_entry(ref)
                for key, ev in evidence.items():
                    if self.extracted[key].failure and not ev.events:
                        continue
                    records[key].append(decide(ev))
                for f in unflagged:
                    k = (f.path, f.line)
                    if k in seen_unflagged:
                        seen_unflagged[k].verify = merge([seen_unflagged[k].verify, f.verify])
                    else:
                        seen_unflagged[k] = f
                        extra.append(f)
            if self.opts.fixes and self.findings:
                results = self.run_snippets(with_fixes=True)
                for key, r in results.items():
                    fix_records[key] = self.fix_record(key, r)
        elif self.findings:
            results = self.run_snippets(with_fixes=self.opts.fixes)
            self._note_times(t0, t_extracted, results)
            for key, r in results.items():
                rec = decide(self.snippet_evidence(key, r))
                if r.get("seconds") is not None:
                    rec["seconds"] = r["seconds"]  # time in the child for this finding
                records[key].append(rec)
                if self.opts.fixes:
                    fix_records[key] = self.fix_record(key, r)
        elif self.opts.mode == "gpu":
            self.probe()
        for key, f in enumerate(self.findings):
            # a finding the extraction gave up on keeps that reason unless an entry reached it
            recs = records.get(key) or []
            if len(recs) > 1 and self.extracted.get(key) and self.extracted[key].failure:
                recs = recs[1:] if any(r["status"] == CONFIRMED for r in recs[1:]) else recs
            f.verify = merge(recs)
            if self.opts.fixes and key in fix_records and fix_records[key] is not None:
                f.verify["fix"] = fix_records[key]
        self.report.findings = sorted(self.findings + extra, key=Finding.sort_key)
        return self.report

    def _note_times(self, t0: float, t_extracted: float, results: Dict[int, dict]) -> None:
        """Where the time went (bench/verify_speed.py prints this line)."""
        secs = [r["seconds"] for r in results.values() if r.get("seconds") is not None]
        imports = [r["import_s"] for r in results.values() if r.get("import_s") is not None]
        st = self.child_startups
        def worst(key):
            vals = [x[key] for x in st if x.get(key) is not None]
            return f"{max(vals):.2f}" if vals else "?"
        self.note(f"verify: time: extraction {t_extracted - t0:.2f} s, children {len(st)} (torch import "
                  f"{worst('torch_import_s')} s, CUDA init {worst('cuda_init_s')} s, calibration "
                  f"{worst('calibrate_s')} s, the slowest of each), module imports {sum(imports):.2f} s, "
                  f"tasks {sum(secs) - sum(imports):.2f} s (sum over children), snippets done after "
                  f"{time.monotonic() - t0:.2f} s")
        # the timeline, from the first child's start (before the lint when started ahead)
        ref = min([t["spawned"] for t in self.child_times if "spawned" in t] + [t0])
        steps = ("ready", "preloaded", "job_sent", "begin", "done")
        kids = "; ".join(" ".join(f"{k} {t[k] - ref:.2f}" for k in steps if k in t) for t in self.child_times)
        self.note(f"verify: timeline (s after the first child started): verify began {t0 - ref:.2f}, extraction "
                  f"done {t_extracted - ref:.2f}, children: {kids}")

    def probe(self) -> None:
        """No findings to run: still say whether a CUDA device is there (exit 2 when not)."""
        job = {"kind": "probe", "mode": self.opts.mode, "settings": _settings(self.opts), "tasks": []}
        res = runner.run_job(job, self.opts.timeout, python=self.opts.python)
        self._check_hello(res)


def _children(n_files: int, n_tasks: int) -> int:
    env = os.environ.get("TORCHSYNC_VERIFY_CHILDREN")
    if env and env.isdigit():
        return max(1, int(env))
    if n_tasks < 40 or n_files < 4:
        return 1
    return max(1, min(4, n_files // 4, (os.cpu_count() or 1) // 2))


def _workers(n_files: int) -> int:
    if n_files < 4 or os.environ.get("TORCHSYNC_VERIFY_SERIAL"):
        return 1
    return max(1, min(n_files // 2, os.cpu_count() or 1, 16))


def _extract_plain(job) -> Dict[int, "snippet.Extracted"]:
    """One file's extraction in a worker process, without the syntax nodes (they are for rewrites)."""
    out = snippet.extract_file(*job)
    for ex in out.values():
        ex.node = ex.stmt_node = None
    return out


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def run_verify(findings: List[Finding], opts: VerifyOptions, linted: Iterable[str] = (),
               hot_functions: Sequence[str] = (), on_note=None,
               started: Sequence[runner.Started] = ()) -> VerifyReport:
    """Verify ``findings`` (their ``verify`` is filled in); unflagged syncs come back as TSL900 findings.
    ``started``: snippet children ``prestart`` started before the lint (those not needed are closed)."""
    if opts.entries or not findings:
        for st in started:
            st.close()
        started = ()
    return Verifier(findings, opts, linted, hot_functions, on_note, started).run()


def prestart(opts: VerifyOptions, linted: Sequence[str], preload: Sequence[Tuple[str, str]]) -> List[runner.Started]:
    """Start the snippet children before the lint, so that their torch import, CUDA initialisation
    and the import of the linted packages (``preload``) overlap it. As many as a run over these
    files with many findings uses; ``run_verify`` closes the ones it does not need."""
    if opts.entries or os.environ.get("TORCHSYNC_VERIFY_NO_PRESTART"):
        return []
    n = opts.children or _children(len(linted), 10 ** 6)
    return [runner.start(opts.mode, _settings(opts), opts.python, preload=preload) for _ in range(n)]
