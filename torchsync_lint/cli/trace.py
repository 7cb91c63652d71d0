"""``torchsync-lint trace [options] -- python train.py ARGS`` (or ``-- python -m module ARGS``).

Runs the program under the sync guard in record mode (``torchsync_lint.guard.bootstrap`` in a
child process, with the interpreter given), then reports every sync site with its count and total
host stall, joined to the static findings of the files involved (the program's file, every file a
sync landed in, and ``--paths``): ``confirmed`` (flagged and seen), ``unflagged`` (seen, no rule
flagged the line: TSL900) and ``not-seen`` (flagged, never synced in this run). Sorted by stall.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from torchsync_lint.cli.output import render
from torchsync_lint.finding import Finding
from torchsync_lint.guard.allow import Allow
from torchsync_lint.rules.registry import all_rules
from torchsync_lint.run.settings import find_pyproject, load
from torchsync_lint.run.tree import lint_paths

EXIT_OK, EXIT_SYNCS, EXIT_ERROR = 0, 1, 2
FORMATS = ("text", "json", "sarif")
UNFLAGGED = "TSL900"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="torchsync-lint trace",
        usage="torchsync-lint trace [options] -- [python] (script.py | -m module) [args...]",
        description="Run a program under the sync guard and report every host-device sync it made, "
                    "joined to the static findings.")
    p.add_argument("--steps", type=int, default=0, metavar="N",
                   help="stop after N optimizer steps (default: run to the end)")
    p.add_argument("--warmup", type=int, default=0, metavar="N",
                   help="report syncs made during the first N optimizer steps (lazy initialisation) apart, with "
                        "the set-up before the first step; the per-step column counts the steps after them only")
    p.add_argument("--record-inputs", metavar="FILE", default=None,
                   help="save the devices, dtypes, shapes and small values of the arguments of every function "
                        "holding a finding (in the program's file and --paths) on its first entry, for "
                        "`torchsync-lint --verify --inputs FILE`")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    p.add_argument("--allow", action="append", default=[], metavar="ENTRY",
                   help="a rule code, op name or file:line glob whose syncs are expected (repeatable)")
    p.add_argument("--paths", nargs="*", default=[], metavar="PATH",
                   help="more files or folders to lint for the join (findings there that never synced are "
                        "reported as not seen)")
    p.add_argument("--fail-on", choices=("never", "unflagged", "any"), default="never",
                   help="exit 1 when a sync that is not allowed ran: one no rule flagged, or any")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="stop the program after this")
    p.add_argument("--from-json", metavar="FILE", help="render a saved `--format json` report again (no run)")
    return p


def split_command(command: List[str]) -> Tuple[str, List[str]]:
    """(interpreter, [script.py | -m module, args...]) from what follows ``--``."""
    if not command:
        raise ValueError("no program given after --")
    interp = sys.executable
    if os.path.basename(command[0]).startswith("python") and not command[0].endswith(".py"):
        interp, command = command[0], command[1:]
    if not command or (command[0] == "-m" and len(command) < 2):
        raise ValueError("expected a script or -m MODULE after the interpreter")
    if command[0].startswith("-") and command[0] != "-m":
        raise ValueError(f"unsupported interpreter option {command[0]!r}: give a script or -m MODULE")
    return interp, command


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stderr (tests): the process's own
        return 2


CUDA_PROBE = "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"


def cuda_missing(interp: str) -> Optional[str]:
    """Why ``interp`` cannot trace (no torch, no CUDA device), asked before the program runs: a
    training script run without the guard would take its time and show nothing."""
    try:
        proc = subprocess.run([interp, "-c", CUDA_PROBE], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot ask {interp} whether it sees a CUDA device: {exc}"
    if proc.returncode == 3:
        return f"{interp} sees no CUDA device: no sync could be seen, so the program was not run"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["torch is not importable"])[-1]
        return f"{interp} cannot import torch ({last}): the program was not run"
    return None


def run_program(interp: str, program: List[str], opts) -> dict:
    fd, out = tempfile.mkstemp(prefix="tsl-trace-", suffix=".json")
    os.close(fd)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [interp, "-m", "torchsync_lint.guard.bootstrap", "--out", out, "--steps", str(opts.steps),
           "--warmup", str(opts.warmup)]
    for a in opts.allow:
        cmd += ["--allow", a]
    targets_file = None
    if getattr(opts, "record_inputs", None):
        from torchsync_lint.guard.inputs import targets_for

        main = program[0] if program[0] != "-m" else None
        where = ([main] if main else []) + list(opts.paths)
        targets = targets_for(where, static_findings(where, include_cold=True))
        fd2, targets_file = tempfile.mkstemp(prefix="tsl-targets-", suffix=".json")
        with os.fdopen(fd2, "w", encoding="utf-8") as fh:
            json.dump(targets, fh)
        cmd += ["--record-inputs", os.path.abspath(opts.record_inputs), "--record-targets", targets_file]
    cmd += ["--", *program]
    try:
        # the program's own output goes to stderr: stdout carries the report
        proc = subprocess.run(cmd, env=env, timeout=opts.timeout, stdout=_stderr_fd())
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    except OSError as exc:
        raise ValueError(f"cannot run {interp}: {exc}") from exc
    try:
        with open(out, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        data = None
    finally:
        for tmp in (out, targets_file):
            try:
                if tmp:
                    os.unlink(tmp)
            except OSError:
                pass
    if data is None:
        why = "timed out" if code is None else f"exited with code {code} before the guard could report"
        raise ValueError(f"the program {why}")
    data["returncode"] = code
    return data


def static_findings(paths: List[str], include_cold: bool = False) -> List[Finding]:
    paths = [p for p in dict.fromkeys(paths) if p and os.path.exists(p)]
    if not paths:
        return []
    config = load(find_pyproject(paths[0]))
    if include_cold:
        config.include_cold = True
    try:
        return lint_paths(paths, config).findings
    except Exception:  # noqa: BLE001 - the targets of --record-inputs: the files' own findings still count
        if include_cold:
            return []
        raise


def _real(path: Optional[str]) -> Optional[str]:
    return os.path.realpath(path) if path else path


def join(data: dict, extra_paths: List[str]) -> Tuple[List[dict], List[Finding]]:
    """Sites with their status, and the static findings that never synced."""
    sites = data.get("sites", [])
    setup = data.get("setup_sites", []) or []
    files = [data.get("main_file")] + [s["path"] for s in sites + setup if s.get("path")] + list(extra_paths)
    findings = static_findings([f for f in files if f])
    flagged: Dict[Tuple[str, int], List[Finding]] = {}
    for f in findings:
        for ln in range(f.line, max(f.line, f.end_line) + 1):
            flagged.setdefault((_real(f.path), ln), []).append(f)
    seen_lines = set()
    for s in sites + setup:
        key = (_real(s.get("path")), s.get("line"))
        seen_lines.add(key)
        hits = flagged.get(key, [])
        if hits and s.get("code") == UNFLAGGED:
            s["code"] = hits[0].code
        s["status"] = "confirmed" if s.get("code") != UNFLAGGED else "unflagged"
    not_seen = [f for f in findings
                if not any((_real(f.path), ln) in seen_lines for ln in range(f.line, max(f.line, f.end_line) + 1))]
    sites.sort(key=lambda s: (-s.get("stall_us", 0.0), -s.get("count", 0)))
    setup.sort(key=lambda s: (s.get("phase", "") != "setup", -s.get("stall_us", 0.0), -s.get("count", 0)))
    return sites, not_seen


def steady_steps(data: dict) -> int:
    """Optimizer steps after the warm-up: what the per-step column divides by."""
    return max(int(data.get("steps") or 0) - int(data.get("warmup") or 0), 0)


def _rel(path: Optional[str]) -> str:
    if not path:
        return "<no user frame>"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _row(s: dict, steps: Optional[int]) -> str:
    per = f"{s['count'] / steps:.1f}" if steps else "-"
    allowed = " (allowed)" if s.get("allowed") else ""
    return (f"{s['stall_us'] / 1000:>10.2f} {s['count']:>7} {per:>8}  {s['status']:<10} {s['code']:<7} "
            f"{_rel(s['path'])}:{s['line']} ({s['function']})  {s['op'] or '?'}{allowed}")


def render_text(data: dict, sites: List[dict], not_seen: List[Finding]) -> str:
    total = sum(s["count"] for s in sites)
    stall = sum(s["stall_us"] for s in sites) / 1000.0
    steps = steady_steps(data)
    apart = []
    if data.get("setup_syncs"):
        apart.append(f"{data['setup_syncs']} in set-up before the first step")
    if data.get("warmup"):
        apart.append(f"{data.get('warmup_syncs', 0)} in {data['warmup']} warm-up step(s)")
    out = [f"trace: {data.get('steps', 0)} optimizer step(s), {steps} in the steady state: {total} sync(s) at "
           f"{len(sites)} site(s), total host stall {stall:.1f} ms"
           + (f" ({', '.join(apart)}: reported apart)" if apart else "")]
    if sites:
        out.append(f"{'stall ms':>10} {'count':>7} {'per step':>8}  {'status':<10} {'code':<7} site  op")
        for s in sites:
            out.append(_row(s, steps))
    setup = data.get("setup_sites") or []
    if setup:
        out.append("set-up and warm-up (not counted per step):")
        out.append(f"{'stall ms':>10} {'count':>7} {'phase':>8}  {'status':<10} {'code':<7} site  op")
        for s in setup:
            row = _row(s, None)
            out.append(row[:19] + f"{s.get('phase', 'setup'):>8}" + row[27:])
    counts = {k: sum(1 for s in sites + setup if s["status"] == k) for k in ("confirmed", "unflagged")}
    out.append(f"join: {counts['confirmed']} confirmed (flagged and seen), {counts['unflagged']} seen but never "
               f"flagged (TSL900), {len(not_seen)} flagged but never seen")
    for f in not_seen:
        out.append(f"  not seen: {_rel(f.path)}:{f.line}:{f.col}: {f.code} {f.message}")
    return "\n".join(out) + "\n"


def render_json(data: dict, sites: List[dict], not_seen: List[Finding]) -> str:
    doc = {k: data.get(k) for k in ("steps", "warmup", "warmup_syncs", "setup_syncs", "stopped", "exit", "error",
                                     "main_file", "inputs_recorded")}
    doc["steady_steps"] = steady_steps(data)
    doc["sites"] = sites
    doc["setup_sites"] = data.get("setup_sites") or []
    doc["not_seen"] = [f.to_json() for f in not_seen]
    doc["summary"] = {"syncs": sum(s["count"] for s in sites), "sites": len(sites),
                      "stall_us": round(sum(s["stall_us"] for s in sites), 1),
                      "confirmed": sum(1 for s in sites if s["status"] == "confirmed"),
                      "unflagged": sum(1 for s in sites if s["status"] == "unflagged"),
                      "not_seen": len(not_seen)}
    return json.dumps(doc, indent=2) + "\n"


def render_sarif(data: dict, sites: List[dict], not_seen: List[Finding]) -> str:
    rules = all_rules()
    findings = []
    for s in sites:
        if not s.get("path"):
            continue
        name = rules[s["code"]].name if s["code"] in rules else "unflagged-sync"
        f = Finding(path=_rel(s["path"]), line=s["line"], col=1, end_line=s["line"], end_col=1, code=s["code"],
                    name=name, message=f"synced {s['count']} time(s) in the traced run, total host stall "
                                       f"{s['stall_us'] / 1000:.2f} ms ({s['op'] or 'a torch call'})")
        f.verify = {"status": s["status"], "syncs": s["count"], "stall_us": s["stall_us"], "oracles": s["oracles"],
                    "ops": [s["op"]] if s["op"] else [], "run": "trace"}
        findings.append(f)
    for f in not_seen:
        f.verify = {"status": "not-seen", "syncs": 0, "stall_us": None, "oracles": [], "run": "trace"}
        findings.append(f)
    return render("sarif", findings, [])


RENDER = {"text": render_text, "json": render_json, "sarif": render_sarif}


def rerender(opts) -> int:
    """A saved json report in another format (CI keeps the json; people read the text)."""
    try:
        with open(opts.from_json, encoding="utf-8") as fh:
            doc = json.load(fh)
        sites = doc["sites"]
        doc.setdefault("setup_sites", [])
        not_seen = [Finding(**{k: f[k] for k in ("path", "line", "col", "end_line", "end_col", "code", "name",
                                                  "message")}) for f in doc.get("not_seen", [])]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"torchsync-lint trace: error: {opts.from_json}: not a trace json report ({exc})", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(RENDER[opts.format](doc, sites, not_seen))
    return EXIT_OK


def main(argv: List[str]) -> int:
    """``argv`` is what follows ``trace`` on the command line."""
    if "--" in argv:
        cut = argv.index("--")
        mine, command = argv[:cut], argv[cut + 1:]
    else:
        mine, command = argv, []
    parser = build_parser()
    try:
        opts = parser.parse_args(mine)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    if opts.from_json:
        return rerender(opts)
    try:
        interp, program = split_command(command)
        if opts.steps < 0 or opts.warmup < 0:
            raise ValueError("--steps and --warmup take a number of steps >= 0")
        Allow(opts.allow)  # bad entries stop here, with their message
        missing = cuda_missing(interp)
        if missing is not None:
            raise ValueError(missing)
        data = run_program(interp, program, opts)
    except ValueError as exc:
        print(f"torchsync-lint trace: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if not data.get("active"):
        print(f"torchsync-lint trace: error: the guard was inactive ({data.get('reason')}): no sync could be "
              "seen; run on a machine with a CUDA device", file=sys.stderr)
        return EXIT_ERROR
    sites, not_seen = join(data, opts.paths)
    sys.stdout.write(RENDER[opts.format](data, sites, not_seen))
    if data.get("error"):
        print(f"torchsync-lint trace: the program raised {data['error']}", file=sys.stderr)
    if data.get("returncode") not in (0, None) and not data.get("stopped"):
        return data["returncode"] if isinstance(data["returncode"], int) and data["returncode"] > 0 else EXIT_ERROR
    bad = [s for s in sites if not s.get("allowed")]
    if opts.fail_on == "any" and bad or opts.fail_on == "unflagged" and any(s["status"] == "unflagged" for s in bad):
        return EXIT_SYNCS
    return EXIT_OK
