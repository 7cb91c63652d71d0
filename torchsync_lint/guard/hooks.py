"""The torch side of the guard: which hooks see a sync, installed while any guard is active.

- the sync debug mode (``"warn"``) with an ``"always"`` filter for its message and a
  ``showwarning`` hook that keeps the frame (its own file:line is often inside torch);
- ``torch.cuda._gpu_trace`` device, stream and event synchronisation callbacks, which see the
  explicit syncs the debug mode misses; each drains the queue and times it: the host stall;
- ``Tensor.to``, ``Tensor.cuda`` and ``Tensor.copy_`` wrapped: a pageable host tensor copied with
  ``non_blocking=True`` blocks, and nothing else tells (the wrapper's fast path is one check);
- no hook on ordinary torch calls: the op is named from the stack when a sync fires, and error
  mode raises at the first safe point after the op returned: the debug mode's warning (torch
  emits it as the op returns), a wrapped sync API or copy returning, or the guard's exit (raising
  inside a trace callback, in the middle of an op, is unsafe);
- ``torch.cuda.empty_cache`` wrapped: it syncs when it gives cached blocks back to the driver.

Never the debug mode's ``"error"`` setting with the trace callbacks: that breaks ``.item()``.
The debug mode, the filters, ``showwarning`` and the wrapped functions are process-global: they
are installed by the first active guard and restored by the last one, also after an exception.
The trace callbacks cannot be unregistered (torch has no API for it): they stay, and do nothing
while no guard is active; at exit, stderr goes quiet once the atexit handlers have run, so the
trace hook's failures during finalisation are not printed.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import warnings
from typing import Optional

from torchsync_lint.guard import state
from torchsync_lint.guard.events import Roots

SYNC_TEXT = "called a synchronizing CUDA operation"
PAGEABLE_BYTES = 64 * 1024  # smaller pageable copies are staged and return at once (measured: DESIGN.md)

_lock = threading.RLock()
_installed = 0
_saved: dict = {}
_trace_registered = False


def cuda_state():
    """(torch or None, why not active or None)."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure means no guard
        return None, f"torch is not importable ({type(exc).__name__})"
    try:
        if not torch.cuda.is_available():
            return torch, "no CUDA device"
    except Exception as exc:  # noqa: BLE001
        return torch, f"CUDA is not usable ({exc})"
    return torch, None


# ---------------------------------------------------------------------------------------------
# process-global hooks


def _drain(torch) -> float:
    t0 = time.perf_counter()
    torch._C._cuda_synchronize()
    return (time.perf_counter() - t0) * 1e6


_in_hook = threading.local()  # per thread, the autograd engine's native threads too: our own drain syncs


def _trace_cb(kind: str, op: str):
    def cb(*_args):
        if not state._states or getattr(_in_hook, "on", False):
            return
        torch = sys.modules["torch"]
        _in_hook.on = True
        try:
            frame = sys._getframe(1)
            stall = _drain(torch)  # the sync about to happen would have waited as long
            state.sighting("gpu-trace", frame, stall, fallback_op=op)
        finally:
            _in_hook.on = False
    return cb


def _quiet_finalisation() -> None:
    """Once the trace is on, every CUDA free during interpreter finalisation calls torch's trace
    hook after the import machinery is gone, and torch logs ``cuda trace hook execution failed:
    KeyError: '__import__'`` to the C stderr, once per tensor. Registered when this module is
    first imported (atexit runs its handlers last-registered first: this one runs late), it sends
    what is left of stderr to /dev/null, and only in a process where the trace was turned on."""
    if not _trace_registered:
        return
    try:
        sys.stderr.flush()
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


atexit.register(_quiet_finalisation)


def _register_trace(torch) -> None:
    global _trace_registered
    if _trace_registered:
        return
    from torch.cuda import _gpu_trace as gt

    gt.register_callback_for_device_synchronization(_trace_cb("device", "torch.cuda.synchronize"))
    gt.register_callback_for_stream_synchronization(_trace_cb("stream", "torch.cuda.Stream.synchronize"))
    gt.register_callback_for_event_synchronization(_trace_cb("event", "torch.cuda.Event.synchronize"))
    torch._C._activate_gpu_trace()
    _trace_registered = True


def _showwarning(message, category, filename, lineno, file=None, line=None):
    __tracebackhide__ = True  # noqa: F841 - pytest: the failure ends at the user's line
    if SYNC_TEXT in str(message):
        if state.sighting("debug-mode", sys._getframe(1)):
            return  # never raise here: torch's warning handler would turn it into a SystemError
        if not _saved.get("mode"):
            return  # an unguarded thread's while the debug mode is on only for us
    prev = _saved.get("showwarning")
    if prev is warnings._showwarning_orig or prev is None:
        # catch_warnings(record=True) (pytest) swaps the implementation, not showwarning
        warnings._showwarnmsg_impl(warnings.WarningMessage(message, category, filename, lineno, file, line))
    else:
        prev(message, category, filename, lineno, file, line)


def _wrap_sync_api(fn):
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        out = fn(*args, **kwargs)
        state.raise_pending()
        return out
    wrapper.__wrapped__ = fn
    wrapper.__name__ = getattr(fn, "__name__", "synchronize")
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    return wrapper


def _wrap_empty_cache(torch, fn):
    def empty_cache():
        if state.current() is None:
            return fn()
        before = torch.cuda.memory_reserved()
        t0 = time.perf_counter()
        fn()
        dt = (time.perf_counter() - t0) * 1e6
        if torch.cuda.memory_reserved() < before:  # blocks went back to the driver: cudaFree syncs
            state.sighting("empty-cache", sys._getframe(1), dt, "torch.cuda.empty_cache")
        state.raise_pending()
    empty_cache.__wrapped__ = fn
    empty_cache.__doc__ = fn.__doc__
    return empty_cache


def _patch(owner, name, make):
    orig = getattr(owner, name, None)
    if orig is None:
        return
    own = name in vars(owner)  # inherited (Tensor.to from TensorBase): restored by deleting ours
    _saved.setdefault("patches", []).append((owner, name, orig if own else None))
    setattr(owner, name, make(orig))


def install(torch, cuda: bool = True) -> None:
    """``cuda=False`` (tests on a CPU-only torch): only the warnings hook; no debug mode, trace, patches."""
    global _installed
    with _lock:
        _installed += 1
        if _installed > 1:
            return
        try:
            torch_dir = getattr(torch, "__path__", [None])[0]
            state.set_roots(Roots(torch_dir), os.path.realpath(torch_dir) if torch_dir else None)
            _saved["showwarning"] = warnings.showwarning
            warnings.filterwarnings("always", message=".*" + SYNC_TEXT, category=UserWarning)
            _saved["filter"] = warnings.filters[0]
            warnings.showwarning = _showwarning
            if not cuda:
                return
            _register_trace(torch)
            _saved["mode"] = torch.cuda.get_sync_debug_mode()
            cuda = torch.cuda
            _patch(cuda, "synchronize", _wrap_sync_api)
            _patch(cuda.Stream, "synchronize", _wrap_sync_api)
            _patch(cuda.Event, "synchronize", _wrap_sync_api)
            if hasattr(torch, "accelerator"):
                _patch(torch.accelerator, "synchronize", _wrap_sync_api)
            _patch(cuda, "empty_cache", lambda fn: _wrap_empty_cache(torch, fn))
            for name in ("to", "cuda", "copy_"):
                _patch(torch.Tensor, name, _wrap_copy(torch, name))
            if hasattr(cuda, "memory"):
                _patch(cuda.memory, "empty_cache", lambda fn: _wrap_empty_cache(torch, fn))
            with warnings.catch_warnings():  # torch's "prototype feature" notice is not the user's warning
                warnings.filterwarnings("ignore", message=".*debug mode is a prototype")
                torch.cuda.set_sync_debug_mode("warn")
        except BaseException:
            _installed = 1
            uninstall(torch)
            raise


def uninstall(torch) -> None:
    global _installed
    with _lock:
        _installed -= 1
        if _installed > 0:
            return
        _installed = 0
        try:
            if "mode" in _saved:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*debug mode is a prototype")
                    torch.cuda.set_sync_debug_mode(_saved.pop("mode"))
        finally:
            for owner, name, orig in reversed(_saved.pop("patches", [])):
                if orig is None:
                    try:
                        delattr(owner, name)
                    except AttributeError:
                        pass
                else:
                    setattr(owner, name, orig)
            if "showwarning" in _saved:
                warnings.showwarning = _saved.pop("showwarning")
            flt = _saved.pop("filter", None)
            if flt is not None:
                try:
                    warnings.filters.remove(flt)
                except ValueError:
                    pass
                mutated = getattr(warnings, "_filters_mutated", None) or getattr(
                    warnings, "_filters_mutated_lock_held", None)
                if mutated is not None:
                    mutated()


def installed() -> int:
    return _installed


# ---------------------------------------------------------------------------------------------
# pageable non-blocking copies: `.to`, `.cuda` and `copy_` wrapped (nothing else is)


def _non_blocking(name: str, args, kwargs) -> bool:
    if kwargs and kwargs.get("non_blocking"):
        return True
    if name == "copy_":
        return len(args) > 1 and args[1] is True
    if name == "cuda":
        return len(args) > 1 and args[1] is True
    return any(a is True for a in args[1:4])  # to(device, dtype, non_blocking, copy)


def _pageable_size(torch, src, dst) -> Optional[int]:
    if not (isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor)):
        return None
    if src.device.type != "cpu" or dst.device.type != "cuda" or src.is_pinned():
        return None
    size = src.numel() * src.element_size()
    return size if size > PAGEABLE_BYTES else None


def _wrap_copy(torch, name: str):
    def make(fn):
        def wrapper(self, *args, **kwargs):
            if not state._states or not _non_blocking(name, (self,) + args, kwargs):
                return fn(self, *args, **kwargs)
            t0 = time.perf_counter()
            out = fn(self, *args, **kwargs)
            dt = time.perf_counter() - t0
            src, dst = (args[0] if args else None, self) if name == "copy_" else (self, out)
            if _pageable_size(torch, src, dst):
                state.sighting("pageable-copy", sys._getframe(1), dt * 1e6, "Tensor." + name)
                state.raise_pending()
            return out
        wrapper.__wrapped__ = fn
        wrapper.__name__ = name
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper
    return make


def enter_thread(torch, st) -> None:
    """Nothing per thread: no hook runs on ordinary torch calls (the op is named when a sync fires)."""


def exit_thread(st) -> None:
    st.open.clear()
