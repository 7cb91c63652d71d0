"""The sync guard on a CPU-only torch: the real warnings hook and torch function mode, driven by a
torch-overridable stand-in for a syncing op (it emits the debug mode's warning, as `.item()` does
on a GPU). The CUDA hooks themselves are exercised by tests/gpu/test_guard_gpu.py."""

import os
import threading
import warnings

import pytest

torch = pytest.importorskip("torch")

from torchsync_lint.guard import GuardInactiveWarning, SyncError, SyncEvent, SyncWarning, no_sync  # noqa: E402
from torchsync_lint.guard import guard as guard_mod  # noqa: E402
from torchsync_lint.guard import hooks, state  # noqa: E402
from torchsync_lint.guard.allow import Allow, BadAllowEntry  # noqa: E402
from guard_fakes import CpuBackend, fake_sync  # noqa: E402

HERE = os.path.realpath(__file__)


def guard(**kw):
    return no_sync(backend=CpuBackend(), **kw)


def line_of(marker: str) -> int:
    with open(HERE) as fh:
        return next(i for i, text in enumerate(fh, 1) if marker in text and "line_of" not in text)


def global_settings():
    return (warnings.showwarning, list(warnings.filters), hooks.installed(),
            torch._C._is_torch_function_mode_enabled(), dict(state._states))


def test_error_mode_raises_at_the_users_line_with_op_and_code():
    x = torch.ones(3)
    with pytest.raises(SyncError) as info:
        with guard():
            fake_sync(x)  # SYNC-A
            x = x + 1  # NEXT-A
    ev = info.value.event
    assert (ev.path, ev.line) == (HERE, line_of("# SYNC-A"))
    assert ev.op.endswith("fake_sync") and ev.code == "TSL900" and ev.oracles == ["debug-mode"]
    assert ev.stall_us is None  # the debug mode alone does not time the wait (the GPU trace does)
    assert f"{HERE}:{ev.line}" in str(info.value) and "user stack" in str(info.value)
    # raised in the user's frame once the op returned, at its next line (never in the middle of the
    # op's line, whose result may be a CUDA tensor), not from the guard's exit; the event keeps the
    # sync's own line
    mine = [entry for entry in info.traceback if os.path.realpath(str(entry.path)) == HERE]
    assert mine[-1].lineno + 1 == line_of("# NEXT-A"), mine[-1]
    assert float(x[0]) == 1.0  # the next line did not run
    assert not any("__exit__" == entry.name for entry in info.traceback)


def test_the_rule_code_comes_from_the_linter(tmp_path, monkeypatch):
    mod = tmp_path / "model_with_item.py"
    mod.write_text(
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return self.sync(x).sum().item()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import model_with_item

    m = model_with_item.M()
    m.sync = fake_sync
    with guard(mode="record") as g:
        m(torch.ones(2))
    assert [(e.line, e.code) for e in g.events] == [(7, "TSL001")]


def test_warn_and_record_modes():
    x = torch.ones(2)
    with pytest.warns(SyncWarning, match="test_guard.py"):
        with guard(mode="warn") as g:
            fake_sync(x)
    assert len(g.events) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # record mode neither raises nor warns
        with guard(mode="record") as g:
            fake_sync(x)
            fake_sync(x)
    assert len(g.events) == 2 and not any(e.allowed for e in g.events)


@pytest.mark.parametrize("entry", ["TSL9", "fake_sync", "test_guard.py:*", "*/tests/test_guard.py"])
def test_allow_by_code_op_and_location(entry):
    with guard(allow=[entry]) as g:
        fake_sync(torch.ones(1))
    assert len(g.events) == 1 and g.events[0].allowed and not g.violations


def test_allow_entry_kinds():
    ev = SyncEvent("/src/pkg/train.py", 42, "step", "Tensor.item", ["debug-mode"], 10.0, code="TSL001")
    assert Allow(["TSL0"]).matches(ev) and Allow(["tsl001"]).matches(ev) and not Allow(["TSL2"]).matches(ev)
    assert Allow(["Tensor.item"]).matches(ev) and Allow(["item"]).matches(ev) and Allow(["Tensor.*"]).matches(ev)
    assert not Allow(["torch.nonzero"]).matches(ev)
    assert Allow(["train.py:42"]).matches(ev) and Allow(["pkg/train.py:4?"]).matches(ev)
    assert Allow(["/src/*/train.py"]).matches(ev) and not Allow(["train.py:41"]).matches(ev)
    with pytest.raises(BadAllowEntry):
        Allow([3])
    with pytest.raises(ValueError, match="mode"):
        no_sync(mode="strict")


def test_nested_guards_inner_allow_and_inner_record():
    x = torch.ones(1)
    with pytest.raises(SyncError) as info:
        with guard() as outer:
            with guard(allow=["fake_sync"]):
                fake_sync(x)  # allowed by the inner guard
            with guard(mode="record") as inner:
                fake_sync(x)  # recorded, not raised
            fake_sync(x)  # SYNC-OUTER
    assert info.value.event.line == line_of("# SYNC-OUTER")
    assert len(inner.events) == 1 and len(outer.events) == 3
    assert [e.allowed for e in outer.events] == [True, False, False]


def test_exceptions_propagate_and_every_setting_is_restored():
    before = global_settings()
    with pytest.raises(KeyError):
        with guard():
            with guard(mode="record"):
                raise KeyError("boom")
    assert global_settings() == before
    with pytest.raises(SyncError):
        with guard():
            fake_sync(torch.ones(1))
    assert global_settings() == before
    # the user's own warnings still reach the user while a guard is active
    with pytest.warns(DeprecationWarning, match="mine"):
        with guard():
            warnings.warn("mine", DeprecationWarning)


def test_a_sync_on_another_thread_is_not_blamed_on_this_block():
    seen = {}

    def other(guarded):
        if guarded:
            with guard(mode="record") as g:
                fake_sync(torch.ones(1))
            seen["other"] = g.events
        else:
            fake_sync(torch.ones(1))

    with guard(mode="record") as g:
        for guarded in (False, True):
            t = threading.Thread(target=other, args=(guarded,))
            t.start()
            t.join()
    assert g.events == [] and len(seen["other"]) == 1


@pytest.mark.filterwarnings("ignore:fake_sync")
def test_without_cuda_the_guard_is_a_no_op_that_says_so(monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    monkeypatch.setattr(guard_mod, "_said_inactive", False)
    before = global_settings()
    with pytest.warns(GuardInactiveWarning, match="no CUDA device"):
        with no_sync() as g:
            fake_sync(torch.ones(1))
    assert not g.active and g.reason == "no CUDA device" and g.events == []
    assert global_settings() == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with no_sync():  # said once per process
            pass

