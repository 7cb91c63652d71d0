"""The event oracles, in the verifier's child; ``torch`` is passed in.

``Observer``: ``set_sync_debug_mode("warn")`` with the "always" filter and a showwarning hook that
keeps the full stack; the ``torch.cuda._gpu_trace`` sync callbacks (device, stream, event), which
see explicit syncs and, before the wait, drain the queue to measure the stall; stderr captured at
the file-descriptor level (the debug mode prints there for ops reached outside a Python call, e.g.
in the autograd engine); a TorchFunctionMode that times each top-level torch call, to give each
sync its stall and its operation's name. The debug mode is restored on exit. The timing oracle is
``timing.py``; predict mode's recorder ``predict.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings
from typing import Dict, List, Optional

from torchsync_lint.verify.stacks import Roots, capture_stack

SYNC_TEXT = "synchronizing CUDA operation"

# ---------------------------------------------------------------------------------------------
# observation: debug mode, gpu trace, stderr, per-call timing


class EventLog:
    def __init__(self) -> None:
        self.raw: List[dict] = []  # per oracle sighting
        self.syncs: List[dict] = []  # merged: one per sync
        self.hook_s = 0.0


_TRACE_STATE = {"active": False, "observer": None}


def _trace_callback(kind):
    def cb(*args):
        obs = _TRACE_STATE["observer"]
        if obs is not None:
            obs.on_trace(kind)
    return cb


def _activate_gpu_trace(torch) -> bool:
    if _TRACE_STATE["active"]:
        return True
    try:
        from torch.cuda import _gpu_trace as gt

        gt.register_callback_for_device_synchronization(_trace_callback("device synchronize"))
        gt.register_callback_for_stream_synchronization(_trace_callback("stream synchronize"))
        gt.register_callback_for_event_synchronization(_trace_callback("event synchronize"))
        torch._C._activate_gpu_trace()
    except Exception:
        return False
    _TRACE_STATE["active"] = True
    return True


def _func_name(func) -> str:
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or str(func)
    mod = getattr(func, "__module__", None) or ""
    packet = getattr(func, "_overloadpacket", None)
    op = getattr(func, "_qualified_op_name", None) or getattr(packet, "_qualified_op_name", None)
    if op:  # torch.ops.<namespace>.<op>
        return "torch.ops." + op.replace("::", ".")
    if name.startswith("_VariableFunctionsClass."):
        return "torch." + name.split(".", 1)[1]
    if "<locals>" in name:  # torch.unique and friends are wrapped by boolean_dispatch
        return mod + "." + getattr(func, "__name__", name) if mod else name
    if name.startswith("_TensorBase.") or name.startswith("TensorBase."):
        name = "Tensor." + name.split(".", 1)[1]
    if mod in ("torch", "torch._C._VariableFunctions") and not name.startswith("Tensor."):
        return "torch." + name
    if mod.startswith("torch.") and not name.startswith("Tensor."):
        return mod + "." + name
    return name


def _position(raw: dict):
    user = next((f for f in raw.get("frames", []) if not f[6]), None)
    return tuple(user[:5]) if user else None


def _name_at(raw: dict) -> str:
    return ""


class Observer:
    """Debug-mode warnings, GPU-trace sync callbacks and stderr, merged into one record per sync."""

    def __init__(self, torch, roots: Roots, log: EventLog, use_gpu_trace: bool = True,
                 capture_stderr: bool = True, per_call_timer: bool = True) -> None:
        self.per_call_timer = per_call_timer
        self.torch = torch
        self.roots = roots
        self.log = log
        self.use_gpu_trace = use_gpu_trace
        self.capture_stderr = capture_stderr
        self._in_hook = False
        self._call: Optional[int] = None
        self._calls = 0
        self._stderr_pos = 0

    # -- hooks ------------------------------------------------------------------------------
    def _showwarning(self, message, category, filename, lineno, file=None, line=None):
        if SYNC_TEXT not in str(message):
            return
        t0 = time.perf_counter()
        frames = capture_stack(sys._getframe(1), self.roots)
        self.log.raw.append({"oracle": "debug-mode", "frames": frames, "call": self._call, "stall_us": None,
                             "detail": str(message).strip().splitlines()[0][:200]})
        self.log.hook_s += time.perf_counter() - t0

    def on_trace(self, kind: str) -> None:
        if self._in_hook:
            return
        self._in_hook = True
        try:
            t0 = time.perf_counter()
            frames = capture_stack(sys._getframe(2), self.roots)
            t1 = time.perf_counter()
            self.torch.cuda.synchronize()  # drain now: the sync about to happen would wait as long
            t2 = time.perf_counter()
            self.log.raw.append({"oracle": "gpu-trace", "frames": frames, "call": self._call,
                                 "stall_us": round((t2 - t1) * 1e6, 1), "detail": kind,
                                 "op": "torch.cuda.synchronize" if kind == "device synchronize" else ""})
            self.log.hook_s += (t1 - t0) + (time.perf_counter() - t2)
        finally:
            self._in_hook = False

    def _read_stderr(self) -> int:
        if not self.capture_stderr:
            return 0
        size = os.fstat(self._tmp.fileno()).st_size
        if size <= self._stderr_pos:
            return 0
        data = os.pread(self._tmp.fileno(), size - self._stderr_pos, self._stderr_pos)
        self._stderr_pos = size
        return data.decode("utf-8", "replace").count(SYNC_TEXT)

    def _stderr_events(self, frame) -> None:
        n = self._read_stderr()
        if n:
            frames = capture_stack(frame, self.roots)
            for _ in range(n):
                self.log.raw.append({"oracle": "stderr", "frames": frames, "call": self._call, "stall_us": None,
                                     "detail": "debug-mode message on stderr"})

    # -- per call merge ---------------------------------------------------------------------
    def _merge(self, raws: List[dict], op: str, call_s: Optional[float]) -> None:
        by_oracle: Dict[str, List[dict]] = {}
        for r in raws:
            by_oracle.setdefault(r["oracle"], []).append(r)
        n = max(len(v) for v in by_oracle.values())
        for i in range(n):
            present = {o: v[i] for o, v in by_oracle.items() if len(v) > i}
            rep = present.get("debug-mode") or present.get("gpu-trace") or present.get("stderr")
            stall = present["gpu-trace"]["stall_us"] if "gpu-trace" in present else None
            if stall is None and call_s is not None:
                stall = round(max(call_s, 0.0) * 1e6 / n, 1)
            self.log.syncs.append({
                "oracles": sorted(present), "frames": rep["frames"], "count": 1, "stall_us": stall,
                "op": op or rep.get("op", ""), "detail": "; ".join(sorted({p["detail"] for p in present.values()})),
            })

    def make_mode(self):
        from torch.overrides import TorchFunctionMode

        observer = self

        class CallTimer(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                observer._calls += 1
                observer._call = observer._calls
                n0 = len(observer.log.raw)
                hook0 = observer.log.hook_s
                t0 = time.perf_counter()
                try:
                    return func(*args, **(kwargs or {}))
                finally:
                    dt = time.perf_counter() - t0 - (observer.log.hook_s - hook0)
                    observer._stderr_events(sys._getframe(1))
                    new = observer.log.raw[n0:]
                    observer._call = None
                    if new:
                        del observer.log.raw[n0:]
                        observer._merge(new, _func_name(func), dt)

        return CallTimer()

    # -- context ----------------------------------------------------------------------------
    def __enter__(self) -> "Observer":
        torch = self.torch
        self._prev_mode = torch.cuda.get_sync_debug_mode()
        self._wcm = warnings.catch_warnings()
        self._wcm.__enter__()
        warnings.simplefilter("always")
        warnings.showwarning = self._showwarning
        if self.capture_stderr:
            sys.stderr.flush()
            self._tmp = tempfile.TemporaryFile()
            self._saved_err = os.dup(2)
            os.dup2(self._tmp.fileno(), 2)
            self._stderr_pos = 0
        if self.use_gpu_trace and _activate_gpu_trace(torch):
            _TRACE_STATE["observer"] = self
        self._mode = self.make_mode() if self.per_call_timer else None
        if self._mode is not None:
            self._mode.__enter__()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*debug mode is a prototype")
            torch.cuda.set_sync_debug_mode("warn")
        return self

    def __exit__(self, *exc) -> None:
        torch = self.torch
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*debug mode is a prototype")
                torch.cuda.set_sync_debug_mode(self._prev_mode)
        finally:
            if self._mode is not None:
                self._mode.__exit__(None, None, None)
            _TRACE_STATE["observer"] = None
            if self.capture_stderr:
                sys.stderr.flush()
                self._stderr_events(sys._getframe(1))
                os.dup2(self._saved_err, 2)
                os.close(self._saved_err)
                self._tmp.close()
            self._wcm.__exit__(None, None, None)
            leftover = self.log.raw[:]
            self.log.raw.clear()
            # outside any torch call (torch.cuda.synchronize(), event.synchronize()), or every sync
            # when the per-call timer is off: sightings at one user position are one call's
            group: List[dict] = []
            for r in leftover + [None]:
                if group and (r is None or _position(r) != _position(group[0])):
                    self._merge(group, group[0].get("op", "") or _name_at(group[0]), None)
                    group = []
                if r is not None:
                    group.append(r)
