"""The verifier end to end on the CPU: child process, isolation, no-GPU exit, predict mode.

Needs torch (the CPU wheel is enough); skipped without it. Each test starts verifier children,
so the sources group several findings per file.
"""

import json
import os
import textwrap

import pytest

from torchsync_lint import cli

torch = pytest.importorskip("torch")

SOURCE = textwrap.dedent("""\
    import os
    import pathlib
    import time

    import torch
    from torch import nn

    pathlib.Path(os.environ["TSL_TEST_MARKER"]).write_text("imported")


    def slow(x):
        time.sleep(60)
        return x


    def broken(x):
        return x / 0.0 if x is None else 1 / 0


    class Loss(nn.Module):
        def forward(self, x, target):
            hangs = slow(x).sum().item()
            raises = broken(x).sum().item()
            labels = x[range(x.shape[0]), target]
            kept = torch.nonzero(x > 0)
            crashes = os._exit(7) or x.sum().item()
            last = torch.unique(target)
            return hangs + raises
""")
LINES = {"hangs": 22, "raises": 23, "labels": 24, "kept": 25, "crashes": 26, "last": 27}


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "lossmod.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TSL_TEST_MARKER", str(tmp_path / "marker"))
    return tmp_path


def run(capsys, *argv):
    code = cli.main(["--isolated", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_plain_lint_never_imports_the_module(project, capsys):
    code, out, err = run(capsys, "lossmod.py")
    assert code == 1 and "TSL001" in out
    assert not (project / "marker").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message for machines without CUDA")
def test_no_gpu_is_a_clear_error_with_exit_2(project, capsys):
    code, out, err = run(capsys, "--verify", "lossmod.py")
    assert code == 2
    assert "needs a CUDA device" in err and "--verify=predict" in err
    assert out == ""


def test_predict_mode_isolates_hangs_crashes_and_errors(project, capsys):
    # a limit per finding that a loaded machine's predict mode stays far below; `slow` sleeps 60 s
    code, out, err = run(capsys, "--verify=predict", "--verify-timeout", "20", "--format", "json", "lossmod.py")
    assert (project / "marker").read_text() == "imported"  # --verify imports the module
    findings = json.loads(out)
    by_line = {}
    for f in findings:
        by_line.setdefault(f["line"], f["verify"])
    assert by_line[LINES["hangs"]]["status"] == "inconclusive"
    assert "timed out after 20 s" in by_line[LINES["hangs"]]["reason"]
    assert by_line[LINES["raises"]]["status"] == "inconclusive"
    assert "ZeroDivisionError" in by_line[LINES["raises"]]["reason"]
    assert by_line[LINES["crashes"]]["status"] == "inconclusive"
    assert "exit code 7" in by_line[LINES["crashes"]]["reason"]
    # the findings after a hang and a crash still ran, in a fresh child
    for name in ("labels", "kept", "last"):
        rec = by_line[LINES[name]]
        assert rec["status"] == "predicted", (name, rec)
        assert rec["oracles"] == ["fake-tensor"] and rec["syncs"] >= 1
    assert code == 1


def test_predict_mode_text_summary_and_sarif(project, capsys):
    (project / "lossmod.py").write_text(textwrap.dedent("""\
        import torch
        from torch import nn


        class Loss(nn.Module):
            def forward(self, x):
                kept = torch.nonzero(x > 0)
                return kept
    """))
    code, out, err = run(capsys, "--verify=predict", "lossmod.py")
    assert "[predicted, 1 sync(s), by fake-tensor" in out
    assert out.rstrip().splitlines()[-1].startswith("verify: 1 finding(s): 1 predicted, 0 confirmed")
    code, out, err = run(capsys, "--verify=predict", "--format", "sarif", "lossmod.py")
    result = json.loads(out)["runs"][0]["results"][0]
    assert result["properties"]["verify"]["status"] == "predicted"


def test_snippet_harness_keeps_file_positions_and_finds_inputs():
    from torchsync_lint.verify import harness

    specs = {"pred": {"kind": "tensor"}, "target": {"kind": "tensor", "roles": ["index"]}}
    snip = harness.Snippet("nll = -pred[range(target.shape[0]), target]", 14, 4, False, "/proj/loss.py", specs, None)
    assert snip.params == ["pred", "target"]
    plan, guessed, errors, tried = harness.search_plan(torch, snip, None, {}, False)
    assert plan is not None and tried <= 4, errors
    bound, _ = snip.bindings(torch, plan, "cpu", None, {})
    out = snip.call(bound)
    assert out["nll"].shape == (plan.base[0],)
    # an error inside the statement points at the file's own line and columns
    bad = harness.Snippet("y = x.item()", 30, 8, False, "/proj/loss.py", {"x": {"kind": "tensor"}}, None)
    try:
        bad.call({"x": torch.ones(3)})
    except RuntimeError as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None and tb.tb_frame.f_code.co_filename != "/proj/loss.py":
            tb = tb.tb_next
        assert tb.tb_frame.f_code.co_filename == "/proj/loss.py" and tb.tb_lineno == 30
    else:
        raise AssertionError("a 3-element .item() must raise")


def test_line_timer_attributes_host_time_to_lines(tmp_path):
    from torchsync_lint.verify.stacks import Roots
    from torchsync_lint.verify.timing import LineTimer

    path = tmp_path / "timed.py"
    path.write_text("import time\n\n\ndef f():\n    a = 1\n    time.sleep(0.05)\n    return a\n")
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    timer = LineTimer({os.path.realpath(str(path))}, Roots(torch), None)
    timer.run(ns["f"])
    durations = {line: sum(v) for (p, line), v in timer.durations.items()}
    assert durations[6] > 0.04 and durations[5] < 0.01


def test_a_streamed_job_survives_a_crash_and_takes_tasks_fed_after_it(project):
    """Snippet mode streams each file's tasks to its child as the file is extracted: tasks fed
    after the child crashed (and while a fresh one starts) still run, and the child waits for
    the next task without timing out."""
    import queue
    import threading
    import time

    from torchsync_lint.finding import Finding
    from torchsync_lint.verify import runner, schedule
    from torchsync_lint.verify.snippet import extract_file

    path = str(project / "lossmod.py")
    lines = SOURCE.splitlines()
    findings = []
    for name in ("labels", "crashes", "kept", "last"):
        src = lines[LINES[name] - 1]
        col = src.index("=") + 2
        findings.append(Finding(path, LINES[name], col + 1, LINES[name], len(src) + 1, "TSL001", "n", "m"))
    extracted = extract_file(path, list(enumerate(findings)))
    tasks = schedule.tasks_of(extracted, findings)
    assert [t["id"] for t in tasks] == [0, 1, 2, 3]
    feed: "queue.Queue" = queue.Queue()
    job = {"kind": "snippet", "mode": "predict", "settings": {}, "sys_path": [str(project)], "tasks": []}
    got = {}
    # a task's limit generous enough for a loaded machine's first predict-mode call, and a wait
    # for the next task longer than it
    limit = 20.0
    th = threading.Thread(target=lambda: got.update(res=runner.run_job(job, limit, feed=feed)))
    th.start()
    feed.put(tasks[0])
    feed.put(tasks[1])  # os._exit(7): the child dies
    time.sleep(limit + 1)  # longer than the limit: a child waiting for its next task is not late
    feed.put(tasks[2])
    feed.put(tasks[3])
    feed.put(None)
    th.join(600)
    res = got["res"]
    assert "exit code 7" in res.results[1]["failure"]
    for i in (0, 2, 3):
        assert not res.results[i].get("failure"), res.results[i]
        assert res.results[i]["events"], res.results[i]


def test_only_the_flagged_statements_run(project, capsys):
    """Issue 20: snippet mode imports the module but runs only what was flagged: the statements
    before and after a finding in the same function never run."""
    (project / "lossmod.py").write_text(textwrap.dedent("""\
        import os
        import pathlib

        import torch
        from torch import nn


        def mark(name):
            pathlib.Path(os.environ["TSL_TEST_MARKER"] + "." + name).write_text("ran")
            return 1


        class Loss(nn.Module):
            def forward(self, x):
                before = mark("before")
                total = mark("flagged") + x.sum().item()
                after = mark("after")
                return total + before + after
    """))
    code, out, err = run(capsys, "--verify=predict", "--format", "json", "lossmod.py")
    findings = json.loads(out)
    assert [(f["line"], f["code"]) for f in findings] == [(16, "TSL001")], err
    assert findings[0]["verify"]["status"] == "predicted", findings[0]["verify"]
    assert (project / "marker.flagged").read_text() == "ran"  # the flagged statement itself ran
    assert not (project / "marker.before").exists() and not (project / "marker.after").exists()


SHARED_SOURCE = textwrap.dedent("""\
    import os

    import torch


    def mark():
        with open(os.environ["TSL_TEST_MARKER"], "a") as fh:
            fh.write("ran\\n")
        return 0


    def step(x, y):
        total = x.sum().item() + y.max().item() + mark()
        return total
""")


@pytest.mark.parametrize("share", [True, False])
def test_findings_of_one_statement_share_its_measurement(project, capsys, monkeypatch, share):
    """Two findings on one statement: the child measures the statement once (the second finding
    takes that measurement; TORCHSYNC_VERIFY_NO_SHARE=1 measures it again), with the same verdicts."""
    (project / "lossmod.py").write_text(SHARED_SOURCE)
    if not share:
        monkeypatch.setenv("TORCHSYNC_VERIFY_NO_SHARE", "1")
    code, out, err = run(capsys, "--verify=predict", "--format", "json", "lossmod.py")
    findings = json.loads(out)
    assert [(f["line"], f["col"]) for f in findings] == [(13, 13), (13, 30)], err
    assert [f["verify"]["status"] for f in findings] == ["predicted", "inconclusive"]
    assert [f["verify"]["syncs"] for f in findings] == [1, 0]
    runs = (project / "marker").read_text().splitlines()
    assert len(runs) == (1 if share else 2)


def test_statement_key_ignores_the_finding_and_keeps_rewrites_apart():
    from torchsync_lint.verify.snippet_child import statement_key

    a = {"id": 0, "path": "m.py", "stmt": {"src": "t = x.item()", "line": 3}, "specs": {"x": {"kind": "tensor"}},
         "self": None, "expr": {"src": "x.item()"}, "code": "TSL001"}
    b = dict(a, id=1, expr={"src": "x"}, code="TSL002")
    assert statement_key(a) == statement_key(b)
    assert statement_key(dict(b, specs={"x": {"kind": "unknown"}})) != statement_key(a)
    assert statement_key(dict(a, fix={"src": "t = x"})) is None


def test_a_device_named_by_a_string_is_synthesised_as_that_device():
    # `def fit(..., device="cuda")`: inference knows the string names the GPU; the snippet needs
    # a device string torch accepts, not a placeholder text
    from torchsync_lint.verify import harness

    specs = {"x": {"kind": "tensor", "device": "cpu"}, "device": {"kind": "str", "device": "cpu"}}
    snip = harness.Snippet("y = x.to(device)", 5, 4, False, "/proj/fit.py", specs, None)
    plan, guessed, errors, tried = harness.search_plan(torch, snip, None, {}, False)
    assert plan is not None, errors
    bound, _ = snip.bindings(torch, plan, "cpu", None, {})
    assert bound["device"] == "cpu"
    assert snip.call(bound)["y"].device.type == "cpu"


def test_an_augmented_assignment_reads_its_target():
    # `epoch_loss += loss.item()`: the running total is an input of the snippet (it was left out,
    # and the snippet failed with UnboundLocalError: inconclusive)
    from torchsync_lint.verify import harness

    specs = {"total": {"kind": "number", "dtype": "float"}, "loss": {"kind": "tensor", "roles": ["scalar"]}}
    snip = harness.Snippet("total += loss.item()", 9, 8, False, "/proj/train.py", specs, None)
    assert snip.params == ["loss", "total"]
    plan, guessed, errors, tried = harness.search_plan(torch, snip, None, {}, False)
    assert plan is not None, errors
    bound, _ = snip.bindings(torch, plan, "cpu", None, {})
    assert isinstance(snip.call(bound)["total"], float)
