"""Record what real calls passed to the functions that hold findings, for ``--verify --inputs FILE``.

On the first entry of each function whose lines hold a finding (``targets``: real path -> finding
lines), the arguments are described: tensors by device, dtype, shape (and their values when small;
the range of larger integer tensors, the share of True in boolean ones), numbers, strings, devices,
dtypes, containers (a few elements), modules and other objects by class (``self`` with its plain
attributes). Nothing else is kept. The recorder costs nothing on other functions: with Python 3.12+
``sys.monitoring`` disables its callback for every other code object after its first call; older
Pythons use a profile function until ``stop()`` (after the first optimizer step in ``trace``).

File format (JSON): ``{"version": 1, "torch": ..., "functions": [{"path", "name", "qualname",
"first_line", "last_line", "args": {name: description}}]}``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Dict, Iterable, List, Optional, Set

VERSION = 1
SMALL = 16  # tensors of at most this many elements keep their values
MAX_ELTS = 8
MAX_ATTRS = 48


def _class_name(obj) -> str:
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"


def describe(torch, value, depth: int = 0, attrs: bool = False) -> dict:
    """A JSON description of one argument (the recorder's guard is suspended: reading values may sync)."""
    if value is None:
        return {"kind": "literal", "value": None}
    if isinstance(value, bool) or isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"kind": "literal", "value": value}
    if isinstance(value, str):
        return {"kind": "literal", "value": value[:200]}
    if torch is not None:
        if isinstance(value, torch.Tensor):
            return _tensor(torch, value)
        if isinstance(value, torch.device):
            return {"kind": "device", "device": str(value)}
        if isinstance(value, torch.dtype):
            return {"kind": "dtype", "dtype": str(value).replace("torch.", "")}
        if isinstance(value, torch.Size):
            return {"kind": "size", "value": list(value)}
    if depth >= 3:
        return {"kind": "object", "class": _class_name(value)}
    if isinstance(value, (list, tuple)):
        out = {"kind": "tuple" if isinstance(value, tuple) else "list", "len": len(value),
               "elts": [describe(torch, v, depth + 1) for v in list(value)[:MAX_ELTS]]}
        return out
    if isinstance(value, dict):
        items = {}
        for k, v in list(value.items())[:MAX_ELTS * 2]:
            if isinstance(k, (str, int)):
                items[str(k)] = describe(torch, v, depth + 1)
        return {"kind": "dict", "items": items, "len": len(value)}
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            return {"kind": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape)}
    except Exception:  # noqa: BLE001
        pass
    out: dict = {"kind": "object", "class": _class_name(value)}
    if torch is not None and isinstance(value, torch.nn.Module):
        out["kind"] = "module"
        p = next(iter(value.parameters(recurse=True)), None)
        if p is not None:
            out["device"] = str(p.device)
    if attrs:
        out["attrs"] = _attrs(torch, value, depth)
    return out


def _attrs(torch, obj, depth: int) -> Dict[str, dict]:
    out: Dict[str, dict] = {}
    try:
        items = dict(vars(obj))
    except TypeError:
        return out
    for group in ("_parameters", "_buffers"):
        for k, v in (items.pop(group, None) or {}).items():
            if v is not None:
                items.setdefault(k, v)
    mods = items.pop("_modules", None) or {}
    for k, v in list(items.items()):
        if len(out) >= MAX_ATTRS:
            break
        if k.startswith("__") or callable(v) and not (torch is not None and isinstance(v, torch.nn.Module)):
            continue
        out[k] = describe(torch, v, depth + 1)
    for k, v in list(mods.items())[:MAX_ATTRS]:
        out.setdefault(k, {"kind": "module", "class": _class_name(v)})
    return out


def _tensor(torch, t) -> dict:
    out = {"kind": "tensor", "device": t.device.type, "dtype": str(t.dtype).replace("torch.", ""),
           "shape": list(t.shape)}
    if t.requires_grad:
        out["requires_grad"] = True
    try:
        if getattr(t, "is_meta", False) or t.layout != torch.strided:
            return out
        d = t.detach()
        if d.numel() <= SMALL:
            out["values"] = d.cpu().tolist()  # noqa: TSL003 - once per function, with the guard suspended
        elif d.dtype == torch.bool:
            out["true_share"] = round(float(d.float().mean().item()), 4)  # noqa: TSL001 - once, suspended
        elif not d.dtype.is_floating_point and not d.dtype.is_complex and d.numel():
            out["min"], out["max"] = int(d.min().item()), int(d.max().item())  # noqa: TSL001 - once, suspended
    except Exception:  # noqa: BLE001 - a description is best effort
        pass
    return out


class InputRecorder:
    """Describes the arguments of the target functions on their first entry."""

    def __init__(self, targets: Dict[str, Iterable[int]], on_record=None) -> None:
        self.targets: Dict[str, Set[int]] = {os.path.realpath(p): set(lines) for p, lines in targets.items()}
        self.records: List[dict] = []
        self.seen: Set[object] = set()
        self._files: Dict[str, Optional[str]] = {}
        self._lock = threading.Lock()
        self._tool = None
        self._profile = False
        self.on_record = on_record  # (callable) -> value: run the description with the guard suspended
        self.torch = sys.modules.get("torch")

    def _target_path(self, filename: str) -> Optional[str]:
        got = self._files.get(filename, 0)
        if got == 0:
            real = os.path.realpath(filename) if filename and not filename.startswith("<") else None
            got = real if real in self.targets else None
            self._files[filename] = got
        return got

    def _wanted(self, code) -> Optional[str]:
        path = self._target_path(code.co_filename)
        if path is None:
            return None
        lines = [ln for _, _, ln in code.co_lines() if ln is not None] or [code.co_firstlineno]
        first, last = min(lines + [code.co_firstlineno]), max(lines)
        if any(first <= ln <= last for ln in self.targets[path]):
            return path
        return None

    def _record(self, code, frame, path: str) -> None:
        torch = self.torch or sys.modules.get("torch")
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                 + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)]
        lines = [ln for _, _, ln in code.co_lines() if ln is not None] or [code.co_firstlineno]
        args: Dict[str, dict] = {}
        f_locals = frame.f_locals
        for name in names:
            if name not in f_locals:
                continue
            try:
                args[name] = describe(torch, f_locals[name], attrs=(name == "self"))
            except Exception as exc:  # noqa: BLE001
                args[name] = {"kind": "object", "class": "?", "error": type(exc).__name__}
        rec = {"path": path, "name": code.co_name, "qualname": getattr(code, "co_qualname", code.co_name),
               "first_line": code.co_firstlineno, "last_line": max(lines), "args": args}
        with self._lock:
            self.records.append(rec)

    def on_start(self, code, frame) -> bool:
        """True when the code object is of no further interest (seen, or not a target)."""
        if code in self.seen:
            return True
        with self._lock:
            if code in self.seen:
                return True
            self.seen.add(code)
        path = self._wanted(code)
        if path is not None:
            if self.on_record is not None:
                self.on_record(lambda: self._record(code, frame, path))
            else:
                self._record(code, frame, path)
        return True

    # -- start / stop -------------------------------------------------------------------------
    def start(self) -> None:
        mon = getattr(sys, "monitoring", None)
        if mon is not None:
            for tool in (4, 3, 5):  # free tool ids (0-2 are the debugger, coverage, profiler)
                if mon.get_tool(tool) is None:
                    mon.use_tool_id(tool, "torchsync-lint inputs")
                    self._tool = tool
                    break
        if self._tool is not None:
            mon = sys.monitoring

            def py_start(code, offset):
                self.on_start(code, sys._getframe(1))
                return mon.DISABLE

            mon.register_callback(self._tool, mon.events.PY_START, py_start)
            mon.set_events(self._tool, mon.events.PY_START)
            return
        self._profile = True

        def prof(frame, event, arg):
            if event == "call":
                self.on_start(frame.f_code, frame)

        sys.setprofile(prof)
        threading.setprofile(prof)

    def stop(self) -> None:
        if self._tool is not None:
            mon = sys.monitoring
            mon.set_events(self._tool, 0)
            mon.register_callback(self._tool, mon.events.PY_START, None)
            mon.free_tool_id(self._tool)
            self._tool = None
        if self._profile:
            sys.setprofile(None)
            threading.setprofile(None)
            self._profile = False

    def save(self, path: str) -> None:
        torch = self.torch or sys.modules.get("torch")
        doc = {"version": VERSION, "torch": getattr(torch, "__version__", None),
               "functions": sorted(self.records, key=lambda r: (r["path"], r["first_line"]))}
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, default=str)


def targets_for(paths: Iterable[str], findings: Iterable = ()) -> Dict[str, List[int]]:
    """Finding lines per Python file of ``paths`` (each file checked alone, cold code included),
    with the lines of ``findings`` (a project run's: the findings ``--verify`` will replay, some of
    which only the whole project shows)."""
    from torchsync_lint.check.lint_source import lint_source
    from torchsync_lint.config import Config

    files: List[str] = []
    for p in dict.fromkeys(paths):
        if p and os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".py")]
        elif p and os.path.isfile(p):
            files.append(p)
    config = Config(include_cold=True)
    out: Dict[str, List[int]] = {}
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                source = fh.read()
            found = lint_source(source, path, config)
        except Exception:  # noqa: BLE001 - a file that does not check holds no target
            continue
        if found:
            out[os.path.realpath(path)] = sorted({f.line for f in found})
    for f in findings:
        real = os.path.realpath(f.path)
        out[real] = sorted(set(out.get(real, [])) | {f.line})
    return out


def load(path: str) -> List[dict]:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict) or "functions" not in doc:
        raise ValueError(f"{path}: not a torchsync-lint inputs file (no 'functions')")
    return list(doc["functions"])
