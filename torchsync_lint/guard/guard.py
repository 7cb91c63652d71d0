"""``no_sync()``: the context manager (see the package docstring and docs/guard.md)."""

from __future__ import annotations

import sys
import warnings
from typing import Iterable, List, Optional

from torchsync_lint.guard import state
from torchsync_lint.guard.allow import Allow
from torchsync_lint.guard.events import SyncEvent

MODES = ("error", "warn", "record")


class GuardInactiveWarning(RuntimeWarning):
    """``no_sync()`` ran without a CUDA device (or without torch): it guarded nothing."""


_said_inactive = False


class no_sync:  # noqa: N801 - used like a function: `with no_sync():`
    """Inside, a host-device sync raises ``SyncError`` (``mode="error"``), warns ``SyncWarning``
    (``"warn"``) or is only recorded (``"record"``); ``.events`` holds every sync seen, allowed
    ones too (``event.allowed``). ``allow`` takes rule codes (``"TSL001"``, ``"TSL2"``), qualified
    op names (``"Tensor.item"``, ``"torch.nonzero"``) and ``file:line`` globs (``"*/eval.py:*"``).

    Without a CUDA device (or torch) it is a no-op: ``.active`` is False and ``.reason`` says why
    (a ``GuardInactiveWarning`` says so once per process unless ``quiet=True``).
    """

    def __init__(self, allow: Iterable[str] = (), mode: str = "error", quiet: bool = False,
                 backend=None, record_inputs: Optional[str] = None, inputs_for: Iterable[str] = ()) -> None:
        if mode not in MODES:
            raise ValueError(f"no_sync(mode=...) must be one of {', '.join(MODES)}, got {mode!r}")
        if isinstance(allow, str):
            allow = [allow]
        self.allow = Allow(allow)
        self.mode = mode
        self.quiet = quiet
        self.events: List[SyncEvent] = []
        self.active = False
        self.reason: Optional[str] = None
        self._active_backend = None
        self._state = None
        self.max_events = 100_000
        self.dropped = 0
        self._backend = backend  # tests drive the guard without CUDA through a backend of their own
        # record mode: describe the arguments of the functions holding findings in `inputs_for` on
        # their first entry and save them to `record_inputs` on exit (for --verify --inputs)
        self.record_inputs = record_inputs
        self.inputs_for = [inputs_for] if isinstance(inputs_for, str) else list(inputs_for)
        self.inputs = None

    @property
    def violations(self) -> List[SyncEvent]:
        return [e for e in self.events if not e.allowed]

    def _record(self, ev: SyncEvent) -> None:
        if len(self.events) < self.max_events:
            self.events.append(ev)
        else:
            self.dropped += 1

    def __enter__(self) -> "no_sync":
        backend = self._backend or TorchBackend()
        why = backend.unavailable()
        if why is not None:
            self.reason = why
            self._say_inactive()
            return self
        st = state.current(create=True)
        backend.install()
        try:
            backend.enter_thread(st)
        except BaseException:
            backend.uninstall()
            state.drop_if_idle(st)
            raise
        st.guards.append(self)
        self._active_backend, self._state, self.active = backend, st, True
        if self.record_inputs and self.inputs_for:
            from torchsync_lint.guard.inputs import InputRecorder, targets_for

            self.inputs = InputRecorder(targets_for(self.inputs_for), on_record=self.suspended_call)
            self.inputs.start()
        return self

    def suspended_call(self, fn):
        """Run ``fn`` with this thread's syncs ignored (the guard's own reads of argument values)."""
        st = state.current()
        if st is None:
            return fn()
        st.suspended += 1
        try:
            return fn()
        finally:
            st.suspended -= 1

    def __exit__(self, exc_type, exc, tb) -> bool:
        __tracebackhide__ = True  # noqa: F841 - pytest: the failure ends at the user's line
        if not self.active:
            return False
        st, backend = self._state, self._active_backend
        if self.inputs is not None:
            self.inputs.stop()
            self.inputs.save(self.record_inputs)
        pending = None
        try:
            if self in st.guards:
                st.guards.remove(self)
            state.disarm(st)
            if not st.guards:
                pending, st.pending = st.pending, None
                backend.exit_thread(st)
                state.drop_if_idle(st)
            elif st.pending is not None and st.pending in self.events:
                pending, st.pending = st.pending, None
        finally:
            self.active = False
            backend.uninstall()
        if pending is not None and exc_type is None:
            raise state.SyncError(pending).with_traceback(None)
        return False

    def _say_inactive(self) -> None:
        global _said_inactive
        if self.quiet or _said_inactive:
            return
        _said_inactive = True
        warnings.warn(f"torchsync_lint.guard.no_sync is inactive: {self.reason}", GuardInactiveWarning,
                      stacklevel=3)

    def report(self, file=None) -> None:
        """Print the events seen (record mode) to ``file`` (stderr)."""
        file = file or sys.stderr
        for ev in self.events:
            print(("allowed: " if ev.allowed else "") + ev.summary(), file=file)


class TorchBackend:
    """The real hooks (``hooks.py``); needs torch with a CUDA device."""

    def __init__(self) -> None:
        self.torch = None

    def unavailable(self) -> Optional[str]:
        from torchsync_lint.guard import hooks

        self.torch, why = hooks.cuda_state()
        return why

    def install(self) -> None:
        from torchsync_lint.guard import hooks

        hooks.install(self.torch)

    def uninstall(self) -> None:
        from torchsync_lint.guard import hooks

        hooks.uninstall(self.torch)

    def enter_thread(self, st) -> None:
        from torchsync_lint.guard import hooks

        hooks.enter_thread(self.torch, st)

    def exit_thread(self, st) -> None:
        from torchsync_lint.guard import hooks

        hooks.exit_thread(st)


def sync_events(guard: no_sync, include_allowed: bool = False) -> List[SyncEvent]:
    return list(guard.events if include_allowed else guard.violations)
