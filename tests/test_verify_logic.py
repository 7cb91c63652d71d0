"""The verifier's pure logic on the CPU: attribution of sync events, status decisions, CLI options."""

import os

import pytest

from torchsync_lint.verify import cli_options
from torchsync_lint.verify.attribution import Frame, Span, SyncEvent, attribute, is_library, locate, match
from torchsync_lint.verify.evidence import timing as _timing
from torchsync_lint.verify.status import Evidence, counts, decide, merge, summary_line

TORCH = "/site/torch"
USER = "/proj/loss.py"
HELPER = "/proj/helpers.py"  # user code that was not linted
ROOTS = [TORCH, "/usr/lib/python3.12"]


def fr(path, line, col=None, end_col=None, end_line=None, lib=False):
    return Frame(path, line, end_line if end_line is not None else (line if col is not None else None), col, end_col,
                 "f")


def span(line, col, end_col, stmt=None, end_line=None):
    s, e = stmt or (line, end_line or line)
    return Span(USER, line, col, end_line or line, end_col, s, e)


# -- attribution ----------------------------------------------------------------------------------

def test_library_frames_are_walked_out_of():
    assert is_library(TORCH + "/nn/modules/module.py", ROOTS)
    assert is_library("<frozen runpy>", ROOTS)
    assert not is_library(USER, ROOTS)
    frames = [fr(TORCH + "/_tensor.py", 10), fr("/usr/lib/python3.12/warnings.py", 3), fr(USER, 7), fr(HELPER, 2)]
    loc = locate(frames, {USER}, ROOTS)
    assert loc.linted and loc.frame.line == 7


def test_unlinted_user_frames_are_walked_out_of_to_the_linted_caller():
    frames = [fr(TORCH + "/_tensor.py", 10), fr(HELPER, 5), fr(USER, 12)]
    loc = locate(frames, {USER}, ROOTS)
    assert loc.frame.path == USER and loc.frame.line == 12


def test_no_linted_frame_falls_back_to_the_innermost_user_frame():
    frames = [fr(TORCH + "/_tensor.py", 10), fr(HELPER, 5), fr("/proj/main.py", 3)]
    loc = locate(frames, {USER}, ROOTS)
    assert not loc.linted and loc.frame.path == HELPER
    assert locate([fr(TORCH + "/x.py", 1)], {USER}, ROOTS).frame is None


def test_match_by_statement_range_and_columns():
    # two findings on one line: `a = x[m1].sum() + y[m2].sum()`; the instruction's columns decide
    spans = {0: span(4, 8, 13), 1: span(4, 22, 27)}
    assert match(fr(USER, 4, 8, 13), spans) == 0
    assert match(fr(USER, 4, 22, 27), spans) == 1
    # a multi-line statement: the sync reported on its second line still belongs to it
    spans = {2: span(10, 8, 40, stmt=(10, 11))}
    assert match(fr(USER, 11), spans) == 2
    assert match(fr(USER, 12), spans) is None


def test_attribute_splits_findings_unflagged_and_unlocated():
    spans = {0: span(7, 16, 30)}
    on_finding = SyncEvent(["debug-mode"], [fr(TORCH + "/t.py", 1), fr(USER, 7, 16, 30)], op="Tensor.item")
    unflagged = SyncEvent(["gpu-trace"], [fr(USER, 20)], op="torch.cuda.synchronize")
    nowhere = SyncEvent(["stderr"], [fr(TORCH + "/autograd.py", 3)])
    att = attribute([on_finding, unflagged, nowhere], spans, {USER}, ROOTS)
    assert att.by_finding == {0: [on_finding]}
    assert att.unflagged == {(USER, 20): [unflagged]}
    assert att.unlocated == [nowhere]


def test_frame_and_event_from_child_json():
    ev = SyncEvent.from_json({"oracles": ["debug-mode", "gpu-trace"], "op": "Tensor.item", "stall_us": 412.5,
                              "frames": [["/x/../proj/loss.py", 7, 7, 16, 24, "forward", False]]})
    assert ev.frames[0] == Frame(os.path.realpath("/proj/loss.py"), 7, 7, 16, 24, "forward")
    assert ev.stall_us == 412.5 and ev.count == 1


def test_timing_counts_intervals_over_the_share_of_the_sleep():
    s = span(7, 4, 20, stmt=(7, 8))
    lines = [[USER, 7, [12000.0, 50.0], [30.0, 30.0]], [USER, 8, [9.0], [5.0]], [USER, 9, [15000.0], [1.0]]]
    assert _timing(lines, s, 20000.0) == (1, 12000.0)
    assert _timing([], s, 20000.0) == (0, None)
    assert _timing(lines, s, None) == (None, None)


# -- status -----------------------------------------------------------------------------------------

def ev(oracles=("debug-mode",), stall=300.0):
    return SyncEvent(list(oracles), [fr(USER, 7)], op="Tensor.item", stall_us=stall)


def test_timing_confirms_and_names_every_oracle():
    rec = decide(Evidence("snippet", events=[ev(), ev(("gpu-trace",), 100.0)], timing_syncs=1,
                          timing_excess_us=19000.0, ran=True))
    assert rec["status"] == "confirmed"
    assert rec["oracles"] == ["debug-mode", "gpu-trace", "timing"]
    assert rec["syncs"] == 2 and rec["stall_us"] == 400.0 and rec["ops"] == ["Tensor.item"]


def test_timing_alone_confirms_a_sync_the_debug_mode_misses():
    rec = decide(Evidence("entry", timing_syncs=1, timing_excess_us=15000.0, ran=True))
    assert rec["status"] == "confirmed" and rec["oracles"] == ["timing"] and rec["stall_us"] is None


def test_nothing_seen_on_a_clean_run_refutes_and_names_guessed_inputs():
    rec = decide(Evidence("snippet", timing_syncs=0, ran=True, guessed=["self.weights"]))
    assert rec["status"] == "refuted"
    assert "self.weights" in rec["reason"]
    assert decide(Evidence("snippet", timing_syncs=0, ran=True))["status"] == "refuted"


def test_oracles_disagreeing_is_inconclusive():
    rec = decide(Evidence("snippet", events=[ev()], timing_syncs=0, ran=True))
    assert rec["status"] == "inconclusive" and "disagree" in rec["reason"]


def test_events_without_timing_confirm():
    assert decide(Evidence("entry", events=[ev()], ran=True))["status"] == "confirmed"


def test_failures_and_errors_are_inconclusive_with_a_reason():
    assert decide(Evidence("snippet", failure="timed out after 5 s"))["reason"] == "timed out after 5 s"
    rec = decide(Evidence("snippet", ran=False, error="ZeroDivisionError: division by zero", timing_syncs=0))
    assert rec["status"] == "inconclusive" and "ZeroDivisionError" in rec["reason"]
    rec = decide(Evidence("entry", ran=False, label="entry m:f"))
    assert rec["status"] == "inconclusive" and rec["reason"] == "not reached by entry m:f"
    # a sync seen before the statement raised still confirms
    rec = decide(Evidence("snippet", events=[ev()], timing_syncs=1, ran=False, error="AssertionError"))
    assert rec["status"] == "confirmed" and "raised" in rec["reason"]


def test_predict_never_confirms():
    rec = decide(Evidence("predict", events=[SyncEvent(["fake-tensor"], [fr(USER, 7)], op="aten.nonzero")],
                          timing_syncs=3, ran=True))
    assert rec["status"] == "predicted" and rec["oracles"] == ["fake-tensor"]
    assert decide(Evidence("predict", ran=True))["status"] == "inconclusive"


def test_merge_and_summary():
    c = {"status": "confirmed", "oracles": ["timing"], "stall_us": 5.0, "syncs": 1}
    r = {"status": "refuted", "oracles": [], "stall_us": None, "syncs": 0}
    i = {"status": "inconclusive", "oracles": [], "stall_us": None, "syncs": 0, "reason": "not reached by a"}
    assert merge([i, r])["status"] == "refuted"
    assert merge([r, c, i])["status"] == "confirmed"
    assert merge([i, dict(i, reason="not reached by b")])["reason"] == "not reached by a; not reached by b"
    assert counts([c, r, i, None])["confirmed"] == 1
    line = summary_line([c, r, i])
    assert line.startswith("verify: 3 finding(s): 1 confirmed, 1 refuted, 1 inconclusive") and "67% definite" in line


# -- command line -------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, mode", [
    (["--verify", "a.py"], "gpu"),
    (["--verify=predict", "a.py"], "predict"),
    (["--verify-entry", "m:f", "a.py"], "gpu"),
])
def test_verify_options(argv, mode):
    from torchsync_lint.cli import build_parser

    args = build_parser().parse_args(cli_options.normalize_argv(argv))
    assert args.paths == ["a.py"]  # `--verify PATH` keeps PATH
    assert cli_options.wanted(args) and cli_options.mode_of(args) == mode


def test_plain_lint_does_not_want_verify():
    from torchsync_lint.cli import build_parser

    assert not cli_options.wanted(build_parser().parse_args(["a.py"]))


# -- why a child died: the exit code or signal, and the cause from its stderr, never a warning ----
DYING_CHILD = """\
#!{python}
import json, os, signal, sys
job = json.loads(sys.stdin.read())
print("@@TSL " + json.dumps({{"event": "ready", "cuda": True, "torch": "fake"}}), flush=True)
print("@@TSL " + json.dumps({{"event": "begin", "id": job["tasks"][0]["id"]}}), flush=True)
sys.stderr.write({stderr!r})
sys.stderr.flush()
{death}
"""
TORCH_WARNING = ("/site-packages/torch/functional.py:507: UserWarning: torch.meshgrid: in an upcoming release, it "
                 "will be required to pass the indexing argument. (Triggered internally at TensorShape.cpp:3549.)\n"
                 "  return _VF.meshgrid(tensors, **kwargs)  # type: ignore[attr-defined]\n")


@pytest.mark.parametrize("stderr, death, reason", [
    (TORCH_WARNING, "os._exit(3)", "the child process died (exit code 3)"),
    (TORCH_WARNING, "os.kill(os.getpid(), signal.SIGKILL)", "the child process died (killed by SIGKILL)"),
    ("loading weights\nout of memory: cannot allocate 2 GiB\n" + TORCH_WARNING, "os._exit(1)",
     "the child process died (exit code 1): out of memory: cannot allocate 2 GiB"),
    ("step 3 of 10\n" + TORCH_WARNING + "giving up on the device\n", "os._exit(4)",
     "the child process died (exit code 4): step 3 of 10 | giving up on the device"),
])
def test_a_dead_childs_reason_is_its_exit_and_cause_not_a_warning(tmp_path, stderr, death, reason):
    import stat
    import sys

    from torchsync_lint.verify import runner

    child = tmp_path / "fake-python"
    child.write_text(DYING_CHILD.format(python=sys.executable, stderr=stderr, death=death))
    child.chmod(child.stat().st_mode | stat.S_IEXEC)
    res = runner.run_job({"kind": "snippet", "mode": "gpu", "tasks": [{"id": 0}]}, timeout=30, python=str(child))
    assert res.results[0] == {"failure": reason}


@pytest.mark.parametrize("stderr, cause", [
    ("/lib/x.py:9: FutureWarning: the default will change.\nPass errors='raise' to keep it.\n  df = read(p)\n", ""),
    ("WARNING:root:retrying after an error in the data loader\n", ""),
    ("[W1123 22:33:44.555666 1 Module.cpp:123] Warning: a kernel failed to load (function foo)\n", ""),
    ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    run()\nValueError: bad\n'
     + TORCH_WARNING, "ValueError: bad"),
    ('Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n'
     '  File "x.py", line 3 in f\n', "Fatal Python error: Segmentation fault"),
])
def test_the_quoted_cause_skips_warnings_and_frames(tmp_path, stderr, cause):
    from torchsync_lint.verify import runner

    (tmp_path / "stderr").write_text(stderr)
    assert runner._tail(str(tmp_path / "stderr")) == cause
