"""Run a program under ``no_sync(mode="record")`` and write what synced as JSON (for ``trace``).

    python -m torchsync_lint.guard.bootstrap --out FILE [--steps N] [--warmup N] [--allow X]...
        -- (script.py | -m module) [args...]

Steps are optimizer steps (a global ``Optimizer.step`` post-hook): after ``--steps`` the program is
stopped. Syncs are split by phase: ``setup`` (before the first step starts: the first forward of
any ``nn.Module``, seen by a global forward pre-hook removed at once, or the first optimizer step
when no module runs), ``warmup`` (the first ``--warmup`` steps: lazy initialisation) and
``steady`` (the rest); only steady-state syncs count per step. With ``--record-inputs FILE`` and
``--record-targets JSON`` (finding lines per file), the arguments of the functions holding
findings are described on first entry (``guard/inputs.py``) and saved to FILE.
Only the main thread is guarded (and the autograd engine's threads working for it).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import traceback
from typing import Dict, List, Optional, Tuple

from torchsync_lint.guard.guard import no_sync
from torchsync_lint.guard.events import SyncEvent


class StopTrace(BaseException):
    """Raised from the optimizer hook after ``--steps`` steps; a BaseException so `except Exception` lets it by."""


class Recorder(no_sync):
    """Record mode that aggregates per site (path, line, op) instead of keeping every event."""

    def __init__(self, allow, warmup: int) -> None:
        super().__init__(allow=allow, mode="record", quiet=True)
        self.step = 0
        self.warmup = warmup
        self.started = False  # the first step has begun (a module's first forward, or a step)
        self.sites: Dict[Tuple, dict] = {}
        self.setup_sites: Dict[Tuple, dict] = {}
        self.warmup_syncs = 0
        self.setup_syncs = 0

    def phase(self) -> str:
        if not self.started and self.step == 0:
            return "setup"
        return "warmup" if self.step < self.warmup else "steady"

    def _record(self, ev: SyncEvent) -> None:
        ev.step = self.step
        phase = self.phase()
        if phase == "setup":
            self.setup_syncs += 1
        elif phase == "warmup":
            self.warmup_syncs += 1
        self._site(self.sites if phase == "steady" else self.setup_sites, ev, phase)

    def _site(self, table: Dict[Tuple, dict], ev: SyncEvent, phase: str) -> None:
        key = (ev.path, ev.line, ev.op, phase if phase != "steady" else "")
        site = table.get(key)
        if site is None:
            site = table[key] = {
                "path": ev.path, "line": ev.line, "function": ev.function, "op": ev.op, "code": ev.code,
                "count": 0, "stall_us": 0.0, "stall_known": 0, "oracles": [], "allowed": ev.allowed,
                "first_step": ev.step, "thread": ev.thread, "stack": [f"{fr}" for fr in ev.stack[:8]],
                "phase": phase,
            }
        site["count"] += 1
        if ev.stall_us is not None:
            site["stall_us"] += ev.stall_us
            site["stall_known"] += 1
        for o in ev.oracles:
            if o not in site["oracles"]:
                site["oracles"].append(o)


def _parse(argv: List[str]):
    if "--" not in argv:
        raise SystemExit("bootstrap: expected -- before the program")
    cut = argv.index("--")
    p = argparse.ArgumentParser(prog="torchsync_lint.guard.bootstrap")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--allow", action="append", default=[])
    p.add_argument("--record-inputs", default=None)
    p.add_argument("--record-targets", default=None)
    return p.parse_args(argv[:cut]), argv[cut + 1:]


def _step_hook(rec: Recorder, steps: int):
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except Exception:  # noqa: BLE001 - an old torch: no step counting
        return None

    def hook(optimizer, args, kwargs):
        rec.started = True
        rec.step += 1
        if rec.inputs is not None and rec.step >= 1 and not rec.inputs_stopped:
            rec.inputs.stop()  # first entries are in: the recorder costs nothing from here
            rec.inputs_stopped = True
        if steps and rec.step >= steps:
            raise StopTrace()

    handle = register_optimizer_step_post_hook(hook)
    try:
        from torch.nn.modules.module import register_module_forward_pre_hook
    except Exception:  # noqa: BLE001
        return handle
    box = {}

    def first_forward(module, args):
        rec.started = True
        h = box.pop("h", None)
        if h is not None:
            h.remove()

    box["h"] = register_module_forward_pre_hook(first_forward)
    return handle


def main(argv: Optional[List[str]] = None) -> int:
    opts, program = _parse(list(sys.argv[1:] if argv is None else argv))
    if not program or (program[0] == "-m" and len(program) < 2):
        print("torchsync-lint trace: no program to run", file=sys.stderr)
        return 2
    rec = Recorder(opts.allow, opts.warmup)
    rec.inputs, rec.inputs_stopped = None, False
    if opts.record_inputs and opts.record_targets:
        from torchsync_lint.guard.inputs import InputRecorder

        with open(opts.record_targets, encoding="utf-8") as fh:
            targets = json.load(fh)
        rec.inputs = InputRecorder(targets, on_record=rec.suspended_call)
    result = {"exit": 0, "error": None, "stopped": False, "main_file": None}
    if program[0] == "-m":
        target, args = program[1], program[2:]
        sys.argv = [target] + args
        sys.path.insert(0, os.getcwd())
    else:
        target, args = os.path.abspath(program[0]), program[1:]
        sys.argv = [program[0]] + args
        sys.path.insert(0, os.path.dirname(target))
        result["main_file"] = target
    handle = None
    try:
        with rec:
            handle = _step_hook(rec, opts.steps) if rec.active else None
            if rec.inputs is not None:
                rec.inputs.start()
            if program[0] == "-m":
                spec = __import__("importlib.util").util.find_spec(target)
                result["main_file"] = getattr(spec, "origin", None) if spec else None
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(program[0], run_name="__main__")
    except StopTrace:
        result["stopped"] = True
    except SystemExit as exc:
        code = exc.code
        result["exit"] = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - the program's own failure is part of the report
        traceback.print_exc()
        result.update(exit=1, error=f"{type(exc).__name__}: {str(exc).strip()[:300]}")
    finally:
        if handle is not None:
            handle.remove()
        if rec.inputs is not None:
            rec.inputs.stop()
            rec.inputs.save(opts.record_inputs)
    sites = sorted(rec.sites.values(), key=lambda s: -s["stall_us"])
    setup = sorted(rec.setup_sites.values(), key=lambda s: -s["stall_us"])
    for s in sites + setup:
        s["stall_us"] = round(s["stall_us"], 1)
    result.update(active=rec.reason is None, reason=rec.reason, steps=rec.step,
                  warmup=opts.warmup, warmup_syncs=rec.warmup_syncs, setup_syncs=rec.setup_syncs,
                  sites=sites, setup_sites=setup,
                  inputs_recorded=len(rec.inputs.records) if rec.inputs is not None else None)
    with open(opts.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    return int(result["exit"] or 0)


if __name__ == "__main__":
    sys.exit(main())
