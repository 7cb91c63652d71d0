"""Verify findings: extract their snippets, run them in child processes, decide each status.

Snippet mode streams: the children (started before the lint, ``prestart``) take each file's tasks
as soon as that file is extracted (``schedule``); entry mode runs each entry in a child of its own.
What the children send back becomes evidence (``evidence``) and then a verdict (``status``).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import queue
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from torchsync_lint.finding import Finding
from torchsync_lint.verify import early as early_mod
from torchsync_lint.verify import evidence, runner, schedule, snippet
from torchsync_lint.verify import fixes as fixes_mod
from torchsync_lint.verify.attribution import Span, norm
from torchsync_lint.verify.status import CONFIRMED, Evidence, decide, merge


class VerifyUnavailable(Exception):
    """No CUDA device (or no torch) for ``--verify``: exit code 2 with this message."""


@dataclass
class VerifyOptions:
    mode: str = "gpu"  # "gpu" or "predict"
    entries: List[str] = field(default_factory=list)
    fixes: bool = False
    timeout: float = 60.0
    python: Optional[str] = None
    sleep_ms: float = early_mod.SLEEP_MS
    # snippet mode times with the short sleep; the long one only where the short one cannot tell
    short_sleep_ms: float = early_mod.SHORT_SLEEP_MS
    reps: int = early_mod.REPS
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
        self.child_startups: List[dict] = []
        self.child_times: List[dict] = []  # per snippet child: time.monotonic() of its steps (runner)
        self.t_extracted: Optional[float] = None
        self._item_limit = 0  # the most tasks of one file a child takes at once (``schedule.item_limit``)

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

    def file_jobs(self) -> List[schedule.FileJob]:
        recorded = self.recorded()
        return [(path, items, self.hot_functions, recorded.get(norm(path), []))
                for path, items in schedule.by_file(self.findings).items()]

    def extract(self) -> None:
        """Every file's extraction, before anything runs (entry mode needs every span)."""
        ext = schedule.Extraction(self.file_jobs(), nodes=self.opts.fixes)
        ext.start()
        for _, got in ext.results():
            self.extracted.update(got)
        self.t_extracted = time.monotonic()

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
    def n_children(self) -> int:
        """Child processes for snippet mode: by the files and findings of the run (known before
        extraction, so that the children can start while it runs)."""
        if self.opts.children:
            return self.opts.children
        return schedule.n_children(len({f.path for f in self.findings}), len(self.findings))

    def start_children(self) -> None:
        """Start the snippet children now (if ``prestart`` did not): their torch import, CUDA
        initialisation and sleep calibration overlap the extraction (they wait for their job)."""
        if os.environ.get("TORCHSYNC_VERIFY_NO_PRESTART"):
            return
        more = min(self.n_children(), len({f.path for f in self.findings})) - len(self._started)
        self._started += runner.start_many(more, self.opts.mode, _settings(self.opts), self.opts.python)

    def _close_started(self) -> None:
        for st in self._started:
            st.close(wait=False)
        self._started = []

    def run_snippets(self, with_fixes: bool) -> Dict[int, dict]:
        """Every finding's snippet, in up to ``n_children`` children sharing one feed of files: each
        file's tasks go in as soon as that file is extracted (the largest files first), and whichever
        child is up and idle takes the next file (its module imported once, in that child; the
        packages were imported while the lint ran). Everything already extracted: at once."""
        jobs = self.file_jobs() if not self.extracted else []
        paths = [j[0] for j in jobs] if jobs else sorted({ex.span.path for ex in self.extracted.values()})
        sizes = {j[0]: len(j[1]) for j in jobs} if jobs else \
            {p: sum(1 for ex in self.extracted.values() if ex.span.path == p) for p in paths}
        n = max(1, min(self.n_children(), len(paths)))
        self._item_limit = schedule.item_limit(len(self.findings), n)
        jobs = sorted(jobs, key=lambda j: (-len(j[1]), j[0]))
        extraction = schedule.Extraction(jobs, nodes=with_fixes, busy=n) if jobs else None
        if extraction is not None:
            extraction.start()  # forks the extraction's workers: before any thread of ours starts
        started, self._started = list(self._started), []
        pres = [started.pop(0) if started else None for _ in range(n)]
        for st in started:  # more children than files
            st.close(wait=False)
        feed: queue.Queue = queue.Queue()
        base = {"kind": "snippet", "mode": self.opts.mode, "settings": _settings(self.opts),
                "sys_path": self.opts.sys_path + [os.getcwd()], "tasks": []}
        rewrite = fixes_mod.rewrite if with_fixes else None
        counts = {p: 0 for p in paths}
        seen: Dict[str, int] = {}
        results: Dict[int, dict] = {}
        with cf.ThreadPoolExecutor(n) as pool:
            futures = [pool.submit(self._run_snippet_job, dict(base), pres[i], feed, len(paths), counts, seen)
                       for i in range(n)]
            try:
                if extraction is not None:
                    for path, got in extraction.results():
                        self.extracted.update(got)
                        self._feed(feed, got, rewrite, counts)
                else:
                    for path in sorted(paths, key=lambda p: (-sizes[p], p)):
                        got = {k: ex for k, ex in self.extracted.items() if ex.span.path == path}
                        self._feed(feed, got, rewrite, counts)
            finally:
                self.t_extracted = self.t_extracted or time.monotonic()
                feed.put(None)
            for fut in futures:
                results.update(fut.result())
        return results

    def _feed(self, feed: queue.Queue, got: Dict[int, snippet.Extracted], rewrite, counts: Dict[str, int]) -> None:
        tasks = schedule.tasks_of(got, self.findings, rewrite)
        for task in tasks:
            counts[task["path"]] = counts.get(task["path"], 0) + 1
        for item in schedule.items(tasks, self._item_limit):
            feed.put(item)  # a file's tasks, or part of a long package module's: one child runs them

    def _run_snippet_job(self, job: dict, pre: Optional[runner.Started], feed: queue.Queue, n_files: int,
                         counts: Dict[str, int], seen: Dict[str, int]) -> Dict[int, dict]:
        def progress(msg: str) -> None:
            key = int(msg.split()[-1]) if msg.split()[-1].isdigit() else None
            ex = self.extracted.get(key) if key is not None else None
            if ex is not None and ex.span.path not in seen:
                seen[ex.span.path] = len(seen) + 1
                self.note(f"verify: {ex.span.path} ({counts.get(ex.span.path, 0)} finding(s), file "
                          f"{seen[ex.span.path]}/{n_files})")

        res = runner.run_job(job, self.opts.timeout, python=self.opts.python, on_progress=progress,
                             started=pre, feed=feed, shared=True)
        self._check_hello(res)
        if res.hello:
            self.child_startups.append(dict(res.hello.get("startup") or {}))
        self.child_times.append(dict(res.times))
        return res.results

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
        spans = self.spans()
        if r.get("failure"):
            self.note(f"verify: entry {ref} failed: {r['failure']}")
            self.report.entry_failures[ref] = r["failure"]
            return ({key: Evidence(mode=mode, label=f"entry {ref}", failure=f"entry {ref}: {r['failure']}")
                     for key in spans}, [], r)
        got = evidence.entry_evidence(ref, r, spans, self.linted, self.hello, self.opts.mode, _display)
        self.report.unlocated += got.unlocated
        if r.get("call_ms") is not None:
            self.report.entry_call_ms[ref] = r["call_ms"]
        self.report.entry_syncs[ref] = got.syncs
        return got.by_finding, got.unflagged, r

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
        records: Dict[int, List[dict]] = {k: [] for k in range(len(self.findings))}
        fix_records: Dict[int, dict] = {}
        extra: List[Finding] = []
        results: Dict[int, dict] = {}
        if self.opts.entries or not self.findings:
            self.extract()
        else:
            results = self.run_snippets(with_fixes=self.opts.fixes)
            self._note_times(t0, results)
        for key, ex in self.extracted.items():
            if ex.failure:
                records[key].append(decide(Evidence(mode="snippet", failure=ex.failure, label="snippet")))
        if self.opts.entries:
            seen_unflagged: Dict[Tuple[str, int], Finding] = {}
            for ref in self.opts.entries:
                by_key, unflagged, _ = self.run_entry(ref)
                for key, ev in by_key.items():
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
                for key, r in self.run_snippets(with_fixes=True).items():
                    fix_records[key] = evidence.fix_record(self.findings[key], self.extracted[key], r,
                                                           self.linted, self.hello)
        elif self.findings:
            for key, r in results.items():
                rec = decide(evidence.snippet_evidence(key, r, self.extracted, self.linted, self.hello,
                                                       self.opts.mode))
                if r.get("seconds") is not None:
                    rec["seconds"] = r["seconds"]  # time in the child for this finding
                records[key].append(rec)
                if self.opts.fixes:
                    fix_records[key] = evidence.fix_record(self.findings[key], self.extracted[key], r,
                                                           self.linted, self.hello)
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

    def _note_times(self, t0: float, results: Dict[int, dict]) -> None:
        """Where the time went (bench/verify_speed.py prints these lines)."""
        secs = [r["seconds"] for r in results.values() if r.get("seconds") is not None]
        imports = [r["import_s"] for r in results.values() if r.get("import_s") is not None]
        st = self.child_startups
        t_extracted = self.t_extracted or t0

        def worst(key):
            vals = [x[key] for x in st if x.get(key) is not None]
            return f"{max(vals):.2f}" if vals else "?"
        rates = [x["cycles_per_ms"] for x in st if x.get("cycles_per_ms")]
        rate = f", sleep calibration {min(rates)}-{max(rates)} cycles/ms" if rates else ""
        self.note(f"verify: time: extraction {t_extracted - t0:.2f} s (overlapping the tasks), children {len(st)} "
                  f"(torch import {worst('torch_import_s')} s, CUDA driver and context beside it "
                  f"{worst('driver_s')} s, waited for {worst('driver_wait_s')} s, CUDA init "
                  f"{worst('cuda_init_s')} s, calibration "
                  f"{worst('calibrate_s')} s, the slowest of each), module imports {sum(imports):.2f} s, "
                  f"tasks {sum(secs) - sum(imports):.2f} s (sum over children), snippets done after "
                  f"{time.monotonic() - t0:.2f} s{rate}")
        # the timeline, from the first child's start (before the lint when started ahead)
        ref = min([t["spawned"] for t in self.child_times if "spawned" in t] + [t0])
        steps = ("ready", "preloaded", "job_sent", "begin", "done")
        kids = "; ".join(" ".join(f"{k} {t[k] - ref:.2f}" for k in steps if k in t) for t in self.child_times)
        age = _process_age()
        began = f"process started {ref - (time.monotonic() - age):.2f} s before it, " if age is not None else ""
        self.note(f"verify: timeline (s after the first child started): {began}verify began {t0 - ref:.2f}, "
                  f"extraction done {t_extracted - ref:.2f}, children: {kids}")

    def probe(self) -> None:
        """No findings to run: still say whether a CUDA device is there (exit 2 when not)."""
        job = {"kind": "probe", "mode": self.opts.mode, "settings": _settings(self.opts), "tasks": []}
        res = runner.run_job(job, self.opts.timeout, python=self.opts.python)
        self._check_hello(res)


def _process_age() -> Optional[float]:
    """Seconds since this process started (Linux; None elsewhere)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def _display(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def run_verify(findings: List[Finding], opts: VerifyOptions, linted: Iterable[str] = (),
               hot_functions: Sequence[str] = (), on_note=None,
               started: Sequence[runner.Started] = (), interfaces: Optional[dict] = None) -> VerifyReport:
    """Verify ``findings`` (their ``verify`` is filled in); unflagged syncs come back as TSL900 findings.
    ``started``: snippet children ``prestart`` started before the lint (those not needed are closed).
    ``interfaces``: the lint's (``LintResult.interfaces``): the snippets' values are read with the
    project, as the lint read them (another file's instance, a device its callers pass)."""
    snippet.use_project(interfaces)
    if opts.entries or not findings:
        for st in started:
            st.close(wait=False)
        started = ()
    return Verifier(findings, opts, linted, hot_functions, on_note, started).run()


def prestart(opts: VerifyOptions, linted: Sequence[str], preload: Sequence[Tuple[str, str]],
             early: Optional[List[runner.Started]] = None) -> List[runner.Started]:
    """Start the snippet children before the lint, so that their torch import, CUDA initialisation
    and the import of the linted packages (``preload``) overlap it. As many as a run over these
    files with many findings uses; ``run_verify`` closes the ones it does not need. ``early``:
    children the command started at its first line (``verify.early``), used first (and emptied)."""
    early = early if early is not None else []
    if opts.entries or os.environ.get("TORCHSYNC_VERIFY_NO_PRESTART"):
        early_mod.adopt(early, 0, opts.mode, _settings(opts))
        return []
    n = opts.children or schedule.n_children(len(linted), 10 ** 6)
    took = early_mod.adopt(early, n, opts.mode, _settings(opts))
    for child in took:
        child.preload(preload)
    return took + runner.start_many(n - len(took), opts.mode, _settings(opts), opts.python, preload=preload)
