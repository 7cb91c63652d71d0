"""The runtime oracles. Child process only: everything here gets ``torch`` passed in.

- ``SleepClock``: a calibrated ``torch.cuda._sleep`` kernel. Timing is the ground truth: with the
  sleep queued, a statement that syncs keeps the host waiting for it; one that does not returns at
  once. ``LineTimer`` applies it per source line: a trace function cuts the run into intervals (one
  per line event, return and call of a traced file), keeps the sleep queue topped up, and records
  each interval's host time, to compare with a run without the sleep.
- ``Observer``: ``set_sync_debug_mode("warn")`` with the "always" filter and a showwarning hook
  that keeps the full stack; the ``torch.cuda._gpu_trace`` sync callbacks (device, stream, event),
  which see explicit syncs and, before the wait, drain the queue to measure the stall; stderr
  captured at the file-descriptor level (the debug mode prints there for ops reached outside a
  Python call, e.g. in the autograd engine); a TorchFunctionMode that times each top-level torch
  call, to give each sync its stall and its operation's name. The debug mode is restored on exit.
- ``Recorder`` (predict mode): a TorchDispatchMode under FakeTensorMode that records
  data-dependent ops and host-device copies, with the stack; the meta device stands for the GPU.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import warnings
from typing import Dict, List, Optional, Set, Tuple

from torchsync_lint.guard.events import Roots as GuardRoots

SYNC_TEXT = "synchronizing CUDA operation"

# ---------------------------------------------------------------------------------------------
# stacks


class Roots(GuardRoots):
    """Which frames are not the user's: torch, the standard library, this package (the guard's
    rule), and every synthetic file name (``<string>``: code the harness compiled)."""

    def __init__(self, torch) -> None:
        super().__init__(os.path.dirname(os.path.realpath(torch.__file__)))

    def resolve(self, filename: str) -> Tuple[str, bool]:
        if not filename or filename.startswith("<"):
            return filename, True
        return super().resolve(filename)


def capture_stack(frame, roots: Roots, limit: int = 200) -> List[list]:
    """[path, line, end_line, col, end_col, function, is_library], innermost first."""
    out = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        path, lib = roots.resolve(code.co_filename)
        line = frame.f_lineno
        end_line = col = end_col = None
        if not lib:
            try:
                idx = frame.f_lasti // 2
                for i, pos in enumerate(code.co_positions()):
                    if i == idx:
                        if pos[0] == line:
                            end_line, col, end_col = pos[1], pos[2], pos[3]
                        break
            except (AttributeError, ValueError):
                pass
        out.append([path, line, end_line, col, end_col, code.co_name, lib])
        frame = frame.f_back
    return out


# ---------------------------------------------------------------------------------------------
# timing


class SleepClock:
    """A ``torch.cuda._sleep`` of a known length, calibrated once per process."""

    def __init__(self, torch, sleep_ms: float = 20.0, cycles_per_ms: Optional[float] = None) -> None:
        self.torch = torch
        cuda = torch.cuda
        if cycles_per_ms is None:  # calibrate with CUDA events (exact device time)
            cuda._sleep(1000)
            cuda.synchronize()
            cycles = 2_000_000
            ms = 0.0
            for _ in range(6):
                start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
                start.record()
                cuda._sleep(cycles)
                end.record()
                end.synchronize()
                ms = start.elapsed_time(end)
                if ms >= 5.0:
                    break
                cycles *= 4
            cycles_per_ms = cycles / max(ms, 1e-3)
        self.cycles_per_ms = cycles_per_ms
        self.cycles = int(self.cycles_per_ms * sleep_ms)
        self.sleep_s = sleep_ms / 1000.0
        self.keep_s = 0.75 * self.sleep_s
        self.free_at = 0.0
        self.enqueued = 0

    def reset(self) -> None:
        self.torch.cuda.synchronize()
        self.free_at = 0.0

    def scaled(self, sleep_ms: float) -> "SleepClock":
        """The same calibration with another sleep length."""
        return SleepClock(self.torch, sleep_ms, self.cycles_per_ms)

    def top_up(self, now: float) -> None:
        """Keep at least three quarters of a sleep queued ahead of the host."""
        if self.free_at - now < self.keep_s:
            self.torch.cuda._sleep(self.cycles)
            self.enqueued += 1
            self.free_at = max(self.free_at, now) + self.sleep_s


class LineTimer:
    """Host time per interval of a traced file's line, with or without the sleep kept queued."""

    def __init__(self, traced: Set[str], roots: Roots, clock: Optional[SleepClock] = None) -> None:
        self.traced = traced
        self.roots = roots
        self.clock = clock
        self.durations: Dict[Tuple[str, int], List[float]] = {}
        self._codes: Dict[object, Optional[str]] = {}
        self._cur: Optional[Tuple[str, int]] = None
        self._t = 0.0

    def _path(self, code) -> Optional[str]:
        try:
            return self._codes[code]
        except KeyError:
            path, _ = self.roots.resolve(code.co_filename)
            got = path if path in self.traced else None
            self._codes[code] = got
            return got

    def _switch(self, owner: Optional[Tuple[str, int]]) -> None:
        now = time.perf_counter()
        if self._cur is not None:
            self.durations.setdefault(self._cur, []).append(now - self._t)
        if self.clock is not None:
            self.clock.top_up(now)
        self._cur = owner
        self._t = time.perf_counter()

    def _owner(self, frame) -> Optional[Tuple[str, int]]:
        while frame is not None:
            path = self._path(frame.f_code)
            if path is not None:
                return (path, frame.f_lineno)
            frame = frame.f_back
        return None

    def _global(self, frame, event, arg):
        if event == "call":
            path = self._path(frame.f_code)
            if path is not None:
                self._switch((path, frame.f_lineno))
                return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "line":
            self._switch((self._path(frame.f_code), frame.f_lineno))
        elif event == "return":
            self._switch(self._owner(frame.f_back))
        return self._local

    def run(self, fn):
        if self.clock is not None:
            self.clock.reset()
        self._cur, self._t = None, time.perf_counter()
        sys.settrace(self._global)
        try:
            return fn()
        finally:
            sys.settrace(None)
            self._switch(None)
            if self.clock is not None:
                self.clock.torch.cuda.synchronize()


def line_excess(base_runs: List[Dict], sleep_runs: List[Dict]) -> List[list]:
    """[path, line, [excess_us per interval], [base_us per interval]]: median over repetitions."""
    keys = set()
    for r in base_runs + sleep_runs:
        keys.update(r)
    out = []
    for key in sorted(keys, key=lambda k: (k[0] or "", k[1])):
        per_index: Dict[int, List[float]] = {}
        base_index: Dict[int, List[float]] = {}
        for base, slept in zip(base_runs, sleep_runs):
            b, s = base.get(key, []), slept.get(key, [])
            if not s:
                continue
            ref = statistics.median(b) if b else 0.0
            for i, dur in enumerate(s):
                bi = b[i] if len(b) == len(s) else ref
                per_index.setdefault(i, []).append(dur - bi)
                base_index.setdefault(i, []).append(bi)
        if per_index:
            excess = [round(statistics.median(per_index[i]) * 1e6, 1) for i in sorted(per_index)]
            base = [round(statistics.median(base_index[i]) * 1e6, 1) for i in sorted(base_index)]
            out.append([key[0], key[1], excess, base])
    return out


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


# ---------------------------------------------------------------------------------------------
# predict mode (CPU): FakeTensor + dispatch recorder

DATA_DEPENDENT = {
    "aten._local_scalar_dense": "copies a value to the host",
    "aten.nonzero": "data-dependent output size",
    "aten.nonzero_static": None,
    "aten.argwhere": "data-dependent output size",
    "aten._unique2": "data-dependent output size",
    "aten.unique_dim": "data-dependent output size",
    "aten.unique_consecutive": "data-dependent output size",
    "aten._unique": "data-dependent output size",
    "aten.masked_select": "data-dependent output size",
    "aten.bincount": "data-dependent output size",
    "aten.histc": None,
    "aten.repeat_interleave": "data-dependent output size",
    "aten._assert_async": None,
    "aten.is_nonzero": "copies a value to the host",
    "aten.equal": "copies a value to the host",
    "aten.allclose": "copies a value to the host",
}


def make_recorder(torch, roots: Roots, log: EventLog, gpu: str = "meta"):
    """A TorchDispatchMode recording ops that make the host wait, with the user's stack."""
    from torch._subclasses.fake_tensor import FakeTensor
    from torch.utils._python_dispatch import TorchDispatchMode

    stopping = ("DataDependentOutputException", "DynamicOutputShapeException")

    def device_of(x):
        return x.device.type if isinstance(x, torch.Tensor) else None

    def tensors(args):
        flat = []
        for a in args:
            if isinstance(a, torch.Tensor):
                flat.append(a)
            elif isinstance(a, (list, tuple)):
                flat.extend(x for x in a if isinstance(x, torch.Tensor))
        return flat

    state = {"scalar": None}

    class Recorder(TorchDispatchMode):
        def _record(self, name, why):
            log.syncs.append({"oracles": ["fake-tensor"], "frames": capture_stack(sys._getframe(2), roots),
                              "count": 1, "stall_us": None, "op": name, "detail": why})

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = str(func.overloadpacket) if hasattr(func, "overloadpacket") else str(func)
            name = name if name.startswith("aten.") else "aten." + name.split("::")[-1]
            why = None
            if name in DATA_DEPENDENT:
                why = DATA_DEPENDENT[name]
                if name == "aten.repeat_interleave" and kwargs.get("output_size") is not None:
                    why = None
            elif name in ("aten._to_copy", "aten.copy_"):
                src = args[1] if name == "aten.copy_" and len(args) > 1 else (args[0] if args else None)
                dst = kwargs.get("device")
                dst_type = dst.type if hasattr(dst, "type") else (str(dst).split(":")[0] if dst else None)
                if name == "aten.copy_" and args:
                    dst_type = device_of(args[0])
                src_type = device_of(src)
                if src_type and dst_type and src_type != dst_type and gpu in (src_type, dst_type):
                    if dst_type == "cpu" or not kwargs.get("non_blocking", False):
                        why = "host-to-device copy" if dst_type != "cpu" else "device-to-host copy"
            elif name == "aten.index_put_" and len(args) > 2 and args[2] is state["scalar"]:
                indices = [i for i in (args[1] or []) if isinstance(i, torch.Tensor)]
                if indices and not any(i.dtype == torch.bool for i in indices):
                    why = "a Python scalar copied to the device for an integer-index assignment"
            if why is None:
                flat = tensors(args)
                if any(t.device.type == gpu for t in flat):
                    # the indexing code builds tensors from host lists/ranges straight on the device: on
                    # a GPU that is a host-to-device copy (and a CPU operand of more than 0-dim is one too)
                    host = [t for t in flat if not isinstance(t, FakeTensor) and t.device.type == gpu]
                    if gpu != "cpu":
                        host += [t for t in flat if t.device.type == "cpu" and t.dim() > 0]
                    if host:
                        why = "host data copied to the device"
            if why:
                self._record(name, why)
            try:
                out = func(*args, **kwargs)
            except Exception as exc:
                if type(exc).__name__ in stopping and not why:
                    self._record(name, "data-dependent output (" + str(exc).split("(")[0].strip()[:80] + ")")
                raise
            state["scalar"] = out if name == "aten.scalar_tensor" else None
            return out

    return Recorder()


def make_device_redirect(torch, gpu: str = "meta"):
    """In predict mode the meta device plays the GPU: send every cuda device argument there."""
    from torch.overrides import TorchFunctionMode

    def fix(v):
        if isinstance(v, torch.device) and v.type == "cuda":
            return torch.device(gpu)
        if isinstance(v, str) and v.startswith("cuda"):
            return gpu
        return v

    class Redirect(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if "device" in kwargs:
                kwargs["device"] = fix(kwargs["device"])
            if name == "cuda":
                return args[0].to(gpu, **{k: v for k, v in kwargs.items() if k == "non_blocking"})
            if name == "to":
                args = tuple(fix(a) for a in args)
            if name in ("is_cuda",):
                return True
            return func(*args, **kwargs)

    return Redirect()
