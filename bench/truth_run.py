"""Measure on a GPU whether each statement of bench/truth_statements.py synchronises the host.

    python bench/truth_run.py --out truth.jsonl        # on a CUDA machine: one JSON line per statement
    python bench/truth_run.py --dry-run                # no CUDA: run each statement once on the CPU
    python bench/truth_run.py --table truth.jsonl      # -> tests/truth/sync_truth.json, docs/truth-table.md
    python bench/truth_run.py --merge new.jsonl        # add measured rows (``--ids``) to the committed table
    python bench/truth_run.py --render                 # docs/truth-table.md from the committed table

Ground truth is timing: each statement runs at the end of a fresh prelude (a new ``forward`` call),
after a queued ``torch.cuda._sleep`` of a calibrated length; a statement that syncs holds the host
until the sleep ends, one that does not returns in microseconds. Each statement is warmed up once
(first calls may sync for lazy initialisation), then timed ``reps`` times; the median decides. A
second oracle, ``torch.cuda.set_sync_debug_mode("warn")``, runs once more without the sleep and
counts its warnings (it is blind to explicit synchronize calls, empty_cache and pageable copies).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import statistics
import sys
import time
import warnings
from typing import Dict, Iterable, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from truth_statements import STATEMENTS, Statement, module_source  # noqa: E402

TABLE_PATH = os.path.join(ROOT, "tests", "truth", "sync_truth.json")
DOC_PATH = os.path.join(ROOT, "docs", "truth-table.md")
SLEEP_MS = 50.0
REPS = 3
SYNCED_FRACTION = 0.5  # synced when the median stall is at least this share of the sleep
CLEAR_FRACTION = 0.8  # a synced stall normally reaches this share; below it (and above FREE_MS): ambiguous
FREE_MS = 5.0  # a statement that does not sync returns well under this
METHOD = f"timing vs {SLEEP_MS:g} ms _sleep (median of {REPS}), debug-mode warn as second oracle"


class Probe:
    """Brackets the statement inside the generated forward (``PROBE.start()`` / ``PROBE.stop()``)."""

    def __init__(self, torch, cuda: bool) -> None:
        self.torch = torch
        self.cuda = cuda
        self.mode = "plain"  # "plain", "time" or "debug"
        self.sleep_cycles = 0
        self.reset()

    def reset(self) -> None:
        self.started = False
        self.t0 = self.t1 = None
        self.warnings: List[str] = []
        self._catcher = None
        self._old_mode = 0

    def start(self) -> None:
        torch = self.torch
        self.started = True
        if self.cuda:
            torch.cuda.synchronize()  # the prelude's work is done: only the sleep is pending
            if self.mode == "time":
                torch.cuda._sleep(self.sleep_cycles)
            elif self.mode == "debug":
                self._catcher = warnings.catch_warnings(record=True)
                self.warnings_log = self._catcher.__enter__()
                warnings.simplefilter("always")  # else repeated syncs on one line warn once
                self._old_mode = torch.cuda.get_sync_debug_mode()
                torch.cuda.set_sync_debug_mode("warn")
        self.t0 = time.perf_counter()

    def stop(self) -> None:
        self.t1 = time.perf_counter()
        if self._catcher is not None:
            self.torch.cuda.set_sync_debug_mode(self._old_mode)
            self._catcher.__exit__(None, None, None)
            self.warnings = [str(w.message) for w in self.warnings_log if "synchroniz" in str(w.message)]
            self._catcher = None


def calibrate_sleep(torch, target_ms: float) -> int:
    """Cycles of ``torch.cuda._sleep`` that take ``target_ms`` on this GPU."""
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    probe_cycles = 20_000_000
    rates = []
    for _ in range(3):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(probe_cycles)
        end.record()
        end.synchronize()
        rates.append(probe_cycles / start.elapsed_time(end))
    return int(target_ms * statistics.median(rates))


def _build(statement: Statement, probe: Probe, cpu: bool):
    source, _, _ = module_source(statement, probe=True, cpu=cpu)
    namespace: Dict[str, object] = {"PROBE": probe, "__name__": f"truth_{statement.id.replace('-', '_')}"}
    exec(compile(source, f"<truth {statement.id}>", "exec"), namespace)
    return namespace["M"]


def _call(model, probe: Probe, torch, device, seed: int) -> Optional[str]:
    """One fresh forward (prelude + statement); returns the error text, if any."""
    probe.reset()
    torch.manual_seed(seed)
    x = torch.rand(8, 8, device=device)
    error = None
    try:
        model(x)
    except Exception as exc:  # the statement's own error is part of the record
        where = "statement" if probe.started else "prelude"
        error = f"{where}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        if probe._catcher is not None:  # a prelude error never reaches stop()
            probe.stop()
    if probe.cuda:
        torch.cuda.synchronize()
    return error


def measure_statement(statement: Statement, torch, probe: Probe, device, sleep_ms: float, reps: int) -> dict:
    cpu = not probe.cuda
    row = {"id": statement.id, "family": statement.family, "statement": statement.source}
    try:
        model = _build(statement, probe, cpu)().to(device)
    except Exception as exc:
        row.update(synced=None, error=f"setup: {type(exc).__name__}: {exc}")
        return row
    probe.mode = "plain"
    error = _call(model, probe, torch, device, seed=0)  # warm-up: lazy init may sync once
    if cpu:
        row.update(synced=None, error=error)
        return row
    stalls = []
    probe.mode = "time"
    for rep in range(reps):
        err = _call(model, probe, torch, device, seed=rep + 1)
        error = error or err
        if probe.t1 is not None:
            stalls.append((probe.t1 - probe.t0) * 1e3)
    probe.mode = "debug"
    err = _call(model, probe, torch, device, seed=99)
    error = error or err
    debug_warnings = len(probe.warnings)
    stall_ms = statistics.median(stalls) if stalls else None
    synced = None if stall_ms is None else stall_ms >= SYNCED_FRACTION * sleep_ms
    row.update(
        synced=synced,
        stall_us=None if stall_ms is None else round(stall_ms * 1e3, 1),
        stalls_us=[round(s * 1e3, 1) for s in stalls],
        ambiguous=stall_ms is not None and FREE_MS < stall_ms < CLEAR_FRACTION * sleep_ms,
        debug_warnings=debug_warnings,
        debug_agrees=None if synced is None else (debug_warnings > 0) == synced,
        debug_first=probe.warnings[0][:200] if probe.warnings else None,
        error=error,
    )
    return row


def measure(statements: Iterable[Statement], sleep_ms: float = SLEEP_MS, reps: int = REPS,
            deadline: Optional[float] = None, log=None) -> List[dict]:
    """Measure statements on the first CUDA device (or dry-run them on the CPU without one)."""
    import torch

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    probe = Probe(torch, cuda)
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0) if cuda else "cpu (dry run)",
            "method": METHOD if cuda else "dry run on the CPU: nothing measured"}
    if cuda:
        probe.sleep_cycles = calibrate_sleep(torch, sleep_ms)
        meta["sleep_cycles"] = probe.sleep_cycles
    rows = []
    for statement in statements:
        if deadline is not None and time.monotonic() > deadline:
            if log:
                log(f"deadline reached after {len(rows)} statements")
            break
        row = measure_statement(statement, torch, probe, device, sleep_ms, reps)
        row.update(meta)
        rows.append(row)
        if log:
            log(f"{row['id']:<12} synced={row['synced']!s:<5} stall_us={row.get('stall_us')} "
                f"debug={row.get('debug_warnings')} err={row['error']}")
    return rows


# ---- the committed table and its page ----------------------------------------------------------

TABLE_COLUMNS = ("id", "family", "statement", "torch", "device", "synced", "method", "stall_us",
                 "debug_warnings", "debug_agrees", "ambiguous", "error", "rule", "note")


def make_table(rows: Sequence[dict]) -> List[dict]:
    by_id = {s.id: s for s in STATEMENTS}
    table = []
    for row in rows:
        s = by_id[row["id"]]
        rule = s.rule if row.get("synced") else None  # the code that should report it; none if sync-free
        merged = dict(row, family=s.family, statement=s.source, rule=rule, note=s.note)
        table.append({k: merged.get(k) for k in TABLE_COLUMNS})
    return table


def write_table(table: Sequence[dict], path: str = TABLE_PATH) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:  # one row per line: readable diffs
        fh.write("[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in table) + "\n]\n")


def load_table(path: str = TABLE_PATH) -> List[dict]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(source: str) -> str:
    if "\n" not in source:
        return f"`{_cell(source)}`"
    return "<code>" + "<br>".join(html.escape(line).replace(" ", "&nbsp;").replace("|", "&#124;")
                                  for line in source.splitlines()) + "</code>"


def render(table: Sequence[dict]) -> str:
    first = table[0]
    synced = sum(1 for r in table if r["synced"])
    agree = sum(1 for r in table if r["debug_agrees"])
    lines = [
        "# Sync truth table",
        "",
        "<!-- generated by `python bench/truth_run.py --render` from tests/truth/sync_truth.json -->",
        "",
        f"Measured on **{first['device']}**, torch **{first['torch']}**. How decided: {first['method']}."
        + "".join(f" Rows on {d}: {', '.join(r['id'] for r in table if r['device'] == d)}."
                  for d in sorted({r['device'] for r in table} - {first['device']})),
        f"{len(table)} statements, {synced} synced. The debug mode agreed with timing on {agree} of them.",
        "",
        "Each statement runs at the end of the prelude in `bench/truth_statements.py` (`x` is a CUDA",
        "float tensor of shape (8, 8)). *stall* is the median host time of the statement while a",
        "50 ms kernel is queued; *debug* the number of `set_sync_debug_mode(\"warn\")` warnings;",
        "*rule* the code that should report it (— for statements that do not sync: no finding wanted).",
        "`tests/test_truth_table.py` lints every statement and compares with this table.",
        "",
        "| id | statement | synced | stall | debug | rule | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table:
        stall = "—" if r["stall_us"] is None else (f"{r['stall_us'] / 1e3:.1f} ms" if r["stall_us"] >= 1000
                                                   else f"{r['stall_us']:.0f} µs")
        rule = (r["rule"] or "no rule yet") if r["synced"] else "—"
        note = r["note"] or ""
        if r["error"]:
            note = (note + "; " if note else "") + "raised: " + r["error"]
        if r["ambiguous"]:
            note = (note + "; " if note else "") + "ambiguous stall"
        lines.append(f"| {r['id']} | {_code(r['statement'])} | {'**yes**' if r['synced'] else 'no'} | {stall} "
                     f"| {r['debug_warnings']} | {rule} | {_cell(note)} |")
    split = [r for r in table if r["debug_agrees"] is False]
    if split:
        lines += ["", "## Where the debug mode and timing disagree", ""]
        for r in split:
            verdict = "stalled, no warning" if r["synced"] else f"no stall, {r['debug_warnings']} warning(s)"
            lines.append(f"- {r['id']} {_code(r['statement'])}: {verdict}")
    return "\n".join(lines) + "\n"


def write_doc(table: Sequence[dict], path: str = DOC_PATH) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(render(table))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write JSON lines here (default: stdout)")
    ap.add_argument("--ids", help="comma-separated statement ids (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="allow running without CUDA (CPU, unmeasured)")
    ap.add_argument("--budget-s", type=float, default=420.0, help="stop starting statements after this")
    ap.add_argument("--table", metavar="JSONL", help="turn a measured JSON-lines file into the committed table")
    ap.add_argument("--merge", metavar="JSONL", help="add (or replace) measured rows in the committed table")
    ap.add_argument("--render", action="store_true", help="regenerate docs/truth-table.md from the table")
    ap.add_argument("--table-out", default=TABLE_PATH, help="where --table writes the table")
    ap.add_argument("--doc-out", default=DOC_PATH, help="where --table and --render write the page")
    args = ap.parse_args(argv)

    if args.table:
        with open(args.table, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        table = make_table(rows)
        write_table(table, args.table_out)
        write_doc(table, args.doc_out)
        print(f"{len(table)} rows -> {args.table_out}, {args.doc_out}")
        return 0
    if args.merge:
        with open(args.merge, encoding="utf-8") as fh:
            new_rows = make_table([json.loads(line) for line in fh if line.strip()])
        ids = {r["id"] for r in new_rows}
        order = [s.id for s in STATEMENTS]
        table = [r for r in load_table(args.table_out) if r["id"] not in ids] + new_rows
        table.sort(key=lambda r: order.index(r["id"]) if r["id"] in order else len(order))
        write_table(table, args.table_out)
        write_doc(table, args.doc_out)
        print(f"{len(new_rows)} rows merged: {len(table)} rows -> {args.table_out}, {args.doc_out}")
        return 0
    if args.render:
        write_doc(load_table(args.table_out), args.doc_out)
        return 0

    import torch

    if not torch.cuda.is_available() and not args.dry_run:
        print("no CUDA device: use --dry-run to only execute the statements on the CPU", file=sys.stderr)
        return 2
    wanted = set(args.ids.split(",")) if args.ids else None
    statements = [s for s in STATEMENTS if wanted is None or s.id in wanted]
    deadline = time.monotonic() + args.budget_s
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    rows = measure(statements, deadline=deadline, log=log)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0 if len(rows) == len(statements) else 1


if __name__ == "__main__":
    sys.exit(main())
