"""From oracle evidence to a finding's verdict: confirmed, refuted, inconclusive (or predicted).

Timing is the ground truth: a sync makes the host wait for a calibrated sleep kernel queued before
the statement. The other oracles (the sync debug mode, the GPU-trace sync callbacks, the debug
mode's stderr lines) name the operation and count syncs, but each has blind spots (DESIGN.md
section 4), so their word alone confirms only where timing could not run, and never refutes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from torchsync_lint.verify.attribution import SyncEvent

CONFIRMED, REFUTED, INCONCLUSIVE, PREDICTED = "confirmed", "refuted", "inconclusive", "predicted"
# what a verdict's inputs rest on, strongest first: values recorded from a real run, static
# inference (annotations, device provenance, parameter defaults), or synthesised without a type
OBSERVED, INFERRED, GUESSED = "observed", "inferred", "guessed"
PROVENANCE = (OBSERVED, INFERRED, GUESSED)
STATUSES = (CONFIRMED, REFUTED, INCONCLUSIVE, PREDICTED)
TIMING = "timing"


@dataclass
class Evidence:
    """What the runs of one finding's code showed (one snippet, or one entry point)."""

    mode: str  # "snippet", "entry" or "predict"
    events: List[SyncEvent] = field(default_factory=list)
    timing_syncs: Optional[int] = None  # executions whose host time absorbed the sleep; None: not timed
    timing_excess_us: Optional[float] = None
    ran: bool = False  # snippet: the statement ran to its end; entry: the line was reached
    error: Optional[str] = None  # the statement raised (snippet), or the entry raised
    failure: Optional[str] = None  # nothing could be measured: import error, timeout, crash
    guessed: List[str] = field(default_factory=list)  # inputs synthesised without a type from inference
    observed: List[str] = field(default_factory=list)  # inputs replayed from a recorded real run
    inputs: Optional[str] = None  # provenance of the inputs: observed, inferred or guessed (snippet mode)
    label: str = ""  # which run: "snippet", "entry seed_entries:masked_before"
    notes: List[str] = field(default_factory=list)


def _oracles(events: List[SyncEvent]) -> List[str]:
    seen: List[str] = []
    for ev in events:
        for o in ev.oracles:
            if o not in seen:
                seen.append(o)
    return sorted(seen)


def _stall(events: List[SyncEvent]) -> Optional[float]:
    known = [ev.stall_us for ev in events if ev.stall_us is not None]
    return round(sum(known), 1) if known else None


def _ops(events: List[SyncEvent]) -> List[str]:
    out: List[str] = []
    for ev in events:
        if ev.op and ev.op not in out:
            out.append(ev.op)
    return out


def decide(ev: Evidence) -> Dict:
    """The ``verify`` record of DESIGN.md section 5 for one finding and one run."""
    out: Dict = {"status": INCONCLUSIVE, "oracles": [], "stall_us": None, "syncs": 0}
    if ev.label:
        out["run"] = ev.label
    inputs = provenance(ev)
    if inputs:
        out["inputs"] = inputs
    if ev.failure:
        out["reason"] = ev.failure
        return out
    event_syncs = sum(e.count for e in ev.events)
    ops = _ops(ev.events)
    if ops:
        out["ops"] = ops
    if ev.mode == "predict":
        if ev.events:
            out.update(status=PREDICTED, oracles=_oracles(ev.events), syncs=event_syncs,
                       reason="predicted on the CPU (FakeTensor); run --verify on a CUDA device to confirm")
        elif ev.error and not ev.ran:
            out["reason"] = f"prediction failed: {ev.error}"
        else:
            out["reason"] = "no data-dependent op or host-device copy seen (FakeTensor cannot see every sync)"
        return out
    out["stall_us"] = _stall(ev.events)
    timed = ev.timing_syncs is not None
    if timed:
        out["timing_excess_us"] = ev.timing_excess_us
    if timed and ev.timing_syncs > 0:
        out.update(status=CONFIRMED, oracles=sorted(set(_oracles(ev.events)) | {TIMING}),
                   syncs=max(event_syncs, ev.timing_syncs))
    elif ev.events and not timed:
        out.update(status=CONFIRMED, oracles=_oracles(ev.events), syncs=event_syncs)
    elif ev.events:
        out.update(oracles=_oracles(ev.events), syncs=event_syncs,
                   reason=f"oracles disagree: {'+'.join(_oracles(ev.events))} saw a sync, "
                          "but the host did not wait for the queued sleep")
    elif not ev.ran:
        if ev.mode == "entry":
            out["reason"] = "not reached" + (f" by {ev.label}" if ev.label else "")
            if ev.error:
                out["reason"] += f" (the entry raised {ev.error})"
        else:
            out["reason"] = f"statement did not run: {ev.error or 'unknown error'}"
    elif ev.error:
        out["reason"] = f"no sync seen, but the statement raised {ev.error}"
    elif not timed:
        out["reason"] = "no timing measurement"
    else:
        out["status"] = REFUTED
        if ev.guessed:
            out["reason"] = "no sync with synthesised inputs (guessed: " + ", ".join(ev.guessed) + ")"
    if inputs == GUESSED and out["status"] == CONFIRMED:
        out["reason"] = "on guessed inputs (" + ", ".join(ev.guessed) + "): not counted as confirmed"
    elif inputs == GUESSED and out["status"] == REFUTED:
        # the guess may be what kept the sync away (a device taken as CUDA where callers pass CPU
        # tensors): a refutation on guessed inputs is as weak as a confirmation on them
        out["reason"] = (out.get("reason") or "no sync with synthesised inputs (guessed: " +
                         ", ".join(ev.guessed) + ")") + ": not counted as refuted"
    elif inputs == OBSERVED and out["status"] in (CONFIRMED, REFUTED):
        out["reason"] = (out.get("reason", "") + "; " if out.get("reason") else "") + \
            "on observed inputs (" + ", ".join(ev.observed) + ")"
    if out["status"] == CONFIRMED and ev.error:
        out["reason"] = f"synced before the statement raised {ev.error}"
    for note in ev.notes:
        out["reason"] = (out.get("reason", "") + "; " if out.get("reason") else "") + note
    return out


def provenance(ev: Evidence) -> Optional[str]:
    """The weakest input of a snippet run: guessed < inferred < observed (None outside snippet mode)."""
    if ev.mode == "entry" or ev.failure:
        return None
    if ev.inputs in PROVENANCE:
        return ev.inputs
    if ev.guessed:
        return GUESSED
    return OBSERVED if ev.observed else INFERRED


def definite(record: Optional[Dict]) -> bool:
    """A verdict that counts: confirmed or refuted, and not on guessed inputs (either way)."""
    if not record or record.get("status") not in (CONFIRMED, REFUTED):
        return False
    return record.get("inputs") != GUESSED


def merge(records: List[Dict]) -> Dict:
    """One verdict from several runs (entry points): a sync anywhere confirms; reached without one refutes."""
    if not records:
        return {"status": INCONCLUSIVE, "oracles": [], "stall_us": None, "syncs": 0, "reason": "not run"}
    if len(records) == 1:
        return records[0]
    for status in (CONFIRMED, PREDICTED, REFUTED):
        chosen = [r for r in records if r["status"] == status]
        if chosen:
            best = max(chosen, key=lambda r: (r.get("syncs") or 0, r.get("stall_us") or 0))
            return dict(best)
    reasons = "; ".join(dict.fromkeys(r.get("reason", "") for r in records if r.get("reason")))
    return {"status": INCONCLUSIVE, "oracles": [], "stall_us": None, "syncs": 0, "reason": reasons}


def counts(records: List[Optional[Dict]]) -> Dict[str, int]:
    out = {s: 0 for s in STATUSES}
    for r in records:
        if r is not None:
            out[r.get("status", INCONCLUSIVE)] = out.get(r.get("status", INCONCLUSIVE), 0) + 1
    return out


def summary_line(records: List[Optional[Dict]]) -> str:
    """``verify: 10 finding(s): 6 confirmed, 2 confirmed on guessed inputs, 1 refuted, ...``: a
    verdict on guessed inputs is not counted as confirmed or refuted (nor as definite)."""
    c = counts(records)
    on_guess = sum(1 for r in records if r and r.get("status") == CONFIRMED and r.get("inputs") == GUESSED)
    off_guess = sum(1 for r in records if r and r.get("status") == REFUTED and r.get("inputs") == GUESSED)
    by_inputs = {p: sum(1 for r in records if r and definite(r) and r.get("inputs") == p) for p in PROVENANCE}
    parts = [f"{c[CONFIRMED] - on_guess} {CONFIRMED}"]
    if on_guess:
        parts.append(f"{on_guess} confirmed on guessed inputs")
    parts.append(f"{c[REFUTED] - off_guess} {REFUTED}")
    if off_guess:
        parts.append(f"{off_guess} refuted on guessed inputs")
    parts.append(f"{c[INCONCLUSIVE]} {INCONCLUSIVE}")
    if c[PREDICTED]:
        parts.insert(0, f"{c[PREDICTED]} predicted")
    total = sum(c.values())
    n_definite = sum(1 for r in records if definite(r))
    pct = f", {100.0 * n_definite / total:.0f}% definite" if total and not c[PREDICTED] else ""
    rest = [f"{by_inputs[p]} {p}" for p in PROVENANCE if by_inputs[p]]
    inputs = f" (definite verdicts by inputs: {', '.join(rest)})" if rest and any(
        by_inputs[p] for p in (OBSERVED, GUESSED)) else ""
    return f"verify: {total} finding(s): " + ", ".join(parts) + pct + inputs
