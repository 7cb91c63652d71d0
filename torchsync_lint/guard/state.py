"""Per-thread guard stacks and the path of one sync from a hook to a record, a warning or an error.

Hooks (``hooks.py``) report *sightings*; inside a top-level torch call the sightings of that call
are merged (the GPU trace and the debug mode see the same sync: it counts once) when the call
returns, outside one each sighting is an event at once. An event goes to the guards of the thread
that synced; a native thread (the autograd engine's) works for the threads waiting in
``backward``/``grad``, so its syncs go to them, at their line. Other threads are not blamed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from torchsync_lint.guard import lookup
from torchsync_lint.guard.events import Roots, SyncEvent, frame_of_thread, thread_label, user_frames


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
class Sighting:
    oracle: str
    frame: object  # the Python frame that was running when the hook fired
    stall_us: Optional[float] = None
    op: str = ""
    thread: str = ""


@dataclass
class ThreadState:
    ident: int
    guards: list = field(default_factory=list)  # innermost last
    call_depth: int = 0
    call_raw: List[Sighting] = field(default_factory=list)
    pending: Optional[SyncEvent] = None
    in_backward: bool = False
    in_hook: bool = False
    hook_s: float = 0.0
    mode_ctx: object = None  # the torch function mode entered by this thread's outermost guard
    last_trace: Optional[SyncEvent] = None  # outside a torch call: the debug mode's warning comes after


_states: Dict[int, ThreadState] = {}
_lock = threading.RLock()
_roots: Optional[Roots] = None


def set_roots(roots: Roots) -> None:
    global _roots
    _roots = roots


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


def _owner_of_native_sync() -> Optional[ThreadState]:
    """A native thread's sync belongs to a guarded thread waiting in backward, if there is one."""
    if not isinstance(threading.current_thread(), threading._DummyThread):
        return None
    with _lock:
        waiting = [s for s in _states.values() if s.in_backward and s.guards]
    return waiting[0] if waiting else None


def sighting(oracle: str, frame, stall_us: Optional[float] = None, op: str = "") -> bool:
    """A hook saw a sync on this thread. False when no guard claims it (the caller may pass it on)."""
    st = current()
    if st is None or not st.guards:
        owner = _owner_of_native_sync()
        if owner is None:
            return False
        frame = frame_of_thread(owner.ident) or frame
        with _lock:
            owner.call_raw.append(Sighting(oracle, frame, stall_us, op, thread_label()))
        return True
    s = Sighting(oracle, frame, stall_us, op, thread_label())
    if st.call_depth:
        st.call_raw.append(s)
        return True
    last = st.last_trace
    st.last_trace = None
    if oracle == "debug-mode" and last is not None and frame_line(frame) == (last.path, last.line):
        last.oracles = sorted(set(last.oracles) | {oracle})  # `stream.synchronize()`: the trace came first
        return True
    events = finish(st, [s], s.op, None)
    if oracle == "gpu-trace" and events:
        st.last_trace = events[-1]
    return True


def frame_line(frame):
    top = user_frames(frame, roots(), limit=1)
    return (top[0].path, top[0].line) if top else (None, None)


def finish(st: ThreadState, raws: List[Sighting], op: str, call_s: Optional[float]) -> List[SyncEvent]:
    """Merge one call's sightings into events (the i-th sighting of each oracle is one sync)."""
    by_oracle: Dict[str, List[Sighting]] = {}
    for r in raws:
        by_oracle.setdefault(r.oracle, []).append(r)
    n = max(len(v) for v in by_oracle.values())
    out: List[SyncEvent] = []
    for i in range(n):
        present = {o: v[i] for o, v in by_oracle.items() if len(v) > i}
        rep = present.get("debug-mode") or next(iter(present.values()))
        stall = next((p.stall_us for p in present.values() if p.stall_us is not None), None)
        if stall is None and call_s is not None:
            stall = round(max(call_s, 0.0) * 1e6 / n, 1)
        name = op or next((p.op for p in present.values() if p.op), "")
        ev = make_event(rep.frame, name, sorted(present), stall, rep.thread)
        dispatch(st, ev)
        out.append(ev)
    return out


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


def raise_pending(st: Optional[ThreadState] = None) -> None:
    """At a safe point (a torch call returned, a sync API returned, the guard exits): raise."""
    st = st or current()
    if st is not None and st.pending is not None:
        ev, st.pending = st.pending, None
        raise SyncError(ev)


