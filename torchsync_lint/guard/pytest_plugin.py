"""pytest plugin (entry point ``pytest11``): fail a test at the line that synced the GPU.

- ``@pytest.mark.no_sync(allow=[...], mode="error")`` guards the test's call;
- the ``no_sync`` fixture is ``torchsync_lint.guard.no_sync`` for a block inside a test;
- ``--torchsync-guard=error|warn`` guards every test (``ini``: ``torchsync_guard``).

Without CUDA the tests run unguarded and the terminal summary says so once.
"""

from __future__ import annotations

import types

import pytest

from torchsync_lint.guard.guard import MODES, no_sync as _no_sync
from torchsync_lint.guard.state import SyncError

_inactive = {"count": 0, "reason": None}


def pytest_addoption(parser):
    group = parser.getgroup("torchsync-lint")
    group.addoption("--torchsync-guard", choices=("error", "warn", "off"), default=None,
                    help="guard every test against host-device syncs (error: fail at the sync's line; "
                         "warn: a SyncWarning)")
    parser.addini("torchsync_guard", "default for --torchsync-guard (error, warn or off)", default="off")


def pytest_configure(config):
    _inactive.update(count=0, reason=None)
    config.addinivalue_line(
        "markers", "no_sync(allow=(), mode='error'): fail the test at a host-device sync (torchsync-lint)")


def _settings(item):
    marker = item.get_closest_marker("no_sync")
    option = item.config.getoption("--torchsync-guard") or item.config.getini("torchsync_guard") or "off"
    if marker is not None:
        allow = marker.kwargs.get("allow", marker.args[0] if marker.args else ())
        mode = marker.kwargs.get("mode", "error")
        return allow, mode
    if option in ("error", "warn"):
        return (), option
    if option != "off":
        raise pytest.UsageError(f"--torchsync-guard must be one of error, warn, off; got {option!r}")
    return None


def _note_inactive(guard):
    if not guard.active and guard.reason:
        _inactive["count"] += 1
        _inactive["reason"] = guard.reason


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    settings = _settings(item)
    if settings is None:
        return (yield)
    allow, mode = settings
    if mode not in MODES:
        raise pytest.UsageError(f"no_sync marker on {item.nodeid}: mode must be one of {', '.join(MODES)}")
    guard = _no_sync(allow=allow, mode=mode, quiet=True)
    try:
        with guard:
            _note_inactive(guard)
            return (yield)
    except SyncError as exc:
        raise exc.with_traceback(trim_traceback(exc.__traceback__, exc.event)) from None


@pytest.fixture
def no_sync():
    """``with no_sync(allow=[...], mode="error"): ...`` inside a test (see torchsync_lint.guard)."""

    def make(allow=(), mode="error"):
        guard = _no_sync(allow=allow, mode=mode, quiet=True)
        return _Noting(guard)

    return make


class _Noting:
    """The guard, noting for the summary when it could not be active."""

    def __init__(self, guard) -> None:
        self.guard = guard

    def __enter__(self):
        got = self.guard.__enter__()
        _note_inactive(self.guard)
        return got

    def __exit__(self, *exc):
        __tracebackhide__ = True  # noqa: F841
        try:
            return self.guard.__exit__(*exc)
        except SyncError as err:
            raise err.with_traceback(trim_traceback(err.__traceback__, err.event)) from None


def trim_traceback(tb, event):
    """The traceback up to the user's line that synced: not on into torch or the guard's own frames."""
    import os

    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cut = None
    for i, e in enumerate(entries):
        path = os.path.realpath(e.tb_frame.f_code.co_filename)
        if event is not None and path == event.path and e.tb_lineno == event.line:
            cut = i  # the deepest entry at the sync's line
    if cut is None:  # raised at the guard's exit: end at the last frame that is not the guard's own
        keep = [i for i, e in enumerate(entries) if not e.tb_frame.f_code.co_filename.startswith(pkg)]
        cut = keep[-1] if keep else len(entries) - 1
    out = None
    for e in reversed(entries[:cut + 1]):
        out = types.TracebackType(out, e.tb_frame, e.tb_lasti, e.tb_lineno)
    return out


def pytest_terminal_summary(terminalreporter):
    if _inactive["count"]:
        terminalreporter.write_line(
            f"torchsync-lint guard inactive ({_inactive['reason']}): {_inactive['count']} guarded test(s) or "
            "block(s) ran unguarded")
