"""From what a child sent back to each finding's evidence (then ``status.decide`` gives the verdict).

A snippet's result: its sync events attributed to the findings of the statement by column, the
timing oracle's intervals on the statement's lines, whether it ran to its end, what its inputs rest
on, and the flagged expression's own run when the statement could not run. An entry's result: the
events of one real call spread over every finding (and over the lines no rule flagged: TSL900),
and which lines ran. A rewrite's result (``--verify-fixes``): is it sync-free, with the same values?
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from torchsync_lint.finding import Finding
from torchsync_lint.verify import fixes as fixes_mod
from torchsync_lint.verify.attribution import Span, SyncEvent, attribute, norm
from torchsync_lint.verify.status import REFUTED, Evidence, decide

UNFLAGGED_CODE = "TSL900"
UNFLAGGED_NAME = "unflagged-sync"
TIMING_SHARE = 0.4  # an interval synced when its host time grew by this share of the queued sleep


def timing(lines: Sequence, span: Span, sleep_us: Optional[float]) -> Tuple[Optional[int], Optional[float]]:
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


def roots(hello: Optional[dict]) -> List[str]:
    return list((hello or {}).get("library_roots", []))


def library_filter(raw: Iterable[dict]) -> List[SyncEvent]:
    """Events whose frames carry the child's own is-library flag (7th element) keep only user frames."""
    out = []
    for e in raw or []:
        frames = [f for f in e.get("frames", []) if not (len(f) > 6 and f[6])]
        out.append(SyncEvent.from_json(dict(e, frames=frames)))
    return out


def snippet_evidence(key: int, r: dict, extracted: Dict, linted: Set[str], hello: Optional[dict],
                     mode: str) -> Evidence:
    """One finding's evidence from its snippet's result ``r`` (``extracted``: every finding's
    extraction, for the other findings of the same statement)."""
    ex = extracted[key]
    mode = "predict" if mode == "predict" else "snippet"
    ev = Evidence(mode=mode, label="snippet")
    if r.get("failure"):
        ev.failure = r["failure"]
        return ev
    # the other findings on the same statement take the syncs their own columns point at
    spans = {k: e.span for k, e in extracted.items()
             if k == key or (e.span.path == ex.span.path and e.span.stmt_line == ex.span.stmt_line)}
    lib = roots(hello)
    att = attribute(library_filter(r.get("events")), spans, linted, lib)
    ev.events = att.by_finding.get(key, [])
    ev.timing_syncs, ev.timing_excess_us = timing(r.get("lines"), ex.span, r.get("sleep_us"))
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
        xatt = attribute(library_filter(xr.get("events")), spans, linted, lib)
        xevents = xatt.by_finding.get(key, [])
        xsyncs, xexcess = timing(xr.get("lines"), ex.span, xr.get("sleep_us"))
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


def fix_record(finding: Finding, ex, r: dict, linted: Set[str], hello: Optional[dict]) -> Optional[dict]:
    """``--verify-fixes``: the rule's rewrite, run on the same inputs as the statement."""
    spec = fixes_mod.rewrite(finding.code, ex.stmt_node, ex.node, ex.stmt["line"], ex.stmt["col"],
                             fix=getattr(finding, "fix", None)) if ex.stmt else None
    if spec is None or spec.get("none"):
        return {"status": "no-rewrite", "reason": (spec or {}).get("none", "no statement")}
    fr = r.get("fix")
    if not fr:
        return {"status": "not-run", "rewrite": spec["src"],
                "reason": r.get("failure") or r.get("cpu_error") or "the statement did not run"}
    n_lines = spec["src"].count("\n")
    span = Span(ex.span.path, spec["line"], spec["col"], spec["line"] + n_lines, 10_000,
                spec["line"], spec["line"] + n_lines)
    key = 0
    att = attribute(library_filter(fr.get("events")), {key: span}, linted, roots(hello))
    ev = Evidence(mode="snippet", events=att.by_finding.get(key, []), ran=not fr.get("error"),
                  error=fr.get("error"))
    ev.timing_syncs, ev.timing_excess_us = timing(fr.get("lines"), span, fr.get("sleep_us"))
    rec = decide(ev)
    out = {"rewrite": spec["src"], "sync_free": rec["status"] == REFUTED,
           "same_values": fr.get("same_values"), "status": rec["status"]}
    if rec.get("reason"):
        out["reason"] = rec["reason"]
    if fr.get("difference"):
        out["difference"] = fr["difference"]
    return out


class EntryEvidence:
    """What one entry's real call showed: per finding, the syncs on unflagged lines, the totals."""

    def __init__(self) -> None:
        self.by_finding: Dict[int, Evidence] = {}
        self.unflagged: List[Finding] = []
        self.unlocated = 0
        self.syncs: Dict[str, object] = {}


def entry_evidence(ref: str, r: dict, spans: Dict[int, Span], linted: Set[str], hello: Optional[dict],
                   mode: str, display) -> EntryEvidence:
    """An entry's result ``r`` (no failure) spread over the findings' ``spans``; ``display`` turns a
    real path into the path a TSL900 finding shows."""
    mode = "predict" if mode == "predict" else "entry"
    out = EntryEvidence()
    att = attribute(library_filter(r.get("events")), spans, linted, roots(hello))
    executed = {(norm(p), ln) for p, ln in r.get("executed", [])}
    for key, span in spans.items():
        ev = Evidence(mode=mode, label=f"entry {ref}", events=att.by_finding.get(key, []))
        if mode != "predict":
            ev.timing_syncs, ev.timing_excess_us = timing(r.get("lines"), span, r.get("sleep_us"))
            ev.ran = any((span.path, ln) in executed for ln in range(span.stmt_line, span.stmt_end_line + 1))
        else:
            ev.ran = bool(ev.events)
        if not ev.ran and not ev.events:
            ev.timing_syncs = None
        ev.error = r.get("error") if not ev.ran else None
        out.by_finding[key] = ev
    for (path, line), events in sorted(att.unflagged.items()):
        span = Span(path, line, 0, line, 10_000, line, line)
        ev = Evidence(mode=mode, label=f"entry {ref}", events=events, ran=True)
        if mode != "predict":
            ev.timing_syncs, ev.timing_excess_us = timing(r.get("lines"), span, r.get("sleep_us"))
            if ev.timing_syncs == 0 and not any(norm(p) == path and ln == line for p, ln, *_ in r.get("lines", [])):
                ev.timing_syncs = None  # the line's file was not traced: only the event oracles saw it
        rec = decide(ev)
        frame = next((fr for e in events for fr in e.frames if fr.path == path and fr.line == line), None)
        col = (frame.col + 1) if frame is not None and frame.col is not None else 1
        end_col = (frame.end_col + 1) if frame is not None and frame.end_col is not None and \
            frame.end_line == line else col
        ops = rec.get("ops") or []
        what = f" ({', '.join(ops)})" if ops else ""
        out.unflagged.append(Finding(display(path), line, col, line, end_col, UNFLAGGED_CODE, UNFLAGGED_NAME,
                                     f"a host-device sync ran here{what} that no rule flagged "
                                     "(a static blind spot: see docs/verify.md)", function=None,
                                     temperature="unknown", verify=rec))
    out.unlocated = len(att.unlocated)
    on_findings = sum(e.count for evs in att.by_finding.values() for e in evs)
    on_unflagged = sum(e.count for evs in att.unflagged.values() for e in evs)
    out.syncs = {"on_findings": on_findings, "unflagged": on_unflagged,
                 "no_user_frame": sum(e.count for e in att.unlocated),
                 "call_ms": r.get("call_ms"), "error": r.get("error")}
    return out
