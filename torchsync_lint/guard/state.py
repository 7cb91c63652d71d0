"""Per-thread guard stacks and the path of one sync from a hook to a record, a warning or an error.

Hooks (``hooks.py``) report *sightings*, each an event at once, except that the debug mode's
warning for a sync the GPU trace already reported (the same caller frame and instruction) is
merged into it: one sync counts once. No hook runs on ordinary torch calls; the op is named
lazily, from the stack, when a sync fires (``opname.py``). An event goes to the guards of the thread
that synced; a native thread (the autograd engine's) works for the threads waiting in
``backward``/``grad``, so its syncs go to them, at their line. Other threads are not blamed.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from torchsync_lint.guard import lookup
from torchsync_lint.guard.events import Roots, SyncEvent, codes_of, stack_key, thread_label, user_frames

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_GUARD_DIR = os.path.join(_PKG_DIR, "guard") + os.sep


class SyncError(RuntimeError):
    """A host-device sync inside ``no_sync(mode="error")``; ``.event`` says where and what."""

    __module__ = "torchsync_lint.guard"

    def __init__(self, event: SyncEvent) -> None:
        self.event = event
        super().__init__("host-device sync inside no_sync(): " + event.describe())


class SyncWarning(UserWarning):
    """A host-device sync inside ``no_sync(mode="warn")``."""

    __module__ = "torchsync_lint.guard"


@dataclass
class ThreadState:
    ident: int
    guards: list = field(default_factory=list)  # innermost last
    pending: Optional[SyncEvent] = None
    in_hook: bool = False
    suspended: int = 0  # > 0 while the guard itself touches tensors (recording inputs): not the user's syncs
    # events the GPU trace reported in the op still running: the debug mode's warning for the same
    # sync comes when the op returns (same frame, same instruction) and is merged into them
    open: List[Tuple[Tuple[int, int], SyncEvent]] = field(default_factory=list)
    armed: Optional[tuple] = None  # (frame, previous trace function) while an error waits for the op to return


_states: Dict[int, ThreadState] = {}
_lock = threading.RLock()
_roots: Optional[Roots] = None
_torch_dir: Optional[str] = None
_SKIP_TAILS = (os.sep + os.path.join("torch", "_utils.py"), os.sep + "warnings.py")  # torch's callback registry


def set_roots(roots: Roots, torch_dir: Optional[str] = None) -> None:
    global _roots, _torch_dir
    _roots = roots
    _torch_dir = torch_dir


def roots() -> Roots:
    global _roots
    if _roots is None:
        _roots = Roots(None)
    return _roots


def current(create: bool = False) -> Optional[ThreadState]:
    ident = threading.get_ident()
    st = _states.get(ident)
    if st is None and create:
        with _lock:
            st = _states.setdefault(ident, ThreadState(ident))
    return st


def drop_if_idle(st: ThreadState) -> None:
    if not st.guards:
        with _lock:
            _states.pop(st.ident, None)


def any_guarded() -> bool:
    return bool(_states)


BACKWARD_FUNCS = ("backward", "grad", "_engine_run_backward")


def _owner_of_native_sync():
    """A native thread's sync belongs to a guarded thread waiting in backward (looked up lazily, from
    that thread's current stack, only when such a sync fires): (state, its frame) or None."""
    if not isinstance(threading.current_thread(), threading._DummyThread):
        return None
    with _lock:
        guarded = [s for s in _states.values() if s.guards]
    if not guarded:
        return None
    frames = sys._current_frames()
    for s in guarded:
        top = frames.get(s.ident)
        f, depth = top, 0
        while f is not None and depth < 100:
            code = f.f_code
            if code.co_name in BACKWARD_FUNCS and "autograd" in code.co_filename:
                return s, top
            f, depth = f.f_back, depth + 1
    return None


def _caller(frame):
    """The nearest frame that is not the hooks' own (nor torch's callback registry or warnings)."""
    f = frame
    while f is not None:
        name = f.f_code.co_filename
        if not (name.startswith(_GUARD_DIR) or name.endswith(_SKIP_TAILS)):
            break
        f = f.f_back
    return f


def _op_for(frame) -> str:
    from torchsync_lint.guard import opname

    return opname.op_at(frame, _torch_dir, sys.modules.get("torch"))


def sighting(oracle: str, frame, stall_us: Optional[float] = None, op: str = "", fallback_op: str = "") -> bool:
    """A hook saw a sync on this thread. False when no guard claims it (the caller may pass it on).

    The GPU trace fires inside the op, before the wait (with the stall measured); the debug mode's
    warning comes as the op returns: both for one sync share the caller's frame and instruction,
    and count once."""
    st = current()
    if st is not None and st.suspended:
        return True
    caller = _caller(frame)
    if st is None or not st.guards:
        got = _owner_of_native_sync()
        if got is None:
            return False
        owner, owner_frame = got
        ev = make_event(owner_frame or caller, op or fallback_op or "autograd engine (backward)", [oracle], stall_us,
                        thread_label())
        dispatch(owner, ev)
        if oracle == "gpu-trace" and owner_frame is not None:
            # the debug mode's warning for this sync comes in the waiting thread, as the engine's
            # call returns there (the frame it waits in now): the same sync, counted once
            top = _caller(owner_frame)
            owner.open.append(((id(top), top.f_lasti), ev))
        return True
    key = (id(caller), caller.f_lasti if caller is not None else -1)
    if oracle == "debug-mode":
        for i, (k, ev) in enumerate(st.open):
            if k == key and "debug-mode" not in ev.oracles:
                ev.oracles = sorted(set(ev.oracles) | {oracle})
                if ev.thread != thread_label():  # an engine thread's sync: named by the call that waited
                    ev.op = op or _op_for(caller) or ev.op
                del st.open[i]
                return True
    if st.open:
        st.open = [(k, e) for k, e in st.open if k == key][-8:]
    ev = _site_event(frame, caller, op, fallback_op, oracle, stall_us)
    dispatch(st, ev)
    if oracle == "gpu-trace":
        st.open.append((key, ev))
    if st.pending is not None:
        arm(st, caller)
    return True


def _no_trace(frame, event, arg):
    return None


def _user_frame(frame):
    """The innermost frame outside torch, the standard library and the guard (the user's line)."""
    r = roots()
    f, depth = frame, 0
    while f is not None and depth < 400:
        if not r.resolve(f.f_code.co_filename)[1]:
            return f
        f, depth = f.f_back, depth + 1
    return frame


def _with_line(frame) -> bool:
    """A ``with`` statement's line: its exit code runs outside the block's protection (an error raised
    there would skip ``__exit__``); the error waits for the next line, the return or the guard's exit."""
    import linecache

    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno).lstrip()
    return text.startswith(("with ", "with(", "async with "))


def arm(st: ThreadState, frame) -> None:
    """Error mode, without a hook on every torch call: raise in the user's frame once the op has
    returned, at its next line or as it returns. Never inside a hook, in the middle of an op: torch
    turns an exception raised from its warning handler into ``SystemError: error return without
    exception set``. Nor at the instruction right after the op: the op's result is still on the
    frame's value stack, and a CUDA tensor freed while an exception propagates calls torch's GPU-trace
    hook (memory deallocation) with the exception set, which loses it (the same SystemError). At a
    line's start the value stack is empty; at a return the returned value is held by the error until
    it is handled. A local trace function on that one frame does it, and is removed at once."""
    if frame is None or st.armed is not None:
        return
    frame = _user_frame(frame)
    st.armed = (frame, sys.gettrace())

    def local(f, event, arg):
        __tracebackhide__ = True  # noqa: F841
        if f is frame and st.pending is not None and (event == "return" or (event == "line" and not _with_line(f))):
            raise_pending(st, hold=arg if event == "return" else None)
        return local

    try:
        frame.f_trace_lines = True
        frame.f_trace = local
        sys.settrace(st.armed[1] or _no_trace)
    except Exception:  # noqa: BLE001 - no tracing here: the error comes at the next safe point
        disarm(st)


def disarm(st: ThreadState) -> None:
    armed, st.armed = st.armed, None
    if armed is None:
        return
    frame, prev = armed
    try:
        frame.f_trace = None
    except Exception:  # noqa: BLE001
        pass
    if threading.get_ident() == st.ident:
        sys.settrace(prev)


_SITES: Dict[tuple, tuple] = {}  # a sync site's event, but for its stall and oracle: (codes, op, stack, code, when)


def _site_event(frame, caller, op: str, fallback_op: str, oracle: str, stall_us: Optional[float]) -> SyncEvent:
    """``make_event`` for a site seen before: the same stack (code objects and instructions, from the
    hook's frame) gives the same op, user stack and rule code; the code is looked up again after
    ``lookup.RECHECK_S`` (the file may have changed)."""
    r = roots()
    k = stack_key(frame, (op, fallback_op, id(r)))
    site = _SITES.get(k)
    now = time.monotonic()
    if site is None or now - site[4] > lookup.RECHECK_S:
        name = site[1] if site is not None else (op or _op_for(caller) or fallback_op)
        stack = user_frames(caller, r)
        top = stack[0] if stack else None
        code = lookup.code_for(top.path if top else None, top.line if top else None, name)
        site = (codes_of(frame), name, stack, code, now)
        if len(_SITES) > 4096:
            _SITES.clear()
        _SITES[k] = site
    stack = site[2]
    top = stack[0] if stack else None
    ev = SyncEvent(top.path if top else None, top.line if top else None, top.function if top else "",
                   site[1], [oracle], None if stall_us is None else round(stall_us, 1), thread=thread_label(),
                   stack=list(stack))
    ev.code = site[3]
    return ev


def make_event(frame, op: str, oracles: List[str], stall_us: Optional[float], thread: str) -> SyncEvent:
    stack = user_frames(frame, roots())
    top = stack[0] if stack else None
    ev = SyncEvent(top.path if top else None, top.line if top else None, top.function if top else "",
                   op, oracles, None if stall_us is None else round(stall_us, 1), thread=thread, stack=stack)
    ev.code = lookup.code_for(ev.path, ev.line, op)
    return ev


def dispatch(st: ThreadState, ev: SyncEvent) -> None:
    guards = list(st.guards)
    if not guards:
        return
    ev.allowed = any(g.allow.matches(ev) for g in guards)
    for g in guards:
        g._record(ev)
    if ev.allowed:
        return
    mode = guards[-1].mode
    if mode == "error":
        if st.pending is None:
            st.pending = ev
    elif mode == "warn":
        import warnings

        warnings.warn_explicit(ev.describe(), SyncWarning, ev.path or "<unknown>", ev.line or 0,
                               registry=None)


def raise_pending(st: Optional[ThreadState] = None, hold=None) -> None:
    """At a safe point (a torch call returned, a sync API returned, the guard exits): raise.
    ``hold``: a value the error keeps alive until it is handled (a returned tensor must not be freed
    while the error propagates: see ``arm``)."""
    __tracebackhide__ = True  # noqa: F841 - pytest: the failure ends at the user's line
    st = st or current()
    if st is not None and st.armed is not None:
        disarm(st)
    if st is not None and st.pending is not None:
        ev, st.pending = st.pending, None
        err = SyncError(ev)
        err._held = hold
        raise err


