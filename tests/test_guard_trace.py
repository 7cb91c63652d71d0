"""``torchsync-lint trace``: command parsing, the join of runtime sites to static findings, the
three formats, and the clear stop without CUDA. The traced GPU run is tests/gpu/test_guard_gpu.py."""

import json
import os
import sys
import textwrap

import pytest

from torchsync_lint import cli
from torchsync_lint.cli import trace as trace_cli

MODEL = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def forward(self, x):
            total = x.sum().item()
            idx = torch.nonzero(x > 0)
            y = x * 2
            return y, total, idx
""")
ITEM, NONZERO, CLEAN = 7, 8, 9


@pytest.mark.parametrize("command, expected", [
    (["python", "train.py", "--lr", "1"], ("python", ["train.py", "--lr", "1"])),
    (["/usr/bin/python3.12", "-m", "pkg.train", "-x"], ("/usr/bin/python3.12", ["-m", "pkg.train", "-x"])),
    (["train.py"], (None, ["train.py"])),
])
def test_split_command(command, expected):
    interp, program = trace_cli.split_command(command)
    assert program == expected[1] and interp == (expected[0] or trace_cli.sys.executable)


@pytest.mark.parametrize("command", [[], ["python"], ["python", "-m"], ["python", "-c", "print(1)"]])
def test_bad_commands_are_usage_errors(command, capsys):
    assert cli.main(["trace", "--", *command]) == 2
    assert "torchsync-lint trace: error:" in capsys.readouterr().err


def data_for(path):
    return {"steps": 5, "warmup": 0, "warmup_syncs": 0, "main_file": path, "active": True, "sites": [
        {"path": path, "line": ITEM, "function": "forward", "op": "Tensor.item", "code": "TSL001", "count": 5,
         "stall_us": 120.0, "oracles": ["debug-mode", "gpu-trace"], "allowed": False},
        {"path": path, "line": CLEAN, "function": "forward", "op": "Tensor.mul", "code": "TSL900", "count": 5,
         "stall_us": 900.0, "oracles": ["gpu-trace"], "allowed": False},
    ]}


def test_join_sorts_by_stall_and_splits_confirmed_unflagged_not_seen(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(MODEL)
    sites, not_seen = trace_cli.join(data_for(str(path)), [])
    assert [(s["line"], s["status"]) for s in sites] == [(CLEAN, "unflagged"), (ITEM, "confirmed")]
    assert [(f.line, f.code) for f in not_seen] == [(NONZERO, "TSL101")]


def test_formats(tmp_path):
    path = tmp_path / "net.py"
    path.write_text(MODEL)
    data = data_for(str(path))
    sites, not_seen = trace_cli.join(data, [])
    text = trace_cli.render_text(data, sites, not_seen)
    assert "10 sync(s) at 2 site(s)" in text and "1 confirmed" in text and "1 seen but never flagged" in text
    assert f"net.py:{NONZERO}" in text
    doc = json.loads(trace_cli.render_json(data, sites, not_seen))
    assert doc["summary"]["stall_us"] == 1020.0 and doc["sites"][0]["line"] == CLEAN
    sarif = json.loads(trace_cli.render_sarif(data, sites, not_seen))
    statuses = [r["properties"]["verify"]["status"] for r in sarif["runs"][0]["results"]]
    assert sorted(statuses) == ["confirmed", "not-seen", "unflagged"]


def test_without_cuda_trace_stops_with_a_clear_message(tmp_path, monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    (tmp_path / "prog.py").write_text("open('ran', 'w').write('the program ran')\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["trace", "--steps", "2", "--", sys.executable, "prog.py", "a"]) == 2
    err = capsys.readouterr().err
    assert "sees no CUDA device" in err and "the program was not run" in err
    assert os.listdir(tmp_path) == ["prog.py"]  # refused before running it: no 'ran' file


def test_trace_names_an_interpreter_without_torch(tmp_path, monkeypatch, capsys):
    (tmp_path / "prog.py").write_text("open('ran', 'w').write('the program ran')\n")
    fake = tmp_path / "python-no-torch"
    fake.write_text("#!/bin/sh\nexec %s -I -S -c 'import torch' \"$@\"\n" % sys.executable)
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["trace", "--", str(fake), "prog.py"]) == 2
    assert "cannot import torch" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["prog.py", "python-no-torch"]


FINALISATION = textwrap.dedent("""\
    import os, sys
    import torch
    from torchsync_lint.guard import hooks

    if sys.argv[1] == "trace-on":
        hooks._register_trace(torch)  # what the first guard does on a CUDA machine


    class FreedAtExit:
        # what torch's trace hook does for each CUDA tensor freed during finalisation
        def __del__(self):
            os.write(2, b"CUDA trace hook execution failed: KeyError: '__import__'\\n")


    keep = FreedAtExit()
    print("the program's own output", file=sys.stderr)
""")


@pytest.mark.parametrize("trace_on", [True, False], ids=["trace on", "trace never on"])
def test_trace_hook_failures_at_interpreter_shutdown_are_not_printed(tmp_path, trace_on):
    """Issue 20: once the GPU trace is on, torch's hook fails once per tensor freed after the
    import machinery is gone (``KeyError: '__import__'``); those lines must not reach the user.
    What the program wrote before its end still does, and a process where the trace was never
    turned on keeps its stderr to the last byte. (tests/gpu/test_guard_gpu.py has the real hook.)"""
    pytest.importorskip("torch")
    import subprocess

    script = tmp_path / "prog.py"
    script.write_text(FINALISATION)
    proc = subprocess.run([sys.executable, str(script), "trace-on" if trace_on else "off"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "the program's own output" in proc.stderr
    assert ("KeyError: '__import__'" in proc.stderr) is not trace_on
